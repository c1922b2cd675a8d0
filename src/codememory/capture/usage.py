"""Use signals: what an agent session did with the memories it was shown, read from each turn as it is captured.

Every capture path records a turn through `opencode.write_turn` (the OpenCode database poller, the plugin's raw
events, the Claude Code and Codex transcripts the hooks read), which hands the newly recorded turn to
`observe_turn`. That looks only at this turn's tool calls and text, against the memories the store says this
session was shown (`memory_exposures`, written when memories are injected: operations/explain.py), so a session is
never scanned twice, and it costs no model call. Signals, the first of each per memory and session kept:

- **cited**: the agent wrote the memory's id (in its text, or in a tool call's arguments);
- **fetched**: a `memory_get` call asked for it (also when no injection showed it: it was then found by search);
  not a call that failed, and no more ids of one call than the tool serves (`MAX_FETCH_IDS`);
- **entity**: a tool call made after the memory was shown holds one of its distinctive terms (a path, a code name,
  a command, a version or a value: text/usage_cues.py) that neither the query it was shown for, nor the request of
  the turn making the call, nor the session's earlier turns that ended before the memory was shown (their tool
  calls and the start of what each returned: store/session_seen.py), nor this turn's calls made before it was shown
  already held — what the agent was doing anyway, was asked to, or had met in the project already is no evidence.
  The request and the query also give a name they say in words ("booking id" gives `booking_id`:
  text/own_words.said_in_words).
  For a read the call's path counts, for a shell call its command, for other tools their arguments; never a tool's
  output. An edit counts by what it applies of the memory: the text it adds (not the text it replaces), or taking
  out what the memory forbids (`sep=,` in the lines it removes and not in those it writes); the path of the file it
  edits is no evidence (a memory naming a file is shown to sessions that open it for every reason they edit it),
  but for a changelog memory that names nothing else (its entries are no evidence, so the file is all it states).
  A call that only looks (a read, a
  listing, a search, a shell command that only shows: text/shell_lines.looks_only) counts only once the same turn
  acts after it (an edit, a command that changes or runs something): read to answer a question, a file was looked
  up, not acted on (unless the answer states the memory: **answered**). A lookup command a memory gives as a
  code span (`git log --oneline v3.4.2..HEAD`) is a use when run: running it is what the memory said. Nor a name
  an edit's file already held (in the text it replaces, or in the file as a read earlier in the turn showed it):
  new code that reuses the file's own names writes in the code's words, not the memory's.
  A commit whose subject follows a memory's commit form (`fix(scope): …`, text/usage_cues.py) uses it; the other
  words of a commit message do not (the message is the agent's account of what it did: its edits are the evidence),
  nor what an edit writes into a changelog or release notes (text/own_words.accounts_of_work).
  A term two shown memories hold goes to the one that explains the call better (holds all of the call's terms the
  other holds, and more); two that explain it as well are both credited;
- **answered**: a look that found the memory's term was never acted on in the turn, but the turn's final answer
  (what the assistant said after its last tool call) states at least two more of the memory's values that neither
  the question nor the query it was shown for held (text/answer_cues.py): it was read to answer a question.
  Dated at the look. The look may also be at a file the memory names that too many memories name to be one of its
  terms (a place: `config/config.exs`), since the answer says which memory it was read for. An answer in a
  memory's words with no look behind it counts for nothing;
- **contradicted**: a tool call did what the memory forbids (the rule set in text/usage_cues.py: `pytest` run bare
  where the memory says never); the forbidden thing in that call is then no evidence of a use (its other terms
  still are), and text added to a changelog contradicts nothing, as it uses nothing;
- **ignored**: none of these, which is what a shown memory is until one comes.

A distinctive term must also be rare in the store: a name more than `max(3, memories / 200)` memories mention says
nothing about which of them was acted on (capture/exposure_cues.py). A `memory_search` or `memory_retrieve` call
shows the agent the memories in its result (its entries' `id` fields, never an id a memory's text names): they become
exposures of the session (kind "search", its query as their context) from that call on.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from codememory.capture.calls_before_shown import CallsBeforeShown
from codememory.capture.exposure_cues import exposure_cues, kept_cues, memory_cues
from codememory.capture.tool_actions import MAX_ACTION_CHARS, action_of
from codememory.capture.turns import ToolCall, Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import ID_RE
from codememory.store.database import Database
from codememory.store.session_seen import MAX_SEEN_TOKENS, TOKENS_MARK
from codememory.store.usage import Exposure, Outcome, Shown
from codememory.text.answer_cues import states_the_memory
from codememory.text.own_words import accounts_of_work, said_in_words
from codememory.text.privacy import scrub_start
from codememory.text.usage_cues import (
    PLACE,
    Action,
    Prohibition,
    Term,
    copied_phrase,
    follows_commit_form,
    new_terms,
    said_without_commit_messages,
    term_in,
)
from codememory.text.usage_cues import violation as rule_violation

MAX_SEARCH_IDS = 20  # memory ids taken from one search result
MAX_FETCH_IDS = 20  # memory ids one memory_get serves (the MCP tool and /memory/get refuse more): a call naming
# more, forged or injected, cannot have fetched the rest
MAX_READ_CHARS = 100_000  # of a read's output kept: the file as the agent saw it before editing it
MAX_SEEN_CALL_CHARS = 1000  # of a call's arguments, and of its output, kept for the session's later turns

_ID_RE = lazy_pattern(r"\bmem_[0-9a-f]{8}\b")
# A search result's memories by their "id" field (its JSON, compact or not, whole or cut short), not every id its
# text holds: a memory's text is untrusted, and the ids it names were not shown (inside a JSON string its quotes are
# escaped, so it cannot pass for a field)
_LISTED_ID_RE = lazy_pattern(r'"id"\s*:\s*"(mem_[0-9a-f]{8})"')
# the tool under any assistant's prefix: `mcp__codememory__`, `codememory_`, `mcp_codememory_`, Copilot's `codememory-`
_FETCH_RE = lazy_pattern(r"(?:^|[_.-])memory_get$")
_SEARCH_RE = lazy_pattern(r"(?:^|[_.-])memory_(?:search|retrieve)$")
_OUTPUT_WORD_RE = lazy_pattern(r"[\w.][\w./-]*")


@dataclass
class Observed:
    """What one turn showed about the memories of its session."""

    searched: list[str] = field(default_factory=list)  # shown by a search call in this turn
    outcomes: list[Outcome] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ turns
def _at(call: ToolCall, turn: Turn) -> str:
    return call.started_at or turn.ended_at or turn.started_at


def _shown_before(exposure: Exposure, at: str) -> bool:
    return exposure.first_shown_at <= at


def observe(db: Database, turn: Turn, exposures: list[Exposure]) -> Observed:
    """The signals in one turn for the session's exposures (and the exposures its searches add: recorded here)."""
    seen = Observed()
    by_id = {e.memory_id: e for e in exposures}
    end = turn.ended_at or turn.started_at
    for call in turn.tool_calls:
        at = _at(call, turn)
        name = call.tool.lower()
        if _SEARCH_RE.search(name) and call.status != "error":
            ids = list(dict.fromkeys(_LISTED_ID_RE.findall(call.output)))[:MAX_SEARCH_IDS]
            query = " ".join(v for v in call.input.values() if isinstance(v, str))
            fresh = [i for i in ids if i not in by_id]
            if fresh:
                db.record_shown(
                    at=at,
                    source=turn.source,
                    session_id=turn.session_id,
                    kind="search",
                    memories=[Shown(i) for i in fresh],
                    context=query,
                    cues_of=functools.partial(exposure_cues, db),
                )
                for e in db.session_exposures(turn.session_id):
                    by_id.setdefault(e.memory_id, e)
                seen.searched += fresh
        elif _FETCH_RE.search(name) and call.status != "error":  # a refused call fetched nothing
            for mid in list(dict.fromkeys(_ids_in(call.input.get("ids") or call.input.get("id"))))[:MAX_FETCH_IDS]:
                seen.outcomes.append(Outcome(mid, "fetched", at, f"{call.tool} {mid}", shown_kind="fetched"))
    used = {mid for mid, e in by_id.items() if e.used_at is not None}
    used |= {o.memory_id for o in seen.outcomes}  # fetched
    contradicted = {mid for mid, e in by_id.items() if e.contradicted_at is not None}
    open_ids = [mid for mid in by_id if mid not in used or mid not in contradicted]
    if not open_ids:
        return seen
    # Per exposure, once: the terms the query it was shown for did not hold already, and the rules it states (kept
    # with the exposure when it was shown; parsed here for older rows and those a use created).
    kept = {mid: k for mid in open_ids if (k := kept_cues(by_id[mid])) is not None}
    missing = [mid for mid in open_ids if mid not in kept]
    parsed = {
        mid: (new_terms(c.terms, by_id[mid].context), list(c.rules)) for mid, c in memory_cues(db, missing).items()
    }
    cues = {**kept, **parsed}
    unused = {mid: terms for mid, (terms, _) in cues.items() if mid not in used}
    rules = {mid: stated for mid, (_, stated) in cues.items() if stated and mid not in contradicted}

    def use(mid: str, signal: str, at: str, evidence: str) -> None:
        used.add(mid)
        unused.pop(mid, None)
        seen.outcomes.append(Outcome(mid, signal, at, evidence))

    request = turn.user_text[:MAX_ACTION_CHARS].lower()
    earlier: list[tuple[str, str, str]] = []  # the session's earlier turns: ended at, their calls' text, digests
    for ended_at, said in db.seen_before(turn.session_id, turn.seq):
        text, _, digests = said.partition(TOKENS_MARK)
        earlier.append((ended_at, text, digests))

    held: dict[str, list[str]] = {}

    def held_before(mid: str) -> list[str]:
        """What the session's earlier turns held that ended before the memory was first shown to it: their calls'
        text, and the memory's terms their outputs showed (kept as digests only). Once per memory: it is asked for
        every call of the turn, and the earlier turns may hold MAX_SEEN_SESSION_CHARS."""
        if mid in held:
            return held[mid]
        first = by_id[mid].first_shown_at
        texts = [said for ended_at, said, _ in earlier if ended_at <= first]
        shown_digests = {d for ended_at, _, digests in earlier if ended_at <= first for d in digests.split()}
        if shown_digests:
            texts.append("\n".join(t.text for t in cues[mid][0] if _digest(turn.session_id, t.text) in shown_digests))
        held[mid] = texts
        return texts

    read: dict[str, str] = {}  # what a read earlier in the turn showed of a file (lower-cased), by its path
    before = CallsBeforeShown()  # the turn's calls so far: what those made before a memory was shown held
    # Uses a look found (a read, a listing, a search), kept only once the turn goes on to act: a file read or
    # listed to answer a question (the version in go.mod, the JDK the CI workflow sets up) is looked up, not acted
    # on, however well a shown memory names it; read and then changed, it is where the memory said to go.
    looked: dict[str, tuple[str, str, list[str]]] = {}  # when, the evidence, the terms the look found
    places: dict[str, tuple[str, str, list[str]]] = {}  # the same for looks at a memory's common file only
    for call in turn.tool_calls:
        name = call.tool.lower()
        if _SEARCH_RE.search(name) or _FETCH_RE.search(name):
            continue
        at = _at(call, turn)
        action = action_of(call)
        if looked and (action.edited or (action.shell and not action.look)):
            for mid, (then, evidence, _) in looked.items():
                if mid not in used:
                    use(mid, "entity", then, evidence)
            looked.clear()
        said = action.haystack()
        # An edit uses a memory by what it writes: the file's path says only where the edit went, and a memory
        # naming that file is shown to every session that opens it, whatever the edit is for.
        low = said_without_commit_messages(replace(action, paths=()) if action.edited else action).lower()
        for mid in set(_ID_RE.findall(said)) & set(by_id) - used:
            if _shown_before(by_id[mid], at):
                use(mid, "cited", at, f"{call.tool} names {mid}")
        # An edit writes in its file's own words: a name the file held already (the text it replaces, the file as
        # a read earlier in the turn showed it) is the code's, not evidence that a memory was acted on. Nor is a
        # name the turn's own request gives: the user asked for it, whatever memory also names it.
        known = [request, action.replaced.lower()] if action.replaced else [request]
        known += [read[path] for path in action.edited if path in read]

        # Every shown memory's terms in this call, those already used too: a term several memories share is
        # credited to the one the call matches best (see _explained_better).
        found = {
            mid: hits
            for mid, (terms, _) in cues.items()
            if (hits := _hits(terms, action, low, [*known, *held_before(mid)], before, by_id[mid], at, request))
        }
        if action.edited and action.removed:
            for mid, removed in _removes(cues, unused, action, request, by_id).items():
                if _shown_before(by_id[mid], at):
                    found.setdefault(mid, []).extend(removed)
        if action.look:
            _looked_at_places(cues, unused, by_id, found, action, at, call.output[:MAX_READ_CHARS], places)
        for mid in list(unused):
            credited = _not_forbidden(found.get(mid, []), cues[mid][1], action)
            if credited and not _explained_better(mid, found, cues):
                if action.look and not _runs_as_told(cues[mid][0], credited, action):
                    looked.setdefault(mid, (at, f"{call.tool}: {', '.join(credited[:3])}", credited))
                else:
                    use(mid, "entity", at, f"{call.tool}: {', '.join(credited[:3])}")
        for mid, stated in list(rules.items()):
            if not _shown_before(by_id[mid], at):
                continue
            for rule in stated:
                done = rule_violation(rule, action)
                if done:
                    del rules[mid]
                    seen.outcomes.append(Outcome(mid, "contradicted", at, f"{rule.clause} | {call.tool}: {done}"))
                    break
        before.add(at, said.lower())
        if call.output and action.paths and not action.edited and not action.shell and not action.text:
            for path in action.paths:  # a read: the file as the agent saw it
                read[path] = call.output[:MAX_READ_CHARS].lower()
    # Looks the turn never acted on: a memory read to answer a question is used when the answer states it, beyond
    # what the look found (the look says where the agent went, the answer what it took from there) and the question.
    answer = final_answer(turn)
    for mid, (then, evidence, found_by_look) in {**places, **looked}.items() if answer else ():
        known = [turn.user_text, by_id[mid].context, *found_by_look, *held_before(mid)]
        if mid not in used and (told := states_the_memory(cues[mid][0], answer, known)):
            use(mid, "answered", then, f"{evidence}; the answer states {', '.join(told[:3])}")
    for text in turn.assistant_texts:
        for mid in _ID_RE.findall(text):
            if mid in by_id and mid not in used and _shown_before(by_id[mid], end):
                use(mid, "cited", end, f"cited in the answer: {mid}")
    return seen


def final_answer(turn: Turn) -> str:
    """What the assistant said after the turn's last tool call (its answer); its last text when the source does not
    keep the order of texts and calls."""
    if len(turn.text_calls) == len(turn.assistant_texts) and turn.text_calls:
        last = len(turn.tool_calls)
        return "\n".join(t for t, n in zip(turn.assistant_texts, turn.text_calls, strict=True) if n == last)
    return turn.assistant_texts[-1] if turn.assistant_texts else ""


def _hits(
    terms: Sequence[Term],
    action: Action,
    low: str,
    known: list[str],
    before: CallsBeforeShown,
    shown: Exposure,
    at: str,
    request: str,
) -> list[str]:
    """The terms of a memory shown before `at` that this action holds (`low`: its text lower-cased) and that
    `known` (what the edited file held already) does not, nor a call of the turn made before the memory was shown
    (`before`), nor the request or the query it was shown for in words (`booking_id` for "booking id": see
    text.own_words.said_in_words); a commit form when a commit follows it."""
    if not _shown_before(shown, at):
        return []
    asked = (request, shown.context.lower())
    if action.edited and accounts_of_work(action.edited) and _states_only_places(terms):
        # What a changelog entry says is the agent's account, never evidence; a memory that says only which file
        # the account goes in ("a line in CHANGES.rst") is applied by writing there, and by nothing else.
        low = "\n".join([low, *action.edited]).lower()
    out = []
    for t in terms:
        if t.kind == PLACE:
            continue  # no evidence of this memory (capture/exposure_cues.py); only a look behind an answer
        if t.kind == "commit":
            subject = follows_commit_form(t.text, action)
            if subject:
                out.append(subject)  # the evidence shown: the commit that follows the form
        elif t.kind == "phrase":
            written = action.added and not accounts_of_work(action.edited)
            copied = (
                copied_phrase(
                    t.text,
                    action.added,
                    [*known, shown.context],
                    lambda run: before.held(run, shown.first_shown_at, phrase=True),
                )
                if written
                else None
            )
            if copied:
                out.append(f'"{copied}"')
        elif (
            term_in(t.text, low, lowered=True)
            and not _seen(t.text, known)
            and not before.held(t.text.lower(), shown.first_shown_at)
            and not any(said_in_words(t.text, text) for text in asked)
        ):
            out.append(t.text)
    return out


def _states_only_places(terms: Sequence[Term]) -> bool:
    """Whether the only things a memory states that an edit could write are files (`CHANGES.rst` for "every change
    gets a line in CHANGES.rst")."""
    said = [t for t in terms if t.kind not in ("phrase", "commit", PLACE)]
    return bool(said) and all(t.kind == "path" for t in said)


def _removes(
    cues: Mapping[str, tuple[list[Term], list[Prohibition]]],
    unused: Mapping[str, list[Term]],
    action: Action,
    request: str,
    by_id: Mapping[str, Exposure],
) -> dict[str, list[str]]:
    """The memories whose forbidden code (`sep=,`, a rejected package) this edit takes out: in the lines it removes,
    not in those it writes. Removing what a memory says to avoid applies it as much as writing its value; not when
    the turn's request (lower-cased) or the query the memory was shown for names the thing: the user asked for it."""
    gone = action.removed.lower()
    out: dict[str, list[str]] = {}
    for mid in unused:
        for rule in cues[mid][1]:
            thing = rule.thing
            taken_out = term_in(thing, gone, lowered=True) and not term_in(thing, action.added)
            taken_out = taken_out and not _seen(thing, [request, by_id[mid].context.lower()])
            if rule.kind in ("code", "package") and taken_out:
                out.setdefault(mid, []).append(f"removes {thing}")
    return out


def _not_forbidden(hits: list[str], rules: Sequence[Prohibition], action: Action) -> list[str]:
    """The hits that are not what the memory forbids and the action does: doing it goes against the memory (a
    contradiction), it is never also a use that would raise the memory. Its other terms in the call still count
    (a rule read coarsely, "never leak `TimeoutError`" by an edit that maps it, must not cost the use)."""
    if not hits or not rules:
        return hits
    broken = [r.thing.lower() for r in rules if rule_violation(r, action)]
    return [
        h for h in hits if not any(term_in(b, h.lower(), lowered=True) or term_in(h, b, lowered=True) for b in broken)
    ]


def _looked_at_places(
    cues: Mapping[str, tuple[list[Term], list[Prohibition]]],
    unused: Mapping[str, list[Term]],
    shown: Mapping[str, Exposure],
    found: Mapping[str, list[str]],
    action: Action,
    at: str,
    output: str,
    places: dict[str, tuple[str, str, list[str]]],
) -> None:
    """Remember a look at a file a memory names that many memories name (a place: capture/exposure_cues.py), for a
    memory shown before it that nothing else in the call was found for: if the turn only answers and the answer
    states the memory, this is the look. What the look showed (`output`) is kept with it as known: a look at a
    place says nothing of which memory it was for, so a value the file itself showed is the file's, not evidence
    the memory was read."""
    where = "\n".join(action.paths).lower()
    for mid in unused:
        if mid in found or not _shown_before(shown[mid], at):
            continue
        hit = next((t.text for t in cues[mid][0] if t.kind == PLACE and term_in(t.text, where, lowered=True)), None)
        if hit and mid in places:
            places[mid][2].append(output)  # a later look there: what it showed is known too
        elif hit:
            places[mid] = (at, f"{action.tool}: {hit}", [hit, output])


def _runs_as_told(terms: Sequence[Term], credited: Sequence[str], action: Action) -> bool:
    """Whether a shell line runs a command the memory gives in a code span (`git log --oneline v3.4.2..HEAD`):
    a lookup the memory prescribes is done by running it, so it is a use without a later act."""
    spans = {t.text for t in terms if t.kind == "span" and " " in t.text.strip()}
    return bool(action.shell) and any(c in spans for c in credited)


def _explained_better(
    mid: str, found: Mapping[str, list[str]], cues: Mapping[str, tuple[list[Term], list[Prohibition]]]
) -> bool:
    """Whether another memory shown to the session explains this call's terms better than this one: its cues (its
    terms and its text as shown, kept when it was first shown) hold every term of the call this one holds, and it
    accounts for more of the call's terms than this one does (`.git` and `.brisk` written into code that walks a
    task's inputs are the memory's about skipping them there, which also names `filter_entry`, not the one that
    mentions them about the file watcher). Two that account for as much are both credited."""
    mine = {h.lower() for h in found[mid]}

    def covered(of: set[str], by: str) -> set[str]:
        """The terms of `of` that `by` holds, by its hits in this call or its cues."""
        theirs = {h.lower() for h in found.get(by, [])}
        text = "\n".join(t.text for t in cues.get(by, ([], []))[0] if t.kind != PLACE).lower()
        return {h for h in of if h in theirs or term_in(h, text, lowered=True)}

    for other in found.keys() - {mid}:
        theirs = {h.lower() for h in found[other]}
        if covered(mine, other) == mine and len(theirs | mine) > len(mine | covered(theirs, mid)):
            return True
    return False


def _seen(term: str, known: list[str]) -> bool:
    return any(term_in(term, text, lowered=True) for text in known)


def _ids_in(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [v for v in items if isinstance(v, str) and ID_RE.fullmatch(v)]


def observe_turn(db: Database, turn: Turn) -> int:
    """Record what a newly captured turn did with the memories its session was shown; returns how many exposures
    changed. When the session was shown nothing and searched nothing: one indexed read, and the turn's row of what
    its calls held written (store/session_seen.py) for the memories shown to the session later."""
    exposures = db.session_exposures(turn.session_id)
    searched = any(_SEARCH_RE.search(c.tool.lower()) or _FETCH_RE.search(c.tool.lower()) for c in turn.tool_calls)
    seen = observe(db, turn, exposures) if exposures or searched else Observed()
    if turn.tool_calls:  # for the memories shown to the session later (see observe)
        tokens = [_digest(turn.session_id, t) for t in output_tokens(turn)]
        db.record_seen(turn.session_id, turn.seq, turn.ended_at or turn.started_at, said_in(turn), tokens)
    if not seen.outcomes:
        return 0
    return db.record_outcomes(turn.session_id, turn.source, seen.outcomes)


def said_in(turn: Turn) -> str:
    """What a turn's tool calls held, as kept for the session: each call's arguments as the rules read them (more
    than the daily log's one field of a call: an edit's added text too), bounded per call and scrubbed (cut at a
    white space before: a secret the bound went through would no longer have the shape scrub knows)."""
    kept = (scrub_start(action_of(call).haystack(), MAX_SEEN_CALL_CHARS) for call in turn.tool_calls)
    return "\n".join(h for h in kept if h)


def output_tokens(turn: Turn) -> list[str]:
    """The words the start of each call's output showed (a listing, the top of a file), lower-cased, a path also by
    each of its tails (`src/cli.rs`, `cli.rs`), in the order the calls showed them (a busy turn keeps its first).
    Kept only as digests, and taken from the output scrubbed: a digest keyed by what the store holds confirms a
    guessed word, so what the user marked private, or a secret, is no word of it."""
    out: dict[str, None] = {}
    for call in turn.tool_calls:
        if len(out) >= MAX_SEEN_TOKENS:
            break  # the rest would not be kept: neither scrubbed nor digested
        for word in _OUTPUT_WORD_RE.findall(scrub_start(call.output, MAX_SEEN_CALL_CHARS).lower()):
            word = word.strip(".-")
            out[word] = None
            out.update((word[i + 1 :], None) for i, ch in enumerate(word) if ch == "/" and word[i + 1 :])
    return list(out)[:MAX_SEEN_TOKENS]


def _digest(session_id: str, word: str) -> str:
    """A word as kept for a session: a short keyed digest (the session id as the key), never the word."""
    return hashlib.blake2b(word.lower().encode(), digest_size=6, key=session_id.encode()[:64]).hexdigest()
