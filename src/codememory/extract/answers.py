"""Short answers resolved: "Pandas it is.", "let's do that", "go with the second one", "ok, lower-case then", "nah,
keep it simple" settle what the assistant's last answer put on the table (`offers`), and the memory is what they
settle: what was chosen, over what, and why, in the words of the turn they answer, never the bare "Pandas it is.".

How the reply settles the offer, read from the first sentences of its first paragraph:
- an ordinal ("the second one", "2.", "option b") or the name of one option ("unix. ok", "lower-case then") picks
  that option: a decision, with the options it was chosen over and the recommendation's reason when it was the
  recommended one;
- agreement ("ok", "yes please", "Ja, passt.", "go for it") takes the recommendation, else the plan's items (each
  one that gives a reason or a rule), else the proposal;
- an objection ("no html. the ticket system strips it", "nah, keep it simple", "let's not") turns down the
  recommendation, proposal or suggestion: with the user's reason, a rejected alternative; naming another option,
  it also picks that one;
- a statement answering the assistant's question ("Where does the app run?" "It runs at all-inkl, shared
  hosting.") is the user's fact.
Every memory made here is the assistant's words accepted by the user (`assistant_accepted`), or the user's own
(a rejection's reason, an answer: `user`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from codememory.capture.turns import Turn
from codememory.extract.candidate import ACCEPTED, USER, Candidate, entity_names
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.clean import clip, strip_stray_quotes, tidy
from codememory.extract.offers import Offer, Option, content_words, matching, offer_of
from codememory.extract.rules import PRONOUN_SUBJECT_RE, REASON_RE
from codememory.extract.speakers import objects
from codememory.extract.statements import SENTENCE_SPLIT_RE, prose_units

MAX_REPLY_SENTENCES = 4
MAX_SETTLING_WORDS = 9  # a pick or an agreement is short; a longer sentence states its own decision
MAX_REASON_SENTENCES = 2
_AGREE_RE = re.compile(
    r"^\W*(?:ok(?:ay)?|k|yes|yeah|yep|yup|ja|jep|sim|si|sure|fine|great|perfect|agreed|right|alright|cool|nice|good|"
    r"love\s+it|sounds?\s+(?:good|great|fine|right|reasonable|perfect)|makes\s+sense|works\s+for\s+me|that\s+works|"
    r"lgtm|ship\s+it|(?:let'?s|please)?\s*(?:do|go\s+with|go\s+for|use|try)\s+(?:that|it|this|them|both)|"
    r"go\s+(?:ahead|for\s+it)|please\s+do|do\s+it|passt|genau|fair\s+enough|deal|perfekt|👍)\b",
    re.IGNORECASE,
)
_ORDINALS = {
    "first": 0, "1st": 0, "one": 0, "1": 0, "former": 0,
    "second": 1, "2nd": 1, "two": 1, "2": 1,
    "third": 2, "3rd": 2, "three": 2, "3": 2,
    "fourth": 3, "4th": 3, "four": 3, "4": 3,
}  # fmt: skip
_ORDINAL_RE = re.compile(
    r"\b(?:the\s+)?(?P<o>first|second|third|fourth|1st|2nd|3rd|4th|former|latter|last)\b(?:\s+(?:one|option|approach|"
    r"way|choice|variant|idea|suggestion))?"
    r"|\b(?:option|number|nr\.?|#)\s*(?P<n>[1-4a-d]|one|two|three|four)\b|^\W*\(?(?P<bare>[1-4])\)?(?:[.:)]|$|\s)",
    re.IGNORECASE,
)
_NO_LEAD_RE = re.compile(r"^\W*(?:no|nope|nah|nay|not\s+really|not\s+that)\b[\s,.!:;\u2014-]*", re.IGNORECASE)
_PICK_VERB_RE = re.compile(r"\b(?:it\s+is|then|please|it\s+be|for\s+me|sounds?\s+good|is\s+(?:fine|good|ok))\b", re.I)


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
        if offer.empty() and not offer.asks:
            continue
        settling = Settling(offer, reply, turn.seq)
        settling.run()
        out += settling.made
        settled.update((turn.seq, s) for s in settling.used_reply)
        taken.update((before.seq, s) for s in settling.used_offer)
    return Resolved(out, frozenset(settled), frozenset(taken))


def reply_sentences(user_text: str) -> list[str]:
    units = prose_units(user_text)
    if not units:
        return []
    # as typed (an "ok" or "yes" in front is what the reply says), only without the quotes a command line added
    said = [" ".join(strip_stray_quotes(s).split()) for s in SENTENCE_SPLIT_RE.split(units[0]) if s.strip()]
    return [s for s in said if s][:MAX_REPLY_SENTENCES]


class Settling:
    """One reply against one offer: the memories it makes and the sentences of both it takes in."""

    def __init__(self, offer: Offer, reply: list[str], seq: int) -> None:
        self.offer, self.reply, self.seq = offer, reply, seq
        self.made: list[Candidate] = []
        self.used_reply: list[str] = []
        self.used_offer: list[str] = []
        self.done = False

    def run(self) -> None:
        for n, sentence in enumerate(self.reply):
            if self.done:
                return
            bare = re.sub(r"[.!]+$", "", sentence)
            if objects(sentence) and not self._answers_no(sentence):
                self._objection(n)
            elif (chosen := self._picked(bare)) is not None:
                self._choose(chosen, sentence)
            elif _AGREE_RE.match(sentence) and len(bare.split()) <= MAX_SETTLING_WORDS:
                self._agreed(sentence)
            elif self.offer.asks and not self.made:
                self._answered(n)

    # ------------------------------------------------------------------------------------ choices
    def _picked(self, sentence: str) -> Option | None:
        options = self.offer.options or ([self.offer.recommended] if self.offer.recommended else [])
        if not options or len(sentence.split()) > MAX_SETTLING_WORDS + 3:
            return None
        m = _ORDINAL_RE.search(sentence)
        if m and self.offer.options:
            word = (m.group("o") or m.group("n") or m.group("bare") or "").lower()
            if word in ("last", "latter"):
                return self.offer.options[-1]
            index = _ORDINALS.get(word, "abcd".find(word) if len(word) == 1 and word in "abcd" else None)
            if index is not None and 0 <= index < len(self.offer.options):
                return self.offer.options[index]
        short = len(sentence.split()) <= MAX_SETTLING_WORDS
        if short and (_PICK_VERB_RE.search(sentence) or len(sentence.split()) <= 3 or _AGREE_RE.search(sentence)):
            return matching(options, sentence)
        return None

    def _choose(self, chosen: Option, sentence: str) -> None:
        others = [o.head for o in self.offer.options if o is not chosen and o.head != chosen.head]
        text = chosen.text if chosen.text != chosen.head else f"{chosen.head}: {self.offer.lead}"
        if others:
            text = f"{text.rstrip('.')} (chosen over {_join(others)})."
        recommended = self.offer.recommended
        if recommended is not None and recommended.head == chosen.head and self.offer.recommendation:
            reason = self.offer.recommendation
            if reason not in text:
                text = f"{text} {reason}"
        self._make(text, "decision", ACCEPTED)
        self.used_reply.append(sentence)
        self.used_offer += [chosen.text, self.offer.recommendation] if self.offer.recommendation else [chosen.text]
        self.done = True

    def _agreed(self, sentence: str) -> None:
        offer = self.offer
        if offer.recommended is not None:
            self._choose(offer.recommended, sentence)
            return
        if offer.plan and offer.proposal is not None:
            kept = [item for item in offer.plan if _reasoned(item)]
            for item in kept:
                self._make(item, "decision", ACCEPTED)
            self.used_offer += offer.plan
        elif offer.proposal:
            text = _proposal_text(offer.proposal)
            context = offer.context
            if context and context not in text and (REASON_RE.search(context) or _shares(context, offer.proposal)):
                text = f"{text.rstrip('.')}: {context[0].lower()}{context[1:]}"
            self._make(text, "decision", ACCEPTED)
            self.used_offer.append(offer.proposal)
        else:
            return
        self.used_reply.append(sentence)
        self.done = True

    # --------------------------------------------------------------------------------- objections
    def _answers_no(self, sentence: str) -> bool:
        """ "No" to a question asking for information ("Is CPAN an option?" "no, system perl only") answers it."""
        return bool(self.offer.asks) and self.offer.proposal is None and bool(_NO_LEAD_RE.match(sentence))

    def _objection(self, n: int) -> None:
        offer = self.offer
        sentence = self.reply[n]
        other = matching([o for o in offer.options if o is not offer.recommended], sentence) if offer.options else None
        target = (
            offer.recommended.text
            if offer.recommended is not None
            else offer.proposal or offer.suggestion or (offer.lead if offer.plan else None)
        )
        if not target:
            self.done = True
            return
        reason = " ".join([tidy(_NO_LEAD_RE.sub("", sentence)), *self.reply[n + 1 : n + 1 + MAX_REASON_SENTENCES]])
        reason = reason.strip()
        if len(reason.split()) >= 2:
            subject = _proposal_text(target).rstrip(".?")
            self._make(f"Turned down: {subject[0].lower()}{subject[1:]}. {reason}", "rejected_alternative", USER)
            self.used_reply += self.reply[n : n + 1 + MAX_REASON_SENTENCES]
            self.used_offer += [s for s in (offer.recommendation, offer.proposal, offer.suggestion) if s]
        if other is not None:
            self._choose(other, sentence)
        self.done = True

    # ------------------------------------------------------------------------------------ answers
    def _answered(self, n: int) -> None:
        """A statement in reply to the assistant's question that shares a word with it: the user's fact."""
        question = self.offer.asks or ""
        answer = tidy(_NO_LEAD_RE.sub("", self.reply[n]))
        words = content_words(answer)
        if len(answer.split()) < 3 or not (words & content_words(question) or _AGREE_RE.match(self.reply[n])):
            return
        said = [answer, *(s for s in self.reply[n + 1 : n + 2] if not objects(s) and not _AGREE_RE.match(s))]
        text = " ".join(said)
        if PRONOUN_SUBJECT_RE.match(text):
            text = f"{question} {text}"
        category = "convention" if re.search(r"\b(?:only|never|always|no|must|not)\b", text, re.I) else "fact"
        self._make(text, category, USER)
        self.used_reply += said
        self.done = True

    def _make(self, text: str, category: str, who: str) -> None:
        text = clip(" ".join(text.replace("**", "").split()))
        rule = {"decision": "decision", "rejected_alternative": "rejected"}.get(category, category)
        self.made.append(Candidate(text, category, 0.8, self.seq, entity_names(text), rule=rule, said_by=who))


def _shares(a: str, b: str) -> bool:
    return bool(content_words(a) & content_words(b))


def _reasoned(item: str) -> bool:
    """A plan item worth keeping on its own: it gives a reason or states a rule."""
    return bool(REASON_RE.search(item) or re.search(r"\b(?:otherwise|never|always|only|instead|rather)\b", item, re.I))


def _proposal_text(proposal: str) -> str:
    return f"{proposal[0].upper()}{proposal[1:]}".rstrip("?") + ("" if proposal.endswith((".", ")")) else ".")


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
