"""What the assistant's answer puts on the table for the user to settle, read from its last text (the one the user
read before replying):

- options: alternatives listed as items ("Options: 1. pandas — … 2. csv — …", "Two ways out: …") or the parts of a
  question "A or B?" ("timestamp as unix seconds or ISO text?");
- a recommendation among them or on its own ("I'd go with 1", "I'd use Time::Piece: it's a core module");
- a plan: items the assistant means to carry out ("Proposal: - drafts get no number … - …") or findings it means
  to fix ("Three separate problems: 1. … Fix: …");
- a proposal put as a question ("Shall I build it like this?", "Want me to switch to riverpod?"), or a suggestion
  put as a statement ("a cloud OCR service would be much more accurate");
- a question asking the user for information ("Where does the app run?").

`answers` settles these against the user's reply."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from codememory.extract.clean import tidy
from codememory.extract.speakers import not_the_speakers
from codememory.extract.statements import SENTENCE_SPLIT_RE, prose_units

MAX_ITEM_WORDS = 90
_ITEM_RE = re.compile(
    r"^\s*(?:[-*+\u2022]|\d{1,2}[.)]|\(\d\)|\(?[a-d]\)|option\s+(?:[a-d1-4]|one|two|three)\s*[:.)\u2014-])\s+(?P<x>\S.*)$",
    re.IGNORECASE,
)
_HEAD_SPLIT_RE = re.compile(r"\s+[\u2014\u2013]\s+|\s+-\s+|:\s+|\.\s+|\s+\(|,\s+(?:which|since|because|but|so)\b")
_BOLD_HEAD_RE = re.compile(r"^\s*(?:\*\*|__)(?P<h>[^*_]{2,80})(?:\*\*|__)")
_OPTIONS_LEAD_RE = re.compile(
    r"\b(?:options?|ways?|approaches|alternatives|choices|possibilities|either|candidates|variants|realistic)\b"
    r"|\bwhich\s+(?:one|do\s+you)",
    re.IGNORECASE,
)
_RECOMMEND_RE = re.compile(
    r"\b(?:i'?d|i\s+would|we'?d|i)\s+(?:go\s+with|go\s+for|pick|choose|take|recommend|suggest|lean\s+(?:towards?|to)|"
    r"vote\s+for|do|use|start\s+with|stick\s+with|keep|prefer)\s+(?P<x>[^.;!?]+)"
    r"|\b(?:my\s+(?:pick|vote|recommendation|suggestion|preference)|the\s+(?:better|safer|simpler)\s+(?:option|choice|"
    r"bet))\s*(?:is|would\s+be|:)\s*(?P<x2>[^.;!?]+)",
    re.IGNORECASE,
)
_PICKED_ORDINAL_RE = re.compile(r"^(?:option\s+|number\s+|#)?(?P<n>[1-4]|one|two|three|four|[a-d])\b", re.IGNORECASE)
_WORD_ORDINALS = {"one": 0, "two": 1, "three": 2, "four": 3, "a": 0, "b": 1, "c": 2, "d": 3}
_PROPOSAL_RE = re.compile(
    r"^(?:so,?\s+)?(?:(?:do\s+you\s+)?want\s+me\s+to|shall\s+i|should\s+i|shall\s+we|should\s+we|(?:would|do)\s+you\s+"
    r"like\s+me\s+to|ok(?:ay)?\s+(?:if|to)\s+i|can\s+i|may\s+i)\s+(?P<x>[^?]{3,200}?)\s*\?"
    r"|^(?P<ok>(?:ok(?:ay)?|good|fine|alright)\s+(?:like\s+(?:that|this)|with\s+(?:that|this|you))|go\s+ahead|"
    r"sound\s+good|does\s+that\s+(?:work|sound\s+(?:ok|good|right))|shall\s+i\s+(?:go\s+ahead|do\s+(?:it|that|this|"
    r"both|all\s+\w+))|should\s+i\s+(?:go\s+ahead|proceed))\s*\?",
    re.IGNORECASE,
)
_SUGGESTION_RE = re.compile(
    r"\b(?:would|could|might)\s+(?:be\s+)?(?:much\s+|a\s+lot\s+|far\s+)?(?:make\s+(?:that|this|it)\s+)?(?:better|"
    r"cleaner|simpler|faster|more\s+\w+|nicer|safer|easier|squeeze|help|speed|save|fix)\b"
    r"|\b(?:we|you)\s+could\s+(?!not\b)\w+|\bworth\s+(?:considering|a\s+look|trying|switching)\b|\bone\s+more\s+idea\b",
    re.IGNORECASE,
)
_PRONOUN_RE = re.compile(r"\b(?:it|that|this|them|those|these|one)\b", re.IGNORECASE)
_QUESTION_LEAD_RE = re.compile(
    r"^(?:(?:do\s+you\s+)?(?:want|prefer)(?:\s+me\s+to)?|would\s+you\s+(?:rather|prefer|like)(?:\s+me\s+to)?|"
    r"should\s+(?:i|we|it|they|the\s+\w+|\w+)|shall\s+(?:i|we)|do\s+we\s+(?:want|need)|which\s+(?:do\s+you\s+"
    r"(?:want|prefer)|one)|is\s+it|are\s+they)\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Option:
    head: str  # what it is called: the item's bold name or first words, a part of the question
    text: str  # the whole item, with whatever reason it gives


@dataclass
class Offer:
    options: list[Option] = field(default_factory=list)
    recommended: Option | None = None
    recommendation: str = ""  # the sentence that recommends
    plan: list[str] = field(default_factory=list)  # items the assistant means to carry out
    proposal: str | None = None  # what a question offers to do ("" for "OK like that?": the plan, as a whole)
    context: str = ""  # the sentence before the proposal
    suggestion: str | None = None  # an idea put as a statement
    asks: str | None = None  # a question asking the user for information
    lead: str = ""  # the sentence that introduced the options or the plan
    said: list[str] = field(default_factory=list)  # every sentence of the answer, tidied

    def empty(self) -> bool:
        return not (self.options or self.recommended or self.plan or self.proposal is not None or self.suggestion)


def offer_of(text: str) -> Offer:
    """What an assistant's text offers (see the module docstring)."""
    offer = Offer(said=[tidy(s) for u in prose_units(text) for s in SENTENCE_SPLIT_RE.split(u) if s.strip()])
    items, lead = _listed(text)
    if items and (_OPTIONS_LEAD_RE.search(lead) or _ordinal_recommendation(offer.said, len(items)) is not None):
        offer.options = [Option(_head(x), x) for x in items]
    elif items:
        offer.plan = items
    offer.lead = lead
    previous = ""
    for sentence in offer.said:
        if not_the_speakers(sentence):
            previous = sentence
            continue
        if sentence.endswith("?"):
            _question(offer, sentence, previous)
        else:
            m = _RECOMMEND_RE.search(sentence)
            if m and not _PROPOSAL_RE.match(sentence):
                named = (m.group("x") or m.group("x2") or "").strip()
                picked = _ordinal_recommendation([sentence], len(offer.options))
                chosen = offer.options[picked] if picked is not None else matching(offer.options, named)
                if chosen is not None or not offer.options:
                    offer.recommended = chosen or Option(_head(named), sentence)
                    offer.recommendation = sentence
            elif _SUGGESTION_RE.search(sentence) and not offer.options:
                offer.suggestion = sentence
        previous = sentence
    return offer


def _question(offer: Offer, sentence: str, previous: str) -> None:
    m = _PROPOSAL_RE.match(sentence)
    if m and m.group("ok"):
        offer.proposal = ""  # "OK like that?": the plan or the recommendation, as a whole
        return
    if m and " or " not in m.group("x"):
        what = m.group("x").strip(" ,")
        if _PRONOUN_RE.search(what) and previous and not previous.endswith("?"):
            what = f"{previous.rstrip('.')} ({what})"
        offer.proposal = what
        offer.context = previous if previous and not previous.endswith("?") else ""
        return
    if not offer.options and " or " in sentence:
        alternatives = _alternatives(sentence)
        if alternatives:
            offer.options = alternatives
            offer.lead = offer.lead or sentence
            return
    if not m:
        offer.asks = sentence


def _listed(raw: str) -> tuple[list[str], str]:
    """The first run of two or more list items in a text (an item's wrapped lines joined), and the line before."""
    lines = raw.splitlines()
    runs: list[list[str]] = []
    run: list[str] = []
    lead = ""
    leads: list[str] = []
    for n, line in enumerate(lines):
        m = _ITEM_RE.match(line)
        if m:
            if not run:
                lead = next((tidy(x) for x in reversed(lines[:n]) if x.strip()), "")
            run.append(m.group("x"))
        elif run and line.strip() and line.startswith((" ", "\t")):
            run[-1] += " " + line.strip()  # an item going on over several lines
        elif run and line.strip():
            runs.append(run)
            leads.append(lead)
            run = []
    if run:
        runs.append(run)
        leads.append(lead)
    for items, lead in zip(runs, leads, strict=True):
        if len(items) >= 2 and not lead.lower().startswith(("done", "summary", "committed", "what's there")):
            cleaned = [tidy(x.replace("`", "")) for x in items]
            if all(len(x.split()) <= MAX_ITEM_WORDS for x in cleaned):
                return cleaned, lead
    return [], ""


def _head(text: str) -> str:
    bold = _BOLD_HEAD_RE.match(text)
    if bold:
        return bold.group("h").strip(" .:")
    head = _HEAD_SPLIT_RE.split(text.replace("**", ""), maxsplit=1)[0].strip(" .,:")
    return " ".join(head.split()[:6])


def _alternatives(question: str) -> list[Option]:
    """The parts of "Should tags be lower-case, or keep the case as typed?" (after a colon, when one leads in)."""
    body = question.rstrip("?").strip()
    if ":" in body:
        body = body.rsplit(":", 1)[1].strip()
    body = _QUESTION_LEAD_RE.sub("", body, count=1)
    parts = [p.strip(" ,") for p in re.split(r",?\s+or\s+", body) if p.strip(" ,")]
    if len(parts) < 2 or any(len(p.split()) > 12 for p in parts):
        return []
    parts = [re.sub(r"^(?:be|to|a|an|the|use|using|keep)\s+", "", p, flags=re.IGNORECASE) for p in parts]
    return [Option(p, p) for p in parts if p]


def _ordinal_recommendation(said: list[str], count: int) -> int | None:
    """The option a recommendation names by its number ("I'd go with 1", "I'd do 2")."""
    if count < 2:
        return None
    for sentence in said:
        m = _RECOMMEND_RE.search(sentence)
        if not m:
            continue
        named = _PICKED_ORDINAL_RE.match((m.group("x") or m.group("x2") or "").strip())
        if named:
            word = named.group("n").lower()
            index = int(word) - 1 if word.isdigit() else _WORD_ORDINALS.get(word)
            if index is not None and index < count:
                return index
    return None


_STOP = frozenset(
    "the a an and or of to for in on with it its is be we i you me my our your that this then than just one it's "
    "go let's lets use using keep do please ok okay yes yeah sure fine option way approach choice would should "
    "can will not no rather instead also too so as at by from into only more less there here now what which".split()
)


def content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9+.#:_-]*", text.lower().replace("**", ""))
    return {w.strip(".:") for w in words if len(w.strip(".:")) >= 3 and w.strip(".:") not in _STOP}


def matching(options: list[Option], reply: str) -> Option | None:
    """The one option whose name the reply uses (None when it names two or none)."""
    words = content_words(reply)
    hits = [o for o in options if content_words(o.head) & words]
    if not hits:
        hits = [o for o in options if content_words(o.text) & words]
        if len(hits) > 1:  # the one sharing the most words, when it shares clearly more
            ranked = sorted(hits, key=lambda o: -len(content_words(o.text) & words))
            best, second = (len(content_words(o.text) & words) for o in ranked[:2])
            hits = ranked[:1] if best >= 2 * second else hits
    return hits[0] if len(hits) == 1 else None
