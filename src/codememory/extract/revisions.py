"""What a session settles, not what it passed through (issue 25): a value the user corrects is stored as the
corrected value only, and a choice changed later in the span is stored as its final form.

Two readings, both structural (who said it, in which order, what the later words say about an earlier value):
- **a correction inside one message**: the user types a value and takes it back in the same breath ("Sender should
  be probe@… — hmm, no, actually make it the board address vorstand@…", "≥ 24 for Riesling — no wait, Riesling 23",
  "deploy: kamal, docker hub org … actually no, not docker hub — ghcr"). The message is read as the user meant it:
  the abandoned clause is gone (a correction that names the old and the new value replaces the old one where the
  message said it, "ghcr org …"; one that reuses the old clause's subject keeps it, "Sender should be the board
  address …"), so no rule ever sees the abandoned value as said.
- **a value changed in a later turn**: a user's message that revises a value (a correction cue, or a change verb with
  a new amount: "35 days is too long …, make due 28 days", "make idle 10 minutes, … 5 cuts me off", "bye is half a
  point, not a full point", "federation on after all") makes every earlier memory of the span that still states the
  old value give way: an amount is replaced by the new one ("due after 28 days"), a toggle or a thing named as the
  old value is dropped. Only the user's later words revise; the assistant's later prose never undoes what the user
  said, and what a tool printed is never read.

What earlier spans and sessions stored gives way to the same changes, held to more (`revise_stored`): only memories
extracted here (their provenance), only the user's own statements (no question, no retold file or message, no line
copied from the span's tool output), "not X" only in a message that says something changes, and a new amount that
names no old one only when the user says it replaces something."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.provenance import TRUSTED_ORIGIN, said_by, source_said_by
from codememory.extract.candidate import USER, Candidate

if TYPE_CHECKING:
    from codememory.extract.speakers import ToolText
    from codememory.service.project_store import Store

# ------------------------------------------------------------------------------ inside one message
# the words that take back what was just typed; what follows them is the value meant. "actually no one …",
# "actually no need …" are not corrections.
_MARKER_RE = lazy_pattern(
    r"(?P<sep>\s*(?:\u2014|\u2013|--|\.\.\.|\u2026|[-,.;?!])\s*|\s+)"
    r"(?P<marker>(?:hm+|uh+|um+|er+)[,.!]?\s+no(?:[,.!]?\s+actually)?(?=\s*[,.;:!\u2014\u2013-]|\s+actually\b)"
    r"|(?:(?:hm+|uh+|um+|er+|oh|ah)[,.!]?\s+)?"
    r"(?:no+[,.!]?\s+wait|wait[,.!]?\s+no|no[,.!]?\s+actually|"
    r"actually[,.!]?\s+no(?=\s*(?:[,.;:!\u2014\u2013-]|$))|scratch\s+that|on\s+second\s+thought|"
    r"sorry[,.!]?\s+i\s+meant?)\b)"
    r"(?P<tail>(?:\s*(?:\u2014|\u2013|--|[-,.;:!])\s*|\s+))",
    re.IGNORECASE,
)
# "not docker hub — ghcr", "ghcr, not docker hub", "ghcr instead of docker hub": the correction names both values
_PAIR_RE = lazy_pattern(
    r"^(?:make\s+(?:it|that)\s+|use\s+)?not\s+(?:the\s+|a\s+)?(?P<old>[^,.;:!?\u2014\u2013]{1,40}?)\s*"
    r"(?:\u2014|\u2013|--|[-,;:]|\s+but)\s*(?:use\s+|rather\s+|just\s+)?(?:the\s+|a\s+)?(?P<new>[^,.;:!?\u2014\u2013]{1,40}?)"
    r"\s*(?:[.;:!?,\u2014\u2013]|$)"
    r"|^(?:make\s+(?:it|that)\s+|use\s+)?(?P<new2>[^,.;:!?\u2014\u2013]{1,40}?)(?:,\s*|\s+)(?:not|instead\s+of|rather\s+than)"
    r"\s+(?:the\s+|a\s+)?(?P<old2>[^,.;:!?\u2014\u2013]{1,40}?)\s*(?:[.;:!?,\u2014\u2013]|$)",
    re.IGNORECASE,
)
# where the abandoned clause starts: the last clause break before the marker
_CLAUSE_BREAK_RE = lazy_pattern(r"(?:[.!?;:,]|\u2014|\u2013|\s-\s)\s+(?=\S)")
# the old clause's subject and verb ("Sender should be", "the timeout is"), reused when the correction says only
# "make it …"
_FRAME_RE = lazy_pattern(
    r"^(?P<frame>.{2,80}\b(?:is|are|be|to|by|at|on|in|with|from|as|via|under|into)\b)\s+\S+(?:\s+\S+){0,3}$",
    re.IGNORECASE,
)
_REUSE_LEAD_RE = lazy_pattern(
    r"^(?:(?:just|then|please)\s+)?(?:make\s+(?:it|that)|set\s+it\s+to|change\s+it\s+to|let'?s\s+(?:say|make\s+it)|"
    r"use)\s+(?=\S)",
    re.IGNORECASE,
)
MAX_CORRECTIONS = 4  # a message is not a list of corrections; a runaway loop is a bug


def self_corrected(text: str) -> str:
    """A user's message as meant: each value taken back in the same message ("X — no wait, Y") is gone."""
    for _ in range(MAX_CORRECTIONS):
        m = next((m for m in _MARKER_RE.finditer(text) if _says_something(text[: m.start()])), None)
        if m is None:
            return text
        text = _corrected(text[: m.start()], m.group("sep"), text[m.end() :])
    return text


def _corrected(before: str, sep: str, after: str) -> str:
    pair = _PAIR_RE.match(after)
    if pair:
        old = (pair.group("old") or pair.group("old2") or "").strip()
        new = (pair.group("new") or pair.group("new2") or "").strip()
        hits = (
            [h for h in re.finditer(rf"(?<![\w@.-]){re.escape(old)}(?![\w@-])", before, re.IGNORECASE)] if old else []
        )
        if hits and new and new.lower() != old.lower():
            last = hits[-1]
            before = before[: last.start()] + new + before[last.end() :]
            return f"{before.rstrip()}{_kept(sep)}{after}"
    # no pair named in the message: the clause before the marker is the one taken back
    breaks = list(_CLAUSE_BREAK_RE.finditer(before.rstrip()))
    cut = breaks[-1].end() if breaks else 0
    abandoned = before[cut:].strip()
    kept = before[:cut]
    frame = _FRAME_RE.match(abandoned)
    lead = _REUSE_LEAD_RE.match(after)
    if frame and lead:
        after = f"{frame.group('frame')} {after[lead.end() :]}"
    return f"{kept}{after}" if kept.strip() else after


_FILLER = frozenset("hm hmm hmmm uh um er oh ah ok okay so well yes yeah no".split())


def _says_something(before: str) -> bool:
    """Text before a marker that could hold a value to take back: more than a filler or two ("hmm, no, …")."""
    return len([w for w in re.findall(r"\w+", before.lower()) if w not in _FILLER]) >= 2


def _kept(sep: str) -> str:
    """The break between what the message said and its correction, kept as a sentence break."""
    return ". " if any(ch in sep for ch in ".!?") else " "


def revised_turns(turns: Sequence[Turn]) -> list[Turn]:
    """The turns with each user message read as meant (`self_corrected`)."""
    out = []
    for t in turns:
        meant = self_corrected(t.user_text) if t.user_text else t.user_text
        out.append(t if meant == t.user_text else replace(t, user_text=meant))
    return out


@dataclass(frozen=True)
class Revision:
    """A value the user's message at `seq` changes: `old` (as an earlier memory would say it) to `new`."""

    seq: int
    old: str
    new: str


# ------------------------------------------------------------------------------------- later turns
# a sentence that changes something: a correction cue or a change verb
_CHANGE_RE = lazy_pattern(
    r"\b(?:make|set|change[ds]?|raise|lower|bump|increase|decrease|reduce|extend|shorten|instead|actually|after\s+all|"
    r"rather|switch|too\s+(?:long|short|much|many|few|low|high|slow|fast|big|small|often|rarely|early|late))\b",
    re.IGNORECASE,
)
# an amount: a number and the unit right after it ("28 days", "10 minutes", "5-minute", "16:45" is no amount)
_AMOUNT_RE = lazy_pattern(
    r"(?<![\w.:,/-])(?P<n>\d+(?:[.,]\d+)?)(?:\s*-\s*|\s*)(?P<u>[a-z%\u00b0\u20ac$]+)\b", re.IGNORECASE
)
# a time of day is an amount too ("at 03:00" → "at 16:45")
_CLOCK_RE = lazy_pattern(r"(?<![\w.:])(?P<n>\d{1,2}:\d{2})(?![\w:])")
# an amount said as the one given up: "instead of 30 seconds", "from 5 minutes", "35 days is too long"
_OLD_BEFORE_RE = lazy_pattern(r"\b(?:instead\s+of|rather\s+than|from|not|no(?:\s+more)?)\s+(?:the\s+|a\s+)?$", re.I)
_OLD_AFTER_RE = lazy_pattern(r"^\s*(?:is|was|are|were)\s+(?:too|a\s+bad|wrong|way\s+too)\b", re.IGNORECASE)
# the message says something changes: every sentence of it may name the old value ("Change of plan, point 5: no
# more auto-upgrade.")
_MESSAGE_CHANGE_RE = lazy_pattern(
    r"\bchange\s+of\s+plan\b|\bchanged\s+my\s+mind\b|\bafter\s+all\b|\bon\s+second\s+thought\b|\bno\s+longer\b|"
    r"\banymore\b|\bno\s+more\b",
    re.IGNORECASE,
)
# a sentence that says its value replaces another ("… at 16:45 instead", "rather", "federation on after all")
_REPLACES_RE = lazy_pattern(
    r"\b(?:instead|rather|after\s+all|replac(?:e[ds]?|ing)|switch(?:ed|ing)?\s+to|no\s+longer|anymore)\b",
    re.IGNORECASE,
)
# "no more auto-upgrade", "no reboot at 3": what a changing message drops
_NO_MORE_RE = lazy_pattern(
    r"(?:^|[:,;]\s*)(?:no\s+more|no\s+longer|no)\s+(?:the\s+|a\s+)?(?P<old>[\w-]+(?:\s+(?!(?:at|on|in|for|from|to|"
    r"with|because|since|anymore)\b)[\w-]+){0,2})",
    re.IGNORECASE,
)
# a switch flipped: "federation on after all" gives up "federation off"
_TOGGLE_RE = lazy_pattern(r"\b(?P<slot>[a-z][\w-]{2,})\s+(?P<state>on|off|enabled|disabled)\b", re.IGNORECASE)
_OPPOSITE = {"on": "off", "off": "on", "enabled": "disabled", "disabled": "enabled"}
_BARE_NUMBER_RE = lazy_pattern(r"(?<![\w.:,/-])(?P<n>\d+(?:[.,]\d+)?)(?![\w:/]|[.,]\d)")
_UNITS = {
    "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute", "m": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
    "s": "second", "sec": "second", "secs": "second", "second": "second", "seconds": "second",
    "ms": "millisecond", "d": "day", "day": "day", "days": "day", "week": "week", "weeks": "week",
    "month": "month", "months": "month", "year": "year", "years": "year",
}  # fmt: skip
# what else an amount is counted in; a number before any other word ("point 5 of", "5 cuts me off") is no setting
_MEASURES = frozenset(
    "% \u00b0 \u20ac $ px pt em rem kb mb gb tb k x time try retry attempt request item row line char character "
    "point replica worker thread cent euro dollar percent degree page user member player seat digit".split()
)
# a value named as the one given up: ", not a full point", "instead of plain Buchholz", "rather than weekly"
_NOT_OLD_RE = lazy_pattern(
    r"(?:,\s*|\s+|^)(?:not|instead\s+of|rather\s+than)\s+(?:the\s+|a\s+|an\s+)?(?P<old>[^,.;:!?\u2014\u2013]{2,40}?)"
    r"\s*(?:[.;:!?,\u2014\u2013]|$)",
    re.IGNORECASE,
)
# "no X", "not X" said of something as current in an earlier memory (then it is not the value stated)
_NEGATED_BEFORE_RE = lazy_pattern(
    r"\b(?:no|not|never|without|instead\s+of|rather\s+than|n't|nor|than|over|against|rejected|dropped)\s+"
    r"(?:\S+\s+){0,2}$",
    re.IGNORECASE,
)
_STOP = frozenset(
    "the and for with from that this then than they them their there into onto over also just only when what which "
    "have has had was were are is be been being its not but can could would should will make made set our your "
    "you yes yeah now all any one too very really please after before every each per about out off get got "
    "want like still instead actually make".split()
)
_REVISABLE = frozenset({"decision", "convention", "preference", "fact"})


def _unit(word: str) -> str:
    w = word.lower()
    return _UNITS.get(w, w[:-1] if w.endswith("s") and len(w) > 3 else w)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9_-]{2,}", text.lower()) if w not in _STOP}


@dataclass(frozen=True)
class _Change:
    seq: int
    sentence: str
    amounts: tuple[tuple[str, str], ...]  # (number, unit) the sentence sets
    named: frozenset[str]  # every number the sentence names (the old one is often among them: "5 cuts me off")
    old: tuple[str, ...]  # values named as given up (", not a full point")
    # the sentence says it changes something (a cue, or its message does): without one, ", not a full point" only
    # corrects what the turn it answers said, and never what earlier sessions stored
    cued: bool = True
    # a new amount may retire a memory of the same setting that states another one without the user naming it: in
    # the span always; in what earlier sessions stored only when the user says the new value replaces something
    # ("instead", "after all", a message that says it changes) — "set the session cache timeout to 5 minutes" is no
    # word about the product list cache's 60 minutes
    retires_unnamed: bool = True


def _changes(turns: Sequence[Turn], *, durable: bool = False) -> list[_Change]:
    """The user's sentences that change a value: with a change cue, an amount they set or a value they give up.
    `durable`: the changes that may retire what earlier sessions stored, which takes the user's own statement (see
    `_the_user_s_own`) and, for a value named after "not", a message that says something changes."""
    from codememory.extract.candidate import scrubbed
    from codememory.extract.speakers import ToolText, without_pasted
    from codememory.extract.statements import prose_units, user_sentences

    tool_text: ToolText | None = None  # the durable reading only, built once: a span's outputs may be long
    out = []
    for t in turns:
        message = without_pasted(scrubbed(t.user_text))
        said = [s for unit in prose_units(message) for s in user_sentences(unit)]
        if durable:
            # only the user's own statements, and only they may say the message changes something ("do we need X
            # anymore?" asks)
            tool_text = tool_text or ToolText.of(turns)
            said = [s for s in said if _the_user_s_own(s, tool_text)]
            changing = any(_MESSAGE_CHANGE_RE.search(s) for s in said)
        else:
            changing = bool(_MESSAGE_CHANGE_RE.search(message))
        for s in said:
            cue = bool(_CHANGE_RE.search(s))  # a sentence that itself says what changes, with the new amount
            if not (cue or changing) and not _NOT_OLD_RE.search(s):
                continue
            new, old_numbers = [], set()
            for n, u, start, end in _values(s):
                if _OLD_BEFORE_RE.search(s[max(0, start - 20) : start]) or _OLD_AFTER_RE.match(s[end : end + 20]):
                    old_numbers.add(n)
                else:
                    new.append((n, u))
            named = frozenset(m.group("n") for m in _BARE_NUMBER_RE.finditer(s)) | old_numbers
            # "make the README shorter, not the deploy docs" scopes what to do now; only a message that says
            # something changes gives a value up for good
            old = [m.group("old").strip() for m in _NOT_OLD_RE.finditer(s)] if changing or not durable else []
            if changing:
                old += [m.group("old").strip() for m in _NO_MORE_RE.finditer(s)]
            if changing or cue:
                old += [f"{m.group('slot')} {_OPPOSITE[m.group('state').lower()]}" for m in _TOGGLE_RE.finditer(s)]
            if (new and cue) or old:
                replaces = not durable or changing or bool(_REPLACES_RE.search(s))
                out.append(_Change(t.seq, s, tuple(new) if cue else (), named, tuple(old), cue or changing, replaces))
    return out


def _the_user_s_own(sentence: str, tool_text: ToolText) -> bool:
    """A sentence that states the user's own change: not a question, not a retelling of what a file, a page or a
    message says or asks, not a line copied from the span's tool output. A planted "no more X" in a file or an output
    retires nothing, even when the user pastes or quotes it."""
    from codememory.extract.relayed import relays_an_instruction
    from codememory.extract.speakers import relays_a_source
    from codememory.text.mood import asks

    return not (
        asks(sentence) or relays_a_source(sentence) or relays_an_instruction(sentence) or tool_text.copies(sentence)
    )


def _values(sentence: str) -> list[tuple[str, str, int, int]]:
    """The amounts of a sentence: (number, unit, start, end of the whole amount)."""
    amounts = [(m.group("n"), _unit(m.group("u")), m.start(), m.end()) for m in _AMOUNT_RE.finditer(sentence)]
    out = [a for a in amounts if a[1] in _MEASURES or a[1] in _UNITS.values()]
    return out + [(m.group("n"), "o'clock", m.start(), m.end()) for m in _CLOCK_RE.finditer(sentence)]


# the latest changes of a span that are read against its memories or earlier ones (each against up to MAX_EARLIER):
# a pasted list whose every line sets something is no list of changes to the project, and read whole it took minutes
MAX_CHANGES = 32


def settled_values(candidates: Sequence[Candidate], turns: Sequence[Turn]) -> list[Candidate]:
    """The span's memories as the session left them: an earlier memory whose amount a later user message changes
    states the new amount; one that states as current a value a later user message gives up is dropped."""
    changes = _changes(turns)[-MAX_CHANGES:]
    if not changes:
        return list(candidates)
    out: list[Candidate] = []
    for c in candidates:
        text: str | None = c.text
        if c.category in _REVISABLE and c.rule != "remember":
            for change in changes:
                if text is not None and change.seq > c.seq and (change.cued or change.seq == c.seq + 1):
                    text = revised_text(text, change)
        if text is not None:
            out.append(c if text == c.text else replace(c, text=text))
    return out


@dataclass(frozen=True)
class Retired:
    """An earlier memory a span's user message changed: `text` restates it with the new value, None retires it;
    `change` is the user's sentence that changed it."""

    memory_id: str
    text: str | None
    change: _Change


def stored_revisions(memories: Sequence[tuple[str, str, str]], turns: Sequence[Turn]) -> list[Retired]:
    """Which earlier memories (id, text, category), from another session or an earlier span of this one, the span's
    user messages change, and how (see `settled_values`)."""
    return _revisions_of(memories, _durable_changes(turns))


def _durable_changes(turns: Sequence[Turn]) -> list[_Change]:
    return [c for c in _changes(turns, durable=True) if c.cued][-MAX_CHANGES:]


def _revisions_of(memories: Sequence[tuple[str, str, str]], changes: Sequence[_Change]) -> list[Retired]:
    out = []
    for memory_id, text, category in memories if changes else ():
        if category not in _REVISABLE:
            continue
        now: str | None = text
        last: _Change | None = None
        for change in changes:
            if now is None:
                break
            after = revised_text(now, change)
            if after != now:
                now, last = after, change
        if last is not None:
            out.append(Retired(memory_id, now, last))
    return out


def revised_text(text: str, change: _Change) -> str | None:
    """`text` after `change`: the changed amount in place of the old one when the user named the old one; the
    sentences that state as current what the change gives up left out (a memory that joined two of the user's
    rules keeps the other one); None when nothing of it is left."""
    parts = _parts(text)
    kept = [p for p in (_revised_part(p, change) for p in parts) if p is not None]
    if len(kept) == len(parts):
        return " ".join(kept) if kept != parts else text
    left = " ".join(kept)
    return left if len(left.split()) >= MIN_LEFT_WORDS else None


# a memory's sentences: after end punctuation, or where one joined line ends and the next starts ("… get applied
# Only ssh, …"), each side at least four words
_SENTENCE_END_RE = lazy_pattern(r"(?<=[.!?;])\s+(?=\S)")
_JOINED_LINE_RE = lazy_pattern(r"(?<=[a-z0-9])\s+(?=[A-Z][a-z]+\b)")
MIN_SIDE_WORDS = 4


def _parts(text: str) -> list[str]:
    out = []
    for sentence in _SENTENCE_END_RE.split(text):
        start = 0
        for m in _JOINED_LINE_RE.finditer(sentence):
            before, after = sentence[start : m.start()], sentence[m.end() :]
            if len(before.split()) >= MIN_SIDE_WORDS and len(after.split()) >= MIN_SIDE_WORDS:
                out.append(before)
                start = m.end()
        out.append(sentence[start:])
    return out


MIN_LEFT_WORDS = 4


def _revised_part(text: str, change: _Change) -> str | None:
    slot = _words(change.sentence)
    out = text
    for n1, u1 in change.amounts:
        for n0, u0, start, _ in reversed(_values(out)):
            if u0 != u1 or n0 == n1 or any(n == n1 and u == u1 for n, u, _, _ in _values(out)):
                continue
            if n0 in change.named:
                out = out[:start] + n1 + out[start + len(n0) :]
            elif change.retires_unnamed and (_words(out) & slot) - {u1, f"{u1}s"}:
                return None  # the same setting, changed, without saying which value it replaces: not restated
    if out != text:
        return out
    for old in change.old:
        hit = re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", text, re.IGNORECASE)
        if hit is None or _NEGATED_BEFORE_RE.search(text[: hit.start()]):
            continue
        if (_words(text) & slot) - _words(old) or len(old.split()) >= 2 or not old.isalpha():
            return None
    return text


MAX_EARLIER = 500  # the project's newest extracted memories a span's changes are checked against
_SOURCE_TURN_RE = lazy_pattern(r"\bsession:(?P<s>\S+)\s+turn:(?P<t>\d+)")


def revise_stored(store: Store, turns: Sequence[Turn], made: Sequence[str]) -> int:
    """Apply the span's changes to what earlier spans and sessions stored: a memory whose amount the user changed
    is superseded by its restatement with the new amount; one whose value the user gave up is superseded by the
    span's memory of the change (the one sharing most words with the user's sentence), else archived. Only
    memories extracted here are touched, never what someone added by hand or what git, an import or a
    committed database brought. Returns how many were retired."""
    changes = _durable_changes(turns) if turns else []
    if not changes:
        return 0
    # extracted here, as its provenance (set by the path that stored it) says: entered_by and source are claims a
    # pulled, imported or committed row makes at will, and a teammate's memory is not the user's to retire
    recent = store.list(limit=MAX_EARLIER, sort="created", order="desc", origin=TRUSTED_ORIGIN)
    mine = {t.session_id for t in turns}
    earlier = [
        m
        for m in recent
        if m.id not in made
        and m.provenance.trusted
        and (m.provenance.by or "").startswith("session")
        and (m.entered_by or "").startswith("codememory-extract")
        and _before(m.source, mine, turns)
    ]
    made_texts = [(m.id, m.text) for m in recent if m.id in made]
    by_id = {m.id: m for m in earlier}
    retired = 0
    for r in _revisions_of([(m.id, m.text, m.category) for m in earlier], changes):
        old = by_id[r.memory_id]
        turn = next((t for t in turns if t.seq == r.change.seq), turns[-1])
        if r.text is not None:
            store.add(
                r.text,
                supersedes=[old.id],
                category=old.category,
                importance=old.importance,
                entered_by=old.entered_by,
                # the user changed one value; the rest is still what its first speaker said, whose label it keeps
                source=source_said_by(turn.memory_source, said_by(old.source) or USER),
                check_duplicates=False,
            )
        else:
            words = _words(r.change.sentence)
            anchor = max(made_texts, key=lambda m: len(_words(m[1]) & words), default=None)
            if anchor is not None and len(_words(anchor[1]) & words) >= 2:
                store.link(anchor[0], old.id, "supersedes")
            else:
                store.archive([old.id])
        retired += 1
    return retired


def _before(source: str | None, sessions: set[str], turns: Sequence[Turn]) -> bool:
    """A memory's source is a turn before this span's (another session, or an earlier turn of this one)."""
    m = _SOURCE_TURN_RE.search(source or "")
    if m is None:
        return False
    return m.group("s") not in sessions or int(m.group("t")) < turns[0].seq
