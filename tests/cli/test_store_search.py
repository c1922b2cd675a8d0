"""`codememory store` and `codememory search`: the JSON shapes, the query syntax, filters, paging, fuzzy
matching, and input that must be refused or searched literally."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from codememory import Store
from conftest import MEMORY_KEYS
from support.cli import (
    ID,
    A,
    B,
    C,
    Invoke,
    assert_error,
    import_expired,
    ok,
    ok_json,
    parse_ts,
    search_ids,
    show,
    store,
)


# -------------------------------------------------------------------------------------- store
def test_store_text_argument_and_json_shape(cm: Invoke) -> None:
    data = ok_json(cm("store", "Use httpx, not requests", "--json"))
    assert set(data) == {"created", "duplicate_of", "duplicate_reason", "embedded", "links", "memory"}
    assert data["created"] is True and data["duplicate_of"] is None
    mem = data["memory"]
    assert set(mem) == MEMORY_KEYS
    assert ID.fullmatch(mem["id"])
    assert mem["text"] == "Use httpx, not requests"
    assert mem["category"] == "note" and mem["importance"] == 0.5
    assert mem["tags"] == [] and mem["entered_by"] is None and mem["source"] is None
    assert mem["expires_at"] is None and mem["archived"] is False and mem["access_count"] == 0
    assert mem["created_at"] == mem["updated_at"]
    assert abs(parse_ts(mem["created_at"]) - datetime.now(UTC)) < timedelta(minutes=5)


def test_store_plain_output_names_the_id(cm: Invoke) -> None:
    out = ok(cm("store", "plain output")).stdout
    assert re.fullmatch(r"Stored mem_[0-9a-f]{8}\n", out)


def test_store_quiet_prints_only_the_id(cm: Invoke) -> None:
    out = ok(cm("store", "quiet please", "-q")).stdout
    assert ID.fullmatch(out.strip()) and out.count("\n") == 1
    assert show(cm, out.strip())["text"] == "quiet please"


def test_store_from_file(cm: Invoke, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("Line one about ünïcode\nLine two\n", encoding="utf-8")
    out = ok(cm("store", "--file", note, "--quiet")).stdout.strip()
    assert show(cm, out)["text"] == "Line one about ünïcode\nLine two"


def test_the_same_note_from_a_file_and_from_stdin_is_one_memory(cm: Invoke, tmp_path: Path) -> None:
    """A file's final newline (and trailing blanks) is stripped as piped text's is, so the two dedup."""
    note = tmp_path / "note.md"
    note.write_text("Deploys go through the staging cluster first\n\n  \n", encoding="utf-8")
    first = ok_json(cm("store", "--file", note, "--json"))
    assert first["created"] is True
    assert first["memory"]["text"] == "Deploys go through the staging cluster first"
    again = ok_json(cm("store", "--json", input="Deploys go through the staging cluster first \r\n"))
    assert again["created"] is False and again["duplicate_of"] == first["memory"]["id"]


def test_store_from_stdin(cm: Invoke) -> None:
    """`echo text | codememory store`: the newline that ends the piped text is not part of the memory (inner
    lines are)."""
    mid = ok(cm("store", "-q", input="piped from stdin about rabbitmq\n")).stdout.strip()
    assert show(cm, mid)["text"] == "piped from stdin about rabbitmq"
    assert search_ids(cm, "rabbitmq") == [mid]
    mid = ok(cm("store", "-q", input="two lines\nabout kafka\r\n")).stdout.strip()
    assert show(cm, mid)["text"] == "two lines\nabout kafka"


def test_an_empty_query_is_a_usage_error(cm: Invoke) -> None:
    store(cm, "anything at all")
    for query in ("", "   "):
        for extra in ((), ("--global",), ("--json",)):
            assert_error(cm("search", query, *extra), "the query is empty", code=2)


def test_retrieve_without_a_phrase_names_its_options(cm: Invoke) -> None:
    err = assert_error(cm("retrieve"), code=2)
    assert "-q/--query" in err and "-e/--entity" in err and "query_expansion" not in err


def test_store_text_and_file_together_is_an_error(cm: Invoke, tmp_path: Path) -> None:
    note = tmp_path / "n.txt"
    note.write_text("x")
    assert_error(cm("store", "text", "--file", note), "not both", code=2)


def test_store_missing_file(cm: Invoke, tmp_path: Path) -> None:
    assert_error(cm("store", "--file", tmp_path / "missing.txt"), "no such file", code=2)


def test_store_tags_are_normalised(cm: Invoke) -> None:
    mem = ok_json(cm("store", "tagged", "--tags", "Docker, CI,docker,, #Build Tools ", "--json"))["memory"]
    assert mem["tags"] == ["docker", "ci", "build-tools"]
    assert sorted(show(cm, mem["id"])["tags"]) == ["build-tools", "ci", "docker"]
    assert search_ids(cm, "tagged", "--tags", "DOCKER,Ci") == [mem["id"]]


def test_store_category_importance_entered_by_source(cm: Invoke) -> None:
    source = "https://example.com/pr/42?x=1#frag  (session: abc/def) "
    mem = ok_json(
        cm(
            "store",
            "Rejected Celery: too heavy",
            "--category",
            "Rejected-Alternative",
            "--importance",
            "0.8",
            "--entered-by",
            "claude-code",
            "--source",
            source,
            "--json",
        )
    )["memory"]
    assert mem["category"] == "rejected_alternative"
    assert mem["importance"] == 0.8
    assert mem["entered_by"] == "claude-code"
    assert mem["source"] == source
    stored = show(cm, mem["id"])
    assert (stored["category"], stored["importance"], stored["entered_by"], stored["source"]) == (
        "rejected_alternative",
        0.8,
        "claude-code",
        source,
    )


def test_store_expires_iso_date(cm: Invoke) -> None:
    mem = ok_json(cm("store", "staging until april", "--expires", "2030-04-01", "--json"))["memory"]
    assert mem["expires_at"] == "2030-04-01T00:00:00.000Z"
    assert show(cm, mem["id"])["expires_at"] == "2030-04-01T00:00:00.000Z"


def test_store_expires_natural_language(cm: Invoke) -> None:
    mem = ok_json(cm("store", "temporary workaround", "--expires", "in 2 weeks", "--json"))["memory"]
    expected = datetime.now(UTC) + timedelta(weeks=2)
    assert abs(parse_ts(mem["expires_at"]) - expected) < timedelta(minutes=5)


def test_store_identical_text_returns_existing_id(cm: Invoke) -> None:
    first = ok_json(cm("store", "Pin numpy below 2", "--json"))
    again = cm("store", "Pin numpy below 2")
    ok(again)
    assert first["memory"]["id"] in again.stdout and "Already stored" in again.stdout
    dup = ok_json(cm("store", "Pin numpy below 2", "--json"))
    assert dup["created"] is False
    assert dup["duplicate_of"] == first["memory"]["id"] == dup["memory"]["id"]
    assert ok(cm("store", "Pin numpy below 2", "-q")).stdout.strip() == first["memory"]["id"]
    assert ok_json(cm("list", "--json"))["total"] == 1


# ---------------------------------------------------------------------------- store: bad input
def test_store_text_over_limit(cm: Invoke) -> None:
    err = assert_error(cm("store", "x" * 10_001), code=2)
    assert "10,000" in err and "10,001" in err
    assert ok_json(cm("list", "--json"))["total"] == 0


def test_store_text_at_limit_is_accepted(cm: Invoke) -> None:
    mid = store(cm, "y" * 10_000)
    assert len(show(cm, mid)["text"]) == 10_000


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_store_empty_text(cm: Invoke, text: str) -> None:
    assert_error(cm("store", text), "empty", code=2)


def test_store_nothing_on_stdin(cm: Invoke) -> None:
    assert_error(cm("store", input=""), "empty", code=2)


def test_store_unparseable_expiry(cm: Invoke) -> None:
    assert_error(cm("store", "x", "--expires", "blorp"), "blorp", "cannot understand date", code=2)


def test_store_expiry_in_the_past(cm: Invoke) -> None:
    assert_error(cm("store", "x", "--expires", "2020-01-01"), "in the past", code=2)
    assert_error(cm("store", "x", "--expires", "3 days ago"), "in the past", code=2)


def test_store_unknown_category(cm: Invoke) -> None:
    assert_error(cm("store", "x", "--category", "bogus"), "bogus", "decision", code=2)


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_store_importance_out_of_range(cm: Invoke, value: str) -> None:
    assert_error(cm("store", "x", "--importance", value), "importance", code=2)


def test_store_importance_not_a_number(cm: Invoke) -> None:
    result = cm("store", "x", "--importance", "high")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "importance" in result.stderr


# ------------------------------------------------------------------------------------- search
@pytest.fixture
def corpus(cm: Invoke) -> dict[str, str]:
    ids = {
        "compose": store(cm, "Docker compose needs depends_on with service_healthy", "--tags", "docker,ci"),
        "swarm": store(cm, "Docker swarm is deprecated here", "--tags", "docker"),
        "network": store(cm, "Docker networking uses a bridge by default", "--tags", "docker,network"),
        "postgres": store(cm, "Postgres connection pool size is 20; nightly backup at 2am", "--tags", "db"),
        "sqlite": store(cm, "SQLite for tests; backup not needed", "--tags", "db,testing"),
        "pool": store(cm, "The pool connection to the lake is closed", "--tags", "k8s"),
        "migrate": store(cm, "Alembic migrations live in db/migrations", "--category", "convention"),
        "k8s": store(cm, "kubernetes pods restart on OOM", "--tags", "k8s", "--entered-by", "ops-agent"),
    }
    return ids


def test_search_implicit_and(cm: Invoke, corpus: dict[str, str]) -> None:
    # Memories with all the words come first; with no model, those with some of them follow.
    assert search_ids(cm, "docker", "compose", "--no-fuzzy")[0] == corpus["compose"]
    assert search_ids(cm, "docker compose", "--no-fuzzy", "--limit", "1") == [corpus["compose"]]
    assert set(search_ids(cm, "docker AND compose", "--no-fuzzy")) == {corpus["compose"]}
    assert set(search_ids(cm, "docker AND bridge", "--no-fuzzy")) == {corpus["network"]}


def test_search_or(cm: Invoke, corpus: dict[str, str]) -> None:
    assert set(search_ids(cm, "postgres OR sqlite", "--no-fuzzy")) == {corpus["postgres"], corpus["sqlite"]}


def test_search_not(cm: Invoke, corpus: dict[str, str]) -> None:
    assert set(search_ids(cm, "docker NOT swarm", "--no-fuzzy")) == {corpus["compose"], corpus["network"]}


def test_search_not_excludes_in_default_mode_too(cm: Invoke, corpus: dict[str, str]) -> None:
    """The typo-tolerant fallback must not bring back what the query explicitly excluded."""
    assert corpus["swarm"] not in search_ids(cm, "docker NOT swarm")
    assert corpus["swarm"] not in search_ids(cm, "docker NOT swarm", "--fuzzy")


def test_search_phrase(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, '"connection pool"', "--no-fuzzy") == [corpus["postgres"]]
    assert set(search_ids(cm, "connection pool", "--no-fuzzy")) == {corpus["postgres"], corpus["pool"]}


def test_search_prefix(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, "migrat*", "--no-fuzzy") == [corpus["migrate"]]
    assert search_ids(cm, "kube*", "--no-fuzzy") == [corpus["k8s"]]
    assert search_ids(cm, "kube", "--no-fuzzy") == []  # without the star, a word must match whole
    assert set(search_ids(cm, "dock* NOT swarm", "--no-fuzzy")) == {corpus["compose"], corpus["network"]}


def test_search_parentheses(cm: Invoke, corpus: dict[str, str]) -> None:
    both = {corpus["postgres"], corpus["sqlite"]}
    assert set(search_ids(cm, "(postgres OR sqlite) backup", "--no-fuzzy")) == both
    assert set(search_ids(cm, "(postgres OR sqlite) AND nightly", "--no-fuzzy")) == {corpus["postgres"]}
    assert set(search_ids(cm, "docker NOT (swarm OR bridge)", "--no-fuzzy")) == {corpus["compose"]}


def test_search_tags_all_and_any(cm: Invoke, corpus: dict[str, str]) -> None:
    assert set(search_ids(cm, "docker", "--tags", "docker,ci")) == {corpus["compose"]}
    assert set(search_ids(cm, "docker", "--tags", "Docker")) == {corpus["compose"], corpus["swarm"], corpus["network"]}
    any_ids = set(search_ids(cm, "docker OR kubernetes OR pool", "--any-tag", "ci,K8S", "--no-fuzzy"))
    assert any_ids == {corpus["compose"], corpus["k8s"], corpus["pool"]}


def test_search_entered_by_and_category(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, "kubernetes OR docker", "--entered-by", "ops-agent") == [corpus["k8s"]]
    assert search_ids(cm, "migrations OR docker", "--category", "convention") == [corpus["migrate"]]
    both = set(search_ids(cm, "migrations OR docker", "--category", "convention,note"))
    assert both == {corpus["migrate"], corpus["compose"], corpus["swarm"], corpus["network"]}
    assert_error(cm("search", "docker", "--category", "bogus"), "bogus", code=2)


def test_search_json_shape(cm: Invoke, corpus: dict[str, str]) -> None:
    data = ok_json(cm("search", "compose", "--json"))
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
    assert data["query"] == "compose"
    assert data["count"] == len(data["results"]) == 1
    assert data["has_more"] is False and data["literal"] is False
    hit = data["results"][0]
    assert set(hit) == MEMORY_KEYS | {"score", "match", "fuzzy", "held_back", "explain"}
    assert hit["id"] == corpus["compose"]
    assert hit["match"] == "exact" and hit["fuzzy"] is False
    assert isinstance(hit["score"], float) and isinstance(hit["explain"], dict)


def test_search_joins_several_arguments_into_one_query(cm: Invoke, corpus: dict[str, str]) -> None:
    data = ok_json(cm("search", "docker", "compose", "--json", "--no-fuzzy"))
    assert data["query"] == "docker compose"
    assert [r["id"] for r in data["results"] if r["match"] == "exact"] == [corpus["compose"]]


def test_search_plain_text_and_no_matches(cm: Invoke, corpus: dict[str, str]) -> None:
    out = ok(cm("search", "bridge")).stdout
    assert corpus["network"] in out and "Docker networking uses a bridge by default" in out
    none = ok(cm("search", "zzzqqqxxx", "--no-fuzzy"))
    assert none.stdout == "" and "Nothing relevant found" in none.stderr


def test_search_markdown(cm: Invoke, corpus: dict[str, str]) -> None:
    out = ok(cm("search", "bridge", "--markdown")).stdout
    assert out.startswith("## Memories matching `bridge`")
    assert f"`{corpus['network']}`" in out
    assert "> Docker networking uses a bridge by default" in out
    assert "_No matches._" in ok(cm("search", "zzzqqqxxx", "--no-fuzzy", "--markdown")).stdout


def test_search_explain_prints_a_readable_line_not_a_dict(cm: Invoke, corpus: dict[str, str]) -> None:
    out = ok(cm("search", "bridge", "--explain")).stdout
    why = [line.strip() for line in out.splitlines() if line.strip().startswith("why:")]
    assert len(why) == 1 and re.fullmatch(r"why: exact · score [-\d.e]+ · bm25 [\d.e-]+ · matched: bridge", why[0]), out
    assert "{" not in out and "'bm25'" not in out
    typo = ok(cm("search", "brigde", "--explain")).stdout
    assert "why: fuzzy · score " in typo and "typos: brigde~bridge" in typo and "{" not in typo, typo
    hit = ok_json(cm("search", "bridge", "--explain", "--json"))["results"][0]
    assert hit["explain"]["bm25"] > 0 and hit["explain"]["words"] == ["bridge"]  # --json keeps the structure


# ------------------------------------------------------------------------------ -word exclusion
@pytest.fixture
def payments(cm: Invoke) -> dict[str, str]:
    return {
        "sandbox": store(cm, "Payment tests run against the Stripe sandbox with test card 4242"),
        "webhook": store(cm, "Payment webhooks are verified with the signing secret"),
        "retry": store(cm, "Failed payment captures are retried three times"),
        "email": store(cm, "Receipts for a payment go out by e-mail from the billing worker"),
        "hook": store(cm, "The pre-commit hook runs ruff on payment code"),
    }


def test_a_leading_hyphen_excludes_a_word(cm: Invoke, payments: dict[str, str]) -> None:
    every = set(payments.values())
    assert set(search_ids(cm, "payment", "--no-fuzzy")) == every
    # One argument or two (the shell splits them): the hyphenated word is an exclusion, not an option.
    assert set(search_ids(cm, "payment -sandbox", "--no-fuzzy")) == every - {payments["sandbox"]}
    assert set(search_ids(cm, "payment", "-sandbox", "--no-fuzzy")) == every - {payments["sandbox"]}
    assert set(search_ids(cm, "-sandbox", "payment")) == every - {payments["sandbox"]}
    assert set(search_ids(cm, "payment -sandbox -webhooks")) == every - {payments["sandbox"], payments["webhook"]}
    assert set(search_ids(cm, 'payment -"signing secret"')) == every - {payments["webhook"]}
    # `-h…` is not --help; the word is matched as search matches words (stemmed: "hooks" leaves out "hook").
    assert set(search_ids(cm, "payment", "-hooks")) == every - {payments["hook"]}
    # The typo pass never brings back an excluded memory.
    assert payments["sandbox"] not in search_ids(cm, "paymnt -sandbox", "--fuzzy")


def test_hyphenated_words_and_a_lone_hyphen_stay_words(cm: Invoke, payments: dict[str, str]) -> None:
    assert search_ids(cm, "e-mail", "--no-fuzzy") == [payments["email"]]
    assert search_ids(cm, "pre-commit", "--no-fuzzy") == [payments["hook"]]
    lone = ok_json(cm("search", "payment - sandbox", "--no-fuzzy", "--json"))["results"]
    assert [r["id"] for r in lone if r["match"] == "exact"] == [payments["sandbox"]]  # both words, nothing excluded
    assert search_ids(cm, "x-forwarded-for", "--no-fuzzy") == []


def test_a_query_of_exclusions_alone_is_an_error(cm: Invoke, payments: dict[str, str]) -> None:
    assert_error(cm("search", "-sandbox -webhooks"), "only excludes", code=2)


def test_search_limit_offset_and_has_more(sortable: Invoke) -> None:
    cm = sortable
    page1 = ok_json(cm("search", "fruit", "--limit", "2", "--no-fuzzy", "--json"))
    page2 = ok_json(cm("search", "fruit", "--limit", "2", "--offset", "2", "--no-fuzzy", "--json"))
    assert (page1["count"], page1["has_more"]) == (2, True)
    assert (page2["count"], page2["has_more"]) == (1, False)
    ids = [r["id"] for r in page1["results"] + page2["results"]]
    assert sorted(ids) == sorted([A, B, C])
    more = cm("search", "fruit", "--limit", "2", "--no-fuzzy")
    assert "--offset 2" in ok(more).stderr


def test_search_limit_must_be_positive(cm: Invoke) -> None:
    for args in (["--limit", "0"], ["--offset", "-1"], ["--threshold", "1.5"]):
        result = cm("search", "x", *args)
        assert result.exit_code == 2 and "Traceback" not in result.output, args


def test_search_after_before(sortable: Invoke) -> None:
    cm = sortable
    assert set(search_ids(cm, "fruit", "--after", "2025-02-01")) == {B, C}
    assert set(search_ids(cm, "fruit", "--before", "2025-02-01")) == {A}
    assert set(search_ids(cm, "fruit", "--after", "2025-01-15", "--before", "2025-02-15")) == {B}
    fresh = store(cm, "fresh fruit salad")
    assert search_ids(cm, "fruit", "--after", "2 weeks ago") == [fresh]
    assert set(search_ids(cm, "fruit", "--before", "yesterday")) == {A, B, C}


def test_search_unparseable_after(cm: Invoke) -> None:
    assert_error(cm("search", "x", "--after", "notadate"), "notadate", code=2)
    assert_error(cm("list", "--before", "notadate"), "notadate", code=2)


def test_search_fuzzy_is_needed_for_typos(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, "dokcer", "--no-fuzzy") == []
    data = ok_json(cm("search", "dokcer", "--json"))
    assert data["fuzzy_used"] is True
    docker = {corpus["compose"], corpus["swarm"], corpus["network"]}
    assert docker <= {r["id"] for r in data["results"]}
    assert all(r["match"] == "fuzzy" and r["fuzzy"] is True for r in data["results"])
    assert corpus["k8s"] in search_ids(cm, "kuberntes")
    assert search_ids(cm, "kuberntes", "--no-fuzzy") == []
    assert "fuzzy" in ok(cm("search", "kuberntes")).stdout


def test_search_fuzzy_flag_forces_fuzzy_pass(cm: Invoke, corpus: dict[str, str]) -> None:
    enough = ok_json(cm("search", "docker", "--limit", "1", "--json"))
    assert enough["fuzzy_used"] is False and enough["results"][0]["match"] == "exact"
    forced = ok_json(cm("search", "docker", "--limit", "1", "--fuzzy", "--json"))
    assert forced["fuzzy_used"] is True
    never = ok_json(cm("search", "docker", "--limit", "50", "--no-fuzzy", "--json"))
    assert never["fuzzy_used"] is False


def test_search_threshold(cm: Invoke, corpus: dict[str, str]) -> None:
    assert corpus["k8s"] in search_ids(cm, "kuberntes", "--threshold", "0.7")
    assert search_ids(cm, "kuberntes", "--threshold", "0.99") == []
    assert corpus["k8s"] in search_ids(cm, "kuberntes", "--fuzzy", "--threshold", "0")


def test_search_expired_and_archived_are_hidden_unless_asked(cm: Invoke, tmp_path: Path) -> None:
    expired = import_expired(cm, tmp_path)
    archived = store(cm, "archived staging token note")
    ok(cm("archive", archived))
    assert search_ids(cm, "staging token") == []
    assert search_ids(cm, "staging token", "--include-expired") == [expired]
    assert search_ids(cm, "staging token", "--include-archived") == [archived]
    both = search_ids(cm, "staging token", "--include-expired", "--include-archived")
    assert set(both) == {expired, archived}


def test_search_counts_as_access(cm: Invoke) -> None:
    mid = store(cm, "counted when found")
    ok(cm("search", "counted"))
    after = show(cm, mid)
    assert after["access_count"] == 2  # one search, one show
    assert after["last_accessed_at"] is not None


# ------------------------------------------------------------------------ search: hostile input
HOSTILE_FINDABLE = [
    "a:b",
    "@user",
    "#tag",
    "a=b",
    "C++",
    "src/auth/oauth.py",
    "naïve",
    "cafe",
    "日本語",
]
HOSTILE_ODD = ['"', "*", "(", ")", "NOT", "OR", "AND AND", "a OR", '"unbalanced phrase', 'say "hi', "((((", "-", "\\"]


@pytest.fixture
def hostile_corpus(cm: Invoke) -> str:
    store(cm, "Unrelated auth notes in src and oauth elsewhere")
    return store(
        cm,
        "Ping @user: src/auth/oauth.py sets a:b and a=b; #tag C++ build; naïve café; 日本語 のテキスト",
    )


@pytest.mark.parametrize("query", HOSTILE_FINDABLE)
def test_hostile_queries_are_searched_literally(cm: Invoke, hostile_corpus: str, query: str) -> None:
    data = ok_json(cm("search", "--json", "--", query))
    assert hostile_corpus in [r["id"] for r in data["results"]], data


def test_path_query_does_not_match_scattered_words(cm: Invoke, hostile_corpus: str) -> None:
    assert search_ids(cm, "src/auth/oauth.py", "--no-fuzzy") == [hostile_corpus]


@pytest.mark.parametrize("query", HOSTILE_ODD)
def test_odd_queries_never_fail(cm: Invoke, hostile_corpus: str, query: str) -> None:
    for fmt in ([], ["--json"], ["--markdown"]):
        result = cm("search", *fmt, "--", query)
        ok(result)


def test_stray_quote_still_finds_the_words(cm: Invoke, hostile_corpus: str) -> None:
    assert hostile_corpus in search_ids(cm, '"ping user', "--no-fuzzy")


def test_very_long_queries(cm: Invoke, hostile_corpus: str) -> None:
    ok(cm("search", "x" * 4000))
    words = " ".join(f"word{i}" for i in range(2000))[:4000]
    ok_json(cm("search", words, "--json"))
    ok_json(cm("search", "(" * 1998 + "ping" + ")" * 1998, "--json"))
    refused = cm("search", "x" * 10_000)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert refused.stderr.strip().splitlines() == [
        "codememory: error: the query is 10,000 characters long; the limit is 4,000 (search for a few distinctive "
        "words instead)"
    ]


def test_nul_character_in_query(cm: Invoke, project: Path, hostile_corpus: str) -> None:
    ok(cm("search", "\x00"))
    assert hostile_corpus in search_ids(cm, "ping\x00")
    with Store.open(project) as api:
        assert api.search("\x00").hits == []
        assert hostile_corpus in [h.memory.id for h in api.search("oauth\x00py").hits]


@pytest.mark.slow
@pytest.mark.default_model
def test_an_exclusion_also_leaves_out_what_meaning_or_typos_found(cm: Invoke) -> None:
    """With the default model, memories about payments without the word come by meaning; none that holds the
    excluded word does, however close its meaning."""
    sandbox = store(cm, "Charges in the Stripe sandbox use test card 4242 4242 4242 4242")
    sandbox_too = store(cm, "Sandbox webhooks from Stripe arrive at /hooks/stripe-test")
    live = store(cm, "Stripe charges in production are captured when the order ships")
    store(cm, "The frontend is built with Vite and served by nginx")
    everything = ok_json(cm("search", "stripe charges", "--json", "--no-floor"))
    assert {sandbox, sandbox_too, live} <= {r["id"] for r in everything["results"]}
    for query in ("stripe charges -sandbox", "stripe chrages -sandbox"):
        for mode in ("hybrid", "semantic", "lexical"):
            found = search_ids(cm, query, "--mode", mode, "--no-floor", "--fuzzy")
            assert sandbox not in found and sandbox_too not in found, (query, mode, found)
            assert (mode == "lexical" and "chrages" in query) or live in found, (query, mode, found)
