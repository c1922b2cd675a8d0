"""Choices settled across turns: a ledger of what is on the table in a session, and the user's message that takes
one of them back.

A decision is rarely said in one sentence of one turn. The user writes a numbered plan in the first message and,
three turns later, "change of plan for 5: no Netlify. my brother-in-law hosts it on his Hetzner box, so just rsync
public/ over ssh"; the assistant adds a retry and, after a double print, hears "take the retry out. failed jobs go
to the failed list"; the assistant offers Puppeteer mid-answer and the user says "that laptop has 4 GB of disk
left, so no thanks. I'll just print to PDF from Firefox". The ledger keeps, for the span, every item that was put
on the table before a message (the user's own numbered plan items, the assistant's suggestions and offers in any
of its texts, and whatever either of them named), and reads each user message for a **drop**: a sentence that
takes back something already on the table, named by its plan number or by a word it was offered or chosen with.

A drop settles into one memory, the user's: what replaces it (the user's next instruction), what it replaced, and
why (the user's own sentences around it): "Just rsync public/ over ssh, instead of deploy to Netlify: my
brother-in-law hosts it on his Hetzner box." With no replacement it is the rejected alternative with its reason.
A drop that names nothing already on the table, gives no reason, or whose only replacement is about "it" makes no
memory. Only the user's own words and the assistant's earlier prose are read, never a tool's output or a file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import USER, Candidate, entity_names
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.clean import clip, tidy
from codememory.extract.offers import content_words
from codememory.extract.speakers import without_pasted
from codememory.extract.statements import _FENCE_RE as FENCE_RE
from codememory.extract.statements import SENTENCE_SPLIT_RE, prose_units

MAX_REASON_SENTENCES = 2  # after the drop
MAX_REASONS_BEFORE = 2  # "ugh. Ole says pack-2 printed the same label three times. … take the retry out."
MAX_REPLACEMENT_SENTENCES = 2
MAX_DROP_WORDS = 5  # "no mtime fallback": a drop names a thing, it does not explain it
MIN_REASON_WORDS = 4
SHORT_REPLACEMENT_WORDS = 3  # "csv." right after "no xlsx.": what it is replaced with

# a user's numbered plan item: "5. deploy to Netlify"
_PLAN_ITEM_RE = lazy_pattern(r"^\s*(?P<n>\d{1,2})[.)]\s+(?P<x>\S.*)$")
# "change of plan for 2:", "change to item 2 of the plan.", "item 6." (a plan item of this span, by its number)
_PLAN_REF_RE = lazy_pattern(
    r"\b(?:change\s+(?:of|to|in|on)\s+(?:the\s+)?(?:plan|item)s?\s*(?:for|on|to|of|in|at)?\s*(?:item\s+|point\s+|step\s+|#)?"
    r"|(?:item|point|step)\s+#?)(?P<n>\d{1,2})\b(?:\s+of\s+the\s+plan)?[\s:,.\u2014\u2013-]*",
    re.IGNORECASE,
)
# the message says the plan changes: what it drops was on the table even when an earlier session laid it out
_PLAN_CHANGE_RE = lazy_pattern(
    r"\bchange\s+(?:of|to|in|on)\s+(?:the\s+)?(?:plan|item|step|point)s?\b|^\W*(?:item|point|step)\s+#?\d{1,2}\W*$",
    re.IGNORECASE,
)
# "no emojis in commit messages", "no prints anywhere": a standing rule, not a thing taken back
_RULE_SCOPE_RE = lazy_pattern(r"\b(?:in|on|for|anywhere|ever|everywhere|at\s+all)\b", re.IGNORECASE)
_LEAD_RE = lazy_pattern(
    r"^\W*(?:(?:hm+|ok(?:ay)?|k|ugh|and|but|so|actually|wait|oh|well|also|then|sorry|yes|yeah|ya)\b[\s,.!:;\u2014-]*)+",
    re.IGNORECASE,
)
# the thing taken back, named after the word that takes it back
_DROP_RE = lazy_pattern(
    r"^(?:no(?:\s+more)?|not|scratch|drop|forget|remove|without|(?:please\s+)?(?:don'?t|do\s+not)\s+"
    r"(?:turn\s+on|use|add|do|enable|switch\s+to|go\s+with|put\s+in))\s+(?:the\s+|a\s+|an\s+|any\s+)?"
    r"(?P<x>[\w`./+#-]+(?:\s+[\w`./+#-]+){0,4}?)\s*(?:[.,;:!\u2014\u2013]|\s-\s|$)"
    r"|^take\s+(?:the\s+|that\s+)?(?P<x2>[\w`./+#-]+(?:\s+[\w`./+#-]+){0,2}?)\s+out\b",
    re.IGNORECASE,
)
# a refusal that names nothing: it takes back the offer just made
_BARE_NO_RE = lazy_pattern(
    r"^(?:no|nope|nah|no\s+thanks?|no,?\s+thank\s+you|not\s+(?:now|needed|for\s+now)|let'?s\s+not|rather\s+not)\W*$",
    re.IGNORECASE,
)
_TRAILING_NO_RE = lazy_pattern(
    r"[,;\u2014\u2013-]\s*(?:so\s+)?(?:no\s+thanks?|no,?\s+thank\s+you|thanks,?\s+but\s+no)\W*$", re.IGNORECASE
)
# a verb in what follows the drop word makes it a clause, a report or a condition, not a thing: "no tests fail
# now", "without a cache the page is slow"
_CLAUSE_RE = lazy_pattern(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|will|would|can|could|should|fails?|failed|breaks?|"
    r"broke|happens?|happened|goes|went|gets?|got)\b",
    re.IGNORECASE,
)
_NOT_A_THING = frozenset(
    "it that this them those these thanks thank problem problems worries worry need idea rush way wait clue doubt "
    "more change changes sorry said say asked ask want wanted need sure really yet quite bad too you we i he she they "
    "one today now tonight yet here there either".split()
)
# what the assistant puts on the table in passing: "would you like me to move the data to Postgres …?", "I could
# move storage to InfluxDB …", "We could add Puppeteer …", "The easiest route would be to call exiftool …"
_OFFER_RE = lazy_pattern(
    r"\b(?:would\s+you\s+like\s+me\s+to|(?:do\s+you\s+)?want\s+me\s+to|shall\s+i|should\s+i|i\s+could|we\s+could|"
    r"you\s+could|i\s+can\s+(?=(?:switch|move|add|set\s+up|use)\b)|"
    r"(?:easiest|simplest|quickest|usual|obvious|quick)\s+(?:route|way|option|fix|choice|answer)\s+(?:would\s+be|is)"
    r"(?:\s+to)?)\s+(?P<x>[^?]{3,200})",
    re.IGNORECASE,
)
# what the user's other sentences do: say why (a statement), or say what to do instead (an instruction)
_INSTRUCTION_RE = lazy_pattern(
    r"^(?:just\s+|please\s+|then\s+|only\s+)?(?:use|make|keep|go|write|put|send|do|switch|move|fix|store|save|add|"
    r"rsync|let'?s|stay|stick|read|print|show|set|mark|leave|hide|copy|run|open|build|compute|calculate|round|"
    r"i'?ll\s+(?:just\s+)?\w+)\b"
    r"|\binstead\b|->|\u2192",
    re.IGNORECASE,
)
_ERRAND_RE = lazy_pattern(
    r"^\W*(?:commit|push|ship|deploy|merge|go|thanks?|thank\s+you|cheers|danke|good|great|perfect|ok(?:ay)?|k)\b"
    r"[\w\s]{0,20}[.!]?$"
    # a deferral opens or closes the sentence ("next week we need …, not now"); "years later" is a reason
    r"|^\W*(?:later|next\s+(?:time|week)|not\s+now|tomorrow)\b|\b(?:todo|note\s+it|write\s+it\s+down)\b"
    r"|\b(?:later|next\s+time|not\s+now|next\s+week|tomorrow)\W*$",
    re.IGNORECASE,
)
_NEW_TOPIC_RE = lazy_pattern(
    r"^\W*(?:other\s+thing|also|next|btw|by\s+the\s+way|another|one\s+more|and\s+(?:also|another)|oh,?\s+and|"
    r"quick\s+question|while\s+you'?re)\b",
    re.IGNORECASE,
)
_INSTEAD_RE = lazy_pattern(r"\s+instead\b(?=\s*[,.;:]|\s*$)", re.IGNORECASE)
_DEFERRAL_RE = lazy_pattern(r"\b(?:later|next\s+time|not\s+now|next\s+week|tomorrow|some\s*day)\b", re.I)
SHORT_DEFERRAL_WORDS = 8
# a question after an offer that asks about the offer: "… Sound good?", "Thoughts?", "What do you think?"
_POINTS_BACK_RE = lazy_pattern(
    r"^\W*(?:sounds?\s+(?:good|ok(?:ay)?|fine|right)|ok(?:ay)?|thoughts|what\s+do\s+you\s+(?:think|say)|"
    r"does\s+(?:that|this)\s+(?:work|sound)|makes?\s+sense|is\s+(?:that|this)\s+(?:ok(?:ay)?|fine|alright)|"
    r"want\s+(?:that|this|it|me\s+to)|interested|should\s+i|shall\s+i|yes|right|agreed|any\s+objections?)\b",
    re.IGNORECASE,
)
_OFFERED_ERRAND_RE = lazy_pattern(
    r"^(?:commit|push|merge|ship|tag|release)(?:\s+(?:and|it|this|that|them|now|everything|the\s+changes?|"
    r"commit|push|merge|ship|tag|release))*$",
    re.IGNORECASE,
)
# "Amazing, it builds!": how the user feels about what was done, no reason for anything
_PRAISE_RE = lazy_pattern(
    r"^\W*(?:amazing|awesome|wow|nice|cool|great|perfect|brilliant|lovely|love\s+it|excellent|yay)\b[^.!?]{0,30}[.!]*$",
    re.IGNORECASE,
)
_SPLIT_RE = lazy_pattern(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True)
class Ledger:
    candidates: list[Candidate]
    used: frozenset[tuple[int, str]]  # (seq, sentence) of the user's messages now inside a ledger memory


def settled_drops(turns: Sequence[Turn]) -> Ledger:
    """One memory for each user message that takes back something already on the table."""
    turns = sorted(turns, key=lambda t: t.seq)
    plan: dict[int, str] = {}
    on_table: set[str] = set()  # content words of everything said before the message
    out: list[Candidate] = []
    used: set[tuple[int, str]] = set()
    for n, turn in enumerate(turns):
        # a page, a file or an output the user pastes (after "the FAQ says:", in a fence) is not the user's words
        user = FENCE_RE.sub("\n", without_pasted(scrub(turn.user_text)))
        said = _sentences(user)
        offers = _offers(turns[n - 1]) if n else []
        # the first message of a span has nothing on the table yet (a plan of an earlier session is not in it)
        if n and said:
            made = _settle(said, plan, on_table, offers, turn.seq)
            if made is not None:
                candidate, consumed = made
                out.append(candidate)
                used.update((turn.seq, s) for s in consumed)
        # what this turn puts on the table for the next messages
        for line in user.splitlines():
            m = _PLAN_ITEM_RE.match(line)
            if m and int(m.group("n")) not in plan:
                plan[int(m.group("n"))] = tidy(m.group("x"))
        on_table |= content_words(user)
        for text in turn.assistant_texts:
            on_table |= content_words(" ".join(prose_units(scrub(text))))
    return Ledger(out, frozenset(used))


def _sentences(user_text: str) -> list[str]:
    """The user's message as typed, sentence by sentence, lines kept apart; quoted and pasted lines left out."""
    out: list[str] = []
    for raw in user_text.strip().strip("\"'").splitlines():
        line = raw.strip()
        # an indented line is code, whatever it says; "\w\[" not "\w+\[": one letter decides, and "\w+" tried
        # from every letter of a long word is quadratic
        indented = raw.startswith(("\t", "    "))
        if not line or indented or re.match(r"^(?:>|```|\$ |\d{1,2}[.)]\s)", line) or re.search(r"\w\[\d+\]:", line):
            continue
        out += [" ".join(p.split()) for p in _SPLIT_RE.split(line) if p.strip()]
    return out


def _offers(before: Turn) -> list[str]:
    """What the assistant's answer offered in any of its texts, each as the words of the offer; "" for a question
    asked after the last offer (a bare "no" answers that question, not the offer)."""
    out: list[str] = []
    for text in before.assistant_texts:
        for unit in prose_units(scrub(text)):
            sentences = [s for s in SENTENCE_SPLIT_RE.split(unit) if s.strip()]
            for i, s in enumerate(sentences):
                m = _OFFER_RE.search(s)
                if m:
                    out.append(m.group("x").strip().rstrip(".?!"))
                elif re.match(r"^\W*(?:want\s+(?:that|this|it)|interested|should\s+i|shall\s+i)\W*\?", s, re.I) and i:
                    # "… graphs of each firing for free. Want that?": the offer is the sentence before
                    out.append(sentences[i - 1].strip().rstrip(".?!"))
                elif s.rstrip().endswith("?") and out and not _POINTS_BACK_RE.match(s):
                    out.append("")
    return out


def _settle(
    said: list[str], plan: dict[int, str], on_table: set[str], offers: list[str], seq: int
) -> tuple[Candidate, list[str]] | None:
    # once the message says the plan changes, what it drops was on the table, whether or not this span shows it
    changed = any(_PLAN_CHANGE_RE.search(_plain(x)) for x in said)
    for i, sentence in enumerate(said):
        if i and _NEW_TOPIC_RE.match(sentence):
            return None
        dropped = _dropped(sentence, plan, on_table, offers, changed)
        if dropped is None:
            continue
        old, drop_sentence, own_reason = dropped
        before = [s for s in said[:i] if _says_something(s) and not _PLAN_REF_RE.match(_plain(s))]
        # the message after the drop, up to its next topic: what replaces the thing (the instructions that follow
        # it, before the reasons run out) and why (the user's statements around it)
        replacement: list[str] = []
        before = before[-MAX_REASONS_BEFORE:]  # the ones nearest the drop
        reasons = list(before)
        for s in said[i + 1 :]:
            if _NEW_TOPIC_RE.match(s):
                break
            if not _says_something(s) or _PLAN_REF_RE.match(_plain(s)):
                continue
            instruction = bool(_INSTRUCTION_RE.search(_plain(s))) or (
                len(s.split()) <= SHORT_REPLACEMENT_WORDS and not replacement and not reasons
            )
            # "… go into an unsorted/ folder instead" replaces it wherever it stands; another instruction only
            # before the reasons start
            first = len(reasons) == len(before) or _INSTEAD_RE.search(s)
            if instruction and first and len(replacement) < MAX_REPLACEMENT_SENTENCES:
                replacement.append(s)
            elif instruction:
                break  # another errand after the reasons: not part of this choice
            else:
                reasons.append(s)
        reasons = reasons[: len(before) + MAX_REASON_SENTENCES]
        reason = " ".join(_full_stop(tidy(x)) for x in ([own_reason] if own_reason else []) + reasons)
        replacement = [s for s in replacement if not _about_it(s)]
        if len(reason.split()) < MIN_REASON_WORDS and not replacement:
            return None
        if replacement:
            head = " ".join(_full_stop(tidy(_INSTEAD_RE.sub("", s))) for s in replacement).rstrip(".!")
            text = f"{head}, instead of {_gerund(old)}" + (f": {_lower_first(reason)}" if reason else ".")
            category, rule = "decision", "decision"
        else:
            text = f"Turned down: {_lower_first(old)}. {reason}"
            category, rule = "rejected_alternative", "rejected"
        text = clip(" ".join(text.split()))
        consumed = [drop_sentence, *replacement, *reasons]
        return Candidate(text, category, 0.8, seq, entity_names(text), rule=rule, said_by=USER), consumed
    return None


def _dropped(
    sentence: str, plan: dict[int, str], on_table: set[str], offers: list[str], changed: bool = False
) -> tuple[str, str, str] | None:
    """(what is taken back, the sentence, a reason said in that sentence) when the sentence takes back something on
    the table."""
    plain = _plain(sentence)
    ref = _PLAN_REF_RE.search(plain)
    item = plan.get(int(ref.group("n"))) if ref else None
    if ref and item:
        after = _plain(plain[ref.end() :])
        m = _DROP_RE.match(after)
        # "step 2 works", "now do step 3": naming an item is not taking it back; "change of plan for 3", "item 6."
        # on its own, or "item 6: no PDF export" is
        alone = ref.start() == 0 and not re.search(r"\w", after)
        if not (changed or alone or (m and _names_a_thing(m))):
            return None
        reason = _clause_after(after, m) if m else after
        return _lower_first(item.rstrip(".")), sentence, reason
    if (m := _DROP_RE.match(plain)) is not None:
        thing = _thing(m)
        words = content_words(thing)
        if not _names_a_thing(m) or not (changed or words & on_table):
            return None
        # the way it was put on the table, when an offer of the answer before names it: the one that names most of it
        named = [(len(words & content_words(o)), -i, o) for i, o in enumerate(offers)]
        offered = max((x for x in named if x[0]), default=(0, 0, None))[2]
        old = _offer_subject(offered) if offered else thing
        return old, sentence, _clause_after(plain, m)
    if offers and offers[-1] and (_BARE_NO_RE.match(plain) or _TRAILING_NO_RE.search(plain)):
        reason = _TRAILING_NO_RE.sub("", plain) if _TRAILING_NO_RE.search(plain) else ""
        subject = _offer_subject(offers[-1])
        # "Should I commit and push?" "no, I want to read the diff first": not yet, not a choice turned down
        return None if _OFFERED_ERRAND_RE.match(subject) else (subject, sentence, reason)
    return None


def _thing(m: re.Match[str]) -> str:
    thing = (m.group("x") or m.group("x2") or "").strip("` ")
    return re.sub(r"(?:\s+(?:please|either|too|anymore|any\s+more))*[.!]*$", "", thing, flags=re.I)


def _names_a_thing(m: re.Match[str]) -> bool:
    """A drop's object is a thing: not "no problem", not a standing rule ("no prints anywhere"), not a story."""
    thing = _thing(m)
    return bool(
        thing
        and thing.lower().split()[0] not in _NOT_A_THING
        and len(thing.split()) <= MAX_DROP_WORDS
        and not _RULE_SCOPE_RE.search(thing)
        and not _CLAUSE_RE.search(thing)
        and content_words(thing)
    )


def _clause_after(text: str, m: re.Match[str]) -> str:
    """What a drop sentence says after the thing it drops: its reason ("no Netlify — he hosts it himself")."""
    rest = text[m.end() :].strip(" ,;:\u2014\u2013-")
    return rest if len(rest.split()) >= MIN_REASON_WORDS else ""


def _offer_subject(offer: str) -> str:
    """An offer as a thing turned down: "move the data to Postgres with SQLAlchemy so the coach …" → up to its
    purpose clause."""
    lead = _OFFER_RE.search(offer)
    offer = lead.group("x") if lead else offer
    subject = _PURPOSE_RE.split(offer, maxsplit=1)[0]
    subject = re.sub(r"^(?:just\s+|to\s+|also\s+)", "", subject.strip(" ,:"), flags=re.I)
    return subject.rstrip(" ,.:;")


def _full_stop(sentence: str) -> str:
    return sentence if sentence.endswith((".", "!", "?")) else f"{sentence}."


def _says_something(sentence: str) -> bool:
    """A sentence worth keeping beside a drop: not a question, an errand, a deferral ("heic later, pure go or not
    at all"), a bare "no" or "ok, you're right"."""
    plain = _plain(sentence)
    return not (
        sentence.endswith("?")
        or _ERRAND_RE.search(sentence)
        or _PRAISE_RE.match(sentence)
        or (len(sentence.split()) <= SHORT_DEFERRAL_WORDS and _DEFERRAL_RE.search(sentence))
        or _BARE_NO_RE.match(plain)
        or not content_words(re.sub(r"^\W*(?:no|yes|ok(?:ay)?|ugh|hm+|oh)\b\W*", "", plain, flags=re.I)) - _ACKS
        or _PICK_RE.match(plain)
    )


# a pick of something else offered, not a reason: "The second one.", "option b"
_PICK_RE = lazy_pattern(
    r"^\W*(?:the\s+)?(?:first|second|third|last|other|latter|former)\s+(?:one|option)\b|^\W*option\s+\w\b", re.I
)
# where an offer stops naming the thing and starts selling it: "… to Postgres so the coach can reach it"
# (from the start of a run of spaces only: tried from each of them, a long run is quadratic)
_PURPOSE_RE = lazy_pattern(r"(?<!\s)\s+(?:so\s+(?:that\s+)?|because\s+|since\s+|and\s+you'?d\b|which\s+)|:\s")
_ACKS = frozenset(content_words("you right you're right true fair point agreed makes sense"))
_GERUNDS = {"set": "setting", "put": "putting", "run": "running", "get": "getting", "stop": "stopping"}


def _gerund(old: str) -> str:
    """ "add Puppeteer …" → "adding Puppeteer …": what was turned down, read after "instead of"."""
    first, _, rest = old.partition(" ")
    verbs = "add move use call switch render deploy make write keep store send install build read parse put set run"
    if first.lower() not in verbs.split() or not rest:
        return old
    word = first.lower()
    ing = _GERUNDS.get(word) or (word[:-1] + "ing" if word.endswith("e") else word + "ing")
    return f"{ing} {rest}"


def _plain(sentence: str) -> str:
    return _LEAD_RE.sub("", sentence).strip() or sentence


def _about_it(sentence: str) -> bool:
    """An instruction whose only object is a pronoun ("skip them."): it says nothing on its own."""
    return bool(re.match(r"^\W*\w+\s+(?:it|them|that|this|those)\W*$", _plain(sentence), re.I))


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first.isalpha() and first[1:].islower() else text
