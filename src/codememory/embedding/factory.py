from __future__ import annotations

from ..config import EmbeddingConfig
from .base import Embedder, EmbedderError

PROVIDERS = ("none", "sentence-transformers", "ollama", "openai")


def create_embedder(cfg: EmbeddingConfig) -> Embedder | None:
    """The configured embedder, or None when embeddings are switched off. Raises EmbedderError."""
    provider = cfg.provider.strip().lower()
    if provider in ("", "none", "off"):
        return None
    if provider in ("sentence-transformers", "sentence_transformers", "local"):
        from .sentence import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(cfg)
    if provider == "ollama":
        from .remote import OllamaEmbedder

        return OllamaEmbedder(cfg)
    if provider in ("openai", "openai-compatible"):
        from .remote import OpenAIEmbedder

        return OpenAIEmbedder(cfg)
    raise EmbedderError(f"unknown embedding.provider {cfg.provider!r}; choose one of: {', '.join(PROVIDERS)}")
