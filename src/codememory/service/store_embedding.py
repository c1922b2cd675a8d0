"""The `Store`'s embedding methods: how much of the store meaning-based search sees, and computing the vectors
that are missing (after enabling a model, a model change, or memories edited or pulled)."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable

from codememory.embedding.semantic import Semantic
from codememory.errors import InvalidInput
from codememory.service.results import EmbeddingCoverage
from codememory.store.database import Database


class EmbeddingAccess:
    db: Database
    semantic: Semantic

    def embed_ids(self, ids: builtins.list[str]) -> int:
        """Compute the vectors of these memories now (those missing or computed from other text)."""
        if not self.semantic.configured or not ids:
            return 0
        pks = [pk for _, pk in self.db.get_pk_map(ids)]
        done = 0
        for i in range(0, len(pks), 256):
            n = self.semantic.backfill(256, pks[i : i + 256])
            if not n and self.semantic.reason:
                break  # left without vectors: a search or `codememory embed` fills them in later
            done += n
        return done

    def embedding_coverage(self) -> EmbeddingCoverage:
        """How much of the store meaning-based search sees."""
        total = self.db.count_all()
        model = self.semantic.model
        if model is None:
            return EmbeddingCoverage(None, total, 0, 0.0, self.semantic.reason)
        done = total - self.db.count_without_vector(model)
        share = math.floor(done / total * 10_000) / 10_000 if total else 1.0  # 1.0 only when complete
        return EmbeddingCoverage(model, total, done, share, None)

    def embed(self, *, progress: Callable[[int, int], None] | None = None, batch: int = 64) -> int:
        """Embed every memory without a vector from the configured model (or whose text changed);
        after a model change this re-embeds everything. Returns how many were embedded."""
        model = self.semantic.model
        if model is None:
            raise InvalidInput(f"cannot embed: {self.semantic.reason}")
        total = self.db.count_needing_embedding(model)
        done = 0
        while done < total:
            n = self.semantic.backfill(batch)
            if n == 0:
                if self.semantic.reason:
                    raise InvalidInput(f"cannot embed: {self.semantic.reason}")
                break
            done += n
            if progress:
                progress(done, total)
        self.db.drop_other_embeddings(model)
        self.semantic.maintain()  # the vector index's graph extended now, not in a later search
        return done
