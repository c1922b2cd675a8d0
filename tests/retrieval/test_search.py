"""Search through the Python API against a real store on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory import InvalidInput, Store
from codememory.core.bounded_input import QUERY_MAX_CHARS
from codememory.text.query import PHRASE_WORDS, parse_query
from conftest import MEMORY_KEYS


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    st, _ = Store.init(tmp_path)
    with st:
        yield st


def ids(result: object) -> list[str]:
    return [h.memory.id for h in result.hits]  # type: ignore[attr-defined]


def add(store: Store, text: str, **kw: object) -> str:
    return store.add(text, **kw).memory.id  # type: ignore[arg-type]


def test_implicit_and_or_not_phrase_prefix(store: Store) -> None:
    both = add(store, "docker compose file for the api")
    only_docker = add(store, "docker swarm is not used here")
    podman = add(store, "podman runs rootless containers")
    assert ids(store.search("docker AND compose", fuzzy=False)) == [both]
    plain = store.search("docker compose", fuzzy=False, show_held_back=True)  # all words first, then some of them
    assert [(h.memory.id, h.match) for h in plain.hits] == [(both, "exact"), (only_docker, "partial")]
    # "docker" alone (in two of three memories) is not likely what was meant next to a memory with both words
    assert [h.held_back for h in plain.hits] == [False, True]
    assert ids(store.search("docker compose", fuzzy=False)) == [both]
    assert set(ids(store.search("docker OR podman", fuzzy=False))) == {both, only_docker, podman}
    assert ids(store.search("docker NOT swarm", fuzzy=False)) == [both]
    assert ids(store.search('"compose file"', fuzzy=False)) == [both]
    assert ids(store.search('"file compose"', fuzzy=False)) == []
    assert set(ids(store.search("contain*", fuzzy=False))) == {podman}
    assert set(ids(store.search("(swarm OR rootless) NOT api", fuzzy=False))) == {only_docker, podman}


def test_stemming_and_diacritics(store: Store) -> None:
    mid = add(store, "Migrations are run by the café deploy script")
    assert ids(store.search("migration", fuzzy=False)) == [mid]
    assert ids(store.search("cafe", fuzzy=False)) == [mid]


def test_literal_code_tokens(store: Store) -> None:
    path = add(store, "OAuth tokens are refreshed in src/auth/oauth.py before expiry")
    cpp = add(store, "The renderer is written in C++ with a C ABI")
    assert ids(store.search("src/auth/oauth.py", fuzzy=False)) == [path]
    assert cpp in ids(store.search("C++"))


@pytest.mark.parametrize(
    "query", ['"', "*", "(", "NOT", "a:b", "@user", "#tag", "a=b", "x\x00y", "東京", "a" * QUERY_MAX_CHARS, '"unclosed']
)
def test_hostile_queries_never_raise(store: Store, query: str) -> None:
    add(store, "something about docker")
    result = store.search(query)
    assert result.query == query


def test_a_query_over_the_cap_is_refused_before_any_work(store: Store) -> None:
    with pytest.raises(InvalidInput, match="the query is 4,001 characters long; the limit is 4,000"):
        store.search("a" * (QUERY_MAX_CHARS + 1))


def test_a_long_phrase_keeps_its_first_words(store: Store) -> None:
    """A query's phrases hold PHRASE_WORDS words in all (the index's work grows with each): past that, the first
    words are searched."""
    first = " ".join(f"w{i}" for i in range(PHRASE_WORDS))
    hit = add(store, first + " and then something else entirely")
    assert ids(store.search(f'"{first} and more words that are not in it"')) == [hit]
    assert parse_query(f'"{first} x y" "p q r"').fts == f'("{first}" AND "p")'


def test_fuzzy_finds_typos_and_marks_them(store: Store) -> None:
    docker = add(store, "Use docker compose v2 everywhere")
    k8s = add(store, "kubernetes ingress needs a class annotation")
    res = store.search("dokcer")
    assert ids(res) == [docker]
    assert res.hits[0].match == "fuzzy" and res.fuzzy_used
    assert ids(store.search("kuberntes")) == [k8s]
    assert ids(store.search("dokcer", fuzzy=False)) == []


def test_fuzzy_substring_inside_identifiers(store: Store) -> None:
    mid = add(store, "The OAuthProvider class wraps the token endpoint")
    res = store.search("provider")
    assert ids(res) == [mid]
    assert res.hits[0].explain["terms"]["provider"]["matched"] == "substring"


def test_exact_hits_rank_before_fuzzy_and_fuzzy_only_fills(store: Store) -> None:
    exact = add(store, "docker build cache is shared in CI")
    typo = add(store, "dockr is misspelled here on purpose")
    res = store.search("docker")
    assert ids(res) == [exact, typo]
    assert [h.match for h in res.hits] == ["exact", "fuzzy"]
    assert ids(store.search("docker", limit=1)) == [exact]  # enough exact hits: no fuzzy pass
    assert ids(store.search("docker", limit=1, fuzzy=True, offset=1)) == [typo]


def test_threshold_controls_fuzzy(store: Store) -> None:
    add(store, "kubernetes cluster upgrade notes")
    assert ids(store.search("kubrnetse", threshold=0.95)) == []
    assert len(ids(store.search("kubrnetse", threshold=0.6))) == 1


def test_bm25_ranks_before_nudges(store: Store) -> None:
    weak = add(store, "redis is mentioned once among many other words about caching layers and queues", importance=1.0)
    strong = add(store, "redis redis: redis config", importance=0.0)
    assert ids(store.search("redis", fuzzy=False)) == [strong, weak]


def test_importance_breaks_ties(store: Store) -> None:
    low = add(store, "the cache uses redis streams", importance=0.1)
    high = add(store, "the queue uses redis streams", importance=0.9)
    assert ids(store.search("redis streams", fuzzy=False)) == [high, low]


def test_filters(store: Store) -> None:
    a = add(store, "alpha note about caching", tags=["Perf", "cache"], entered_by="claude", category="decision")
    b = add(store, "beta note about caching", tags=["cache"], entered_by="codex", category="gotcha")
    c = add(store, "gamma note about caching", tags=["other"], entered_by="claude")
    q = "caching"
    assert set(ids(store.search(q, tags="perf,cache"))) == {a}
    assert set(ids(store.search(q, any_tags=["perf", "other"]))) == {a, c}
    assert set(ids(store.search(q, entered_by="claude"))) == {a, c}
    assert set(ids(store.search(q, category="decision,gotcha"))) == {a, b}
    assert set(ids(store.search(q, after="2000-01-01"))) == {a, b, c}
    assert ids(store.search(q, before="2000-01-01")) == []
    assert set(ids(store.search(q, after="1 hour ago"))) == {a, b, c}


def test_expired_and_archived_are_hidden_unless_asked(store: Store) -> None:
    live = add(store, "deploy uses blue green")
    gone = add(store, "deploy freeze this week", expires="in 2 weeks")
    store.db.conn.execute("UPDATE memories SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", (gone,))
    archived = add(store, "deploy used to be manual")
    store.archive([archived])
    assert ids(store.search("deploy")) == [live]
    assert set(ids(store.search("deploy", include_expired=True))) == {live, gone}
    assert set(ids(store.search("deploy", include_archived=True))) == {live, archived}
    assert set(ids(store.search("deploy", include_expired=True, include_archived=True))) == {live, gone, archived}


def test_paging(store: Store) -> None:
    made = {add(store, f"pagination item number {i} about paging") for i in range(7)}
    first = store.search("paging", limit=3, fuzzy=False)
    second = store.search("paging", limit=3, offset=3, fuzzy=False)
    third = store.search("paging", limit=3, offset=6, fuzzy=False)
    assert first.has_more and second.has_more and not third.has_more
    assert set(ids(first)) | set(ids(second)) | set(ids(third)) == made
    assert len(set(ids(first)) & set(ids(second))) == 0


def test_search_updates_access_stats(store: Store) -> None:
    mid = add(store, "access stats are counted")
    hit = store.search("access").hits[0]
    assert hit.memory.access_count == 1 and hit.memory.last_accessed_at
    assert store.get(mid, touch=False).access_count == 1
    store.search("access", touch=False)
    assert store.get(mid, touch=False).access_count == 1


def test_bad_search_arguments_are_clear_errors(store: Store) -> None:
    with pytest.raises(InvalidInput, match="limit"):
        store.search("x", limit=0)
    with pytest.raises(InvalidInput, match="threshold"):
        store.search("x", threshold=2)
    with pytest.raises(InvalidInput, match="cannot understand date"):
        store.search("x", after="the day after never")
    with pytest.raises(InvalidInput, match="unknown category"):
        store.search("x", category="nonsense")


def test_json_shape_is_stable(store: Store) -> None:
    add(store, "json shape check", tags=["t"], source="session:abc message:42")
    data = store.search("json").to_dict()
    assert set(data) == {
        "query",
        "count",
        "has_more",
        "fuzzy_used",
        "literal",
        "mode",
        "degraded",
        "degraded_reason",
        "held_back",
        "results",
    }
    assert set(data["results"][0]) == MEMORY_KEYS | {"score", "match", "fuzzy", "held_back", "explain"}
    assert data["results"][0]["source"] == "session:abc message:42"


def test_fuzzy_literal_fragment_uses_trigram_index(store: Store) -> None:
    path = add(store, "OAuth tokens are refreshed in src/auth/oauth.py before expiry")
    res = store.search("th/oauth.p")
    assert ids(res) == [path]
    assert res.hits[0].explain["terms"]["th/oauth.p"]["matched"] == "substring"
    assert store.db.substring_search('"th/oauth.p"', store.filters(), 10) != []


def test_fuzzy_keeps_boolean_meaning(store: Store) -> None:
    both = add(store, "docker compose file for the api")
    add(store, "compose music with care")  # lacks anything like "docker": must not pass on "compose" alone
    swarm = add(store, "dockr swarm is deprecated here")
    podman = add(store, "podmn runs rootless containers")
    assert ids(store.search("docker AND compose", fuzzy=True)) == [both]
    assert swarm not in ids(store.search("docker NOT swarm", fuzzy=True))
    assert ids(store.search("docker NOT swarm", fuzzy=True)) == [both]
    assert set(ids(store.search("docker OR podman", fuzzy=True))) == {both, swarm, podman}
    res = store.search("dokcer AND (swarm OR podman)")
    assert ids(res) == [swarm] and res.hits[0].match == "fuzzy"


def test_typo_vocabulary_follows_writes_from_other_connections(tmp_path: Path) -> None:
    Store.init(tmp_path)[0].close()
    with Store.open(tmp_path) as reader, Store.open(tmp_path) as writer:
        writer.add("airships are slow")
        assert ids(reader.search("airshps")) != []  # vocabulary loaded and cached by the reader
        new = writer.add("the zeppelin hangar is in hall 3").memory.id
        assert ids(reader.search("zepelin")) == [new]
        writer.forget([new])
        assert ids(reader.search("zepelin")) == []


def test_retrieve_without_a_model_uses_any_keyword(store: Store) -> None:
    pool = add(store, "The Postgres connection pool is capped at 20 in production")
    add(store, "The dashboard polls the API every 30 seconds")
    result = store.retrieve(["raise the connection limit", "postgres connection pool exhausted"])
    assert [m.id for m in result.memories] == [pool]
    assert result.degraded and result.memories[0].why["retriever"] == "lexical"
    # a step sharing one word with it is not enough to put it in front of the agent
    assert store.retrieve(["raise the connection limit"]).memories == []


def test_a_memory_holding_every_word_of_a_question_for_a_value_is_not_held_back(store: Store) -> None:
    # the question asks for a number (text/asks.py asked_value); the memory holding none is held back for it unless it
    # holds every word of the question: a memory holding your words comes first (retrieval/search.py with_asked_value)
    every_word = add(store, "The payment webhook does not use a retries limit of its own: Stripe decides")
    some_words = add(store, "The payment webhook retries a failed delivery 3 times, with a limit of 10 seconds each")
    add(store, "Uploads are capped at 20 MB by the API gateway")
    found = ids(store.search("What retries limit does the payment webhook use?"))
    assert every_word in found and some_words in found
    # one holding only some of the words and no number is still held back
    assert ids(store.search("What retries limit does the payment webhook use for refunds?")) == [some_words]
