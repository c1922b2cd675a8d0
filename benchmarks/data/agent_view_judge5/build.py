# ruff: noqa: E501
"""Build the agent-view judge scenario 5: memories.jsonl, project.json and steps.json.

One made-up project, `belayboard` (an Elixir Phoenix + LiveView + Ecto + Oban service for the bookings, memberships,
Stripe payments, reminder SMS and front-desk check-in of a small chain of climbing gyms), with 50 memories of the
kind a team records (decisions, rejected alternatives, conventions, gotchas, facts, preferences, todos), the
project's source files, and five scripted coding sessions whose steps are each labelled with the memories that
matter for that step. Written by hand, blind to how codememory chooses, as a final judge: run it once.

    python benchmarks/data/agent_view_judge5/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge5/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name (all start with `crag_`); the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key), so they stay the same when entries are added or reordered. Tool-call arguments
may hold `{root}`, which the benchmark replaces with the project's absolute path. The build replays every
scripted `edit` on the files (each edit's oldString must occur exactly once at that point) and checks
that a file is read in a turn before it is edited there (OpenCode and Claude Code refuse to edit a file
their process has not read, and each turn is a new process). One step is a `write` of a new migration file.

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: lock: "FOR UPDATE", the 2-hour
window, body_reader, "gym:#{id}:checkins", `mix test --include stripe`), reads or edits the file the memory points
to for this task, or does what the memory prescribes where neither the user's request nor the file being edited
would have told it to. A memory the call merely agrees with (a pattern the file already follows, a warning
heeded by not doing something) is relevant, not used. Final answers have no `uses`: use detection watches what
the agent does (tool calls and edits) and the ids it cites.

Pairs and distractors: crag_reminder_lead_old (24 h) is superseded by crag_reminder_lead_new (3 h) and is relevant
to no step; several memories share words with steps they do not matter to (test, deploy, config, release).
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
    # --- bookings and slots
    (
        "crag_capacity_lock",
        "gotcha",
        0.8,
        "bookings,ecto,concurrency",
        'Anything that changes a slot\'s booked count (booking, cancelling, moving) must load the slot with `lock: "FOR UPDATE"` inside Repo.transaction: two front-desk iPads oversold the 18:00 slot when both read booked_count before either wrote it.',
    ),
    (
        "crag_cancel_window",
        "decision",
        0.7,
        "bookings,cancellation,members",
        "Members may cancel a booking until 2 hours before the slot starts; a later cancellation is kept as status :late_cancel and counts as a no-show. Agreed with the gym managers in March 2026.",
    ),
    (
        "crag_no_show_block",
        "fact",
        0.4,
        "bookings,no-show,members",
        "Three no-shows (including late cancels) within 30 days block a member from online booking for 7 days; Belayboard.Bookings.NoShowPolicy computes it and the front desk can lift the block.",
    ),
    (
        "crag_waiver_required",
        "convention",
        0.7,
        "bookings,waivers,legal",
        "No booking or check-in without a valid waiver (signed within the last 365 days): Bookings.create_booking/2 calls Waivers.valid?(member, date) and returns {:error, :waiver_missing}.",
    ),
    (
        "crag_minor_guardian",
        "fact",
        0.4,
        "waivers,members,legal",
        "Members under 16 need a guardian_id on their waiver; the guardian must be a member with a valid waiver of their own.",
    ),
    (
        "crag_slot_generation",
        "fact",
        0.4,
        "slots,oban,cron",
        "Slots are generated 28 days ahead every night at 03:00 by Belayboard.Workers.GenerateSlots (Oban.Plugins.Cron) from each gym's opening_hours.",
    ),
    (
        "crag_money_cents",
        "convention",
        0.6,
        "money,payments,ecto",
        "Money is an integer number of minor units (amount_cents, integer column) plus a currency column; never floats or Decimal in schemas. Display with BelayboardWeb.Format.money/2.",
    ),
    (
        "crag_day_pass_price",
        "fact",
        0.3,
        "payments,pricing,gyms",
        "The day pass price is per gym (gyms.day_pass_cents); Oslo and Bergen differ and the price is never hard-coded.",
    ),
    (
        "crag_membership_freeze",
        "fact",
        0.3,
        "memberships",
        "Memberships can be frozen at most twice a year for 14 to 90 days; Memberships.freeze/3 extends ends_on by the frozen days.",
    ),
    # --- time
    (
        "crag_gym_timezone",
        "convention",
        0.8,
        "time,timezone,slots",
        "Slot times are stored as utc_datetime; anything a member sees or any rule stated in local time (opening hours, quiet hours, 'tomorrow') is computed in the gym's zone, gyms.time_zone (e.g. Europe/Oslo), with DateTime.shift_zone!/2. Never NaiveDateTime.",
    ),
    (
        "crag_tz_library",
        "rejected_alternative",
        0.4,
        "time,timezone,dependencies",
        "Rejected tzdata as the time zone database: its auto-update fetched from the network at boot and crashed the release, which has no egress. We use the tz package (config :elixir, :time_zone_database, Tz.TimeZoneDatabase).",
    ),
    # --- reminders, SMS, email
    (
        "crag_reminder_lead_old",
        "decision",
        0.5,
        "reminders,sms,oban",
        "Booking reminders are sent by SMS 24 hours before the slot (config :belayboard, reminder_lead_hours: 24).",
    ),
    (
        "crag_sms_twilio",
        "decision",
        0.5,
        "sms,twilio",
        "SMS go through Twilio with a Messaging Service SID (not a single from-number), so the Norwegian alphanumeric sender 'Belayboard' works; Belayboard.SMS.deliver/2 is the only caller of the Twilio API.",
    ),
    (
        "crag_sms_quiet_hours",
        "gotcha",
        0.7,
        "sms,reminders,legal",
        "No SMS between 22:00 and 08:00 in the gym's local time (members complained to the consumer authority). A reminder that would fall in quiet hours is sent at 21:00 the evening before instead.",
    ),
    (
        "crag_oban_unique",
        "gotcha",
        0.6,
        "oban,reminders,sms",
        "Reminder jobs are inserted with unique: [period: :infinity, keys: [:booking_id]]: rescheduling a booking inserted a second job and members got two SMS.",
    ),
    (
        "crag_oban_string_keys",
        "gotcha",
        0.7,
        "oban,workers",
        "Oban stores job args as JSON, so atom keys come back as strings: perform/1 must match %Oban.Job{args: %{\"booking_id\" => id}}. Matching %{booking_id: id} fails with FunctionClauseError 'no function clause matching in ...perform/1'.",
    ),
    (
        "crag_oban_queues",
        "fact",
        0.6,
        "oban,sms,config",
        "Oban queues in config/config.exs: default 10, mailers 5, sms 2. The sms queue is kept at 2 because Twilio allows about 1 message per second per sender and answers 429 above it; more concurrency only brings retries.",
    ),
    (
        "crag_swoosh_postmark",
        "decision",
        0.4,
        "email,swoosh",
        "Email goes through Swoosh with the Postmark adapter; templates live in lib/belayboard_web/emails/ and are rendered with HEEx.",
    ),
    (
        "crag_quantum_rejected",
        "rejected_alternative",
        0.3,
        "oban,cron,dependencies",
        "Rejected Quantum for scheduled tasks: Oban.Plugins.Cron already runs the nightly jobs with retries and a history in oban_jobs.",
    ),
    # --- payments
    (
        "crag_stripe_raw_body",
        "gotcha",
        0.8,
        "stripe,payments,webhooks,endpoint",
        "Stripe webhook signatures are computed over the raw request body, which Plug.Parsers consumes: Plug.Parsers in lib/belayboard_web/endpoint.ex must keep body_reader: {BelayboardWeb.CacheBodyReader, :read_body, []}. Without it every webhook fails with 'No signatures found matching the expected signature for payload'.",
    ),
    (
        "crag_stripe_idempotent",
        "convention",
        0.7,
        "stripe,payments,webhooks",
        "Stripe delivers webhooks at least once and retries for 3 days: every handled event is recorded through Payments.record_event/1 (stripe_events table, unique index on event_id) and skipped when it was seen before.",
    ),
    (
        "crag_stripe_api_version",
        "fact",
        0.4,
        "stripe,payments,config",
        "The Stripe API version is pinned to 2024-06-20 (config :stripity_stripe, api_version in config/config.exs); bump it only together with the webhook fixtures in test/support/stripe/.",
    ),
    (
        "crag_stripe_mock_tests",
        "gotcha",
        0.6,
        "tests,stripe",
        "Tests tagged :stripe call stripe-mock on localhost:12111 and are excluded by default (test_helper.exs); run them with `docker compose up -d stripe-mock` and `mix test --include stripe`, or they are silently skipped.",
    ),
    (
        "crag_refunds_manual",
        "todo",
        0.3,
        "payments,refunds",
        "TODO: refunds are made by hand in the Stripe dashboard; a refund button for managers is planned for 2027.",
    ),
    # --- web layer
    (
        "crag_contexts",
        "convention",
        0.6,
        "architecture,phoenix,contexts",
        "Controllers and LiveViews call context functions only (Belayboard.Bookings, Checkins, Payments, Memberships); no Repo or Ecto.Query in lib/belayboard_web/.",
    ),
    (
        "crag_liveview_streams",
        "convention",
        0.7,
        "liveview,performance",
        "LiveView collections are LiveView streams (stream/3, stream_insert/3), not lists in assigns: the check-in page held 400 members in assigns and re-sent them all on every check-in.",
    ),
    (
        "crag_pubsub_topics",
        "convention",
        0.7,
        "liveview,pubsub",
        'PubSub topics are "gym:#{gym_id}:checkins" and "gym:#{gym_id}:slots"; the context broadcasts after the transaction commits, LiveViews only subscribe in mount when connected?(socket).',
    ),
    (
        "crag_gettext",
        "convention",
        0.6,
        "i18n,gettext",
        "Every user-facing string goes through gettext (nb and en); after adding or changing strings run `mix gettext.extract --merge` and commit the .po changes, CI fails on a stale .pot.",
    ),
    (
        "crag_tailwind_only",
        "preference",
        0.3,
        "ui,css",
        "Styling with Tailwind classes and the components in core_components.ex; no new CSS files.",
    ),
    (
        "crag_member_magic_links",
        "decision",
        0.4,
        "auth,members",
        "Members sign in with single-use magic links valid for 15 minutes; staff use phx.gen.auth passwords with TOTP. No member passwords.",
    ),
    (
        "crag_kiosk_session",
        "fact",
        0.3,
        "kiosk,checkin,auth",
        "The front-desk iPads run /kiosk in guided access, logged in as a kiosk staff account whose session lasts 12 hours.",
    ),
    (
        "crag_barcode_format",
        "fact",
        0.3,
        "checkin,members",
        "Member cards carry a Code 128 barcode of the member number (BB- and 6 digits); the USB scanner types it followed by Enter.",
    ),
    # --- database and migrations
    (
        "crag_index_concurrently",
        "gotcha",
        0.7,
        "database,migrations,postgres",
        "Indexes on the big tables (bookings, checkins: millions of rows) are created with create index(..., concurrently: true) in a migration that sets @disable_ddl_transaction true and @disable_migration_lock true; a plain create index locked check-ins for 40 s during a deploy.",
    ),
    (
        "crag_release_migrate",
        "fact",
        0.5,
        "database,migrations,deploy,release",
        'In production, migrations run from the release (`bin/belayboard eval "Belayboard.Release.migrate()"`) as Fly\'s release_command, before the new machines start; there is no mix in the release.',
    ),
    (
        "crag_citext_emails",
        "gotcha",
        0.3,
        "database,postgres",
        'Email columns are citext; a migration that adds one needs execute("CREATE EXTENSION IF NOT EXISTS citext") first or fails with \'type "citext" does not exist\'.',
    ),
    (
        "crag_gdpr_anonymize",
        "convention",
        0.5,
        "privacy,members,gdpr",
        "Deleting a member anonymizes the row (name 'Deleted member', email and phone nulled) instead of deleting it: bookings and payments must be kept for 5 years under the bookkeeping act.",
    ),
    # --- tests, tooling, workflow
    (
        "crag_fixtures",
        "convention",
        0.6,
        "tests,fixtures",
        "Test data comes from Belayboard.Fixtures in test/support/fixtures.ex (gym_fixture/1, member_fixture/1, slot_fixture/1, booking_fixture/1); no ExMachina, no inline Repo.insert! in tests.",
    ),
    (
        "crag_ci_checks",
        "convention",
        0.6,
        "ci,credo,dialyzer",
        "CI runs mix format --check-formatted, mix credo --strict, mix dialyzer and mix test --warnings-as-errors; a pull request that fails any of them is not reviewed.",
    ),
    (
        "crag_dialyzer_plt",
        "gotcha",
        0.4,
        "dialyzer,ci,dependencies",
        "Dialyzer's PLTs are cached in priv/plts; after adding or upgrading a dependency delete priv/plts/*.plt, or dialyzer reports 'Unknown function' for the new dependency.",
    ),
    (
        "crag_commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commits follow Conventional Commits with the context as scope (feat(bookings): ..., fix(payments): ...), subject of at most 72 characters, and the Linear issue (BEL-123) in the body when there is one.",
    ),
    (
        "crag_changelog",
        "convention",
        0.5,
        "changelog,release,workflow",
        "Every user-visible change gets a line under '## Unreleased' in CHANGELOG.md in the same commit; the gym managers read it before each release.",
    ),
    (
        "crag_fly_deploy",
        "fact",
        0.5,
        "deploy,fly",
        "Production is the Fly.io app belayboard-prod (regions arn and ams); deploy with `fly deploy --app belayboard-prod` from main, and only when the CI run for that commit is green.",
    ),
    (
        "crag_deploy_freeze",
        "preference",
        0.6,
        "deploy,workflow",
        "No production deploys on Saturdays and Sundays or on weekdays between 16:00 and 21:00 Oslo time: those are the gyms' busiest hours and the front desks cannot check anyone in during a bad deploy.",
    ),
    (
        "crag_staging_release_test",
        "fact",
        0.3,
        "release,staging,test",
        "Release candidates are tested by the front-desk lead on belayboard-staging (Fly) with the test Stripe account before a release is announced to the gyms.",
    ),
    (
        "crag_runtime_secrets",
        "convention",
        0.5,
        "config,secrets,deploy",
        "Secrets are read only in config/runtime.exs with System.fetch_env!/1 and set with `fly secrets set`; config/prod.exs and config/config.exs hold no secrets.",
    ),
    (
        "crag_req_http",
        "decision",
        0.4,
        "http,dependencies",
        "Outbound HTTP uses Req with receive_timeout: 10_000; HTTPoison and Tesla are not dependencies.",
    ),
    (
        "crag_logger_pii",
        "convention",
        0.5,
        "logging,privacy",
        'Log with Logger metadata (Logger.info("booking created", booking_id: id)); never log phone numbers, emails or names.',
    ),
    (
        "crag_toolversions",
        "fact",
        0.3,
        "tooling,elixir",
        "Elixir 1.17.3 and Erlang/OTP 27.1 are pinned in .tool-versions and in the Dockerfile's builder image; upgrade both together.",
    ),
    (
        "crag_todo_waitlist",
        "todo",
        0.3,
        "bookings,todo",
        "TODO: waitlist for full slots, with an SMS when a place frees up (BEL-212).",
    ),
    (
        "crag_reminder_lead_new",
        "decision",
        0.6,
        "reminders,sms,oban",
        "Since August 2026 booking reminders go out 3 hours before the slot, not 24 (members forgot the day-before SMS): config :belayboard, reminder_lead_hours: 3 in config/config.exs.",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# belayboard

Bookings, memberships and front-desk check-in for our climbing gyms (Oslo and Bergen).

- `lib/belayboard/`: the contexts (Bookings, Checkins, Payments, Memberships, Reminders)
- `lib/belayboard_web/`: the Phoenix endpoint, controllers and LiveViews
- Start the dev server with `iex -S mix phx.server` after `docker compose up -d db`
- Tests: `mix test`
""",
    ".formatter.exs": """[
  import_deps: [:ecto, :ecto_sql, :phoenix],
  subdirectories: ["priv/*/migrations"],
  plugins: [Phoenix.LiveView.HTMLFormatter],
  inputs: ["*.{heex,ex,exs}", "{config,lib,test}/**/*.{heex,ex,exs}", "priv/*/seeds.exs"],
  line_length: 110
]
""",
    "mix.exs": """defmodule Belayboard.MixProject do
  use Mix.Project

  def project do
    [
      app: :belayboard,
      version: "3.4.0",
      elixir: "~> 1.17",
      start_permanent: Mix.env() == :prod,
      aliases: aliases(),
      deps: deps()
    ]
  end

  defp deps do
    [
      {:phoenix, "~> 1.7.14"},
      {:phoenix_live_view, "~> 1.0"},
      {:ecto_sql, "~> 3.12"},
      {:postgrex, ">= 0.0.0"},
      {:oban, "~> 2.18"},
      {:stripity_stripe, "~> 3.2"},
      {:swoosh, "~> 1.17"},
      {:req, "~> 0.5"},
      {:tz, "~> 0.28"},
      {:gettext, "~> 0.26"},
      {:credo, "~> 1.7", only: [:dev, :test], runtime: false},
      {:dialyxir, "~> 1.4", only: [:dev, :test], runtime: false}
    ]
  end

  defp aliases do
    [
      setup: ["deps.get", "ecto.setup"],
      "ecto.setup": ["ecto.create", "ecto.migrate", "run priv/repo/seeds.exs"],
      test: ["ecto.create --quiet", "ecto.migrate --quiet", "test"]
    ]
  end
end
""",
    "CHANGELOG.md": """# Changelog

## Unreleased

- Front desk: the check-in page shows the member's photo next to the name.

## 3.4.0 (2026-11-10)

- Members can move a booking to another slot on the same day.
- Day passes can be bought at the kiosk with Vipps.
""",
    "config/config.exs": """import Config

config :belayboard, ecto_repos: [Belayboard.Repo]
config :belayboard, reminder_lead_hours: 3

config :belayboard, Oban,
  repo: Belayboard.Repo,
  queues: [default: 10, mailers: 5, sms: 2],
  plugins: [{Oban.Plugins.Cron, crontab: [{"0 3 * * *", Belayboard.Workers.GenerateSlots}]}]

config :stripity_stripe, api_version: "2024-06-20"

config :elixir, :time_zone_database, Tz.TimeZoneDatabase

import_config "#{config_env()}.exs"
""",
    "config/runtime.exs": """import Config

if config_env() == :prod do
  config :belayboard, Belayboard.Repo,
    url: System.fetch_env!("DATABASE_URL"),
    pool_size: String.to_integer(System.get_env("POOL_SIZE", "10"))

  config :stripity_stripe,
    api_key: System.fetch_env!("STRIPE_SECRET_KEY"),
    signing_secret: System.fetch_env!("STRIPE_WEBHOOK_SECRET")

  config :belayboard, Belayboard.SMS, messaging_service_sid: System.fetch_env!("TWILIO_MESSAGING_SERVICE_SID")
end
""",
    "lib/belayboard/bookings.ex": """defmodule Belayboard.Bookings do
  @moduledoc "Bookings of climbing slots."
  import Ecto.Query

  alias Belayboard.Bookings.{Booking, Slot}
  alias Belayboard.{Repo, Reminders, Waivers}

  def create_booking(member, slot_id) do
    Repo.transaction(fn ->
      slot = Repo.one!(from s in Slot, where: s.id == ^slot_id, lock: "FOR UPDATE")

      cond do
        not Waivers.valid?(member, DateTime.to_date(slot.starts_at)) -> Repo.rollback(:waiver_missing)
        slot.booked_count >= slot.capacity -> Repo.rollback(:full)
        true -> insert_booking(member, slot)
      end
    end)
  end

  defp insert_booking(member, slot) do
    booking = Repo.insert!(%Booking{member_id: member.id, slot_id: slot.id, status: :booked})
    Repo.update!(Slot.changeset(slot, %{booked_count: slot.booked_count + 1}))
    Reminders.schedule(booking, slot)
    booking
  end

  def list_upcoming(member) do
    now = DateTime.utc_now()

    Repo.all(
      from b in Booking,
        join: s in assoc(b, :slot),
        where: b.member_id == ^member.id and s.starts_at > ^now and b.status == :booked,
        order_by: s.starts_at,
        preload: [slot: s]
    )
  end
end
""",
    "lib/belayboard/reminders.ex": """defmodule Belayboard.Reminders do
  @moduledoc "Schedules the reminder SMS for a booking."
  alias Belayboard.Workers.SendReminder

  def schedule(booking, slot) do
    lead_hours = Application.fetch_env!(:belayboard, :reminder_lead_hours)
    send_at = DateTime.add(slot.starts_at, -lead_hours * 3600, :second)

    %{booking_id: booking.id}
    |> SendReminder.new(scheduled_at: send_at, unique: [period: :infinity, keys: [:booking_id]])
    |> Oban.insert()
  end
end
""",
    "lib/belayboard/workers/send_reminder.ex": """defmodule Belayboard.Workers.SendReminder do
  use Oban.Worker, queue: :sms, max_attempts: 5

  alias Belayboard.{Bookings, SMS}

  @impl Oban.Worker
  def perform(%Oban.Job{args: %{booking_id: booking_id}}) do
    case Bookings.get_booking_with_slot(booking_id) do
      %{status: :booked} = booking -> SMS.deliver(booking.member.phone, reminder_text(booking))
      _cancelled_or_gone -> :ok
    end
  end

  defp reminder_text(booking) do
    "Belayboard: you are booked at #{booking.slot.gym.name} at #{Calendar.strftime(booking.slot.local_start, "%H:%M")}."
  end
end
""",
    "lib/belayboard/payments.ex": """defmodule Belayboard.Payments do
  @moduledoc "Stripe payments: day passes and memberships."
  alias Belayboard.{DayPasses, Memberships, Repo}
  alias Belayboard.Payments.StripeEvent

  @doc "Records a Stripe event id; returns :duplicate when it was recorded before."
  def record_event(%{id: event_id, type: type}) do
    case Repo.insert(%StripeEvent{event_id: event_id, type: type}, on_conflict: :nothing, conflict_target: :event_id) do
      {:ok, %StripeEvent{id: nil}} -> :duplicate
      {:ok, _event} -> :new
    end
  end

  def handle_event(%{type: "payment_intent.succeeded", data: %{object: intent}}) do
    # issue the reciept and the day pass or membership the intent paid for
    case intent.metadata do
      %{"kind" => "day_pass", "member_id" => member_id} -> DayPasses.issue(member_id, intent.id)
      %{"kind" => "membership", "member_id" => member_id} -> Memberships.activate(member_id, intent.id)
    end
  end

  def handle_event(%{type: "charge.refunded", data: %{object: charge}}) do
    Repo.transaction(fn -> DayPasses.revoke_for_payment(charge.payment_intent) end)
  end

  def handle_event(_other), do: :ok
end
""",
    "lib/belayboard/checkins.ex": """defmodule Belayboard.Checkins do
  @moduledoc "Front-desk check-ins."
  import Ecto.Query

  alias Belayboard.Checkins.Checkin
  alias Belayboard.Repo

  def check_in(gym_id, member) do
    %Checkin{gym_id: gym_id, member_id: member.id, checked_in_at: DateTime.utc_now(:second)}
    |> Repo.insert()
  end

  def list_today(gym_id, since) do
    Repo.all(
      from c in Checkin,
        where: c.gym_id == ^gym_id and c.checked_in_at >= ^since,
        order_by: [desc: c.checked_in_at],
        preload: :member
    )
  end
end
""",
    "lib/belayboard_web/endpoint.ex": """defmodule BelayboardWeb.Endpoint do
  use Phoenix.Endpoint, otp_app: :belayboard

  @session_options [store: :cookie, key: "_belayboard_key", signing_salt: "k3bR9xQe", same_site: "Lax"]

  socket "/live", Phoenix.LiveView.Socket, websocket: [connect_info: [session: @session_options]]

  plug Plug.Static, at: "/", from: :belayboard, gzip: false, only: BelayboardWeb.static_paths()
  plug Plug.RequestId
  plug Plug.Telemetry, event_prefix: [:phoenix, :endpoint]

  plug Plug.Parsers,
    parsers: [:urlencoded, :multipart, :json],
    pass: ["*/*"],
    length: 8_000_000,
    json_decoder: Phoenix.json_library()

  plug Plug.MethodOverride
  plug Plug.Head
  plug Plug.Session, @session_options
  plug BelayboardWeb.Router
end
""",
    "lib/belayboard_web/controllers/stripe_webhook_controller.ex": """defmodule BelayboardWeb.StripeWebhookController do
  use BelayboardWeb, :controller

  alias Belayboard.Payments

  def create(conn, _params) do
    [signature] = get_req_header(conn, "stripe-signature")
    secret = Application.fetch_env!(:stripity_stripe, :signing_secret)

    case Stripe.Webhook.construct_event(conn.assigns.raw_body, signature, secret) do
      {:ok, event} ->
        Payments.handle_event(event)
        send_resp(conn, 200, "ok")

      {:error, reason} ->
        send_resp(conn, 400, reason)
    end
  end
end
""",
    "lib/belayboard_web/live/checkin_live.ex": """defmodule BelayboardWeb.CheckinLive do
  use BelayboardWeb, :live_view

  alias Belayboard.{Checkins, Members}

  def mount(_params, %{"gym_id" => gym_id}, socket) do
    since = BelayboardWeb.Time.start_of_today(gym_id)
    {:ok, assign(socket, gym_id: gym_id, since: since, checkins: Checkins.list_today(gym_id, since))}
  end

  def handle_event("scan", %{"code" => code}, socket) do
    member = Members.get_by_number!(code)
    {:ok, _checkin} = Checkins.check_in(socket.assigns.gym_id, member)
    {:noreply, assign(socket, checkins: Checkins.list_today(socket.assigns.gym_id, socket.assigns.since))}
  end

  def render(assigns) do
    ~H\"\"\"
    <.header>{gettext("Checked in today")} ({length(@checkins)})</.header>
    <ul id="checkins">
      <li :for={c <- @checkins} id={"checkin-#{c.id}"}>{c.member.name}</li>
    </ul>
    \"\"\"
  end
end
""",
    "lib/belayboard_web/live/my_bookings_live.ex": """defmodule BelayboardWeb.MyBookingsLive do
  use BelayboardWeb, :live_view

  alias Belayboard.Bookings

  def mount(_params, _session, socket) do
    {:ok, stream(socket, :bookings, Bookings.list_upcoming(socket.assigns.current_member))}
  end

  def render(assigns) do
    ~H\"\"\"
    <.header>{gettext("My bookings")}</.header>
    <div id="bookings" phx-update="stream">
      <div :for={{dom_id, booking} <- @streams.bookings} id={dom_id} class="flex justify-between py-2">
        <span>{BelayboardWeb.Format.slot_time(booking.slot)}</span>
      </div>
    </div>
    \"\"\"
  end
end
""",
    "priv/repo/migrations/20250310090000_create_checkins.exs": """defmodule Belayboard.Repo.Migrations.CreateCheckins do
  use Ecto.Migration

  def change do
    create table(:checkins) do
      add :gym_id, references(:gyms), null: false
      add :member_id, references(:members), null: false
      add :checked_in_at, :utc_datetime, null: false
    end
  end
end
""",
    "test/support/fixtures.ex": """defmodule Belayboard.Fixtures do
  @moduledoc "Test data."
  alias Belayboard.Repo

  def gym_fixture(attrs \\\\ %{}),
    do: Repo.insert!(struct(Belayboard.Gyms.Gym, Map.merge(%{name: "Oslo", time_zone: "Europe/Oslo"}, attrs)))

  def member_fixture(attrs \\\\ %{}), do: Belayboard.Members.create_member!(Map.merge(%{waiver: :signed}, attrs))

  def slot_fixture(attrs \\\\ %{}) do
    gym = attrs[:gym] || gym_fixture()
    defaults = %{gym_id: gym.id, starts_at: DateTime.add(DateTime.utc_now(:second), 86_400), capacity: 20}
    Repo.insert!(struct(Belayboard.Bookings.Slot, Map.merge(defaults, Map.delete(attrs, :gym))))
  end

  def booking_fixture(attrs \\\\ %{}) do
    {:ok, booking} = Belayboard.Bookings.create_booking(attrs[:member] || member_fixture(), (attrs[:slot] || slot_fixture()).id)
    booking
  end
end
""",
    "test/belayboard/bookings_test.exs": """defmodule Belayboard.BookingsTest do
  use Belayboard.DataCase, async: true

  import Belayboard.Fixtures
  alias Belayboard.Bookings

  test "a full slot cannot be booked" do
    slot = slot_fixture(%{capacity: 1})
    booking_fixture(%{slot: slot})
    assert {:error, :full} = Bookings.create_booking(member_fixture(), slot.id)
  end

  test "a member without a waiver cannot book" do
    assert {:error, :waiver_missing} = Bookings.create_booking(member_fixture(%{waiver: nil}), slot_fixture().id)
  end
end
""",
    "test/belayboard/reminders_test.exs": """defmodule Belayboard.RemindersTest do
  use Belayboard.DataCase, async: true
  use Oban.Testing, repo: Belayboard.Repo

  import Belayboard.Fixtures
  alias Belayboard.Workers.SendReminder

  test "a reminder is scheduled 3 hours before the slot" do
    slot = slot_fixture(%{starts_at: ~U[2026-12-01 17:00:00Z]})
    booking = booking_fixture(%{slot: slot})
    assert_enqueued worker: SendReminder, args: %{booking_id: booking.id}, scheduled_at: ~U[2026-12-01 14:00:00Z]
  end
end
""",
    ".github/workflows/ci.yml": """name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    services:
      postgres:
        image: postgres:16
        env: {POSTGRES_PASSWORD: postgres}
        ports: ["5432:5432"]
    steps:
      - uses: actions/checkout@v4
      - uses: erlef/setup-beam@v1
        with: {version-file: .tool-versions, version-type: strict}
      - run: mix deps.get
      - run: mix format --check-formatted && mix credo --strict
      - run: mix dialyzer
      - run: mix test --warnings-as-errors
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


# Session 1: late cancellation (a feature over three turns: the context, the LiveView, changelog and commit).
session("cancel-booking")
user(
    "Members should be able to cancel a booking themselves. Add Bookings.cancel_booking/2 (member, booking id) and a test for it."
)
bash("git status --short", "Check the working tree", note="routine")
bash("ls lib/belayboard test/belayboard", "List the contexts and their tests", note="routine")
read(
    "lib/belayboard/bookings.ex",
    "crag_cancel_window",
    "crag_capacity_lock",
    note="the bookings context",
)
edit(
    "lib/belayboard/bookings.ex",
    """  def list_upcoming(member) do
""",
    """  @cancel_deadline_seconds 2 * 3600

  def cancel_booking(member, booking_id) do
    Repo.transaction(fn ->
      booking = Repo.get_by!(Booking, id: booking_id, member_id: member.id)
      slot = Repo.one!(from s in Slot, where: s.id == ^booking.slot_id, lock: "FOR UPDATE")

      status =
        if DateTime.diff(slot.starts_at, DateTime.utc_now()) >= @cancel_deadline_seconds,
          do: :cancelled,
          else: :late_cancel

      Repo.update!(Slot.changeset(slot, %{booked_count: slot.booked_count - 1}))
      Repo.update!(Booking.changeset(booking, %{status: status}))
    end)
  end

  def cancellable?(booking), do: DateTime.diff(booking.slot.starts_at, DateTime.utc_now()) >= @cancel_deadline_seconds

  def list_upcoming(member) do
""",
    "crag_cancel_window",
    "crag_capacity_lock",
    "crag_no_show_block",
    note="cancel with the 2 h window, slot row locked",
    uses=("crag_cancel_window", "crag_capacity_lock"),
)
read("test/belayboard/bookings_test.exs", "crag_fixtures", note="the existing tests")
edit(
    "test/belayboard/bookings_test.exs",
    """    assert {:error, :waiver_missing} = Bookings.create_booking(member_fixture(%{waiver: nil}), slot_fixture().id)
  end
""",
    """    assert {:error, :waiver_missing} = Bookings.create_booking(member_fixture(%{waiver: nil}), slot_fixture().id)
  end

  test "cancelling frees the place; within 2 hours of the start it is a late cancel" do
    member = member_fixture()
    early = booking_fixture(%{member: member, slot: slot_fixture(%{starts_at: DateTime.add(DateTime.utc_now(), 5 * 3600)})})
    late = booking_fixture(%{member: member, slot: slot_fixture(%{starts_at: DateTime.add(DateTime.utc_now(), 3600)})})

    assert {:ok, %{status: :cancelled}} = Bookings.cancel_booking(member, early.id)
    assert {:ok, %{status: :late_cancel}} = Bookings.cancel_booking(member, late.id)
    assert Repo.get!(Belayboard.Bookings.Slot, early.slot_id).booked_count == 0
  end
""",
    "crag_fixtures",
    "crag_cancel_window",
    note="test both sides of the window",
    uses=("crag_cancel_window",),
)
bash("mix format", "Format the code", note="routine")
bash("mix test test/belayboard/bookings_test.exs", "Run the bookings tests", note="routine")
answer(
    "Added Bookings.cancel_booking/2: it locks the slot row (FOR UPDATE) so the count cannot race with a booking at "
    "the desk, frees the place, and marks the booking :cancelled, or :late_cancel within 2 hours of the start (it then "
    "counts as a no-show). cancellable?/1 tells the UI whether the window is still open. The new test covers both cases.",
    "crag_cancel_window",
    "crag_capacity_lock",
    "crag_no_show_block",
)
user(
    "Now put a Cancel button on the member's My bookings page, only while cancelling is still free, and make sure the label is translated."
)
read(
    "lib/belayboard_web/live/my_bookings_live.ex",
    "crag_contexts",
    "crag_gettext",
    "crag_cancel_window",
    note="the page",
)
edit(
    "lib/belayboard_web/live/my_bookings_live.ex",
    """        <span>{BelayboardWeb.Format.slot_time(booking.slot)}</span>
      </div>""",
    """        <span>{BelayboardWeb.Format.slot_time(booking.slot)}</span>
        <.button :if={Bookings.cancellable?(booking)} phx-click="cancel" phx-value-id={booking.id}>
          {gettext("Cancel")}
        </.button>
      </div>""",
    "crag_gettext",
    "crag_contexts",
    "crag_cancel_window",
    "crag_tailwind_only",
    note="the button",
    uses=("crag_gettext",),
)
edit(
    "lib/belayboard_web/live/my_bookings_live.ex",
    """  def render(assigns) do""",
    """  def handle_event("cancel", %{"id" => id}, socket) do
    {:ok, booking} = Bookings.cancel_booking(socket.assigns.current_member, id)
    {:noreply, stream_delete(socket, :bookings, booking)}
  end

  def render(assigns) do""",
    "crag_contexts",
    "crag_liveview_streams",
    note="the event handler",
    uses=("crag_contexts",),
)
bash("mix format", "Format the code", note="routine")
bash(
    "mix gettext.extract --merge",
    "Extract and merge the new string",
    "crag_gettext",
    note="translations",
    uses=("crag_gettext",),
)
bash("git diff --stat", "See what changed", note="routine")
bash("mix compile --warnings-as-errors", "Compile", note="routine")
answer(
    "My bookings now shows a Cancel button while Bookings.cancellable?/1 is true (more than 2 hours before the start); "
    "clicking it calls Bookings.cancel_booking/2 and removes the row from the stream. The label goes through gettext and "
    "the .po files are merged; the Norwegian msgstr still needs a translation.",
    "crag_gettext",
    "crag_cancel_window",
    "crag_contexts",
)
user("Good. Add it to the changelog and commit everything.")
read("CHANGELOG.md", "crag_changelog", note="the changelog", uses=("crag_changelog",))
edit(
    "CHANGELOG.md",
    """## Unreleased

""",
    """## Unreleased

- Members can cancel a booking from My bookings until 2 hours before the slot; later cancellations count as a no-show.
""",
    "crag_changelog",
    "crag_cancel_window",
    note="the entry",
    uses=("crag_changelog",),
)
bash("git status --short", "What will be committed", note="routine")
bash("mix test", "Run the whole suite before committing", note="routine")
bash(
    "git add -A && git commit -q -m 'feat(bookings): let members cancel until 2 h before the slot' && git log --oneline -1",
    "Commit",
    "crag_commit_style",
    note="commit",
    uses=("crag_commit_style",),
)
answer(
    "Committed as `feat(bookings): let members cancel until 2 h before the slot`, changelog included.",
    "crag_commit_style",
    "crag_changelog",
)

# Session 2: Stripe webhooks (a regression whose cause is the gotcha, then duplicate deliveries, then a fact).
session("stripe-webhooks")
user(
    "Since this morning every Stripe webhook fails with 400 'No signatures found matching the expected signature for payload'. Find out why and fix it."
)
bash(
    "git log --oneline -5 -- lib/belayboard_web",
    "Recent changes to the web layer",
    "crag_stripe_raw_body",
    note="look for the change",
)
read("lib/belayboard_web/endpoint.ex", "crag_stripe_raw_body", note="the parsers", uses=("crag_stripe_raw_body",))
edit(
    "lib/belayboard_web/endpoint.ex",
    """    length: 8_000_000,
    json_decoder: Phoenix.json_library()""",
    """    length: 8_000_000,
    body_reader: {BelayboardWeb.CacheBodyReader, :read_body, []},
    json_decoder: Phoenix.json_library()""",
    "crag_stripe_raw_body",
    note="restore the body reader",
    uses=("crag_stripe_raw_body",),
)
read(
    "lib/belayboard_web/controllers/stripe_webhook_controller.ex",
    "crag_stripe_raw_body",
    note="the controller reads conn.assigns.raw_body",
)
bash("ls test/belayboard_web/controllers", "Find the webhook tests", note="routine")
bash(
    "docker compose up -d stripe-mock && mix test --include stripe test/belayboard_web/controllers/stripe_webhook_controller_test.exs",
    "Run the webhook tests against stripe-mock",
    "crag_stripe_mock_tests",
    note="the tagged tests",
    uses=("crag_stripe_mock_tests",),
)
answer(
    "The Plug.Parsers in endpoint.ex had lost its body_reader option, so the JSON parser consumed the body and "
    "conn.assigns.raw_body was empty: Stripe's signature is over the raw bytes. body_reader: "
    "{BelayboardWeb.CacheBodyReader, :read_body, []} is back and the webhook tests pass against stripe-mock.",
    "crag_stripe_raw_body",
)
user(
    "Stripe also shows that a few payment_intent.succeeded events were delivered twice last night, and two members got two day passes. Make that impossible."
)
read(
    "lib/belayboard/payments.ex",
    "crag_stripe_idempotent",
    note="the event handling",
    uses=("crag_stripe_idempotent",),
)
read(
    "lib/belayboard_web/controllers/stripe_webhook_controller.ex",
    "crag_stripe_idempotent",
    "crag_contexts",
    note="where events arrive",
)
edit(
    "lib/belayboard_web/controllers/stripe_webhook_controller.ex",
    """      {:ok, event} ->
        Payments.handle_event(event)
        send_resp(conn, 200, "ok")""",
    """      {:ok, event} ->
        # Stripe delivers at least once: handle each event id once
        if Payments.record_event(event) == :new, do: Payments.handle_event(event)
        send_resp(conn, 200, "ok")""",
    "crag_stripe_idempotent",
    "crag_contexts",
    note="record the event before handling it",
    uses=("crag_stripe_idempotent",),
)
bash("git diff", "Review the change", note="routine")
bash(
    "mix test --include stripe test/belayboard_web/controllers/stripe_webhook_controller_test.exs",
    "Run the webhook tests",
    "crag_stripe_mock_tests",
    note="the tagged tests again",
    uses=("crag_stripe_mock_tests",),
)
answer(
    "The controller now records every verified event with Payments.record_event/1 (unique event_id in stripe_events) "
    "and only handles it when it is new, so a redelivered payment_intent.succeeded no longer issues a second day pass. "
    "The two duplicate passes from last night still have to be revoked by hand.",
    "crag_stripe_idempotent",
)
user("By the way, which Stripe API version are we pinned to?")
read("config/config.exs", "crag_stripe_api_version", note="look it up", uses=("crag_stripe_api_version",))
answer(
    "2024-06-20 (config :stripity_stripe, api_version in config/config.exs). A bump needs the webhook fixtures in test/support/stripe/ updated too.",
    "crag_stripe_api_version",
)

# Session 3: reminder SMS (quiet hours in local time, Oban's string keys, the sms queue).
session("reminder-sms")
user("A member in Oslo got her reminder SMS at 05:30 for an 08:30 slot. That must not happen. Fix it.")
bash("git status --short", "Check the working tree", note="routine")
read(
    "lib/belayboard/reminders.ex",
    "crag_sms_quiet_hours",
    "crag_gym_timezone",
    "crag_reminder_lead_new",
    "crag_oban_unique",
    note="the scheduling",
)
edit(
    "lib/belayboard/reminders.ex",
    """    send_at = DateTime.add(slot.starts_at, -lead_hours * 3600, :second)
""",
    """    send_at = slot.starts_at |> DateTime.add(-lead_hours * 3600, :second) |> outside_quiet_hours(slot)
""",
    "crag_sms_quiet_hours",
    "crag_gym_timezone",
    "crag_oban_unique",
    "crag_reminder_lead_new",
    note="call the quiet-hours rule",
    uses=("crag_sms_quiet_hours",),
)
edit(
    "lib/belayboard/reminders.ex",
    """    |> Oban.insert()
  end
""",
    """    |> Oban.insert()
  end

  # No SMS from 22:00 to 08:00 local time: send at 21:00 the evening before the slot instead.
  defp outside_quiet_hours(send_at, slot) do
    zone = Belayboard.Gyms.time_zone(slot.gym_id)
    local = DateTime.shift_zone!(send_at, zone)

    if local.hour >= 22 or local.hour < 8 do
      slot_day = slot.starts_at |> DateTime.shift_zone!(zone) |> DateTime.to_date()
      slot_day |> Date.add(-1) |> DateTime.new!(~T[21:00:00], zone) |> DateTime.shift_zone!("Etc/UTC")
    else
      send_at
    end
  end
""",
    "crag_sms_quiet_hours",
    "crag_gym_timezone",
    note="the rule, in the gym's zone",
    uses=("crag_sms_quiet_hours", "crag_gym_timezone"),
)
read("test/belayboard/reminders_test.exs", "crag_fixtures", note="the reminder test")
edit(
    "test/belayboard/reminders_test.exs",
    """    assert_enqueued worker: SendReminder, args: %{booking_id: booking.id}, scheduled_at: ~U[2026-12-01 14:00:00Z]
  end
""",
    """    assert_enqueued worker: SendReminder, args: %{booking_id: booking.id}, scheduled_at: ~U[2026-12-01 14:00:00Z]
  end

  test "a reminder that would fall in the night goes out at 21:00 the evening before" do
    slot = slot_fixture(%{gym: gym_fixture(%{time_zone: "Europe/Oslo"}), starts_at: ~U[2026-12-02 07:30:00Z]})
    booking = booking_fixture(%{slot: slot})
    assert_enqueued worker: SendReminder, args: %{booking_id: booking.id}, scheduled_at: ~U[2026-12-01 20:00:00Z]
  end
""",
    "crag_fixtures",
    "crag_sms_quiet_hours",
    "crag_gym_timezone",
    "crag_reminder_lead_new",
    note="08:30 Oslo is 07:30Z; 21:00 Oslo is 20:00Z",
    uses=("crag_sms_quiet_hours",),
)
bash("mix test test/belayboard/reminders_test.exs", "Run the reminder tests", note="routine")
bash("mix format --check-formatted", "Check formatting", note="routine")
answer(
    "Reminders go out 3 hours before the slot, which put an 08:30 slot's SMS at 05:30. Reminders.schedule/2 now moves "
    "any send time between 22:00 and 08:00 in the gym's own time zone to 21:00 the evening before; a test covers the "
    "08:30 case.",
    "crag_sms_quiet_hours",
    "crag_gym_timezone",
    "crag_reminder_lead_new",
)
user(
    "The sms queue is full of failed jobs since Ola's refactor yesterday: FunctionClauseError, no function clause matching in Belayboard.Workers.SendReminder.perform/1. Fix it, and tell me whether the failed ones will be retried."
)
read(
    "lib/belayboard/workers/send_reminder.ex",
    "crag_oban_string_keys",
    note="the worker",
)
edit(
    "lib/belayboard/workers/send_reminder.ex",
    """  def perform(%Oban.Job{args: %{booking_id: booking_id}}) do""",
    """  def perform(%Oban.Job{args: %{"booking_id" => booking_id}}) do""",
    "crag_oban_string_keys",
    note="match the JSON args",
    uses=("crag_oban_string_keys",),
)
bash("mix test test/belayboard/workers", "Run the worker tests", note="routine")
bash("git diff", "Review the change", note="routine")
answer(
    'Oban stores args as JSON, so perform/1 receives %{"booking_id" => id}; the atom-key pattern never matched. It '
    "matches the string key again. The worker allows 5 attempts with backoff, so jobs that have not used them up are "
    "retried once this is deployed; the ones already discarded need Oban.retry_job/1.",
    "crag_oban_string_keys",
)
user("And the sms queue backs up on Monday mornings. Raise its concurrency to 5.")
read("config/config.exs", "crag_oban_queues", "crag_sms_twilio", note="the queue settings", uses=("crag_oban_queues",))
answer(
    "I have not changed it yet: the sms queue is at 2 on purpose. Twilio accepts about one message per second per "
    "sender and answers 429 above that, so 5 workers would mostly produce retries. If Monday mornings need more "
    "throughput, the Messaging Service needs more senders first; tell me if you still want 5.",
    "crag_oban_queues",
    "crag_sms_twilio",
)

# Session 4: the check-in page, an index, a body-size change in the endpoint, and a deploy request on a Saturday.
session("front-desk")
user(
    "The front-desk check-in page gets slow in the evenings, and the count on the second desk's iPad does not change when someone checks in at the first. Fix both."
)
bash("ls lib/belayboard_web/live", "List the LiveViews", note="routine")
read(
    "lib/belayboard_web/live/checkin_live.ex",
    "crag_liveview_streams",
    "crag_pubsub_topics",
    "crag_contexts",
    note="the page",
)
read("lib/belayboard/checkins.ex", "crag_pubsub_topics", "crag_contexts", note="the context")
edit(
    "lib/belayboard/checkins.ex",
    """  def check_in(gym_id, member) do
    %Checkin{gym_id: gym_id, member_id: member.id, checked_in_at: DateTime.utc_now(:second)}
    |> Repo.insert()
  end
""",
    """  def check_in(gym_id, member) do
    with {:ok, checkin} <-
           Repo.insert(%Checkin{gym_id: gym_id, member_id: member.id, checked_in_at: DateTime.utc_now(:second)}) do
      checkin = %{checkin | member: member}
      Phoenix.PubSub.broadcast(Belayboard.PubSub, "gym:#{gym_id}:checkins", {:checked_in, checkin})
      {:ok, checkin}
    end
  end
""",
    "crag_pubsub_topics",
    "crag_contexts",
    note="broadcast from the context",
    uses=("crag_pubsub_topics",),
)
edit(
    "lib/belayboard_web/live/checkin_live.ex",
    """    since = BelayboardWeb.Time.start_of_today(gym_id)
    {:ok, assign(socket, gym_id: gym_id, since: since, checkins: Checkins.list_today(gym_id, since))}
  end

  def handle_event("scan", %{"code" => code}, socket) do
    member = Members.get_by_number!(code)
    {:ok, _checkin} = Checkins.check_in(socket.assigns.gym_id, member)
    {:noreply, assign(socket, checkins: Checkins.list_today(socket.assigns.gym_id, socket.assigns.since))}
  end
""",
    """    if connected?(socket), do: Phoenix.PubSub.subscribe(Belayboard.PubSub, "gym:#{gym_id}:checkins")
    checkins = Checkins.list_today(gym_id, BelayboardWeb.Time.start_of_today(gym_id))
    {:ok, socket |> assign(gym_id: gym_id, count: length(checkins)) |> stream(:checkins, checkins)}
  end

  def handle_event("scan", %{"code" => code}, socket) do
    {:ok, _checkin} = Checkins.check_in(socket.assigns.gym_id, Members.get_by_number!(code))
    {:noreply, socket}
  end

  def handle_info({:checked_in, checkin}, socket) do
    {:noreply, socket |> update(:count, &(&1 + 1)) |> stream_insert(:checkins, checkin, at: 0)}
  end
""",
    "crag_liveview_streams",
    "crag_pubsub_topics",
    "crag_contexts",
    note="subscribe and stream",
    uses=("crag_liveview_streams", "crag_pubsub_topics"),
)
edit(
    "lib/belayboard_web/live/checkin_live.ex",
    """    <.header>{gettext("Checked in today")} ({length(@checkins)})</.header>
    <ul id="checkins">
      <li :for={c <- @checkins} id={"checkin-#{c.id}"}>{c.member.name}</li>
    </ul>""",
    """    <.header>{gettext("Checked in today")} ({@count})</.header>
    <ul id="checkins" phx-update="stream">
      <li :for={{dom_id, c} <- @streams.checkins} id={dom_id}>{c.member.name}</li>
    </ul>""",
    "crag_liveview_streams",
    note="render the stream",
    uses=("crag_liveview_streams",),
)
bash("mix format", "Format the code", note="routine")
bash("mix compile --warnings-as-errors", "Compile", note="routine")
bash("mix test test/belayboard_web/live", "Run the LiveView tests", note="routine")
answer(
    "The page kept every check-in of the day in assigns and reloaded the whole list after each scan; it now uses a "
    'LiveView stream and a counter. Checkins.check_in/2 broadcasts {:checked_in, checkin} on "gym:<id>:checkins" and '
    "every desk subscribes when connected, so both iPads update at once.",
    "crag_liveview_streams",
    "crag_pubsub_topics",
)
user("Today's check-ins are looked up by gym and time on every page load. Add an index for that.")
read(
    "priv/repo/migrations/20250310090000_create_checkins.exs",
    "crag_index_concurrently",
    note="the table's migration",
)
call(
    "write",
    {
        "filePath": "{root}/priv/repo/migrations/20261128093000_add_checkins_gym_time_index.exs",
        "content": """defmodule Belayboard.Repo.Migrations.AddCheckinsGymTimeIndex do
  use Ecto.Migration
  @disable_ddl_transaction true
  @disable_migration_lock true

  def change do
    create index(:checkins, [:gym_id, :checked_in_at], concurrently: true)
  end
end
""",
    },
    "crag_index_concurrently",
    note="write the migration",
    uses=("crag_index_concurrently",),
)
bash("mix ecto.migrate", "Apply it locally", note="routine")
answer(
    "Added an index on checkins (gym_id, checked_in_at), created concurrently (no DDL transaction, no migration lock) "
    "so it does not lock check-ins while it builds on the big table. In production it runs from the release command on deploy.",
    "crag_index_concurrently",
    "crag_release_migrate",
)
user("The member CSV import from the old system is about 12 MB and gets a 413. Raise the request body limit to 20 MB.")
read("lib/belayboard_web/endpoint.ex", "crag_stripe_raw_body", note="the parsers")
edit(
    "lib/belayboard_web/endpoint.ex",
    "    length: 8_000_000,",
    "    length: 20_000_000,",
    "crag_stripe_raw_body",
    note="only the length",
)
bash("mix compile", "Compile", note="routine")
answer(
    "Plug.Parsers now accepts bodies up to 20 MB (length: 20_000_000); the body_reader that Stripe's signature check needs is untouched.",
    "crag_stripe_raw_body",
)
user("Commit all of this and deploy it to production.")
bash("git status --short", "What changed", note="routine")
read("CHANGELOG.md", "crag_changelog", note="the changelog", uses=("crag_changelog",))
edit(
    "CHANGELOG.md",
    """## Unreleased

""",
    """## Unreleased

- Front desk: the check-in list updates live on every desk and stays fast in the evenings.
""",
    "crag_changelog",
    note="the entry",
    uses=("crag_changelog",),
)
bash(
    "git add -A && git commit -q -m 'fix(checkins): stream check-ins and sync desks over PubSub' && git log --oneline -1",
    "Commit",
    "crag_commit_style",
    note="commit",
    uses=("crag_commit_style",),
)
bash("date", "What day and time is it", "crag_deploy_freeze", note="check the freeze", uses=("crag_deploy_freeze",))
answer(
    "Committed, with a changelog line. I did not deploy: it is Saturday, and production deploys are not done on weekends (the gyms' busiest "
    "days). On Monday morning, once CI is green for this commit, `fly deploy --app belayboard-prod` will deploy it; "
    "the index migration runs from the release command.",
    "crag_deploy_freeze",
    "crag_fly_deploy",
    "crag_release_migrate",
)

# Session 5: small requests that need no memory at all (every step's `relevant` is empty).
session("small-requests")
user("How do I start the dev server? Check the README.")
read("README.md", note="look it up")
answer("`docker compose up -d db`, then `iex -S mix phx.server`.")
user("Fix the typo 'reciept' in the comment in lib/belayboard/payments.ex.")
read("lib/belayboard/payments.ex", note="find the comment")
edit("lib/belayboard/payments.ex", "issue the reciept", "issue the receipt", note="the typo")
answer("Fixed: the comment now says 'receipt'.")
user("What line length does the formatter use?")
read(".formatter.exs", note="look it up")
answer("110 characters (line_length in .formatter.exs).")
user("Which Postgres image does CI use?")
read(".github/workflows/ci.yml", note="look it up")
answer("postgres:16, as a service container.")
user("Which Phoenix version does mix.exs ask for?")
bash("grep -n ':phoenix,' mix.exs", "Find the dependency", note="look it up")
answer("~> 1.7.14.")
user("Show me the last three commits.")
bash("git log --oneline -3", "The last commits", note="look")
answer("Here are the last three commits (see the output above).")
user("In README.md, write 'Oslo, Bergen and Trondheim' instead of 'Oslo and Bergen'.")
read("README.md", note="the sentence")
edit("README.md", "(Oslo and Bergen)", "(Oslo, Bergen and Trondheim)", note="the wording")
answer("Done.")
user("What is the production database pool size if POOL_SIZE is not set?")
read("config/runtime.exs", note="look it up")
answer('10: pool_size falls back to "10" when POOL_SIZE is unset.')
user("Does the mix setup alias also run the seeds?")
read("mix.exs", note="look at the aliases")
answer("Yes: setup runs deps.get and ecto.setup, and ecto.setup ends with `run priv/repo/seeds.exs`.")
user("Run the formatter over the whole project.")
bash("mix format", "Format everything", note="format")
answer("Done; mix format reported no errors.")
user("List the files under test/.")
bash("find test -type f | sort", "List the test files", note="list")
answer("test/belayboard/bookings_test.exs, test/belayboard/reminders_test.exs and test/support/fixtures.ex.")


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
                "tags": ["belayboard", *tags.split(",")],
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
        "project": "belayboard",
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
