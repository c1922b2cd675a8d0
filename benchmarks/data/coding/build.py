# ruff: noqa: E501
"""Build the hand-written coding-memory retrieval set: memories.jsonl and questions.jsonl.

Every memory and question below was written by hand for codememory; nothing comes from an external source.
Memories are keyed by a readable name (L_httpx, S_celery_on_commit, ...) so questions can refer to them; the
file ids are derived from those names (mem_ + first 8 hex digits of sha1("coding:" + key)), so they are
deterministic and stay the same when entries are added or reordered.

    python benchmarks/data/coding/build.py          # rewrite memories.jsonl and questions.jsonl
    python benchmarks/data/coding/build.py --check  # validate and print the naive keyword baseline

See README.md in this folder for the labelling rules.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CATEGORIES = ("decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note")
KINDS = ("paraphrase", "keyword", "why", "rejected", "gotcha", "howto", "status")
AGENTS = ("claude", "claude", "claude", "claude", "codex", "codex", "codex", "opencode", "opencode", "dev", "dev")

# Each project's memories get default timestamps spread evenly over its lifetime (in list order, with a few
# hours of deterministic jitter); superseded/superseding pairs give an explicit `at` so the order is right.
PROJECTS = {
    "ledgerline": ("2025-09-01", "2026-05-12"),
    "pulseboard": ("2025-10-06", "2026-05-14"),
    "logtide": ("2025-08-18", "2026-05-08"),
    "harbor-infra": ("2025-06-02", "2026-05-13"),
    "shopfront": ("2025-04-14", "2026-05-11"),
}

MEMS: list[dict[str, Any]] = []
QUESTIONS: list[dict[str, Any]] = []
_project = ""


def project(name: str) -> None:
    global _project
    assert name in PROJECTS
    _project = name


def M(
    key: str, category: str, importance: float, tags: str, text: str, *, by: str = "", src: str = "", at: str = ""
) -> None:
    """One memory of the current project. tags: comma-separated topic tags (the project name is prepended)."""
    MEMS.append(
        {
            "key": key,
            "project": _project,
            "category": category,
            "importance": importance,
            "tags": [_project, *[t.strip() for t in tags.split(",") if t.strip()]],
            "text": " ".join(text.split()),
            "by": by,
            "src": src,
            "at": at,
        }
    )


def Q(kind: str, proj: str, question: str, *relevant: str) -> None:
    QUESTIONS.append({"question": question, "relevant": list(relevant), "kind": kind, "project": proj})


def _h(s: str) -> str:
    return hashlib.sha1(s.encode()).hexdigest()


def mem_id(key: str) -> str:
    return "mem_" + _h("coding:" + key)[:8]


# fmt: off
# ---------------------------------------------------------------------------------------------------------------
# ledgerline: FastAPI + Postgres billing service (Python 3.12, SQLAlchemy 2 async, Alembic, Stripe, arq)
# ---------------------------------------------------------------------------------------------------------------
project("ledgerline")
M("L_asyncpg", "fact", 0.6, "postgres,sqlalchemy,alembic",
  """The app talks to Postgres through asyncpg (SQLAlchemy URL postgresql+asyncpg://), but Alembic runs synchronously
  with psycopg 3 (postgresql+psycopg://), so both drivers are in pyproject.toml. LEDGER_DATABASE_URL is rewritten
  for Alembic in migrations/env.py.""")
M("L_celery_old", "decision", 0.7, "background-jobs,celery,redis",
  """Background jobs (invoice PDFs, dunning emails, Stripe sync) run on Celery 5.3 with Redis as the broker. Tasks live
  in app/tasks/ and the worker is started with `celery -A app.worker worker -Q default,emails`.""", at="2025-09-04T14:10:00.000Z", by="claude")
M("L_httpx", "decision", 0.85, "http,httpx,webhooks",
  """Use httpx.AsyncClient instead of requests for all outbound HTTP (Stripe sync, tax provider, Slack notifications):
  we need HTTP/2 and async, and requests blocks the event loop in the webhook worker (app/workers/webhooks.py).""")
M("L_httpx_client", "convention", 0.7, "http,httpx,performance",
  """One shared httpx.AsyncClient per process: get_http_client() in app/http.py, closed in the FastAPI lifespan
  handler. Never `async with httpx.AsyncClient()` inside a request handler; it opens a new TLS connection on every
  call and pushed p95 of /v1/invoices/preview from 180 ms to 900 ms.""")
M("L_httpx_h2", "gotcha", 0.6, "http,httpx",
  """httpx only negotiates HTTP/2 if the h2 package is installed (dependency `httpx[http2]`) AND the client is created
  with http2=True. Without the extra it silently falls back to HTTP/1.1; the smoke test checks response.http_version
  == "HTTP/2".""")
M("L_httpx_timeout", "gotcha", 0.75, "http,httpx,tax",
  """httpx's default timeout is 5 seconds for connect/read/write/pool. The Avalara tax endpoint takes up to 12 s for
  invoices with hundreds of lines, so app/integrations/tax.py passes httpx.Timeout(20.0, connect=3.0). Don't fix a
  ReadTimeout by raising the client-wide default; set it per integration.""")
M("L_money", "convention", 0.9, "money,postgres,models",
  """Money is stored as integer minor units in BIGINT columns named *_amount_minor, next to a currency char(3) column.
  Never float, and no Numeric columns either. Convert at the edges with Money.from_minor() / Money.to_minor() in
  app/money.py.""")
M("L_rounding", "decision", 0.8, "money,proration,stripe",
  """Proration rounds half-even (banker's rounding) on each line item, then sums the lines. This matches how Stripe
  computes invoice totals; rounding only the invoice total gave 1-cent mismatches on about 0.3% of invoices.""")
M("L_zero_decimal", "gotcha", 0.8, "money,currency",
  """Zero-decimal currencies (JPY, KRW, CLP) have no minor unit: Money.from_minor uses the ISO 4217 exponent table in
  app/money.py. A hard-coded `/ 100` in the PDF template once printed yen invoices 100x too small.""")
M("L_rej_sqlmodel", "rejected_alternative", 0.5, "sqlalchemy,pydantic,models",
  """SQLModel was considered for the models and rejected: it lagged behind SQLAlchemy 2.0 typing, and sharing one class
  for table and API schema made it hard to version the public invoice schema. We use plain SQLAlchemy 2.0
  declarative models plus separate Pydantic v2 schemas in app/schemas/.""")
M("L_pydantic_orm_mode", "gotcha", 0.55, "pydantic,pytest",
  """Pydantic v2: `class Config: orm_mode = True` is deprecated (use model_config = ConfigDict(from_attributes=True)).
  Schemas copied from the old v1 branch emit a UserWarning at import, and because pytest runs with
  filterwarnings=error the whole test session fails during collection.""")
M("L_filterwarnings", "convention", 0.5, "pytest,testing",
  """pytest runs with `filterwarnings = ["error"]` in pyproject [tool.pytest.ini_options]. If a third-party library
  warns, add a targeted ignore line (module + message) with a comment explaining why; never remove the global
  setting.""")
M("L_testcontainers", "decision", 0.75, "testing,postgres,pytest",
  """Integration tests run against a real Postgres 15 started by testcontainers (session-scoped fixture pg_container in
  tests/conftest.py), not SQLite: we rely on JSONB, partial indexes and SELECT ... FOR UPDATE SKIP LOCKED, none of
  which SQLite has.""")
M("L_test_rollback", "convention", 0.6, "testing,sqlalchemy,pytest",
  """Every test runs inside an outer transaction that is rolled back at the end (db_session fixture with a nested
  SAVEPOINT). Code under test may call session.commit(); it only releases the savepoint. Don't expect rows to
  survive into the next test, and don't truncate tables in teardown.""")
M("L_pytest_asyncio", "gotcha", 0.65, "testing,pytest,asyncio",
  """pytest-asyncio 0.24 scopes event loops per fixture: a session-scoped async fixture needs
  @pytest_asyncio.fixture(scope="session", loop_scope="session") and the tests need the same loop_scope, otherwise
  asyncpg fails with 'Future attached to a different loop' or 'another operation is in progress'.""")
M("L_uv", "decision", 0.7, "dependencies,uv,tooling",
  """Dependencies are managed with uv: pyproject.toml + uv.lock, `uv sync --frozen` in CI and in the Dockerfile. We
  dropped Poetry in January 2026 because `poetry lock` took over four minutes and kept re-resolving unrelated pins.""")
M("L_ruff", "convention", 0.5, "tooling,lint",
  """Linting and formatting are ruff only (`ruff check` + `ruff format`, line length 100). black and isort were removed
  from pre-commit; don't add them back, their output fights with ruff format on trailing commas.""")
M("L_mypy_pref", "preference", 0.5, "typing,mypy",
  """The dev wants mypy --strict to stay green on app/ (tests/ are excluded). New service functions get precise types;
  use TypedDict or a Pydantic model instead of dict[str, Any] for payloads.""", by="dev", src="manual")
M("L_alembic_parallel", "gotcha", 0.9, "alembic,migrations,deploy",
  """Never run `alembic upgrade head` from several pods at once. When it was in the container entrypoint, two replicas
  raced on the same revision: one died with DuplicateTable and alembic_version was left behind the schema.
  Migrations now run only in the pre-deploy Kubernetes Job `ledgerline-migrate` (deploy/migrate-job.yaml).""")
M("L_migration_style", "convention", 0.6, "alembic,migrations",
  """Migrations: one logical change per revision, imperative message (`alembic revision --autogenerate -m "add refunds
  table"`), always reviewed by hand. Destructive changes (drop column/table) ship in a separate revision one release
  after the code stopped using the column.""")
M("L_alembic_enum", "gotcha", 0.65, "alembic,migrations,postgres",
  """Alembic autogenerate does not notice new values of a Postgres ENUM (or server_default changes). For a new
  invoice_status value write op.execute("ALTER TYPE invoice_status ADD VALUE 'disputed'") by hand; the new value
  can't be used in the same transaction, so any backfill goes into a separate revision.""")
M("L_concurrent_index", "gotcha", 0.7, "alembic,migrations,postgres,indexes",
  """CREATE INDEX CONCURRENTLY cannot run inside a transaction block, and Alembic wraps each revision in one. Use `with
  op.get_context().autocommit_block(): op.create_index(..., postgresql_concurrently=True)`, otherwise the migration
  aborts with ActiveSqlTransaction.""")
M("L_stripe_raw_body", "gotcha", 0.85, "stripe,webhooks,fastapi",
  """Stripe webhook signature verification needs the exact raw body bytes. Parsing with `await request.json()` and
  re-serializing changes whitespace/key order and raises stripe.error.SignatureVerificationError. The route in
  app/api/routes/stripe_webhooks.py reads `await request.body()` and passes that to stripe.Webhook.construct_event.""")
M("L_stripe_idempotency", "convention", 0.85, "stripe,idempotency",
  """Every Stripe write call passes idempotency_key derived from our own row id (f"refund-{refund.id}",
  f"invoice-finalize-{invoice.id}") so that a retried arq job can never create a second refund or charge.""")
M("L_webhook_dedupe", "decision", 0.75, "stripe,webhooks,postgres",
  """Webhook events are de-duplicated by Stripe event id in table processed_events (unique constraint on event_id); the
  handler answers 200 right away for ids it has seen. Stripe delivers at least once and we received duplicates
  during their March incident.""")
M("L_webhook_ack", "decision", 0.7, "stripe,webhooks,arq",
  """The Stripe webhook endpoint only verifies the signature, stores the raw event and enqueues an arq job, then
  returns 200. Stripe treats slow responses as failed deliveries and retries, so no database-heavy work in the
  request.""")
M("L_stripe_api_version", "fact", 0.6, "stripe",
  """Stripe API version is pinned to 2024-06-20 (stripe.api_version in app/integrations/stripe_client.py); the Stripe
  account default is newer. Upgrading changes the shape of invoice.lines, so do it in its own PR with fixtures
  re-recorded.""")
M("L_stripe_mock", "fact", 0.55, "stripe,testing,docker",
  """Tests never hit real Stripe: docker compose runs stripe-mock on :12111, and stripe_client.py switches
  stripe.api_base to it when LEDGER_STRIPE_MOCK=1. The sk_test key in .env.example is a placeholder that stripe-mock
  accepts.""")
M("L_arq", "decision", 0.9, "background-jobs,arq,celery,redis",
  """Moved background jobs off Celery to arq (asyncio-native, Redis-backed). Celery's prefork workers could not share
  the async SQLAlchemy engine, so every task was wrapped in asyncio.run(), which leaked asyncpg connections and made
  tasks 3x slower. Worker entrypoint is now `arq app.worker.WorkerSettings`; jobs are async functions in app/jobs/.""", at="2026-02-17T09:40:00.000Z", by="claude")
M("L_rej_dramatiq", "rejected_alternative", 0.6, "background-jobs,dramatiq",
  """When replacing Celery we also tried Dramatiq and rejected it: asyncio support was an add-on middleware that still
  ran one loop per worker thread, and it has no built-in periodic jobs, which we need for the nightly dunning run.""", at="2026-02-16T16:05:00.000Z")
M("L_remove_celery_todo", "todo", 0.5, "background-jobs,celery,cleanup",
  """Remove the leftover celery dependency and app/tasks/legacy_celery.py once the last Celery queue (email_legacy) is
  drained; check with `redis-cli -n 0 llen email_legacy` that it is 0 for a week.""", at="2026-02-24T11:00:00.000Z")
M("L_rej_background_tasks", "rejected_alternative", 0.7, "fastapi,background-jobs",
  """Don't use FastAPI BackgroundTasks for emails or PDFs: they run inside the web process after the response is sent
  and are lost when the pod restarts or is scaled down. Anything that must eventually happen goes through arq.""")
M("L_dunning_schedule", "fact", 0.7, "dunning,payments",
  """Dunning: a failed payment is retried on day 1, 3, 7 and 14 (RETRY_SCHEDULE in app/services/dunning.py). After the
  4th failure the subscription goes past_due → canceled and the customer gets the dunning_final email template.""")
M("L_dunning_cron", "fact", 0.6, "dunning,arq,cron",
  """The nightly dunning run is an arq cron job at 02:15 UTC (WorkerSettings.cron_jobs). It is idempotent per invoice
  per day thanks to the unique (invoice_id, attempt_date) constraint on dunning_attempts, so re-running it by hand
  is safe.""", at="2026-02-20T10:00:00.000Z")
M("L_utc", "convention", 0.7, "time,timezones",
  """All timestamps are timezone-aware UTC: DateTime(timezone=True) columns and app/clock.py utcnow(). Never call
  datetime.utcnow() (naive, deprecated in 3.12). Tests freeze time with the time-machine plugin, not freezegun.""")
M("L_anchor_drift", "gotcha", 0.8, "billing-periods,time",
  """Billing periods are anchored on the customer's billing_anchor_day, clamped to the month's last day for 29-31.
  Adding relativedelta(months=1) repeatedly makes the anchor drift (Jan 31 → Feb 29 → Mar 29), so
  next_period_start() always recomputes from the anchor day instead of from the previous period end.""")
M("L_lock_order", "gotcha", 0.85, "postgres,locking,invoices",
  """finalize_invoice() takes SELECT ... FOR UPDATE on the subscription row. Calling it from a code path that had
  already locked the customer row in the opposite order deadlocked in production (asyncpg DeadlockDetectedError).
  Lock order is always customer → subscription → invoice.""")
M("L_outbox", "decision", 0.7, "events,postgres,outbox",
  """Domain events (invoice.finalized, payment.failed) are written to the outbox table in the same transaction as the
  change; a poller publishes them to SNS using FOR UPDATE SKIP LOCKED so several workers never publish the same row.""")
M("L_pool_size", "gotcha", 0.7, "postgres,connections,rds",
  """SQLAlchemy pool is pool_size=10, max_overflow=5 per process. With 4 uvicorn workers x 6 pods that is up to 360
  connections, and the RDS instance allows 400 (max_connections). Don't raise the pool size without going through
  PgBouncer.""", at="2025-11-03T13:20:00.000Z")
M("L_pgbouncer", "gotcha", 0.75, "postgres,pgbouncer,asyncpg",
  """Since PgBouncer (transaction pooling) sits in front of RDS, asyncpg's prepared statement cache breaks with
  DuplicatePreparedStatementError / 'prepared statement "__asyncpg_stmt_1__" does not exist'. The engine URL
  carries ?prepared_statement_cache_size=0 and connect_args={"statement_cache_size": 0}; keep both when touching
  app/db/session.py.""", at="2026-04-08T15:30:00.000Z")
M("L_uvicorn", "fact", 0.5, "deploy,uvicorn",
  """Production runs `uvicorn app.main:app --workers 4 --proxy-headers --forwarded-allow-ips='*'` (gunicorn was removed
  in release 2.3.0). Health checks: /healthz (process up) and /readyz (DB reachable).""")
M("L_proxy_headers", "gotcha", 0.7, "deploy,rate-limiting,uvicorn",
  """Without --proxy-headers and forwarded-allow-ips, request.client.host is the load balancer's IP. When the rate
  limiter was still keyed by client IP, that throttled all customers together behind the ALB.""")
M("L_rate_limit", "decision", 0.65, "rate-limiting,redis,api",
  """Public API rate limit is 100 requests/minute per API key (not per IP), a Redis sliding window in
  app/middleware/ratelimit.py. Over the limit returns 429 with a Retry-After header.""")
M("L_api_versioning", "convention", 0.6, "api,versioning",
  """Public endpoints are versioned in the path (/v1/...). Breaking changes go into new routers under app/api/v2/;
  adding optional fields to v1 responses is fine and doesn't need a new version.""")
M("L_problem_json", "convention", 0.65, "api,errors,fastapi",
  """API errors are RFC 9457 problem+json, produced by the exception handler in app/api/errors.py. Services raise
  BillingError subclasses (InvoiceAlreadyFinalized, CurrencyMismatch, ...), never fastapi.HTTPException.""")
M("L_cursor_pagination", "decision", 0.6, "api,pagination,postgres",
  """List endpoints use cursor pagination (opaque base64 cursor of (created_at, id)), not limit/offset: OFFSET scans on
  the invoices table got slow past about a million rows.""")
M("L_pdf_weasyprint", "decision", 0.65, "pdf,invoices",
  """Invoice PDFs are rendered with WeasyPrint from the Jinja templates in app/templates/invoice/, in an arq job, and
  stored in S3 at invoices/{yyyy}/{mm}/{invoice_id}.pdf. The API returns a presigned URL valid for 15 minutes.""")
M("L_rej_chromium", "rejected_alternative", 0.55, "pdf,invoices,docker",
  """Headless Chromium (Playwright) for invoice PDFs was rejected: it added ~400 MB to the image and a 2 s cold start
  per render. WeasyPrint's CSS support is enough for our invoice layout.""")
M("L_weasy_pango", "gotcha", 0.6, "pdf,docker",
  """WeasyPrint needs Pango from the OS. The python:3.12-slim image must `apt-get install libpango-1.0-0
  libpangoft2-1.0-0`, otherwise importing weasyprint fails with OSError: cannot load library 'pango-1.0-0'.""")
M("L_csv_export", "todo", 0.55, "export,csv,invoices",
  """Invoice CSV export (GET /v1/invoices/export) is only half done: the StreamingResponse works, but amounts are raw
  minor units and the tax columns are missing. Tracked in BILL-412.""")
M("L_vat_rates_todo", "todo", 0.5, "tax,vat",
  """Replace the hard-coded EU VAT rate table in app/services/tax_rates.py with Avalara lookups once the contract is
  signed; until then update the rates by hand when a country changes them.""")
M("L_stripe_tax_note", "note", 0.4, "tax,stripe",
  """Stripe Tax was evaluated in February: price was acceptable, but it couldn't express our reverse-charge flow for EU
  B2B customers. Revisit in Q3.""", by="dev", src="meeting 2026-02-09")
M("L_credit_notes", "fact", 0.6, "refunds,invoices",
  """A partial refund creates a credit_notes row linked to the invoice and the invoice status stays 'paid'; only a
  refund of the full amount sets it to 'refunded'.""")
M("L_flags", "decision", 0.55, "feature-flags,settings",
  """Feature flags in the billing service are plain env vars read through pydantic-settings (Settings.flag_*), not a
  flag service: billing must not depend on an external service at request time.""")
M("L_settings", "convention", 0.6, "settings,config",
  """All configuration lives in app/settings.py (pydantic-settings BaseSettings, env prefix LEDGER_) and is read via
  get_settings(). Don't read os.environ anywhere else.""")
M("L_structlog", "convention", 0.65, "logging,pii",
  """Logging is structlog, JSON in production. Bind context with log = log.bind(invoice_id=..., customer_id=...) rather
  than formatting values into the message. Never log card or IBAN data; the PII processor only masks known keys.""")
M("L_pr_pref", "preference", 0.55, "reviews,migrations",
  """The dev wants migrations in a separate commit from code changes, and PRs that touch money calculation kept under
  ~400 changed lines.""", by="dev", src="manual")
M("L_before_after_pref", "preference", 0.55, "reviews,proration,tax",
  """When proration or tax code changes, the dev wants a before/after table of amounts for a few sample invoices in the
  PR description.""", by="dev", src="PR #318 review")
M("L_local_dev", "fact", 0.5, "local-dev,docker",
  """Local setup: `docker compose up -d db redis stripe-mock`, then `uv run uvicorn app.main:app --reload`. The db
  container listens on 5433, not 5432, so it doesn't clash with a Postgres installed on the laptop.""")
M("L_make_check", "convention", 0.55, "ci,testing,tooling",
  """Run `make check` before pushing: ruff check, ruff format --check, mypy, pytest -x -q. CI runs exactly this target,
  so green locally means green in CI (except the slow integration marker).""")
M("L_slow_tests", "fact", 0.45, "testing,pytest",
  """The full suite takes about 6 minutes, mostly testcontainers startup; `pytest -m "not integration"` runs the unit
  tests in ~20 seconds.""")
M("L_lifespan", "gotcha", 0.7, "fastapi,startup",
  """Because app/main.py passes lifespan= to FastAPI, handlers registered with @app.on_event("startup") are never
  called, silently. Put startup/shutdown code in the lifespan() context manager.""")
M("L_openapi", "convention", 0.55, "api,openapi,sdk",
  """openapi.json is committed and checked in CI (`make openapi-check`). After changing routes or schemas run `make
  openapi`, otherwise the generated TypeScript client used by the dashboard is out of date and the check fails.""")
M("L_invoice_numbers", "decision", 0.8, "invoices,legal,postgres",
  """Invoice numbers are gapless and sequential per legal entity (INV-{entity}-{year}-{seq:06d}), from a Postgres
  sequence per entity. Numbers are assigned at finalization, not when the draft is created, because gaps are a legal
  problem in Germany and France.""")
M("L_slo", "fact", 0.45, "slo,performance",
  """Billing API SLO: 99.9% availability and p95 < 300 ms for /v1/invoices/*. /v1/invoices/preview is excluded because
  it calls the tax provider synchronously.""")
M("L_secrets_in_env", "gotcha", 0.6, "settings,secrets",
  """pydantic-settings also reads a .env file: real environment variables win, but anything not set in the environment
  falls back to the file. A stale .env baked into an image once pointed staging at the dev Stripe account;
  .dockerignore now excludes .env*.""")
M("L_webhook_order", "gotcha", 0.7, "stripe,webhooks",
  """Stripe does not guarantee event order: invoice.paid can arrive before invoice.finalized. Handlers must load the
  current object from the API (or compare event.created) instead of assuming a state transition order.""")
M("L_sync_in_async", "gotcha", 0.7, "asyncio,performance",
  """Calling the sync stripe-python client inside async endpoints blocks the event loop for the whole request. Use the
  async methods (`await stripe.Invoice.retrieve_async(...)`) or wrap the call in run_in_threadpool.""")
M("L_metrics_names", "convention", 0.45, "observability,prometheus",
  """Prometheus metrics in billing are prefixed ledger_ and use seconds for durations
  (ledger_invoice_finalize_seconds). Never put customer_id or invoice_id in a label; the platform team drops those
  labels anyway.""")
M("L_rej_numeric", "rejected_alternative", 0.5, "money,postgres",
  """Postgres NUMERIC(12,2) for amounts was the original plan and was rejected: two decimal places don't fit zero- or
  three-decimal currencies (JPY, KWD), and Decimal round-trips through asyncpg were slower than BIGINT.""")
M("L_alembic_heads", "gotcha", 0.6, "alembic,migrations,git",
  """After merging two branches that both added a migration, `alembic upgrade head` fails with 'Multiple head revisions
  are present'. Fix with `alembic merge heads -m "merge"` in the PR that lands second, not by editing down_revision
  by hand.""")
M("L_preview_cache", "decision", 0.5, "performance,redis,tax",
  """/v1/invoices/preview results are cached in Redis for 60 s keyed by subscription id + a hash of the pending
  changes, because the UI calls it on every keystroke in the plan editor.""")
M("L_customer_portal_todo", "todo", 0.4, "stripe,portal",
  """Customer self-service portal: payment method update works through Stripe's hosted portal, but plan changes are
  still done by support in the admin. Not started; waiting on product decision about mid-cycle downgrades.""")


# ---------------------------------------------------------------------------------------------------------------
# pulseboard: React 18 + Vite 5 + TypeScript metrics dashboard (pnpm, TanStack Query, ECharts, Cloudflare Pages)
# ---------------------------------------------------------------------------------------------------------------
project("pulseboard")
M("D_pnpm", "decision", 0.6, "tooling,pnpm",
  """pnpm 9 is the only package manager (packageManager field in package.json, enforced with corepack). Running npm
  install creates a package-lock.json, and CI fails when one is present.""")
M("D_tanstack", "decision", 0.85, "state,tanstack-query,zustand",
  """Server data lives in TanStack Query v5 (hooks in src/api/queries/*.ts); never copy fetched data into Zustand.
  Zustand stores are only for UI state: sidebar, selected time range, widget filters.""")
M("D_rej_redux", "rejected_alternative", 0.55, "state,redux",
  """Redux Toolkit + RTK Query was rejected: too much boilerplate for a read-mostly dashboard, and TanStack Query was
  already used by the charts package, so two caches would have had to agree.""")
M("D_query_keys", "convention", 0.7, "tanstack-query",
  """Query keys come from the factory in src/api/queryKeys.ts (e.g. qk.metrics.series(orgId, range)); never write an
  inline array key. Mutations invalidate by prefix (qk.metrics.all(orgId)), which only works if every key has the
  factory's shape.""")
M("D_staletime", "gotcha", 0.8, "tanstack-query,performance,rate-limiting",
  """TanStack Query's default staleTime is 0, so every window refocus refetched all ~30 widgets at once and the API
  answered 429 Too Many Requests. The QueryClient in src/main.tsx sets staleTime: 60_000 and metrics queries set
  refetchOnWindowFocus: false.""")
M("D_v5_renames", "gotcha", 0.6, "tanstack-query,upgrade",
  """TanStack Query v5 renamed cacheTime to gcTime and isLoading to isPending, and removed onSuccess/onError/onSettled
  from useQuery. Snippets from v4 docs or old PRs need translating; put side effects in the mutation callbacks or an
  effect on the query data.""")
M("D_recharts_old", "decision", 0.6, "charts,recharts",
  """Charts use Recharts 2 (components in src/components/charts/); wrap every chart in ResponsiveContainer and pass
  data already bucketed by the API.""", at="2025-10-09T10:15:00.000Z")
M("D_echarts", "decision", 0.85, "charts,echarts,recharts,performance",
  """Time-series charts moved from Recharts to Apache ECharts (echarts-for-react). Recharts renders each point as an
  SVG node and froze the tab above ~20k points; ECharts draws on canvas and handles 500k points with sampling:
  'lttb'. Small bar/pie widgets are still Recharts for now.""", at="2026-02-02T15:45:00.000Z")
M("D_echarts_treeshake", "gotcha", 0.7, "charts,echarts,bundle-size",
  """Import ECharts from 'echarts/core' and register only the charts and components used (src/components/charts/
  echarts.ts). A plain `import * as echarts from 'echarts'` added about 1 MB to the main bundle.""", at="2026-02-05T09:20:00.000Z")
M("D_hidden_tab_chart", "gotcha", 0.6, "charts,recharts,radix",
  """ResponsiveContainer measures 0x0 when its parent is display:none (an inactive Radix Tabs panel), so the chart
  stays blank after switching tabs. Give the wrapper an explicit height and only mount the chart when its tab is
  active.""")
M("D_echarts_option_memo", "gotcha", 0.6, "charts,echarts,react",
  """Building the ECharts option object inline creates a new object every render, so echarts-for-react calls setOption
  each time and the user's dataZoom range resets while live data streams in. Memoize the option with useMemo.""", at="2026-02-11T13:00:00.000Z")
M("D_vite_env", "gotcha", 0.7, "vite,config,cloudflare",
  """Only variables prefixed VITE_ are exposed on import.meta.env, and they are inlined at build time: changing
  VITE_API_URL in the Cloudflare Pages settings does nothing until the project is rebuilt.""")
M("D_runtime_config", "decision", 0.75, "config,deploy",
  """Runtime settings (API base URL, Sentry DSN, environment name) are fetched from /config.json before React renders
  (loadConfig() in src/config.ts), so the same build artifact is promoted from staging to production. Only true
  build-time constants remain VITE_* variables.""")
M("D_dev_proxy", "fact", 0.55, "vite,local-dev",
  """In development Vite proxies /api to http://localhost:8080 (server.proxy in vite.config.ts) so the session cookie
  is same-origin. Leave the API URL in public/config.json as "/api" locally.""")
M("D_session_cookie", "decision", 0.75, "auth,security",
  """Auth relies on the backend's HttpOnly session cookie. Never store tokens or JWTs in localStorage or
  sessionStorage: the security review flagged XSS token exfiltration.""")
M("D_csrf", "gotcha", 0.7, "auth,security,api",
  """State-changing requests need an X-CSRF-Token header copied from the csrf_token cookie. apiFetch() adds it, so a
  raw fetch() for a POST/PUT/DELETE fails with 403 and error code CSRF_MISMATCH.""")
M("D_api_fetch", "convention", 0.8, "api,http",
  """All HTTP goes through apiFetch() in src/api/client.ts: credentials: 'include', CSRF header, JSON parsing and an
  ApiError with status and code on non-2xx. axios was removed (14 kB gzip) and must not come back.""")
M("D_ts_strict", "convention", 0.65, "typescript",
  """TypeScript runs with strict and noUncheckedIndexedAccess. Don't use `any`: use `unknown` and narrow, or describe
  the API response with a zod schema in src/api/schemas/.""")
M("D_zod", "decision", 0.65, "api,validation,zod",
  """API responses are validated with zod at the boundary (apiFetch(url, { schema })). When the backend renamed a field
  in March, it surfaced as a ZodError in Sentry instead of NaN values silently drawn on charts.""")
M("D_vitest", "convention", 0.6, "testing,vitest",
  """Unit and component tests use Vitest + @testing-library/react, colocated as Component.test.tsx. Query elements by
  role or label; data-testid only when an element has no accessible name.""")
M("D_msw", "convention", 0.65, "testing,msw,mocks",
  """Network mocking uses MSW handlers in src/mocks/handlers.ts, shared by Vitest, Storybook and `pnpm dev:mock`. Don't
  vi.mock() the api modules; tests should exercise apiFetch and the zod schemas.""")
M("D_msw_v2", "gotcha", 0.55, "testing,msw,upgrade",
  """MSW 2 changed the handler API: http.get(...) returning HttpResponse.json(...) instead of rest.get(...) with
  res(ctx.json(...)). The examples on the internal wiki are still v1 and simply never match a request.""")
M("D_jsdom_resizeobserver", "gotcha", 0.65, "testing,vitest,echarts",
  """jsdom has no ResizeObserver and no canvas, so ECharts widgets crash under Vitest with 'ReferenceError:
  ResizeObserver is not defined'. src/test/setup.ts polyfills ResizeObserver, and chart tests mock
  echarts-for-react.""", at="2026-02-06T16:30:00.000Z")
M("D_playwright", "fact", 0.55, "testing,e2e,playwright",
  """End-to-end tests are Playwright specs in e2e/, run against `pnpm preview` with MSW disabled and the seeded staging
  API. They run on main and release branches only, not on every PR. Debug with `pnpm e2e --ui`.""")
M("D_playwright_wait", "gotcha", 0.6, "testing,e2e,playwright,flaky",
  """e2e/dashboard.spec.ts was flaky because it slept with page.waitForTimeout(2000). Wait on state instead: `await
  expect(page.getByTestId('grid')).toHaveAttribute('data-charts-ready', 'true')`.""")
M("D_router", "decision", 0.6, "routing,code-splitting",
  """Routing is React Router 6 data routers (createBrowserRouter in src/router.tsx), with lazy() route modules so each
  page is its own chunk.""")
M("D_rej_nextjs", "rejected_alternative", 0.7, "framework,nextjs,deploy",
  """Next.js was considered and rejected: the whole app is behind login (no SEO), and we deploy static files to
  Cloudflare Pages. SSR would mean running and paying for a Node server.""")
M("D_spa_redirects", "gotcha", 0.7, "cloudflare,routing,deploy",
  """Cloudflare Pages needs public/_redirects containing `/* /index.html 200` for client-side routes; without it,
  reloading a deep link like /orgs/42/alerts returns a 404.""")
M("D_tailwind", "convention", 0.6, "styling,tailwind",
  """Styling is Tailwind 3 utility classes plus the cn() helper (clsx + tailwind-merge) from src/lib/cn.ts; no CSS
  modules in new components. Colors and spacing tokens live in tailwind.config.ts theme.extend.""")
M("D_tailwind_dynamic", "gotcha", 0.7, "styling,tailwind",
  """Tailwind only generates classes it finds as complete strings in the source. Status badges built as
  `bg-${color}-500` were unstyled in production builds. Use a lookup map of full class names (STATUS_CLASSES in
  src/components/StatusBadge.tsx).""")
M("D_radix", "decision", 0.5, "ui,radix",
  """UI primitives are Radix UI, copied shadcn/ui-style into src/components/ui/. We own that code: edit it there
  instead of wrapping the components again.""")
M("D_dark_mode", "fact", 0.45, "styling,theme",
  """Dark mode uses Tailwind's `class` strategy. The theme is kept in localStorage key pb-theme and applied by an
  inline script in index.html before the bundle loads, which avoids a white flash.""")
M("D_i18n", "convention", 0.55, "i18n",
  """Every user-visible string goes through i18next's t() with keys in src/locales/en/*.json. `pnpm i18n:check` lists
  keys missing from de and fr; CI runs it as a warning.""")
M("D_dates", "decision", 0.55, "dates,bundle-size",
  """Date handling is date-fns v3 + date-fns-tz; moment.js was removed for bundle size. API timestamps are UTC ISO
  strings and are converted to the organization's timezone only when displayed.""")
M("D_tz_buckets", "gotcha", 0.75, "dates,timezones,charts",
  """Daily chart buckets must be computed in the organization's timezone (org.settings.timezone), not the browser's: a
  user in Tokyo looking at a Berlin org saw every daily bar shifted by one day. Use toZonedTime() via the helpers in
  src/lib/time.ts.""")
M("D_bundle_budget", "convention", 0.6, "bundle-size,ci",
  """Main chunk budget is 250 kB gzipped, enforced by size-limit (`pnpm size`) in CI. Heavy libraries (ECharts,
  SheetJS, the markdown renderer) must be loaded with dynamic import().""")
M("D_xlsx_todo", "todo", 0.5, "export,xlsx",
  """Excel export in the table widget: the button exists behind flag exportXlsx, but SheetJS is imported eagerly and
  busts the bundle budget. Needs a dynamic import() before the flag can be turned on.""")
M("D_csv_export", "fact", 0.5, "export,csv",
  """CSV export of the table widget shipped in 1.14: generated client-side with papaparse from the rows currently
  loaded, respecting filters but not pagination beyond 5,000 rows.""")
M("D_flags", "fact", 0.5, "feature-flags",
  """Feature flags come from the backend's /api/flags endpoint through the useFlag('name') hook; there's no
  LaunchDarkly or other flag SDK in the client.""")
M("D_sentry", "fact", 0.5, "observability,sentry",
  """Sentry is initialised in src/main.tsx with tracesSampleRate 0.1. @sentry/vite-plugin uploads source maps in CI and
  then deletes the .map files from dist so they aren't publicly served.""")
M("D_eslint", "convention", 0.55, "lint,eslint,react",
  """ESLint 9 flat config (eslint.config.js) with typescript-eslint and eslint-plugin-react-hooks.
  react-hooks/exhaustive-deps is an error: fix the dependency list instead of adding eslint-disable.""")
M("D_named_exports", "preference", 0.45, "code-style",
  """The dev prefers named exports over default exports (route modules loaded with lazy() are the exception) and one
  component per file.""", by="dev", src="manual")
M("D_no_effect_fetch", "preference", 0.6, "react,data-fetching",
  """The dev doesn't want data fetched in useEffect. Loading data means a TanStack Query hook (or a route loader for
  page-level prefetch).""", by="dev", src="PR #203 review")
M("D_virtualization", "decision", 0.55, "tables,performance",
  """The alerts and events tables use @tanstack/react-virtual; rendering 5,000 rows directly made scrolling janky. Rows
  have a fixed height of 36px, which the virtualizer's estimateSize assumes.""")
M("D_strictmode_ws", "gotcha", 0.65, "react,websocket",
  """React 18 StrictMode mounts effects twice in development, so useLiveMetrics() opened two WebSockets and the server
  counted two sessions. The hook must close its socket in the effect cleanup; don't remove StrictMode to hide it.""")
M("D_websocket", "decision", 0.7, "websocket,live-data",
  """Live metrics use one WebSocket per tab (/api/ws), multiplexed by subscription id in src/live/socket.ts. Never open
  a socket per widget: the backend allows 5 sockets per session and browsers limit connections.""")
M("D_ws_reconnect", "fact", 0.55, "websocket,live-data",
  """The live socket reconnects with exponential backoff and jitter (1 s up to 30 s) and re-subscribes all active
  widgets. After a reconnect it invalidates the metrics queries so the gap is filled from the REST API.""")
M("D_storybook", "fact", 0.4, "storybook,ui",
  """Storybook 8 with the Vite builder: `pnpm storybook` serves on :6006. Chromatic visual tests run on PRs that carry
  the `ui` label.""")
M("D_a11y_grid_todo", "todo", 0.5, "accessibility,grid",
  """Keyboard users cannot move or resize widgets in the dashboard grid (react-grid-layout is mouse/touch only).
  Accessibility audit item A11Y-7; not started.""")
M("D_grid_breakpoints", "gotcha", 0.6, "grid,layout",
  """react-grid-layout keeps a separate layout per breakpoint. Saving only the lg layout made widgets pile on top of
  each other on tablet widths; persist the whole layouts object returned by onLayoutChange.""")
M("D_node", "fact", 0.45, "tooling,node",
  """Node 20 LTS (.nvmrc). Vite 5 needs Node 18+, which is why the old Jenkins agent on Node 16 failed while loading
  vite.config.ts.""")
M("D_path_alias", "gotcha", 0.5, "vite,typescript,storybook",
  """The @/ import alias comes from tsconfig paths via vite-tsconfig-paths. Vitest gets it from vite.config.ts, but
  Storybook's viteFinal needed the plugin added separately, so stories failed with 'Failed to resolve import
  "@/..."'.""")
M("D_error_boundary", "convention", 0.6, "react,errors,sentry",
  """Each widget is wrapped in <WidgetErrorBoundary> so a bad payload breaks one tile, not the whole dashboard. The
  boundary reports to Sentry with the widget type as a tag.""")
M("D_suspense_pref", "preference", 0.45, "react,data-fetching",
  """For now the dev prefers explicit isPending / isError handling in widgets over useSuspenseQuery: the suspense
  waterfall made the grid pop in tile by tile.""", by="dev", src="manual")
M("D_rej_graphql", "rejected_alternative", 0.5, "api,graphql",
  """A GraphQL (Apollo) layer for the dashboard was rejected together with the backend team: metrics endpoints are REST
  with server-side aggregation, and per-widget caching is simpler with TanStack Query keys.""")
M("D_permissions", "fact", 0.6, "auth,permissions",
  """Roles come from /api/me (viewer, editor, admin). The UI hides edit controls for viewers, but the backend enforces
  permissions; never treat the client-side check as security.""")
M("D_design_note", "note", 0.3, "design,alerts",
  """Design review March 2026: product wants the alert timeline to look like Grafana's state timeline panel. Mockups
  are in the Figma file 'Pulseboard v3 / Alerts'.""", by="dev", src="meeting 2026-03-12")
M("D_react19_todo", "todo", 0.45, "react,upgrade",
  """React 19 upgrade is blocked by react-grid-layout's peer dependency (react < 19). Check whether their v2 release
  lifted it before trying again.""")
M("D_alert_polling", "decision", 0.55, "alerts,live-data",
  """The alerts page polls every 15 s (refetchInterval) rather than using the WebSocket: alert state changes are rare,
  and the socket is reserved for high-rate metrics.""")
M("D_build", "fact", 0.5, "build,typescript,vite",
  """`pnpm build` runs `tsc -b && vite build`. Vite alone doesn't type-check, so type errors only fail the build
  because of the tsc step.""")
M("D_number_format", "convention", 0.55, "i18n,formatting",
  """Format numbers with the helpers in src/lib/format.ts (Intl.NumberFormat cached per locale). Don't call toFixed()
  in components: it ignores the locale, so German users saw 1,234.50 instead of 1.234,50.""")
M("D_coverage", "fact", 0.4, "testing,coverage",
  """Vitest coverage uses the v8 provider. CI fails below 70% line coverage for src/lib and src/api only; components
  aren't gated.""")
M("D_generated_client", "fact", 0.55, "api,openapi",
  """Billing endpoints are called through a client generated from the billing service's openapi.json (`pnpm
  gen:billing`, output in src/api/generated/billing/). Don't edit the generated files; regenerate.""")
M("D_cf_cache", "gotcha", 0.6, "cloudflare,deploy,caching",
  """index.html must not be cached by the browser: after a deploy, users with a cached index.html requested old chunk
  hashes that no longer existed and got a blank page. public/_headers sets Cache-Control: no-cache on /index.html
  and immutable on /assets/*.""")
M("D_chunk_error", "decision", 0.5, "deploy,code-splitting",
  """When a lazy route chunk fails to load (ChunkLoadError after a deploy), the router's errorElement reloads the page
  once (guarded by a sessionStorage flag) instead of showing an error screen.""")
M("D_zustand_persist", "gotcha", 0.55, "zustand,state",
  """Zustand persist middleware rehydrates asynchronously with some storages; components rendered before hydration read
  the default time range. useHasHydrated() in src/stores/ui.ts gates the widgets that depend on persisted filters.""")


# ---------------------------------------------------------------------------------------------------------------
# logtide: Rust CLI `tide` for searching and following log files (clap 4, regex, rayon, cargo-dist)
# ---------------------------------------------------------------------------------------------------------------
project("logtide")
M("R_workspace", "fact", 0.55, "workspace,cargo",
  """Workspace layout: crates/tide is the binary (CLI, input handling, printing), crates/tide-core the library
  (matching, log parsing, time filters). Versions are kept in sync through [workspace.package] version.""")
M("R_clap", "decision", 0.6, "cli,clap",
  """Argument parsing uses the clap 4 derive API (struct Cli with #[command(subcommand)] in crates/tide/src/cli.rs).
  The builder API is used only for the dynamic completion of --field names.""")
M("R_rej_argh", "rejected_alternative", 0.45, "cli,binary-size",
  """argh was considered instead of clap to save ~300 kB of binary and rejected: no shell completions and poor --help
  output. Binary size isn't what users complain about.""")
M("R_errors", "convention", 0.75, "errors,anyhow,thiserror",
  """tide-core returns thiserror enums (TideError); only the binary crate uses anyhow, adding .with_context(|| format!(
  "reading {}", path.display())) at each I/O call. Never expose anyhow::Error in tide-core's public API.""")
M("R_exit_codes", "convention", 0.75, "cli,exit-codes",
  """Exit codes follow grep: 0 when something matched, 1 when nothing matched, 2 on error. main() returns ExitCode;
  don't call std::process::exit() from deep code, it skips destructors, so the BufWriter and the pager never get
  flushed.""")
M("R_broken_pipe", "gotcha", 0.8, "io,stdout,pipes",
  """`tide ERROR app.log | head` panicked with 'failed printing to stdout: Broken pipe (os error 32)' because println!
  panics on EPIPE. All output goes through writeln! on the locked stdout, and io::ErrorKind::BrokenPipe is treated
  as a clean exit with code 0.""")
M("R_bufwriter", "gotcha", 0.7, "io,stdout,performance",
  """Rust's stdout is always line-buffered (LineWriter), even when piped, which made printing a million matches ~10x
  slower than grep. The printer wraps the stdout lock in BufWriter::with_capacity(64 * 1024, ...) and flushes at
  exit and after each batch in follow mode.""")
M("R_regex", "decision", 0.8, "regex,matching",
  """Patterns use the regex crate (finite automata, guaranteed linear time), not fancy-regex: users paste patterns from
  logs and a catastrophic backtracking case would hang tide on a multi-GB file. Look-around and backreferences are
  unsupported, and --help says so.""")
M("R_rej_pcre2", "rejected_alternative", 0.55, "regex,musl,windows",
  """PCRE2 (pcre2 crate) as the default engine was rejected: it needs a C toolchain for the static musl builds and
  broke `cargo install` on Windows without MSVC tools. A --pcre2 cargo feature might come later; nobody is working
  on it.""")
M("R_memchr", "fact", 0.6, "matching,performance,memchr",
  """Pure literal patterns skip the regex engine: tide-core::search::literal uses memchr::memmem::Finder, about 3x
  faster on plain strings. regex-syntax decides whether a pattern is a literal (no metacharacters after parsing).""")
M("R_mmap", "decision", 0.6, "io,mmap,performance",
  """Files larger than 64 MiB are memory-mapped with memmap2; smaller ones are read with read_to_end into a reused
  buffer. Mapping small files was slower because of page-fault overhead.""")
M("R_mmap_sigbus", "gotcha", 0.8, "io,mmap,logrotate",
  """Memory-mapping a file that logrotate truncates underneath us (copytruncate) kills the process with SIGBUS. In
  follow mode, and for any file under /var/log, tide uses buffered reads instead of mmap.""")
M("R_notify", "decision", 0.65, "follow,notify",
  """`tide follow` uses the notify crate (inotify / FSEvents / ReadDirectoryChangesW), with a 250 ms polling fallback
  for NFS and other network filesystems where inotify events never arrive.""")
M("R_rotate_reopen", "gotcha", 0.75, "follow,logrotate",
  """After logrotate renames app.log to app.log.1, the watcher keeps following the old inode. The follower compares the
  path's inode (MetadataExt::ino) with the open file's on every event and reopens the path when it changes, like
  `tail -F`.""")
M("R_rayon", "decision", 0.7, "concurrency,rayon,output",
  """Multi-file searches use rayon's par_iter over the file list; results go through a crossbeam channel to one printer
  thread, so lines from different files are never interleaved mid-line.""")
M("R_rej_tokio", "rejected_alternative", 0.7, "async,tokio,binary-size",
  """tokio was rejected: searching is CPU- and disk-bound, async file I/O on Linux is a thread pool anyway, and it
  added 1.2 MB and ~40 crates to the build. Plain threads + rayon.""")
M("R_output_order", "gotcha", 0.65, "output,testing,concurrency",
  """Without --sort the order of files in the output depends on thread scheduling. Snapshot tests must pass --sort path
  (or --threads 1); --sort buffers per file and gives up streaming, which is why it isn't the default.""")
M("R_insta", "convention", 0.65, "testing,insta,snapshots",
  """CLI output tests are insta snapshots (tests/snapshots/) driven by assert_cmd. Review changes with `cargo insta
  review`; never edit .snap files by hand.""")
M("R_insta_ci", "gotcha", 0.55, "testing,insta,ci",
  """Locally `cargo insta test` keeps going and only writes .snap.new files, so a snapshot that was never accepted
  looks fine. In CI insta detects the environment, writes nothing and the assertion fails. Accept with `cargo insta
  test --accept` (or `cargo insta review`) and commit the .snap files.""")
M("R_colors", "decision", 0.55, "output,colors",
  """Colors go through anstream + anstyle (what clap uses), honouring NO_COLOR, CLICOLOR_FORCE and --color
  auto|always|never. The colored crate was dropped: it wrote escape codes into pipes on Windows.""")
M("R_color_snapshots", "gotcha", 0.5, "testing,colors,snapshots",
  """Snapshot tests set NO_COLOR=1 (tests/common/mod.rs). If a snapshot suddenly contains escape codes like
  \\u{1b}[31m, some new code path is writing a raw anstyle::Style to stdout instead of through the anstream writer.""")
M("R_json_field", "fact", 0.6, "json,parsing",
  """`--field level=error` parses a line as JSON (serde_json) only when it starts with '{'. Lines that fail to parse
  are treated as plain text and can still match the pattern; a parse error is never fatal.""")
M("R_rej_simdjson", "rejected_alternative", 0.5, "json,performance",
  """simd-json was benchmarked for JSON log lines: 1.6x faster parsing, but it needs a mutable copy of each line plus
  unsafe, and total runtime improved only 12% because most lines are rejected before parsing. Stayed on serde_json.""")
M("R_chrono_old", "decision", 0.55, "time,chrono",
  """Timestamp parsing for --since/--until uses chrono 0.4 with chrono-tz for named zones; formats are tried in order
  from the list in crates/tide-core/src/time.rs.""", at="2025-08-27T12:00:00.000Z")
M("R_jiff", "decision", 0.8, "time,jiff,chrono,binary-size",
  """Switched time handling from chrono + chrono-tz to jiff: DST-correct arithmetic for --since "yesterday", one crate
  instead of two, and chrono-tz compiled the whole tz database into the binary (+700 kB) while jiff reads the system
  zoneinfo (bundled only on Windows).""", at="2026-03-10T10:30:00.000Z")
M("R_naive_local", "gotcha", 0.65, "time,containers",
  """Log timestamps without an offset are interpreted in the local timezone, not UTC. In containers TZ is usually
  unset, so local is UTC there but not on a laptop, and `--since 10:00` gave different results; --tz overrides it.""")
M("R_msrv", "fact", 0.6, "msrv,rust-version",
  """MSRV is Rust 1.74 (rust-version in Cargo.toml), verified by the msrv CI job. Raising it requires a minor release
  and a CHANGELOG entry.""")
M("R_msrv_update", "gotcha", 0.6, "msrv,dependencies",
  """`cargo update` can pull in a dependency release that needs a newer rustc than our MSRV; the msrv job then fails
  with 'package `x` cannot be built because it requires rustc 1.79'. Use
  `CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo update` or pin it with `cargo update -p x --precise
  <version>`.""")
M("R_release", "decision", 0.7, "release,cargo-dist",
  """Releases are built by cargo-dist when a v* tag is pushed: Linux x86_64/aarch64 (musl, static), macOS universal,
  Windows MSVC, plus shell and PowerShell installers and a formula pushed to the Homebrew tap.""")
M("R_mimalloc", "gotcha", 0.65, "musl,performance,allocator",
  """musl's malloc made the static Linux binary about 2x slower on multi-threaded searches. The binary sets mimalloc as
  #[global_allocator], but only under cfg(target_env = "musl").""")
M("R_cross", "fact", 0.45, "musl,cross-compilation",
  """To build the aarch64 musl binary locally: `cross build --release --target aarch64-unknown-linux-musl` (needs
  Docker). In CI cargo-dist handles cross-compilation itself.""")
M("R_clippy", "convention", 0.6, "lint,clippy,ci",
  """CI runs `cargo clippy --all-targets --all-features -- -D warnings`. clippy::pedantic is enabled only in
  tide-core's lib.rs, and every allowed pedantic lint is listed there with a reason comment.""")
M("R_rustfmt_nightly", "convention", 0.55, "formatting,rustfmt",
  """rustfmt.toml uses imports_granularity = "Crate" and group_imports = "StdExternalCrate", which are nightly-only
  options: format with `cargo +nightly fmt`. Stable rustfmt silently ignores them and CI's fmt check runs nightly.""")
M("R_unsafe", "convention", 0.6, "unsafe,safety",
  """tide-core has #![forbid(unsafe_code)]. The only unsafe block in the workspace is the memmap2 call in
  crates/tide/src/input.rs, with a SAFETY comment about truncation; adding more needs a review from the dev.""")
M("R_cargo_deny", "convention", 0.6, "dependencies,licenses,ci",
  """cargo-deny checks licenses (MIT, Apache-2.0, BSD-2/3, ISC, Unicode-3.0 allowed) and RustSec advisories in CI. A
  new dependency under MPL or GPL fails deny.toml; ask before adding an exception.""")
M("R_deps_pref", "preference", 0.6, "dependencies,binary-size",
  """The dev wants each new dependency justified in the PR (what it saves, and the size delta from `cargo bloat
  --release --crates`), and prefers a few lines of std code over a small utility crate.""", by="dev", src="manual")
M("R_config_path", "decision", 0.55, "config",
  """Config file is config.toml in dirs::config_dir()/tide. Precedence: CLI flags > TIDE_* env vars > config file >
  defaults.""")
M("R_config_macos", "gotcha", 0.7, "config,macos",
  """On macOS dirs::config_dir() is ~/Library/Application Support, not ~/.config, so configs placed in
  ~/.config/tide/config.toml were ignored. tide now also checks that path as a fallback, and `tide config path`
  prints the file actually in use.""")
M("R_config_strict", "fact", 0.5, "config,toml,serde",
  """Config is parsed with toml 0.8 + serde and #[serde(deny_unknown_fields)], so a misspelt key is an error showing
  the line and column instead of being silently ignored.""")
M("R_completions", "fact", 0.45, "cli,completions",
  """Shell completions come from `tide completions bash|zsh|fish|powershell` (clap_complete). The cargo-dist installers
  don't install them; the README explains how to.""")
M("R_manpage_todo", "todo", 0.45, "release,docs",
  """Man page: generation with clap_mangen works on branch feat/manpage, but the cargo-dist config doesn't include
  target/man/tide.1 in the archives yet. Half done.""")
M("R_crlf", "gotcha", 0.65, "windows,matching",
  """Windows log files end lines with CR LF. The line splitter cuts at LF, so matched lines kept a trailing CR and
  patterns ending in `$` never matched. A trailing CR is stripped before matching and written back unchanged on
  output.""")
M("R_bytes", "decision", 0.65, "matching,utf8",
  """Input is searched as bytes (regex::bytes), because logs regularly contain invalid UTF-8. Output uses
  String::from_utf8_lossy only when printing, so one bad byte never aborts a search.""")
M("R_decompress", "fact", 0.55, "compression,io",
  """tide transparently decompresses .gz and .zst inputs (flate2 with the rust_backend, zstd) by sniffing magic bytes,
  not by extension. --no-decompress turns it off.""")
M("R_zstd_feature", "gotcha", 0.6, "compression,dependencies,install",
  """The zstd crate builds C code (zstd-sys), which broke `cargo install tide` on a minimal Alpine image without a C
  compiler. zstd support is behind the default feature `zstd`, so `cargo install tide --no-default-features` works
  there.""")
M("R_pager", "decision", 0.5, "output,pager",
  """Output goes through a pager (less -FRX, or $TIDE_PAGER / $PAGER) only when stdout is a terminal; -F makes less
  exit immediately when output fits on one screen. --no-pager disables it.""")
M("R_pager_sigint", "gotcha", 0.55, "pager,signals",
  """With the pager active, Ctrl-C killed tide but left less running and the terminal in a broken state. tide ignores
  SIGINT while the pager child is alive (ctrlc handler) and waits for less to exit.""")
M("R_bench", "convention", 0.6, "performance,benchmarks",
  """Performance PRs need numbers: criterion (`cargo bench -p tide-core`) plus benches/compare.sh, which runs hyperfine
  against ripgrep on the 2 GB fixture. Paste both in the PR.""")
M("R_fixture_todo", "todo", 0.4, "benchmarks,ci",
  """The 2 GB benchmark fixture is generated by benches/gen_logs.py with a seed and isn't committed. Move it to a
  cached CI artifact so benchmark runs on different machines use identical input.""")
M("R_eventlog_note", "note", 0.3, "scope,windows",
  """Issue #88 asked for Windows Event Log support; agreed it's out of scope. tide reads text files and stdin only.""", by="dev", src="issue #88")
M("R_stdin_follow", "gotcha", 0.6, "follow,stdin",
  """For stdin there is no file to watch: `kubectl logs -f pod | tide follow -` just reads until EOF. The follower must
  not hand "-" to notify; it used to panic with PathNotFound.""")
M("R_highlight", "fact", 0.4, "output,colors",
  """Match highlighting reuses the match ranges from the search pass, no second regex run. With --field the highlight
  covers only the field's value.""")
M("R_error_style_pref", "preference", 0.45, "errors,ux",
  """The dev wants error messages lowercase with no trailing period (Rust convention), and any suggestion for the user
  on its own `hint:` line.""", by="dev", src="manual")
M("R_context", "fact", 0.45, "output,context-lines",
  """-A/-B/-C context lines are kept in a ring buffer in the printer; overlapping context windows are merged as grep
  does, with a `--` separator between groups.""")
M("R_tempdir", "convention", 0.5, "testing,filesystem",
  """Tests that touch the filesystem use tempfile::TempDir and never write into the repo. Follow-mode tests wait with
  the helper tests/common/wait_for_line (2 s timeout) instead of thread::sleep.""")
M("R_fsevents_flaky", "gotcha", 0.55, "testing,follow,macos,flaky",
  """Follow tests were flaky on macOS CI runners because FSEvents batches notifications with ~1 s latency. The tests
  set TIDE_FOLLOW_POLL=1 to force the polling watcher.""")
M("R_release_profile", "decision", 0.55, "release,performance,binary-size",
  """[profile.release]: lto = "fat", codegen-units = 1, panic = "abort", strip = true. About 18% faster and 40%
  smaller; release builds take ~3 minutes, so the dev profile is left alone.""")
M("R_panic_abort", "gotcha", 0.6, "errors,panics,compression",
  """With panic = "abort" in release, catch_unwind does nothing. The per-file worker must return a Result for a corrupt
  gzip stream; it used to rely on catching the panic, which took down the whole process in release builds only.""")
M("R_version", "fact", 0.35, "build,version",
  """`tide --version` appends the git commit via build.rs. Builds from the crates.io tarball have no .git, so they
  print 'unknown'; that's expected, not a bug.""")
M("R_crate_name_todo", "todo", 0.45, "release,crates-io",
  """Publishing tide-core on crates.io is blocked: the name is taken. Pick a new name (logtide-core?) before 1.0.""")
M("R_ignore", "decision", 0.6, "file-selection,ignore",
  """File discovery uses the ignore crate (as ripgrep does): respects .gitignore and .ignore and skips hidden files
  unless --hidden. -g/--glob patterns use gitignore syntax.""")
M("R_ignore_zero", "gotcha", 0.75, "file-selection,ignore,ux",
  """Most common bug report: `tide ERROR logs/` finds nothing because logs/ is in .gitignore. When zero files were
  searched, tide now prints 'N files skipped by ignore rules (use --no-ignore)' on stderr.""")
M("R_threads", "fact", 0.4, "concurrency,rayon",
  """--threads defaults to available_parallelism() capped at 8; beyond that disk bandwidth dominates. TIDE_THREADS sets
  the default.""")
M("R_large_line", "gotcha", 0.55, "io,memory",
  """A single 2 GB line (a minified JSON dump) made tide allocate the whole line. Lines longer than --max-line-len
  (default 16 MiB) are truncated for matching and reported with a warning on stderr.""")
M("R_windows_ci", "fact", 0.4, "ci,windows",
  """CI matrix: ubuntu-latest (stable, beta, MSRV), macos-14 and windows-2022 on stable. Windows runs skip the follow
  tests marked #[cfg_attr(windows, ignore)] until the ReadDirectoryChangesW watcher is stable.""")


# ---------------------------------------------------------------------------------------------------------------
# harbor-infra: AWS infrastructure repo (OpenTofu/Terraform, EKS, Argo CD, Karpenter, External Secrets)
# ---------------------------------------------------------------------------------------------------------------
project("harbor-infra")
M("I_state_backend", "decision", 0.8, "terraform,state,s3",
  """Terraform state is in the S3 bucket harbor-tfstate-prod (versioning on) with the DynamoDB table tf-locks for
  locking; one state per stack directory under stacks/ (network, eks, data, dns, iam).""")
M("I_state_split", "decision", 0.65, "terraform,state",
  """State is split per stack so a plan in stacks/eks doesn't refresh 2,000 Route53 records. Cross-stack values are
  read with terraform_remote_state, and only from outputs.tf of the producing stack.""")
M("I_tf_pin", "decision", 0.6, "terraform,versions",
  """Pin Terraform 1.5.7 in .terraform-version (tfenv). Every stack must plan clean with exactly that version.""", at="2025-06-05T09:00:00.000Z")
M("I_opentofu", "decision", 0.85, "opentofu,terraform,licensing",
  """Moved from Terraform 1.5 to OpenTofu 1.7 after HashiCorp's BSL license change; it also gave us client-side state
  encryption. Use `tofu`, not `terraform`, in scripts, Makefiles and docs; the CI and Atlantis images no longer
  contain a terraform binary.""", at="2026-01-20T14:00:00.000Z")
M("I_state_encryption", "gotcha", 0.7, "opentofu,state,encryption",
  """stacks/data uses OpenTofu state encryption (key from KMS alias/tofu-state). A terraform binary, or tofu without
  the encryption block, can't read that state: init/plan fails with a state decoding error. Don't 'fix' it by
  disabling encryption.""", at="2026-01-27T10:00:00.000Z")
M("I_atlantis", "decision", 0.85, "atlantis,workflow",
  """All applies go through Atlantis on the PR (`atlantis plan` / `atlantis apply` comments, apply requires an approved
  review). Nobody applies to prod from a laptop; a local `tofu plan` with the read-only role is fine.""")
M("I_atlantis_locks", "gotcha", 0.6, "atlantis,workflow",
  """Atlantis locks a project directory from the first plan until the PR is merged or closed. An abandoned PR kept
  stacks/eks locked for a week; close stale PRs or comment `atlantis unlock`.""")
M("I_provider_pins", "convention", 0.6, "terraform,providers",
  """Providers are pinned with pessimistic minor constraints (aws ~> 5.40) in each stack's versions.tf, and
  .terraform.lock.hcl is committed with hashes for linux_amd64 and darwin_arm64.""")
M("I_lockfile_platforms", "gotcha", 0.7, "terraform,providers,atlantis",
  """If .terraform.lock.hcl only contains darwin_arm64 hashes (someone ran init on a Mac), Atlantis on linux_amd64
  fails init with 'the cached package ... does not match any of the checksums recorded in the dependency lock file'.
  Run `tofu providers lock -platform=linux_amd64 -platform=darwin_arm64`.""")
M("I_modules", "convention", 0.55, "terraform,modules",
  """Our modules live in modules/ and stacks reference them by relative path. The only registry modules allowed are
  terraform-aws-modules/vpc and terraform-aws-modules/eks, pinned to exact versions.""")
M("I_eks", "fact", 0.7, "eks,kubernetes",
  """Clusters prod-eu1 and staging-eu1 run EKS 1.29. Nodes are provisioned by Karpenter, except the managed 'system'
  node group (3x m6i.large) that runs Karpenter itself, CoreDNS and Argo CD.""")
M("I_eks_upgrade_todo", "todo", 0.7, "eks,upgrade",
  """Upgrade EKS 1.29 → 1.30 before standard support ends and extended-support pricing starts. Prerequisites: move the
  managed system node group from AL2 to AL2023 AMIs and bump the vpc-cni and aws-load-balancer-controller add-ons to
  versions supported on 1.30. Not started.""")
M("I_karpenter", "decision", 0.75, "karpenter,autoscaling",
  """Karpenter (v1 API: NodePool / EC2NodeClass in k8s/platform/karpenter/) replaced cluster-autoscaler: scale-up went
  from ~4 minutes to ~50 seconds and it picks cheaper instance types across families.""")
M("I_rej_fargate", "rejected_alternative", 0.6, "eks,fargate,cost",
  """Fargate for app workloads was rejected: no DaemonSets (Fluent Bit, node-exporter), slower pod start, and per-pod
  pricing came out ~30% more than nodes for our steady services.""")
M("I_spot", "decision", 0.7, "karpenter,spot,cost",
  """Stateless workloads run on spot through NodePool spot-general with on-demand fallback. Anything with a PVC or long
  jobs (database migrations, batch exports) must select karpenter.sh/capacity-type: on-demand.""")
M("I_consolidation", "gotcha", 0.8, "karpenter,availability,pdb",
  """Karpenter consolidation evicts pods to pack nodes tighter, and single-replica services had short outages. Every
  Deployment needs ≥ 2 replicas plus a PodDisruptionBudget, or its pods must carry karpenter.sh/do-not-disrupt:
  "true".""")
M("I_argocd", "decision", 0.85, "argocd,gitops",
  """GitOps with Argo CD: everything under k8s/ is synced by ApplicationSets (k8s/argocd/appsets/). Manual kubectl
  apply is for break-glass only, and self-heal reverts it within ~3 minutes.""")
M("I_selfheal_incident", "gotcha", 0.75, "argocd,incidents",
  """Argo CD self-heal undoes `kubectl scale` or `kubectl edit` during an incident. To hot-patch, first turn off
  auto-sync for that Application (`argocd app set <app> --sync-policy none`), then re-enable it after the fix is
  committed.""")
M("I_hpa_replicas", "gotcha", 0.7, "argocd,hpa,autoscaling",
  """Don't set spec.replicas in a Deployment that has an HorizontalPodAutoscaler: Argo CD resets it on every sync and
  fights the HPA. Leave replicas out of the manifest (or ignoreDifferences on /spec/replicas).""")
M("I_kustomize_helm", "convention", 0.65, "kustomize,helm,manifests",
  """Third-party software is installed from Helm charts via Argo CD Applications with values in
  k8s/platform/<name>/values.yaml. Our own services use kustomize (base + overlays/staging and overlays/prod), not
  Helm.""")
M("I_rej_helm", "rejected_alternative", 0.55, "helm,kustomize",
  """Writing Helm charts for our own services was rejected: templated YAML was hard to review and Argo diffs were
  unreadable; kustomize overlays keep what is committed close to what is applied.""")
M("I_eso", "decision", 0.85, "secrets,external-secrets",
  """Kubernetes secrets come from AWS Secrets Manager via External Secrets Operator (ExternalSecret +
  ClusterSecretStore aws-sm). Never commit Secret manifests, not even with base64 placeholder values.""")
M("I_rej_sealed", "rejected_alternative", 0.6, "secrets,sealed-secrets",
  """Sealed Secrets was rejected: every rotation meant re-sealing and committing, and the controller's private key was
  one more thing to back up. Secrets Manager already rotates the RDS passwords.""")
M("I_eso_refresh", "gotcha", 0.75, "secrets,external-secrets,rotation",
  """ExternalSecret refreshInterval is 1h, and pods read env vars only at start. After rotating a value in Secrets
  Manager: `kubectl annotate externalsecret <name> force-sync=$(date +%s) --overwrite`, then `kubectl rollout
  restart` the deployment.""")
M("I_irsa", "decision", 0.7, "iam,irsa",
  """Pods get AWS permissions through IRSA (service account annotation eks.amazonaws.com/role-arn); roles are defined
  in stacks/iam/irsa.tf. Node instance profiles only get ECR pull and SSM.""")
M("I_irsa_sa_name", "gotcha", 0.75, "iam,irsa",
  """IRSA trust policies match the exact namespace and service account (system:serviceaccount:billing:ledgerline).
  Renaming the ServiceAccount in kustomize made S3 calls fail with AccessDenied: Not authorized to perform
  sts:AssumeRoleWithWebIdentity.""")
M("I_pod_identity_todo", "todo", 0.35, "iam,irsa,eks",
  """Evaluate moving IRSA roles to EKS Pod Identity (no per-cluster OIDC provider in trust policies, roles reusable
  across clusters). Low priority, not started.""")
M("I_ingress_nginx_old", "decision", 0.55, "ingress,nginx",
  """Ingress for all services is ingress-nginx behind one NLB, TLS terminated in nginx with cert-manager certificates.""", at="2025-06-20T11:00:00.000Z")
M("I_alb", "decision", 0.8, "ingress,alb,nginx",
  """Public ingress moved from ingress-nginx to the AWS Load Balancer Controller (ALB, target-type ip) to get AWS WAF
  and Cognito auth on the load balancer. ingress-nginx stays only for internal services, as class nginx-internal.""", at="2026-03-03T15:20:00.000Z")
M("I_alb_group", "gotcha", 0.65, "ingress,alb",
  """Ingresses with the same alb.ingress.kubernetes.io/group.name share one ALB, and one invalid annotation on any of
  them stops reconciliation for the whole group. Check the aws-load-balancer-controller logs in kube-system.""", at="2026-03-19T09:45:00.000Z")
M("I_certs", "fact", 0.6, "tls,certificates,cert-manager",
  """TLS: public ALB hostnames use ACM certificates (stacks/dns); internal nginx hostnames use cert-manager with the
  letsencrypt-dns01 ClusterIssuer (Route53 DNS-01).""", at="2026-03-05T10:00:00.000Z")
M("I_certmanager_dns", "gotcha", 0.6, "tls,cert-manager,dns",
  """cert-manager DNS-01 challenges failed with 'propagation check failed' because it asked the VPC resolver, which
  answers from the private hosted zone. The controller runs with --dns01-recursive-nameservers-only and
  --dns01-recursive-nameservers=1.1.1.1:53,8.8.8.8:53.""")
M("I_naming", "convention", 0.65, "naming,tagging,terraform",
  """Resource names are {env}-{region-short}-{service}-{purpose}, e.g. prod-eu1-billing-db. Tags Owner, Env, Service
  and CostCenter are required: default_tags in the aws provider block plus a tflint rule.""")
M("I_precommit", "convention", 0.6, "lint,checkov,tflint",
  """pre-commit runs `tofu fmt -recursive`, tflint (aws ruleset) and checkov. A checkov exception needs an inline
  `#checkov:skip=CKV_AWS_xxx: reason` on the resource, never a global skip in .checkov.yaml.""")
M("I_rds", "fact", 0.65, "rds,postgres,backups",
  """Billing database: RDS Postgres 15, db.r6g.xlarge Multi-AZ, in stacks/data; max_connections 400. Automated backups
  kept 14 days, and daily snapshots are copied to eu-central-1.""")
M("I_rds_reboot", "gotcha", 0.6, "rds,postgres",
  """Changing a static parameter in an RDS parameter group (shared_preload_libraries, max_connections) applies cleanly
  in the plan but only takes effect after a reboot; the instance shows 'pending-reboot'. Schedule the reboot in the
  maintenance window.""")
M("I_rds_protect", "gotcha", 0.85, "rds,terraform,refactoring",
  """RDS instances have deletion_protection = true and lifecycle { prevent_destroy = true }. Renaming the resource
  address in code plans a destroy + create; use a moved {} block, and treat any 'must be replaced' on a database as
  a stop sign.""")
M("I_moved", "convention", 0.7, "terraform,refactoring,state",
  """Refactors that change resource addresses use moved {} blocks (or `tofu state mv` run through Atlantis in a
  documented PR). Never remove a resource from state and re-import it by hand.""")
M("I_observability", "decision", 0.7, "observability,prometheus,loki",
  """Metrics: kube-prometheus-stack, Prometheus retention 15d, long-term storage in Grafana Cloud via remote_write.
  Logs: Fluent Bit → Loki with S3 storage. No Elasticsearch in the platform.""")
M("I_rej_datadog", "rejected_alternative", 0.55, "observability,cost,datadog",
  """Datadog was quoted at about 4x our current observability spend (per host plus custom metrics) and rejected in Q4
  2025; revisit only if the team shrinks and can't run the stack.""")
M("I_cardinality", "gotcha", 0.75, "prometheus,monitoring",
  """A service put user_id into a metric label and Prometheus was OOMKilled at 16Gi. metric_relabel_configs in
  k8s/platform/monitoring drop the labels user_id, request_id and session_id from all scrapes.""")
M("I_alert_rules", "convention", 0.6, "alerting,prometheus,runbooks",
  """Alerts are PrometheusRule objects in k8s/platform/monitoring/rules/, each with a runbook_url annotation pointing
  to docs/runbooks/<alert>.md. severity=page routes to PagerDuty, severity=ticket to Slack #ops-alerts.""")
M("I_gha_oidc", "decision", 0.75, "ci,github-actions,iam",
  """GitHub Actions reach AWS via OIDC (role gha-deployer); no long-lived AWS access keys in GitHub secrets. The trust
  policy allows only harbor/* repositories on main or in the prod environment.""")
M("I_oidc_sub", "gotcha", 0.7, "ci,github-actions,iam",
  """A job with `environment: prod` gets the OIDC sub claim repo:harbor/infra:environment:prod, not
  repo:harbor/infra:ref:refs/heads/main. Missing that pattern in the trust policy gave 'Not authorized to perform
  sts:AssumeRoleWithWebIdentity' in the deploy job.""")
M("I_ecr", "fact", 0.5, "ecr,images",
  """Each service has an ECR repository harbor/<service> with scan on push; the lifecycle policy keeps the last 50
  tagged images and expires untagged ones after 7 days.""")
M("I_image_tags", "convention", 0.75, "images,deploy,argocd",
  """Deploy images by immutable git-sha tags (ECR tag immutability is on); never :latest. Argo CD Image Updater writes
  the new tag into overlays/<env>/kustomization.yaml.""")
M("I_netpol", "decision", 0.65, "networking,networkpolicy",
  """Each app namespace has a default-deny NetworkPolicy (k8s/base/netpol-default-deny.yaml) and allowed flows are
  declared per service. Enforcement needs the VPC CNI network policy agent (enableNetworkPolicy: "true" in the addon
  configuration).""")
M("I_netpol_dns", "gotcha", 0.7, "networking,networkpolicy,dns",
  """With default-deny egress pods can't resolve names. Every namespace needs the allow-dns policy to kube-system
  kube-dns on port 53 over UDP and TCP; leaving out TCP broke large DNS responses.""")
M("I_cost_tags_todo", "todo", 0.45, "cost,tagging,karpenter",
  """EBS volumes created by Karpenter have no CostCenter tag (add it in EC2NodeClass.spec.tags), so about 12% of the
  AWS bill is unallocated in Cost Explorer.""")
M("I_dr_todo", "todo", 0.6, "disaster-recovery,runbooks",
  """The region-loss DR runbook (docs/runbooks/dr-region.md) is a draft: the RDS snapshot copy works, but restoring the
  EKS workloads in eu-central-1 has never been tested.""")
M("I_plan_pref", "preference", 0.6, "reviews,workflow",
  """The dev wants the relevant part of the plan in the PR description (add/change/destroy counts and the resources),
  with any destroy called out at the top.""", by="dev", src="manual")
M("I_no_clickops_pref", "preference", 0.65, "workflow,aws-console",
  """No click-ops in the AWS console for anything that exists in code. If something had to be changed by hand during an
  incident, note it and backport it to the code the same day.""", by="dev", src="manual")
M("I_kube_context", "gotcha", 0.65, "kubectl,scripts",
  """Scripts in scripts/ expect kubectl contexts named prod-eu1 / staging-eu1 (`aws eks update-kubeconfig --alias
  prod-eu1 ...`). With the default ARN context names they silently run against whatever context is current.""")
M("I_namespaces", "convention", 0.6, "kubernetes,namespaces,kyverno",
  """One namespace per service per environment (billing, dashboard-api, shopfront, ...), with ResourceQuota and
  LimitRange from k8s/base. resources.requests are mandatory (Kyverno policy require-requests).""")
M("I_kyverno", "decision", 0.6, "policy,kyverno",
  """Policy engine is Kyverno (policies in k8s/platform/kyverno/). OPA Gatekeeper was dropped because app teams
  couldn't read Rego. New policies run in Audit mode for two weeks before Enforce.""")
M("I_cpu_limits", "decision", 0.7, "kubernetes,resources,performance",
  """Pods set CPU requests but no CPU limits: CFS throttling caused p99 latency spikes in billing. Memory limit equals
  the memory request for every app pod.""")
M("I_dns", "fact", 0.5, "dns,route53,external-dns",
  """The public zone harbor.io is in Route53 and managed in stacks/dns. external-dns only manages records in the
  internal zone svc.harbor.internal.""")
M("I_externaldns_owner", "gotcha", 0.6, "dns,external-dns",
  """Two clusters running external-dns with the same --txt-owner-id fought over the same records (flapping). Each
  cluster has its own owner id: prod-eu1 and staging-eu1.""")
M("I_vpc", "fact", 0.5, "networking,vpc",
  """VPC 10.40.0.0/16 in eu-west-1: three private /19 subnets for nodes and pods, three public /24 subnets for load
  balancers, one NAT gateway per AZ.""")
M("I_prefix_delegation", "gotcha", 0.7, "networking,vpc-cni,karpenter",
  """Without prefix delegation an m6i.large ran out of pod IPs at 29 pods (ENI limit) and pods hung in
  ContainerCreating with 'failed to assign an IP address to container'. vpc-cni has ENABLE_PREFIX_DELEGATION=true
  and Karpenter's kubelet maxPods is 110.""")
M("I_prune_incident", "note", 0.5, "argocd,incidents",
  """Incident 2026-02-11: a ConfigMap moved from one Argo CD Application to another in the same PR got pruned by the
  first app before the second created it, and billing lost its config for 4 minutes. Reviews should check for
  resources moving between Applications.""", by="dev", src="postmortem 2026-02-11")
M("I_velero", "fact", 0.4, "backups,velero",
  """Velero is installed but only backs up PersistentVolumes in the monitoring namespace; app data lives in RDS and S3,
  which have their own backups.""")
M("I_apply_window", "convention", 0.5, "workflow,change-management",
  """Applies to prod stacks (network, eks, data) happen Monday to Thursday before 16:00 CET; Friday applies only for
  incidents.""")
M("I_s3_buckets", "convention", 0.55, "s3,security",
  """S3 buckets: block public access on, SSE-KMS with a per-bucket key, versioning on, access logs to
  prod-eu1-logs-s3access. Public assets are served only through CloudFront with origin access control.""")
M("I_nat_cost", "note", 0.4, "cost,networking",
  """NAT gateway data processing was 18% of the March bill, mostly image pulls and S3 traffic; the S3 and ECR VPC
  endpoints added in April should cut most of it. Check Cost Explorer in May.""")
M("I_tofu_import", "gotcha", 0.5, "opentofu,state",
  """`tofu import` doesn't read variables from the Atlantis workspace config; run it with the same -var-file as the
  stack (stacks/<stack>/prod.tfvars), or use an import {} block so it goes through the normal plan.""")


# ---------------------------------------------------------------------------------------------------------------
# shopfront: Django 5 monolith web shop (Postgres, Celery + Redis, HTMX, DRF mobile API, Adyen)
# ---------------------------------------------------------------------------------------------------------------
project("shopfront")
M("S_celery", "decision", 0.8, "celery,background-jobs,redis",
  """Async work in the shop (order confirmation emails, ERP stock sync, thumbnails, exports) runs on Celery 5.3 with
  Redis as the broker. Tasks live in <app>/tasks.py; the beat schedule is in config/celery.py.""")
M("S_on_commit", "gotcha", 0.9, "celery,transactions,orders",
  """Enqueue tasks with transaction.on_commit(lambda: send_order_confirmation.delay(order.pk)). Calling .delay() inside
  the atomic block let the worker pick up the task before the commit, and it failed with Order.DoesNotExist.""")
M("S_task_args", "convention", 0.7, "celery",
  """Celery task arguments are primary keys and plain JSON types, never model instances; the serializer is json and
  pickle is disabled. Re-fetch the object inside the task.""")
M("S_visibility_timeout", "gotcha", 0.7, "celery,redis,erp",
  """With the Redis broker, a task scheduled with an ETA/countdown longer than visibility_timeout (1h) is redelivered
  and runs twice. ERP tasks use acks_late=True and must be idempotent; keep countdowns well under an hour.""")
M("S_single_beat", "gotcha", 0.75, "celery,deploy,kubernetes",
  """Only one celery beat may run. The beat Deployment has replicas: 1 and strategy: Recreate, because during a rolling
  update two beats overlapped and the nightly abandoned-cart email went out twice.""")
M("S_es_old", "decision", 0.6, "search,elasticsearch",
  """Product search runs on Elasticsearch 7 through django-elasticsearch-dsl; documents are defined in
  catalog/documents.py, reindex with `./manage.py search_index --rebuild`.""", at="2025-04-22T10:00:00.000Z")
M("S_pg_fts", "decision", 0.9, "search,postgres,elasticsearch",
  """Product search moved from Elasticsearch to Postgres full-text search: Product.search_vector (name weight A,
  description B) with a GIN index, kept up to date by a trigger. The ES cluster cost ~€600/month and drifted out of
  sync with stock; 40k products don't need it.""", at="2026-01-14T13:30:00.000Z")
M("S_es_cleanup_todo", "todo", 0.45, "search,elasticsearch,cleanup",
  """Remove the Elasticsearch leftovers: the ES_URL setting, django-elasticsearch-dsl in requirements/base.in and
  catalog/documents.py. The ES cluster itself is already scaled to zero.""", at="2026-01-28T09:00:00.000Z")
M("S_fts_config", "gotcha", 0.75, "search,postgres,i18n",
  """Full-text search uses the 'german' text search config for the DE storefront and 'english' for EN. A
  SearchQuery(config='english') against a german vector silently returns nothing for stemmed words (Schuhe vs
  Schuh); the query config must match Product.search_config.""", at="2026-01-19T15:00:00.000Z")
M("S_trigram", "decision", 0.6, "search,postgres",
  """Typo tolerance in catalog search comes from pg_trgm: when full-text search returns fewer than 5 products we fall
  back to TrigramSimilarity on the name with threshold 0.3.""", at="2026-01-21T11:00:00.000Z")
M("S_admin_n_plus_one", "gotcha", 0.65, "admin,performance,orm",
  """The order changelist in the admin ran one query per row via order.customer and order.items.count().
  OrderAdmin.get_queryset now does select_related('customer') and annotate(item_count=Count('items')).""")
M("S_query_count_tests", "convention", 0.7, "orm,testing,performance",
  """Every new list view or DRF viewset must use select_related/prefetch_related, and its test pins the number of
  queries with pytest-django's django_assert_num_queries.""")
M("S_htmx", "decision", 0.8, "frontend,htmx,templates",
  """The storefront UI is server-rendered Django templates + HTMX (plus a little Alpine.js); no SPA. Partials live in
  templates/<app>/partials/, and views return them when request.htmx is set (django-htmx middleware).""")
M("S_rej_spa", "rejected_alternative", 0.7, "frontend,react",
  """Rewriting the storefront as a React SPA was rejected in 2025: product pages need SEO, the team is small, and HTMX
  covers the interactive parts (cart, filters, checkout steps).""")
M("S_htmx_csrf", "gotcha", 0.7, "htmx,csrf,security",
  """HTMX POSTs failed with '403 CSRF verification failed'. base.html sets hx-headers='{"X-CSRFToken": "{{ csrf_token
  }}"}' on <body>, which covers partials swapped in later, but modals rendered into #portal outside <body>'s subtree
  must set it themselves.""")
M("S_htmx_history", "gotcha", 0.5, "htmx,cart",
  """Pages restored from HTMX's history cache (after hx-push-url navigation) showed a stale cart count. The cart page
  has hx-history="false", and the badge refreshes on the cartChanged event sent in the HX-Trigger header.""")
M("S_drf", "fact", 0.6, "api,drf,mobile",
  """The mobile app API is DRF under /api/v2/ (app api/), token auth with django-rest-knox. /api/v1/ is frozen and
  answers with Deprecation and Sunset headers.""")
M("S_drf_pagination", "convention", 0.55, "api,drf,pagination",
  """DRF list endpoints use CursorPagination ordered by -created with page size 50. PageNumberPagination only for small
  staff endpoints.""")
M("S_uuid_default", "gotcha", 0.8, "migrations,postgres",
  """AddField(default=uuid.uuid4) evaluates the callable once, so every existing row got the same UUID and adding the
  unique constraint failed with IntegrityError. Use three migrations: add the field nullable, backfill in batches
  with RunPython, then make it unique and non-null.""")
M("S_migrations_style", "convention", 0.55, "migrations",
  """Data migrations are separate RunPython migrations with a reverse function (or RunPython.noop plus a comment why).
  Squash an app's migrations only at major releases.""")
M("S_expand_contract", "convention", 0.8, "migrations,deploy,zero-downtime",
  """Schema changes must work with the previous release for one deploy (expand/contract). To remove a field: deploy
  code that no longer uses it and drops it from the model with SeparateDatabaseAndState, then drop the column in the
  next release.""")
M("S_makemigrations_check", "fact", 0.55, "migrations,ci",
  """CI runs `./manage.py makemigrations --check --dry-run`, so a model change committed without its migration fails
  the build.""")
M("S_settings", "convention", 0.6, "settings,config",
  """Settings are split into config/settings/{base,dev,test,prod}.py and read the environment with django-environ.
  manage.py defaults DJANGO_SETTINGS_MODULE to config.settings.dev; the prod gunicorn command sets
  config.settings.prod.""")
M("S_manifest_static", "gotcha", 0.7, "static-files,deploy",
  """With DEBUG=False, ManifestStaticFilesStorage raises "ValueError: Missing staticfiles manifest entry" for any {%
  static %} path that collectstatic never saw, which turns into a 500 on that page. collectstatic runs in the Docker
  build, and the test settings use the same storage so CI catches it.""")
M("S_whitenoise", "decision", 0.6, "static-files,s3,cdn",
  """Static files are served by WhiteNoise (CompressedManifestStaticFilesStorage) from the app pods behind the CDN.
  User uploads (product images) go to S3 via django-storages.""")
M("S_signed_media", "gotcha", 0.6, "s3,cdn,images",
  """django-storages signs S3 URLs by default (querystring_auth=True), which made every product image URL unique and
  defeated the CDN cache. PublicMediaStorage sets querystring_auth=False and default_acl=None; the bucket policy
  grants read.""")
M("S_pytest", "convention", 0.65, "testing,pytest,factory-boy",
  """Tests use pytest-django with factory_boy factories in <app>/tests/factories.py; no JSON fixtures. Mark only tests
  that need the database with @pytest.mark.django_db; run the suite with `pytest -n auto`.""")
M("S_xdist", "gotcha", 0.6, "testing,pytest,xdist",
  """Under pytest -n auto each worker gets its own database (test_shopfront_gw0, gw1, ...). Tests that hardcode
  'test_shopfront' in raw SQL or assume pk=1 pass alone and fail only in the parallel run.""")
M("S_subfactory", "gotcha", 0.5, "testing,factory-boy,performance",
  """ProductFactory's SubFactory creates a new Category for every product, which made catalog tests slow and broke
  category counts. In bulk tests pass category= explicitly or use factory.Iterator(Category.objects.all()).""")
M("S_cache", "decision", 0.6, "caching,redis",
  """The cache is Redis (django.core.cache.backends.redis.RedisCache, db 1; Celery uses db 0). Product detail fragments
  are cached for 10 minutes with {% cache %} keyed by product.updated_at.""")
M("S_cache_language", "gotcha", 0.75, "caching,i18n,templates",
  """Template fragment cache keys didn't include the language, so the German storefront served English price blocks.
  Every {% cache %} tag passes LANGUAGE_CODE and the currency as vary-on arguments.""")
M("S_i18n", "fact", 0.5, "i18n,translations",
  """Shop languages: de (default) and en. Translations use gettext: `./manage.py makemessages -l de`, then
  compilemessages. .mo files are compiled in the Docker image, not committed.""")
M("S_prices", "decision", 0.85, "money,prices,vat",
  """Prices are DecimalField(max_digits=10, decimal_places=2) with a currency field. Shelf prices are gross (VAT
  included, German B2C) and net is derived. Never use float for prices.""")
M("S_vat_rounding", "gotcha", 0.8, "money,vat,rounding",
  """VAT is computed per order line and rounded half-up (kaufmännisches Runden), not with Decimal's default banker's
  rounding. Always go through shop.pricing.round_money(), which calls quantize(Decimal('0.01'), ROUND_HALF_UP).""")
M("S_allauth", "decision", 0.7, "auth,allauth",
  """Customer accounts use django-allauth: email as login, mandatory email verification, social login only with Google
  and Apple. Staff use the same User model (is_staff) with 2FA from allauth.mfa.""")
M("S_user_model", "gotcha", 0.65, "auth,models",
  """The project started on auth.User; accounts.User was introduced later via a hand-edited migration. Never reference
  auth.User or import User from django.contrib.auth.models; use settings.AUTH_USER_MODEL / get_user_model().""")
M("S_stock_lock", "gotcha", 0.9, "checkout,stock,postgres,locking",
  """Stock reservation at checkout locks StockItem rows with select_for_update() inside transaction.atomic(); without
  it two simultaneous orders sold the last unit twice. Lock rows ordered by id to avoid deadlocks between carts.""")
M("S_adyen", "fact", 0.7, "payments,adyen",
  """Payments go through Adyen (Drop-in on the checkout page; notifications arrive at /payments/adyen/notify/, HMAC key
  in ADYEN_HMAC_KEY). The shop does not use Stripe.""")
M("S_adyen_accept", "gotcha", 0.75, "payments,adyen,webhooks",
  """Adyen notifications must be answered with HTTP 200 and the body "[accepted]" quickly; otherwise Adyen retries and
  holds back later notifications. The view verifies the HMAC, stores the notification and hands processing to a
  Celery task.""")
M("S_gunicorn", "fact", 0.5, "deploy,gunicorn",
  """Production: gunicorn with 4 gthread workers x 2 threads per pod, timeout 30 s, behind the ALB. Anything slower
  than that (big admin exports) has to run as a Celery task that emails a download link.""")
M("S_datev_todo", "todo", 0.6, "export,csv,admin,accounting",
  """The 'Export to DATEV' admin action (order CSV for the accountants) is still synchronous and hits the 30 s gunicorn
  timeout above ~5k orders. Move it to a Celery task like the product export.""")
M("S_admin_pref", "preference", 0.5, "admin",
  """The dev prefers extending the Django admin over building custom staff pages; write a custom staff view only when
  the admin really can't do it (like the picking list).""", by="dev", src="manual")
M("S_services_pref", "preference", 0.7, "architecture,signals",
  """Business logic goes into service functions in <app>/services.py, not into views or Model.save(). The dev dislikes
  signals for business logic because they hide control flow.""", by="dev", src="manual")
M("S_rej_signals_erp", "rejected_alternative", 0.65, "signals,erp,stock",
  """Syncing stock to the ERP from post_save signals was tried and removed: queryset.update() and bulk_update() don't
  send signals, so stock silently drifted. services.stock.push_to_erp() is called explicitly.""")
M("S_bulk_update", "gotcha", 0.7, "orm,caching",
  """QuerySet.update() and bulk_update() skip save(), signals and auto_now. The price import didn't bump
  Product.updated_at, so cached product fragments kept showing old prices. Pass updated_at=timezone.now()
  explicitly.""")
M("S_django_upgrade_todo", "todo", 0.6, "django,upgrade",
  """Upgrade Django 5.0 → 5.2 LTS before 5.0 goes out of support. Blocker: Meta.index_together is removed in 5.1, and
  old catalog migrations still use it, so they have to be squashed first.""")
M("S_black", "convention", 0.45, "formatting,lint",
  """The shop is formatted with black (line length 88) and linted with ruff; ruff format has not been adopted here.
  Don't reformat untouched files in a feature PR.""")
M("S_pip_tools", "fact", 0.5, "dependencies,pip-tools",
  """Dependencies are pinned with pip-tools: requirements/*.in compiled with `pip-compile --generate-hashes` into .txt
  files; install with `pip-sync requirements/dev.txt`.""")
M("S_sentry", "fact", 0.45, "observability,sentry",
  """Sentry (sentry-sdk with the Django and Celery integrations), traces_sample_rate 0.05; health check requests are
  dropped by a traces_sampler so they don't eat the quota.""")
M("S_health", "decision", 0.6, "kubernetes,health-checks",
  """/healthz checks Postgres and Redis and is used for readiness; /livez just returns 200 and is the liveness probe,
  so a Redis outage doesn't restart every pod.""")
M("S_sessions", "decision", 0.6, "sessions,redis",
  """Sessions use the cached_db backend (Redis in front of Postgres). Pure cache sessions logged everybody out when
  Redis was flushed during the Redis 7 upgrade.""")
M("S_waffle", "decision", 0.5, "feature-flags",
  """Feature flags use django-waffle, managed in the admin; new checkout steps roll out with percentage flags.""")
M("S_localdate", "gotcha", 0.75, "time,timezones,reports",
  """USE_TZ=True with TIME_ZONE='Europe/Berlin': the DB stores UTC, and order.created.date() is the UTC date. Daily
  sales reports must use timezone.localdate(order.created), otherwise orders placed after 23:00 (22:00 in summer)
  count for the wrong day.""")
M("S_email", "fact", 0.45, "email",
  """Transactional email goes through Postmark via django-anymail; templates in templates/emails/ with .txt and .html
  versions. Dev settings use the console backend.""")
M("S_thumbnails", "fact", 0.45, "images,celery",
  """Product thumbnails (200, 600 and 1200 px, WebP) are generated by a Celery task with Pillow when an image is
  uploaded; sorl-thumbnail was removed.""")
M("S_exif", "gotcha", 0.5, "images,pillow",
  """Pillow doesn't apply EXIF orientation on open, so phone photos uploaded by staff showed up rotated. The thumbnail
  task calls ImageOps.exif_transpose() before resizing.""")
M("S_erp_sync", "fact", 0.65, "erp,stock,celery",
  """Stock comes from the ERP (Microsoft Dynamics 365 Business Central) every 10 minutes via Celery beat
  (erp.tasks.sync_stock) over its OData API. The ERP is the source of truth for stock; the shop owns prices.""")
M("S_odata_paging", "gotcha", 0.65, "erp,api,pagination",
  """The ERP's OData API pages results with @odata.nextLink and caps pages at 20,000 rows without saying so. The first
  version of sync_stock read only the first page and left half the catalog with stale stock.""")
M("S_black_friday_note", "note", 0.45, "performance,checkout",
  """Black Friday 2025 peaked at ~1,800 orders/hour. The bottleneck was contention on the stock reservation lock, not
  the web tier: keep the checkout transaction as short as possible.""", by="dev", src="retro 2025-12-02")
M("S_conn_max_age", "fact", 0.5, "postgres,connections",
  """CONN_MAX_AGE=60 with CONN_HEALTH_CHECKS=True. Persistent connections are per thread, so the connection count is
  pods x workers x threads plus Celery workers.""")
M("S_admin_filter", "gotcha", 0.55, "admin,performance",
  """list_filter on a ForeignKey with many rows (customer) builds its sidebar from a query over all customers and made
  the order changelist take 8 s. Use autocomplete_fields or a custom SimpleListFilter for big relations.""")
M("S_product_export", "fact", 0.45, "export,csv,celery",
  """Product export (CSV for marketplaces) runs as a Celery task, writes to S3 and emails staff a signed link valid for
  24 hours.""")
M("S_rej_channels", "rejected_alternative", 0.45, "websocket,channels",
  """Django Channels for live order updates in the staff view was rejected: it would need an ASGI deployment next to
  gunicorn just for one page. The picking list polls with hx-trigger="every 10s" instead.""")
M("S_rej_stripe", "rejected_alternative", 0.5, "payments,stripe,adyen",
  """Stripe was evaluated for the shop in 2025 and not chosen: Adyen offered the local methods our customers use
  (giropay successor, Klarna, PayPal) under one contract and better interchange fees at our volume.""")
M("S_order_state", "convention", 0.65, "orders,state-machine",
  """Order status changes go through orders.services.transition(order, new_status), which checks the allowed
  transitions table and writes an OrderEvent. Never assign order.status directly.""")
M("S_coupon_race", "gotcha", 0.6, "checkout,coupons,postgres",
  """Single-use coupons were redeemed twice by double-clicking 'Pay'. Redemption now uses Coupon.objects.filter(pk=...,
  used_at__isnull=True).update(used_at=now) and checks the returned row count.""")


# ---------------------------------------------------------------------------------------------------------------
# Later additions per project: short one-liners, longer context notes, and more near-neighbours
# ---------------------------------------------------------------------------------------------------------------
project("ledgerline")
M("L_uv_run", "convention", 0.4, "tooling,uv",
  """Prefix every command with `uv run` (uv run pytest, uv run alembic ...); never use a globally installed tool.""")
M("L_httpx_retries", "convention", 0.6, "http,httpx,retries,stripe",
  """httpx never retries failed requests on its own. Outbound calls that are safe to repeat go through the tenacity
  wrapper in app/integrations/retry.py (exponential backoff, max 5 attempts, only on 429/5xx and transport errors).""")
M("L_webhook_secret", "gotcha", 0.65, "stripe,webhooks,secrets",
  """Each Stripe webhook endpoint has its own signing secret (whsec_...), and test mode and live mode differ. After
  adding the staging endpoint, its secret had to go into LEDGER_STRIPE_WEBHOOK_SECRET for staging; until then every
  event was rejected.""")
M("L_refund_window", "fact", 0.5, "refunds,stripe",
  """Card refunds are possible up to 180 days after the charge; older ones fail with charge_expired_for_refund and
  support issues a credit note plus a bank transfer instead.""")
M("L_reporting_pref", "preference", 0.45, "sqlalchemy,reporting",
  """For reporting queries (MRR, churn) the dev prefers SQLAlchemy Core select() statements with explicit joins over
  long ORM relationship chains; keep them in app/reports/ with the SQL they produce in a comment.""", by="dev", src="manual")
M("L_proration_context", "note", 0.55, "proration,money,stripe",
  """Context for the proration rewrite (March 2026): we used to let Stripe prorate and copy its numbers, but mid-cycle
  seat changes combined with coupons produced amounts support couldn't explain. Proration is now computed by
  app/services/proration.py from our own price table and sent to Stripe as explicit invoice items; Stripe's
  proration_behavior is always 'none'. If totals differ from what Stripe would have done, ours are authoritative,
  and the before/after fixture in tests/fixtures/proration_cases.yaml documents the expected results.""", by="dev", src="design doc 2026-03-02")
M("L_customer_delete", "gotcha", 0.7, "gdpr,invoices,legal",
  """Deleting a customer (GDPR request) must not delete invoices: they have to be kept 10 years. anonymize_customer()
  blanks name/email/address on the customer and keeps invoice snapshots, which hold the legally required copy.""")

project("pulseboard")
M("D_dlx", "convention", 0.35, "tooling,pnpm",
  """Use `pnpm dlx` in scripts and docs, not npx.""")
M("D_palette", "convention", 0.5, "charts,styling,accessibility",
  """Chart series colours come from the colour-blind-safe palette in src/components/charts/palette.ts; don't hard-code
  hex values in widgets, and don't rely on colour alone to distinguish series (use dashes or markers).""")
M("D_recharts_tooltip", "gotcha", 0.45, "charts,recharts",
  """Recharts' default Tooltip formats values with toString(), so large numbers showed without separators; pass
  formatter={formatMetric} from src/lib/format.ts on every Tooltip.""")
M("D_perf_note", "note", 0.45, "performance,investigation",
  """Performance investigation, January 2026: the org overview with 40 widgets took 9 s to become interactive on a
  mid-range laptop (Lighthouse, 4x CPU throttling). After the fixes from that investigation it is 3.4 s; the target
  is under 3 s on the same machine. The largest remaining cost is parsing the vendor chunk at startup. Measure with
  `pnpm build && pnpm preview` and the Performance panel, never against the dev server, whose unbundled modules
  distort timings.""", by="dev", src="perf review 2026-01-22")
M("D_rej_css_in_js", "rejected_alternative", 0.4, "styling",
  """styled-components / Emotion were rejected for new code: runtime style injection showed up in profiles, and
  Tailwind was already used everywhere.""")

project("logtide")
M("R_nextest", "convention", 0.4, "testing,ci",
  """Run tests with `cargo nextest run`; CI uses nextest as well (doc tests run separately with cargo test --doc).""")
M("R_multigz", "gotcha", 0.6, "compression,logrotate",
  """Logs rotated with compress + delaycompress and then concatenated are multi-member gzip files. flate2's GzDecoder
  stops after the first member and silently drops the rest; use MultiGzDecoder.""")
M("R_rej_daemon", "rejected_alternative", 0.45, "scope,architecture",
  """A background daemon that pre-indexes log directories was proposed and rejected: it turns a grep-like tool into a
  service to install and monitor. Users who need indexing should use Loki or similar.""")
M("R_rg_note", "note", 0.45, "performance,benchmarks",
  """Benchmark notes, March 2026, 2 GB nginx access log on an 8-core laptop: plain literal search tide 0.41 s vs
  ripgrep 0.36 s; case-insensitive regex 1.9 s vs 1.7 s; --field status=500 on the JSON variant 4.8 s (ripgrep can't
  do this). The remaining gap is mostly line splitting: ripgrep searches the whole buffer first and only finds line
  boundaries around matches, while tide splits every line. Worth trying before 1.0; tracked in issue #131.""", by="dev", src="issue #131")

project("harbor-infra")
M("I_accounts", "fact", 0.55, "aws,accounts,sso",
  """AWS accounts: harbor-prod and harbor-staging, plus harbor-shared for ECR and the Terraform state bucket. Humans
  log in through IAM Identity Center with the PlatformEngineer or ReadOnly permission set; nobody has IAM users.""")
M("I_karpenter_drift", "gotcha", 0.75, "karpenter,ami,upgrades",
  """Karpenter treats a new AMI as drift and replaces nodes. With the amiSelectorTerms alias set to al2023@latest, an
  AMI release rolled every prod node within an hour. Pin the alias to a version (al2023@v20260401) and keep the
  NodePool disruption budget at nodes: 10%.""")
M("I_rej_terragrunt", "rejected_alternative", 0.5, "terraform,terragrunt,state",
  """Terragrunt was considered for keeping stacks DRY and rejected: one more tool and config language on top of
  Terraform, and Atlantis support needed a custom workflow. A few duplicated provider blocks are acceptable.""")
M("I_tofu_short", "convention", 0.4, "opentofu,tooling",
  """Pin the tofu version in .opentofu-version; tenv reads it.""", at="2026-01-22T10:00:00.000Z")
M("I_outage_note", "note", 0.55, "incidents,dns,postmortem",
  """Postmortem 2026-04-02 (38 min partial outage): CoreDNS pods were all on spot nodes reclaimed within the same
  minute, and the system node group had been scaled to 1 during a cost experiment. Lookups timed out cluster-wide;
  billing and the shop returned 502s. Actions: CoreDNS is pinned to the system node group with 3 replicas and a PDB,
  the node group minimum is back to 3 and protected by a tflint rule, and a synthetic DNS probe pages on-call.""", by="dev", src="postmortem 2026-04-02")

project("shopfront")
M("S_shell_plus", "preference", 0.3, "tooling,django",
  """Use `./manage.py shell_plus` (django-extensions) for poking around, not plain shell.""", by="dev", src="manual")
M("S_celery_retry", "convention", 0.6, "celery,retries,erp",
  """Tasks that call external services declare autoretry_for=(requests.RequestException,), retry_backoff=True and
  max_retries=5. Don't hand-roll retry loops with time.sleep inside a task.""")
M("S_search_ranking", "fact", 0.5, "search,postgres",
  """Catalog search ranks by ts_rank_cd on the search vector multiplied by a popularity boost (log of 30-day sales from
  ProductStats). In-stock products are sorted before out-of-stock ones with the same rank.""")
M("S_rej_wagtail", "rejected_alternative", 0.45, "cms,content",
  """Wagtail for the content pages (shipping info, lookbooks) was rejected: marketing only edits a dozen pages, and
  django-flatpages plus a rich-text field was enough without a second admin.""")
M("S_vat_note", "note", 0.5, "vat,money,legal",
  """Background on VAT: the shop sells B2C in DE, AT and NL. Since the EU OSS rules (July 2021) we charge the
  customer's country rate for cross-border orders above the threshold; the rate table is in shop/pricing/vat.py and
  verified yearly by the tax advisor. Gross shelf prices stay the same across countries, so the net margin differs
  per country.""", by="dev", src="manual")
M("S_webhook_retry_note", "fact", 0.45, "payments,adyen",
  """Adyen retries an unacknowledged notification after 2, 5, 10, 15, 30 min and then hourly for up to 30 days;
  replayed notifications are deduplicated by pspReference + eventCode in AdyenNotification.""")

# ---------------------------------------------------------------------------------------------------------------
# Questions. Q(kind, project, question, *relevant keys)
# ---------------------------------------------------------------------------------------------------------------
# ledgerline
Q("howto", "ledgerline", "How should I make outbound HTTP calls from the billing webhook worker?", "L_httpx", "L_httpx_client")
Q("why", "ledgerline", "Why isn't the requests library used anywhere in the billing service?", "L_httpx")
Q("gotcha", "ledgerline", "Requests to our sales-tax vendor fail after a few seconds when a bill has many line items. Where do I change that?", "L_httpx_timeout")
Q("gotcha", "ledgerline", "Traffic to the payment API isn't using the newer protocol version even though we asked for it. What's missing?", "L_httpx_h2")
Q("gotcha", "ledgerline", "One endpoint became 5x slower after I started constructing a fresh connection object on each call. What's the convention?", "L_httpx_client")
Q("gotcha", "ledgerline", "What breaks if each billing replica applies pending DB changes at container start?", "L_alembic_parallel")
Q("status", "ledgerline", "Is Celery completely gone from the billing service?", "L_remove_celery_todo", "L_arq")
Q("why", "ledgerline", "Why did billing switch to a different job queue last winter?", "L_arq")
Q("rejected", "ledgerline", "When we replaced the billing task queue, what other options were looked at and why weren't they chosen?", "L_rej_dramatiq")
Q("howto", "ledgerline", "What type and naming should a new monetary field on billing's refund model use?", "L_money")
Q("rejected", "ledgerline", "Why doesn't billing keep amounts in a fixed-point decimal column?", "L_rej_numeric")
Q("gotcha", "ledgerline", "Bills in yen come out off by a factor of 100. Known issue?", "L_zero_decimal")
Q("keyword", "ledgerline", "stripe webhook SignatureVerificationError even though the secret is right", "L_stripe_raw_body")
Q("paraphrase", "ledgerline", "How do we guarantee a retry can't give someone their money back twice?", "L_stripe_idempotency")
Q("paraphrase", "ledgerline", "What if the payment processor notifies us about the same thing more than once?", "L_webhook_dedupe")
Q("gotcha", "ledgerline", "Can my handler assume the invoice was finalized before the paid notification shows up?", "L_webhook_order")
Q("why", "ledgerline", "Why is the incoming payment-notification route so thin? It just queues work and answers.", "L_webhook_ack")
Q("howto", "ledgerline", "Where does initialisation logic for the billing web app belong?", "L_lifespan")
Q("howto", "ledgerline", "Product wants invoices that can be marked as contested. How do I add that value in a schema change?", "L_alembic_enum")
Q("howto", "ledgerline", "How do I add an index to the big invoices table without locking it during a deploy?", "L_concurrent_index")
Q("keyword", "ledgerline", "alembic upgrade fails: Multiple head revisions are present", "L_alembic_heads")
Q("paraphrase", "ledgerline", "When a customer's card is declined, when do we try charging again and when do we give up?", "L_dunning_schedule")
Q("howto", "ledgerline", "Can I trigger the overnight collections run again manually without double-charging anyone?", "L_dunning_cron")
Q("gotcha", "ledgerline", "Customers who signed up on the 31st end up billed on the 28th or 29th a few months later. What's the cause?", "L_anchor_drift")
Q("gotcha", "ledgerline", "We got a deadlock finalizing a bill. What sequence should row locks be taken in?", "L_lock_order")
Q("status", "ledgerline", "Can accounting already download invoices as a spreadsheet from the billing API?", "L_csv_export")
Q("howto", "ledgerline", "How are invoice documents produced, and where do the files end up?", "L_pdf_weasyprint")
Q("rejected", "ledgerline", "Why don't we print invoices to PDF with a headless browser?", "L_rej_chromium")
Q("keyword", "ledgerline", "OSError: cannot load library 'pango-1.0-0' when importing weasyprint in docker", "L_weasy_pango")
Q("howto", "ledgerline", "I'm adding a new knob to billing. How should the code get its value?", "L_settings")
Q("rejected", "ledgerline", "Can I send the receipt email from a FastAPI background task after returning the response?", "L_rej_background_tasks")
Q("keyword", "ledgerline", "pytest-asyncio session fixture: Future attached to a different loop with asyncpg", "L_pytest_asyncio")
Q("rejected", "ledgerline", "Could the billing tests run on an in-memory database to make them faster?", "L_testcontainers")
Q("gotcha", "ledgerline", "I want to give the billing app a bigger database connection pool. Anything to watch out for?", "L_pool_size", "L_pgbouncer")
Q("keyword", "ledgerline", "asyncpg DuplicatePreparedStatementError behind pgbouncer", "L_pgbouncer")
Q("gotcha", "ledgerline", "Everybody got rate-limited at once, as if all traffic came from a single address. What causes that?", "L_proxy_headers")
Q("paraphrase", "ledgerline", "How are API consumers throttled in billing, and what do they get back when over the limit?", "L_rate_limit")
Q("howto", "ledgerline", "How should a billing service function report that an invoice was already finalized?", "L_problem_json")
Q("why", "ledgerline", "Why does an invoice have no sequential number while it's still being edited?", "L_invoice_numbers")
Q("keyword", "ledgerline", "why was SQLModel rejected for the models?", "L_rej_sqlmodel")
Q("howto", "ledgerline", "How do I install the billing service's Python packages the same way the pipeline does?", "L_uv")
Q("paraphrase", "ledgerline", "I changed how mid-cycle upgrades are charged. What should go into the pull request write-up?", "L_before_after_pref")
Q("keyword", "ledgerline", "The test run dies during collection with a warning about orm_mode. Why?", "L_pydantic_orm_mode")
Q("paraphrase", "ledgerline", "When prorating a plan change, how do we round the individual amounts?", "L_rounding")
Q("status", "ledgerline", "Can customers switch plans on their own yet?", "L_customer_portal_todo")
Q("status", "ledgerline", "Where do the per-country sales-tax rates in billing come from at the moment?", "L_vat_rates_todo")
Q("keyword", "ledgerline", "Is Stripe Tax used for VAT?", "L_stripe_tax_note")
Q("gotcha", "ledgerline", "Our pre-production environment was using credentials meant for local development. How could that happen?", "L_secrets_in_env")
Q("gotcha", "ledgerline", "One slow Stripe call seems to stall every other request on the same worker. Why?", "L_sync_in_async")

# pulseboard
Q("paraphrase", "pulseboard", "Where do server responses get cached in the dashboard, and can I put them in a global store?", "D_tanstack")
Q("rejected", "pulseboard", "Why didn't the dashboard go with Redux for state management?", "D_rej_redux")
Q("gotcha", "pulseboard", "Every time I come back to the browser tab the dashboard fires dozens of requests and gets rate limited.", "D_staletime")
Q("keyword", "pulseboard", "TanStack Query v5 cacheTime gcTime onSuccess removed", "D_v5_renames")
Q("why", "pulseboard", "Why aren't the big time-series graphs drawn with Recharts anymore?", "D_echarts")
Q("status", "pulseboard", "Has every widget been moved to the new charting library?", "D_echarts")
Q("gotcha", "pulseboard", "The JS payload jumped by ~1 MB after I pulled in the graph library. What did I do wrong?", "D_echarts_treeshake")
Q("gotcha", "pulseboard", "A graph renders empty when it sits on a panel that isn't visible at first.", "D_hidden_tab_chart")
Q("gotcha", "pulseboard", "Users lose their zoom range on the realtime graph every few seconds.", "D_echarts_option_memo")
Q("gotcha", "pulseboard", "I changed the backend URL variable in the Cloudflare settings but the site still calls the old API.", "D_vite_env", "D_runtime_config")
Q("howto", "pulseboard", "How can one frontend build talk to the staging backend and later to production?", "D_runtime_config")
Q("rejected", "pulseboard", "Can I keep the auth token in localStorage so it survives reloads?", "D_session_cookie")
Q("keyword", "pulseboard", "dashboard POST request 403 CSRF_MISMATCH", "D_csrf")
Q("howto", "pulseboard", "Should I use axios for the requests on the new settings page?", "D_api_fetch")
Q("howto", "pulseboard", "How should I fake backend responses in component tests?", "D_msw")
Q("gotcha", "pulseboard", "The request mocks I copied from the team wiki never intercept anything.", "D_msw_v2")
Q("keyword", "pulseboard", "vitest ReferenceError: ResizeObserver is not defined in chart test", "D_jsdom_resizeobserver")
Q("gotcha", "pulseboard", "The browser test for the main dashboard fails randomly. How should it wait for the charts?", "D_playwright_wait")
Q("rejected", "pulseboard", "Why isn't the dashboard rendered on the server?", "D_rej_nextjs")
Q("gotcha", "pulseboard", "Refreshing the page on an alerts URL in production shows a not-found page.", "D_spa_redirects")
Q("gotcha", "pulseboard", "Status badge colours that I build from a variable are missing in the production build.", "D_tailwind_dynamic")
Q("gotcha", "pulseboard", "Someone in Asia viewing a European organization sees the per-day columns shifted by one. What's wrong?", "D_tz_buckets")
Q("status", "pulseboard", "Is spreadsheet (xlsx) export from the table tile available to users?", "D_xlsx_todo")
Q("keyword", "pulseboard", "Can users export the table widget data to a csv file in the dashboard?", "D_csv_export")
Q("gotcha", "pulseboard", "In dev mode the realtime feed subscribes twice and the backend sees duplicate clients.", "D_strictmode_ws")
Q("rejected", "pulseboard", "Is it OK for every tile to have its own realtime connection?", "D_websocket")
Q("why", "pulseboard", "Why does the alerts page poll instead of getting pushed updates?", "D_alert_polling")
Q("status", "pulseboard", "Can we move the dashboard to the latest major React version?", "D_react19_todo")
Q("gotcha", "pulseboard", "Right after a release some people only see an empty screen until they hard-refresh.", "D_cf_cache", "D_chunk_error")
Q("howto", "pulseboard", "How do I show a number with the right thousands and decimal separators in a widget?", "D_number_format")
Q("paraphrase", "pulseboard", "Is it fine to load the widget's data inside an effect hook?", "D_no_effect_fetch")
Q("keyword", "pulseboard", "query keys factory queryKeys.ts, can I inline the array key?", "D_query_keys")
Q("howto", "pulseboard", "What's the right way to call the invoicing API from the frontend?", "D_generated_client")
Q("gotcha", "pulseboard", "Tiles pile on top of each other on medium-width screens after someone rearranges them.", "D_grid_breakpoints")
Q("keyword", "pulseboard", "npm or yarn for installing the dashboard?", "D_pnpm")
Q("status", "pulseboard", "Can people rearrange dashboard tiles using only the keyboard?", "D_a11y_grid_todo")

# logtide
Q("gotcha", "logtide", "The CLI panics when the reader on the other end of the pipe exits early.", "R_broken_pipe")
Q("why", "logtide", "Why was dumping lots of results to a file so slow before, and what fixed it?", "R_bufwriter")
Q("why", "logtide", "Why won't the tool accept lookaround in search expressions?", "R_regex")
Q("keyword", "logtide", "make PCRE2 the default regex engine?", "R_rej_pcre2")
Q("rejected", "logtide", "Should I rewrite file scanning with async/await to make the CLI faster?", "R_rej_tokio")
Q("gotcha", "logtide", "tide got killed by a bus error while reading a log that was being rotated.", "R_mmap_sigbus")
Q("gotcha", "logtide", "Following a log stops printing new lines once the file is rotated.", "R_rotate_reopen")
Q("gotcha", "logtide", "Expected-output tests are nondeterministic when several inputs are searched at once.", "R_output_order")
Q("howto", "logtide", "I changed the output format; how do I update the expected CLI output in the tests?", "R_insta")
Q("gotcha", "logtide", "My new CLI output test is green locally but red on the build server.", "R_insta_ci")
Q("status", "logtide", "Which crate handles dates and timezones in the CLI now?", "R_jiff")
Q("why", "logtide", "Why did the CLI change its date-time library this spring?", "R_jiff")
Q("gotcha", "logtide", "The same time filter returns different lines on my laptop and inside a container.", "R_naive_local")
Q("keyword", "logtide", "msrv job: package cannot be built because it requires rustc 1.79 after cargo update", "R_msrv_update")
Q("howto", "logtide", "How are release binaries built, and for which platforms?", "R_release")
Q("gotcha", "logtide", "The statically linked Linux build is much slower with many threads than the glibc one.", "R_mimalloc")
Q("howto", "logtide", "How do I format the Rust code so CI's fmt check passes?", "R_rustfmt_nightly")
Q("howto", "logtide", "Which licenses are acceptable for a dependency I want to add to the CLI?", "R_cargo_deny")
Q("paraphrase", "logtide", "What does the maintainer want to see in a PR before I pull in a new crate?", "R_deps_pref")
Q("gotcha", "logtide", "A user on a Mac says their settings file is ignored.", "R_config_macos")
Q("gotcha", "logtide", "Regexes ending in $ never hit on logs copied from our IIS boxes.", "R_crlf")
Q("gotcha", "logtide", "Building from source breaks on a bare-bones musl distro that has no build tools.", "R_zstd_feature")
Q("gotcha", "logtide", "After I hit interrupt, my shell is garbled and something is still running.", "R_pager_sigint")
Q("status", "logtide", "Does the release ship a man page?", "R_manpage_todo")
Q("status", "logtide", "Can other projects depend on the core library from crates.io yet?", "R_crate_name_todo")
Q("gotcha", "logtide", "Searching a directory returns zero results although the files clearly contain the string.", "R_ignore_zero", "R_ignore")
Q("paraphrase", "logtide", "What exit status should the CLI return when the search finds nothing?", "R_exit_codes")
Q("howto", "logtide", "What error type should functions in the library crate return?", "R_errors")
Q("gotcha", "logtide", "Why does one damaged compressed input kill the optimized build while dev builds survive it?", "R_panic_abort")
Q("keyword", "logtide", "simd-json for faster JSON log line parsing?", "R_rej_simdjson")
Q("status", "logtide", "Can tide read the Windows Event Log?", "R_eventlog_note")
Q("gotcha", "logtide", "Tail-mode tests fail intermittently on the Apple CI machines.", "R_fsevents_flaky")
Q("howto", "logtide", "How do I cross-compile the ARM static binary on my laptop?", "R_cross")
Q("paraphrase", "logtide", "Do we have any unsafe code, and where is it allowed?", "R_unsafe")

# harbor-infra
Q("howto", "harbor-infra", "Should my script call terraform or something else?", "I_opentofu")
Q("why", "harbor-infra", "Why did we leave HashiCorp's tool for infrastructure code?", "I_opentofu")
Q("gotcha", "harbor-infra", "Planning the data stack fails because the state can't be decoded.", "I_state_encryption")
Q("howto", "harbor-infra", "How do I roll out an infrastructure change to production?", "I_atlantis")
Q("keyword", "harbor-infra", "atlantis plan: directory locked by another pull request", "I_atlantis_locks")
Q("gotcha", "harbor-infra", "Init on the PR bot fails with a checksum mismatch for the provider package.", "I_lockfile_platforms")
Q("rejected", "harbor-infra", "Why don't app workloads run on serverless pods instead of nodes?", "I_rej_fargate")
Q("gotcha", "harbor-infra", "A service with one replica keeps having short outages when the cluster repacks nodes.", "I_consolidation")
Q("howto", "harbor-infra", "During an incident my manual fixes to a deployment get undone after a few minutes. How do I hot-patch safely?", "I_selfheal_incident")
Q("gotcha", "harbor-infra", "The autoscaler and GitOps keep fighting over the replica count.", "I_hpa_replicas")
Q("howto", "harbor-infra", "Should I write a Helm chart for a new internal service's manifests?", "I_kustomize_helm", "I_rej_helm")
Q("howto", "harbor-infra", "How do I get a database password into a new service's pods?", "I_eso")
Q("gotcha", "harbor-infra", "I rotated a credential in AWS but the pods still use the old value.", "I_eso_refresh")
Q("gotcha", "harbor-infra", "After we renamed the pod's identity object in kustomize, bucket access is denied.", "I_irsa_sa_name")
Q("keyword", "harbor-infra", "GitHub Actions deploy job with environment prod: Not authorized to perform sts:AssumeRoleWithWebIdentity", "I_oidc_sub")
Q("paraphrase", "harbor-infra", "Which load balancer fronts our public endpoints these days?", "I_alb")
Q("gotcha", "harbor-infra", "One broken Ingress seems to stop every other ingress change from being applied.", "I_alb_group")
Q("keyword", "harbor-infra", "cert-manager DNS-01 propagation check failed", "I_certmanager_dns")
Q("howto", "harbor-infra", "How do I rename a database resource in code without recreating the instance?", "I_rds_protect", "I_moved")
Q("gotcha", "harbor-infra", "I raised the Postgres connection limit in the parameter group, the apply succeeded, but nothing changed.", "I_rds_reboot")
Q("rejected", "harbor-infra", "Why did we turn down the commercial monitoring vendor that charges per host?", "I_rej_datadog")
Q("gotcha", "harbor-infra", "Prometheus keeps getting killed for running out of memory.", "I_cardinality")
Q("howto", "harbor-infra", "What does a new alert need so on-call knows what to do?", "I_alert_rules")
Q("howto", "harbor-infra", "Which image reference should a deployment manifest use?", "I_image_tags")
Q("gotcha", "harbor-infra", "Pods in a freshly created namespace can't resolve any hostnames.", "I_netpol_dns")
Q("status", "harbor-infra", "Have we ever actually tested failing over to Frankfurt?", "I_dr_todo")
Q("why", "harbor-infra", "Why don't our pods have CPU limits?", "I_cpu_limits")
Q("keyword", "harbor-infra", "pods stuck ContainerCreating: failed to assign an IP address to container", "I_prefix_delegation")
Q("status", "harbor-infra", "Which Kubernetes version do the clusters run, and is an upgrade planned?", "I_eks", "I_eks_upgrade_todo")
Q("keyword", "harbor-infra", "why not Sealed Secrets?", "I_rej_sealed")
Q("paraphrase", "harbor-infra", "I had to change a setting in the AWS console during the outage. What am I expected to do now?", "I_no_clickops_pref")
Q("paraphrase", "harbor-infra", "What naming pattern and tags do cloud resources need?", "I_naming")
Q("paraphrase", "harbor-infra", "Which workloads are allowed on cheap interruptible capacity?", "I_spot")
Q("gotcha", "harbor-infra", "DNS records keep flipping back and forth between the two clusters.", "I_externaldns_owner")

# shopfront
Q("gotcha", "shopfront", "The order confirmation job sometimes can't find the order it was queued for.", "S_on_commit")
Q("howto", "shopfront", "Can I pass a Product object directly to a background task in the shop?", "S_task_args")
Q("gotcha", "shopfront", "A delayed ERP job in the shop ran twice.", "S_visibility_timeout")
Q("gotcha", "shopfront", "Shoppers got the 'you left something in your basket' reminder two times last night.", "S_single_beat")
Q("status", "shopfront", "Is the shop still using Elasticsearch?", "S_pg_fts", "S_es_cleanup_todo")
Q("why", "shopfront", "Why did product search move into the main database?", "S_pg_fts")
Q("gotcha", "shopfront", "Searching for plural German words on the DE site gives zero hits.", "S_fts_config")
Q("paraphrase", "shopfront", "How does catalog search cope with misspelled product names?", "S_trigram")
Q("rejected", "shopfront", "Why isn't the storefront a single-page JavaScript app?", "S_rej_spa")
Q("keyword", "shopfront", "htmx POST 403 CSRF verification failed", "S_htmx_csrf")
Q("gotcha", "shopfront", "I added a UUID column in a migration and every existing row got the same value.", "S_uuid_default")
Q("howto", "shopfront", "How do I remove a field from a shop model without downtime?", "S_expand_contract")
Q("keyword", "shopfront", "ValueError: Missing staticfiles manifest entry", "S_manifest_static")
Q("gotcha", "shopfront", "Product images are never served from the CDN cache.", "S_signed_media")
Q("gotcha", "shopfront", "Tests pass one at a time but fail when the whole suite runs in parallel.", "S_xdist")
Q("gotcha", "shopfront", "The DE storefront sometimes displays price boxes in the wrong language.", "S_cache_language")
Q("paraphrase", "shopfront", "How should tax amounts on order lines be rounded in the shop?", "S_vat_rounding")
Q("paraphrase", "shopfront", "How are product prices stored in the shop's models, with or without tax?", "S_prices")
Q("howto", "shopfront", "How should a new model point at the customer account model?", "S_user_model")
Q("gotcha", "shopfront", "We oversold: one unit left, and two people bought it.", "S_stock_lock")
Q("paraphrase", "shopfront", "Which payment provider does the shop use?", "S_adyen")
Q("gotcha", "shopfront", "Payment notifications for the shop keep arriving late and piling up.", "S_adyen_accept")
Q("status", "shopfront", "Can the accountants' order export handle a full month of orders?", "S_datev_todo")
Q("paraphrase", "shopfront", "Where should the logic for a new return-and-refund flow in the shop go?", "S_services_pref")
Q("rejected", "shopfront", "Can I push stock changes to the ERP from a post_save handler?", "S_rej_signals_erp")
Q("gotcha", "shopfront", "After a bulk repricing, product pages kept showing yesterday's numbers for a while.", "S_bulk_update")
Q("status", "shopfront", "Can we move the shop to the next Django LTS now?", "S_django_upgrade_todo")
Q("gotcha", "shopfront", "The daily sales report counts late-evening orders for the next day.", "S_localdate")
Q("gotcha", "shopfront", "Photos taken with phones show up sideways in the shop.", "S_exif")
Q("gotcha", "shopfront", "After a stock sync, roughly half the catalog still shows outdated availability.", "S_odata_paging")
Q("howto", "shopfront", "How should code change an order's status?", "S_order_state")
Q("gotcha", "shopfront", "A customer managed to redeem a one-time voucher twice.", "S_coupon_race")
Q("rejected", "shopfront", "Can we add websockets so staff see new orders live?", "S_rej_channels")
Q("keyword", "shopfront", "pip-compile requirements: how are dependencies pinned and installed in the shop?", "S_pip_tools")
Q("gotcha", "shopfront", "The admin order list runs hundreds of queries per page load.", "S_admin_n_plus_one")
Q("keyword", "shopfront", "shop login: django-allauth social providers and staff 2FA", "S_allauth")
Q("keyword", "shopfront", "celery beat schedule and Redis broker setup in the shop", "S_celery")


# second batch: more why/rejected/status questions, and keyword-style lookups (error strings, flags, file names)
Q("why", "ledgerline", "Why do billing list endpoints hand back an opaque token instead of page numbers?", "L_cursor_pagination")
Q("paraphrase", "ledgerline", "How do we publish invoice events to other services without two workers sending the same one?", "L_outbox")
Q("why", "ledgerline", "Why doesn't billing use a remote toggle service for its feature switches?", "L_flags")
Q("gotcha", "ledgerline", "Can I hard-delete a customer's records when they ask us to erase their data?", "L_customer_delete")
Q("why", "ledgerline", "Why do we compute mid-cycle charges ourselves instead of letting the payment provider do it?", "L_proration_context")
Q("howto", "ledgerline", "How should failed calls to Stripe be retried?", "L_httpx_retries", "L_stripe_idempotency")
Q("keyword", "ledgerline", "CREATE INDEX CONCURRENTLY ActiveSqlTransaction alembic autocommit_block", "L_concurrent_index")
Q("keyword", "ledgerline", "WeasyPrint invoice PDF S3 path presigned URL", "L_pdf_weasyprint")
Q("keyword", "ledgerline", "outbox table FOR UPDATE SKIP LOCKED SNS poller", "L_outbox")
Q("why", "pulseboard", "Why do we validate API payloads on the client at all?", "D_zod")
Q("paraphrase", "pulseboard", "Why are the big event lists rendered with a windowing library, and what does it assume about rows?", "D_virtualization")
Q("rejected", "pulseboard", "Can I use styled-components for a new widget?", "D_rej_css_in_js", "D_tailwind")
Q("status", "pulseboard", "How long does the org overview take to become interactive now, and what's the goal?", "D_perf_note")
Q("keyword", "pulseboard", "react-grid-layout peer dependency react 19", "D_react19_todo")
Q("keyword", "pulseboard", "noUncheckedIndexedAccess: any vs unknown in API types", "D_ts_strict")
Q("keyword", "pulseboard", "sentry vite plugin source maps upload", "D_sentry")
Q("paraphrase", "logtide", "How does the CLI keep results from parallel file scans from getting mixed together?", "R_rayon")
Q("gotcha", "logtide", "Rotated, compressed logs only show the first part of their content.", "R_multigz")
Q("rejected", "logtide", "Should tide get a background service that pre-indexes directories for faster repeat searches?", "R_rej_daemon")
Q("status", "logtide", "How does tide's speed compare with ripgrep at the moment, and where is the gap?", "R_rg_note")
Q("keyword", "logtide", "SIGBUS mmap copytruncate", "R_mmap_sigbus")
Q("keyword", "logtide", "clap_mangen man page cargo-dist archive", "R_manpage_todo")
Q("keyword", "logtide", "cargo-deny deny.toml MPL license exception", "R_cargo_deny")
Q("keyword", "logtide", "NO_COLOR escape codes showing up in insta snapshots", "R_color_snapshots")
Q("why", "harbor-infra", "Why is infrastructure state split into several separate pieces?", "I_state_split")
Q("rejected", "harbor-infra", "Did we look at a wrapper tool to DRY up the stack configuration?", "I_rej_terragrunt")
Q("gotcha", "harbor-infra", "After an AMI release every production node got replaced within an hour.", "I_karpenter_drift")
Q("paraphrase", "harbor-infra", "What happened in the April name-resolution outage and what changed afterwards?", "I_outage_note")
Q("why", "harbor-infra", "What did we gain by switching the tool that provisions worker nodes?", "I_karpenter")
Q("why", "harbor-infra", "Why was the Rego-based admission controller dropped?", "I_kyverno")
Q("keyword", "harbor-infra", "karpenter.sh/do-not-disrupt annotation PodDisruptionBudget", "I_consolidation")
Q("keyword", "harbor-infra", "ExternalSecret force-sync annotation after rotation", "I_eso_refresh")
Q("keyword", "harbor-infra", "tofu providers lock -platform=linux_amd64", "I_lockfile_platforms")
Q("keyword", "harbor-infra", "ECR lifecycle policy untagged images", "I_ecr")
Q("keyword", "harbor-infra", "Kyverno require-requests ResourceQuota LimitRange namespace", "I_namespaces")
Q("why", "shopfront", "Why do the shop's readiness and liveness probes hit different endpoints?", "S_health")
Q("why", "shopfront", "Why are shop sessions kept in the database as well as the cache?", "S_sessions")
Q("rejected", "shopfront", "Why didn't the shop use the same payment company as the billing service?", "S_rej_stripe")
Q("rejected", "shopfront", "Could we bring in a full CMS for the shipping-info and lookbook pages?", "S_rej_wagtail")
Q("paraphrase", "shopfront", "How are catalog search results ordered?", "S_search_ranking")
Q("keyword", "shopfront", "transaction.on_commit .delay() Order.DoesNotExist", "S_on_commit")
Q("keyword", "shopfront", "index_together removed in Django 5.1, squash catalog migrations", "S_django_upgrade_todo")
Q("keyword", "shopfront", "django_assert_num_queries for list endpoints", "S_query_count_tests")


# short one-liners, as agents often record them
project("ledgerline")
M("L_hosts", "fact", 0.35, "deploy,urls",
  """Billing API hosts: billing.staging.harbor.io and billing.harbor.io (public API at api.harbor.io/billing/v1).""")
project("pulseboard")
M("D_stories", "convention", 0.3, "storybook",
  """Stories live next to their component as Component.stories.tsx.""")
project("logtide")
M("R_binary_name", "fact", 0.35, "release,crates-io",
  """The binary is `tide`, but the published package is `logtide` because `tide` is taken on crates.io.""")
project("harbor-infra")
M("I_no_target", "convention", 0.5, "opentofu,workflow",
  """Never use -target for applies in prod; it leaves the stack half-applied and the next plan confusing.""")
project("shopfront")
M("S_order_numbers", "convention", 0.45, "orders,urls,security",
  """Customer-facing order numbers are SF- plus 8 digits; never put database ids in URLs or emails.""")
M("S_admin_i18n", "preference", 0.3, "i18n,admin",
  """Staff-only admin screens don't need translations; English is fine there.""", by="dev", src="manual")
# fmt: on


# ---------------------------------------------------------------------------------------------------------------
# Output and checks
# ---------------------------------------------------------------------------------------------------------------
def _timestamps() -> dict[str, str]:
    """Default timestamps spread over each project's lifetime in list order; explicit `at` wins."""
    out: dict[str, str] = {}
    for name, (start, end) in PROJECTS.items():
        mems = [m for m in MEMS if m["project"] == name]
        t0 = datetime.fromisoformat(start).replace(tzinfo=UTC)
        span = (datetime.fromisoformat(end).replace(tzinfo=UTC) - t0).total_seconds()
        for i, m in enumerate(mems):
            if m["at"]:
                out[m["key"]] = m["at"]
                continue
            jitter = int(_h("t:" + m["key"])[:6], 16) % (10 * 3600)
            t = t0 + timedelta(seconds=span * i / max(1, len(mems) - 1)) + timedelta(hours=8, seconds=jitter)
            t = t.replace(second=0)
            out[m["key"]] = t.strftime("%Y-%m-%dT%H:%M:00.000Z")
    return out


def records() -> list[dict[str, Any]]:
    stamps = _timestamps()
    out = []
    for m in MEMS:
        h = _h("m:" + m["key"])
        by = m["by"] or AGENTS[int(h[:4], 16) % len(AGENTS)]
        src = m["src"] or f"session:ses_{h[4:10]} turn:{int(h[10:12], 16) % 60 + 1}"
        out.append(
            {
                "id": mem_id(m["key"]),
                "text": m["text"],
                "category": m["category"],
                "importance": m["importance"],
                "tags": m["tags"],
                "entered_by": by,
                "source": src,
                "created_at": stamps[m["key"]],
            }
        )
    return out


def question_records() -> list[dict[str, Any]]:
    return [
        {
            "question": q["question"],
            "relevant": [mem_id(k) for k in q["relevant"]],
            "kind": q["kind"],
            "project": q["project"],
        }
        for q in QUESTIONS
    ]


STOPWORDS = set(
    """a about above after again against all am an and any are aren't as at be because been before being below between
    both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from
    further had hadn't has hasn't have haven't having he her here hers herself him himself his how i i'm if in into is
    isn't it it's its itself just let's me more most mustn't my myself no nor not now of off on once only or other
    ought our ours ourselves out over own same shan't she should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they this those through to too under until up very was wasn't we
    we're were weren't what what's when where which while who whom why will with won't would wouldn't you your yours
    yourself yourselves also get got still yet every any much many one""".split()
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9_'.-]*[a-z0-9]|[a-z0-9]", text.lower()) if w not in STOPWORDS}


def keyword_baseline(mems: list[dict[str, Any]], qs: list[dict[str, Any]], k: int = 5) -> dict[str, Any]:
    """Rank memories by the number of distinct non-stopword words shared with the question (ties: file order)."""
    mem_words = [(m["id"], words(m["text"])) for m in mems]
    per_kind: dict[str, list[float]] = {}
    recalls, hits = [], []
    for q in qs:
        qw = words(q["question"])
        scored = sorted(mem_words, key=lambda mw: -len(qw & mw[1]))
        top = {mid for mid, _ in scored[:k]}
        rel = set(q["relevant"])
        r = len(rel & top) / len(rel)
        recalls.append(r)
        hits.append(1.0 if rel & top else 0.0)
        per_kind.setdefault(q["kind"], []).append(r)
    return {
        "recall": sum(recalls) / len(recalls),
        "hit": sum(hits) / len(hits),
        "per_kind": {kind: (sum(v) / len(v), len(v)) for kind, v in sorted(per_kind.items())},
    }


def check(mem_path: Path, q_path: Path) -> None:
    mems = [json.loads(line) for line in mem_path.read_text().splitlines() if line.strip()]
    qs = [json.loads(line) for line in q_path.read_text().splitlines() if line.strip()]
    ids = [m["id"] for m in mems]
    assert all(re.fullmatch(r"mem_[0-9a-f]{8}", i) for i in ids), "bad id"
    assert len(set(ids)) == len(ids), "duplicate ids"
    assert len({m["text"] for m in mems}) == len(mems), "duplicate texts"
    assert len({m["text"].lower().strip() for m in mems}) == len(mems), "near-duplicate texts"
    assert len(mems) >= 320 and len(qs) >= 110, (len(mems), len(qs))
    for m in mems:
        assert m["category"] in CATEGORIES, m
        assert 0 <= m["importance"] <= 1, m
        assert m["entered_by"] in ("claude", "codex", "opencode", "dev"), m
        assert m["tags"] and m["tags"][0] in PROJECTS, m
        assert len(m["text"]) <= 600, (len(m["text"]), m["text"][:60])
        datetime.strptime(m["created_at"], "%Y-%m-%dT%H:%M:%S.000Z")
    known = set(ids)
    assert len({q["question"] for q in qs}) == len(qs), "duplicate questions"
    for q in qs:
        assert q["kind"] in KINDS, q
        assert 1 <= len(q["relevant"]) <= 3, q
        assert len(set(q["relevant"])) == len(q["relevant"]), q
        assert set(q["relevant"]) <= known, q
    by_id = {m["id"]: m for m in mems}
    for q in qs:  # every question stays inside one project
        assert {by_id[i]["tags"][0] for i in q["relevant"]} == {q["project"]}, q
    print(f"{len(mems)} memories, {len(qs)} questions: OK")
    print("categories:", dict(Counter(m["category"] for m in mems)))
    print("projects:  ", dict(Counter(m["tags"][0] for m in mems)))
    print("kinds:     ", dict(Counter(q["kind"] for q in qs)))
    print("q/project: ", dict(Counter(q["project"] for q in qs)))
    print("agents:    ", dict(Counter(m["entered_by"] for m in mems)))
    lens = sorted(len(m["text"]) for m in mems)
    print(f"text length: min {lens[0]}, median {lens[len(lens) // 2]}, max {lens[-1]}")
    print("relevant per question:", dict(Counter(len(q["relevant"]) for q in qs)))
    b = keyword_baseline(mems, qs)
    print(f"naive shared-word baseline: recall@5 {b['recall']:.3f}, hit@5 {b['hit']:.3f}")
    for kind, (r, n) in b["per_kind"].items():
        print(f"  {kind:<11} recall@5 {r:.2f}  (n={n})")


def main() -> None:
    mem_path, q_path = HERE / "memories.jsonl", HERE / "questions.jsonl"
    if "--check" not in sys.argv:
        # superseded pairs: the later decision must be newer
        stamps = _timestamps()
        for old, new in [
            ("L_celery_old", "L_arq"),
            ("D_recharts_old", "D_echarts"),
            ("R_chrono_old", "R_jiff"),
            ("I_tf_pin", "I_opentofu"),
            ("I_ingress_nginx_old", "I_alb"),
            ("S_es_old", "S_pg_fts"),
            ("L_pool_size", "L_pgbouncer"),
        ]:
            assert stamps[old] < stamps[new], (old, new)
        keys = [m["key"] for m in MEMS]
        assert len(set(keys)) == len(keys), "duplicate keys"
        assert len({mem_id(k) for k in keys}) == len(keys), "id collision"
        for q in QUESTIONS:
            for k in q["relevant"]:
                assert k in keys, k
        with mem_path.open("w") as f:
            for r in records():
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        with q_path.open("w") as f:
            for r in question_records():
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    check(mem_path, q_path)


if __name__ == "__main__":
    main()
