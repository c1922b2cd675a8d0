"""One Milvus collection through pymilvus' MilvusClient: its schema and indexes, and the few calls publishing and
searching need. The same code serves Milvus Lite (a local `.db` file, the tests), a Milvus server or cluster
(`http(s)://host:19530` with a token) and Zilliz Cloud.

The collection (one per organisation; `[remote] collection`):
- `key` (primary, "<project>/<memory id>": memory ids are 8 hex digits, unique in a project, not across hundreds),
  `project` (the partition key: a search filtered by project reads only its partitions), `memory_id`;
- `text` (analysed: standard tokenizer, lower-case, English stemmer and stop words) and `sparse`, which Milvus
  fills from `text` with its built-in BM25 function (no client-side sparse model, nothing to keep in sync);
- `dense`: the project's embedding model's vector (COSINE, HNSW M=16 efConstruction=200, searched with ef=128);
- `category`, `tags`, `entities` (arrays), `importance`, `source`, `created_at`, `updated_at`, `content_hash`;
- `session` and `seq`: the conversation session and turn the memory's `source` names ("D3:12" -> "D3", 12;
  empty and -1 when it names none), read from the source that is sent anyway. The client's fusion
  (org_fusion.py) scores a hit with its neighbouring turns, as the local ranking does.
The collection's properties (and description) record the embedding model and dimension: vectors of two models
are not comparable, so a project embedding with another model is refused rather than mixed in.

Filter expressions are built from literals here because Milvus Lite does not accept filter templates
(`expr_params`); every value put in one is checked against a small alphabet first (`literal`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from codememory.core.config import RemoteConfig
from codememory.core.lazy_pattern import lazy_pattern
from codememory.errors import InvalidInput, RemoteUnavailable
from codememory.text.privacy import scrub_message

if TYPE_CHECKING:
    from pymilvus import MilvusClient

T = TypeVar("T")

SCHEMA_TAG = "codememory-2"  # -1 had no session/seq: such a collection is refused with a way out
TEXT_BYTES = 65_535  # VARCHAR max_length counts bytes; a memory's 10,000 characters fit in UTF-8
MAX_TAGS = 64
MAX_ENTITIES = 64
ANALYZER: dict[str, Any] = {
    "tokenizer": "standard",
    "filter": ["lowercase", {"type": "stemmer", "language": "english"}, {"type": "stop", "stop_words": ["_english_"]}],
}
DENSE_INDEX: dict[str, Any] = {
    "index_type": "HNSW",
    "metric_type": "COSINE",
    "params": {"M": 16, "efConstruction": 200},
}
SPARSE_INDEX: dict[str, Any] = {
    "index_type": "SPARSE_INVERTED_INDEX",
    "metric_type": "BM25",
    "params": {"inverted_index_algo": "DAAT_MAXSCORE", "bm25_k1": 1.2, "bm25_b": 0.75},
}
DENSE_SEARCH: dict[str, Any] = {"metric_type": "COSINE", "params": {"ef": 128}}
SPARSE_SEARCH: dict[str, Any] = {"metric_type": "BM25", "params": {"drop_ratio_search": 0.0}}
RRF_K = 60
POOL = 50  # candidates of each leg (the local ranking's LEXICAL_POOL/SEMANTIC_POOL): top 10 per leg starved RRF
OUTPUT_FIELDS = [
    "project",
    "memory_id",
    "text",
    "category",
    "tags",
    "entities",
    "importance",
    "source",
    "created_at",
    "updated_at",
    "session",
    "seq",
]
_LITERAL_RE = lazy_pattern(r"[A-Za-z0-9][A-Za-z0-9_.:@/+#-]{0,199}")


def literal(value: str, what: str) -> str:
    """`value` as a quoted string for a filter expression; InvalidInput when it holds a character outside the
    alphabet (letters, digits, `_ . : @ / + # -`), so no value can end the string or add a clause."""
    if not _LITERAL_RE.fullmatch(value):
        raise InvalidInput(f"cannot filter the remote by {what} {value!r}: use letters, digits and _ . : @ / + # -")
    return f'"{value}"'


def is_literal(value: str) -> bool:
    return bool(_LITERAL_RE.fullmatch(value))


def display_uri(uri: str) -> str:
    """The uri without credentials (`http://user:pw@host` -> `http://host`), for messages and results."""
    parts = urlsplit(uri)
    if parts.scheme and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return uri


def is_lite(uri: str) -> bool:
    return uri.endswith(".db") and "://" not in uri


_reuse = False
_pool_lock = threading.Lock()
_pool: dict[str, _Pooled] = {}
LITE_IDLE_SECONDS = 5.0


class _Pooled:
    """A connection kept by a long-lived process; `lock`: one thread at a time (Milvus Lite's engine runs in this
    process and is not meant for concurrent calls), re-entrant for a search made inside another's block."""

    def __init__(self, remote: MilvusRemote) -> None:
        self.remote = remote
        self.lock = threading.RLock()
        self.timer: threading.Timer | None = None


def reuse_connections(on: bool = True) -> None:
    """Keep one connection per remote for the life of this process (the daemon): a search then skips the
    connect and the collection's describe/load round trips (with Milvus Lite, starting its in-process server
    over the file again). A Milvus Lite file is locked by the process that holds it, so that connection is
    closed after LITE_IDLE_SECONDS without a call: `codememory publish` or a search from another process can
    take its turn between an agent's bursts of queries. Off by default: a command makes one call and exits."""
    global _reuse
    _reuse = on
    if not on:
        with _pool_lock:
            for key in list(_pool):
                _drop(key)


def _drop(key: str) -> None:
    """Close and forget a pooled connection (with `_pool_lock` held)."""
    entry = _pool.pop(key, None)
    if entry is not None:
        if entry.timer is not None:
            entry.timer.cancel()
        with entry.lock:
            entry.remote.close()


def _idle(key: str, entry: _Pooled) -> None:
    with _pool_lock:
        if _pool.get(key) is entry and entry.lock.acquire(blocking=False):
            entry.lock.release()
            _drop(key)


@contextlib.contextmanager
def connect(cfg: RemoteConfig) -> Iterator[MilvusRemote]:
    """A connection to `cfg`'s collection for the `with` block: a new one closed after it, or, once
    `reuse_connections()` was called, the one this process keeps (dropped when a call through it fails, so the
    next block connects again)."""
    if not _reuse:
        with MilvusRemote(cfg) as remote:
            yield remote
        return
    args = _client_args(cfg)
    key = hashlib.sha256(json.dumps([sorted(args.items()), cfg.collection], default=str).encode()).hexdigest()
    with _pool_lock:
        entry = _pool.get(key)
        if entry is None:
            entry = _pool[key] = _Pooled(MilvusRemote(cfg))
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
    failed = False
    with entry.lock:
        try:
            yield entry.remote
        except RemoteUnavailable:
            failed = True
            raise
        finally:
            with _pool_lock:
                if failed:
                    if _pool.get(key) is entry:
                        del _pool[key]
                    entry.remote.close()
                elif entry.remote.lite_path and _pool.get(key) is entry:
                    entry.timer = threading.Timer(LITE_IDLE_SECONDS, _idle, (key, entry))
                    entry.timer.daemon = True
                    entry.timer.start()


def _quiet_pymilvus() -> None:
    """pymilvus logs every failed call with its traceback on stderr; we report the failure ourselves."""
    for name in ("pymilvus", "pymilvus.milvus_client", "pymilvus.decorators"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _client_args(cfg: RemoteConfig) -> dict[str, Any]:
    uri = cfg.uri.strip()
    if not uri:
        raise RemoteUnavailable(
            "no remote configured: set [remote] uri in ~/.config/codememory/config.toml (or a trusted project config)"
        )
    if is_lite(uri):
        uri = os.path.abspath(os.path.expanduser(uri))
    args: dict[str, Any] = {"uri": uri, "timeout": cfg.timeout}
    if cfg.token_env:
        token = os.environ.get(cfg.token_env, "")
        if not token:
            raise RemoteUnavailable(f"[remote] token_env names {cfg.token_env}, which is not set")
        args["token"] = token
    if cfg.db_name:
        args["db_name"] = cfg.db_name
    tls = {
        "server_pem_path": cfg.server_pem_path,
        "ca_pem_path": cfg.ca_pem_path,
        "client_pem_path": cfg.client_pem_path,
        "client_key_path": cfg.client_key_path,
        "server_name": cfg.server_name,
    }
    args.update({k: os.path.expanduser(v) if k.endswith("_path") else v for k, v in tls.items() if v})
    if any(v for k, v in tls.items() if k.endswith("_path")):
        args["secure"] = True
    return args


class MilvusRemote:
    """A connection to the collection. Every failure of Milvus (unreachable, refused, a bad file) is raised as
    RemoteUnavailable naming the server (never its credentials)."""

    def __init__(self, cfg: RemoteConfig) -> None:
        self.cfg = cfg
        self.collection = cfg.collection
        self.where = display_uri(cfg.uri.strip())
        args = _client_args(cfg)
        self.lite_path = args["uri"] if is_lite(args["uri"]) else None
        self._meta: dict[str, Any] | None = None
        try:
            import pymilvus
        except ImportError:
            raise RemoteUnavailable(
                'pymilvus is not installed: pip install "codememory[milvus]" (pymilvus and milvus-lite)'
            ) from None
        _quiet_pymilvus()
        self.pymilvus = pymilvus
        self.client: MilvusClient = self._call("connect", lambda: pymilvus.MilvusClient(**args))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a connection that failed is not worth reporting
            self.client.close()
        if self.lite_path:
            # Milvus Lite serves a file from an in-process server that locks it until the process exits: let it
            # go, so that the daemon and a command (or two commands) can take turns on the same file.
            with contextlib.suppress(Exception):
                from milvus_lite.server_manager import server_manager_instance

                server_manager_instance.release_server(self.lite_path)

    def __enter__(self) -> MilvusRemote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except (InvalidInput, RemoteUnavailable):
            raise
        except Exception as exc:  # pymilvus raises MilvusException, grpc errors, OSError, ValueError...
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise RemoteUnavailable(f"Milvus at {self.where}: {what} failed: {scrub_message(str(message))}") from None

    # ------------------------------------------------------------------ the collection
    def _description(self) -> dict[str, Any] | None:
        """The collection's recorded model and dimension, None when it does not exist."""
        if not self._call("list collections", lambda: self.client.has_collection(self.collection)):
            return None
        info = self._call("describe", lambda: self.client.describe_collection(self.collection))
        props = info.get("properties") or {}
        meta: Any = {k.removeprefix("codememory."): v for k, v in props.items() if k.startswith("codememory.")}
        if not meta:  # not every deployment keeps custom properties; the description holds the same
            try:
                meta = json.loads(info.get("description") or "{}")
            except ValueError:
                meta = {}
        if isinstance(meta, dict) and meta.get("schema") == "codememory-1":
            raise RemoteUnavailable(
                f"Milvus at {self.where}: collection {self.collection!r} has codememory's first schema (no "
                "session/seq fields): publish to another [remote] collection, or drop this one and publish again"
            )
        if not isinstance(meta, dict) or meta.get("schema") != SCHEMA_TAG:
            raise RemoteUnavailable(
                f"Milvus at {self.where}: collection {self.collection!r} was not created by codememory; "
                "choose another [remote] collection"
            )
        return meta

    def ensure(self, model: str, dim: int) -> None:
        """Create the collection for vectors of `model` (`dim`) when missing; refuse one made for another model."""
        meta = self._description()
        if meta is None:
            self._create(model, dim)
        elif meta.get("model") != model or str(meta.get("dim")) != str(dim):
            raise RemoteUnavailable(
                f"collection {self.collection!r} at {self.where} holds vectors of {meta.get('model')} "
                f"({meta.get('dim')} dimensions); this project embeds with {model} ({dim}): use the same "
                "[embedding] model as the organisation, or another [remote] collection"
            )
        self._call("load", lambda: self.client.load_collection(self.collection))

    def open(self) -> dict[str, Any]:
        """For searching: the collection's model and dimension, loaded; RemoteUnavailable when it does not exist.
        Asked once per connection (a kept one fails and is dropped if the collection goes away meanwhile)."""
        if self._meta is not None:
            return self._meta
        meta = self._description()
        if meta is None:
            raise RemoteUnavailable(
                f"Milvus at {self.where} has no collection {self.collection!r} yet: `codememory publish` creates it"
            )
        self._call("load", lambda: self.client.load_collection(self.collection))
        self._meta = meta
        return meta

    def _create(self, model: str, dim: int) -> None:
        dt = self.pymilvus.DataType
        description = json.dumps({"schema": SCHEMA_TAG, "model": model, "dim": dim})
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False, description=description)
        schema.add_field("key", dt.VARCHAR, is_primary=True, max_length=512)
        schema.add_field("project", dt.VARCHAR, max_length=256, is_partition_key=True)
        schema.add_field("memory_id", dt.VARCHAR, max_length=32)
        schema.add_field("text", dt.VARCHAR, max_length=TEXT_BYTES, enable_analyzer=True, analyzer_params=ANALYZER)
        schema.add_field("category", dt.VARCHAR, max_length=64)
        schema.add_field("tags", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_TAGS, max_length=128)
        schema.add_field("entities", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=MAX_ENTITIES, max_length=128)
        schema.add_field("importance", dt.FLOAT)
        schema.add_field("source", dt.VARCHAR, max_length=1024)
        schema.add_field("created_at", dt.VARCHAR, max_length=64)
        schema.add_field("updated_at", dt.VARCHAR, max_length=64)
        schema.add_field("content_hash", dt.VARCHAR, max_length=64)
        schema.add_field("session", dt.VARCHAR, max_length=256)
        schema.add_field("seq", dt.INT64)
        schema.add_field("dense", dt.FLOAT_VECTOR, dim=dim)
        schema.add_field("sparse", dt.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            self.pymilvus.Function(
                name="text_bm25",
                function_type=self.pymilvus.FunctionType.BM25,
                input_field_names=["text"],
                output_field_names=["sparse"],
            )
        )
        index = self.client.prepare_index_params()
        index.add_index(field_name="dense", **DENSE_INDEX)
        index.add_index(field_name="sparse", **SPARSE_INDEX)
        self._call(
            "create collection",
            lambda: self.client.create_collection(
                self.collection,
                schema=schema,
                index_params=index,
                properties={"codememory.schema": SCHEMA_TAG, "codememory.model": model, "codememory.dim": str(dim)},
            ),
        )

    # ------------------------------------------------------------------ writes
    def upsert(self, rows: Sequence[dict[str, Any]]) -> None:
        if rows:
            self._call("upsert", lambda: self.client.upsert(self.collection, list(rows)))

    def delete_keys(self, keys: Sequence[str]) -> None:
        if keys:
            self._call("delete", lambda: self.client.delete(self.collection, ids=list(keys)))

    def delete_project(self, project: str) -> int:
        """Delete every row of `project`; how many there were."""
        expr = f"project == {literal(project, 'project')}"
        before = self.count(project)
        self._call("delete", lambda: self.client.delete(self.collection, filter=expr))
        return before

    def count(self, project: str | None = None) -> int:
        expr = f"project == {literal(project, 'project')}" if project else 'project != ""'
        rows = self._call("count", lambda: self.client.query(self.collection, filter=expr, output_fields=["count(*)"]))
        return int(rows[0]["count(*)"]) if rows else 0

    # ------------------------------------------------------------------ search
    def leg(self, field: str, query: str | Sequence[float], expr: str, limit: int) -> list[dict[str, Any]]:
        """One leg alone, best first: `field` "sparse" (BM25 of the words `query`; `score` is the BM25 score,
        higher is better) or "dense" (the vector `query`; `score` is the cosine similarity)."""
        params = SPARSE_SEARCH if field == "sparse" else DENSE_SEARCH
        data = query if isinstance(query, str) else [float(x) for x in query]
        found = self._call(
            "search",
            lambda: self.client.search(
                self.collection,
                data=[data],
                anns_field=field,
                search_params=params,
                limit=limit,
                filter=expr,
                output_fields=OUTPUT_FIELDS,
            ),
        )
        hits = _hits(found)
        if field == "sparse" and hits and all(h["score"] <= 0 for h in hits):
            for hit in hits:  # Milvus Lite reports BM25 as a distance (the negated score); a server as the score
                hit["score"] = -hit["score"]
        return hits

    def rows(self, expr: str, limit: int, vectors: bool = False) -> list[dict[str, Any]]:
        """The rows matching `expr` (at most `limit`), with their dense vector when `vectors`."""
        fields = [*OUTPUT_FIELDS, "dense"] if vectors else OUTPUT_FIELDS
        return list(
            self._call(
                "query", lambda: self.client.query(self.collection, filter=expr, output_fields=fields, limit=limit)
            )
        )

    def hybrid(
        self,
        text: str,
        vector: Sequence[float] | None,
        expr: str,
        limit: int,
        pool: int = POOL,
        ranker: str = "rrf",
        dense_weight: float = 0.5,
    ) -> list[dict[str, Any]]:
        """Dense + BM25 fused in Milvus (`ranker` "rrf" or "weighted" with `dense_weight`), `pool` candidates
        from each leg, or BM25 alone without a query vector; each hit is its output fields plus `score` (the
        ranker's)."""
        if vector is None:
            return self.leg("sparse", text, expr, limit)
        pm = self.pymilvus
        per_leg = max(limit, pool)
        bm25 = pm.AnnSearchRequest(
            data=[text], anns_field="sparse", param=SPARSE_SEARCH, limit=per_leg, expr=expr or None
        )
        dense = pm.AnnSearchRequest(
            data=[list(vector)], anns_field="dense", param=DENSE_SEARCH, limit=per_leg, expr=expr or None
        )
        if ranker == "weighted":
            weight = min(max(dense_weight, 0.0), 1.0)
            fusion: Any = pm.WeightedRanker(weight, 1.0 - weight)
        else:
            fusion = pm.RRFRanker(RRF_K)
        found = self._call(
            "hybrid search",
            lambda: self.client.hybrid_search(
                self.collection, [dense, bm25], ranker=fusion, limit=limit, output_fields=OUTPUT_FIELDS
            ),
        )
        return _hits(found)


def _hits(found: Any) -> list[dict[str, Any]]:
    hits = found[0] if found else []
    return [{**dict(hit.get("entity") or {}), "score": float(hit.get("distance") or 0.0)} for hit in hits]
