"""Lessons from failures, without a model: a shell command that failed (an error status, an error line, a
failing test summary or a non-zero exit) and what the assistant said about it in that turn or the next one,
turned into the error, its cause and the fix ("`pytest` failed with sqlite3.OperationalError: no such table:
links: an in-memory SQLite database is per connection, so the tests share one connection.").

The symptom alone ("… failed; fixed by editing the store module") teaches nothing and is not kept. Without an
explanation, a failure is kept only when the same command then succeeded after other commands ran (the fix is
a command: `npm install decimal.js`). Explanations that only admit a slip ("I forgot the import", "a typo") are
not lessons."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ASSISTANT, OBSERVED, Candidate, entity_names
from codememory.extract.clean import clip, tidy
from codememory.extract.compress import ToolOutcome, analyze_tool
from codememory.extract.failure_fixes import chained_before, changed_after, command_key, commands_between, segment_keys
from codememory.extract.rules import classify
from codememory.extract.speakers import ToolText, relays_a_source
from codememory.extract.statements import sentences
from codememory.extract.unresolved_pronouns import UNRESOLVED_START_RE
from codememory.text.mood import asks, logged, narrates, narration, reports_status, states
from codememory.text.privacy import scrub

GOTCHA_IMPORTANCE = 0.7
_CAUSE_RE = lazy_pattern(
    r"\b(?:because|since|the\s+(?:problem|issue|cause|bug|error|failure|reason)\s+(?:was|is|here\s+is)|caused\s+by|"
    r"turns?\s+out|root\s+cause|(?:is|are)\s+per[- ]\w+|only\s+(?:works|exists|applies|lives|runs)|"
    r"(?:doesn'?t|does\s+not|don'?t|do\s+not|can'?t|cannot|won'?t|isn'?t|aren'?t)\s+(?:support|exist|persist|"
    r"share|accept|allow|work|handle|include|see|find|resolve|recognize|know|load|read|pick\s+up|available|shared|"
    r"thread-?safe|installed|supported)|requires?|expects?|needs?\s+to\s+be|must\s+be|happens\s+(?:when|because)|"
    r"that'?s\s+why|which\s+is\s+why|means\s+(?:that\s+)?|so\s+each|gets?\s+(?:its\s+own|a\s+(?:new|fresh|"
    r"separate))|(?:was|were|is|are)\s+(?:never|not)\s+(?:created|set|loaded|imported|committed|configured|"
    r"initiali[sz]ed|run|installed)|(?:isn'?t|is\s+not|aren'?t|are\s+not)\s+(?:on\s+the|in\s+the)\s+\w+|"
    r"fails?\s+(?:in|on|with|because|since|when)|\w+-only|(?:is|are)\s+(?:stale|outdated|out\s+of\s+date|locked|"
    r"held|in\s+use|already\s+(?:in\s+use|taken|held|running))|(?:already\s+)?holds|needs?\s+(?:a|an|the)|"
    r"can'?t\s+be|cannot\s+be|which\s+(?:drops|loses|breaks|strips|truncates|links|means|ignores)|"
    r"(?:was|were)\s+created\s+before|released\s+(?:at|on|when)|only\s+(?:for|in|on|at))\b",
    re.IGNORECASE,
)
_FIX_RE = lazy_pattern(
    r"\b(?:the\s+fix\s+(?:is|was)|to\s+fix\s+(?:this|it)|fixed\s+(?:it\s+|this\s+)?by|(?:the\s+)?solution\s+(?:is|was)|"
    r"i(?:'ll|'ve|\s+will|\s+have)?\s+(?:changed|switched|made|moved|added|pinned|set|updated|replaced|shared|"
    r"passed|reused)|(?:so|now)\s+(?:the|it|we|each|all|both|i)\b|instead\b|share|reuse|pin|use\s+a\s+single|"
    r"^(?:i(?:'ll|\s+will|'ve|\s+have)|we(?:'ll|\s+will|'ve)|now|so)\s+\w+|"
    r"\b(?:i|we)(?:'ll|\s+will)\s+(?!(?:run|check|look|read|try|rerun|re-run|see)\b)\w+)",
    re.IGNORECASE,
)
_SLIP_RE = lazy_pattern(
    r"\bas\s+(?:it\s+)?(?:should|expected|intended)\b|\b(?:fails?|failed)\s+(?:as\s+)?(?:expected|on\s+purpose)\b|"
    r"\b(?:forgot|typo|misspel\w*|my\s+mistake|oops|i\s+missed|missing\s+import|wrong\s+(?:path|name|directory)|"
    r"didn'?t\s+import|not\s+imported|i\s+left\s+out|accidentally)\b",
    re.IGNORECASE,
)
_STRONG_CAUSE_RE = lazy_pattern(
    r"\b(?:the\s+(?:problem|issue|cause|bug)\s+(?:was|is)|turns?\s+out|root\s+cause|caused\s+by|"
    r"fails?\s+because|failed\s+because)\b",
    re.IGNORECASE,
)
MAX_EXPLANATION = 2


def _not_stated(s: str) -> bool:
    """A sentence that explains nothing by its form: a question, a narration of the assistant's steps ("Reading
    the contributing guide first, and the check fails for now"), a printed line (text.mood), or a report of work
    done."""
    return not states(s) or bool(reports_status(s))


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def gotcha_candidates(turns: Sequence[Turn], root: str | None = None) -> list[Candidate]:
    """A lesson per failed shell command the assistant explained (in that turn or the next), or that the
    same command passed after a fixing command."""
    calls: list[tuple[int, Turn, ToolOutcome]] = []
    for index, turn in enumerate(turns):
        for call in turn.tool_calls:
            calls.append((index, turn, analyze_tool(call, root)))
    out: list[Candidate] = []
    used_calls: set[int] = set()
    used_sentences: set[str] = set()
    tool_text: ToolText | None = None
    for i, (turn_index, turn, failed) in enumerate(calls):
        if i in used_calls or failed.kind != "shell" or not failed.failed or not failed.target:
            continue
        key = command_key(failed.target)
        if not key:
            continue
        # later failures of the same command in this turn and the next are the same problem
        success: int | None = None
        last_failure = i
        for j in range(i + 1, len(calls)):
            later_index, _later_turn, later = calls[j]
            if later_index > turn_index + 1:
                break
            if later.kind != "shell" or key not in segment_keys(later.target or ""):
                continue
            if later.failed and _other_problem(_output(calls, i), _output(calls, j)):
                break  # the first problem was fixed and the command now fails for another reason: its own lesson
            used_calls.add(j)
            if later.failed:
                last_failure = j
                continue
            success = j
            break
        span = turns[turn_index : turn_index + 2]
        output = _output(calls, i)
        right_after = turn.texts_after(_call_index(calls, i))
        explanation = _explanation(failed, key, output, span, used_sentences, right_after)
        if explanation:
            # the error's own text, repeated ("hint: every agent must …"), is the tool's, planted or not
            tool_text = tool_text or ToolText.of(turns)
            explanation = [s for s in explanation if not (relays_a_source(s) or tool_text.copies(s))]
        # a lesson says what fixed it: said, or seen (a change made after the failure); a failure explained and
        # left as it was ("the check fails on its own for now") taught nothing yet
        unfixed = success is None and not any(_is_fix(s) for s in explanation) and not changed_after(calls, i)
        if explanation and unfixed:
            explanation = []
        if not explanation and success is not None:
            tool_text = tool_text or ToolText.of(turns)
            explanation = _said_before_the_fix(right_after, used_sentences, tool_text)
        if explanation:
            used_sentences.update(explanation)
            out.append(_lesson(failed, explanation, turn))
        elif success is not None:
            fix = commands_between(calls[last_failure + 1 : success], key)
            fix += [c for c in chained_before(calls[success][2].target or "", key) if c not in fix]
            if fix:
                out.append(_command_fix(calls[last_failure][2], fix, calls[success][1]))
    return out


def _output(calls: Sequence[tuple[int, Turn, ToolOutcome]], i: int) -> str:
    turn = calls[i][1]
    return scrub(turn.tool_calls[_call_index(calls, i)].output or "") if turn.tool_calls else ""


_SAME_PROBLEM = 0.3  # share of the output's words two failures of one problem have in common


def _other_problem(first: str, later: str) -> bool:
    a = set(re.findall(r"[a-z][a-z0-9_-]{4,}", first[-_OUTPUT_TAIL:].lower()))
    b = set(re.findall(r"[a-z][a-z0-9_-]{4,}", later[-_OUTPUT_TAIL:].lower()))
    return bool(a and b) and len(a & b) / len(a | b) < _SAME_PROBLEM


def _call_index(calls: Sequence[tuple[int, Turn, ToolOutcome]], i: int) -> int:
    """The position in its turn of the i-th call of the span."""
    turn_index = calls[i][0]
    return sum(1 for j in range(i) if calls[j][0] == turn_index)


def _explanation(
    failed: ToolOutcome, key: str, output: str, span: Sequence[Turn], used: set[str], right_after: Sequence[str] = ()
) -> list[str]:
    """The assistant's sentences saying why the command failed and what fixes it (at most two). What the
    assistant said right after the failing call, before its next call, is read first and counts for more: it is
    the failure's answer."""
    clues = _clue_words(failed, key, output)
    return _best_explanation(span, clues, used, ()) or _best_explanation(span, clues, used, right_after)


def _best_explanation(span: Sequence[Turn], clues: set[str], used: set[str], right_after: Sequence[str]) -> list[str]:
    """The best-scoring explanation; with `right_after`, only those texts, read with the weaker cues."""
    best: tuple[int, list[str]] | None = None
    texts = list(right_after) if right_after else [raw for turn in span for raw in turn.assistant_texts]
    for raw in texts:
        said = _said(raw)
        for n, s in enumerate(said):
            score = 0 if not s or s in used else _cause_score(s, clues, after=bool(right_after))
            if not score or (best and best[0] >= score):
                continue
            picked = [s]
            after = said[n + 1] if n + 1 < len(said) else ""
            if after and after not in used and (_is_fix(after) or _is_follow_up(after)):
                picked.append(after)
            if (UNRESOLVED_START_RE.match(s) or _DANGLING_END_RE.search(s)) and n > 0 and said[n - 1] not in used:
                # "That's the test environment, …", "`float()` can't read that.": the sentence before says what
                # "that" is
                picked = [said[n - 1], *picked]
            best = (score, picked[: MAX_EXPLANATION + 1])
    return best[1] if best else []


# a cause that ends on what it is about: "`float()` can't read that.", "the old parser never handled it."
_DANGLING_END_RE = lazy_pattern(r"\b(?:that|this|it|them|those|these)\W*$", re.IGNORECASE)
# "My mistake:" / "Oops," before a sentence: the admission, not what went wrong
_ADMISSION_LEAD_RE = lazy_pattern(r"^\W*(?:my\s+mistake|my\s+bad|oops|whoops)\b\W*", re.IGNORECASE)
MIN_FIX_WORDS = 12
# a test that still expects what was just changed on purpose: the fix is the test, and nothing was learned
_STALE_TEST_RE = lazy_pattern(
    r"\b(?:old|existing|previous)\s+(?:\w+\s+)?(?:tests?|assertions?|snapshots?)\s+(?:still\s+)?expect\w*\b"
    r"|\b(?:tests?|assertions?|snapshots?)\s+still\s+expects?\b"
    r"|\bupdat\w*\s+(?:the\s+|that\s+|this\s+)?(?:old\s+)?(?:tests?|assertions?|snapshots?|expected\s+\w+)\b",
    re.IGNORECASE,
)


def _said_before_the_fix(right_after: Sequence[str], used: set[str], tool_text: ToolText) -> list[str]:
    """What the assistant said right after a failing call when the same command then passed: the failure's
    answer by where it stands (the text between the failure and the fix that made it pass), whatever its words.
    Narration, questions and slips are not, nor what a source says or a tool's output copied (an error's "hint:"
    line is the tool's text, planted or not); at most the first MAX_EXPLANATION + 1 sentences."""
    kept: list[str] = []
    for raw in right_after:
        for s in _said(raw):
            # the step that made it pass is the fix, told as a step ("Switching to `fdiv`."): only a question, a
            # printed line or a plan says nothing here
            if not s or s in used or asks(s) or logged(s) or narration(s) == "plan" or reports_status(s):
                continue
            if relays_a_source(s) or tool_text.copies(s):
                continue
            s = _unadmitted(s)
            if _SLIP_RE.search(s) or _STALE_TEST_RE.search(s):
                return []  # "I forgot the import", "the old test expected 2": a slip or a test left behind
            kept.append(s)
    kept = kept[: MAX_EXPLANATION + 1]
    if (
        sum(len(s.split()) for s in kept) < MIN_FIX_WORDS
        or all(_FIX_RE.search(s) for s in kept)
        or all(narrates(s) for s in kept)
    ):
        return []  # a step alone ("Adding the import.") says nothing about why
    return kept


def _unadmitted(s: str) -> str:
    """The sentence without a leading admission ("My mistake: I used X, which only exists from 7.4" -> "I used
    X, which …"), which is only a slip when the rest is one."""
    rest = _ADMISSION_LEAD_RE.sub("", s)
    return rest[:1].upper() + rest[1:] if rest and rest != s else s


def cause_sentence(s: str, *, cue: bool = True) -> bool:
    """A sentence that states why something went wrong without a failure's words to check it against (a cause
    cue such as "because", "so each", "turns out", unless `cue` is False), not a decision or a slip."""
    return bool((not cue or _CAUSE_RE.search(s)) and not (_not_stated(s) or _SLIP_RE.search(s) or _states_something(s)))


def follow_up(s: str) -> bool:
    return _is_fix(s) or _is_follow_up(s)


def _is_follow_up(s: str) -> bool:
    """A sentence that goes on explaining (not narration, a question or a test result)."""
    # after the cause, the step that fixes it is told as a step ("Renaming the class to match the file."): only a
    # question, a printed line or the plan of a look is no follow-up
    return len(s.split()) >= 5 and not (
        asks(s) or logged(s) or narration(s) == "plan" or reports_status(s) or _SLIP_RE.search(s)
    )


@lru_cache(maxsize=512)
def _said(raw: str) -> tuple[str, ...]:
    """An assistant text's sentences, scrubbed and tidied (each text is read once per failure it may explain),
    without the items of a summary of work done ("Done: - the db module: …"): they report, they explain nothing."""
    return tuple(tidy(s) for s in sentences(without_summaries(scrub(raw))))


_SUMMARY_RE = lazy_pattern(
    r"^\W*(?:done|summary|committed|fixed|finished|all\s+\d+\s+tests|tests?\s+(?:pass|green)|builds?\s+cleanly|"
    r"what'?s\s+(?:there|in)|changes)\b",
    re.IGNORECASE,
)
_LIST_ITEM_RE = lazy_pattern(r"^\s*(?:[-*+\u2022]|\d{1,2}[.)])\s+")


def without_summaries(text: str) -> str:
    """The text without the list that follows a summary's lead line ("Done and committed:", "Summary:")."""
    if "\n" not in text:
        return text
    out: list[str] = []
    skipping = False
    for line in text.splitlines():
        if _LIST_ITEM_RE.match(line):
            if skipping:
                continue
        elif line.strip():
            skipping = bool(_SUMMARY_RE.match(line)) and line.rstrip().endswith(":")
        out.append(line)
    return "\n".join(out)


@lru_cache(maxsize=2048)
def _states_something(sentence: str) -> bool:
    return bool(classify(sentence, role="assistant"))


def _is_fix(s: str) -> bool:
    # the fix is often told as the step that makes it ("I'm sharing one connection now"): a step that changes
    # something may be the fix, one that only looks may not
    return bool(_FIX_RE.search(s)) and not (asks(s) or logged(s) or reports_status(s) or _SLIP_RE.search(s))


def _cause_score(s: str, clues: set[str], *, after: bool = False) -> int:
    """How well a sentence explains the failure: 0 when it does not; more for a stated cause and for each word
    of the failure it names. A weak cue ("but", "has to", "X: Y") needs two of those words, or one when the
    sentence came right after the failing call (`after`), which also scores more."""
    if _not_stated(s) or _SLIP_RE.search(s):
        return 0
    strong = bool(_STRONG_CAUSE_RE.search(s))
    cue = strong or bool(_CAUSE_RE.search(s))
    words = {_stem(w) for w in re.findall(r"[a-z][a-z0-9_-]{2,}", s.lower()) if w not in _CLUE_STOP}
    shared = len(words & clues)
    # a colon inside `<time_on:4>` is no "X: Y" of the sentence's own (the span keeps its length)
    prose = _CODE_SPAN_RE.sub(lambda m: "c" * len(m.group()), s)
    weak = bool(_WEAK_CAUSE_RE.search(prose)) or (after and bool(_AFTER_CUE_RE.search(prose)))
    if not (cue and (strong or shared or after)) and not (weak and shared >= (1 if after else 2)):
        return 0
    if _states_something(s):
        return 0  # a decision or convention ("I'll use X instead of Y because …") is its own memory
    return shared + (3 if strong else 1)


_CODE_SPAN_RE = lazy_pattern(r"`[^`]*`")
_WEAK_CAUSE_RE = lazy_pattern(
    r"\bbut\b|\b(?:has|have)\s+to\b|\bmust\b|\bonly\s+lets?\b|^[^:]{3,40}:\s|\bmaps?\b|\bexpects?\b|"
    r"\b(?:caught|found)\s+a\s+(?:real\s+)?bug\b|\bwas\s+\w+ed\s+(?:on|for|in)\s+every\b",
    re.IGNORECASE,
)


# right after the failing call, a consequence or a fix is enough of a cue: "… cuts off, so 19,99 became 19,98. Fix: …"
_AFTER_CUE_RE = lazy_pattern(r",\s*so\s+\w+|\bhence\b|\bthat'?s\s+why\b|\bfix\s*:|\binstead\s+of\b", re.IGNORECASE)
_CLUE_STOP = frozenset(
    "the and for with from that this error errors failed fails failure line file none true false test tests "
    "which there their these those would could should about after before other never always".split()
)
_OUTPUT_TAIL = 600


def _clue_words(failed: ToolOutcome, key: str, output: str) -> set[str]:
    """Words of the failure (its error line, summary, command and the output's tail), as 5-letter stems."""
    text = " ".join(x for x in (failed.error, failed.summary, failed.target, key) if x)
    words = set(re.findall(r"[a-z][a-z0-9_]{2,}", text.lower()))
    # "OperationalError" -> "operational"; "sqlite3.connect" -> "sqlite3", "connect"
    for token in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        words.update(w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]{3,}", token))
    words.update(w for w in re.findall(r"[a-z][a-z0-9_-]{4,}", output[-_OUTPUT_TAIL:].lower()))
    return {_stem(w) for w in words if w not in _CLUE_STOP}


def clue_words(text: str) -> set[str]:
    """The words of a text a cause may name (as a failure's clues are read), as 5-letter stems."""
    words = set(re.findall(r"[a-z][a-z0-9_]{2,}", text.lower()))
    for token in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        words.update(w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]{3,}", token))
    return {_stem(w) for w in words if w not in _CLUE_STOP}


def score_cause(s: str, clues: set[str]) -> int:
    """How well a sentence states the cause of what the clues describe (0: it does not)."""
    return _cause_score(s, clues)


def _stem(word: str) -> str:
    return word[:5] if len(word) >= 5 else word.removesuffix("s") if len(word) > 3 else word


_ERROR_NAME_RE = lazy_pattern(
    r"^\W*(?:E\s+)?(?P<name>(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Warning|Exit|Interrupt)\b"
    r"|(?:error|warning)\[[\w-]+\]|npm\s+ERR!\s+code\s+[A-Z][\w-]*|E[A-Z]{2,}[A-Z_]*|ERR_[A-Z_]+|"
    r"panic|segmentation\s+fault|fatal|FAILED|killed)",
)


def error_name(line: str | None) -> str | None:
    """What kind of error a line reports, never its message: the exception class (`OperationalError`), the
    compiler's code (`error[E0425]`), npm's code, or `FAILED` / `fatal` / `panic`. A lesson names the kind and
    says the rest in the assistant's words: a tool's error text (which anyone who wrote the test, the page or
    the package chose) is never copied into memory."""
    if not line:
        return None
    m = _ERROR_NAME_RE.match(line.strip())
    if not m:
        return None
    name = m.group("name")
    return name.rsplit(".", 1)[-1] if "Error" in name or "Exception" in name else name


def _failure(failed: ToolOutcome, short: bool = False) -> str:
    """What failed, in our words: the command (its key only in a lesson, where the full command line would state a
    fact of its own), the kind of error, or else the exit status; never the error's own text, and never the
    runner's tally ("2 failed"): a count of failing tests is the runner's output, not part of the lesson."""
    command = command_key(failed.target or "") if short else failed.target or ""
    named = error_name(failed.error)
    said = [named] if named else []
    if failed.exit_code not in (None, 0) and not said:
        said.append(f"exit code {failed.exit_code}")
    return f"`{_short_command(command)}` failed" + (f" ({'; '.join(said)})" if said else "")


def _lesson(failed: ToolOutcome, explanation: Sequence[str], turn: Turn) -> Candidate:
    text = clip(f"{' '.join(explanation)} ({_failure(failed, short=True)}.)", 480)
    return Candidate(text, "gotcha", GOTCHA_IMPORTANCE, turn.seq, entity_names(text), rule="lesson", said_by=ASSISTANT)


def _short_command(command: str, limit: int = 80) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"


def _command_fix(failure: ToolOutcome, commands: Sequence[str], fixed_in: Turn) -> Candidate:
    fix = _join([f"`{_short_command(c)}`" for c in commands[:2]])
    text = f"{_failure(failure)}; fixed by running {fix}."
    return Candidate(
        text, "gotcha", GOTCHA_IMPORTANCE, fixed_in.seq, entity_names(text), rule="gotcha", said_by=OBSERVED
    )
