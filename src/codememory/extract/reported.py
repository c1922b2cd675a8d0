"""Lessons with no failing tool: a problem the user reports ("One bug: with two tabs open I show up twice", "job
took 40 min last night. was 5 before", "temp shows 85.0 sometimes. bug?", a pasted error log) and the assistant's
explanation of its cause and fix in that turn ("Presence groups metas by key, and I keyed by socket id, so each
tab is its own entry. Keyed by the user id, …"). The explanation is the assistant sentence that best states a
cause, with the words of the report counting for it; a sentence a failure's lesson already holds is not used
again."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from itertools import takewhile

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ASSISTANT, Candidate, entity_names
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.clean import clip, tidy
from codememory.extract.gotchas import GOTCHA_IMPORTANCE, cause_sentence, clue_words, follow_up, score_cause
from codememory.extract.speakers import ToolText, relays_a_source
from codememory.extract.statements import classify, sentences
from codememory.extract.unresolved_pronouns import UNRESOLVED_START_RE, named_subject
from codememory.text.mood import asks, reports_status, states, tells_a_change

_BUG_REPORT_RE = lazy_pattern(
    r"^(?:one\s+|a\s+|another\s+|found\s+a\s+|new\s+)?(?:bug|problem|issue|regression)\s*[:!]"
    r"|\b(?:shows?\s+up|appears?|runs?|fires?|gets?\s+sent|is\s+sent|(?:is|are)\s+(?:listed|shown|counted))\s+twice\b"
    r"|\bis\s+broken\b|\b(?:doesn'?t|does\s+not|don'?t|no\s+longer|won'?t|can'?t|isn'?t|aren'?t)\s+(?:work|show|appear|"
    r"load|start|line\s+up|reach|match|build|run|compile|open|save|find|play|respond|connect|update|sync|print|send|render|"
    r"scroll|boot)\w*\b|\bstopped\s+working\b|\bcrash(?:es|ed)?\b"
    r"|\b(?:wrong|broken|fails?|failing|failed|dies|died|hangs?|hung|crawling|empty|blank|white|missing|dropped|"
    r"disappears?|vanish\w*|duplicates?|off\s+by\s+(?:one|\d+))\b|\bbug\s*\?|\btook\s+\d+\s*(?:s|sec|min|h)\w*\b"
    r"|\b(?:gives?|returns?|shows?)\s+\d[\d.,]*\b.*\b(?:should\s+be|instead\s+of|expected)\b|\b\d{3}\s+since\b"
    r"|\b(?:log|error|it|cron|journal)\s+(?:says|said|shows|mailed)\b"
    r"|\bcomes?\s+out\s+(?:as|wrong|garbled|empty)\b|\b(?:garbled|mangled|mojibake)\b",
    re.IGNORECASE,
)
_PASTED_ERROR_RE = lazy_pattern(
    r"^\s*(?:[\w.]*(?:Error|Exception)\b|Fatal\b|FATAL\b|ERROR\b|E/\w+|Traceback\b|panic:|Can'?t\s+locate\b|"
    r"[\w.-]+\.(?:service|py|js|ts|go|rs|rb|pl|php):?\s.*(?:error|failed|FAILURE)\b)",
    re.MULTILINE,
)
_PASTED_LINE_RE = lazy_pattern(r"^.*(?:Error|Exception|error|failed|FAILURE|Fatal|fatal|Can'?t|cannot)\b.*$", re.M)
_THATS_THE_CAUSE_RE = lazy_pattern(
    r"^(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?!why\b|not\b|fine\b|ok\b|expected\b)", re.I
)
_THATS_WHY_RE = lazy_pattern(r"^(?:that|this)(?:'s|\s+is)\s+why\b", re.IGNORECASE)
_PIECE_RE = lazy_pattern(r"(?:^|(?<=[a-z0-9)][.!])\s+)(?=\S)")
MAX_REPORT_CHARS = 120
MAX_REPORT_WORDS = 35
# a sentence that lays out options explains nothing yet ("Two ways to fix: a) … b) …")
_OFFERING_RE = lazy_pattern(
    r"\b(?:two|three|four|a\s+few|several|some)\s+(?:ways|options|approaches|fixes|possibilities)\b|^options?\b", re.I
)
# a rule, a reminder or a story from before is not a problem to explain now
_NOT_A_REPORT_RE = lazy_pattern(
    r"^\W*(?:reminder|note|fyi|rule|house\s+rules?|for\s+the\s+record|last\s+(?:year|month|time)|once|in\s+another|"
    r"years?\s+ago|back\s+then|always|never|please|make\s+sure)\b",
    re.IGNORECASE,
)


def reported_bug_lessons(turns: Sequence[Turn], taken: Collection[str] = ()) -> list[Candidate]:
    """A lesson per turn whose user message reports a problem the assistant then explains; `taken`: the texts of
    lessons already made (from failures), whose sentences are not used twice."""
    out: list[Candidate] = []
    for turn in turns:
        text = scrub(turn.user_text)
        report = _report(text)
        if report is None or not turn.assistant_texts:
            continue
        pasted = "\n".join(m.group(0) for m in _PASTED_LINE_RE.finditer(text))
        clues = clue_words(f"{report}\n{pasted[-2000:]}")  # the report's words and any error it pasted
        best: tuple[int, list[str]] | None = None
        for raw in turn.assistant_texts:
            said = [named_subject(tidy(s)) for s in sentences(scrub(raw))]
            for n, s in enumerate(said):
                if not s or not states(s) or reports_status(s) or tells_a_change(s) or _OFFERING_RE.search(s):
                    continue
                if any(_within(s, t) for t in taken):
                    continue
                lead: list[str] = []
                if _THATS_WHY_RE.match(s) and n and not UNRESOLVED_START_RE.match(said[n - 1]):
                    lead = [said[n - 1]]  # "That's why there is no error": the cause is the sentence before
                elif m := _THATS_THE_CAUSE_RE.match(s):
                    # "That's Chromium's autoplay policy, …" answering the report: "that" is what was reported
                    s = f"Cause: {s[m.end() :]}"
                elif UNRESOLVED_START_RE.match(s):
                    continue

                score = _score(s, clues)
                if not score or (best and best[0] >= score):
                    continue
                best = (
                    score,
                    [*lead, s] + [x for x in said[n + 1 : n + 2] if follow_up(x) and not any(x in t for t in taken)],
                )
        if best is None:
            continue
        note = clip(tidy(report), MAX_REPORT_CHARS)
        body = clip(f"{' '.join(best[1])} (reported: {note})", 480)
        out.append(
            Candidate(body, "gotcha", GOTCHA_IMPORTANCE, turn.seq, entity_names(body), rule="lesson", said_by=ASSISTANT)
        )
    return out


# "…, so each tab is its own entry": the consequence that explains what the user saw
_CONSEQUENCE_RE = lazy_pattern(r",\s*so\s+(?!(?:far|i|we|let'?s|now)\b)\w+", re.IGNORECASE)


def _score(s: str, clues: set[str]) -> int:
    """A cause naming the report's words scores by them; a stated cause or consequence alone scores 1."""
    if not cause_sentence(s, cue=False):
        return 0
    return score_cause(s, clues) or (1 if cause_sentence(s) or _CONSEQUENCE_RE.search(s) else 0)


def _within(sentence: str, text: str) -> bool:
    """A sentence another memory already holds (as written, or without its code marks)."""
    plain = sentence.replace("`", "").rstrip(".").lower()
    return sentence in text or plain in text.replace("`", "").lower()


def _is_rule(sentence: str) -> bool:
    """A user's rule that names what fails without it ("bump the version whenever you touch a chart, CI fails the
    PR otherwise") states how to work, not a problem."""
    return any(st.category in ("convention", "preference") for st in classify(sentence, role="user"))


def _until_question(text: str) -> str:
    """The report up to the question it ends on ("… was ok. can you look? sorry for my english")."""
    m = re.search(r"(?<=[.!])\s+[^.!?]*\?", text)
    return text[: m.start()] if m else text


def _report(user_text: str) -> str | None:
    """The sentence of a user's message that reports a problem (a pasted error counts: the sentence before it)."""
    said = sentences(user_text)
    # terse users write in lower case: "… make parquet. problem: pm10 for 2023 is all NaN" is two sentences; the
    # report goes on to the end of what was typed as one ("job took 40 min last night. was 5 before.")
    for s in (_until_question(x[m.end() :]) for x in said for m in _PIECE_RE.finditer(x)):
        t = tidy(s)
        if _NOT_A_REPORT_RE.match(t) or len(t.split()) > MAX_REPORT_WORDS:
            continue  # a rule, a story, or a long sentence of background is not the problem itself
        asks_why = t.endswith("?") and re.search(r"\bbug\s*\?|\bwhy\b", t, re.I)
        if t and (not t.endswith("?") or asks_why) and _BUG_REPORT_RE.search(t) and not _is_rule(t):
            return t
    if _PASTED_ERROR_RE.search(user_text) and said:
        return tidy(said[0])
    return None


# "Stop, don't apply this.", "Careful again:", "Heads-up:": the assistant warning about what a tool just showed
_CAUTION_RE = lazy_pattern(
    r"^\W*(?:stop[,!.]\s+(?:don'?t|do\s+not)\b[^.:!]*[.:!]|careful(?:\s+again|\s+here)?\s*[:!,]|watch\s+out\s*[:!,]|"
    r"heads[- ]up\s*[:!,]|warning\s*[:!]|gotcha\s*:)\s*",
    re.IGNORECASE,
)
_CAUSE_WORDS_RE = lazy_pattern(
    r"\b(?:because|since|so\s+|forces?|would|changes?|means|treats?|wipes?|breaks?|destroys?|recreates?|loses?)\b", re.I
)
MAX_CAUTION_SENTENCES = 3


def caution_lessons(turns: Sequence[Turn], taken: Collection[str] = ()) -> list[Candidate]:
    """A lesson per warning the assistant opens a text with, about what it just saw ("Careful again: in this
    provider version, changing `name` on `hcloud_server` forces replacement, so renaming prod's servers would
    recreate them"): the warning and the sentences after it that explain it or give the fix, without the alarm."""
    out: list[Candidate] = []
    for turn in turns:
        for raw in turn.assistant_texts:
            text = scrub(raw).lstrip()
            m = _CAUTION_RE.match(text)
            if not m:
                continue
            said = [tidy(s) for s in sentences(text[m.end() :])]
            ahead = list(takewhile(lambda s: not (_OFFERING_RE.search(s) or asks(s)), said))
            kept = [s for s in ahead[:MAX_CAUTION_SENTENCES] if s]
            if not kept:
                continue
            body = " ".join(kept)
            if len(body.split()) < 8 or not _CAUSE_WORDS_RE.search(body) or any(_within(kept[0], t) for t in taken):
                continue
            body = clip(body, 480)
            out.append(
                Candidate(
                    body, "gotcha", GOTCHA_IMPORTANCE, turn.seq, entity_names(body), rule="lesson", said_by=ASSISTANT
                )
            )
    return out


# "Found it.", "That's the cause.", "Here's the problem:": the assistant announcing that what follows is the cause
# it found by reading the code, the data or a tool's output
_FINDING_RE = lazy_pattern(
    r"^\W*(?:found\s+it|that'?s\s+(?:the\s+(?:cause|culprit|problem|bug|issue)|what'?s\s+(?:going\s+on|"
    r"happening))|here'?s\s+(?:the\s+)?(?:problem|cause|culprit|bug|issue|what'?s\s+(?:going\s+on|happening))|"
    r"there\s+it\s+is|mystery\s+solved|that\s+explains\s+it)\s*[.!:]\s*",
    re.IGNORECASE,
)
MAX_FINDING_SENTENCES = 3
MIN_FINDING_WORDS = 10


def finding_lessons(turns: Sequence[Turn], taken: Collection[str] = ()) -> list[Candidate]:
    """A lesson per text the assistant opens by announcing what it found ("Found it. `storage.ts` uses the
    session area, which is kept in memory only, so every stash is lost on restart."): the sentences after the
    announcement, up to an offer or a question. Where it stands says it is the cause, whatever its words."""
    out: list[Candidate] = []
    tool_text: ToolText | None = None
    for turn in turns:
        for raw in turn.assistant_texts:
            text = scrub(raw).lstrip()
            m = _FINDING_RE.match(text)
            if not m:
                continue
            said = [tidy(s) for s in sentences(text[m.end() :])]
            ahead = list(takewhile(lambda s: not (_OFFERING_RE.search(s) or asks(s)), said))
            tool_text = tool_text or ToolText.of(turns)
            # what a file, a page or a tool's output says is theirs, not what the assistant found: an agent that
            # read a planted line repeats it
            kept = [s for s in ahead[:MAX_FINDING_SENTENCES] if s and not _relayed(s, tool_text)]
            if not kept:
                continue
            body = " ".join(kept)
            if len(body.split()) < MIN_FINDING_WORDS or any(_within(kept[0], t) for t in taken):
                continue
            body = clip(body, 480)
            out.append(
                Candidate(
                    body, "gotcha", GOTCHA_IMPORTANCE, turn.seq, entity_names(body), rule="lesson", said_by=ASSISTANT
                )
            )
            break  # one finding per turn
    return out


def with_findings(reported: Sequence[Candidate], found: Sequence[Candidate], turns: Sequence[Turn]) -> list[Candidate]:
    """The reported problems' lessons with the finding the assistant announced in the same turn as their
    explanation (the report's note kept), and the findings no report asked for. A finding supersedes what was
    guessed before it in the turn, not what was explained after it: a later explanation stays its own lesson."""
    out: list[Candidate] = []
    by_turn = {f.seq: f for f in found}
    texts = {t.seq: t.assistant_texts for t in turns}
    for lesson in reported:
        finding = by_turn.get(lesson.seq)
        note = re.search(r"\s*\(reported:.*\)\s*$", lesson.text)
        if finding is None or note is None:
            out.append(lesson)
            continue
        said = texts.get(lesson.seq, ())
        explained_at, found_at = _text_at(said, lesson.text[: note.start()]), _text_at(said, finding.text)
        if explained_at is not None and found_at is not None and explained_at > found_at:
            out.append(lesson)  # said after the finding: another point, not a guess the finding replaces
            continue
        del by_turn[lesson.seq]
        tail = note.group(0).strip()
        text = f"{clip(finding.text, max(80, 479 - len(tail)))} {tail}"  # the note whole, the finding cut to fit
        out.append(Candidate(text, "gotcha", GOTCHA_IMPORTANCE, lesson.seq, entity_names(text), rule="lesson",
                             said_by=ASSISTANT))  # fmt: skip
    return out + list(by_turn.values())


def _relayed(sentence: str, tool_text: ToolText) -> bool:
    """A sentence that reports what a source says or copies a tool's output or a file the span read."""
    return relays_a_source(sentence) or tool_text.copies(sentence)


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _text_at(texts: Sequence[str], sentence: str) -> int | None:
    """Which of a turn's assistant texts a memory's sentence came from (its first words), if any."""
    key = " ".join(_plain(sentence).split()[:6])
    return next((i for i, raw in enumerate(texts) if key and key in _plain(raw)), None)
