"""The stored memories an extraction prompt shows the model, so that it neither repeats them nor misses that
the session changed one: the most relevant to the transcript first (shared words, then importance, then
recency), within `[llm] known_memories_tokens`. Each is shown with its id, which the model may name in
`already_known` (the session restated it) or in a new memory's `supersedes` (the session changed it)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.compress import shorten
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.privacy import scrub
from codememory.text.tokens import estimate_tokens

MAX_CANDIDATES = 1000  # the newest live memories ranked for a prompt (a store rarely holds more worth showing)
MEMORY_CHARS = 240
_WORD_RE = lazy_pattern(r"[a-z0-9_][a-z0-9_.+#-]*[a-z0-9_+#]", re.IGNORECASE)
# Words every coding transcript shares: they say nothing about which memory is relevant.
_COMMON = frozenset(
    "the and for with that this from have has was were are not but you your use used using can will should "
    "would could into when then than there their them they what which while also just like make made run ran "
    "test tests file files code now all any one two its it's our out get got let lets let's need want".split()
)


@dataclass(frozen=True)
class KnownMemories:
    text: str  # the prompt's lines, "- mem_1a2b3c4d [decision] Use SQLite for the cache."
    ids: frozenset[str]  # the ids shown: the only ones the model's answer may name


def _words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD_RE.finditer(text)) if len(w) > 2 and w not in _COMMON}


def known_memories(db: Database, transcript: str, budget_tokens: int) -> KnownMemories:
    """The memories to show for a transcript window, within `budget_tokens` (0: none)."""
    if budget_tokens <= 0:
        return KnownMemories("", frozenset())
    memories = db.list_memories(Filters(), sort="created", limit=MAX_CANDIDATES)
    window = _words(transcript)
    ranked = []
    for order, mem in enumerate(memories):  # newest first
        words = _words(mem.text)
        shared = len(words & window) / math.sqrt(len(words)) if words else 0.0
        ranked.append((-shared, -mem.importance, order, mem))
    ranked.sort(key=lambda r: r[:3])
    lines: list[str] = []
    ids: set[str] = set()
    used = 0
    for *_, mem in ranked:
        line = f"- {mem.id} [{mem.category}] {shorten(scrub(mem.text), MEMORY_CHARS)}"
        cost = estimate_tokens(line) + 1
        if used + cost > budget_tokens:
            continue  # a shorter one further down may still fit
        lines.append(line)
        ids.add(mem.id)
        used += cost
    return KnownMemories("\n".join(lines), frozenset(ids))
