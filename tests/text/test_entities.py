"""Entity extraction on real memory texts: vocabulary terms, ambiguity rules, paths, errors, identifiers."""

from __future__ import annotations

import dataclasses
from importlib import resources

import pytest

from codememory.text import entity_vocabulary
from codememory.text.entities import Entity, extract_entities, normalize_entity_name

TYPES = {"library", "framework", "tool", "language", "database", "service", "protocol", "file", "error", "identifier"}


def pairs(text: str, **kwargs: int) -> list[tuple[str, str]]:
    return [(entity.name, entity.type) for entity in extract_entities(text, **kwargs)]


def names(text: str) -> list[str]:
    return [entity.name for entity in extract_entities(text)]


# --- The brief's own example, and salience order --------------------------------------------------------


def test_example_memory_in_salience_order() -> None:
    text = (
        "Use httpx instead of requests in src/billing/webhooks.py: requests blocks the event loop "
        "(RuntimeError: Event loop is closed)"
    )
    assert pairs(text) == [
        ("httpx", "library"),
        ("requests", "library"),
        ("RuntimeError", "error"),
        ("src/billing/webhooks.py", "file"),
    ]


def test_groups_come_in_order_terms_and_errors_then_files_then_identifiers() -> None:
    text = (
        "Call session.commit() in app/db.py after IntegrityError; getUserById lives in "
        "src/users/repo.py and talks to Postgres via SQLAlchemy."
    )
    result = extract_entities(text)
    assert pairs(text) == [
        ("IntegrityError", "error"),
        ("postgresql", "database"),
        ("sqlalchemy", "library"),
        ("app/db.py", "file"),
        ("src/users/repo.py", "file"),
        ("session.commit", "identifier"),
        ("getUserById", "identifier"),
    ]
    assert all(entity.type in TYPES for entity in result)


# --- One test per entity type ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Validate payloads with Pydantic and call the API with axios.",
            [("pydantic", "library"), ("axios", "library")],
        ),
        ("The admin runs on Django; the public site on FastAPI.", [("django", "framework"), ("fastapi", "framework")]),
        ("Deploy with Terraform and Helm charts to Kubernetes.", [("terraform", "tool"), ("helm", "tool")]),
        ("The parser is TypeScript, the CLI is Python 3.12.", [("typescript", "language"), ("python", "language")]),
        ("Sessions live in Redis, orders in MySQL.", [("redis", "database"), ("mysql", "database")]),
        (
            "Secrets come from AWS Secrets Manager; assets sit on S3.",
            [("aws secrets manager", "service"), ("s3", "service")],
        ),
        ("Streaming uses gRPC over HTTP/2 and a WebSocket fallback.", [("grpc", "protocol"), ("http/2", "protocol")]),
    ],
)
def test_vocabulary_types(text: str, expected: list[tuple[str, str]]) -> None:
    result = pairs(text)
    for item in expected:
        assert item in result


def test_editors_and_agents() -> None:
    text = "Claude Code and opencode read AGENTS.md; Codex CLI too; in Cursor the rules live in .cursorrules."
    result = pairs(text)
    assert ("claude code", "tool") in result
    assert ("opencode", "tool") in result
    assert ("codex", "tool") in result
    assert ("cursor", "tool") in result
    assert ("AGENTS.md", "file") in result
    assert (".cursorrules", "file") in result


def test_error_names() -> None:
    text = (
        "connect ECONNREFUSED 127.0.0.1:5432, then ENOENT on the socket; Node threw ERR_MODULE_NOT_FOUND; "
        "Python raised sqlalchemy.exc.IntegrityError and a TimeoutException; pod went OOMKilled after SIGKILL."
    )
    result = pairs(text)
    for name in ("ECONNREFUSED", "ENOENT", "ERR_MODULE_NOT_FOUND", "IntegrityError", "TimeoutException", "OOMKilled"):
        assert (name, "error") in result
    assert ("SIGKILL", "error") in result


def test_uppercase_words_are_not_errno_names() -> None:
    assert names("ERROR in build. ENOUGH said. EXPLAIN ANALYZE the query. Error and Exception alone.") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Stripe answers 429 Too Many Requests under load", "http 429"),
        ("the proxy returns HTTP 503 during deploys", "http 503"),
        ("status code 404 for missing users", "http 404"),
        ("500 Internal Server Error when the body is empty", "http 500"),
    ],
)
def test_http_status_errors(text: str, expected: str) -> None:
    assert (expected, "error") in pairs(text)


def test_http_status_phrase_does_not_leak_the_requests_library() -> None:
    assert "requests" not in names("We got 429 Too Many Requests from GitHub.")


def test_identifiers() -> None:
    text = (
        "Call session.commit() after getUserById; UserService reads MAX_RETRIES and get_user_by_id; "
        "pass --no-verify only in scripts; `retry` wraps it; Vec::new() allocates."
    )
    result = pairs(text)
    for name in (
        "session.commit",
        "getUserById",
        "UserService",
        "MAX_RETRIES",
        "get_user_by_id",
        "--no-verify",
        "retry",
        "Vec::new",
    ):
        assert (name, "identifier") in result


def test_plain_and_sentence_initial_words_are_not_identifiers() -> None:
    text = "Remember: The Team agreed. APIs, URLs and IDs are fine. SaaS pricing. Tests (s) and file(s) too."
    assert [entity for entity in extract_entities(text) if entity.type == "identifier"] == []


# --- Ambiguity rules ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "go ahead and merge it",
        "Go ahead and merge it.",
        "Let's go with option B; we can go back later. It's a go/no-go call. Go-live is Monday.",
        "GO AHEAD",
    ],
)
def test_go_in_english_is_not_the_language(text: str) -> None:
    assert "go" not in names(text)


@pytest.mark.parametrize(
    "text",
    [
        "The sidecar is written in Go.",
        "Go 1.22 fixed the loop variable capture.",
        "We moved the worker to Go last year.",
        "Bump the toolchain in go.mod first.",
        "Run `go test ./...` before pushing.",
    ],
)
def test_go_the_language(text: str) -> None:
    assert ("go", "language") in pairs(text)


@pytest.mark.parametrize(
    "text",
    ["make sure the cache is warm", "Make sure the cache is warm.", "Restart nginx and make sure the port is free."],
)
def test_make_sure_is_not_the_build_tool(text: str) -> None:
    assert "make" not in names(text)


@pytest.mark.parametrize(
    "text", ["Run `make test` first.", "run make before committing", "targets are in the Makefile"]
)
def test_make_the_build_tool(text: str) -> None:
    assert ("make", "tool") in pairs(text)


def test_other_ambiguous_words_stay_english() -> None:
    text = (
        "The next step is to click the button and express the idea in rich text on a black background; "
        "spring is coming and the requests pile up."
    )
    assert extract_entities(text) == []


def test_other_ambiguous_words_in_technical_context() -> None:
    text = (
        "Format with black and ruff; print with `rich.print()`; the CLI uses click.echo. "
        "Deploy the Next.js app; the API is an Express server; pip install requests."
    )
    result = names(text)
    for name in ("black", "ruff", "rich", "click", "next.js", "express", "requests"):
        assert name in result


def test_calls_are_not_the_tools() -> None:
    result = names("next(iter) and make([]int, 3) are builtins; so is `next()`.")
    assert "next.js" not in result
    assert "make" not in result
    assert "next" not in result


def test_extracted_names_are_already_normalized() -> None:
    text = (
        "Bump go.mod and Cargo.toml; ./scripts/test runs Node JS tooling on Postgres; "
        "tests/test_x.py:42 calls session.commit() and raises IntegrityError; 429 Too Many Requests; --dry-run."
    )
    result = extract_entities(text)
    assert {"go.mod", "Cargo.toml", "scripts/test", "node.js", "postgresql", "tests/test_x.py"} <= {
        entity.name for entity in result
    }
    for entity in result:
        assert normalize_entity_name(entity.name) == entity.name


def test_name_case_words_need_a_capital_or_context() -> None:
    assert "react" not in names("components react to state changes")
    assert ("react", "framework") in pairs("React hooks re-run on every render.")
    assert "rest" not in names("the rest of the handlers")
    assert ("rest", "protocol") in pairs("a REST API in front of the queue")


def test_single_letter_c() -> None:
    assert "c" not in names("Plan C is fine; option C too.")
    assert ("c", "language") in pairs("The hot loop is written in C.")
    assert ("c", "language") in pairs("C extensions need a compiler.")


# --- Aliases and normalisation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("Postgres", "postgresql"),
        ("postgres", "postgresql"),
        ("PostgreSQL", "postgresql"),
        ("K8s", "kubernetes"),
        ("k8s", "kubernetes"),
        ("golang", "go"),
        ("Node JS", "node.js"),
        ("nodejs", "node.js"),
        ("Spring-Boot", "spring boot"),
        ("HTTP 429", "http 429"),
    ],
)
def test_normalize_aliases(alias: str, canonical: str) -> None:
    assert normalize_entity_name(alias) == canonical


def test_normalize_keeps_paths_and_identifiers_as_written() -> None:
    assert normalize_entity_name("./scripts/test") == "scripts/test"
    assert normalize_entity_name("src/Auth/OAuth.py:42.") == "src/Auth/OAuth.py"
    assert normalize_entity_name("session.commit()") == "session.commit"
    assert normalize_entity_name("`getUserById`") == "getUserById"
    assert normalize_entity_name("ECONNREFUSED") == "ECONNREFUSED"
    assert normalize_entity_name("   ") == ""


def test_aliases_in_text_become_canonical_names() -> None:
    result = pairs("Postgres on k8s behind GitHub Actions; the ORM is SQLAlchemy.")
    assert result[:4] == [
        ("postgresql", "database"),
        ("kubernetes", "tool"),
        ("github actions", "tool"),
        ("sqlalchemy", "library"),
    ]


def test_vocabulary_terms_respect_boundaries() -> None:
    text = "The gopher mascot; mongo_client and redisClient are variables; see src/react/app.py and package.json."
    result = names(text)
    assert "go" not in result
    assert "mongodb" not in result
    assert "redis" not in result
    assert "react" not in result
    assert "json" not in result
    assert {"src/react/app.py", "package.json", "mongo_client", "redisClient"} <= set(result)


# --- File paths -------------------------------------------------------------------------------------------


def test_paths() -> None:
    text = (
        "Touched src/auth/oauth.py, ./scripts/test, package.json, Cargo.toml, .github/workflows/ci.yml, "
        "the Dockerfile, ../shared/utils.ts, ~/.config/nvim/init.lua and /etc/nginx/nginx.conf."
    )
    files = [entity.name for entity in extract_entities(text) if entity.type == "file"]
    assert files == [
        "src/auth/oauth.py",
        "scripts/test",
        "package.json",
        "Cargo.toml",
        ".github/workflows/ci.yml",
        "Dockerfile",
        "../shared/utils.ts",
        "~/.config/nvim/init.lua",
        "/etc/nginx/nginx.conf",
    ]


def test_paths_lose_line_numbers() -> None:
    text = "Fails at tests/test_x.py:42, also src/app.py:10:5 and lib/x.rb#L10-L20."
    files = [entity.name for entity in extract_entities(text) if entity.type == "file"]
    assert files == ["tests/test_x.py", "src/app.py", "lib/x.rb"]


def test_urls_and_emails_are_not_paths() -> None:
    text = (
        "Docs at https://docs.python.org/3/library/asyncio.html and http://localhost:8000/api/v1/users.json; "
        "mail ops@example.com; clone git@github.com:org/repo.git"
    )
    assert [entity for entity in extract_entities(text) if entity.type == "file"] == []


def test_versions_fractions_and_prose_slashes_are_not_paths() -> None:
    text = "Pin 1.2.3 (not v2.0.1); use 2/3 of workers from 10/12/2024; and/or client/server; TCP/IP; e.g. i.e."
    assert [entity for entity in extract_entities(text) if entity.type == "file"] == []


def test_method_calls_on_file_like_names_are_not_files() -> None:
    text = "res.json() parses; console.log is noisy; process.env is read; np.sum is fast."
    assert [entity for entity in extract_entities(text) if entity.type == "file"] == []


def test_vocabulary_names_that_look_like_files_stay_terms() -> None:
    result = pairs("Node.js and Vue.js via Socket.IO; coverage.py measures it.")
    assert ("node.js", "tool") in result
    assert ("vue", "framework") in result
    assert ("socket.io", "library") in result
    assert ("coverage.py", "tool") in result
    assert [entity for entity in extract_entities("Node.js and Vue.js") if entity.type == "file"] == []


# --- Dedup, limit, odd inputs, size -------------------------------------------------------------------------


def test_dedup_by_normalized_name() -> None:
    text = "Postgres here, PostgreSQL there, postgres everywhere; src/x.py and ./src/x.py:3; getUser and `getUser`."
    result = names(text)
    assert result.count("postgresql") == 1
    assert result.count("src/x.py") == 1
    assert result.count("getUser") == 1


def test_limit() -> None:
    text = "Django, Flask, FastAPI, Redis, MySQL, Kafka, Docker, Terraform, Helm and nginx."
    assert len(extract_entities(text)) == 10
    assert names(text)[:3] == ["django", "flask", "fastapi"]
    assert [entity.name for entity in extract_entities(text, limit=3)] == ["django", "flask", "fastapi"]
    assert extract_entities(text, limit=0) == []


def test_empty_and_blank_text() -> None:
    assert extract_entities("") == []
    assert extract_entities("   \n\t ") == []


def test_unicode_text_does_not_crash() -> None:
    text = "Käse über Straße: ünïcödé 🚀 mit ĉamelĈase, naïve_ident, 東京/設定.py und Postgres — «Redis» ✓"
    result = pairs(text)
    assert ("postgresql", "database") in result
    assert ("redis", "database") in result
    assert ("東京/設定.py", "file") in result


def test_ten_thousand_characters() -> None:
    chunk = (
        "Use httpx instead of requests in src/billing/webhooks.py; RuntimeError: Event loop is closed. "
        "Retry 429 Too Many Requests; call session.commit() after getUserById on Postgres. "
    )
    text = (chunk * (10_000 // len(chunk) + 1))[:10_000]
    result = extract_entities(text, limit=50)
    assert len(text) == 10_000
    assert [entity.name for entity in result][:3] == ["httpx", "requests", "RuntimeError"]
    assert len({entity.name for entity in result}) == len(result)


# --- Data and types -------------------------------------------------------------------------------------


def test_entity_is_frozen_and_hashable() -> None:
    entity = Entity("postgresql", "database")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entity.name = "mysql"  # type: ignore[misc]
    assert {entity, Entity("postgresql", "database")} == {entity}


def test_bundled_vocabulary_is_well_formed() -> None:
    text = (resources.files("codememory") / "data" / "tech_vocabulary.txt").read_text(encoding="utf-8")
    entries = [line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert len(entries) >= 400
    assert all(len(fields) in (2, 3) for fields in entries)
    assert all(fields[1] in TYPES - {"file", "error", "identifier"} for fields in entries)
    assert all(fields[0] == fields[0].lower() for fields in entries)
    canonicals = {fields[0] for fields in entries}
    for required in ("opencode", "claude code", "codex", "cursor", "docker", "kubernetes", "terraform", "jwt"):
        assert required in canonicals
    vocabulary = entity_vocabulary.vocabulary()  # parses with duplicate and conflict checks
    ambiguous = entity_vocabulary.entity_words().ambiguous
    assert ambiguous <= set(vocabulary.aliases)  # every ambiguity rule names a real surface form


def test_vocabulary_parser_rejects_conflicts() -> None:
    with pytest.raises(ValueError, match="already names"):
        entity_vocabulary.parse_vocabulary("postgresql\tdatabase\tpg\nphoton\tlibrary\tpg\n")
    with pytest.raises(ValueError, match="unknown type"):
        entity_vocabulary.parse_vocabulary("postgresql\tthing\n")


def test_bundled_word_lists_fill_every_section() -> None:
    lists = entity_vocabulary.entity_words()
    for section in dataclasses.fields(lists):
        assert getattr(lists, section.name), f"[{section.name}] is empty"
    assert {"go", "cloud run"} <= lists.strict | lists.name_case  # one word and several words per entry
    assert lists.adjectives <= lists.strict
    assert "ECONNREFUSED" in lists.errno  # case kept as written


def test_word_list_parser_rejects_unknown_missing_and_orphan_entries() -> None:
    with pytest.raises(ValueError, match="unknown or repeated section 'stricter'"):
        entity_vocabulary.parse_entity_words("[stricter]\ngo\n")
    with pytest.raises(ValueError, match="missing sections"):
        entity_vocabulary.parse_entity_words("[strict]\ngo\n")
    with pytest.raises(ValueError, match="before any"):
        entity_vocabulary.parse_entity_words("go\n[strict]\n")


def test_path_verdicts_kept_per_process_give_what_judging_each_anew_gives() -> None:
    """The path stage keeps what each candidate comes to (text/entities.py `_paths`): texts whose candidates were
    judged before give the same entities as with nothing kept, whatever surrounds the candidate (a call after it,
    brackets, a line number, a URL, non-ASCII text)."""
    import random

    from codememory.text import entities

    pieces = [
        "src/app/main.py", "src/app/main.py:42", "[src/x.py]", "res.json()", "Cargo.toml", "go.mod", "./scripts/test",
        "node.js", "http/2", "1.2.3", "and/or", "Dockerfile", "backoff.", "é/日本.py", "https://x.io/a/b.py",
        "~/.config/app.toml", ".env.local", "app/[slug]/page.tsx", "tests/test_x.py#L3-L9", "v2/api", "README.md(",
        "the", "fix", "in", "CartService.checkout()", "—", "🎉", "\n",
    ]  # fmt: skip
    rng = random.Random(11)
    texts = [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(1_500)]
    fresh = []
    for text in texts:
        entities._paths = (None, {})  # nothing kept: every candidate judged anew
        fresh.append(extract_entities(text))
    assert [extract_entities(text) for text in texts] == fresh  # now kept from the texts before
    assert len(entities._paths[1]) > 20


def test_the_kept_path_verdicts_do_not_hold_long_candidates() -> None:
    """The verdicts are kept by the candidate's text, up to _PLAIN_MAX of them: a long slash-separated token (in an
    imported memory, anyone's text) must not be kept, or 200k of them would hold gigabytes for the process's life."""
    import random
    import tracemalloc

    rng = random.Random(5)

    def long_path() -> str:
        return "src/" + "/".join("".join(rng.choice("abcdefghij") for _ in range(9)) for _ in range(800)) + ".py"

    texts = [f"see {long_path()} now" for _ in range(100)]
    extract_entities("warm up src/a.py")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts:
            extract_entities(text)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < sum(map(len, texts)) // 10, kept
