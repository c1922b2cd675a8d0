"""What the assistant's answer puts on the table for the user to settle, read from its last text (the one the user
read before replying):

- options: alternatives listed as items under a lead that says so ("Options:", "Two ways out:", "Three realistic
  options") or named by a recommendation's number ("I'd go with 1"), or the parts of a question "A or B?"
  ("timestamp as unix seconds or ISO text?");
- a recommendation, among the options or on its own ("I'd take UTC unix seconds: …", "Suggestion: keep storing
  the raw value …"), with the sentences after it that say why;
- a plan: items the assistant means to carry out ("Proposal: - drafts get no number … - …"), or the problems it
  found and means to fix ("Three separate problems: 1. … Fix: …");
- a proposal put as a question ("Shall I build it like this?", "Want me to switch to riverpod?", "OK like
  that?"), or a suggestion put as a statement ("a cloud OCR service would be much more accurate");
- a question asking the user for information ("Where does the app run?").

`answers` settles these against the user's reply."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.choices import REASON_RE
from codememory.extract.clean import tidy
from codememory.extract.speakers import not_the_speakers
from codememory.extract.statements import SENTENCE_SPLIT_RE, prose_units
from codememory.extract.unresolved_pronouns import PRONOUN_SUBJECT_RE

MAX_ITEM_WORDS = 90
MAX_REASONS = 2
_ITEM_RE = lazy_pattern(
    r"^\s*(?:[-*+\u2022]|\d{1,2}[.)]|\(\d\)|\(?[a-d]\)|[a-dA-D]\.(?=\s)|option\s+(?:[a-d1-4]|one|two|three)\s*[:.)\u2014-])\s+(?P<x>\S.*)$",
    re.IGNORECASE,
)
_HEAD_SPLIT_RE = lazy_pattern(r"\s+[\u2014\u2013]\s+|\s+-\s+|:\s+|\.\s+|\s+\(|,\s+(?:which|since|because|but|so)\b")
_BOLD_HEAD_RE = lazy_pattern(r"^\s*(?:\*\*|__)(?P<h>[^*_]{2,80})(?:\*\*|__)")
_OPTIONS_LEAD_RE = lazy_pattern(
    r"\b(?:options?|ways?|approaches|alternatives|choices|possibilities|either|candidates|variants|realistic)\b"
    r"|\bwhich\s+(?:one|do\s+you)"
    # a question the list answers: "Where should the fix live?"
    r"|\?\s*$"
    # a count alone, answering "options?": "Three:"
    r"|^\W*(?:two|three|four|2|3|4)\W*$",
    re.IGNORECASE,
)
_PLAN_LEAD_RE = lazy_pattern(
    r"\b(?:proposal|plan|suggest(?:ion)?|here'?s\s+what|what\s+i'?d|i'?d\s+\w+|i\s+(?:will|would)|i'?ll|steps?|"
    r"changes?|set\s+(?:it|this)\s+up|fix(?:es)?)\b",
    re.IGNORECASE,
)
_FINDINGS_LEAD_RE = lazy_pattern(
    r"\b(?:problems?|causes?|issues?|bugs?|culprits?|mistakes?)\b"
    r"|\b(?:noticed|found|spotted|saw)\b[^.:]{0,30}\bthings?\b",  # "While reading the code I noticed two more things:"
    re.IGNORECASE,
)
# what makes a proposal worth doing now: "Should I set it up as a service? Right now it only runs while …"
_WHY_NOW_RE = lazy_pattern(r"^(?:right\s+now|currently|at\s+the\s+moment|otherwise|today|as\s+it\s+is)\b", re.I)
_LEAD_SUBJECT_RE = lazy_pattern(r"^(?P<s>[\w`.:/-]+(?:\s+[\w`.:/-]+){0,3}?)\s+(?:has|have|is|are|had|was|were)\b", re.I)
_RECOMMEND_RE = lazy_pattern(
    r"\b(?:i'?d|i\s+would|we'?d|i)\s+(?:go\s+with|go\s+for|pick|choose|take|recommend|suggest|lean\s+(?:towards?|to)|"
    r"vote\s+for|do|use|start\s+with|stick\s+with|keep|prefer)\s+(?P<x>[^.;!?]+)"
    # "I'd write a partitioned dataset: …", "I'd add a release profile": a recommendation with what to build
    r"|\b(?:i'?d|i\s+would|we'?d)\s+(?:write|add|build|make|move|split|put|store|switch\s+to)\s+(?P<x5>(?:an?|the)\s+[^.;!?]+)"
    r"|^(?:the\s+)?(?:fix|change|approach|way|option)\s+i'?d\s+(?:propose|suggest|recommend|go\s+with)\s*:\s*(?P<x4>[^.;!?]+)"
    r"|\b(?:my\s+(?:pick|vote|recommendation|suggestion|preference|proposal)|the\s+(?:better|safer|simpler)\s+(?:option|choice|"
    r"bet))\s*(?:is|would\s+be|:)\s*(?P<x2>[^.;!?]+)"
    r"|^(?:suggestion|proposal|recommendation)\s*:\s*(?P<x3>[^.;!?]+)",
    re.IGNORECASE,
)
_PICKED_ORDINAL_RE = lazy_pattern(r"^(?:option\s+|number\s+|#)?(?P<n>[1-4]|one|two|three|four|[a-d])\b", re.IGNORECASE)
_WORD_ORDINALS = {"one": 0, "two": 1, "three": 2, "four": 3, "a": 0, "b": 1, "c": 2, "d": 3}
_PROPOSAL_RE = lazy_pattern(
    r"^(?:so,?\s+|then\s+)?(?:(?:do\s+you\s+)?want\s+me\s+to|shall\s+i|should\s+i|shall\s+we|should\s+we|(?:would|do)\s+"
    r"you\s+like\s+me\s+to|ok(?:ay)?\s+(?:if|to)\s+i|can\s+i|may\s+i)\s+(?P<x>[^?]{3,200}?)\s*\?"
    r"|^(?P<ok>(?:(?:is\s+(?:that|this)\s+)?(?:ok(?:ay)?|good|fine|alright)(?:\s+(?:like\s+(?:that|this)|with\s+(?:that|this|"
    r"you)))?|go\s+ahead|sound\s+good|does\s+that\s+(?:work|sound\s+(?:ok|good|right))|shall\s+i\s+(?:go\s+ahead|do\s+"
    r"(?:it|that|this|both|all\s+\w+)|build\s+it\s+like\s+this)|should\s+i\s+(?:go\s+ahead|proceed)|ok\s+to\s+"
    r"(?:go|proceed|do\s+\w+(?:\s+\w+)?)|(?:shall|should)\s+i\s+go\s+ahead\s+with\s+[^?]{1,80}))\s*\?",
    re.IGNORECASE,
)
_SUGGESTION_RE = lazy_pattern(
    r"\b(?:would|could|might)\s+(?:be\s+)?(?:much\s+|a\s+lot\s+|far\s+)?(?:make\s+(?:that|this|it)\s+)?(?:better|"
    r"cleaner|simpler|faster|more\s+\w+|nicer|safer|easier|squeeze|help|speed|save|fix|avoid)\b"
    r"|^(?:an?\s+|one\s+|my\s+)?idea\b[^:]{0,60}:\s*\S"  # "Idea for keeping the notebooks reviewable: nbstripout …"
    r"|\b(?:we|you)\s+could\s+(?!not\b)\w+|\bworth\s+(?:considering|a\s+look|trying|switching)\b|\bone\s+more\s+idea\b"
    r"|\balternatively\b|\bif\s+you\s+(?:prefer|want|(?:would|'?d)\s+like|like)\b|\bthere\s+(?:are|is)\s+(?:\w+\s+)?(?:libraries|"
    r"packages|tools|services|a\s+(?:library|package|tool|service))\b",
    re.IGNORECASE,
)
_PRONOUN_RE = lazy_pattern(r"\b(?:it|that|this|them|those|these|one)\b", re.IGNORECASE)
_QUESTION_LEAD_RE = lazy_pattern(
    r"^(?:(?:do\s+you\s+)?(?:want|prefer)(?:\s+me\s+to)?|would\s+you\s+(?:rather|prefer|like)(?:\s+me\s+to)?|"
    r"(?:does|do|did|will|would|should|shall|can)\s+(?:he|she|they|you|we|i|it|the\s+\w+)\s+(?:want|prefer|need|like)?|"
    r"should\s+(?:i|we|it|they|the\s+\w+|\w+)|shall\s+(?:i|we)|do\s+we\s+(?:want|need)|which\s+(?:do\s+you\s+"
    r"(?:want|prefer)|one)|is\s+it|are\s+they)\s*",
    re.IGNORECASE,
)
_LABEL_RE = lazy_pattern(
    r"^(?:suggestion|proposal|recommendation|my\s+suggestion|idea|(?:the\s+)?(?:fix|change|approach)\s+i'?d\s+"
    r"(?:propose|suggest|recommend))\s*:\s*",
    re.IGNORECASE,
)
_SUMMARY_LEAD_RE = lazy_pattern(r"^(?:done|summary|committed|what'?s\s+there|changes|tests?|fixed|added)\b", re.I)


@dataclass(frozen=True)
class Option:
    head: str  # what it is called: the item's bold name or first words, a part of the question
    text: str  # the whole item, with whatever reason it gives


@dataclass
class Offer:
    options: list[Option] = field(default_factory=list)
    question: str = ""  # the "A or B?" question the options come from, when they do
    lead: str = ""  # what introduced the listed options (with their paragraph's topic when it names nothing)
    recommended: Option | None = None
    recommendation: str = ""  # the sentence that recommends, and the ones after it that say why
    plan: list[str] = field(default_factory=list)  # items the assistant means to carry out
    findings: list[str] = field(default_factory=list)  # the problems or causes it found, each standing alone
    findings_lead: str = ""
    proposal: str | None = None  # what a question offers to do ("" for "OK like that?": the offer as a whole)
    context: str = ""  # the sentence before the proposal
    after: str = ""  # the sentence after it, when that says why ("Right now it only runs while …")
    suggestion: str | None = None  # an idea put as a statement
    asks: str | None = None  # a question asking the user for information
    said: list[str] = field(default_factory=list)  # every sentence of the answer, tidied

    def empty(self) -> bool:
        return not (
            self.options
            or self.recommended
            or self.plan
            or self.findings
            or self.proposal is not None
            or self.suggestion
            or self.asks
        )


def offer_of(text: str) -> Offer:
    """What an assistant's text offers (see the module docstring)."""
    raw = [s.strip() for u in prose_units(text) for s in SENTENCE_SPLIT_RE.split(u) if s.strip()]
    offer = Offer(said=[tidy(s) for s in raw])
    runs = item_runs(text)
    for lead, items in runs:
        by_number = _ordinal_recommendation(offer.said, items) is not None
        if not offer.options and (_OPTIONS_LEAD_RE.search(lead) or by_number):
            offer.options = [Option(_head(x), x) for x in (_option_text(i) for i in items) if x]
            offer.lead = lead
    listed = [o.text for o in offer.options]
    for lead, items in runs:
        if items == listed:
            continue
        if _FINDINGS_LEAD_RE.search(lead) and not offer.findings:
            offer.findings = [_standalone(x, lead) for x in items]
            offer.findings_lead = lead
        elif _PLAN_LEAD_RE.search(lead):
            offer.plan = items
    previous = ""
    for n, (sentence, typed) in enumerate(zip(offer.said, raw, strict=True)):
        if not_the_speakers(sentence):
            previous = sentence
            continue
        if previous.endswith("?") and offer.proposal and not offer.after and _WHY_NOW_RE.match(typed.strip(" *_")):
            offer.after = sentence
        if sentence.endswith("?"):
            _question(offer, " ".join(typed.replace("**", "").split()), previous)
        elif not offer.recommended and (m := _RECOMMEND_RE.search(sentence)) and not _PROPOSAL_RE.match(sentence):
            named = (m.group("x") or m.group("x2") or m.group("x3") or m.group("x4") or m.group("x5") or "").strip()
            picked = _ordinal_recommendation([sentence], [o.text for o in offer.options])
            chosen = offer.options[picked] if picked is not None else matching(offer.options, named)
            if chosen is not None or not offer.options:
                said = _LABEL_RE.sub("", sentence)
                said = f"{said[0].upper()}{said[1:]}" if said else sentence
                offer.recommended = chosen or Option(_head(named), said)
                offer.recommendation = " ".join([said, *_reasons(offer.said[n + 1 :], sentence)])
        elif _SUGGESTION_RE.search(sentence) and not offer.options:
            offer.suggestion = sentence
        previous = sentence
    return offer


def _standalone(item: str, lead: str) -> str:
    """A found problem that stands alone: one that opens with a pronoun ("It moves. …") names the lead's subject
    ("Offset: it moves. …")."""
    if not PRONOUN_SUBJECT_RE.match(item):
        return item
    m = _LEAD_SUBJECT_RE.match(lead)
    return f"{m.group('s')}: {item[0].lower()}{item[1:]}" if m else item


def proposal_text(offer: Offer) -> str:
    """The proposal as a statement, with the sentence before it when that says what "it" is or why ("Cap it at
    three attempts: the importer retries forever.")."""
    proposal = offer.proposal or ""
    text = f"{proposal[0].upper()}{proposal[1:]}".rstrip("?. ") if proposal else ""
    if text and offer.after:
        return f"{text}: {offer.after[0].lower() + offer.after[1:] if common_first(offer.after) else offer.after}"
    context = offer.context
    if (
        text
        and context
        and context not in text
        and (
            _PRONOUN_RE.search(proposal)
            or REASON_RE.search(context)
            or content_words(context) & content_words(proposal)
        )
    ):
        return f"{text}: {context[0].lower() + context[1:] if common_first(context) else context}"
    return f"{text}." if text else ""


def common_first(text: str) -> bool:
    """Whether the first word is an ordinary word (lower-cased after a colon) rather than a name."""
    return text.split(" ", 1)[0].lower() in _STOP | {"the", "a", "an", "it", "this", "that", "there", "we", "i"}


def _reasons(after: list[str], sentence: str) -> list[str]:
    """The sentences after a recommendation that say why (up to the next question)."""
    out: list[str] = []
    for s in after[:MAX_REASONS]:
        if s.endswith("?") or not (REASON_RE.search(s) or content_words(s) & content_words(sentence)):
            break
        out.append(s)
    return out


def _question(offer: Offer, sentence: str, previous: str) -> None:
    m = _PROPOSAL_RE.match(sentence)
    if m and m.group("ok"):
        offer.proposal = offer.proposal or ""  # "OK like that?": the plan or the recommendation, as a whole
        return
    if m and " or " not in m.group("x"):
        offer.proposal = m.group("x").strip(" ,")
        offer.context = previous if previous and not previous.endswith("?") else ""
        return
    if not offer.options and " or " in sentence:
        alternatives = _alternatives(sentence)
        if alternatives:
            # "Is X an option, or only Y?" also asks: its "no" answers, it objects to nothing
            offer.options, offer.question, offer.asks = alternatives, sentence, sentence
            return
    if not m:
        offer.asks = sentence


def item_runs(raw: str) -> list[tuple[str, list[str]]]:
    """Every run of two or more list items in a text (an item's wrapped lines joined) with the line before it;
    runs under a summary ("Done:", "Summary:") are left out: they report, they offer nothing. A lead of a few
    words ("Options:") is given the first sentence of the paragraph before it, which says what they are about."""
    runs: list[tuple[str, list[str]]] = []
    run: list[str] = []
    lead = ""
    lines = raw.splitlines()
    for n, line in enumerate([*lines, ""]):
        m = _ITEM_RE.match(line)
        if m:
            if not run:
                lead = next((tidy(x) for x in reversed(lines[:n]) if x.strip()), "")
                if len(lead.split()) <= SHORT_LEAD_WORDS:
                    lead = f"{_topic(lines[:n], lead)} {lead}".strip()
            run.append(m.group("x"))
            continue
        if run and line.strip() and line.startswith((" ", "\t")):
            run[-1] += " " + line.strip()  # an item going on over several lines
            continue
        if run and (line.strip() or n == len(lines)):
            cleaned = [tidy(x.replace("`", "")) for x in run]
            if (
                len(cleaned) >= 2
                and not _SUMMARY_LEAD_RE.match(lead)
                and all(len(x.split()) <= MAX_ITEM_WORDS for x in cleaned)
            ):
                runs.append((lead, cleaned))
            run = []
    return runs


SHORT_LEAD_WORDS = 4
MAX_TOPIC_WORDS = 40


def _topic(before: list[str], lead: str) -> str:
    """The first sentence of the paragraph before a short lead ("One more thing: postscreen also logs rejects.")."""
    paragraph: list[str] = []
    for line in reversed(before):
        if not line.strip():
            if paragraph and tidy(" ".join(paragraph)) != lead:
                break
            paragraph = []
            continue
        paragraph.insert(0, line.strip())
    text = " ".join(x for x in paragraph if tidy(x) != lead)
    first = SENTENCE_SPLIT_RE.split(text)[0] if text else ""
    return tidy(first) if first and len(first.split()) <= MAX_TOPIC_WORDS and not _ITEM_RE.match(first) else ""


_OPTION_JOIN_RE = lazy_pattern(r"^(?:or|either|and)\s+(?=\S)", re.I)
_CLAUSE_END_RE = lazy_pattern(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bca)\.\s+"
    r"|;\s+|:\s+|\s+[\u2014\u2013]\s+|\s+-\s+|,\s+(?:which|since|because|but|so)\b"
)
MAX_NAME_WORDS = 12
_DANGLING = frozenset("a an the and or but as at by for from in into of on to with that which who so than".split())


def _option_text(item: str) -> str:
    """A listed option without what joins it to the others ("or pin …") and without the question the list ends
    on ("… Nothing changes for subscribers. Which one?"): that asks about all of them, it is no part of one."""
    text = _OPTION_JOIN_RE.sub("", item.strip())
    said = SENTENCE_SPLIT_RE.split(text)
    while len(said) > 1 and said[-1].rstrip().endswith("?"):
        said.pop()
    return " ".join(said)


def option_name(option: Option) -> str:
    """What an option is, in a few words that end where its first clause ends ("give every episode the slug as its
    guid from now on"); a longer clause is cut where an ellipsis says so, never silently mid-phrase."""
    if _BOLD_HEAD_RE.match(option.text):
        return option.head
    text = option.text.replace("**", "")
    # the first clause end outside parentheses: "IndexedDB (e.g. idb-keyval)" is one name
    end = next((m.start() for m in _CLAUSE_END_RE.finditer(text) if _balanced(text[: m.start()])), len(text))
    clause = text[:end].strip(" .,:")
    words = clause.split()
    if len(words) <= MAX_NAME_WORDS:
        return clause
    cut = " ".join(words[:MAX_NAME_WORDS])
    opened: list[int] = []
    for i, ch in enumerate(cut):
        if ch == "(":
            opened.append(i)
        elif ch == ")" and opened:
            opened.pop()
    cut = cut[: opened[0]] if opened else cut  # never end inside a parenthesis
    kept = cut.split()
    while len(kept) > 1 and kept[-1].lower().strip(",;:") in _DANGLING:
        kept.pop()  # nor on a word that leads into what was cut ("… write the CSV as")
    return " ".join(kept).rstrip(" ,;:") + " …"


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")")


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
    parts = [re.sub(r"^(?:is|are|be|to|a|an|the|use|using)\s+", "", p, flags=re.IGNORECASE) for p in parts]
    # "Is installing CPAN modules an option, or system perl only?": the option, not the question around it
    parts = [
        re.sub(r"\s+(?:an?\s+option|possible|ok(?:ay)?|allowed|fine|acceptable)$", "", p, flags=re.I) for p in parts
    ]
    parts = [_QUESTION_LEAD_RE.sub("", p, count=1) for p in parts]
    if any(re.search(r"\bnot\b|n't\b", p, re.IGNORECASE) for p in parts):
        return []  # "Is Docker not running, or do you use Podman?": a state asked about, not options
    return [Option(p, p) for p in parts if p]


def _ordinal_recommendation(said: list[str], items: list[str]) -> int | None:
    """The item a recommendation names by its number ("I'd go with 1", "I'd do 2")."""
    if len(items) < 2:
        return None
    for sentence in said:
        m = _RECOMMEND_RE.search(sentence)
        if not m:
            continue
        named = _PICKED_ORDINAL_RE.match(
            (m.group("x") or m.group("x2") or m.group("x3") or m.group("x4") or m.group("x5") or "").strip()
        )
        if named:
            word = named.group("n").lower()
            index = int(word) - 1 if word.isdigit() else _WORD_ORDINALS.get(word)
            if index is not None and index < len(items):
                return index
    return None


_STOP = frozenset(
    "the a an and or of to for in on with it its is be we i you me my our your that this then than just one it's "
    "go let's lets use using keep do please ok okay yes yeah sure fine option way approach choice would should "
    "can will not no rather instead also too so as at by from into only more less there here now what which does "
    "did want think guess".split()
)


def content_words(text: str) -> set[str]:
    """The words that name things, cut to their first five letters ("runs" and "run" are one word)."""
    words = re.findall(r"[a-z0-9][a-z0-9+.#:_-]*", text.lower().replace("**", ""))
    out = set()
    for w in words:
        w = w.strip(".:")
        if len(w) >= 3 and w not in _STOP:
            out.add((w[:5] if len(w) >= 5 else w.removesuffix("s")) if w.isalpha() else w)
        # a compound name is also called by its parts: "chrome.storage.local" is "local" in a reply, "idb-keyval"
        # is "idb"
        parts = re.split(r"[./_-]|::", w)
        for part in parts if len(parts) > 1 else ():
            if len(part) >= 3 and part.isalpha() and part not in _STOP:
                out.add(part[:5] if len(part) >= 5 else part.removesuffix("s"))
    return out


def matching(options: list[Option], reply: str) -> Option | None:
    """The one option whose name the reply uses (None when it names two or none); what follows "not" or
    "instead of" in the reply is what it turns down, not what it names."""
    said = re.split(r"\b(?:not|instead\s+of|rather\s+than|over)\b", reply, maxsplit=1, flags=re.IGNORECASE)[0]
    words = content_words(said)
    hits = [o for o in options if content_words(o.head) & words]
    if len(hits) > 1:
        hits = _clearly_best(hits, words, lambda o: o.head)
    if len(hits) > 1:  # both names share the word ("musl cross bits", "use cross"): what each option says decides
        hits = _clearly_best(hits, words, lambda o: o.text)
    if not hits:
        hits = _clearly_best([o for o in options if content_words(o.text) & words], words, lambda o: o.text)
    return hits[0] if len(hits) == 1 else None


def _clearly_best(hits: list[Option], words: set[str], part: Callable[[Option], str]) -> list[Option]:
    """The option sharing the most words with the reply, when it shares at least twice as many as the next."""
    if len(hits) <= 1:
        return hits
    ranked = sorted(hits, key=lambda o: -len(content_words(part(o)) & words))
    best, second = (len(content_words(part(o)) & words) for o in ranked[:2])
    return ranked[:1] if best >= 2 * second else hits
