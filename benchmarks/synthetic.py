"""Deterministic generator of realistic coding-agent memories, for benchmarks.

Every record has the JSON Lines export shape (`codememory export` / `import`):

    {"id": "mem_1a2b3c4d", "text": "Use httpx instead of requests because we need HTTP/2.",
     "category": "decision", "importance": 0.8, "tags": ["atlas-api", "http"], "entered_by": "claude-code",
     "source": "PR #412", "created_at": "2026-03-01T10:00:00.000Z", "updated_at": "2026-03-01T10:00:00.000Z"}

Texts come from per-category templates filled from slot vocabularies (technologies grouped by role, file
paths, identifiers, error names, phrases, numbers, people), then padded with follow-up sentences to a
target length of 60-400 characters. Each imaginary project has its own stack, language and module layout,
so words co-occur the way they do in a real project's memory, and the vocabulary grows with n (paths,
identifiers, PR numbers, versions) instead of saturating at a few hundred words.

    python benchmarks/synthetic.py 1000 /tmp/memories.jsonl
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CATEGORIES = ("decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note")
# Rough mix of what coding agents actually write down: many gotchas, facts and decisions, fewer todos.
CATEGORY_WEIGHTS = (18, 7, 14, 6, 20, 17, 9, 9)
# Fixed anchor so the output never depends on the day it is generated; dates spread over the year before it.
DEFAULT_END = datetime(2026, 11, 1, tzinfo=UTC)
MIN_LEN, MAX_LEN = 60, 400

# ----------------------------------------------------------------------------------------- vocabularies
# Alternatives that fill the same role: decisions and rejected alternatives pick two from one group.
TECH_GROUPS: dict[str, list[str]] = {
    "http client": ["httpx", "requests", "aiohttp", "urllib3", "axios", "fetch"],
    "web framework": ["fastapi", "flask", "django", "starlette", "express", "nestjs", "gin", "axum"],
    "database": ["postgres", "mysql", "sqlite", "mongodb", "dynamodb", "cockroachdb"],
    "cache": ["redis", "memcached", "valkey", "dragonfly"],
    "queue": ["kafka", "rabbitmq", "sqs", "nats", "celery", "redis streams"],
    "test runner": ["pytest", "unittest", "jest", "vitest", "mocha", "playwright", "cypress"],
    "orchestration": ["kubernetes", "nomad", "docker compose", "ecs", "cloud run"],
    "container": ["docker", "podman", "buildah", "kaniko"],
    "ci": ["github actions", "gitlab ci", "circleci", "jenkins", "buildkite"],
    "frontend": ["react", "vue", "svelte", "solid", "angular", "htmx"],
    "state management": ["redux", "zustand", "mobx", "jotai", "tanstack query"],
    "bundler": ["vite", "webpack", "esbuild", "rollup", "turbopack", "parcel"],
    "orm": ["sqlalchemy", "prisma", "drizzle", "django orm", "peewee", "sqlx", "gorm"],
    "migrations": ["alembic", "flyway", "liquibase", "dbmate", "atlas"],
    "package manager": ["uv", "poetry", "pip-tools", "pnpm", "npm", "yarn", "cargo"],
    "linter": ["ruff", "flake8", "pylint", "eslint", "biome", "clippy", "golangci-lint"],
    "formatter": ["ruff format", "black", "prettier", "rustfmt", "gofmt"],
    "type checker": ["mypy", "pyright", "typescript", "flow"],
    "observability": ["prometheus", "grafana", "opentelemetry", "datadog", "sentry", "honeycomb", "loki"],
    "search engine": ["elasticsearch", "opensearch", "meilisearch", "typesense", "sqlite fts5"],
    "auth": ["oauth", "keycloak", "auth0", "jwt", "session cookies", "okta"],
    "iac": ["terraform", "pulumi", "cloudformation", "helm", "kustomize", "ansible"],
    "proxy": ["nginx", "traefik", "envoy", "caddy", "haproxy"],
    "validation": ["pydantic", "zod", "marshmallow", "attrs", "joi"],
    "dataframe": ["pandas", "polars", "duckdb", "pyarrow"],
    "ml": ["pytorch", "jax", "scikit-learn", "xgboost", "onnx"],
    "scheduler": ["airflow", "dagster", "prefect", "cron", "temporal"],
    "storage": ["s3", "minio", "gcs", "azure blob", "local disk"],
    "secrets": ["vault", "sops", "aws secrets manager", "doppler", "dotenv"],
    "rpc": ["grpc", "graphql", "rest", "trpc", "thrift"],
    "serialization": ["protobuf", "json", "msgpack", "avro", "orjson"],
    "async runtime": ["asyncio", "trio", "anyio", "tokio", "gevent"],
    "server": ["uvicorn", "gunicorn", "hypercorn", "granian", "node"],
}
# Why one alternative beats another: generic, and specific to a role.
REASONS_GENERIC = [
    "it is faster in our benchmarks",
    "the team already knows it",
    "it has first-class type hints",
    "it is actively maintained",
    "it has fewer transitive dependencies",
    "the license is compatible with our distribution",
    "it works offline in CI",
    "the error messages are much clearer",
    "it halves the docker image size",
    "it supports our oldest target platform",
    "upgrades have been painless so far",
    "it plays well with the existing monorepo layout",
    "it keeps cold start under 200 ms",
    "the API is stable and well documented",
    "it avoids a separate service to operate",
    "it is what the platform team supports",
]
REASONS_BY_GROUP: dict[str, list[str]] = {
    "http client": ["we need HTTP/2", "it has native async support", "it supports connection pooling per host"],
    "web framework": ["we need websocket support", "request validation comes for free", "it generates OpenAPI docs"],
    "database": ["we need transactional DDL", "we rely on JSONB indexes", "row-level locking is required"],
    "cache": ["we need sorted sets for leaderboards", "eviction must be LRU", "pub/sub is built in"],
    "queue": [
        "we need ordered delivery per key",
        "messages must survive a broker restart",
        "dead letters are built in",
    ],
    "test runner": ["fixtures are far simpler", "it runs tests in parallel", "snapshot testing is built in"],
    "orchestration": ["we need rolling deploys", "autoscaling on queue depth is required", "it is what ops runs"],
    "frontend": ["server components cut the bundle", "hiring is easier", "the component library targets it"],
    "orm": ["we need async sessions", "migrations are generated from models", "raw SQL escape hatches are easy"],
    "package manager": ["resolution is ten times faster", "it produces a reproducible lock file", "workspaces work"],
    "linter": ["it replaces five tools", "it runs in under a second", "autofix is reliable"],
    "observability": ["traces link logs and metrics", "it is cheaper at our volume", "alerts route to pagerduty"],
    "auth": ["SSO is a customer requirement", "tokens must be revocable", "we need refresh token rotation"],
    "iac": ["state drift is detected in CI", "modules are reusable across environments", "it supports previews"],
    "serialization": ["payloads are 40% smaller", "schema evolution is checked", "it is twice as fast to decode"],
}
CONS = [
    "it leaked file descriptors under load",
    "its async support is still experimental",
    "the maintainers archived the repository",
    "it doubled the CI time",
    "it broke on ARM runners",
    "the memory usage grew without bound",
    "it silently dropped messages during a rebalance",
    "the migration path from our current setup is too risky",
    "it needs a license for production use",
    "the Windows support is poor",
    "cold start went from 80 ms to 900 ms",
    "it does not support our auth flow",
    "it pins an old version of openssl",
    "its plugin API changes every minor release",
    "the docs are out of date",
    "we could not make it deterministic in tests",
]
PURPOSES = [
    "background jobs",
    "the public API",
    "integration tests",
    "local development",
    "the admin dashboard",
    "event ingestion",
    "file uploads",
    "feature flags",
    "search indexing",
    "the billing pipeline",
    "nightly reports",
    "webhook delivery",
    "the mobile backend",
    "session storage",
    "rate limiting",
    "config loading",
]
PHRASES = [
    "connection pool",
    "rate limit",
    "race condition",
    "memory leak",
    "cold start",
    "cache invalidation",
    "retry with backoff",
    "feature flag",
    "dead letter queue",
    "connection timeout",
    "schema migration",
    "integration tests",
    "hot reload",
    "circuit breaker",
    "graceful shutdown",
    "health check",
    "read replica",
    "time zone",
    "unit tests",
    "environment variables",
    "build cache",
    "lock file",
    "log level",
    "page size",
    "request id",
    "background job",
    "cron job",
    "connection string",
    "idempotency key",
    "optimistic locking",
    "foreign key",
    "query plan",
    "thread pool",
    "event loop",
    "file descriptor",
    "service account",
    "access token",
    "refresh token",
    "merge conflict",
    "flaky test",
    "snapshot test",
    "load balancer",
    "blue green deploy",
    "canary release",
    "batch size",
    "worker pool",
    "error budget",
    "source map",
    "type stub",
    "virtual environment",
]
ERRORS = [
    "ERR_CONNECTION_REFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENOSPC",
    "EADDRINUSE",
    "EMFILE",
    "OOMKilled",
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "IntegrityError",
    "OperationalError",
    "DeadlockDetected",
    "TimeoutError",
    "ConnectionResetError",
    "ModuleNotFoundError",
    "RecursionError",
    "UnicodeDecodeError",
    "KeyError",
    "ValidationError",
    "SerializationFailure",
    "CERTIFICATE_VERIFY_FAILED",
    "ERR_REQUIRE_ESM",
    "ERR_OSSL_EVP_UNSUPPORTED",
    "SIGSEGV",
    "SIGKILL",
    "HTTP 429 Too Many Requests",
    "502 Bad Gateway",
    "504 Gateway Timeout",
    "401 Unauthorized",
    "database is locked",
    "too many connections",
    "hydration mismatch",
    "maximum call stack size exceeded",
    "address already in use",
]
CONDITIONS = [
    "the container runs as a non-root user",
    "two workers start at the same time",
    "the test database is shared between xdist workers",
    "the laptop sleeps during a long sync",
    "DNS is slow inside the VPN",
    "the upload is larger than 100 MB",
    "the clock on the runner drifts",
    "migrations run before the schema cache warms up",
    "the pod is rescheduled mid-request",
    "a request is retried after the lock expired",
    "the env file has Windows line endings",
    "TLS is terminated at the load balancer",
    "the feature flag is toggled during a deploy",
    "pagination uses offset on a table that is being written",
    "the mock server is not started before the fixture",
    "the volume is mounted read-only",
]
FIXES = [
    "set {setting}={n} in the env",
    "pin {tech} to {version}",
    "wrap the call in a retry with backoff",
    "run `{cmd}` first",
    "use a per-worker database name",
    "add the missing index on {field}",
    "call {ident} before opening the session",
    "raise the {phrase} limit to {n}",
    "mount the cache dir as tmpfs",
    "disable keep-alive for that client",
    "await the fixture instead of using run_until_complete",
    "convert timestamps to UTC before comparing",
]
SETTINGS = [
    "POOL_SIZE",
    "MAX_OVERFLOW",
    "WORKER_CONCURRENCY",
    "REQUEST_TIMEOUT",
    "PAGE_SIZE",
    "LOG_LEVEL",
    "CACHE_TTL",
    "MAX_RETRIES",
    "UVICORN_WORKERS",
    "NODE_OPTIONS",
    "PGCONNECT_TIMEOUT",
    "REDIS_MAX_CONNECTIONS",
    "BATCH_SIZE",
    "GOMAXPROCS",
    "FEATURE_FLAGS_URL",
    "DATABASE_URL",
]
FIELDS = ["tenant_id", "user_id", "created_at", "email", "external_id", "status", "order_id", "slug", "updated_at"]
NOUNS = [
    "user",
    "invoice",
    "order",
    "session",
    "token",
    "payment",
    "account",
    "project",
    "report",
    "webhook",
    "event",
    "config",
    "job",
    "tenant",
    "subscription",
    "customer",
    "document",
    "upload",
    "message",
    "notification",
    "shipment",
    "product",
    "cart",
    "team",
    "permission",
    "audit log",
    "api key",
    "export",
]
VERBS = [
    "get",
    "fetch",
    "create",
    "update",
    "delete",
    "load",
    "save",
    "parse",
    "validate",
    "sync",
    "resolve",
    "build",
    "render",
    "handle",
    "compute",
    "refresh",
    "retry",
    "flush",
    "enqueue",
    "dispatch",
    "list",
    "find",
    "archive",
    "merge",
]
ID_SUFFIXES = ["", "ById", "ByEmail", "ForTenant", "Async", "Batch", "s", "FromCache", "OrCreate", "WithRetry"]
CLASS_SUFFIXES = ["Repository", "Service", "Manager", "Client", "Handler", "Serializer", "Factory", "Worker", "Store"]
AREAS = [
    "auth",
    "billing",
    "api",
    "db",
    "models",
    "utils",
    "workers",
    "cli",
    "config",
    "search",
    "cache",
    "events",
    "notifications",
    "payments",
    "users",
    "admin",
    "storage",
    "sync",
    "ingest",
    "reports",
    "webhooks",
    "core",
    "integrations",
    "jobs",
]
MODULES = [
    "oauth",
    "session",
    "tokens",
    "client",
    "handlers",
    "routes",
    "schema",
    "migrations",
    "retry",
    "rate_limit",
    "serializer",
    "pool",
    "cache",
    "queue",
    "scheduler",
    "webhook",
    "settings",
    "middleware",
    "validators",
    "exporter",
    "parser",
    "loader",
    "backoff",
    "locks",
    "permissions",
    "signals",
    "tasks",
    "views",
    "service",
    "repository",
    "factory",
    "helpers",
    "dependencies",
    "errors",
    "constants",
    "feature_flags",
    "pagination",
    "audit",
    "crypto",
    "mailer",
]
PEOPLE = ["alice", "bob", "priya", "chen", "marta", "diego", "sam", "yuki", "omar", "lena", "tom", "fatima"]
AGENTS = ["claude-code", "cursor", "aider", "codex", "copilot", "gemini-cli", "windsurf", "auto-extract"]
MILESTONES = ["the 2.0 release", "Q3", "the next sprint", "the holiday freeze", "the SOC 2 audit", "GA", "launch"]
TEST_KINDS = ["unit", "integration", "property-based", "end-to-end", "load", "contract", "snapshot", "regression"]
REGIONS = ["eu-west-1", "us-east-1", "us-west-2", "eu-central-1", "ap-southeast-2", "europe-west4"]
INFRA = ["EKS", "GKE", "a single Hetzner box", "Fly.io", "Render", "ECS Fargate", "Cloud Run", "bare metal k3s"]


@dataclass(frozen=True)
class Project:
    name: str
    language: str  # py | ts | go | rs
    stack: tuple[str, ...]  # groups this project has picked a technology for
    host: str


PROJECTS = [
    Project("atlas-api", "py", ("web framework", "database", "orm", "migrations", "cache", "test runner"), "atlas"),
    Project("billing-service", "py", ("queue", "database", "http client", "auth", "observability"), "billing"),
    Project("pixel-dashboard", "ts", ("frontend", "state management", "bundler", "test runner", "rpc"), "pixel"),
    Project("orbit-cli", "rs", ("serialization", "async runtime", "package manager", "linter", "ci"), "orbit"),
    Project("harbor-infra", "go", ("orchestration", "iac", "proxy", "secrets", "observability", "container"), "harbor"),
    Project("lumen-ml", "py", ("ml", "dataframe", "scheduler", "storage", "package manager"), "lumen"),
    Project("quill-docs", "ts", ("search engine", "frontend", "bundler", "ci", "formatter"), "quill"),
    Project("nimbus-mobile", "ts", ("rpc", "auth", "validation", "test runner", "http client"), "nimbus"),
    Project("relay-gateway", "go", ("proxy", "rpc", "cache", "observability", "server"), "relay"),
    Project("ledger-core", "py", ("database", "orm", "validation", "type checker", "linter", "queue"), "ledger"),
]
_EXT = {"py": "py", "ts": "ts", "go": "go", "rs": "rs"}
_SRC = {"py": "src/{project}", "ts": "src", "go": "internal", "rs": "src"}

_STOPWORD_TEXT = """
a an and are as at be because but by do does for from go has have in is it its of on once only or so
than that the their then there this to too use used was we were when which while with instead not
our all new before after into must under over every run runs set see
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


# -------------------------------------------------------------------------------------------- slots
def _camel(words: list[str]) -> str:
    parts = [p for w in words for p in w.split()]
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


class _Slots:
    """Draws slot values for one project; everything goes through one seeded random.Random."""

    def __init__(self, rng: random.Random, project: Project) -> None:
        self.rng = rng
        self.p = project

    def pick(self, items: list[str] | tuple[str, ...]) -> str:
        return items[self.rng.randrange(len(items))]

    def group(self) -> str:
        # Mostly the project's own stack, sometimes anything (a decision about a new tool).
        if self.rng.random() < 0.8:
            return self.pick(self.p.stack)
        return self.pick(list(TECH_GROUPS))

    def tech(self, group: str | None = None) -> str:
        return self.pick(TECH_GROUPS[group or self.group()])

    def pair(self) -> tuple[str, str, str]:
        group = self.group()
        x, y = self.rng.sample(TECH_GROUPS[group], 2)
        return group, x, y

    def reason(self, group: str | None = None) -> str:
        specific = REASONS_BY_GROUP.get(group or "")
        if specific and self.rng.random() < 0.6:
            return self.pick(specific)
        return self.pick(REASONS_GENERIC)

    def path(self) -> str:
        r = self.rng
        lang = self.p.language
        area, module = self.pick(AREAS), self.pick(MODULES)
        if r.random() < 0.15:
            return f"tests/{area}/test_{module}.py" if lang == "py" else f"tests/{area}/{module}.test.{_EXT[lang]}"
        base = _SRC[lang].format(project=self.p.name.split("-")[0])
        if lang == "ts" and r.random() < 0.4:
            return f"{base}/components/{module.title().replace('_', '')}.tsx"
        return f"{base}/{area}/{module}.{_EXT[lang]}"

    def ident(self) -> str:
        r = self.rng
        verb, noun = self.pick(VERBS), self.pick(NOUNS)
        if r.random() < 0.2:
            name = _camel([noun, self.pick(CLASS_SUFFIXES)])
            return name[:1].upper() + name[1:]
        suffix = self.pick(ID_SUFFIXES)
        if self.p.language == "py":
            return _snake(_camel([verb, noun]) + suffix) + "()"
        name = _camel([verb, noun]) + suffix
        return name if self.p.language != "go" else name[:1].upper() + name[1:]

    def cmd(self) -> str:
        tool = {"py": ["pytest -x", "uv sync", "alembic upgrade head", "ruff check --fix", "mypy --strict"]}.get(
            self.p.language,
            ["pnpm install --frozen-lockfile", "npm run build", "cargo build --release", "go test ./...", "make gen"],
        )
        general = ["docker compose up -d db", "kubectl rollout restart deploy/api", "make migrate", "git lfs pull"]
        return self.pick(tool + general)

    def version(self) -> str:
        r = self.rng
        return f"{r.randint(0, 18)}.{r.randint(0, 30)}" + (f".{r.randint(0, 12)}" if r.random() < 0.5 else "")

    def number(self) -> int:
        return self.rng.choice((2, 4, 5, 8, 10, 16, 20, 25, 30, 32, 50, 64, 100, 128, 200, 250, 500, 1000, 5000))

    def fill(self, template: str) -> str:
        """Replace {slot} markers; each occurrence gets a fresh draw except the ones shared in `fixed`."""
        r = self.rng
        group, x, y = self.pair()
        fixed = {
            "project": self.p.name,
            "group": group,
            "x": x,
            "y": y,
            "reason": self.reason(group),
        }
        makers: dict[str, Callable[[], str]] = {
            "tech": self.tech,
            "path": self.path,
            "path2": self.path,
            "ident": self.ident,
            "ident2": self.ident,
            "error": lambda: self.pick(ERRORS),
            "phrase": lambda: self.pick(PHRASES),
            "phrase2": lambda: self.pick(PHRASES),
            "purpose": lambda: self.pick(PURPOSES),
            "con": lambda: self.pick(CONS),
            "condition": lambda: self.pick(CONDITIONS),
            "fix": lambda: self.fill(self.pick(FIXES)),
            "setting": lambda: self.pick(SETTINGS),
            "field": lambda: self.pick(FIELDS),
            "noun": lambda: self.pick(NOUNS),
            "person": lambda: self.pick(PEOPLE),
            "milestone": lambda: self.pick(MILESTONES),
            "testkind": lambda: self.pick(TEST_KINDS),
            "region": lambda: self.pick(REGIONS),
            "infra": lambda: self.pick(INFRA),
            "area": lambda: self.pick(AREAS),
            "cmd": self.cmd,
            "version": self.version,
            "n": lambda: str(self.number()),
            "m": lambda: str(self.number() * r.randint(2, 9)),
            "port": lambda: str(r.choice([3000, 5000, 5432, 6379, 8000, 8080, 8443, 9090, 9200, 4317])),
            "pr": lambda: str(r.randint(12, 4800)),
            "host": lambda: f"{self.p.host}-{r.choice(['staging', 'dev', 'preview', 'prod'])}.internal",
        }
        out = []
        i = 0
        while i < len(template):
            j = template.find("{", i)
            if j == -1:
                out.append(template[i:])
                break
            k = template.index("}", j)
            out.append(template[i:j])
            key = template[j + 1 : k]
            out.append(fixed[key] if key in fixed else makers[key]())
            i = k + 1
        return "".join(out)


# ---------------------------------------------------------------------------------------- templates
TEMPLATES: dict[str, list[str]] = {
    "decision": [
        "Use {x} instead of {y} because {reason}.",
        "Decided to move {purpose} from {y} to {x}; {reason}.",
        "We standardised on {x} for {purpose} across {project}.",
        "{project} stores {noun} data in {tech}; {reason}.",
        "All new endpoints in {path} go through {ident} so that the {phrase} is handled in one place.",
        "Switched the {group} for {project} to {x} (was {y}) because {reason}.",
        "Keep {y} for now but write new {purpose} code against {x}; {reason}.",
        "Decision: {ident} owns the {phrase}; nothing else in {area} may touch it.",
        "Adopt {x} {version} for {purpose}. Reason: {reason}.",
    ],
    "rejected_alternative": [
        "Rejected {y} for {purpose}: {con}. Stick with {x}.",
        "Considered switching {project} to {y} but {con}; revisit after {milestone}.",
        "Do not use {y} for {purpose}. We tried it in {path} and {con}.",
        "Tried replacing {x} with {y} in PR #{pr}; reverted because {con}.",
        "{y} looked attractive for the {phrase} but {con}.",
        "Rejected a custom {phrase} in {path}; {x} already does it and {reason}.",
    ],
    "convention": [
        "Tests live in tests/ and mirror the source tree; run them with `{cmd}` before pushing.",
        "Name database helpers verb-first like {ident}; never put queries in {path}.",
        "Every schema migration must be reversible and reviewed; apply with `{cmd}`.",
        "Log with structured fields (request_id, {field}), never f-strings, in {path}.",
        "Commit messages follow Conventional Commits; the scope is the top-level area ({area}).",
        "Config comes from environment variables only; {setting} is read once in {path}.",
        "Public functions in {area} need docstrings and type hints; {tech} runs in CI.",
        "Use {x} for {purpose} in {project}; wrappers live in {path}.",
        "Errors crossing the API boundary are mapped in {path}; never leak {error} to clients.",
        "Feature flags are named {area}.{noun}.enabled and read through {ident}.",
    ],
    "preference": [
        "Prefer {x} over {y} for {purpose} in new code.",
        "{person} prefers small PRs (under 400 lines) with one concern each.",
        "Prefer dependency injection over module globals in {path}; it keeps {ident} testable.",
        "Prefer {testkind} tests with real {tech} over mocks for {purpose}.",
        "The user likes terse commit messages and wants {x} formatting applied before review.",
        "Prefer explicit {phrase} handling over catching {error} broadly.",
    ],
    "gotcha": [
        "{tech} fails with {error} when {condition}; fix: {fix}.",
        "{ident} in {path} returns None instead of raising when the {noun} is missing.",
        "The {phrase} in {path} is shared across workers; {error} appears under load if {setting} is below {n}.",
        "CI on {tech} caches the {phrase}; a stale cache causes {error}. Clear it with `{cmd}`.",
        "Running {tech} tests in parallel breaks {path} because of a {phrase}.",
        "{error} in {project} staging usually means {condition}. Check {path} first.",
        "Gotcha: {ident} is called twice on startup, so the {phrase} is created twice when {condition}.",
        "The {x} client retries on {error} by default; combined with our {phrase} that means duplicate {noun}s.",
        "{setting} is in seconds in {path} but in milliseconds in {path2}.",
        "Watch out: {tech} {version} changed the default {phrase}; {ident} relied on the old one.",
    ],
    "fact": [
        "{project} runs on {infra} in {region}; staging is at {host}.",
        "The {noun} service listens on port {port} and talks to {tech} through {ident}.",
        "{tech} is pinned to {version} in {project} because of a {phrase} regression.",
        "The {phrase} size is {n} (set in {path}).",
        "{ident} is the only writer of the {noun} table; readers go through a {phrase}.",
        "{project} has {m} {testkind} tests; the full suite takes about {n} minutes in CI.",
        "Secrets for {project} are in {tech}; the {setting} key rotates every {n} days.",
        "The {area} module depends on {x} and {tech}; {path} is the entry point.",
        "On-call for {project} is {person}; dashboards live in {tech}.",
    ],
    "todo": [
        "TODO: migrate {path} from {y} to {x} before {milestone}.",
        "TODO: add {testkind} tests for {ident}; it is only covered indirectly by {path}.",
        "Remove the {phrase} workaround in {path} once {tech} {version} is released.",
        "TODO({person}): replace the hand-written {phrase} in {path} with {x}.",
        "TODO: make {ident} idempotent so webhook retries stop creating duplicate {noun}s.",
        "Follow up on PR #{pr}: the {phrase} still uses {y}.",
    ],
    "note": [
        "{person} said the {noun} export is slow because of the {phrase} in {ident}.",
        "Benchmark: {ident} takes {n} ms p95 with {x}; {y} was {m} ms.",
        "Session summary: fixed {error} in {path}, added a {phrase} around {ident}.",
        "Incident on {project}: {error} for {n} minutes after a deploy; root cause was a {phrase}.",
        "Meeting note: {person} wants {x} evaluated for {purpose} before {milestone}.",
        "The {phrase} discussion is in PR #{pr}; {person} has context.",
    ],
}
# Follow-up sentences appended until the text reaches its drawn target length.
FOLLOW_UPS = [
    "See {path}.",
    "Discussed in PR #{pr}.",
    "Affects {project} only.",
    "Owner: {person}.",
    "Related: {ident}.",
    "Reproduce with `{cmd}`.",
    "This also applies to {purpose}.",
    "The {phrase} is configured in {path}.",
    "Last seen with {error}.",
    "Confirmed on {tech} {version}.",
    "Do not change without talking to {person}.",
    "Tracked until {milestone}.",
    "{setting} defaults to {n}.",
    "The same pattern exists in {path2}.",
    "Mentioned again by {person} in the {area} retro.",
]

_CATEGORY_TAGS = {
    "decision": ["adr", "architecture", "decision"],
    "rejected_alternative": ["rejected", "evaluation"],
    "convention": ["style", "convention", "workflow"],
    "preference": ["preference", "style"],
    "gotcha": ["gotcha", "bug", "debugging", "flaky"],
    "fact": ["infra", "facts", "ops"],
    "todo": ["todo", "tech-debt"],
    "note": ["notes", "meeting", "incident"],
}
_IMPORTANCE = {  # (mean, spread)
    "decision": (0.75, 0.2),
    "rejected_alternative": (0.6, 0.2),
    "convention": (0.7, 0.2),
    "preference": (0.5, 0.2),
    "gotcha": (0.7, 0.25),
    "fact": (0.5, 0.25),
    "todo": (0.45, 0.25),
    "note": (0.3, 0.2),
}


def _text(slots: _Slots, category: str) -> str:
    r = slots.rng
    text = slots.fill(slots.pick(TEMPLATES[category]))
    # Skewed toward short notes, with a tail of long ones, like real agent memories.
    target = min(MAX_LEN, int(MIN_LEN + r.expovariate(1 / 90)))
    for _ in range(8):
        if len(text) >= target:
            break
        extra = slots.fill(slots.pick(FOLLOW_UPS))
        if len(text) + 1 + len(extra) > MAX_LEN:
            break
        text = f"{text} {extra}"
    if len(text) < MIN_LEN:
        text = f"{text} Context: {slots.p.name}, {slots.pick(AREAS)} area, noted by {slots.pick(PEOPLE)}."
    if len(text) > MAX_LEN:
        text = text[: MAX_LEN - 1].rsplit(" ", 1)[0] + "…"
    first = text.split(" ", 1)[0]
    return text[0].upper() + text[1:] if first in PEOPLE else text  # "Priya prefers …", never "Get_user()"


def _tags(slots: _Slots, category: str, text: str) -> list[str]:
    r = slots.rng
    tags = [slots.p.name]
    if r.random() < 0.7:
        tags.append(slots.pick(_CATEGORY_TAGS[category]))
    lowered = text.lower()
    techs = [t for g in slots.p.stack for t in TECH_GROUPS[g] if t in lowered and " " not in t]
    for t in techs[: r.randint(0, 2)]:
        tags.append(t)
    if r.random() < 0.3:
        tags.append(slots.pick(AREAS))
    return list(dict.fromkeys(tags))


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def generate(n: int, seed: int = 0, *, end: datetime = DEFAULT_END) -> list[dict[str, Any]]:
    """n memories, identical for the same (n, seed, end). Creation times spread over the year before `end`,
    busier on weekdays and in recent months; about 15% were edited later (updated_at > created_at)."""
    rng = random.Random(seed)
    project_weights = [rng.uniform(0.5, 3.0) for _ in PROJECTS]
    slots = [_Slots(rng, p) for p in PROJECTS]
    used_ids: set[str] = set()
    used_texts: set[str] = set()
    out: list[dict[str, Any]] = []
    year = timedelta(days=365).total_seconds()
    for _ in range(n):
        s = rng.choices(slots, weights=project_weights)[0]
        category = rng.choices(CATEGORIES, weights=CATEGORY_WEIGHTS)[0]
        text = _text(s, category)
        while text in used_texts:  # `codememory store` dedupes identical text; so does a real store
            text = _text(s, category)
        used_texts.add(text)
        while True:
            mem_id = f"mem_{rng.getrandbits(32):08x}"
            if mem_id not in used_ids:
                used_ids.add(mem_id)
                break
        age = year * (1 - rng.random() ** 0.7)  # more recent memories than old ones
        created = end - timedelta(seconds=age)
        if created.weekday() >= 5 and rng.random() < 0.6:
            created -= timedelta(days=2)
        created = created.replace(microsecond=created.microsecond // 1000 * 1000)
        updated = created
        if rng.random() < 0.15:
            updated = min(end, created + timedelta(hours=rng.uniform(1, 24 * 60)))
        mean, spread = _IMPORTANCE[category]
        importance = round(min(1.0, max(0.0, rng.gauss(mean, spread / 2))), 2)
        source_roll = rng.random()
        if source_roll < 0.3:
            source = None
        elif source_roll < 0.55:
            source = f"PR #{rng.randint(12, 4800)}"
        elif source_roll < 0.75:
            source = f"session:{rng.getrandbits(24):06x}"
        elif source_roll < 0.9:
            source = s.path()
        else:
            source = f"commit {rng.getrandbits(28):07x}"
        out.append(
            {
                "id": mem_id,
                "text": text,
                "category": category,
                "importance": importance,
                "tags": _tags(s, category, text),
                "entered_by": s.pick(AGENTS) if rng.random() < 0.8 else s.pick(PEOPLE),
                "source": source,
                "created_at": _iso(created),
                "updated_at": _iso(updated),
            }
        )
    return out


def write_jsonl(path: str | Path, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Write generate(n, seed) to `path` as JSON Lines (the `codememory import` format); returns the records."""
    records = generate(n, seed)
    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return records


# ------------------------------------------------------------------------------ query vocabularies
def single_words() -> list[str]:
    """Single-token search terms that occur in generated texts (technologies, nouns, areas, error names)."""
    techs = [t for group in TECH_GROUPS.values() for t in group if t.isalnum()]
    errors = [e for e in ERRORS if e.replace("_", "").isalnum()]
    return sorted(set(techs + [n for n in NOUNS if " " not in n] + AREAS + errors))


def content_words(text: str) -> list[str]:
    """Distinct lower-case words of a text worth searching for (no stop words, numbers or 1-2 letter bits)."""
    seen: dict[str, None] = {}
    word = []
    for ch in text.lower() + " ":
        if ch.isalnum() or ch == "_":
            word.append(ch)
            continue
        if word:
            w = "".join(word)
            if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS:
                seen.setdefault(w, None)
            word = []
    return list(seen)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python benchmarks/synthetic.py N OUT.jsonl")
    write_jsonl(sys.argv[2], int(sys.argv[1]))
