"""Short answers resolved: "Pandas it is.", "let's do that", "go with the second one", "ok, lower-case then", "nah,
keep it simple" settle what the assistant's last answer put on the table (`offers`), and the memory is what they
settle: what was chosen, over what, and why, in the words of the turn they answer, never the bare "Pandas it is.".

The reply is read as typed, line by line and sentence by sentence ("unix. ok", "2. cron on that box is a mess
anyway"), its first few sentences; each may settle one part of the offer:
- an ordinal ("the second one", "2.", "option b") or the name of one option ("unix", "lower-case then", "So
  dompdf I think") picks that option: a decision, with the options it was chosen over and the recommendation's
  reason when it was the recommended one (a longer sentence of the user's own is the decision in their words);
- agreement ("ok", "yes please", "Ja, passt.", "go for it") takes the recommendation, else the plan's items
  (each one that gives a reason or a rule; the ones the reply names), else the proposal;
- an objection ("no html. the ticket system strips it", "nah, keep it simple", "But please no money library.")
  turns down the suggestion it names, else the recommendation, proposal or suggestion: with the user's reason, a
  rejected alternative; naming another option, it also picks that one;
- a statement answering the assistant's question ("Where does the app run?" "It runs at all-inkl, shared
  hosting.") is the user's fact.
The assistant's words the user accepted are `assistant_accepted`; the user's own (a rejection and its reason, an
answer, a pick in their words) are `user`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise, takewhile

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ACCEPTED, USER, Candidate, entity_names
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.choices import REASON_RE
from codememory.extract.clean import clip, strip_stray_quotes, tidy
from codememory.extract.offers import (
    Offer,
    Option,
    common_first,
    content_words,
    matching,
    offer_of,
    option_name,
    proposal_text,
)
from codememory.extract.rules import PREFERENCE_RE
from codememory.extract.speakers import objects, without_topic_no
from codememory.extract.statements import SENTENCE_SPLIT_RE
from codememory.extract.unresolved_pronouns import PRONOUN_SUBJECT_RE

MAX_REPLY_SENTENCES = 5
MAX_SETTLING_WORDS = 9  # a pick or an agreement is short; a longer sentence states its own decision
MAX_REASON_SENTENCES = 2
SHORT_LEAD = 3  # "Options:", "Two ways out:": a lead that names nothing
OWN_WORDS = 5  # a pick said in at least this many words is kept in the user's words
_AGREE_RE = lazy_pattern(
    r"^\W*(?:ok(?:ay)?|k|yes|yeah|yep|yup|ja|jep|sim|si|sure|fine|great|perfect|agreed|right|alright|cool|nice|good|"
    r"love\s+it|sounds?\s+(?:good|great|fine|right|reasonable|perfect)|makes\s+sense|works\s+for\s+me|that\s+works|"
    r"lgtm|ship\s+it|(?:let'?s|please)?\s*(?:do|go\s+with|go\s+for|use|try)\s+(?:that|it|this|them|both)|"
    r"go\s+(?:ahead|for\s+it)|please\s+do|do\s+it|passt|genau|fair\s+enough|deal|perfekt|👍)\b",
    re.IGNORECASE,
)
_ORDINALS = {
    "first": 0, "1st": 0, "one": 0, "1": 0, "former": 0, "a": 0,
    "second": 1, "2nd": 1, "two": 1, "2": 1, "b": 1,
    "third": 2, "3rd": 2, "three": 2, "3": 2, "c": 2,
    "fourth": 3, "4th": 3, "four": 3, "4": 3, "d": 3,
}  # fmt: skip
_ORDINAL_RE = lazy_pattern(
    r"\b(?:the\s+)?(?P<o>first|second|third|fourth|1st|2nd|3rd|4th|former|latter|last)\b(?:\s+(?:one|option|approach|"
    r"way|choice|variant|idea|suggestion))?"
    r"|\b(?:option|number|nr\.?|#)\s*(?P<n>[1-4a-d]|one|two|three|four)\b"
    r"|^\W*(?:let'?s\s+)?(?:do|take|go\s+with|use|pick)\s+(?:number\s+)?(?P<n2>[1-4])\b"
    r"|^\W*\(?(?P<letter>[a-dA-D])\)?[.!]?\s*$|^\W*\(?(?P<bare>[1-4])\)?(?:[.:)]|$|\s)",
    re.IGNORECASE,
)
_LEAD_FILLER_RE = lazy_pattern(
    r"^\W*(?:(?:ok(?:ay)?|but|and|also|so|well|please|oh|ah|sure|right|hmm+|hm|then|now)\b[\s,.!:;\u2014-]*)+",
    re.IGNORECASE,
)
# "no," / "nah." at the start: the answer, not part of what follows ("no docker on the runner" keeps its "no")
_NO_LEAD_RE = lazy_pattern(
    r"^\W*(?:no|nope|nah|nay|not\s+really|not\s+that)(?:\s*[,.!:;\u2014-]+\s*|\s*$)", re.IGNORECASE
)
# a refusal that stands alone, after any hedge: "But honestly no.", "nah, …", "let's not." (not "no fancy theme")
_BARE_NO_RE = lazy_pattern(
    r"^\W*(?:(?:but|honestly|frankly|tbh|to\s+be\s+honest|sorry|actually|hmm+|well)\b[\s,.!]*)*"
    r"(?:no|nope|nah|not\s+really|not\s+for\s+(?:me|us|now)|let'?s\s+not|rather\s+not|i\s+don'?t\s+think\s+so)"
    r"(?:\s*[,.!:;\u2014-]|\s*$)",
    re.IGNORECASE,
)
_ERRAND_RE = lazy_pattern(
    r"^\W*(?:commit|push|ship|deploy|merge|go|thanks?|thank\s+you|cheers|danke)\b[\w\s]{0,20}[.!]?$"
    r"|^\W*(?:everything|all|the\s+rest)\s+else\b[\w\s,]{0,20}[.!]?$",
    re.I,
)
# how a suggestion is introduced, not what it is: "One more idea while we're at it: restic supports compression"
_IDEA_LEAD_RE = lazy_pattern(
    r"^(?:one\s+more|another|an?\s+other|a\s+small|a\s+last)\s+(?:idea|thing|suggestion|option)\b[^:]{0,40}:\s*", re.I
)
# how a recommendation is put, not what it is: "I'd suggest moving the app to Laravel", "I'd suggest we move the app
# to Laravel", "I'd recommend Laravel for the app"
_RECOMMEND_LEAD_RE = lazy_pattern(
    r"^(?:i'?d|i\s+would|we'?d|i)\s+(?:(?:strongly|really)\s+)?(?:suggest|recommend|propose)\s+(?:that\s+)?"
    r"(?:(?:we|you)\s+(?=\w+\s+\w))?(?=\w)|^my\s+suggestion\s+is\s+(?:to\s+)?",
    re.I,
)
_PICK_VERB_RE = lazy_pattern(
    r"\b(?:it\s+is|then|please|it\s+be|for\s+me|sounds?\s+good|is\s+(?:fine|good|ok|right|better)|i\s+think|i\s+guess|"
    r"i'?d\s+say|works)\b",
    re.IGNORECASE,
)
_NEW_TOPIC_RE = lazy_pattern(
    r"^\W*(?:other\s+thing|also|next|btw|by\s+the\s+way|another|now|one\s+more|and\s+(?:also|another)|then)\b",
    re.IGNORECASE,
)
_REPORT_RE = lazy_pattern(
    r"\b(?:error|fails?|failed|failing|crash\w*|broken|white|empty|stuck|hangs?|log\s+says|doesn'?t\s+work|"
    r"not\s+working|still\s+(?:shows?|get)|bug)\b",
    re.IGNORECASE,
)
_OWN_ACTION_RE = lazy_pattern(
    r"^\W*(?:yes,?\s+)?(?:(?:he|she|they)\s+(?:has|have|is|are)|i(?:'ll|\s+will|\s+can|'m\s+going\s+to|\s+do|\s+did|\s+make|"
    r"\s+run))\b",
    re.IGNORECASE,
)
# a todo of the user's, not a settlement: "the restore test is still on my list, don't let me forget it"
_LATER_RE = lazy_pattern(
    r"\b(?:on\s+(?:my|the|your)\s+list|let\s+me\s+forget|remind\s+me|later|next\s+time|not\s+now|some\s*day|"
    r"(?:as|a|the)\s+todo)\b",
    re.I,
)
# "and how to build.": a topic named, nothing settled
_BARE_TOPIC_RE = lazy_pattern(
    r"^\W*(?:and\s+|also\s+|but\s+)?(?:how|what|why|where|when|which)\s+(?:to|do|does|did|is|are|was|were|about|if)\b",
    re.IGNORECASE,
)  # also a question typed without its question mark: "What do you mean with the teleport thing though, …"
# "write it somewhere", "do that later": a short errand about "it" says nothing of its own
_PRONOUN_ERRAND_RE = lazy_pattern(r"^\W*(?:and\s+|also\s+|then\s+)?\w+\s+(?:it|that|this|them)(?:\s+\w+)?\W*$", re.I)
# what happened before, told as background: "we scaled the workers to 2 replicas last week"
_STORY_RE = lazy_pattern(r"\b(?:last\s+(?:week|night|month|year|time|friday|monday)|yesterday|\w+\s+ago)\b", re.I)
_PRAISE = frozenset(content_words("sounds perfect great good nice love makes sense totally wow cool awesome excellent"))
_PUT_OFF_RE = lazy_pattern(
    r"^\W*(?:later|not\s+(?:now|yet|today)|maybe\s+later|some\s*day|next\s+(?:time|week))\b", re.I
)
_WONT_WORK_RE = lazy_pattern(r"\b(?:won'?t|will\s+not|doesn'?t|does\s+not|can'?t|cannot|wouldn'?t)\s+work\b", re.I)
_WHICH_RE = lazy_pattern(r"^\W*(?:which|what)\b", re.IGNORECASE)
_NAMED_THING_RE = lazy_pattern(r"\b[A-Za-z]+[-.]?\d+(?:\.\d+)*\b|\b\d+(?:\.\d+)+\b|\b[A-Z][a-z]*[A-Z]\w*\b")
_ORDINAL_LEAD_RE = lazy_pattern(r"^\W*\(?[1-9a-d][.)]\s+(?=\S)", re.IGNORECASE)
_NAME_FIRST_RE = lazy_pattern(
    r"^(?!\(?[1-9a-d][.)]\s)[\w.+#-]+(?:\s+[\w.+#-]+)?\s*(?:,|:|\.\s|\s[\u2014\u2013-]\s)", re.IGNORECASE
)
_PICKS_RE = lazy_pattern(r"\b(?:instead|rather\s+than|over|not)\b", re.IGNORECASE)
_SKIP_LINE_RE = lazy_pattern(r"^\s*(?:>|```|~~~|\t| {4}|[A-Z]/\w+\s*\(|\$ |at\s+\S+\s+\()")
_SPLIT_RE = lazy_pattern(r"(?<=[.!?])\s+(?=\S)")
_PICK_THEN_SAID_RE = lazy_pattern(
    r"^(?P<pick>\(?[1-4a-d][.)])\s+(?P<rest>(?:yes|yeah|yep|ok(?:ay)?|sure|definitely|obviously)\b[\s,.!]*\S.*)$", re.I
)
_NO_SPLIT_AFTER_RE = lazy_pattern(
    r"(?:^\W*\(?[1-4a-d][.)]|\b(?:e\.g|i\.e|etc|vs|approx|incl|nr|no|ca|z\.b|d\.h))$", re.I
)


@dataclass(frozen=True)
class Resolved:
    candidates: list[Candidate]
    settled: frozenset[tuple[int, str]]  # (seq, reply sentence) settled: not a memory of its own
    taken: frozenset[tuple[int, str]]  # (seq, sentence) of the offer now inside a resolved memory


def resolved_answers(turns: Sequence[Turn]) -> Resolved:
    """The memories each reply makes of the assistant's offer in the turn before it."""
    out: list[Candidate] = []
    settled: set[tuple[int, str]] = set()
    taken: set[tuple[int, str]] = set()
    for before, turn in pairwise(sorted(turns, key=lambda t: t.seq)):
        if not before.assistant_texts or turn.seq != before.seq + 1:
            continue
        reply = reply_sentences(scrub(turn.user_text))
        if not reply:
            continue
        offer = offer_of(scrub(before.assistant_texts[-1]))
        if offer.empty():
            continue
        if offer.proposal and not offer.recommended and len(before.assistant_texts) > 1:
            # "Shall I write the partitioned output?" after tool calls: what it is was said before them
            offer = with_earlier_recommendation(offer, [scrub(t) for t in before.assistant_texts[:-1]])
        settling = Settling(offer, reply, turn.seq)
        settling.run()
        out += settling.made
        settled.update((turn.seq, tidy(s)) for s in settling.used_reply)
        taken.update((before.seq, s) for s in settling.used_offer if s)
    return Resolved(out, frozenset(settled), frozenset(taken))


def with_earlier_recommendation(offer: Offer, earlier: Sequence[str]) -> Offer:
    """The offer with the recommendation an earlier text of the same answer made, when the closing proposal
    names it ("I'd write a partitioned dataset: …" … "Shall I write the partitioned output?")."""
    proposed = content_words(offer.proposal or "")
    for text in reversed(earlier):
        before = offer_of(text)
        if before.recommended is not None and not before.options and proposed & content_words(before.recommendation):
            return replace(offer, recommended=before.recommended, recommendation=before.recommendation)
    return offer


def reply_sentences(user_text: str) -> list[str]:
    """The first sentences of a user's message as typed: line by line, each split at sentence ends whatever the
    case of the next word (terse users write in lower case), pasted logs, code and quotes left out."""
    out: list[str] = []
    for line in strip_stray_quotes(user_text.strip()).splitlines():
        if not line.strip() or _SKIP_LINE_RE.match(line):
            if out:
                break  # the first paragraph only
            continue
        pieces: list[str] = []
        for piece in _SPLIT_RE.split(line.strip()):
            if pieces and _NO_SPLIT_AFTER_RE.search(pieces[-1]):
                pieces[-1] += " " + piece
            else:
                pieces.append(piece)
        for piece in (" ".join(p.split()) for p in pieces if p.strip()):
            # "1. yeah I'd rather not …": the pick, then the user's own sentence
            m = _PICK_THEN_SAID_RE.match(piece)
            out += [m.group("pick"), m.group("rest")] if m else [piece]
        if len(out) >= MAX_REPLY_SENTENCES:
            break
    return out[:MAX_REPLY_SENTENCES]


class Settling:
    """One reply against one offer: the memories it makes and the sentences of both it takes in."""

    def __init__(self, offer: Offer, reply: list[str], seq: int) -> None:
        self.offer, self.reply, self.seq = offer, reply, seq
        self.made: list[Candidate] = []
        self.used_reply: list[str] = []
        self.used_offer: list[str] = []
        self.spent: set[str] = set()  # the parts of the offer already settled

    def run(self) -> None:
        self._settle()
        # "ok. but 127.0.0.1 won't work, …": the plan is taken without the item the reply says cannot work
        for sentence in self.reply:
            m = _WONT_WORK_RE.search(sentence)
            named = content_words(_LEAD_FILLER_RE.sub("", sentence[: m.start()])) if m else set()
            if named:
                self.made = [
                    c
                    for c in self.made
                    if not (c.said_by == ACCEPTED and c.category == "decision" and named <= content_words(c.text))
                ]

    def _settle(self) -> None:
        if self.offer.proposal and self.reply and _PUT_OFF_RE.match(self.reply[0]):
            # "Want me to generalize the script to a list of rooms now?" "later. note it": a todo of the user's
            what = proposal_text(replace(self.offer, context="")).rstrip(".")
            what = re.sub(r"\s+(?:now|today|right\s+away)$", "", what)
            context = self.offer.context
            context = f"{context[0].lower()}{context[1:]}" if context and common_first(context) else context
            self._make(f"TODO: {what}" + (f": {context.rstrip('.')}" if context else "") + ".", "todo", USER)
            self.used_reply.append(self.reply[0])
            return
        turned_down = self._turned_down()
        for n, sentence in enumerate(self.reply):
            if n and _NEW_TOPIC_RE.match(sentence):
                return  # the reply has moved on
            plain = _LEAD_FILLER_RE.sub("", sentence) or sentence
            bare = re.sub(r"[.!]+$", "", sentence)
            if objects(plain) and not self._answers_no(plain):
                self._objection(n, plain)
            elif turned_down and n < turned_down:
                continue  # "Ha, my nephew said the same about Laravel! But honestly no.": naming it is no pick
            elif (chosen := self._picked(bare)) is not None:
                self._choose(chosen, sentence)
            elif _AGREE_RE.match(sentence) and len(bare.split()) <= MAX_SETTLING_WORDS:
                self._agreed(sentence)
            elif "answer" not in self.spent and self.offer.asks:
                self._answered(n)
        self._own_words()

    def _turned_down(self) -> int:
        """Where the reply objects to a lone recommendation or suggestion (the index of that sentence, 0 when it
        does not): the sentences before it that name the idea ("Ha, my nephew said exactly the same thing about
        Laravel! But honestly no.") lead up to the refusal; they accept nothing. A suggestion is the user's
        decision only when the user takes it."""
        offer = self.offer
        if offer.options or not (offer.recommended or offer.suggestion):
            return 0
        for n, sentence in enumerate(self.reply):
            if n and _NEW_TOPIC_RE.match(sentence):
                return 0
            plain = _LEAD_FILLER_RE.sub("", sentence) or sentence
            if objects(plain) and not self._answers_no(plain):
                # "Go with Django. No fancy theme though.": what is refused is a detail, the idea was taken
                idea = offer.suggestion or (offer.recommended.text if offer.recommended else "")
                return n if _BARE_NO_RE.match(plain) or _shares(plain, idea) else 0
            if _AGREE_RE.match(plain) or _PICK_VERB_RE.search(sentence):
                return 0  # "Django sounds good. No need for the theme though.": taken, then a detail refused
        return 0

    def _own_words(self) -> None:
        """The reply's own sentences that take up what the offer named (its options, recommendation, proposal or
        question) and were not used yet: the user settling it in their own words ("restic. usb disk + a b2
        bucket. borg needs borg running on the other end, b2 cant do that"), one memory of the user's."""
        offer = self.offer
        named = content_words(
            " ".join(
                [
                    *(o.text for o in offer.options),
                    offer.recommendation,
                    offer.proposal or "",
                    offer.suggestion or "",
                    offer.question,
                    offer.asks or "",
                    *offer.plan,
                ]
            )
        )
        said: list[str] = []
        turned_down = self._turned_down()
        for n, sentence in enumerate(self.reply):
            if n and _NEW_TOPIC_RE.match(sentence):
                break
            if n < turned_down:
                continue  # what leads up to a refusal decides nothing
            if sentence in self.used_reply or sentence.endswith("?") or _REPORT_RE.search(sentence):
                continue
            if (
                _OWN_ACTION_RE.match(_LEAD_FILLER_RE.sub("", sentence))
                or _ERRAND_RE.match(sentence)
                or _LATER_RE.search(sentence)
                or _BARE_TOPIC_RE.match(sentence)
                or _PRONOUN_ERRAND_RE.match(sentence)
                or _STORY_RE.search(sentence)
            ):
                continue  # "I will add him as collaborator": the user's own errand, not a decision
            plain = tidy(_LEAD_FILLER_RE.sub("", sentence))
            if plain and not _AGREE_RE.fullmatch(plain.rstrip(".!")) and content_words(plain) & named:
                said.append(plain)
        if not said or len(" ".join(said).split()) < 3:
            return
        text = " ".join(said)
        made = set().union(*(content_words(c.text) for c in self.made)) if self.made else set()
        if content_words(text) - _PRAISE <= made:
            return  # already said by a memory the reply made ("Signed token sounds perfect, let's go with that!")
        if any(objects(s) for s in said) and not self.made:
            category = "rejected_alternative"
        elif all(PREFERENCE_RE.match(s) for s in said):
            category = "preference"  # "I'd rather not add anything that needs re-approval": the user's own leaning
        elif re.search(r"\b(?:only|never|always|must|clean|keep\s+it)\b", text, re.I) and not _PICKS_RE.search(text):
            category = "convention"
        else:
            category = "decision"
        self._make(text, category, USER)
        self.used_reply += [s for s in self.reply if tidy(_LEAD_FILLER_RE.sub("", s)) in said]

    # ------------------------------------------------------------------------------------ choices
    def _picked(self, sentence: str) -> Option | None:
        offer = self.offer
        if len(sentence.split()) > MAX_SETTLING_WORDS + 4:
            return None  # a reply may answer "A or B?" and then take the recommendation: one pick per part
        m = _ORDINAL_RE.search(sentence)
        if m and offer.options and "pick:0" not in self.spent:
            word = (m.group("o") or m.group("n") or m.group("n2") or m.group("letter") or m.group("bare") or "").lower()
            if word in ("last", "latter"):
                return offer.options[-1]
            index = _ORDINALS.get(word)
            if index is not None and index < len(offer.options):
                return offer.options[index]
        plain = _LEAD_FILLER_RE.sub("", sentence)
        if re.search(r"\+|\bboth\b|\ball\s+(?:of\s+them|three|two)\b", plain, re.I):
            return None  # "usb disk + a b2 bucket": more than one, no pick
        pickish = (
            len(sentence.split()) <= 3
            or _PICK_VERB_RE.search(sentence)
            or _AGREE_RE.search(sentence)
            or _NAME_FIRST_RE.match(plain)  # "cross, docker's already on this box": the name, then why
        )
        if any(k.startswith("pick:") for k in self.spent) and not _PICK_VERB_RE.search(sentence):
            return None  # a second pick in one reply only when it says so ("Time::Piece then.")
        if offer.findings and not offer.options and not offer.plan and pickish:
            self._found()
            return None
        groups = [offer.options, [offer.recommended] if offer.recommended else [], [Option(x, x) for x in offer.plan]]
        for n, options in enumerate(groups):
            if not options or f"pick:{n}" in self.spent:
                continue
            chosen = matching(options, plain)
            if chosen is not None and (
                pickish or (options is offer.options and offer.question and _strongly(chosen, plain))
            ):
                return chosen
        return None

    def _choose(self, chosen: Option, sentence: str) -> None:
        offer = self.offer
        listed = any(o is chosen for o in offer.options)
        others = [option_name(o) for o in offer.options if o is not chosen and o.head != chosen.head] if listed else []
        own = len(content_words(sentence)) >= OWN_WORDS and not _AGREE_RE.match(sentence)
        if chosen.text in offer.plan:
            text, who = chosen.text, ACCEPTED
        elif (
            listed
            and not offer.question
            and (named := _NAME_FIRST_RE.match(_LEAD_FILLER_RE.sub("", sentence)))
            and len(named.string[named.end() :].split()) >= 3
        ):
            # the option as offered, chosen over the others, with the user's reason in their words
            text, who = f"{_chosen_over(chosen, others)} {tidy(sentence)}", USER
        elif own and listed and not offer.question and (number := _ORDINAL_LEAD_RE.match(sentence)):
            # "2. output has to be byte-identical, …": the offered option taken by its number, and why
            text, who = f"{_chosen_over(chosen, others)} {tidy(sentence[number.end() :])}", ACCEPTED
        elif own:
            text, who = tidy(sentence), USER
            text += f" (the question was: {offer.question})" if offer.question and listed else ""
        elif offer.question and listed:
            text, who = f"{chosen.head[0].upper()}{chosen.head[1:]} rather than {_join(others)}.", ACCEPTED
        else:
            text, who = _chosen_over(chosen, others), ACCEPTED
            topic = SENTENCE_SPLIT_RE.split(offer.lead)[0] if len(offer.lead.split()) > SHORT_LEAD else ""
            topic = "" if topic.endswith("?") else topic  # "Where should the fix live?" names no topic
            if listed and topic and not content_words(topic) <= content_words(text):
                text = f"{topic.rstrip(':. ')}: {text}"  # what the options were about ("postscreen rejects: …")
        recommended = offer.recommended
        if recommended is not None and recommended.head == chosen.head and offer.recommendation:
            if text.rstrip(".") in offer.recommendation:
                text = offer.recommendation
            elif offer.recommendation not in text:
                text = f"{text} {offer.recommendation}"
            self.used_offer.append(offer.recommendation)
        elif offer.recommendation:
            self.used_offer.append(offer.recommendation)  # a recommendation the user did not follow
        self._make(text, "decision", who)
        self.used_reply.append(sentence)
        self.used_offer.append(chosen.text)
        group = "pick:0" if listed else "pick:1" if chosen is offer.recommended else "pick:2"
        self.spent.update((group, "agree"))
        if group != "pick:0" or not offer.recommended or chosen is offer.recommended:
            # the recommendation is settled too: followed (also when picked by its number), or passed over
            self.spent.add("pick:1")

    def _agreed(self, sentence: str) -> None:
        if "agree" in self.spent:
            return
        offer = self.offer
        if offer.recommended is not None and "pick:1" not in self.spent:
            self._choose(offer.recommended, sentence)
            return
        if offer.findings and not offer.plan:  # with a plan, the plan is what was accepted
            self._found()
        if offer.plan and (offer.proposal is not None or not offer.options):
            for item in [x for x in offer.plan if _reasoned(x)]:
                self._make(item, "decision", ACCEPTED)
            self.used_offer += offer.plan
        elif offer.proposal and not offer.findings:
            self._make(proposal_text(offer), "decision", ACCEPTED)
            self.used_offer.append(offer.proposal)
        elif not offer.findings:
            return
        self.used_reply.append(sentence)
        self.spent.update(("pick:0", "pick:1", "pick:2", "agree"))

    def _found(self) -> None:
        """The problems the assistant found, accepted: each a lesson of its own."""
        if "found" in self.spent:
            return
        for item in self.offer.findings:
            self._make(item, "gotcha", ACCEPTED)
        self.used_offer += self.offer.findings
        self.spent.add("found")

    # --------------------------------------------------------------------------------- objections
    def _answers_no(self, sentence: str) -> bool:
        """ "No" to a question asking for information ("Is CPAN an option?" "no, system perl only") answers it."""
        return bool(self.offer.asks) and not self.offer.proposal and bool(_NO_LEAD_RE.match(sentence))

    def _objection(self, n: int, sentence: str) -> None:
        offer = self.offer
        named_suggestion = offer.suggestion and _shares(sentence, offer.suggestion)
        if "reject" in self.spent:
            return
        if named_suggestion:
            target = offer.suggestion
        elif offer.recommended is not None and "pick:1" not in self.spent:
            target = offer.recommended.text
        else:
            target = proposal_text(offer) if offer.proposal else offer.suggestion
        if not target and "pick:0" in self.spent:
            # "1. … and no idb": another of the listed options, turned down by name
            turned_down = matching([o for o in offer.options if o.text not in self.used_offer], sentence)
            target = turned_down.head if turned_down is not None else None
        if not target:
            return
        later = list(takewhile(lambda s: not (_NEW_TOPIC_RE.match(s) or s.endswith("?")), self.reply[n + 1 :]))
        later = [s for s in later if not _ERRAND_RE.match(s)][:MAX_REASON_SENTENCES]
        # the refusal itself ("But honestly no.") is no part of the reason
        refusal = _NO_LEAD_RE.sub("", _BARE_NO_RE.sub("", without_topic_no(sentence)))
        reason = " ".join([tidy(refusal) if refusal.strip() else "", *(tidy(s) for s in later)]).strip()
        if len(reason.split()) >= 2:
            subject = _RECOMMEND_LEAD_RE.sub("", _IDEA_LEAD_RE.sub("", target.rstrip(".? ")))
            subject = f"{subject[0].lower()}{subject[1:]}" if common_first(subject) else subject
            self._make(f"Turned down: {subject}. {reason}", "rejected_alternative", USER)
            self.used_reply += [sentence, *later]
            self.used_offer += [s for s in (offer.recommendation, offer.proposal, offer.suggestion) if s]
        self.spent.add("reject")
        other = [o for o in offer.options if o is not offer.recommended]
        chosen = matching(other, sentence) if other and not named_suggestion else None
        if chosen is not None and "pick:0" not in self.spent:
            self._choose(chosen, sentence)

    # ------------------------------------------------------------------------------------ answers
    def _answered(self, n: int) -> None:
        """A statement in reply to the assistant's question that shares a word with it: the user's fact."""
        question = self.offer.asks or ""
        answer = tidy(_NO_LEAD_RE.sub("", _LEAD_FILLER_RE.sub("", self.reply[n])))
        asked = content_words(question)  # "What do you want to keep?" names nothing: any statement answers it
        # "Which routers are these?" "GL.iNet MT3000, openwrt 23.05.": the reply's opening names the thing asked
        # for, a model or a version, without repeating the question's words
        named = n <= 1 and _WHICH_RE.match(question) and _NAMED_THING_RE.search(answer)
        if len(answer.split()) < 3 or (asked and not content_words(answer) & asked and not named):
            return
        if _REPORT_RE.search(answer):
            return
        # the sentences before it that the reply opened with belong to the answer too ("code is /opt/app. runs as
        # user soil"), and the one after it
        before = [
            tidy(_NO_LEAD_RE.sub("", s)) for s in self.reply[:n] if s not in self.used_reply and not _AGREE_RE.match(s)
        ]
        going_on = takewhile(lambda s: not (_NEW_TOPIC_RE.match(s) or s.endswith("?")), self.reply[n + 1 : n + 3])
        later = [tidy(s) for s in going_on if not _NO_LEAD_RE.match(s) and not _ERRAND_RE.match(s)]
        said = [s for s in [*before, answer, *later] if s and not _AGREE_RE.match(s)]
        text = " ".join(said)
        if PRONOUN_SUBJECT_RE.match(text):
            text = f"{question} {text}"
        category = "convention" if re.search(r"\b(?:only|never|always|must|not)\b", text, re.I) else "fact"
        self._make(text, category, USER)
        self.used_reply += [s for s in self.reply[: n + 2] if tidy(s) in said or s == self.reply[n]]
        self.spent.add("answer")

    def _make(self, text: str, category: str, who: str) -> None:
        text = clip(" ".join(text.replace("**", "").split()))
        rule = {"decision": "decision", "rejected_alternative": "rejected"}.get(category, category)
        self.made.append(Candidate(text, category, 0.8, self.seq, entity_names(text), rule=rule, said_by=who))


def _chosen_over(chosen: Option, others: Sequence[str]) -> str:
    """The option's text saying what it was chosen over: right after its name when the text opens with it
    ("Bytes all the way (chosen over Lossy): read_until …"), so a long option cut to a memory's length keeps it."""
    if not others:
        return chosen.text
    over = f"(chosen over {_join(others)})"
    head = option_name(chosen).rstrip(" .:")
    if head and chosen.text.startswith(head) and chosen.text[len(head) : len(head) + 1] in (":", "."):
        return f"{head} {over}{chosen.text[len(head) :]}"
    return f"{chosen.text.rstrip('.')} {over}."


def _strongly(option: Option, sentence: str) -> bool:
    """A sentence naming an option with two of its words (a long answer to "A or B?" that picks one)."""
    return len(content_words(option.text) & content_words(sentence)) >= 2


def _shares(a: str, b: str) -> bool:
    return bool(content_words(a) & content_words(b))


def _reasoned(item: str) -> bool:
    """A plan item worth keeping on its own: it gives a reason or states a rule."""
    return bool(
        REASON_RE.search(item)
        or re.search(r"\b(?:otherwise|never|always|only|instead|rather|fix)\b|:\s|\s[\u2014\u2013]\s", item, re.I)
    )


def _join(items: Sequence[str]) -> str:
    if not items:
        return "the other option"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
