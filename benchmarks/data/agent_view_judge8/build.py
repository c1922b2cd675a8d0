# ruff: noqa: E501
"""Build the agent-view judge8 scenario: memories.jsonl, project.json and steps.json.

One made-up project, `stagedoor` (a Rails 7.2 API for a mid-size theatre's box office: seat maps, seat holds,
Stripe Checkout, Prawn ticket PDFs, a door-scanner PWA; Sidekiq, PostgreSQL 16, deployed with Kamal 2), with
52 memories of the kind a team records (decisions, rejected alternatives, conventions, gotchas, facts, a
preference, todos, an older and a newer value of one setting), the project's source files, and five scripted
coding sessions whose steps are each labelled with the memories that matter for that step. Written blind, by
hand, for codememory: the writer read only benchmarks/data/agent_view/build.py (format, helpers, checks, rules).

    python benchmarks/data/agent_view_judge8/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge8/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name (prefix `sd_`); the file ids are `mem_` + the first 8 hex digits of
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

(The examples inside the rule come from the original agent_view set and are kept verbatim; here the same rule
is applied to stagedoor's values: HOLD_TTL, DejaVuSans, request.raw_post, bin/kamal deploy, ...)

Older/newer pair: sd_hold_ttl_old (holds last 10 minutes) was superseded by sd_hold_ttl_new (7 minutes); only
the newer one is labelled relevant, the older one is relevant to no step.
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
FIRST, LAST = datetime(2025, 1, 13, 8, 30, tzinfo=UTC), datetime(2026, 11, 2, 15, 0, tzinfo=UTC)


def mem_id(key: str) -> str:
    return "mem_" + hashlib.sha1(f"agent_view:{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------- memories
MEMS: list[tuple[str, str, float, str, str]] = [
    # key, category, importance, tags, text
    # --- seats and holds
    (
        "sd_hold_ttl_old",
        "fact",
        0.6,
        "holds,seats,checkout",
        "Seat holds expire after 10 minutes: HOLD_TTL = 10.minutes in app/services/seat_hold.rb, and HoldExpiryJob releases them.",
    ),
    (
        "sd_hold_lock",
        "gotcha",
        0.8,
        "holds,seats,postgres,concurrency",
        "Taking a hold must lock the seat rows with Seat.lock('FOR UPDATE SKIP LOCKED') inside the transaction in SeatHold.call. A Ruby-side `exists?` check raced and double-sold PARK-F-12 at the Peer Gynt premiere.",
    ),
    (
        "sd_seat_labels",
        "convention",
        0.7,
        "seats,seatmap",
        "Seat codes are SECTION-ROW-NUMBER (PARK-F-12, BALC-C-3, WC-1-2). Rows are letters without I and O (the hall skips them), and rows past Z continue AA, BB, CC: sort rows by Seat.row_rank (length first, then letter), never alphabetically.",
    ),
    (
        "sd_money_cents",
        "convention",
        0.7,
        "money,api",
        "Money is integer øre: price_cents / amount_cents columns with a currency column ('NOK'). No floats and no BigDecimal in JSON; serializers render *_cents as integers.",
    ),
    (
        "sd_hall_size",
        "fact",
        0.3,
        "seats,hall",
        "The main hall has 412 places: PARK 296, BALC 104 and WC 12 (wheelchair places, sold in pairs with a companion seat).",
    ),
    # --- payments
    (
        "sd_checkout_hosted",
        "decision",
        0.6,
        "payments,stripe,pci",
        "Payments go through Stripe Checkout (hosted page) created in app/services/checkout.rb; the API never sees card data.",
    ),
    (
        "sd_elements_rejected",
        "rejected_alternative",
        0.5,
        "payments,stripe,pci",
        "Rejected Stripe Elements with our own card form: it moves us from PCI SAQ A to SAQ A-EP, and the box office has no one to run the quarterly scans.",
    ),
    (
        "sd_stripe_raw_body",
        "gotcha",
        0.8,
        "payments,stripe,webhooks",
        "Stripe webhook signatures are computed over the raw body: Webhooks::StripeController must pass request.raw_post to Stripe::Webhook.construct_event. Re-serializing params (or request.body.read after params were parsed) fails with 'Stripe::SignatureVerificationError: No signatures found matching the expected signature for payload'.",
    ),
    (
        "sd_webhook_dedupe",
        "convention",
        0.8,
        "payments,stripe,webhooks,idempotency",
        "Stripe redelivers webhook events (up to 3 days). Record event.id in stripe_events (unique index on stripe_id) with StripeEvent.insert(..., unique_by: :stripe_id) and stop when nothing was inserted, before any side effect (confirmation mail, PDF job).",
    ),
    (
        "sd_checkout_expiry_min",
        "gotcha",
        0.7,
        "payments,stripe,holds",
        "Stripe refuses a Checkout Session expires_at less than 30 minutes ahead ('The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation'), so it cannot follow the seat hold. HoldExpiryJob must call Stripe::Checkout::Session.expire(hold.checkout_session_id) when it releases a hold.",
    ),
    (
        "sd_refund_policy",
        "decision",
        0.4,
        "payments,refunds,box-office",
        "Refunds are whole orders only, up to 24 h before curtain, done by box office staff in Admin::RefundsController; partial refunds were turned down by the box office manager.",
    ),
    # --- tickets, PDFs, QR, door scanning
    (
        "sd_ticket_code",
        "decision",
        0.8,
        "tickets,qr,scanner",
        "Ticket QR payload (app/lib/ticket_code.rb): the ticket id plus HMAC-SHA256 with TICKET_QR_SECRET truncated to 10 bytes, Base32-encoded upper case without '=' padding, so the QR stays alphanumeric mode. The door scanners' cheap cameras misread denser byte-mode codes; no Base64 and no JWTs in the QR.",
    ),
    (
        "sd_prawn_fonts",
        "gotcha",
        0.8,
        "tickets,pdf,prawn",
        "Prawn's built-in Helvetica only covers Windows-1252: names like 'Łukasz' or 'Đorđe' raise Prawn::Errors::IncompatibleStringEncoding ('Your document includes text that's not compatible with the Windows-1252 character set'). Ticket PDFs must register the bundled DejaVuSans (app/assets/fonts/DejaVuSans.ttf and DejaVuSans-Bold.ttf) with font_families.update and use it.",
    ),
    (
        "sd_pdf_in_job",
        "convention",
        0.6,
        "tickets,pdf,sidekiq",
        "Ticket PDFs are rendered by TicketPdfJob (queue pdf) after payment and attached with Active Storage; never render a PDF inside a request.",
    ),
    (
        "sd_scanner_offline",
        "decision",
        0.6,
        "scanner,door,offline",
        "The door scanner PWA downloads the performance's ticket codes at doors-open and validates offline; it posts scans in batches to POST /api/v1/scans and the first scan of a ticket wins.",
    ),
    (
        "sd_postmark",
        "fact",
        0.4,
        "email,postmark",
        "Transactional mail goes through Postmark (postmark-rails), message stream 'tickets'; TicketMailer.confirmation attaches the PDFs.",
    ),
    # --- jobs
    (
        "sd_sidekiq_args",
        "convention",
        0.7,
        "sidekiq,jobs",
        "Sidekiq job arguments are ids and plain strings only, never ActiveRecord objects, symbols or Time objects (Sidekiq.strict_args! is on in config/initializers/sidekiq.rb and raises ArgumentError).",
    ),
    (
        "sd_sidekiq_queues",
        "fact",
        0.4,
        "sidekiq,jobs,config",
        "Sidekiq queues (config/sidekiq.yml): critical (webhooks, mail), default and pdf, weighted 5, 2 and 1, concurrency 5.",
    ),
    (
        "sd_job_role",
        "fact",
        0.6,
        "sidekiq,deploy,kamal",
        "Sidekiq runs as the Kamal role `job` (config/deploy.yml) next to `web`; `bin/kamal deploy` restarts both, and commands for the worker go through `bin/kamal app exec --roles=job`.",
    ),
    # --- API conventions
    (
        "sd_api_errors",
        "convention",
        0.7,
        "api,errors",
        "API errors are raised as ApiError subclasses (ApiError::Conflict, ApiError::Gone, ...) and rendered by Api::BaseController as { error: { code:, message: } }; never `render plain:` or `head :unprocessable_entity` from an action.",
    ),
    (
        "sd_alba",
        "decision",
        0.6,
        "api,serializers,json",
        "JSON is rendered with Alba serializers in app/serializers/ (render json: HoldSerializer.new(hold)); no jbuilder views and no as_json overrides in models.",
    ),
    (
        "sd_jbuilder_rejected",
        "rejected_alternative",
        0.4,
        "api,serializers,performance",
        "Rejected jbuilder: the seat map (412 seats with state) took 180 ms in jbuilder against 40 ms with Alba.",
    ),
    (
        "sd_utc_iso",
        "convention",
        0.7,
        "api,time",
        "The API renders timestamps as ISO 8601 in UTC with a Z (value.utc.iso8601); the frontends convert to Europe/Oslo. config.time_zone stays UTC.",
    ),
    # --- database
    (
        "sd_strong_migrations",
        "gotcha",
        0.8,
        "database,migrations,postgres",
        "strong_migrations is installed: add_index on an existing table fails with '=== Dangerous operation detected #strong_migrations ===' unless the migration has disable_ddl_transaction! and uses algorithm: :concurrently.",
    ),
    (
        "sd_pg16",
        "fact",
        0.3,
        "database,postgres,ops",
        "Production runs PostgreSQL 16 as a Kamal accessory on the same Hetzner CX32; nightly pg_dump to a Storage Box.",
    ),
    # --- tests and CI
    (
        "sd_rspec_factories",
        "convention",
        0.6,
        "tests,rspec,factorybot",
        "Specs are RSpec with FactoryBot factories in spec/factories/; no Rails fixtures, and request specs live in spec/requests/.",
    ),
    (
        "sd_stripe_stubs",
        "convention",
        0.7,
        "tests,stripe,webmock",
        "Specs never reach Stripe: WebMock blocks the network, and Stripe calls are stubbed with stub_stripe(:method, :path) from spec/support/stripe_helpers.rb with the JSON bodies in spec/fixtures/stripe/.",
    ),
    (
        "sd_ci_checks",
        "convention",
        0.6,
        "ci,rubocop,brakeman",
        "CI (.github/workflows/ci.yml) runs bin/rubocop, bin/brakeman --no-pager and bin/rspec; any brakeman warning fails the build, so run bin/brakeman locally before pushing, not just rubocop.",
    ),
    # --- workflow and deploy
    (
        "sd_commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Commit subjects: lowercase area prefix (holds:, payments:, tickets:, scans:, ops:), imperative, at most 60 characters; put the Linear issue (SD-123) in the body when there is one.",
    ),
    (
        "sd_kamal_deploy",
        "decision",
        0.7,
        "deploy,kamal,ops",
        "Production is deployed with Kamal 2 from a laptop: `bin/kamal deploy` (config/deploy.yml, secrets in .kamal/secrets from 1Password). No CD pipeline on purpose.",
    ),
    (
        "sd_show_day_freeze",
        "preference",
        0.7,
        "deploy,box-office",
        "No production deploys on show days after 16:00 Oslo time (box office and door scanning run from 17:00); check with the user before deploying in the afternoon.",
    ),
    # --- the newer value of the hold TTL
    (
        "sd_hold_ttl_new",
        "decision",
        0.8,
        "holds,seats,checkout",
        "Seat holds expire after 7 minutes now, not 10: HOLD_TTL = 7.minutes in app/services/seat_hold.rb. Abandoned carts were blocking premiere seats; agreed with the box office in September 2026.",
    ),
    # --- everything else (true, but for none of the scripted steps)
    (
        "sd_release_tags",
        "convention",
        0.4,
        "release,git",
        "Releases are tagged vYYYY.MM.N (v2026.10.2) on main after the deploy; the tag message lists the Linear issues.",
    ),
    (
        "sd_release_notes",
        "convention",
        0.3,
        "release,docs",
        "Release notes for the box office are written in Norwegian in docs/release-notes/ and mailed on Monday; the technical CHANGELOG stays English.",
    ),
    (
        "sd_test_time",
        "convention",
        0.4,
        "tests,time",
        "Specs that depend on the clock use travel_to with a fixed time in Europe/Oslo summer time, never Time.now arithmetic.",
    ),
    (
        "sd_test_parallel",
        "gotcha",
        0.4,
        "tests,ci,postgres",
        "bin/rspec in CI runs with parallel_tests (4 processes); a spec that truncates seats breaks the others, use transactional fixtures only.",
    ),
    (
        "sd_config_env",
        "convention",
        0.5,
        "config,env",
        "Runtime settings are read with ENV.fetch('NAME') in config/initializers/*, so a missing variable fails at boot, not on the first request; no Rails credentials for secrets.",
    ),
    (
        "sd_config_hall",
        "fact",
        0.3,
        "config,seats,hall",
        "The seat map geometry (x/y of every seat for the SVG) is config/halls/main.yml; changing it needs the frontend's cache busted.",
    ),
    (
        "sd_migration_backfill",
        "convention",
        0.5,
        "database,migrations",
        "Data backfills are rake tasks in lib/tasks/backfill/, run once by hand after the deploy, never code inside a schema migration.",
    ),
    (
        "sd_migration_enum",
        "gotcha",
        0.4,
        "database,migrations,postgres",
        "Ticket state is a Postgres enum (ticket_state); adding a value needs its own migration with disable_ddl_transaction!, and values can never be removed.",
    ),
    (
        "sd_build_assets",
        "fact",
        0.3,
        "build,admin,assets",
        "Only the staff admin has assets: `bin/rails tailwindcss:build` builds them in the Docker image; the public API has no asset build.",
    ),
    (
        "sd_build_image",
        "gotcha",
        0.4,
        "build,docker,deploy",
        "The Docker build needs libvips for Active Storage variants; the slim base image without it fails at boot with 'LoadError: Could not open library vips.so.42'.",
    ),
    (
        "sd_deploy_healthcheck",
        "fact",
        0.3,
        "deploy,kamal",
        "Kamal's proxy healthcheck is GET /up; boot takes about 25 s, and deploy_timeout is 60 in config/deploy.yml.",
    ),
    (
        "sd_deploy_rollback",
        "convention",
        0.4,
        "deploy,kamal,ops",
        "Roll back with `bin/kamal rollback <version>` (versions from `bin/kamal app containers`); never hotfix on the server.",
    ),
    (
        "sd_gdpr_delete",
        "decision",
        0.5,
        "privacy,customers",
        "Customer data is anonymised 18 months after the last performance attended (AnonymiseCustomersJob, monthly); orders keep amounts for the accounts.",
    ),
    (
        "sd_accounting_export",
        "fact",
        0.4,
        "accounting,export",
        "The accountant gets a monthly CSV of settled payouts from Stripe, not from our database.",
    ),
    (
        "sd_season_tickets",
        "note",
        0.3,
        "subscriptions",
        "Season subscriptions (abonnement) are sold by the box office by hand; there is no subscription model in the API.",
    ),
    (
        "sd_admin_auth",
        "decision",
        0.5,
        "admin,auth",
        "Staff sign in to the admin with the Rails 8-style authentication generator (sessions table), not Devise; 2FA via TOTP is required for refund rights.",
    ),
    (
        "sd_rate_limit",
        "fact",
        0.4,
        "api,rate-limit",
        "rack-attack throttles POST /api/v1/holds to 20 per minute per IP; the premiere sale in 2025 saw bots.",
    ),
    (
        "sd_logging",
        "convention",
        0.4,
        "logging,privacy",
        "Logs are lograge JSON; customer e-mail addresses and names are filtered (config.filter_parameters includes :email, :name).",
    ),
    (
        "sd_todo_wallet",
        "todo",
        0.3,
        "tickets,wallet",
        "TODO: Apple Wallet / Google Wallet passes for tickets (asked for by the marketing team).",
    ),
    (
        "sd_todo_wc_holds",
        "todo",
        0.4,
        "seats,holds,accessibility",
        "TODO: wheelchair places (section WC) should be holdable online only together with their companion seat.",
    ),
    (
        "sd_todo_scan_stats",
        "todo",
        0.3,
        "scanner,reports",
        "TODO: show no-show rates per performance from the scans table in the admin.",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# stagedoor

Box-office API of Trøndelag Teaterverksted: seat maps, seat holds, Stripe Checkout, ticket PDFs and the
door scanner's ticket lists.

- `bin/setup` then `bin/dev` (Rails on :3000, Sidekiq, Stripe CLI forwarding webhoks)
- `bin/rspec` runs the specs (Postgres 16 on localhost:5432)
- `bin/kamal deploy` ships to production (see config/deploy.yml)
""",
    "Gemfile": """source "https://rubygems.org"

ruby "3.3.5"

gem "rails", "~> 7.2.1"
gem "pg", "~> 1.5"
gem "puma", ">= 6.4"
gem "sidekiq", "~> 7.3"
gem "alba", "~> 3.2"
gem "stripe", "~> 12.6"
gem "prawn", "~> 2.5"
gem "prawn-qrcode", "~> 0.5"
gem "base32", "~> 0.3"
gem "postmark-rails", "~> 0.22"
gem "strong_migrations", "~> 2.0"
gem "rack-attack", "~> 6.7"
gem "lograge", "~> 0.14"
gem "kamal", "~> 2.2", require: false

group :development, :test do
  gem "rspec-rails", "~> 7.0"
  gem "factory_bot_rails", "~> 6.4"
  gem "rubocop-rails-omakase", require: false
  gem "brakeman", require: false
end

group :test do
  gem "webmock", "~> 3.24"
end
""",
    "config/routes.rb": """Rails.application.routes.draw do
  get "up" => "rails/health#show", as: :rails_health_check

  namespace :api do
    namespace :v1 do
      resources :performances, only: %i[index show] do
        get :seatmap, on: :member
        get :door_list, on: :member
      end
      resources :holds, only: %i[create destroy]
      resources :scans, only: :create
    end
  end

  post "webhooks/stripe" => "webhooks/stripe#create"
end
""",
    "config/sidekiq.yml": """:concurrency: 5
:queues:
  - [critical, 5]
  - [default, 2]
  - [pdf, 1]
""",
    "config/initializers/sidekiq.rb": """Sidekiq.strict_args!

Sidekiq.configure_server do |config|
  config.redis = { url: ENV.fetch("REDIS_URL") }
end

Sidekiq.configure_client do |config|
  config.redis = { url: ENV.fetch("REDIS_URL") }
end
""",
    "config/deploy.yml": """service: stagedoor
image: teaterverksted/stagedoor

servers:
  web:
    - 95.217.40.12
  job:
    hosts:
      - 95.217.40.12
    cmd: bundle exec sidekiq -C config/sidekiq.yml

proxy:
  ssl: true
  host: billett.teaterverksted.no
  healthcheck:
    path: /up

deploy_timeout: 60

env:
  secret:
    - RAILS_MASTER_KEY
    - DATABASE_URL
    - REDIS_URL
    - STRIPE_SECRET_KEY
    - STRIPE_WEBHOOK_SECRET
    - TICKET_QR_SECRET
    - POSTMARK_API_TOKEN
""",
    "app/controllers/api/base_controller.rb": """module Api
  class BaseController < ActionController::API
    rescue_from ApiError do |error|
      render json: { error: { code: error.code, message: error.message } }, status: error.status
    end
  end
end
""",
    "app/controllers/api/v1/holds_controller.rb": """module Api
  module V1
    class HoldsController < Api::BaseController
      def create
        hold = SeatHold.call(performance: performance, seat_codes: params.require(:seats))
        render json: HoldSerializer.new(hold), status: :created
      end

      def destroy
        Hold.find_by!(token: params[:id]).release!
        head :no_content
      end

      private

      def performance
        Performance.on_sale.find(params.require(:performance_id))
      end
    end
  end
end
""",
    "app/controllers/api/v1/performances_controller.rb": """module Api
  module V1
    class PerformancesController < Api::BaseController
      def index
        render json: PerformanceSerializer.new(Performance.on_sale.order(:starts_at))
      end

      def seatmap
        seats = performance.seats.includes(:ticket).order(:section, :row, :number)
        render json: SeatSerializer.new(seats)
      end

      def door_list
        codes = performance.tickets.paid.pluck(:code)
        render json: { performance_id: performance.id, codes: codes }
      end

      private

      def performance
        @performance ||= Performance.find(params[:id])
      end
    end
  end
end
""",
    "app/controllers/webhooks/stripe_controller.rb": """module Webhooks
  class StripeController < ActionController::API
    def create
      event = Stripe::Webhook.construct_event(
        params.to_unsafe_h.except(:controller, :action).to_json,
        request.headers["Stripe-Signature"],
        ENV.fetch("STRIPE_WEBHOOK_SECRET")
      )
      PaymentEvents.handle(event)
      head :ok
    rescue JSON::ParserError, Stripe::SignatureVerificationError => e
      Rails.logger.warn("stripe webhook rejected: #{e.class}")
      head :bad_request
    end
  end
end
""",
    "app/services/seat_hold.rb": """class SeatHold
  HOLD_TTL = 7.minutes

  def self.call(performance:, seat_codes:)
    new(performance, seat_codes).call
  end

  def initialize(performance, seat_codes)
    @performance = performance
    @seat_codes = Array(seat_codes)
  end

  def call
    Hold.transaction do
      seats = @performance.seats.where(code: @seat_codes).available.lock("FOR UPDATE SKIP LOCKED").to_a
      raise ApiError::Conflict, "seats no longer available" if seats.size != @seat_codes.size

      hold = Hold.create!(performance: @performance, seats: seats, expires_at: HOLD_TTL.from_now)
      HoldExpiryJob.set(wait_until: hold.expires_at).perform_later(hold.id)
      hold
    end
  end
end
""",
    "app/services/checkout.rb": """class Checkout
  def self.create(hold, success_url:, cancel_url:)
    session = Stripe::Checkout::Session.create(
      mode: "payment",
      line_items: hold.seats.map { |seat| line_item(seat) },
      success_url: success_url,
      cancel_url: cancel_url,
      metadata: { hold_id: hold.id },
      expires_at: 30.minutes.from_now.to_i + 60
    )
    hold.update!(checkout_session_id: session.id)
    session
  end

  def self.line_item(seat)
    { price_data: { currency: "nok", unit_amount: seat.price_cents, product_data: { name: seat.label } }, quantity: 1 }
  end
end
""",
    "app/services/payment_events.rb": """module PaymentEvents
  module_function

  def handle(event)
    case event.type
    when "checkout.session.completed"
      order = Order.create_from_checkout!(event.data.object)
      TicketMailer.confirmation(order.id).deliver_later(queue: :critical)
      order.tickets.each { |ticket| TicketPdfJob.perform_later(ticket.id) }
    when "checkout.session.expired"
      Hold.find_by(checkout_session_id: event.data.object.id)&.release!
    end
  end
end
""",
    "app/serializers/hold_serializer.rb": """class HoldSerializer
  include Alba::Resource

  attributes :token
  attribute :seats do |hold|
    hold.seats.map(&:code)
  end
  attribute :total_cents do |hold|
    hold.seats.sum(&:price_cents)
  end
end
""",
    "app/jobs/hold_expiry_job.rb": """class HoldExpiryJob < ApplicationJob
  queue_as :default

  def perform(hold_id)
    hold = Hold.find_by(id: hold_id)
    return if hold.nil? || hold.converted?

    hold.release!
  end
end
""",
    "app/jobs/ticket_pdf_job.rb": """class TicketPdfJob < ApplicationJob
  queue_as :pdf

  def perform(ticket_id)
    ticket = Ticket.find(ticket_id)
    pdf = TicketPdf.new(ticket).render
    ticket.pdf.attach(io: StringIO.new(pdf), filename: "billett-#{ticket.code}.pdf", content_type: "application/pdf")
  end
end
""",
    "app/pdfs/ticket_pdf.rb": """class TicketPdf
  include Prawn::View

  def initialize(ticket)
    @ticket = ticket
  end

  def document
    @document ||= Prawn::Document.new(page_size: "A6", margin: 24)
  end

  def render
    text @ticket.performance.title, size: 16, style: :bold
    text I18n.l(@ticket.performance.starts_at.in_time_zone("Europe/Oslo"), format: :long)
    move_down 8
    text "#{@ticket.seat.label}  ·  #{@ticket.order.customer_name}"
    move_down 12
    print_qr_code TicketCode.for(@ticket), extent: 140
    document.render
  end
end
""",
    "app/lib/ticket_code.rb": """require "openssl"
require "base64"

module TicketCode
  module_function

  def for(ticket)
    payload = ticket.id.to_s
    mac = OpenSSL::HMAC.digest("SHA256", secret, payload)
    "#{payload}.#{Base64.urlsafe_encode64(mac)}"
  end

  def secret
    ENV.fetch("TICKET_QR_SECRET")
  end
end
""",
    "app/models/seat.rb": """class Seat < ApplicationRecord
  belongs_to :performance
  has_one :ticket

  scope :available, -> { where(state: "free") }

  def self.row_rank(row)
    [row.length, row]
  end

  def label
    "#{section} rad #{row} sete #{number}"
  end
end
""",
    "app/models/stripe_event.rb": """class StripeEvent < ApplicationRecord
  # stripe_id has a unique index (db/migrate/20250302091500_create_stripe_events.rb)
  validates :stripe_id, presence: true
end
""",
    "db/migrate/20260914101200_create_scans.rb": """class CreateScans < ActiveRecord::Migration[7.2]
  def change
    create_table :scans do |t|
      t.references :performance, null: false, foreign_key: true
      t.bigint :ticket_id, null: false
      t.string :device, null: false
      t.datetime :scanned_at, null: false
      t.timestamps
    end
  end
end
""",
    "spec/requests/holds_spec.rb": """require "rails_helper"

RSpec.describe "POST /api/v1/holds" do
  let(:performance) { create(:performance, :on_sale) }

  it "holds free seats" do
    create(:seat, performance: performance, code: "PARK-F-12")
    post "/api/v1/holds", params: { performance_id: performance.id, seats: ["PARK-F-12"] }
    expect(response).to have_http_status(:created)
    expect(response.parsed_body["seats"]).to eq(["PARK-F-12"])
  end
end
""",
    "spec/pdfs/ticket_pdf_spec.rb": """require "rails_helper"

RSpec.describe TicketPdf do
  it "renders a one-page A6 ticket" do
    ticket = create(:ticket)
    pdf = PDF::Inspector::Page.analyze(described_class.new(ticket).render)
    expect(pdf.pages.size).to eq(1)
  end
end
""",
    "spec/factories/tickets.rb": """FactoryBot.define do
  factory :ticket do
    performance
    seat { association :seat, performance: performance }
    order { association :order, customer_name: "Kari Nordmann" }
    state { "paid" }
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
        env: { POSTGRES_PASSWORD: postgres }
        ports: ["5432:5432"]
    steps:
      - uses: actions/checkout@v4
      - uses: ruby/setup-ruby@v1
        with: { bundler-cache: true }
      - run: bin/rubocop
      - run: bin/brakeman --no-pager
      - run: bin/rails db:setup && bin/rspec
""",
    "CHANGELOG.md": """# Changelog

## 2026.10.2
- holds: 7 minute holds
- scans: batch endpoint for the door scanner

## 2026.10.1
- tickets: Nynorsk month names on the PDF
""",
    ".rubocop.yml": """inherit_gem:
  rubocop-rails-omakase: rubocop.yml

AllCops:
  TargetRubyVersion: 3.3
  Exclude:
    - "db/schema.rb"
    - "bin/*"
""",
    "spec/jobs/hold_expiry_job_spec.rb": """require "rails_helper"

RSpec.describe HoldExpiryJob do
  it "releases an unpaid hold" do
    hold = create(:hold)
    described_class.perform_now(hold.id)
    expect(hold.reload).to be_released
  end
end
""",
    "spec/support/stripe_helpers.rb": """module StripeHelpers
  # Stubs one Stripe API call with a body from spec/fixtures/stripe/ (WebMock blocks everything else).
  def stub_stripe(method, path, fixture: nil, status: 200)
    body = fixture ? Rails.root.join("spec/fixtures/stripe/#{fixture}.json").read : "{}"
    stub_request(method, "https://api.stripe.com#{path}").to_return(status: status, body: body)
  end
end

RSpec.configure { |config| config.include StripeHelpers }
""",
    ".gitignore": """/.bundle
/log/*
/tmp/*
/storage/*
/.kamal/secrets*
/coverage
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


# Session 1: the hold countdown, then the Checkout expiry, then two commits.
session("hold-expiry")
user(
    "the seat countdown in the webshop starts at 10:00 but holds die way before that. can POST /holds just return when the hold expires so the frontend stops guessing"
)
bash("git status -sb", "Show the working tree state", note="routine")
read(
    "app/controllers/api/v1/holds_controller.rb",
    "sd_hold_ttl_new",
    "sd_alba",
    "sd_utc_iso",
    note="the endpoint",
)
read(
    "app/services/seat_hold.rb",
    "sd_hold_ttl_new",
    "sd_hold_lock",
    note="where the hold and its TTL are made",
    uses=("sd_hold_ttl_new",),
)
read("app/serializers/hold_serializer.rb", "sd_alba", "sd_utc_iso", note="the response body")
edit(
    "app/serializers/hold_serializer.rb",
    """  attribute :total_cents do |hold|
    hold.seats.sum(&:price_cents)
  end
""",
    """  attribute :total_cents do |hold|
    hold.seats.sum(&:price_cents)
  end
  attribute :expires_at do |hold|
    hold.expires_at.utc.iso8601
  end
""",
    "sd_alba",
    "sd_utc_iso",
    note="add expires_at",
    uses=("sd_utc_iso",),
)
bash("grep -rn HoldSerializer app spec", "Find other users of the serializer", note="routine")
bash("bin/rspec spec/requests/holds_spec.rb", "Run the holds request spec", note="routine")
bash("bin/rubocop app/serializers spec/requests", "Lint the changed files", note="routine")
answer(
    "POST /api/v1/holds now returns `expires_at` (UTC, ISO 8601 with Z). Holds last 7 minutes (SeatHold::HOLD_TTL) since "
    "the September change, so the 10:00 in the webshop is a stale frontend constant: the countdown should use expires_at.",
    "sd_hold_ttl_new",
    "sd_utc_iso",
)
user(
    "thx. also the stripe checkout page stays open way longer than the hold, ppl end up paying for seats that were already released. make checkout expire together w the hold"
)
read(
    "app/services/checkout.rb",
    "sd_hold_ttl_new",
    "sd_checkout_expiry_min",
    "sd_checkout_hosted",
    note="how the session is created",
    uses=("sd_checkout_hosted",),
)
read(
    "app/jobs/hold_expiry_job.rb",
    "sd_checkout_expiry_min",
    "sd_hold_ttl_new",
    "sd_sidekiq_args",
    note="the job that releases holds",
    uses=("sd_checkout_expiry_min",),
)
edit(
    "app/jobs/hold_expiry_job.rb",
    """    return if hold.nil? || hold.converted?

    hold.release!
""",
    """    return if hold.nil? || hold.converted?

    hold.release!
    expire_checkout(hold.checkout_session_id) if hold.checkout_session_id
  end

  private

  # Checkout's own expires_at must be >= 30 min ahead, so the session is closed here, with the hold.
  def expire_checkout(session_id)
    Stripe::Checkout::Session.expire(session_id)
  rescue Stripe::InvalidRequestError => e
    Rails.logger.info("checkout #{session_id} not expired: #{e.message}") # already completed or expired
""",
    "sd_checkout_expiry_min",
    "sd_sidekiq_args",
    note="expire the Checkout session with the hold",
    uses=("sd_checkout_expiry_min",),
)
bash("git diff app/jobs", "Review the job change", note="routine")
bash("bin/rspec spec/jobs/hold_expiry_job_spec.rb", "Run the job spec", note="routine")
answer(
    "HoldExpiryJob now calls Stripe::Checkout::Session.expire when it releases a hold (errors for sessions that already "
    "completed or expired are logged and ignored). Setting the session's expires_at to the hold's 7 minutes is not possible: "
    "Stripe rejects expires_at less than 30 minutes ahead. The job spec passes.",
    "sd_checkout_expiry_min",
    "sd_hold_ttl_new",
)
user("ok commit, two commits if it makes sense")
bash("git status -sb", "See what changed", note="routine")
bash("git diff --stat", "Summarise the diff", note="routine")
bash(
    "git add app/serializers/hold_serializer.rb && git commit -q -m 'holds: return expires_at from POST /holds'",
    "Commit the response change",
    "sd_commit_style",
    note="first commit",
    uses=("sd_commit_style",),
)
bash(
    "git add app/jobs/hold_expiry_job.rb && git commit -q -m 'holds: expire the checkout session with the hold' && git log --oneline -2",
    "Commit the job change",
    "sd_commit_style",
    note="second commit",
    uses=("sd_commit_style",),
)
answer(
    "Two commits: `holds: return expires_at from POST /holds` and `holds: expire the checkout session with the hold`.",
    "sd_commit_style",
)

# Session 2: ticket PDFs with non-Latin-1 names, a deploy, a question, lint before a push.
session("ticket-pdf")
user(
    "TicketPdfJob keeps failing in sidekiq for a handful of orders: Prawn::Errors::IncompatibleStringEncoding. one of them is for 'Łucja Wróbel'. can u fix"
)
bash("git pull -q --rebase && git status -sb", "Update and check the branch", note="routine")
read("app/jobs/ticket_pdf_job.rb", "sd_prawn_fonts", note="the failing job")
read("app/pdfs/ticket_pdf.rb", "sd_prawn_fonts", note="the PDF layout")
bash("ls app/assets/fonts", "Look for bundled fonts", "sd_prawn_fonts", note="find the font", uses=("sd_prawn_fonts",))
edit(
    "app/pdfs/ticket_pdf.rb",
    """  def document
    @document ||= Prawn::Document.new(page_size: "A6", margin: 24)
  end
""",
    """  FONT_DIR = Rails.root.join("app/assets/fonts")

  def document
    @document ||= Prawn::Document.new(page_size: "A6", margin: 24).tap do |doc|
      # Helvetica is Windows-1252 only: names like Łucja raise IncompatibleStringEncoding
      doc.font_families.update(
        "DejaVuSans" => { normal: FONT_DIR.join("DejaVuSans.ttf").to_s, bold: FONT_DIR.join("DejaVuSans-Bold.ttf").to_s }
      )
      doc.font("DejaVuSans")
    end
  end
""",
    "sd_prawn_fonts",
    note="register DejaVuSans",
    uses=("sd_prawn_fonts",),
)
bash("git diff", "Review the change", note="routine")
bash("bin/rspec spec/pdfs/ticket_pdf_spec.rb", "Run the PDF spec", note="routine")
bash("bin/rubocop app/pdfs", "Lint the changed file", note="routine")
answer(
    "Prawn's built-in Helvetica only covers Windows-1252, so Ł failed. TicketPdf now registers the bundled DejaVuSans "
    "(regular and bold) from app/assets/fonts and uses it; the PDF spec passes. The failed jobs are in the "
    "Sidekiq retry set and will go through once this is deployed.",
    "sd_prawn_fonts",
)
user("great. ship it and rerun the failed ones")
bash(
    "TZ=Europe/Oslo date '+%A %H:%M'",
    "Check the local time before deploying",
    "sd_show_day_freeze",
    "sd_kamal_deploy",
    note="show-day freeze check",
    uses=("sd_show_day_freeze",),
)
bash(
    "bin/kamal deploy",
    "Deploy web and job roles",
    "sd_kamal_deploy",
    "sd_job_role",
    "sd_show_day_freeze",
    note="deploy",
    uses=("sd_kamal_deploy",),
)
bash(
    "bin/kamal app exec --roles=job 'bin/rails runner \"Sidekiq::RetrySet.new.select { |j| j.klass == %q(TicketPdfJob) }.each(&:retry)\"'",
    "Retry the failed PDF jobs on the worker",
    "sd_job_role",
    note="retry on the job role",
    uses=("sd_job_role",),
)
answer(
    "Deployed with bin/kamal deploy (web and the job role both restarted, it's Tuesday morning so outside the show-day "
    "freeze) and retried the TicketPdfJob entries from the retry set on the job role.",
    "sd_kamal_deploy",
    "sd_job_role",
    "sd_show_day_freeze",
)
user("before i push: rubocop + specs pls")
bash("bin/rubocop", "Lint", "sd_ci_checks", note="lint")
bash("bin/brakeman --no-pager", "Security scan as CI does", "sd_ci_checks", note="brakeman", uses=("sd_ci_checks",))
bash("bin/rspec", "Run the specs", "sd_ci_checks", note="specs")
answer("rubocop, brakeman (CI fails on any warning) and the 214 specs are all green: good to push.", "sd_ci_checks")

# Session 3: the webhook signature regression, duplicate mails, an index, commits.
session("stripe-webhooks")
user(
    "prod log is full of 'stripe webhook rejected: Stripe::SignatureVerificationError' since yesterdays deploy and nobody gets confirmation mails. look at the webhook controller"
)
read("app/controllers/webhooks/stripe_controller.rb", "sd_stripe_raw_body", note="the controller")
edit(
    "app/controllers/webhooks/stripe_controller.rb",
    """        params.to_unsafe_h.except(:controller, :action).to_json,
""",
    """        request.raw_post, # the signature covers the exact bytes Stripe sent
""",
    "sd_stripe_raw_body",
    note="verify the raw body",
    uses=("sd_stripe_raw_body",),
)
bash("bin/rspec spec/requests/webhooks", "Run the webhook specs", note="routine")
bash("bin/rubocop app/controllers/webhooks", "Lint the controller", note="routine")
answer(
    "The refactor verified the signature over re-serialized params; Stripe signs the raw bytes, so every event failed. "
    "It passes request.raw_post again. Stripe retries the failed events for up to 3 days, so the missing confirmations "
    "will arrive once this is deployed.",
    "sd_stripe_raw_body",
    "sd_webhook_dedupe",
)
user("ok but when stripe resends all of those will ppl get 2 mails? some did get theirs before it broke i think")
read("app/services/payment_events.rb", "sd_webhook_dedupe", note="the event handler")
read("app/models/stripe_event.rb", "sd_webhook_dedupe", note="the event log", uses=("sd_webhook_dedupe",))
edit(
    "app/services/payment_events.rb",
    """  def handle(event)
    case event.type
""",
    """  def handle(event)
    # Stripe redelivers events: handle each id once, before any mail or job
    inserted = StripeEvent.insert({ stripe_id: event.id, event_type: event.type }, unique_by: :stripe_id)
    return if inserted.rows.empty?

    case event.type
""",
    "sd_webhook_dedupe",
    note="dedupe on event id",
    uses=("sd_webhook_dedupe",),
)
bash("git diff app/services", "Review the change", note="routine")
bash("bin/rspec spec/services", "Run the service specs", note="routine")
answer(
    "Not anymore: PaymentEvents.handle now records event.id in stripe_events (unique on stripe_id) first and returns when "
    "the id was already there, so a redelivered checkout.session.completed sends no second mail and no second PDF job. "
    "Events that failed signature checks were never recorded, so they are handled once when Stripe retries.",
    "sd_webhook_dedupe",
)
user("unrelated: door_list + scan lookups are slow on full nights. add an index on scans.ticket_id")
bash("ls db/migrate | tail -4", "Latest migrations", note="routine")
read("db/migrate/20260914101200_create_scans.rb", "sd_strong_migrations", note="the scans table")
bash(
    """cat > db/migrate/20261124081500_add_index_on_scans_ticket_id.rb <<'RUBY'
class AddIndexOnScansTicketId < ActiveRecord::Migration[7.2]
  disable_ddl_transaction!

  def change
    add_index :scans, :ticket_id, algorithm: :concurrently
  end
end
RUBY""",
    "Write the migration",
    "sd_strong_migrations",
    note="concurrent index",
    uses=("sd_strong_migrations",),
)
bash("bin/rails db:migrate && git diff --stat db/schema.rb", "Migrate locally", "sd_strong_migrations", note="migrate")
answer(
    "Added db/migrate/20261124081500_add_index_on_scans_ticket_id.rb: add_index with algorithm: :concurrently and "
    "disable_ddl_transaction!, so strong_migrations accepts it and scans is not locked while it builds.",
    "sd_strong_migrations",
)
user("commit: the two webhook fixes together, the index separately")
bash("git status -sb", "See what changed", note="routine")
bash("git diff --stat", "Summarise the diff", note="routine")
bash(
    "git add app/controllers/webhooks/stripe_controller.rb app/services/payment_events.rb && git commit -q -m 'payments: verify raw webhook body, handle events once'",
    "Commit the webhook fixes",
    "sd_commit_style",
    note="commit 1",
    uses=("sd_commit_style",),
)
bash(
    "git add db/migrate/20261124081500_add_index_on_scans_ticket_id.rb db/schema.rb && git commit -q -m 'scans: index scans.ticket_id' && git log --oneline -2",
    "Commit the index",
    "sd_commit_style",
    note="commit 2",
    uses=("sd_commit_style",),
)
answer(
    "Two commits: `payments: verify raw webhook body, handle events once` and `scans: index scans.ticket_id`.",
    "sd_commit_style",
)

# Session 4: door codes on a show day, then the seat map's row order.
session("door-codes")
user("pull main and tell me whats changed since friday")
bash("git pull -q --rebase", "Update main", note="routine")
bash("git log --oneline --since=friday", "Commits since Friday", note="routine")
answer("Six commits since Friday, mostly the webhook fixes, the scans index and a TicketCode refactor.")
user(
    "URGENT doors open 18:30. scanner says UGYLDIG for tickets bought this week, older ones scan fine. did someone change the qr codes??"
)
bash(
    "git log --oneline -5 -- app/lib app/pdfs",
    "Recent changes to ticket code and PDF",
    "sd_ticket_code",
    note="what changed",
)
read(
    "app/lib/ticket_code.rb",
    "sd_ticket_code",
    "sd_scanner_offline",
    note="the QR payload",
    uses=("sd_ticket_code",),
)
edit(
    "app/lib/ticket_code.rb",
    """require "openssl"
require "base64"
""",
    """require "openssl"
require "base32"
""",
    "sd_ticket_code",
    note="back to base32",
    uses=("sd_ticket_code",),
)
edit(
    "app/lib/ticket_code.rb",
    """    "#{payload}.#{Base64.urlsafe_encode64(mac)}"
""",
    """    # Base32 upper case, no padding, 10 bytes: QR alphanumeric mode for the scanners' cameras
    "#{payload}.#{Base32.encode(mac.byteslice(0, 10)).delete('=')}"
""",
    "sd_ticket_code",
    note="truncate and encode as before",
    uses=("sd_ticket_code",),
)
bash(
    "bin/rails runner 'puts TicketCode.for(Ticket.last)'",
    "Check a generated code",
    "sd_ticket_code",
    note="check",
)
answer(
    "Yes: last week's refactor switched the code to Base64 of the full HMAC; the scanners expect the ticket id plus a "
    "10-byte HMAC in unpadded upper-case Base32. TicketCode is back to that. It is a show day after 16:00, so tell me "
    "if you want it deployed now; the scanners load the ticket list at doors-open, so it has to be out before 18:30, "
    "and this week's tickets still have the bad code stored.",
    "sd_ticket_code",
    "sd_scanner_offline",
    "sd_show_day_freeze",
)
user("seatmap endpoint returns rows in a weird order, balcony has AA before B. fix the ordering pls")
read("app/controllers/api/v1/performances_controller.rb", "sd_seat_labels", note="the seatmap action")
read("app/models/seat.rb", "sd_seat_labels", note="the seat model", uses=("sd_seat_labels",))
edit(
    "app/controllers/api/v1/performances_controller.rb",
    """        seats = performance.seats.includes(:ticket).order(:section, :row, :number)
""",
    """        seats = performance.seats.includes(:ticket).to_a
          .sort_by { |seat| [seat.section, Seat.row_rank(seat.row), seat.number] } # Z before AA
""",
    "sd_seat_labels",
    note="sort by row_rank",
    uses=("sd_seat_labels",),
)
bash("bin/rspec spec/requests", "Run the request specs", note="routine")
bash("git diff", "Review", note="routine")
answer(
    "The seatmap sorted rows as strings. It now sorts by Seat.row_rank (length, then letter), so BALC rows go A..Z, then AA, BB.",
    "sd_seat_labels",
)

# Session 5: chores that need no memory at all (every step's `relevant` is empty).
session("chores")
user("typo in README: webhoks -> webhooks")
read("README.md", note="the typo")
edit("README.md", "forwarding webhoks)", "forwarding webhooks)", note="fix it")
answer("Fixed.")
user("which ruby + rails are we on, and what port does postgres need to be on for the specs")
read("Gemfile", note="look it up")
read("README.md", note="look it up")
answer("Ruby 3.3.5, Rails ~> 7.2.1; the specs expect Postgres 16 on localhost:5432.")
user("how many serializers do we have? and list the jobs")
bash("ls app/serializers | wc -l", "Count serializer files", note="count")
bash("ls app/jobs", "List the jobs", note="list")
answer("One serializer (hold_serializer.rb); jobs: hold_expiry_job.rb and ticket_pdf_job.rb.")
user("show me the last 3 commits")
bash("git log --oneline -3", "Last commits", note="log")
answer("Listed above: the latest is `scans: index scans.ticket_id`.")
user("add coverage.xml and .env.local to .gitignore. and whats excluded in .rubocop.yml?")
read(".gitignore", note="the ignore file")
edit(".gitignore", "/coverage\n", "/coverage\ncoverage.xml\n.env.local\n", note="add the entries")
read(".rubocop.yml", note="the lint config")
answer("Added both to .gitignore. .rubocop.yml excludes db/schema.rb and bin/*.")
user("does routes.rb have a scans route? also whats the docker image name in deploy.yml")
read("config/routes.rb", note="the routes")
read("config/deploy.yml", note="the image name")
answer("Yes, `resources :scans, only: :create` under api/v1. The image is teaterverksted/stagedoor.")


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
                "tags": ["stagedoor", *tags.split(",")],
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
        "project": "stagedoor",
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
