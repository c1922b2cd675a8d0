"""Embedding servers over HTTP: Ollama's /api/embed and any OpenAI-compatible /v1/embeddings.

Uses the standard library's urllib: two small JSON calls do not justify an HTTP client dependency.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from codememory.core.config import EmbeddingConfig
from codememory.embedding.base import Embedder, Vectors, normalize
from codememory.errors import EmbedderError


def _post(url: str, payload: dict[str, Any], headers: dict[str, str], timeout: float) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()[:300].decode("utf-8", "replace")
        raise EmbedderError(f"{url} answered HTTP {exc.code}: {body}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise EmbedderError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None
    except json.JSONDecodeError:
        raise EmbedderError(f"{url} did not answer JSON") from None


class _RemoteEmbedder(Embedder):
    def __init__(self, cfg: EmbeddingConfig) -> None:
        if not cfg.model:
            raise EmbedderError(f"embedding.model is empty: name the {cfg.provider} model to use")
        self.cfg = cfg
        self.name = f"{cfg.provider}:{cfg.model}"

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        out: list[list[float]] = []
        for i in range(0, len(texts), self.cfg.batch_size):
            batch = [self.cfg.document_prefix + t for t in texts[i : i + self.cfg.batch_size]]
            out.extend(self._embed(batch))
        return normalize(out)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_queries([text])[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return normalize(self._embed([self.cfg.query_prefix + t for t in texts]))

    def _embed(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError


class OllamaEmbedder(_RemoteEmbedder):
    def _embed(self, texts: list[str]) -> list[list[float]]:
        base = (self.cfg.base_url or "http://127.0.0.1:11434").rstrip("/")
        data = _post(f"{base}/api/embed", {"model": self.cfg.model, "input": texts}, {}, self.cfg.timeout)
        vectors = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise EmbedderError(f"{base}/api/embed answered without {len(texts)} embeddings")
        return vectors


class OpenAIEmbedder(_RemoteEmbedder):
    def _embed(self, texts: list[str]) -> list[list[float]]:
        base = (self.cfg.base_url or "https://api.openai.com/v1").rstrip("/")
        headers = {}
        if self.cfg.api_key_env:
            key = os.environ.get(self.cfg.api_key_env)
            if not key:
                raise EmbedderError(f"environment variable {self.cfg.api_key_env} (embedding.api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        data = _post(f"{base}/embeddings", {"model": self.cfg.model, "input": texts}, headers, self.cfg.timeout)
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != len(texts):
            raise EmbedderError(f"{base}/embeddings answered without {len(texts)} embeddings")
        return [item["embedding"] for item in sorted(items, key=lambda d: d.get("index", 0))]
