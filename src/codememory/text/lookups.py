"""Requests the project's own files answer by looking: a count, a listing, or a value read from a file they name.

"How many staging models are there?", "List the migration files.", "Show me the last three commits.", "Which Python
version does pyproject.toml require?", "What is config-version set to in dbt/dbt_project.yml?": the agent answers
each by listing, counting or opening a file, and no note in the memory is needed for it (a memory about staging
models cannot count them; the one that says dependencies are managed with uv does not say which Python
pyproject.toml requires). Yet their words are the store's words ("staging models", "migration", "pyproject.toml"),
so the memories about those things were put in front of every such chore. Such a request calls for no memory: a
memory the agent needs while looking (a gotcha about the file it opens) comes with that step (retrieval/step.py).

Read narrowly, in English: one sentence that opens with "how many", "count", "list" or "show (me)", or a question
opening with "what", "which", "is", "are", "does" or "do" that names a file or a path (text/named.py) to read it
from; never one that asks why, how to, what to watch for or what is wrong (those a memory answers), nor a request of
several sentences (it asks more than a look). "Which Stripe API version are we pinned to?" names no file: the memory
may be where the answer is.
"""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.asks import states_a_fault
from codememory.text.named import named_files

_COUNT_OR_LIST_RE = lazy_pattern(r"^(?:how\s+many|count|list|show(?:\s+me)?)\b", re.IGNORECASE)
# "how many" counts what there is ("how many staging models are there?"); "how many retries does the webhook get?"
# asks for a setting, which a memory may state (text/asks.py asked_value) as well as a file the request names
_COUNT_OF_WHAT_THERE_IS_RE = lazy_pattern(r"\b(?:are\s+there|is\s+there|exist|do\s+we\s+have)\b", re.IGNORECASE)
_READ_FROM_FILE_RE = lazy_pattern(r"^(?:what|which|is|are|does|do)\b", re.IGNORECASE)
# what a file states as a value (a version, a setting's value, a port): "which tool manages the dependencies in
# pyproject.toml?" asks what the project chose, which a memory may say better than the file
_A_STATED_VALUE_RE = lazy_pattern(
    r"\b(?:versions?|set\s+to|values?|ports?|numbers?|require[sd]?|empty|exists?|defined|listed)\b", re.IGNORECASE
)
# asks more than a look: a reason, a way, a caution, a judgement
_MORE_THAN_A_LOOK_RE = lazy_pattern(
    r"\b(?:why|how\s+(?:do|can|should|would|to)|should|safe|careful|watch\s+out|gotchas?|pitfalls?|problems?|issues?"
    r"|bugs?|wrong|best|better|recommend\w*|instead"
    # what was decided or agreed, and whether something is allowed: what a memory holds, not a file
    r"|decid\w*|decisions?|reasons?|chose|chosen|rules?|conventions?|agreed|avoid|ok|okay|allowed|must)\b",
    re.IGNORECASE,
)
_SENTENCE_END_RE = lazy_pattern(r"[.!?]\s+\S")


def answered_by_looking(request: str) -> bool:
    """Whether the request only asks for a count, a listing, or a value read from a file it names."""
    text = " ".join(request.split()).strip("\"'`“”‘’ ")
    if not text or _SENTENCE_END_RE.search(text.rstrip(".!?")) or _MORE_THAN_A_LOOK_RE.search(text):
        return False
    if states_a_fault(text):
        return False
    if re.match(r"^how\s+many\b", text, re.IGNORECASE):
        return bool(_COUNT_OF_WHAT_THERE_IS_RE.search(text) or named_files(text))
    if _COUNT_OR_LIST_RE.match(text) and not re.match(r"^show\s+(?:me\s+)?how\b", text, re.IGNORECASE):
        return True
    return bool(_READ_FROM_FILE_RE.match(text) and named_files(text) and _A_STATED_VALUE_RE.search(text))
