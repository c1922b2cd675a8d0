"""Searching the organisation's memory: a hybrid query in Milvus (the query's vector against `dense` and its
words against the BM25 `sparse` field), filtered there by project, category and tags, ranked as `[remote]
ranker` says, and the merge of those hits with the local ones. Rankers: "local" (the default: Milvus retrieves
each leg's candidates and their neighbouring turns, the client fuses them with the local store's recipe,
org_fusion.py), "rrf" or "weighted" (fused in Milvus by its RRFRanker / WeightedRanker).

The local store answers for this project (it is fresher than what was published), so the remote query leaves
this project out unless asked for it by name. Remote rows are untrusted input, like any memory: an id that is not
a memory id is dropped, text is scrubbed and cut to a memory's length, an unknown category becomes "note", and
callers show them through the same rendering and escaping as local memories.

The remote never makes a search fail: when it is not configured for a call that asks for it, unreachable, or
refuses, the local results come back alone and `RemoteStatus.error` says why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from codememory.core.bounded_input import check_query
from codememory.core.dates import now_utc
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import CATEGORIES, ID_RE, MAX_TEXT, normalize_tag, validate_category
from codememory.errors import CodememoryError, InvalidInput
from codememory.remote import org_fusion
from codememory.remote.milvus import POOL, connect, display_uri, literal
from codememory.remote.org_results import RemoteHit, RemoteStatus
from codememory.remote.records import project_name
from codememory.retrieval.search import embedding_text
from codememory.text.privacy import scrub
from codememory.text.query import parse_query

if TYPE_CHECKING:
    from codememory.service.project_store import Store

T = TypeVar("T")
_NAME_RE = lazy_pattern(r"[^A-Za-z0-9_.@+-]+")


def _clean(row: dict[str, Any], rank: int) -> RemoteHit | None:
    memory_id = str(row.get("memory_id") or "")
    text = scrub(str(row.get("text") or ""))[:MAX_TEXT]
    project = _NAME_RE.sub("-", str(row.get("project") or ""))[:200]
    if not ID_RE.fullmatch(memory_id) or not text.strip() or not project:
        return None
    category = str(row.get("category") or "")
    tags = []
    for tag in row.get("tags") or []:
        norm = normalize_tag(str(tag))[:100]
        if norm and scrub(norm) == norm and norm not in tags:
            tags.append(norm)
    try:
        importance = min(max(float(row.get("importance") or 0.0), 0.0), 1.0)
    except (TypeError, ValueError):
        importance = 0.0
    source = scrub(str(row.get("source") or ""))[:1000] or None
    return RemoteHit(
        project,
        memory_id,
        text,
        category if category in CATEGORIES else "note",
        importance,
        tags,
        str(row.get("created_at") or "")[:40],
        source,
        float(row.get("score") or 0.0),
        rank,
    )


def filter_expr(own: str, projects: Sequence[str], category: str | None, tags: Sequence[str] | None) -> str:
    """The Milvus filter for a remote search (InvalidInput for a value a filter cannot hold)."""
    clauses = []
    if projects:
        clauses.append(f"project in [{', '.join(literal(p, 'project') for p in projects)}]")
    else:
        clauses.append(f"project != {literal(own, 'project')}")
    if category:
        names = [validate_category(c) for c in category.split(",") if c.strip()]
        clauses.append(f"category in [{', '.join(literal(c, 'category') for c in names)}]")
    wanted = [normalize_tag(t) for t in tags or [] if normalize_tag(t)]
    if wanted:
        clauses.append(f"array_contains_all(tags, [{', '.join(literal(t, 'tag') for t in wanted)}])")
    return " and ".join(clauses)


def remote_configured(store: Store) -> bool:
    return bool(store.config.remote.uri.strip())


def search_remote(
    store: Store,
    query: str,
    *,
    limit: int,
    category: str | None = None,
    tags: Sequence[str] | None = None,
    projects: Sequence[str] = (),
) -> tuple[list[RemoteHit], RemoteStatus]:
    """The remote's best `limit` hits for `query` and what happened; never raises for the remote's failure."""
    cfg = store.config.remote
    status = RemoteStatus(display_uri(cfg.uri.strip()), cfg.collection, False, 0, "hybrid")
    own = project_name(cfg.project, store.root)
    expr = filter_expr(own, [project_name(p, store.root) for p in projects], category, tags)
    if not query.strip():
        raise InvalidInput("the query is empty")
    check_query(query)
    parsed = parse_query(query)
    ranker = cfg.ranker.strip().lower()
    try:
        with connect(cfg) as remote:
            meta = remote.open()
            vector = None
            local_model = store.semantic.model
            if local_model is None:
                status.note = f"no query vector ({store.semantic.reason}): keyword (BM25) search only"
            elif local_model != meta.get("model"):
                status.note = (
                    f"the remote holds vectors of {meta.get('model')}, this project embeds with {local_model}: "
                    "keyword (BM25) search only"
                )
            else:
                found = store.semantic.embed_query(embedding_text(parsed) or query)  # as the local search embeds it
                if found is None:
                    status.note = f"no query vector ({store.semantic.reason}): keyword (BM25) search only"
                else:
                    vector = [float(x) for x in found.reshape(-1)]
            status.mode = "hybrid" if vector is not None else "bm25"
            words = " ".join(parsed.content_words()) or embedding_text(parsed) or query  # the local keyword leg's
            if vector is None:
                rows = remote.leg("sparse", words, expr, limit)
            elif ranker in ("rrf", "weighted"):
                rows = remote.hybrid(words, vector, expr, limit, POOL, ranker, cfg.dense_weight)
            else:
                weight = store.config.search.neighbour_weight
                rows = org_fusion.fused(
                    remote, parsed, words, vector, expr, limit, POOL, weight, now_utc(), store.semantic.embedder()
                )
    except InvalidInput:
        raise
    except CodememoryError as exc:
        status.error = str(exc)
        return [], status
    hits = [h for h in (_clean(row, rank) for rank, row in enumerate(rows, start=1)) if h is not None]
    status.ok = True
    return hits, status


def interleave(local: Sequence[T], remote: Sequence[T], limit: int) -> list[T]:
    """Local and remote hits by rank, local first on each rank: scores of the two are not comparable (a local
    hybrid z-score against Milvus's fused score), ranks are."""
    out: list[T] = []
    for i in range(max(len(local), len(remote))):
        out += [seq[i] for seq in (local, remote) if i < len(seq)]
    return out[:limit]
