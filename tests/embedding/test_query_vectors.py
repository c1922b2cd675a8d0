"""Query vectors from the default model: one cache per process, batches and threads that change no vector, and the
engine's OpenMP settings kept out of the environment of everything else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from codememory import Store
from codememory.core.config import EmbeddingConfig
from codememory.embedding.e5_small import MAX_AUTO_THREADS, E5SmallEmbedder, engine_threads
from codememory.embedding.query_cache import QUERY_VECTORS, QueryVectors
from support.daemon import isolated_env, make_project, spawn, wait_for

PHRASES = [
    "which HTTP library does the webhook worker use",
    "retry config for event ingestion when the queue is full",
    "x",
    "Ünïcode phrase: déploiement échoué",
]


@pytest.mark.slow
def test_a_batch_on_any_number_of_threads_gives_the_vectors_of_single_calls() -> None:
    one = E5SmallEmbedder(EmbeddingConfig(threads=1))
    two = E5SmallEmbedder(EmbeddingConfig(threads=2))
    assert (one.threads, two.threads) == (1, 2)
    singles = np.vstack([one.embed_query(p) for p in PHRASES])
    np.testing.assert_allclose(one.embed_queries(PHRASES), singles, rtol=0, atol=1e-6)
    np.testing.assert_allclose(two.embed_queries(PHRASES), singles, rtol=0, atol=1e-6)
    np.testing.assert_allclose(two.embed_documents(PHRASES), one.embed_documents(PHRASES), rtol=0, atol=1e-6)


def test_threads_follow_the_setting_else_the_cores() -> None:
    assert engine_threads(EmbeddingConfig(threads=3)) == 3
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert engine_threads(EmbeddingConfig()) == min(MAX_AUTO_THREADS, cores)


@pytest.mark.slow
@pytest.mark.default_model
def test_a_cached_phrase_vector_equals_a_fresh_one_and_a_repeated_step_embeds_nothing(tmp_path: Path) -> None:
    Store.init(tmp_path)[0].close()
    with Store.open(tmp_path) as store:
        store.add("Use httpx, not requests: the webhook worker needs HTTP/2")
        request = ["Which HTTP library does the webhook worker use? And how are its retries configured?"]
        before = QUERY_VECTORS.counts()["queries_embedded"]
        first = store.retrieve(request, touch=False)
        embedded = QUERY_VECTORS.counts()["queries_embedded"]
        assert embedded - before >= 3  # the request and its two parts, in one model call
        again = store.retrieve(request, touch=False)  # the plugin asks the same at the next tool call
        assert QUERY_VECTORS.counts()["queries_embedded"] == embedded
        assert [m.id for m in again.memories] == [m.id for m in first.memories]
        store.retrieve([*request, "read src/webhooks/worker.py"], touch=False)  # a later step: one new phrase
        assert QUERY_VECTORS.counts()["queries_embedded"] == embedded + 1

        kept = store.semantic.embed_query(request[0])
        assert kept is not None and not kept.flags.writeable  # shared: nobody may change it in place
        fresh = E5SmallEmbedder(EmbeddingConfig()).embed_query(request[0])
        np.testing.assert_array_equal(kept, fresh)


def test_the_cache_keeps_the_recently_used_and_never_mixes_models() -> None:
    calls: list[list[str]] = []

    def model(tag: float) -> Callable[[list[str]], np.ndarray]:
        def embed(texts: list[str]) -> np.ndarray:
            calls.append(list(texts))
            return np.full((len(texts), 2), tag, dtype=np.float32)

        return embed

    cache = QueryVectors(max_entries=2)
    cache.vectors("a", ["one", "two"], model(1.0))
    cache.vectors("a", ["one"], model(1.0))  # "one" is now the most recently used
    cache.vectors("a", ["three", "three"], model(1.0))  # pushes "two" out
    assert calls == [["one", "two"], ["three"]]
    assert cache.get("a", "two") is None and cache.get("a", "one") is not None
    other = cache.vectors("b", ["one"], model(2.0))  # another model: its own vector
    assert float(other[0][0]) == 2.0 and calls[-1] == ["one"]
    assert cache.counts() == {"queries_embedded": 4, "queries_reused": 1, "queries_kept": 2}


_LOAD = """
import json, os
from codememory.core.config import EmbeddingConfig
from codememory.embedding.e5_small import E5SmallEmbedder
E5SmallEmbedder(EmbeddingConfig()).embed_query("warm")
print(json.dumps({k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}))
"""


@pytest.mark.parametrize(
    ("given", "left"),
    [
        ({}, {"OMP_WAIT_POLICY": None, "OMP_NUM_THREADS": None}),
        ({"OMP_WAIT_POLICY": "ACTIVE", "OMP_NUM_THREADS": "1"}, {"OMP_WAIT_POLICY": "ACTIVE", "OMP_NUM_THREADS": "1"}),
    ],
)
def test_loading_the_model_leaves_the_users_openmp_settings_as_they_were(
    given: dict[str, str], left: dict[str, str | None]
) -> None:
    """The engine is loaded with passive waiting and one thread unless the user chose otherwise; a child process
    (an agent CLI, torch) inherits only what the user set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))} | given
    done = subprocess.run([sys.executable, "-c", _LOAD], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == left


@pytest.mark.slow
def test_the_daemon_embeds_a_repeated_request_once(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "user", CODEMEMORY_EMBEDDING_PROVIDER=None)  # the default model
    root = tmp_path / "project"
    make_project(env, root, "Use httpx, not requests: the webhook worker needs HTTP/2")
    daemon = spawn(env)
    try:
        client = daemon.client(timeout=300)
        # the start-up warm-up's own search embeds its query first; nothing else embeds meanwhile
        wait_for("the warm-up's search", lambda: client.health()["embedding"]["queries_embedded"] >= 1)
        counts = []
        for phrases in (["which HTTP client does the webhook worker use"],) * 2 + (["the worker's retry policy"],):
            client.retrieve(phrases, root)
            counts.append(client.health()["embedding"]["queries_embedded"])
        assert [counts[1] - counts[0], counts[2] - counts[1]] == [0, 1], counts
    finally:
        assert daemon.terminate() == 0


def test_a_setting_that_changes_a_query_vector_changes_its_space_and_a_kept_vector_owns_its_memory() -> None:
    import numpy as np

    from codememory.core.config import EmbeddingConfig
    from codememory.embedding.query_cache import QueryVectors, vector_space

    plain = EmbeddingConfig(provider="ollama", model="nomic-embed-text")
    prefixed = EmbeddingConfig(provider="ollama", model="nomic-embed-text", query_prefix="search_query: ")
    elsewhere = EmbeddingConfig(provider="ollama", model="nomic-embed-text", base_url="http://10.0.0.2:11434")
    spaces = {vector_space("ollama:nomic-embed-text", c) for c in (plain, prefixed, elsewhere)}
    assert len(spaces) == 3

    cache = QueryVectors()
    batch = np.ones((4, 3), dtype=np.float32)
    [kept] = cache.vectors("space", ["a"], lambda texts: batch[: len(texts)])
    assert kept.base is None and not kept.flags.writeable
