"""Query vectors kept for the process's lifetime: the same phrase is embedded once per model.

An agent's consecutive steps repeat most of what they ask: the plugin sends the same request (and its parts) at
every tool call of a turn, only the newest tool call's phrase is new. In the daemon one cache serves every project
and every caller (a `/retrieve`, and the hooks' and CLI's `/embed`); in a CLI process it saves the calls to the
daemon. Keyed on the vector space's name and the exact text embedded, so a model change never returns another
space's vector; least recently used entries leave first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codememory.core.config import EmbeddingConfig
    from codememory.embedding.base import Vectors

MAX_ENTRIES = 2048  # 384-d float32: 1.5 KiB a phrase, 3 MiB in all


def vector_space(name: str, cfg: EmbeddingConfig) -> str:
    """The key of the space a query vector lives in: the embedder's name and every setting that changes a query's
    vector (a prefix, a prompt, another query model, another server), so an edited config never gets old vectors."""
    return "\x1f".join((name, cfg.model, cfg.query_model, cfg.query_prompt, cfg.query_prefix, cfg.base_url))


class QueryVectors:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded = 0  # texts handed to a model
        self.reused = 0  # texts answered from here

    def get(self, model: str, text: str) -> Vectors | None:
        with self._lock:
            vector = self._vectors.get((model, text))
            if vector is not None:
                self._vectors.move_to_end((model, text))
            return vector

    def vectors(self, model: str, texts: Sequence[str], embed: Callable[[list[str]], Vectors]) -> list[Vectors]:
        """One vector per text: those seen before from here, the others from `embed` in one call (which may
        raise; nothing is kept then)."""
        found: dict[str, Vectors] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get((model, text))
                if vector is not None:
                    self._vectors.move_to_end((model, text))
                    found[text] = vector
            self.reused += sum(1 for t in texts if t in found)
        todo = [t for t in dict.fromkeys(texts) if t not in found]
        if todo:
            fresh = embed(todo)
            with self._lock:
                self.embedded += len(todo)
                for text, vector in zip(todo, fresh, strict=True):
                    vector = vector.copy()  # not a view: a kept row must not keep its whole batch alive
                    vector.flags.writeable = False  # shared between callers: nobody may change it in place
                    self._vectors[(model, text)] = vector
                    self._vectors.move_to_end((model, text))
                    found[text] = vector
                while len(self._vectors) > self.max_entries:
                    self._vectors.popitem(last=False)
        return [found[t] for t in texts]

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    def counts(self) -> dict[str, int]:
        with self._lock:
            kept = len(self._vectors)
            return {"queries_embedded": self.embedded, "queries_reused": self.reused, "queries_kept": kept}


QUERY_VECTORS = QueryVectors()  # the process's one cache
