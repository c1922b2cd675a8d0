# ruff: noqa: E501
"""Build the agent-view scenario: memories.jsonl, project.json and steps.json.

One made-up project, `fieldnote` (a FastAPI + PostGIS backend for a field-survey phone app), with 52 memories
of the kind a team records (decisions, rejected alternatives, conventions, gotchas, facts, preferences, todos),
the project's source files, and four scripted coding sessions (9 user messages, 38 agent steps) whose steps
are each labelled with the memories that matter for that step. Everything here was written by hand for
codememory.

    python benchmarks/data/agent_view/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name; the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key), so they stay the same when entries are added or reordered. Tool-call arguments
may hold `{root}`, which the benchmark replaces with the project's absolute path. The build replays every
scripted `edit` on the files (each edit's oldString must occur exactly once at that point) and checks
that a file is read in a turn before it is edited there (OpenCode and Claude Code refuse to edit a file
their process has not read, and each turn is a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: ST_MakeEnvelope with 4326,
UPLOAD_MAX_BYTES, deploy/nginx.conf, leeway=60, utf-8-sig), reads or edits the file the memory points to for
this task, or does what the memory prescribes where neither the user's request nor the file being edited
would have told it to. A memory the call merely agrees with (a pattern the file already follows, a warning
heeded by not doing something) is relevant, not used. Final answers have no `uses`: use detection watches what
the agent does (tool calls and edits) and the ids it cites. These labels score use detection
(bench_agent_view.py: which shown memories the session went on to use).
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CATEGORIES = ("decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note")
AGENTS = ("claude", "opencode", "codex", "dev", "claude", "opencode")
FIRST, LAST = datetime(2025, 3, 3, 9, 0, tzinfo=UTC), datetime(2026, 10, 28, 16, 0, tzinfo=UTC)


def mem_id(key: str) -> str:
    return "mem_" + hashlib.sha1(f"agent_view:{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------- memories
MEMS: list[tuple[str, str, float, str, str]] = [
    # key, category, importance, tags, text
    # --- geo and database
    (
        "geo_lonlat",
        "convention",
        0.9,
        "geo,postgis,api",
        "Coordinates are (longitude, latitude) in that order with SRID 4326 everywhere: the PostGIS geometry columns, the API's GeoJSON and the bbox parameter. The phone app sends lat and lon as separate fields; app/api/sync.py builds the point.",
    ),
    (
        "gist_index",
        "gotcha",
        0.8,
        "geo,postgis,performance",
        "Spatial filters must use ST_Intersects with an envelope on observations.geom so the GiST index ix_observations_geom is used; ST_Distance in a WHERE clause scans the whole table (9 s on 2M rows). Use ST_DWithin for radius queries.",
    ),
    (
        "srid_envelope",
        "gotcha",
        0.7,
        "geo,postgis",
        "ST_MakeEnvelope without its fifth argument builds an envelope with SRID 0, and comparing it with geom (4326) fails with 'Operation on mixed SRID geometries'. Always pass 4326.",
    ),
    (
        "alembic_review",
        "convention",
        0.6,
        "database,alembic,migrations",
        "Every schema change is an Alembic migration in migrations/versions/, generated with `alembic revision --autogenerate` and then edited by hand: autogenerate drops and recreates the PostGIS indexes it does not understand.",
    ),
    (
        "sqlalchemy2",
        "decision",
        0.6,
        "database,sqlalchemy",
        "SQLAlchemy 2.0 style only (select(), Session.execute, Mapped[] annotations) with GeoAlchemy2; the legacy Query API is not allowed in new code.",
    ),
    (
        "async_rejected",
        "rejected_alternative",
        0.5,
        "database,sqlalchemy,asyncio",
        "Rejected async SQLAlchemy with asyncpg: GeoAlchemy2's spatial functions were flaky under asyncio in 2025. Endpoints that touch the database are plain `def` and FastAPI runs them in its threadpool.",
    ),
    (
        "db_pool",
        "fact",
        0.4,
        "database,postgres,deploy",
        "Database pool in app/db.py: pool_size=10, max_overflow=5. The RDS instance allows 100 connections, shared by 4 API replicas and the arq worker.",
    ),
    (
        "mypy_geoalchemy",
        "gotcha",
        0.4,
        "typing,mypy,geoalchemy",
        "GeoAlchemy2 ships no type stubs: geometry columns are typed Mapped[Any] with a comment saying so; `# type: ignore` is not accepted anywhere else.",
    ),
    # --- API conventions
    (
        "pagination_cursor",
        "convention",
        0.7,
        "api,pagination",
        "List endpoints paginate with an opaque cursor (base64 of the last row's created_at and id, app/pagination.py) and limit <= 200. No offset pagination: observations are appended while phones page through them.",
    ),
    (
        "error_format",
        "convention",
        0.8,
        "api,errors",
        "API errors are RFC 7807 problem+json bodies raised with app.errors.problem(status, title, detail); never return a bare {'detail': ...} dict or raise HTTPException with a string from an endpoint.",
    ),
    (
        "query_validation",
        "convention",
        0.6,
        "api,validation,fastapi",
        "Query parameters are declared with Annotated[..., Query(...)]; composite ones (a bbox, a date range) are parsed by a helper in app/params.py that raises problem(422). Malformed input must never surface as a 500 from a ValueError deep in a query.",
    ),
    (
        "api_versioning",
        "decision",
        0.6,
        "api,mobile",
        "The API is versioned in the path (/v1/...). Breaking changes go to /v2 routes: the app versions still in the field call /v1 and we support the last three releases.",
    ),
    (
        "pydantic_v2",
        "fact",
        0.4,
        "api,pydantic",
        "Pydantic v2 everywhere: response models use model_config = ConfigDict(from_attributes=True); .dict() and parse_obj are v1 leftovers and fail review.",
    ),
    (
        "scopes",
        "convention",
        0.6,
        "api,auth",
        "Endpoints declare the scopes they need with Security(require_scope, scopes=[...]) (observations:read, observations:write, exports:create); never check roles by hand inside a handler.",
    ),
    # --- photos
    (
        "presigned_upload",
        "decision",
        0.8,
        "photos,s3,mobile",
        "Photos go straight from the phone to S3 (MinIO in development) with a presigned POST from POST /v1/photos/upload-url; the API never proxies image bytes.",
    ),
    (
        "photo_limit",
        "fact",
        0.6,
        "photos,s3,limits",
        "The photo size limit is the presigned POST policy's content-length-range, UPLOAD_MAX_BYTES in app/api/photos.py (10 MB since the 2.0 app).",
    ),
    (
        "nginx_body",
        "gotcha",
        0.6,
        "photos,nginx,deploy",
        "The ingress nginx has client_max_body_size 10m (deploy/nginx.conf): the legacy multipart POST /v1/photos fails with 413 above that before FastAPI sees the request. A photo limit change needs that file changed too.",
    ),
    (
        "exif_strip",
        "convention",
        0.8,
        "photos,privacy,exif",
        "Strip EXIF from every photo before anything is written to the public bucket (GPS tags reveal sites of sensitive species): process_photo in app/jobs.py applies ImageOps.exif_transpose and saves without exif.",
    ),
    (
        "pillow_bomb",
        "gotcha",
        0.6,
        "photos,pillow,worker",
        "Pillow raises DecompressionBombError above about 89 million pixels (Image.MAX_IMAGE_PIXELS). Raise the limit explicitly to what phones produce (250_000_000 covers 200 MP cameras); never set it to None, the check protects the worker from hostile uploads.",
    ),
    (
        "thumb_sizes",
        "fact",
        0.4,
        "photos,thumbnails",
        "Thumbnails are 256 and 1024 px on the long side, WebP quality 80, stored at photos/{id}/thumb_256.webp and thumb_1024.webp.",
    ),
    # --- background jobs
    (
        "arq_jobs",
        "decision",
        0.6,
        "jobs,arq,redis",
        "Background jobs run on arq (Redis) in app/jobs.py, not Celery: a handful of async jobs, and arq's worker is one process with no broker to configure.",
    ),
    (
        "job_idempotent",
        "convention",
        0.7,
        "jobs,arq",
        "Every arq job must be idempotent and take ids, not ORM objects: arq retries after failures and worker restarts (process_photo returns early when the thumbnails exist).",
    ),
    (
        "job_id_dedupe",
        "gotcha",
        0.5,
        "jobs,arq",
        "Enqueue photo jobs with _job_id=f'photo:{photo_id}': the S3 upload callback can fire twice, and without a job id arq runs both.",
    ),
    (
        "worker_deploy",
        "fact",
        0.5,
        "jobs,deploy",
        "The worker is its own container (`arq app.jobs.WorkerSettings`) and is deployed separately from the API; a change to a job's code or signature needs the worker redeployed too.",
    ),
    (
        "redis_policy",
        "gotcha",
        0.4,
        "redis,jobs,ops",
        "Redis is shared by arq and the JWKS cache; it must run with maxmemory-policy volatile-lru, never allkeys-lru (queued jobs vanished once under memory pressure).",
    ),
    # --- exports
    (
        "csv_bom",
        "decision",
        0.7,
        "export,csv,excel",
        "CSV exports are encoded as utf-8-sig (with a BOM): Excel on Windows opens BOM-less UTF-8 as cp1252 and shows Norwegian site and species names garbled (Ã¸ for ø).",
    ),
    (
        "csv_no_sep_line",
        "gotcha",
        0.5,
        "export,csv,excel",
        "Do not add a `sep=,` first line to CSV exports to please Excel: together with the BOM, Excel shows that line as data. The separator stays ','.",
    ),
    (
        "export_job",
        "convention",
        0.6,
        "export,jobs,api",
        "Exports are built by the export_observations arq job and mailed as a download link; POST /v1/exports only validates and enqueues (202).",
    ),
    (
        "geojson_rfc",
        "convention",
        0.7,
        "export,geojson,geo",
        "GeoJSON output follows RFC 7946: a FeatureCollection, coordinates [lon, lat], no 'crs' member, coordinates rounded to 6 decimals (about 10 cm).",
    ),
    (
        "timezone_utc",
        "convention",
        0.6,
        "time,database,export",
        "Timestamps are stored as timestamptz in UTC. observed_at from the phone carries the device's UTC offset; exports show the site's local time using the survey's tz column.",
    ),
    (
        "todo_geopackage",
        "todo",
        0.3,
        "export,gis",
        "TODO: GeoPackage export for the GIS team (they convert the GeoJSON export by hand today).",
    ),
    # --- auth
    (
        "jwt_pyjwt",
        "decision",
        0.7,
        "auth,jwt",
        "Tokens are RS256 JWTs from the identity service; app/auth.py verifies them with PyJWT and PyJWKClient (keys cached for an hour), audience fieldnote-api.",
    ),
    (
        "jwt_leeway",
        "gotcha",
        0.7,
        "auth,jwt,mobile",
        "Phones with a wrong clock get 401 'The token is not yet valid (iat)' right after login: jwt.decode needs leeway=60 to absorb clock skew. It was dropped once in a refactor; keep it.",
    ),
    (
        "jose_rejected",
        "rejected_alternative",
        0.5,
        "auth,jwt,security",
        "Rejected python-jose for JWT handling: unmaintained, and CVE-2024-33663. Use PyJWT[crypto].",
    ),
    # --- offline sync
    (
        "sync_client_ids",
        "decision",
        0.7,
        "sync,mobile,database",
        "Phones create observations offline with client-generated UUIDv7 ids; POST /v1/sync upserts by id (ON CONFLICT DO UPDATE when updated_at is newer), so resending a batch is safe.",
    ),
    (
        "sync_batch",
        "gotcha",
        0.5,
        "sync,mobile,limits",
        "Sync batches above 500 observations hit the load balancer's 30 s timeout; the app splits its batches and the API answers 413 above 500.",
    ),
    (
        "observed_at_future",
        "gotcha",
        0.4,
        "sync,time,validation",
        "Reject observed_at more than 24 h in the future (phones with the year set wrong sent 2036 dates); the check lives in app/api/sync.py.",
    ),
    (
        "todo_sync_rate_limit",
        "todo",
        0.4,
        "sync,api,rate-limit",
        "TODO: per-user rate limit on POST /v1/sync; the 2.3.0 app retried in a tight loop after a failed sync.",
    ),
    # --- tests, tooling, workflow
    (
        "testcontainers",
        "convention",
        0.8,
        "tests,postgis,docker",
        "Tests run against a real PostGIS in Docker through testcontainers (fixture `db` in tests/conftest.py, image postgis/postgis:16-3.4). No SQLite in tests: its spatial SQL differs.",
    ),
    (
        "pytest_docker",
        "gotcha",
        0.5,
        "tests,docker",
        "Locally, pytest needs Docker running: without it the db fixture errors with 'Error while fetching server API version'. `pytest -m 'not db'` runs the pure unit tests.",
    ),
    (
        "factories",
        "convention",
        0.5,
        "tests,factory-boy",
        "Test data comes from the factory_boy factories in tests/factories.py; do not build ORM objects inline in tests.",
    ),
    (
        "ci_checks",
        "convention",
        0.6,
        "ci,ruff,mypy",
        "CI runs `ruff check`, `ruff format --check` and `mypy app` (strict) before the tests; a pull request that fails them is not reviewed.",
    ),
    (
        "commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commit messages: an imperative subject of at most 72 characters with the area as prefix (api:, jobs:, export:, auth:, sync:), a body that says why; one logical change per commit.",
    ),
    (
        "uv",
        "decision",
        0.5,
        "tooling,dependencies",
        "Dependencies are managed with uv (uv.lock is committed): `uv sync` sets up the environment and `uv add` changes pyproject.toml. No pip install in docs or CI.",
    ),
    (
        "httpx_outbound",
        "decision",
        0.5,
        "http,httpx",
        "Outbound HTTP (the species lookup service, webhooks) uses httpx with explicit timeouts (connect 3 s, read 10 s); requests is not a dependency.",
    ),
    # --- everything else (true, but for none of the scripted steps)
    (
        "feature_flags",
        "convention",
        0.5,
        "flags,api",
        "Feature flags live in the flags table and are read through app.flags.enabled(name, user); no environment-variable flags.",
    ),
    (
        "species_names",
        "fact",
        0.4,
        "species,i18n",
        "Species names come from the Artsdatabanken API in Norwegian Bokmål and Latin; the app shows Latin names when the user's locale is not nb.",
    ),
    (
        "species_cache",
        "fact",
        0.3,
        "species,jobs",
        "Species lookups are cached in the species table and refreshed nightly by the refresh_species cron job in app/jobs.py.",
    ),
    (
        "structlog",
        "convention",
        0.5,
        "logging",
        "Log with structlog (log = structlog.get_logger()) as key-value events with a constant event name, never an f-string; middleware binds request_id.",
    ),
    (
        "sentry_pii",
        "gotcha",
        0.6,
        "privacy,sentry,logging",
        "Sentry runs with send_default_pii off, and observation coordinates count as personal data for private landowners: never put them in exception messages or log events.",
    ),
    (
        "deploy_days",
        "preference",
        0.4,
        "deploy,workflow",
        "Production deploys Tuesday to Thursday mornings; none on Fridays or in the first week of the field season (mid-May).",
    ),
    (
        "todo_legacy_photos",
        "todo",
        0.3,
        "photos,api,cleanup",
        "TODO: remove the legacy multipart POST /v1/photos endpoint once app versions below 2.4 are gone (about Q3).",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# fieldnote

Backend of the fieldnote survey app: ecologists record observations (species, position, photos) on their
phones, offline, and sync them to this API.

- `app/`: the FastAPI application (`uv run uvicorn app.main:app --reload`)
- `app/jobs.py`: the arq worker (`uv run arq app.jobs.WorkerSettings`)
- `tests/`: pytest; the PostGIS fixture needs Docker
- `deploy/`: container and ingress configuration
""",
    "pyproject.toml": """[project]
name = "fieldnote"
version = "2.6.0"
requires-python = ">=3.12"
dependencies = [
    "fastapi>=0.115",
    "sqlalchemy>=2.0",
    "geoalchemy2>=0.15",
    "psycopg[binary]>=3.2",
    "pydantic-settings>=2.4",
    "arq>=0.26",
    "pillow>=11.0",
    "pyjwt[crypto]>=2.9",
    "httpx>=0.27",
    "structlog>=24.4",
    "boto3>=1.35",
]

[dependency-groups]
dev = ["pytest>=8", "testcontainers[postgres]>=4.8", "factory-boy>=3.3", "ruff>=0.7", "mypy>=1.13"]

[tool.pytest.ini_options]
markers = ["db: needs the PostGIS container"]
""",
    "app/__init__.py": "",
    "app/api/__init__.py": "",
    "app/main.py": """from fastapi import FastAPI

from app.api import exports, observations, photos, sync
from app.errors import install_problem_handlers

app = FastAPI(title="fieldnote", version="2.6.0")
install_problem_handlers(app)
for module in (observations, photos, sync, exports):
    app.include_router(module.router, prefix="/v1")
""",
    "app/config.py": """from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FIELDNOTE_")

    database_url: str = "postgresql+psycopg://fieldnote@localhost/fieldnote"
    redis_url: str = "redis://localhost:6379/0"
    s3_endpoint: str | None = None
    photo_bucket: str = "fieldnote-photos"
    jwks_url: str = "https://id.fieldnote.example/.well-known/jwks.json"


settings = Settings()
""",
    "app/db.py": """from collections.abc import Iterator

from sqlalchemy import create_engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import settings

engine = create_engine(settings.database_url, pool_size=10, max_overflow=5, pool_pre_ping=True)
SessionLocal = sessionmaker(engine, expire_on_commit=False)


def get_session() -> Iterator[Session]:
    with SessionLocal() as session:
        yield session
""",
    "app/models.py": """from datetime import datetime
from typing import Any
from uuid import UUID

from geoalchemy2 import Geometry
from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Survey(Base):
    __tablename__ = "surveys"
    id: Mapped[UUID] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    tz: Mapped[str] = mapped_column(String(64), default="Europe/Oslo")


class Observation(Base):
    __tablename__ = "observations"
    __table_args__ = (Index("ix_observations_geom", "geom", postgresql_using="gist"),)
    id: Mapped[UUID] = mapped_column(primary_key=True)  # client-generated UUIDv7
    survey_id: Mapped[UUID] = mapped_column(ForeignKey("surveys.id"))
    species: Mapped[str] = mapped_column(String(200))
    count: Mapped[int] = mapped_column(default=1)
    geom: Mapped[Any] = mapped_column(Geometry("POINT", srid=4326))  # GeoAlchemy2 has no type stubs
    observed_at: Mapped[datetime]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Photo(Base):
    __tablename__ = "photos"
    id: Mapped[UUID] = mapped_column(primary_key=True)
    observation_id: Mapped[UUID] = mapped_column(ForeignKey("observations.id"))
    key: Mapped[str] = mapped_column(String(300))
    processed: Mapped[bool] = mapped_column(default=False)
""",
    "app/api/observations.py": """from typing import Annotated

from fastapi import APIRouter, Depends, Query, Security
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.auth import require_scope
from app.db import get_session
from app.models import Observation
from app.pagination import Cursor, page
from app.params import parse_bbox
from app.schemas import ObservationOut, Page

router = APIRouter(tags=["observations"])


@router.get("/observations", response_model=Page[ObservationOut])
def list_observations(
    survey_id: str,
    session: Annotated[Session, Depends(get_session)],
    _user: Annotated[dict, Security(require_scope, scopes=["observations:read"])],
    cursor: Annotated[str | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 100,
):
    stmt = select(Observation).where(Observation.survey_id == survey_id)
    return page(session, stmt, Cursor.decode(cursor), limit)
""",
    "app/api/photos.py": """from typing import Annotated

import boto3
from fastapi import APIRouter, Security

from app.auth import require_scope
from app.config import settings
from app.schemas import UploadUrl

router = APIRouter(tags=["photos"])
s3 = boto3.client("s3", endpoint_url=settings.s3_endpoint)

UPLOAD_MAX_BYTES = 10 * 1024 * 1024  # the presigned POST policy's content-length-range


@router.post("/photos/upload-url", response_model=UploadUrl)
def upload_url(
    observation_id: str,
    _user: Annotated[dict, Security(require_scope, scopes=["observations:write"])],
):
    key = f"photos/{observation_id}/original.jpg"
    post = s3.generate_presigned_post(
        settings.photo_bucket,
        key,
        Conditions=[["content-length-range", 1, UPLOAD_MAX_BYTES]],
        ExpiresIn=900,
    )
    return UploadUrl(url=post["url"], fields=post["fields"], key=key)
""",
    "app/api/sync.py": """from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Security
from sqlalchemy.orm import Session

from app.auth import require_scope
from app.db import get_session
from app.errors import problem
from app.schemas import SyncBatch, SyncResult
from app.sync_store import upsert_observations

router = APIRouter(tags=["sync"])
MAX_BATCH = 500


@router.post("/sync", response_model=SyncResult)
def sync(
    batch: SyncBatch,
    session: Annotated[Session, Depends(get_session)],
    user: Annotated[dict, Security(require_scope, scopes=["observations:write"])],
):
    if len(batch.observations) > MAX_BATCH:
        raise problem(413, "Batch too large", f"at most {MAX_BATCH} observations per sync")
    horizon = datetime.now(UTC) + timedelta(hours=24)
    if any(o.observed_at > horizon for o in batch.observations):
        raise problem(422, "Observation in the future", "observed_at is more than 24 h ahead")
    return upsert_observations(session, batch, user["sub"])
""",
    "app/api/exports.py": """from typing import Annotated

from fastapi import APIRouter, Security

from app.auth import require_scope
from app.jobs import enqueue

router = APIRouter(tags=["exports"])


@router.post("/exports", status_code=202)
async def request_export(
    survey_id: str,
    user: Annotated[dict, Security(require_scope, scopes=["exports:create"])],
):
    await enqueue("export_observations", survey_id, user["email"])
    return {"status": "queued"}
""",
    "app/auth.py": """from typing import Annotated

import jwt
from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer, SecurityScopes

from app.config import settings
from app.errors import problem

bearer = HTTPBearer()
_jwks = jwt.PyJWKClient(settings.jwks_url, cache_keys=True, lifespan=3600)


def current_user(credentials: Annotated[HTTPAuthorizationCredentials, Depends(bearer)]) -> dict:
    token = credentials.credentials
    key = _jwks.get_signing_key_from_jwt(token)
    try:
        return jwt.decode(token, key.key, algorithms=["RS256"], audience="fieldnote-api", leeway=0)
    except jwt.InvalidTokenError as exc:
        raise problem(401, "Invalid token", str(exc)) from exc


def require_scope(security_scopes: SecurityScopes, user: Annotated[dict, Depends(current_user)]) -> dict:
    granted = set(user.get("scope", "").split())
    if not set(security_scopes.scopes) <= granted:
        raise problem(403, "Missing scope", " ".join(security_scopes.scopes))
    return user
""",
    "app/jobs.py": """import io

import structlog
from arq.connections import RedisSettings
from PIL import Image, ImageOps

from app.config import settings
from app.queue import pool
from app.storage import exists, get_bytes, put_bytes

log = structlog.get_logger()
THUMB_SIZES = (256, 1024)


async def process_photo(ctx: dict, photo_id: str, key: str) -> None:
    \"\"\"Strip EXIF and write the WebP thumbnails; safe to run twice (arq retries).\"\"\"
    if all(exists(f"photos/{photo_id}/thumb_{size}.webp") for size in THUMB_SIZES):
        return
    image = ImageOps.exif_transpose(Image.open(io.BytesIO(get_bytes(key))))
    for size in THUMB_SIZES:
        thumb = image.copy()
        thumb.thumbnail((size, size))
        out = io.BytesIO()
        thumb.save(out, "WEBP", quality=80)  # saved without exif
        put_bytes(f"photos/{photo_id}/thumb_{size}.webp", out.getvalue())
    log.info("photo_processed", photo_id=photo_id)


async def export_observations(ctx: dict, survey_id: str, email: str, fmt: str = "csv") -> None:
    from app.export import build_export

    await build_export(survey_id, email, fmt)


async def enqueue(name: str, *args: object, job_id: str | None = None) -> None:
    await (await pool()).enqueue_job(name, *args, _job_id=job_id)


class WorkerSettings:
    functions = [process_photo, export_observations]
    redis_settings = RedisSettings.from_dsn(settings.redis_url)
""",
    "app/export.py": """import csv
import io
from collections.abc import Iterable

from app.models import Observation

COLUMNS = ("id", "species", "count", "longitude", "latitude", "observed_at")


def to_csv(rows: Iterable[Observation]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for obs in rows:
        writer.writerow([obs.id, obs.species, obs.count, obs.lon, obs.lat, obs.observed_at.isoformat()])
    return out.getvalue().encode("utf-8")
""",
    "deploy/nginx.conf": """server {
    listen 8080;
    client_max_body_size 10m;  # the legacy multipart POST /v1/photos comes through here

    location / {
        proxy_pass http://api:8000;
        proxy_read_timeout 30s;
    }
}
""",
    "tests/__init__.py": "",
    "tests/conftest.py": """import pytest
from testcontainers.postgres import PostgresContainer


@pytest.fixture(scope="session")
def postgis():
    with PostgresContainer("postgis/postgis:16-3.4") as container:
        yield container
""",
    "tests/test_observations.py": """import pytest

from tests.factories import ObservationFactory

pytestmark = pytest.mark.db


def test_list_observations_pages_with_a_cursor(client, db):
    ObservationFactory.create_batch(3, survey_id=db.survey.id)
    first = client.get("/v1/observations", params={"survey_id": db.survey.id, "limit": 2}).json()
    assert len(first["items"]) == 2 and first["next_cursor"]
""",
    ".github/workflows/ci.yml": """name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v3
      - run: uv sync
      - run: uv run ruff check && uv run ruff format --check && uv run mypy app
      - run: uv run pytest
""",
}

# ----------------------------------------------------------------------------------------- sessions
SESSIONS: list[dict[str, Any]] = []


def session(name: str) -> None:
    SESSIONS.append({"name": name, "turns": []})


def user(text: str) -> None:
    SESSIONS[-1]["turns"].append({"user": text, "steps": []})


def call(tool: str, args: dict[str, Any], *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    """A step whose reply is one tool call; `uses`: the relevant memories the call relies on (see the docstring)."""
    SESSIONS[-1]["turns"][-1]["steps"].append(
        {"tool_calls": [{"tool": tool, "args": args}], "relevant": list(relevant), "uses": list(uses), "note": note}
    )


def answer(text: str, *relevant: str) -> None:
    """The turn's last step: a final answer."""
    SESSIONS[-1]["turns"][-1]["steps"].append({"answer": text, "relevant": list(relevant), "note": "final answer"})


def read(path: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("read", {"filePath": "{root}/" + path}, *relevant, note=note, uses=uses)


def edit(path: str, old: str, new: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("edit", {"filePath": "{root}/" + path, "oldString": old, "newString": new}, *relevant, note=note, uses=uses)


def bash(command: str, description: str, *relevant: str, note: str = "", uses: tuple[str, ...] = ()) -> None:
    call("bash", {"command": command, "description": description}, *relevant, note=note, uses=uses)


# Session 1: a spatial filter for the map view.
session("bbox-filter")
user(
    "Add a bbox filter to GET /v1/observations so the map view only loads what is on screen: bbox=minLon,minLat,maxLon,maxLat."
)
read(
    "app/api/observations.py",
    "geo_lonlat",
    "gist_index",
    "srid_envelope",
    "query_validation",
    note="look at the endpoint",
)
read("app/models.py", "geo_lonlat", "gist_index", "srid_envelope", note="the geometry column and its index")
edit(
    "app/api/observations.py",
    """    limit: Annotated[int, Query(ge=1, le=200)] = 100,
):
    stmt = select(Observation).where(Observation.survey_id == survey_id)
""",
    """    limit: Annotated[int, Query(ge=1, le=200)] = 100,
    bbox: Annotated[str | None, Query(description="minLon,minLat,maxLon,maxLat")] = None,
):
    stmt = select(Observation).where(Observation.survey_id == survey_id)
    if bbox is not None:
        west, south, east, north = parse_bbox(bbox)  # problem(422) when malformed
        envelope = func.ST_MakeEnvelope(west, south, east, north, 4326)
        stmt = stmt.where(func.ST_Intersects(Observation.geom, envelope))
""",
    "geo_lonlat",
    "srid_envelope",
    "gist_index",
    "query_validation",
    "error_format",
    note="add the filter",
    uses=("geo_lonlat", "srid_envelope", "gist_index", "query_validation"),
)
read("tests/test_observations.py", "testcontainers", "factories", note="the endpoint's tests")
edit(
    "tests/test_observations.py",
    """    assert len(first["items"]) == 2 and first["next_cursor"]
""",
    """    assert len(first["items"]) == 2 and first["next_cursor"]


def test_bbox_keeps_only_observations_inside(client, db):
    inside = ObservationFactory(survey_id=db.survey.id, lon=10.75, lat=59.91)
    ObservationFactory(survey_id=db.survey.id, lon=5.32, lat=60.39)
    params = {"survey_id": db.survey.id, "bbox": "10.5,59.8,11.0,60.0"}
    assert [o["id"] for o in client.get("/v1/observations", params=params).json()["items"]] == [str(inside.id)]


def test_malformed_bbox_is_a_422_problem(client, db):
    resp = client.get("/v1/observations", params={"survey_id": db.survey.id, "bbox": "10.5,59.8"})
    assert resp.status_code == 422 and resp.headers["content-type"] == "application/problem+json"
""",
    "factories",
    "testcontainers",
    "geo_lonlat",
    "error_format",
    note="test the filter",
    uses=("error_format",),
)
bash(
    "grep -rn 'ST_MakeEnvelope\\|ST_Intersects' app/",
    "Find the spatial filters",
    "gist_index",
    "srid_envelope",
    note="check the query",
    uses=("gist_index", "srid_envelope"),
)
answer(
    "Added `bbox=minLon,minLat,maxLon,maxLat` to GET /v1/observations: parsed by parse_bbox (422 problem+json when "
    "malformed), filtered with ST_Intersects against ST_MakeEnvelope(..., 4326) so the GiST index is used, and "
    "two tests (inside/outside, malformed). Run them with Docker up.",
    "geo_lonlat",
    "srid_envelope",
    "gist_index",
    "testcontainers",
    "pytest_docker",
)
user("With a bbox, cap the page at 50 observations; the cursor pagination must keep working.")
read("app/api/observations.py", "pagination_cursor", note="the endpoint as it is now")
edit(
    "app/api/observations.py",
    """    return page(session, stmt, Cursor.decode(cursor), limit)
""",
    """    if bbox is not None:
        limit = min(limit, 50)  # map views: small pages, same cursor
    return page(session, stmt, Cursor.decode(cursor), limit)
""",
    "pagination_cursor",
    note="cap the limit",
)
answer(
    "With a bbox the page size is now at most 50; the cursor is unchanged, so the next page continues where the last one ended.",
    "pagination_cursor",
)

# Session 2: bigger photos.
session("photo-limit")
user("Users with new phones cannot upload photos over 10 MB. Raise the limit to 25 MB.")
call(
    "memory_search",
    {"query": "photo upload size limit"},
    "photo_limit",
    "presigned_upload",
    "nginx_body",
    note="ask the memory first",
)
read(
    "app/api/photos.py",
    "photo_limit",
    "presigned_upload",
    "nginx_body",
    note="the upload endpoint",
    uses=("photo_limit",),
)
edit(
    "app/api/photos.py",
    "UPLOAD_MAX_BYTES = 10 * 1024 * 1024",
    "UPLOAD_MAX_BYTES = 25 * 1024 * 1024",
    "photo_limit",
    "presigned_upload",
    "nginx_body",
    note="raise the policy's limit",
    uses=("photo_limit",),
)
read("deploy/nginx.conf", "nginx_body", "todo_legacy_photos", note="the ingress limit", uses=("nginx_body",))
edit(
    "deploy/nginx.conf",
    "client_max_body_size 10m;",
    "client_max_body_size 25m;",
    "nginx_body",
    note="raise the ingress limit",
    uses=("nginx_body",),
)
answer(
    "The presigned POST policy now allows 25 MB (UPLOAD_MAX_BYTES) and the ingress client_max_body_size is 25m, "
    "so the legacy multipart endpoint accepts the same size.",
    "photo_limit",
    "nginx_body",
    "presigned_upload",
)
user("Thumbnails of those big photos now fail in the worker with DecompressionBombError. Fix it.")
read("app/jobs.py", "pillow_bomb", "exif_strip", "job_idempotent", note="the photo job", uses=("exif_strip",))
edit(
    "app/jobs.py",
    """THUMB_SIZES = (256, 1024)
""",
    """THUMB_SIZES = (256, 1024)
# 200 MP phone cameras: raise Pillow's decompression-bomb limit, never disable the check
Image.MAX_IMAGE_PIXELS = 250_000_000
""",
    "pillow_bomb",
    "exif_strip",
    note="raise the pixel limit",
    uses=("pillow_bomb",),
)
bash(
    "grep -rn MAX_IMAGE_PIXELS app/",
    "Check where the pixel limit is set",
    "pillow_bomb",
    note="check",
    uses=("pillow_bomb",),
)
answer(
    "process_photo now allows up to 250 million pixels (Image.MAX_IMAGE_PIXELS), enough for 200 MP cameras, "
    "without turning the bomb check off. The worker container has to be redeployed for it to apply.",
    "pillow_bomb",
    "worker_deploy",
)
user("Remember that the 25 MB limit was agreed with the mobile team.")
call(
    "memory_store",
    {
        "text": "Photo uploads are limited to 25 MB (UPLOAD_MAX_BYTES in app/api/photos.py and client_max_body_size in deploy/nginx.conf), agreed with the mobile team for 200 MP phone cameras.",
        "category": "decision",
        "tags": ["photos", "limits"],
    },
    "photo_limit",
    note="store the decision",
    uses=("photo_limit",),
)
answer("Saved: the 25 MB photo limit and why.", "photo_limit")

# Session 3: exports.
session("export-encoding")
user("Norwegian users say the CSV export shows Ã¸ instead of ø when they open it in Excel. Fix the export.")
read("app/export.py", "csv_bom", "csv_no_sep_line", note="the CSV writer")
edit(
    "app/export.py",
    """    return out.getvalue().encode("utf-8")
""",
    """    return out.getvalue().encode("utf-8-sig")  # BOM: Excel on Windows reads BOM-less UTF-8 as cp1252
""",
    "csv_bom",
    "csv_no_sep_line",
    note="write a BOM",
    uses=("csv_bom",),
)
bash("grep -n 'encode(' app/export.py", "Check the export encoding", "csv_bom", note="check")
answer(
    "The CSV export is now encoded as utf-8-sig: Excel sees the BOM and reads the file as UTF-8, so ø, æ and å show correctly.",
    "csv_bom",
    "csv_no_sep_line",
)
user("Now add a GeoJSON option to the export endpoint.")
call(
    "memory_search",
    {"query": "GeoJSON export format coordinates"},
    "geojson_rfc",
    "geo_lonlat",
    "export_job",
    note="ask the memory first",
)
read("app/export.py", "geojson_rfc", "geo_lonlat", note="the export module again")
edit(
    "app/export.py",
    """    return out.getvalue().encode("utf-8-sig")  # BOM: Excel on Windows reads BOM-less UTF-8 as cp1252
""",
    """    return out.getvalue().encode("utf-8-sig")  # BOM: Excel on Windows reads BOM-less UTF-8 as cp1252


def to_geojson(rows: Iterable[Observation]) -> dict:
    features = [
        {
            "type": "Feature",
            "id": str(obs.id),
            "geometry": {"type": "Point", "coordinates": [round(obs.lon, 6), round(obs.lat, 6)]},
            "properties": {"species": obs.species, "count": obs.count, "observed_at": obs.observed_at.isoformat()},
        }
        for obs in rows
    ]
    return {"type": "FeatureCollection", "features": features}
""",
    "geojson_rfc",
    "geo_lonlat",
    "timezone_utc",
    note="write GeoJSON",
    uses=("geojson_rfc", "geo_lonlat"),
)
read("app/api/exports.py", "export_job", "query_validation", note="the export endpoint")
edit(
    "app/api/exports.py",
    """    user: Annotated[dict, Security(require_scope, scopes=["exports:create"])],
):
    await enqueue("export_observations", survey_id, user["email"])
""",
    """    user: Annotated[dict, Security(require_scope, scopes=["exports:create"])],
    fmt: Annotated[Literal["csv", "geojson"], Query(alias="format")] = "csv",
):
    await enqueue("export_observations", survey_id, user["email"], fmt)
""",
    "export_job",
    "query_validation",
    "worker_deploy",
    note="the format parameter",
    uses=("query_validation",),
)
answer(
    "POST /v1/exports takes format=csv|geojson; the job writes an RFC 7946 FeatureCollection with [lon, lat] "
    "rounded to 6 decimals. The API and the worker must be deployed together (the job's signature changed).",
    "geojson_rfc",
    "export_job",
    "worker_deploy",
)

# Session 4: an auth regression, then a commit.
session("token-clock-skew")
user("Some Android users get 401 'token not yet valid' right after logging in. Investigate and fix.")
read("app/auth.py", "jwt_leeway", "jwt_pyjwt", note="token verification", uses=("jwt_pyjwt",))
edit(
    "app/auth.py",
    'audience="fieldnote-api", leeway=0)',
    'audience="fieldnote-api", leeway=60)  # phones with a skewed clock',
    "jwt_leeway",
    "jwt_pyjwt",
    note="restore the leeway",
    uses=("jwt_leeway",),
)
bash("grep -rn leeway app/ tests/", "Look for other token checks", "jwt_leeway", note="check", uses=("jwt_leeway",))
answer(
    "The phones' clocks run ahead of the identity service, so iat was in the future: jwt.decode had leeway=0 "
    "since a refactor. It is back to 60 seconds.",
    "jwt_leeway",
    "jwt_pyjwt",
)
user("Commit the fix.")
bash(
    "git add app/auth.py && git commit -q -m 'auth: accept 60 s of clock skew when verifying tokens' && git log --oneline -1",
    "Commit the auth fix",
    "commit_style",
    "ci_checks",
    note="commit",
    uses=("commit_style",),
)
answer("Committed as `auth: accept 60 s of clock skew when verifying tokens`.", "commit_style")


# Session 5: chores that need no memory at all (every step's `relevant` is empty: a HUD or cold-start block here is
# noise). Added with the precision benchmark; written by the developer of the relevance decision.
session("chores")
user("In README.md, say 'on their phones or tablets' instead of 'on their phones'.")
read("README.md", note="the sentence")
edit("README.md", "on their\nphones, offline", "on their\nphones or tablets, offline", note="the wording")
answer("Done: the README now says 'on their phones or tablets'.")
user("What is the package version in pyproject.toml?")
read("pyproject.toml", note="look it up")
answer("2.6.0.")
user("How many lines does app/config.py have?")
bash("wc -l app/config.py", "Count the lines", note="count")
answer("app/config.py has 14 lines.")
user("Is app/__init__.py empty?")
read("app/__init__.py", note="look at it")
answer("Yes, it is empty.")


# ------------------------------------------------------------------------------------------- output
def memories() -> list[dict[str, Any]]:
    out = []
    span = (LAST - FIRST) / (len(MEMS) - 1)
    for i, (key, category, importance, tags, text) in enumerate(MEMS):
        assert category in CATEGORIES, key
        digest = int(hashlib.sha1(key.encode()).hexdigest(), 16)
        at = FIRST + span * i + timedelta(minutes=digest % 600)
        by = AGENTS[digest % len(AGENTS)]
        out.append(
            {
                "id": mem_id(key),
                "text": text,
                "category": category,
                "importance": importance,
                "tags": ["fieldnote", *tags.split(",")],
                "entered_by": by,
                "source": f"session:ses_{hashlib.sha1(('s' + key).encode()).hexdigest()[:6]} turn:{digest % 90 + 1}",
                "created_at": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            }
        )
    return out


def steps() -> dict[str, Any]:
    keys = {key for key, *_ in MEMS}
    files = dict(FILES)
    sessions = []
    for s in SESSIONS:
        turns = []
        for t in s["turns"]:
            read_here: set[str] = set()  # each turn is a new process (`opencode run`, `claude -p --resume`)
            assert t["steps"] and "answer" in t["steps"][-1], f"{s['name']}: a turn ends with an answer"
            assert all("tool_calls" in st for st in t["steps"][:-1]), f"{s['name']}: only the last step answers"
            out_steps = []
            for st in t["steps"]:
                assert set(st["relevant"]) <= keys, set(st["relevant"]) - keys
                for tc in st.get("tool_calls", []):
                    path = str(tc["args"].get("filePath", "")).removeprefix("{root}/")
                    if tc["tool"] == "read":
                        assert path in files, path
                        read_here.add(path)
                    elif tc["tool"] == "edit":
                        assert path in read_here, f"{path} edited before it was read in this turn of {s['name']}"
                        old, new = tc["args"]["oldString"], tc["args"]["newString"]
                        assert files[path].count(old) == 1, f"{path}: oldString found {files[path].count(old)} times"
                        files[path] = files[path].replace(old, new)
                if "tool_calls" in st:
                    assert set(st["uses"]) <= set(st["relevant"]), f"{s['name']}: uses beyond relevant: {st['uses']}"
                    st = {**st, "uses": [mem_id(k) for k in st["uses"]]}
                out_steps.append({**st, "relevant": [mem_id(k) for k in st["relevant"]]})
            turns.append({"user": t["user"], "steps": out_steps})
        sessions.append({"name": s["name"], "turns": turns})
    n_steps = sum(len(t["steps"]) for s in sessions for t in s["turns"])
    assert len(sessions) >= 3 and n_steps >= 20, (len(sessions), n_steps)
    return {
        "project": "fieldnote",
        "about": "Scripted agent sessions for benchmarks/bench_agent_view.py; generated by build.py (edit that).",
        "sessions": sessions,
    }


def render() -> dict[str, str]:
    mems = memories()
    assert len(mems) >= 40 and len({m["id"] for m in mems}) == len(mems)
    return {
        "memories.jsonl": "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in mems),
        "project.json": json.dumps(FILES, indent=1, ensure_ascii=False) + "\n",
        "steps.json": json.dumps(steps(), indent=1, ensure_ascii=False) + "\n",
    }


def main() -> None:
    rendered = render()
    if "--check" in sys.argv:
        stale = [name for name, text in rendered.items() if (HERE / name).read_text(encoding="utf-8") != text]
        sys.exit(f"out of date (run build.py): {', '.join(stale)}" if stale else 0)
    for name, text in rendered.items():
        (HERE / name).write_text(text, encoding="utf-8")
    data = json.loads(rendered["steps.json"])
    n_turns = sum(len(s["turns"]) for s in data["sessions"])
    n_steps = sum(len(t["steps"]) for s in data["sessions"] for t in s["turns"])
    used = {i for s in data["sessions"] for t in s["turns"] for st in t["steps"] for i in st["relevant"]}
    print(
        f"{len(MEMS)} memories ({len(used)} relevant to some step), {len(data['sessions'])} sessions, {n_turns} turns, {n_steps} steps"
    )


if __name__ == "__main__":
    main()
