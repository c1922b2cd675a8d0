# ruff: noqa: E501
"""Build the agent-view judge scenario 4: memories.jsonl, project.json and steps.json.

One made-up project, `velostat` (the analytics pipeline of a city bike-share: Python loaders for the operator's
GBFS feeds and daily trip export, a dbt project on Snowflake, Dagster orchestration, Metabase dashboards), with
50 memories of the kind a team records (decisions, rejected alternatives, conventions, gotchas, facts,
preferences, todos, plus distractors that no step needs), the project's files, and five scripted coding
sessions whose steps are each labelled with the memories that matter for that step; about half of the steps
need no memory at all. Written blind (without reading how codememory chooses) as a final judge: run it once.

    python benchmarks/data/agent_view_judge4/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge4/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name (all start with `sykkel_`); the file ids are `mem_` + the first 8 hex
digits of sha1("agent_view:" + key), so they stay the same when entries are added or reordered. Tool-call
arguments may hold `{root}`, which the benchmark replaces with the project's absolute path. The build replays
every scripted `edit` on the files (each edit's oldString must occur exactly once at that point) and checks
that a file is read in a turn before it is edited there (OpenCode and Claude Code refuse to edit a file
their process has not read, and each turn is a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: sep=';' with decimal=',',
vehicle_type_id 'ebike', --target dev, --profile fjordby-exports, interval '3 days'), reads or edits the file
the memory points to for this task, or does what the memory prescribes where neither the user's request nor
the file being edited would have told it to. A memory the call merely agrees with (a pattern the file already
follows, a warning heeded by not doing something) is relevant, not used. Final answers have no `uses`: use
detection watches what the agent does (tool calls and edits) and the ids it cites. These labels score use
detection (bench_agent_view.py: which shown memories the session went on to use).
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
    # --- dbt project and warehouse
    (
        "sykkel_layers",
        "convention",
        0.6,
        "dbt,modelling",
        "dbt layers: staging models are stg_<source>__<entity>.sql, one per source table, renaming and casting only; intermediate models are int_*, marts are fct_* and dim_*. Marts never select from a source() directly.",
    ),
    (
        "sykkel_folder_config",
        "convention",
        0.4,
        "dbt,config",
        "Materializations are configured per folder in dbt/dbt_project.yml (staging views, intermediate ephemeral, marts tables in the marts schema); a config() block inside a model file is only for incremental models.",
    ),
    (
        "sykkel_utc_columns",
        "convention",
        0.7,
        "time,dbt,staging",
        "Timestamps are stored in UTC with an _utc suffix. The operator's trip export has Europe/Oslo local times without an offset; stg_operator__trips converts them with convert_timezone('Europe/Oslo', 'UTC', ...).",
    ),
    (
        "sykkel_schedule_0400",
        "fact",
        0.5,
        "dagster,schedule,trips",
        "The operator's daily trip export lands in their bucket around 03:00, and the daily_trips schedule in orchestration/schedules.py runs at 04:00 Europe/Oslo.",
    ),
    (
        "sykkel_local_dates",
        "convention",
        0.6,
        "time,dbt,marts",
        "Daily marts group by the local date: date(convert_timezone('UTC', 'Europe/Oslo', started_at_utc)). Grouping by the UTC date moves trips taken between midnight and 02:00 local time to the previous day.",
    ),
    (
        "sykkel_incremental_lookback",
        "gotcha",
        0.8,
        "dbt,incremental,trips",
        "fct_trips is incremental (merge on trip_id) and must reprocess the last 3 days (`- interval '3 days'` on max(ended_at_utc)): the operator re-sends corrected trips up to 72 h late. With a shorter lookback the corrections are dropped without any error and daily counts come out low.",
    ),
    (
        "sykkel_full_refresh",
        "gotcha",
        0.6,
        "dbt,snowflake,cost",
        "`dbt build --full-refresh -s fct_trips` against prod rescans four years of trips: about 40 minutes on TRANSFORM_WH and a visible share of the month's credits. Ask in #data-platform before running it, and never run it from a laptop.",
    ),
    (
        "sykkel_trip_dedupe",
        "gotcha",
        0.6,
        "dbt,trips,staging",
        "The trip export repeats a trip_id when the operator corrects a trip; stg_operator__trips keeps only the latest row (qualify row_number() over (partition by trip_id order by updated_at desc) = 1). Without it the merge into fct_trips fails with 'Duplicate row detected during DML action'.",
    ),
    (
        "sykkel_vehicle_types",
        "fact",
        0.6,
        "trips,ebike",
        "vehicle_type_id is 'classic' or 'ebike' (e-bikes since May 2024). The 2025 cargo-bike pilot added 'cargo', which is not counted as an e-bike even though it has a motor.",
    ),
    (
        "sykkel_docking_failures",
        "decision",
        0.8,
        "trips,metrics",
        "Trips shorter than 60 s that start and end at the same station are docking failures, not trips: int_trips_valid removes them, and every ridership metric (trips, riders, e-bike share) counts valid trips only. Agreed with the operator's operations team in 2025.",
    ),
    (
        "sykkel_dev_target",
        "convention",
        0.7,
        "dbt,dev,snowflake",
        "Locally, always run dbt with `--target dev` (DEV database, your own dbt_<user> schema, DEV_WH): the default target in profiles.yml is prod, because the Dagster container uses it.",
    ),
    (
        "sykkel_dev_sample",
        "convention",
        0.4,
        "dbt,dev,staging",
        "In the dev target, staging models only read the last 30 days (var dev_days) through the {{ limit_dev('<column>') }} macro; every new staging model must call it, or dev builds scan the whole history.",
    ),
    (
        "sykkel_sqlfluff",
        "convention",
        0.6,
        "sql,lint,ci",
        "SQL is linted with sqlfluff (dbt templater, settings in .sqlfluff): lowercase keywords, trailing commas, CTEs first. Run `uv run sqlfluff lint <files>` (or `fix`) on the models you changed; CI fails on any violation.",
    ),
    (
        "sykkel_schema_tests",
        "convention",
        0.6,
        "dbt,tests",
        "Every model's primary key has unique and not_null tests (data_tests: in the models yml), and the station ids of fct_ models a relationships test to dim_stations.",
    ),
    (
        "sykkel_column_docs",
        "convention",
        0.5,
        "dbt,docs,metabase",
        "Every mart column has a description in dbt/models/marts/_marts__models.yml: dbt-metabase copies the descriptions into Metabase, where the analysts read them.",
    ),
    (
        "sykkel_metabase_refs",
        "fact",
        0.6,
        "metabase,dashboards,marts",
        "Metabase saved questions query the marts by column name. Before renaming or dropping a mart column, list what uses it with `uv run python scripts/metabase_refs.py <model>.<column>`.",
    ),
    (
        "sykkel_column_deprecation",
        "convention",
        0.7,
        "marts,dashboards,metabase",
        "Mart columns are an interface: to rename one, add the new column, keep the old one for two weeks with meta: {deprecated: true} in the yml, tell #dashboards, and only then drop it.",
    ),
    (
        "sykkel_slim_ci",
        "decision",
        0.5,
        "ci,dbt",
        "CI builds only the modified models and their children (`dbt build --select state:modified+ --defer --state prod-manifest/`) in a pr_<number> schema; the prod manifest is downloaded from s3://velostat-dbt-artifacts/prod/.",
    ),
    (
        "sykkel_warehouses",
        "fact",
        0.4,
        "snowflake,cost",
        "Snowflake warehouses: LOAD_WH (XS) for ingest, TRANSFORM_WH (M) for prod dbt, DEV_WH (XS) for dev and CI, BI_WH (S) for Metabase; all auto-suspend after 60 s.",
    ),
    (
        "sykkel_user_hash",
        "convention",
        0.8,
        "privacy,dbt,trips",
        "Rider ids never leave RAW: stg_operator__trips replaces user_id with {{ hash_user('user_id') }} (salted SHA-256, salt in the user_salt var). Metabase's role cannot read RAW; never add user_id to a model.",
    ),
    # --- ingest
    (
        "sykkel_csv_semicolon",
        "gotcha",
        0.7,
        "ingest,csv,trips",
        "The operator's trip export is semicolon-separated with decimal commas (distance_km '3,4'): ingest/trips_export.py must read it with sep=';' and decimal=','. With pandas' defaults the whole header becomes one column and the load fails with KeyError: 'distance_km'.",
    ),
    (
        "sykkel_export_profile",
        "gotcha",
        0.5,
        "ingest,aws,s3",
        "The trip exports live in the operator's AWS account (bucket fjordby-bysykkel-exports): read them by hand with `--profile fjordby-exports` (role velostat-reader); our default profile gets AccessDenied.",
    ),
    (
        "sykkel_write_pandas_upper",
        "gotcha",
        0.5,
        "ingest,snowflake",
        "Columns loaded with write_pandas must be uppercase with quote_identifiers=False: quoted lowercase names make every dbt model fail with 'invalid identifier' on unquoted column names.",
    ),
    (
        "sykkel_client_identifier",
        "gotcha",
        0.7,
        "ingest,gbfs,http",
        "The operator's GBFS endpoint needs the header Client-Identifier: velostat-analytics on every request (the shared httpx client in ingest/gbfs_poller.py sets it); anonymous clients get 403 after a few minutes.",
    ),
    (
        "sykkel_gbfs_rate",
        "fact",
        0.4,
        "ingest,gbfs",
        "The operator's terms allow one client at most one GBFS request per 10 seconds across all feeds.",
    ),
    (
        "sykkel_snowpipe",
        "fact",
        0.7,
        "ingest,snowflake,snowpipe,gbfs",
        "Each GBFS feed lands under s3://velostat-raw/gbfs/<feed>/ and is loaded by its own Snowpipe into raw.gbfs.<feed> (payload, _file, _loaded_at). A new feed needs its table and pipe in snowflake/pipes.sql, applied by hand with `snow sql -f snowflake/pipes.sql --role LOADER`; neither CI nor the deploy applies it.",
    ),
    (
        "sykkel_source_freshness",
        "convention",
        0.5,
        "dbt,sources,alerts",
        "Every source table has a freshness block (loaded_at_field _loaded_at): warn after 3 missed loads, error after 5 (station_status, loaded every minute: 3 and 5 minutes). Freshness errors page the data on-call.",
    ),
    (
        "sykkel_http_retries",
        "convention",
        0.5,
        "ingest,http",
        "Ingest HTTP calls use httpx with a 10 s timeout and tenacity retries (3 attempts, exponential backoff); requests is not a dependency.",
    ),
    (
        "sykkel_respx",
        "convention",
        0.4,
        "tests,ingest",
        "Ingest tests never touch the network: mock HTTP with respx and S3 with moto.",
    ),
    (
        "sykkel_secrets",
        "convention",
        0.5,
        "secrets,security",
        "Secrets (the Snowflake key, the Frost client id) come from AWS Secrets Manager in the containers and from .env.local (gitignored) on laptops. Never commit keys or put them in dbt vars.",
    ),
    (
        "sykkel_keypair",
        "decision",
        0.5,
        "snowflake,auth",
        "Service users authenticate to Snowflake with key pairs (SNOWFLAKE_PRIVATE_KEY_PATH); password logins for service users are blocked by the account's policy since 2025.",
    ),
    (
        "sykkel_weather",
        "fact",
        0.3,
        "ingest,weather",
        "Weather is hourly from the MET Norway Frost API, station SN18700 (Blindern), loaded by ingest/weather.py into raw.met.observations.",
    ),
    (
        "sykkel_station_ids",
        "gotcha",
        0.5,
        "dbt,stations,snowflake",
        "Station ids are strings: GBFS has '2350' and, since 2026, ids with letters like 'B12', while the trip export has integers. Cast both to varchar in staging; comparing a number with a varchar fails with \"Numeric value 'B12' is not recognized\".",
    ),
    # --- orchestration
    (
        "sykkel_dagster_assets",
        "decision",
        0.5,
        "dagster,dbt",
        "Orchestration is Dagster: the loaders are assets and the dbt models are loaded as assets from the manifest with @dbt_assets (dagster-dbt), so lineage runs from the operator's export to the marts.",
    ),
    (
        "sykkel_airflow_rejected",
        "rejected_alternative",
        0.4,
        "dagster,airflow",
        "Rejected Airflow (MWAA): one task per dbt layer lost model-level lineage and retries, and MWAA's smallest environment cost more than our whole Dagster deployment.",
    ),
    (
        "sykkel_partitions",
        "convention",
        0.6,
        "dagster,backfill,trips",
        "The operator_trips asset is daily-partitioned (Europe/Oslo, from 2022-04-01). Reload a day by materializing its partition (Dagster UI, or `uv run dagster asset materialize --select operator_trips --partition <YYYY-MM-DD> -m orchestration.definitions`), never by editing dates in code.",
    ),
    (
        "sykkel_dagster_pin",
        "fact",
        0.4,
        "dagster,dependencies,release",
        "dagster and dagster-dbt are released in lockstep: pin the matching release lines (dagster 1.9.x with dagster-dbt 0.25.x) and bump them together, or the code location fails to load with an ImportError.",
    ),
    (
        "sykkel_dagster_deploy",
        "fact",
        0.5,
        "deploy,dagster",
        "Merging to main deploys: the deploy workflow builds the velostat-dagster image and the Dagster code location reloads it within a few minutes.",
    ),
    (
        "sykkel_deploy_freeze",
        "preference",
        0.4,
        "deploy,workflow",
        "No deploys during the operator's season opening (the first week of April) or on Fridays after 14:00.",
    ),
    # --- workflow
    (
        "sykkel_uv",
        "decision",
        0.5,
        "tooling,dependencies",
        "Dependencies are managed with uv: `uv add` and `uv remove` change pyproject.toml and uv.lock (committed). No pip install and no requirements.txt.",
    ),
    (
        "sykkel_commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commits follow Conventional Commits with the area as scope (feat(dbt):, fix(ingest):, chore(ci): ...) and an imperative subject under 72 characters.",
    ),
    (
        "sykkel_precommit",
        "convention",
        0.5,
        "git,lint",
        "pre-commit runs ruff, ruff-format, sqlfluff and `dbt parse` on every commit; never bypass it with --no-verify (CI runs the same checks anyway).",
    ),
    (
        "sykkel_seeds",
        "convention",
        0.3,
        "dbt,seeds,tests",
        "dbt seeds are only for small static mappings (seeds/station_districts.csv); test data for dbt unit tests goes inline in the yml, never into seeds.",
    ),
    # --- true, but needed by none of the scripted steps
    (
        "sykkel_availability_def",
        "fact",
        0.5,
        "metrics,stations",
        "Station availability is the share of minutes in service hours (05:00-24:00 local) in which a station had at least one bike and one free dock; fct_station_availability_hourly computes it from station_status.",
    ),
    (
        "sykkel_winter",
        "fact",
        0.4,
        "metrics,season",
        "The system closes from December to March except for 30 winter stations; year-over-year comparisons use seasons (April to November), not calendar years.",
    ),
    (
        "sykkel_todo_pr_schemas",
        "todo",
        0.3,
        "ci,snowflake,cleanup",
        "TODO: drop pr_* schemas older than 14 days from the DEV database; CI never cleans them up.",
    ),
    (
        "sykkel_schedule_0530",
        "fact",
        0.6,
        "dagster,schedule,trips",
        "Since September 2026 the operator's trip export lands around 05:00; the daily_trips schedule in orchestration/schedules.py was moved to 05:30 Europe/Oslo (cron '30 5 * * *').",
    ),
    (
        "sykkel_todo_gbfs_v3",
        "todo",
        0.3,
        "ingest,gbfs",
        "TODO: move the poller to GBFS 3.0 when the operator switches (announced for 2027); v3 renames num_bikes_available to num_vehicles_available.",
    ),
    (
        "sykkel_on_call",
        "preference",
        0.3,
        "alerts,workflow",
        "Data on-call rotates weekly on Mondays; alerts go to #velostat-alerts and the on-call acknowledges freshness pages within 30 minutes on weekdays.",
    ),
    (
        "sykkel_resource_monitor",
        "fact",
        0.4,
        "snowflake,cost,config",
        "A resource monitor caps TRANSFORM_WH at 300 credits a month and suspends it at 100 %; raising the cap is an account config change made by the platform team.",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# velostat

Analytics pipeline for Fjordby Bysykkel, the city bike-share: trips, station availability and weather, from
the operator's feeds into Snowflake, modelled with dbt and orchestrated by Dagster. Dashboards are in Metabase.

- `ingest/`: Python loaders (the GBFS poller, the operator's daily trip export, weather)
- `dbt/`: the dbt project (staging, intermediate, marts)
- `orchestration/`: Dagster definitions and schedules
- `snowflake/`: DDL for the raw tables and Snowpipes, applied seperately

Set up with `uv sync`; run the unit tests with `uv run pytest ingest/tests`.
""",
    "CHANGELOG.md": """# Changelog

## Unreleased

- fct_daily_ridership: riders counts distinct hashed rider keys.

## 0.14.0

- Daily trips schedule moved to 05:30.
- Station ids are varchar everywhere.
""",
    ".gitignore": """.venv/
__pycache__/
.env.local
dbt/target/
dbt/logs/
dbt/dbt_packages/
""",
    "pyproject.toml": """[project]
name = "velostat"
version = "0.14.0"
requires-python = ">=3.12"
dependencies = [
    "dbt-core>=1.8,<1.9",
    "dbt-snowflake>=1.8,<1.9",
    "dagster==1.9.*",
    "dagster-dbt==0.25.*",
    "snowflake-connector-python[pandas]>=3.12",
    "pandas>=2.2",
    "httpx>=0.27",
    "tenacity>=9.0",
    "boto3>=1.35",
]

[dependency-groups]
dev = ["pytest>=8", "respx>=0.21", "moto>=5.0", "ruff>=0.7", "sqlfluff-templater-dbt>=3.2", "pre-commit>=4"]
""",
    ".sqlfluff": """[sqlfluff]
templater = dbt
dialect = snowflake
max_line_length = 120

[sqlfluff:templater:dbt]
project_dir = dbt

[sqlfluff:rules:capitalisation.keywords]
capitalisation_policy = lower

[sqlfluff:layout:type:comma]
line_position = trailing
""",
    "dbt/dbt_project.yml": """name: velostat
version: "1.0.0"
config-version: 2
profile: velostat

model-paths: ["models"]
macro-paths: ["macros"]
seed-paths: ["seeds"]

vars:
  dev_days: 30

models:
  velostat:
    staging:
      +materialized: view
    intermediate:
      +materialized: ephemeral
    marts:
      +materialized: table
      +schema: marts
""",
    "dbt/macros/limit_dev.sql": """{% macro limit_dev(column) %}
    {% if target.name == 'dev' %}
    where {{ column }} >= dateadd('day', -{{ var('dev_days') }}, current_timestamp())
    {% endif %}
{% endmacro %}
""",
    "dbt/macros/hash_user.sql": """{% macro hash_user(column) %}
    sha2(concat('{{ var("user_salt") }}', {{ column }}), 256)
{% endmacro %}
""",
    "dbt/models/staging/operator/_operator__sources.yml": """version: 2

sources:
  - name: operator
    database: raw
    schema: operator
    loaded_at_field: _loaded_at
    tables:
      - name: trips
        freshness:
          warn_after: {count: 30, period: hour}
          error_after: {count: 48, period: hour}
""",
    "dbt/models/staging/operator/stg_operator__trips.sql": """with source as (

    select * from {{ source('operator', 'trips') }}
    {{ limit_dev('updated_at') }}

),

renamed as (

    select
        trip_id,
        {{ hash_user('user_id') }} as user_key,
        cast(start_station_id as varchar) as start_station_id,
        cast(end_station_id as varchar) as end_station_id,
        vehicle_type_id,
        convert_timezone('Europe/Oslo', 'UTC', started_at) as started_at_utc,
        convert_timezone('Europe/Oslo', 'UTC', ended_at) as ended_at_utc,
        distance_km,
        updated_at
    from source
    qualify row_number() over (partition by trip_id order by updated_at desc) = 1

)

select * from renamed
""",
    "dbt/models/staging/gbfs/_gbfs__sources.yml": """version: 2

sources:
  - name: gbfs
    database: raw
    schema: gbfs
    loaded_at_field: _loaded_at
    tables:
      - name: station_status
        freshness:
          warn_after: {count: 3, period: minute}
          error_after: {count: 5, period: minute}
""",
    "dbt/models/staging/gbfs/stg_gbfs__station_status.sql": """with source as (

    select * from {{ source('gbfs', 'station_status') }}
    {{ limit_dev('_loaded_at') }}

),

stations as (

    select
        s.value:station_id::varchar as station_id,
        s.value:num_bikes_available::int as bikes_available,
        s.value:num_docks_available::int as docks_available,
        to_timestamp_ntz(s.value:last_reported::int) as reported_at_utc
    from source,
        lateral flatten(input => source.payload:data:stations) as s

)

select * from stations
""",
    "dbt/models/intermediate/int_trips_valid.sql": """-- Trips without docking failures (under 60 s, same station): every ridership metric counts these.
select
    trip_id,
    user_key,
    start_station_id,
    end_station_id,
    vehicle_type_id,
    started_at_utc,
    ended_at_utc,
    datediff('second', started_at_utc, ended_at_utc) as duration_s,
    distance_km
from {{ ref('stg_operator__trips') }}
where not (
    start_station_id = end_station_id
    and datediff('second', started_at_utc, ended_at_utc) < 60
)
""",
    "dbt/models/marts/fct_trips.sql": """{{
    config(
        materialized='incremental',
        unique_key='trip_id',
        incremental_strategy='merge',
    )
}}

select
    trip_id,
    user_key,
    start_station_id,
    end_station_id,
    vehicle_type_id,
    started_at_utc,
    ended_at_utc,
    duration_s,
    distance_km
from {{ ref('int_trips_valid') }}
{% if is_incremental() %}
where ended_at_utc > (select max(ended_at_utc) from {{ this }}) - interval '1 day'
{% endif %}
""",
    "dbt/models/marts/fct_daily_ridership.sql": """select
    date(convert_timezone('UTC', 'Europe/Oslo', started_at_utc)) as trip_date,
    count(*) as valid_trips,
    count(distinct user_key) as riders,
    median(duration_s) as median_duration_s
from {{ ref('fct_trips') }}
group by 1
""",
    "dbt/models/marts/_marts__models.yml": """version: 2

models:
  - name: fct_trips
    description: One row per valid trip (docking failures excluded), times in UTC.
    columns:
      - name: trip_id
        description: The operator's trip id.
        data_tests:
          - unique
          - not_null
      - name: start_station_id
        description: GBFS station id of the start station.
        data_tests:
          - relationships:
              to: ref('dim_stations')
              field: station_id

  - name: fct_daily_ridership
    description: Valid trips per local (Europe/Oslo) day.
    columns:
      - name: trip_date
        description: Local date of the trip's start.
        data_tests:
          - unique
          - not_null
      - name: valid_trips
        description: Trips, docking failures excluded.
      - name: riders
        description: Distinct riders (hashed rider keys).
      - name: median_duration_s
        description: Median trip duration in seconds.
""",
    "ingest/__init__.py": "",
    "ingest/settings.py": """import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import snowflake.connector


@dataclass(frozen=True)
class Settings:
    raw_bucket: str = os.environ.get("VELOSTAT_RAW_BUCKET", "velostat-raw")
    snowflake_account: str = os.environ.get("SNOWFLAKE_ACCOUNT", "fjordby-analytics")
    snowflake_user: str = os.environ.get("SNOWFLAKE_USER", "SVC_VELOSTAT_INGEST")
    private_key_path: str = os.environ.get("SNOWFLAKE_PRIVATE_KEY_PATH", "/secrets/snowflake_key.p8")


settings = Settings()


@contextmanager
def snowflake_connection() -> Iterator[snowflake.connector.SnowflakeConnection]:
    conn = snowflake.connector.connect(
        account=settings.snowflake_account,
        user=settings.snowflake_user,
        private_key_file=settings.private_key_path,
        role="LOADER",
        warehouse="LOAD_WH",
    )
    try:
        yield conn
    finally:
        conn.close()
""",
    "ingest/gbfs_poller.py": """\"\"\"Poll the operator's GBFS feeds and land each response in S3, where Snowpipe picks it up.\"\"\"

import json
import time
from datetime import UTC, datetime

import boto3
import httpx
from tenacity import retry, stop_after_attempt, wait_exponential

from ingest.settings import settings

GBFS_ROOT = "https://gbfs.fjordbysykkel.example/gbfs/en"
FEEDS = {"station_status": 60}  # feed -> poll interval in seconds

client = httpx.Client(timeout=10, headers={"Client-Identifier": "velostat-analytics"})
s3 = boto3.client("s3")


@retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=1, max=30))
def fetch(feed: str) -> dict:
    resp = client.get(f"{GBFS_ROOT}/{feed}.json")
    resp.raise_for_status()
    return resp.json()


def land(feed: str, payload: dict) -> None:
    now = datetime.now(UTC)
    key = f"gbfs/{feed}/{now:%Y/%m/%d/%H}/{now:%Y%m%dT%H%M%S}.json"
    s3.put_object(Bucket=settings.raw_bucket, Key=key, Body=json.dumps(payload).encode())


def main() -> None:
    last: dict[str, float] = {}
    while True:
        for feed, interval in FEEDS.items():
            if feed not in last or time.monotonic() - last[feed] >= interval:
                land(feed, fetch(feed))
                last[feed] = time.monotonic()
        time.sleep(1)
""",
    "ingest/trips_export.py": """\"\"\"Load the operator's daily trip export (a CSV in their bucket) into raw.operator.trips.\"\"\"

import io
from datetime import date

import boto3
import pandas as pd
from snowflake.connector.pandas_tools import write_pandas

from ingest.settings import snowflake_connection

EXPORT_BUCKET = "fjordby-bysykkel-exports"


def export_key(day: date) -> str:
    return f"velostat/trips_{day:%Y-%m-%d}.csv"


def parse(body: bytes) -> pd.DataFrame:
    df = pd.read_csv(io.BytesIO(body), dtype={"trip_id": "string", "user_id": "string"})
    df["distance_km"] = df["distance_km"].astype(float)
    return df


def load(day: date) -> int:
    body = boto3.client("s3").get_object(Bucket=EXPORT_BUCKET, Key=export_key(day))["Body"].read()
    df = parse(body)
    df.columns = [c.upper() for c in df.columns]
    with snowflake_connection() as conn:
        write_pandas(conn, df, "TRIPS", database="RAW", schema="OPERATOR", quote_identifiers=False)
    return len(df)
""",
    "ingest/tests/__init__.py": "",
    "ingest/tests/test_trips_export.py": """from datetime import date

from ingest.trips_export import export_key, parse


def test_export_key_uses_the_day():
    assert export_key(date(2026, 5, 1)) == "velostat/trips_2026-05-01.csv"


def test_parse_keeps_trip_ids_as_strings():
    body = b"trip_id,user_id,distance_km\\n0012,u1,3.4\\n"
    assert parse(body)["trip_id"].tolist() == ["0012"]
""",
    "orchestration/__init__.py": "",
    "orchestration/definitions.py": """from dagster import Definitions

from orchestration.assets import dbt_models, operator_trips, weather
from orchestration.schedules import daily_trips_schedule

defs = Definitions(
    assets=[operator_trips, weather, dbt_models],
    schedules=[daily_trips_schedule],
)
""",
    "orchestration/schedules.py": """from dagster import ScheduleDefinition, define_asset_job

daily_trips_job = define_asset_job("daily_trips", selection="operator_trips*")

daily_trips_schedule = ScheduleDefinition(
    job=daily_trips_job,
    cron_schedule="30 5 * * *",
    execution_timezone="Europe/Oslo",
)
""",
    "snowflake/pipes.sql": """-- Raw landing tables and Snowpipes for the GBFS feeds (stage raw.gbfs.landing on s3://velostat-raw).

create table if not exists raw.gbfs.station_status (
    payload variant,
    _file varchar,
    _loaded_at timestamp_ltz
);

create pipe if not exists raw.gbfs.station_status_pipe auto_ingest = true as
    copy into raw.gbfs.station_status (payload, _file, _loaded_at)
    from (select $1, metadata$filename, current_timestamp() from @raw.gbfs.landing/gbfs/station_status/)
    file_format = (type = json);
""",
    "scripts/metabase_refs.py": """\"\"\"List the Metabase saved questions that use a mart column: metabase_refs.py <model>.<column>.\"\"\"

import os
import sys

import httpx


def main() -> None:
    model, column = sys.argv[1].split(".")
    api = httpx.Client(base_url="https://metabase.fjordby.example/api", headers={"x-api-key": os.environ["MB_API_KEY"]})
    for card in api.get("/card").json():
        query = card.get("dataset_query", {}).get("native", {}).get("query", "")
        if model in query and column in query:
            print(card["id"], card["name"])


if __name__ == "__main__":
    main()
""",
    ".github/workflows/ci.yml": """name: ci
on: [pull_request]
jobs:
  ci:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v3
      - run: uv sync
      - run: uv run ruff check && uv run ruff format --check
      - run: uv run pytest ingest/tests
      - run: uv run sqlfluff lint dbt/models
      - run: uv run dbt build --select state:modified+ --defer --state prod-manifest/ --target ci
        working-directory: dbt
""",
    ".github/workflows/deploy.yml": """name: deploy
on:
  push:
    branches: [main]
jobs:
  image:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v3
      - uses: docker/build-push-action@v6
        with:
          push: true
          tags: ghcr.io/fjordby/velostat-dagster:${{ github.sha }}
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


# Session 1: a new metric in a mart, then a column rename that dashboards depend on, then a commit.
session("ebike-share")
user(
    "Add e-bike trips and the e-bike share to the daily ridership mart (fct_daily_ridership); the dashboard team wants to chart the share per day."
)
bash("ls dbt/models/marts", "List the marts", note="orientation")
read(
    "dbt/models/marts/fct_daily_ridership.sql",
    "sykkel_vehicle_types",
    "sykkel_docking_failures",
    note="the mart to extend",
)
edit(
    "dbt/models/marts/fct_daily_ridership.sql",
    """    median(duration_s) as median_duration_s
""",
    """    median(duration_s) as median_duration_s,
    count_if(vehicle_type_id = 'ebike') as ebike_trips,
    div0(count_if(vehicle_type_id = 'ebike'), count(*)) as ebike_share
""",
    "sykkel_vehicle_types",
    "sykkel_docking_failures",
    note="the two columns",
    uses=("sykkel_vehicle_types",),
)
read(
    "dbt/models/marts/_marts__models.yml",
    "sykkel_column_docs",
    note="the marts yml, to document the columns",
    uses=("sykkel_column_docs",),
)
edit(
    "dbt/models/marts/_marts__models.yml",
    """      - name: median_duration_s
        description: Median trip duration in seconds.
""",
    """      - name: median_duration_s
        description: Median trip duration in seconds.
      - name: ebike_trips
        description: Valid trips on e-bikes (vehicle_type_id 'ebike'; cargo bikes are not e-bikes).
      - name: ebike_share
        description: ebike_trips divided by the day's valid trips (0 on a day without trips).
""",
    "sykkel_column_docs",
    "sykkel_vehicle_types",
    note="document the columns",
    uses=("sykkel_vehicle_types",),
)
bash(
    "cd dbt && uv run dbt build --select fct_daily_ridership --target dev",
    "Build and test the mart in dev",
    "sykkel_dev_target",
    note="build in dev",
    uses=("sykkel_dev_target",),
)
answer(
    "fct_daily_ridership now has ebike_trips (vehicle_type_id = 'ebike'; cargo bikes are not counted) and ebike_share, "
    "the share of the day's valid trips (docking failures are already excluded upstream). Both columns are documented "
    "in _marts__models.yml, and the model builds and tests cleanly in dev.",
    "sykkel_vehicle_types",
    "sykkel_docking_failures",
)
user("The dashboard team would also like valid_trips renamed to trips in that mart. Can you do that?")
bash(
    "uv run python scripts/metabase_refs.py fct_daily_ridership.valid_trips",
    "List the Metabase questions that use the column",
    "sykkel_metabase_refs",
    "sykkel_column_deprecation",
    note="who uses the column",
    uses=("sykkel_metabase_refs",),
)
read("dbt/models/marts/fct_daily_ridership.sql", "sykkel_column_deprecation", note="the mart again")
edit(
    "dbt/models/marts/fct_daily_ridership.sql",
    """    count(*) as valid_trips,
""",
    """    count(*) as trips,
    count(*) as valid_trips,  -- deprecated: use trips; drop after 2026-12-11
""",
    "sykkel_column_deprecation",
    note="add trips, keep valid_trips for now",
    uses=("sykkel_column_deprecation",),
)
read(
    "dbt/models/marts/_marts__models.yml",
    "sykkel_column_deprecation",
    "sykkel_column_docs",
    note="the yml, to mark the old column",
    uses=("sykkel_column_deprecation",),
)
edit(
    "dbt/models/marts/_marts__models.yml",
    """      - name: valid_trips
        description: Trips, docking failures excluded.
""",
    """      - name: trips
        description: Trips, docking failures excluded.
      - name: valid_trips
        description: "Deprecated: use trips (same value). Dropped after 2026-12-11."
        meta:
          deprecated: true
""",
    "sykkel_column_deprecation",
    "sykkel_column_docs",
    note="mark the old column deprecated",
    uses=("sykkel_column_deprecation",),
)
answer(
    "Four saved questions in Metabase still query valid_trips, so I did not rename it in place: the mart now has "
    "trips, and valid_trips stays as a deprecated copy (meta: deprecated) until 2026-12-11. Please tell #dashboards "
    "to move their questions to trips; after that the old column can be dropped.",
    "sykkel_column_deprecation",
    "sykkel_metabase_refs",
)
user("Looks good. Commit it.")
bash("git status --short", "See what changed", note="before committing")
bash(
    "git add dbt/models/marts && git commit -q -m 'feat(dbt): add e-bike share and trips to fct_daily_ridership' && git log --oneline -1",
    "Commit the mart change",
    "sykkel_commit_style",
    "sykkel_precommit",
    note="commit",
    uses=("sykkel_commit_style",),
)
answer("Committed as `feat(dbt): add e-bike share and trips to fct_daily_ridership`.", "sykkel_commit_style")

# Session 2: a data-quality report that comes from an incremental model's lookback.
session("late-corrections")
user(
    "Operations say fct_trips has about 2 % fewer trips for Monday 23 November than the operator's own report. Find out why and fix it."
)
bash("git status --short", "Check the working tree", note="orientation")
call(
    "memory_search",
    {"query": "fct_trips missing trips incremental"},
    "sykkel_incremental_lookback",
    "sykkel_docking_failures",
    "sykkel_trip_dedupe",
    note="ask the memory first",
)
read(
    "dbt/models/marts/fct_trips.sql",
    "sykkel_incremental_lookback",
    "sykkel_docking_failures",
    note="the incremental model",
    uses=("sykkel_incremental_lookback",),
)
edit(
    "dbt/models/marts/fct_trips.sql",
    "- interval '1 day'",
    "- interval '3 days'  -- the operator re-sends corrected trips up to 72 h late",
    "sykkel_incremental_lookback",
    note="restore the lookback",
    uses=("sykkel_incremental_lookback",),
)
bash(
    "cd dbt && uv run dbt build --select fct_trips+ --target dev",
    "Build fct_trips and its children in dev",
    "sykkel_dev_target",
    "sykkel_full_refresh",
    note="build in dev",
    uses=("sykkel_dev_target",),
)
bash(
    "uv run sqlfluff lint dbt/models/marts/fct_trips.sql",
    "Lint the model",
    "sykkel_sqlfluff",
    note="lint",
    uses=("sykkel_sqlfluff",),
)
answer(
    "fct_trips only reprocessed the last day, so corrections the operator re-sent two or three days later never "
    "reached it. The lookback is back to 3 days. 23 November is already outside that window, so its corrections "
    "need a one-off full refresh of fct_trips in prod (about 40 minutes on TRANSFORM_WH): ask in #data-platform "
    "before running it. A small gap will remain by design: the operator's report counts docking failures (under "
    "60 s, same station), which we exclude.",
    "sykkel_incremental_lookback",
    "sykkel_full_refresh",
    "sykkel_docking_failures",
)
user("Could a corrected trip now be counted twice, since corrections come back as new rows?")
read(
    "dbt/models/staging/operator/stg_operator__trips.sql",
    "sykkel_trip_dedupe",
    note="where corrections are deduplicated",
    uses=("sykkel_trip_dedupe",),
)
answer(
    "No. stg_operator__trips keeps only the latest row per trip_id (qualify row_number() ... order by updated_at "
    "desc = 1), and fct_trips merges on trip_id, so a correction replaces the earlier row.",
    "sykkel_trip_dedupe",
)

# Session 3: the trip loader breaks on the operator's CSV dialect; a reload; routine test runs; a commit.
session("trip-export-parser")
user(
    "The daily trips load failed this morning with KeyError: 'distance_km' in ingest/trips_export.py. Fix it, and make sure the tests would have caught it."
)
bash("ls ingest ingest/tests", "List the loaders and their tests", note="orientation")
read(
    "ingest/trips_export.py",
    "sykkel_csv_semicolon",
    "sykkel_write_pandas_upper",
    note="the loader",
    uses=("sykkel_csv_semicolon",),
)
bash(
    "aws s3 cp s3://fjordby-bysykkel-exports/velostat/trips_2026-11-26.csv - --profile fjordby-exports | head -3",
    "Look at the head of yesterday's export",
    "sykkel_export_profile",
    "sykkel_csv_semicolon",
    note="look at the file",
    uses=("sykkel_export_profile",),
)
edit(
    "ingest/trips_export.py",
    """    df = pd.read_csv(io.BytesIO(body), dtype={"trip_id": "string", "user_id": "string"})
    df["distance_km"] = df["distance_km"].astype(float)
    return df
""",
    """    # The operator's export is semicolon-separated with decimal commas (distance_km "3,4").
    return pd.read_csv(io.BytesIO(body), sep=";", decimal=",", dtype={"trip_id": "string", "user_id": "string"})
""",
    "sykkel_csv_semicolon",
    note="parse the operator's dialect",
    uses=("sykkel_csv_semicolon",),
)
read("ingest/tests/test_trips_export.py", "sykkel_csv_semicolon", note="the loader's tests")
edit(
    "ingest/tests/test_trips_export.py",
    """def test_parse_keeps_trip_ids_as_strings():
    body = b"trip_id,user_id,distance_km\\n0012,u1,3.4\\n"
    assert parse(body)["trip_id"].tolist() == ["0012"]
""",
    """def test_parse_reads_the_operators_csv_dialect():
    body = b"trip_id;user_id;distance_km\\n0012;u1;3,4\\n"
    df = parse(body)
    assert df["trip_id"].tolist() == ["0012"]
    assert df["distance_km"].tolist() == [3.4]
""",
    "sykkel_csv_semicolon",
    note="test with a sample in the real format",
    uses=("sykkel_csv_semicolon",),
)
bash("uv run pytest ingest/tests -q", "Run the ingest tests", note="run the tests")
bash("uv run ruff check ingest && uv run ruff format ingest", "Lint and format", note="format")
bash("git diff", "Review the change", note="review")
answer(
    "The operator's export is semicolon-separated with decimal commas, and parse() read it with pandas' defaults, so "
    "the header became a single column. It now reads with sep=';' and decimal=','. The test used a comma-separated "
    "sample, which is why it passed; it now uses the real format and checks that distance_km '3,4' becomes 3.4.",
    "sykkel_csv_semicolon",
)
user("Now reload yesterday's trips.")
bash(
    "uv run dagster asset materialize --select operator_trips --partition 2026-11-26 -m orchestration.definitions",
    "Materialize yesterday's partition",
    "sykkel_partitions",
    note="reload the day",
    uses=("sykkel_partitions",),
)
answer(
    "The operator_trips partition for 2026-11-26 is loaded. The dbt models pick it up at the next daily run; it is "
    "well inside fct_trips' 3-day lookback.",
    "sykkel_partitions",
    "sykkel_incremental_lookback",
)
user("Run the whole ingest test suite once more and tell me which tests are slowest.")
bash("uv run pytest ingest/tests -q --durations=3", "Run the tests with timings", note="run the tests")
answer("All ingest tests pass; the three slowest each take well under a second, so nothing stands out.")
user("Commit the fix.")
bash(
    "git add ingest && git commit -q -m 'fix(ingest): read the trip export as semicolon CSV with decimal commas' && git log --oneline -1",
    "Commit the loader fix",
    "sykkel_commit_style",
    "sykkel_precommit",
    note="commit",
    uses=("sykkel_commit_style",),
)
answer("Committed as `fix(ingest): read the trip export as semicolon CSV with decimal commas`.", "sykkel_commit_style")

# Session 4: a new GBFS feed end to end (multi-part request), then a question the old/new memory pair answers.
session("station-information")
user(
    "Add the GBFS station_information feed to the poller (hourly is enough), make sure it ends up in Snowflake, and declare it as a dbt source with a freshness check."
)
bash("ls ingest snowflake dbt/models/staging/gbfs", "See where the feed code lives", note="orientation")
read(
    "ingest/gbfs_poller.py",
    "sykkel_client_identifier",
    "sykkel_gbfs_rate",
    "sykkel_snowpipe",
    note="the poller",
    uses=("sykkel_client_identifier",),
)
edit(
    "ingest/gbfs_poller.py",
    'FEEDS = {"station_status": 60}  # feed -> poll interval in seconds',
    'FEEDS = {"station_status": 60, "station_information": 3600}  # feed -> poll interval in seconds',
    "sykkel_client_identifier",
    "sykkel_gbfs_rate",
    note="poll the new feed",
)
read("snowflake/pipes.sql", "sykkel_snowpipe", note="the Snowpipe DDL", uses=("sykkel_snowpipe",))
edit(
    "snowflake/pipes.sql",
    """    file_format = (type = json);
""",
    """    file_format = (type = json);

create table if not exists raw.gbfs.station_information (
    payload variant,
    _file varchar,
    _loaded_at timestamp_ltz
);

create pipe if not exists raw.gbfs.station_information_pipe auto_ingest = true as
    copy into raw.gbfs.station_information (payload, _file, _loaded_at)
    from (select $1, metadata$filename, current_timestamp() from @raw.gbfs.landing/gbfs/station_information/)
    file_format = (type = json);
""",
    "sykkel_snowpipe",
    note="table and pipe for the feed",
    uses=("sykkel_snowpipe",),
)
read("dbt/models/staging/gbfs/_gbfs__sources.yml", "sykkel_source_freshness", note="the GBFS sources")
edit(
    "dbt/models/staging/gbfs/_gbfs__sources.yml",
    """          error_after: {count: 5, period: minute}
""",
    """          error_after: {count: 5, period: minute}
      - name: station_information
        freshness:
          warn_after: {count: 3, period: hour}
          error_after: {count: 5, period: hour}
""",
    "sykkel_source_freshness",
    note="the source and its freshness",
    uses=("sykkel_source_freshness",),
)
bash("uv run pytest ingest/tests -q", "Run the ingest tests", note="run the tests")
bash(
    "cd dbt && uv run dbt parse --target dev",
    "Check that the project still parses",
    "sykkel_dev_target",
    note="parse",
    uses=("sykkel_dev_target",),
)
bash("git diff --stat", "Summarize the change", note="review")
answer(
    "The poller now also fetches station_information every hour, through the same client (so with the "
    "Client-Identifier header), and lands it under gbfs/station_information/. snowflake/pipes.sql has its raw table "
    "and Snowpipe; that file is not applied by CI or the deploy, so run `snow sql -f snowflake/pipes.sql --role "
    "LOADER` once. The dbt source gbfs.station_information warns after 3 hours without a load and errors after 5.",
    "sykkel_snowpipe",
    "sykkel_client_identifier",
    "sykkel_source_freshness",
)
user("When does the daily trips job run these days, and why at that time?")
read(
    "orchestration/schedules.py",
    "sykkel_schedule_0530",
    note="the schedule",
    uses=("sykkel_schedule_0530",),
)
answer(
    "At 05:30 Europe/Oslo (cron '30 5 * * *'). Since September 2026 the operator's trip export lands around 05:00, "
    "so the job was moved from 04:00 to run after it.",
    "sykkel_schedule_0530",
)
user("Show me the diff of the poller change.")
bash("git diff ingest/gbfs_poller.py", "Show the poller diff", note="show the diff")
answer("One line: FEEDS now has station_information with a 3600 s interval next to station_status (60 s).")

# Session 5: small requests that need no memory at all (every step's `relevant` is empty: a HUD or cold-start block
# here is noise). Several of them share words with memories ("test", "deploy", "release", "config") or open a file a
# memory is about, for a reason that memory has nothing to do with.
session("chores")
user("Fix the typo 'seperately' in README.md.")
read("README.md", note="find the typo")
edit("README.md", "applied seperately", "applied separately", note="fix it")
answer("Fixed: README.md now says 'applied separately'.")
user("Which Python version does pyproject.toml require?")
read("pyproject.toml", note="look it up")
answer('Python 3.12 or newer (requires-python = ">=3.12").')
user("How many staging models are there?")
bash("ls dbt/models/staging/*/stg_*.sql | wc -l", "Count the staging models", note="count")
answer("Two: stg_operator__trips and stg_gbfs__station_status.")
user("Add dbt/.user.yml to .gitignore.")
read(".gitignore", note="the ignore list")
edit(".gitignore", "dbt/dbt_packages/\n", "dbt/dbt_packages/\ndbt/.user.yml\n", note="add the entry")
answer("Added dbt/.user.yml to .gitignore.")
user("In the deploy workflow, use actions/checkout@v4 like ci.yml does.")
read(".github/workflows/deploy.yml", note="the deploy workflow")
edit(".github/workflows/deploy.yml", "actions/checkout@v3", "actions/checkout@v4", note="bump the action")
answer("deploy.yml now uses actions/checkout@v4, like ci.yml.")
user("Add a line under Unreleased in CHANGELOG.md: 'GBFS poller also loads station_information hourly.'")
read("CHANGELOG.md", note="the changelog")
edit(
    "CHANGELOG.md",
    "- fct_daily_ridership: riders counts distinct hashed rider keys.\n",
    "- fct_daily_ridership: riders counts distinct hashed rider keys.\n- GBFS poller also loads station_information hourly.\n",
    note="add the line",
)
answer("Added under Unreleased.")
user("What is config-version set to in dbt/dbt_project.yml?")
read("dbt/dbt_project.yml", note="look it up")
answer("config-version: 2.")
user("Show me the last three commits.")
bash("git log --oneline -3", "Show the last three commits", note="history")
answer("Here are the last three commits (newest first), as printed by git log --oneline -3.")
user("What raw bucket does ingest/settings.py default to?")
read("ingest/settings.py", note="look it up")
answer("velostat-raw (VELOSTAT_RAW_BUCKET overrides it).")
user("How many lines is ingest/tests/test_trips_export.py?")
bash("wc -l ingest/tests/test_trips_export.py", "Count the lines", note="count")
answer("14 lines.")


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
                "tags": ["velostat", *tags.split(",")],
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
        "project": "velostat",
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
    n_none = sum(not st["relevant"] for s in data["sessions"] for t in s["turns"] for st in t["steps"])
    print(
        f"{len(MEMS)} memories ({len(used)} relevant to some step), {len(data['sessions'])} sessions, {n_turns} turns, {n_steps} steps ({n_none} need no memory)"
    )


if __name__ == "__main__":
    main()
