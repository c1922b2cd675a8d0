"""Settings: defaults, then `<project>/.codememory/config.toml`, then `CODEMEMORY_<SECTION>_<KEY>` env vars.

[embedding]
provider = "sentence-transformers"   # none | sentence-transformers | ollama | openai
model = "all-MiniLM-L6-v2"           # a local folder, a model id, or an API model name
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import InvalidInput

CONFIG_NAME = "config.toml"


@dataclass
class EmbeddingConfig:
    provider: str = "none"
    model: str = ""
    # Asymmetric models: a different model (or prompt / prefix) for queries than for documents.
    query_model: str = ""
    query_prompt: str = ""  # sentence-transformers prompt name, e.g. "query"
    query_prefix: str = ""  # literal prefix, e.g. "search_query: "
    document_prefix: str = ""
    base_url: str = ""  # ollama: http://127.0.0.1:11434 ; openai-compatible: http://host:port/v1
    api_key_env: str = ""  # name of the env var holding the key (never the key itself)
    timeout: float = 30.0
    batch_size: int = 32
    device: str = "cpu"


@dataclass
class SearchConfig:
    ann_threshold: int = 50_000  # exact vector search below this many embeddings, an ANN index above
    neighbour_weight: float = 0.4  # context from neighbouring turns of the same session (0 switches it off)


@dataclass
class DedupConfig:
    text_ratio: float = 0.95  # rapidfuzz ratio (0..1) at or above which a new memory is a duplicate
    cosine: float = 0.92


@dataclass
class LinksConfig:
    cosine: float = 0.75  # neighbours at or above this similarity are linked on write
    max_links: int = 5


@dataclass
class Config:
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    links: LinksConfig = field(default_factory=LinksConfig)


def _coerce(value: Any, like: Any, where: str) -> Any:
    try:
        if isinstance(like, bool):
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "on")
            return bool(value)
        if isinstance(like, int):
            return int(value)
        if isinstance(like, float):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"config {where}: expected {type(like).__name__}, got {value!r}") from None


def load_config(store_dir: Path | None) -> Config:
    cfg = Config()
    data: dict[str, Any] = {}
    path = store_dir / CONFIG_NAME if store_dir else None
    if path and path.is_file():
        try:
            import tomllib  # only when there is a config file

            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read {path}: {exc}") from None
    for section_field in fields(cfg):
        section = getattr(cfg, section_field.name)
        values = data.get(section_field.name, {})
        if not isinstance(values, dict):
            raise InvalidInput(f"config [{section_field.name}] must be a table")
        known = {f.name for f in fields(section)}
        unknown = set(values) - known
        if unknown:
            raise InvalidInput(
                f"config [{section_field.name}]: unknown key(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )
        for f in fields(section):
            where = f"{section_field.name}.{f.name}"
            env = os.environ.get(f"CODEMEMORY_{section_field.name}_{f.name}".upper())
            if env is not None:
                setattr(section, f.name, _coerce(env, getattr(section, f.name), where))
            elif f.name in values:
                setattr(section, f.name, _coerce(values[f.name], getattr(section, f.name), where))
    return cfg
