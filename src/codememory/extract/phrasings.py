"""The phrasings of a choice or a refusal without a choice verb ("Postgres it is", "What fits is …", "The obvious
candidate would be X, but …", "X wouldn't do it: …"), and guesses, which state nothing yet: the patterns that
`rules` reads them with."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

# a guess anywhere in the sentence ("…; I'm assuming its data lives in /srv/jellyfin") is not knowledge yet
GUESS_RE = lazy_pattern(
    r"\bi(?:'m|\s+am)\s+(?:assuming|guessing)\b|\bi\s+(?:assume|guess(?:ed)?|presume|suspect)\b|\bmy\s+guess\b|"
    r"\b(?:presumably|apparently)\b",
    re.IGNORECASE,
)

# "Postgres it is: …" settles a choice; the subject must be a name, not "here"/"as"/"that" ("leave it as it is").
IT_IS_RE = lazy_pattern(
    r"^(?P<x>(?!(?:that|this|it|so|here|there|what|whatever|which|where|how|such|be)\b)[\w`][\w`.+/ -]{1,40}?)"
    r"(?<!\bas)(?<!\bhow)(?<!\bwhat)(?<!\bwhere)(?<!\bthat)\s+it\s+is\s*(?:[:.!,;\u2014\u2013-]|$)",
    re.IGNORECASE,
)
# "For the cache I'm using Redis": a topic and a first-person choice of what serves it.
TOPIC_CHOICE_RE = lazy_pattern(
    r"^for\s+(?!(?:now|example|instance|this|that|it|the\s+(?:record|moment|next\s+step|rest))\b)[^,]{2,50}?,?\s+"
    r"(?:i|we)(?:'m|\s+am|'re|\s+are|'ll|\s+will)\s+(?:going\s+to\s+)?(?:use|using|set|setting|go\s+with|going\s+with|"
    r"pick|picking|choose|choosing|rely\s+on|relying\s+on|stick\s+with|sticking\s+with)\s+(?P<x>[^.;!?]+)",
    re.IGNORECASE,
)
# "Refunds get their own table", "so it stays out of the database": where something lives, as a design choice.
PLACEMENT_RE = lazy_pattern(
    r"^(?P<x>(?!(?:it|this|that|they|each|every|one)\b)[A-Za-z][\w.-]*(?:\s+[\w.-]+){0,3})\s+(?:get|gets|have|has)\s+"
    r"(?:their|its)\s+own\s+[\w-]+"
    r"|\b(?:stays?|staying|kept|keeps?)\s+out\s+of\s+(?:the\s+)?[\w-]+",
    re.IGNORECASE,
)
# "A single db.t4g.micro is plenty for staging": a size or setup judged sufficient for its use.
SIZING_RE = lazy_pattern(
    r"^(?P<x>(?:a|an|the|one|two|three|\d+)\s+[^,]{3,60}?)\s+(?:is|are|should\s+be)\s+(?:plenty|enough|sufficient|"
    r"more\s+than\s+enough)\s+for\s+(?!(?:now|today|the\s+moment|this\s+test)\b)\w+",
    re.IGNORECASE,
)
# "I thought about a Redis lock, but …": the sentence before names what was chosen instead.
WEIGHED_RE = lazy_pattern(
    r"\b(?:i|we)\s+(?:considered|looked\s+at|looked\s+into|had\s+a\s+look\s+at|checked\s+out|evaluated|thought\s+"
    r"(?:about|of)|weighed|toyed\s+with)\b[^.]*?\bbut\b",
    re.IGNORECASE,
)
# "X is tempting, but it doesn't …": an option weighed and turned down in one sentence.
TEMPTING_RE = lazy_pattern(
    r"^(?P<y>(?:(?!\b(?:because|since|but|and|so|if|when|it|this|that|there)\b)[^,.;!?]){2,50}?)\s+(?:is|was|looks|"
    r"seems|sounds|would\s+be)\s+(?:\w+\s+)?(?:tempting|attractive|appealing|nice\s+in\s+theory|the\s+obvious\s+"
    r"(?:choice|option|pick)|an\s+obvious\s+(?:choice|option)|the\s+usual\s+(?:choice|answer|pick)|popular)\b"
    r"[^.;]{0,40}?,?\s+but\b",
    re.IGNORECASE,
)
# "The obvious candidate would be Core Data, but …": the usual pick, named and passed over in one breath.
OBVIOUS_BUT_RE = lazy_pattern(
    r"\b(?:the\s+)?(?:obvious|usual|natural|standard|default|textbook|classic)\s+(?:candidate|choice|option|pick|answer|"
    r"tool|fix|approach|move)\s+(?:would\s+be|is|was|here\s+is)\s+(?P<y>[^,;:]{2,40}?),?\s+but\b",
    re.IGNORECASE,
)
# "An index on merchant_id alone wouldn't do it: …": an option judged not to do the job, with why.
UNFIT_RE = lazy_pattern(
    r"^(?P<y>(?!(?:it|this|that|they|which|what|there|i|we|you)\b)[^,;:]{2,50}?)\s+(?:wouldn'?t|won'?t|doesn'?t|"
    r"does\s+not|would\s+not|will\s+not|can'?t|cannot)\s+(?:do\s+it|do\s+the\s+job|work\s+here|cut\s+it|"
    r"help(?:\s+here)?|fit(?:\s+here)?|be\s+enough|scale)\s*(?:[:;\u2014\u2013]|,?\s+(?:because|since|as)\b)",
    re.IGNORECASE,
)
# "What fits is a composite index on …", "The right fix here is …": the choice said as a verdict.
VERDICT_RE = lazy_pattern(
    r"^(?:so\s+|here\s+)?(?:what\s+(?:fits|works)(?:\s+(?:best|here))?|the\s+(?:best|right|simplest|cleanest|safest|"
    r"proper)\s+(?:fit|option|choice|approach|fix|tool)(?:\s+here)?)\s+is\s+(?P<x>[^.;!?]{3,})",
    re.IGNORECASE,
)
# "…, so I'd rule that out" / "which rules it out": the subject of the sentence is what was turned down.
RULE_OUT_RE = lazy_pattern(
    r"(?:,\s*|\s)(?:so|which\s+is\s+why|that'?s\s+why)\s+(?:i'?d|we'?d|i|we|i\s+would|we\s+would)\s+(?:rule|ruled|"
    r"skip|drop|avoid)\s+(?:that|it|this|them)(?:\s+out)?\b|\bwhich\s+rules\s+(?:it|that|this|them)\s+out\b",
    re.IGNORECASE,
)
SUBJECT_RE = lazy_pattern(r"^(?P<y>(?:(?!\b(?:is|are|was|were|has|have|would|does|do|can|will)\b)[^,;:]){3,60})")
# "…, so a status column can't represent it": an option judged unable to do the job.
INCAPABLE_RE = lazy_pattern(
    r",\s*so\s+(?:a|an|the)\s+(?P<y>[^,]{3,60}?)\s+(?:can'?t|cannot|won'?t|wouldn'?t|doesn'?t|does\s+not)\s+"
    r"(?:work|fit|represent|handle|scale|cope|cover|express|model|hold|capture)\b",
    re.IGNORECASE,
)
# The user turning a named thing down with the reason in the same breath (the user's only): "no LoTW, the club wants
# paper cards", "No web thing: I'd be the one keeping it alive". Small talk ("no worries, …", "no rush: …") and a
# report ("no errors, the build is green") name no option.
NO_THING_WHY_RE = lazy_pattern(
    r"^\W*(?:no|nah)\s+(?!(?:problem|problems|worries|rush|idea|thanks|need|way|luck|doubt|pressure|stress|hurry|"
    r"clue|changes?|difference|errors?|issues?|warnings?|failures?|one|more|longer|matter|offence|offense|"
    # small talk and reports of how things went ("nah all good", "no dice, still …", "no joy, it still …")
    r"all|dice|joy|sweat|biggie|bother|harm|fuss|kidding|chance|wonder|surprise|go|ok|okay)\b)"
    # a ban list ("no X, no Y") is a rule of its own, and "no X, just Y" says what to do instead, not why
    r"(?P<y>[\w.+-]+(?:\s+[\w.+-]+){0,2})\s*(?:[,;]|(?<!:):(?!:))\s*(?!(?:no|nor|just|only|instead|but|and)\b)\S+(?:\s+\S+){2,}",
    re.IGNORECASE,
)
