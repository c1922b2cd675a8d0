# ruff: noqa: E501
"""Build the second (judge) agent-view scenario: memories.jsonl, project.json and steps.json.

One made-up project, `tallyhub` (a Go invoicing service: chi, pgx + sqlc, goose, River jobs, fpdf PDFs,
Postmark, Stripe webhooks), with the memories a team records (decisions, rejected alternatives, conventions,
gotchas, facts, preferences, todos, a vague note), the project's source files, and scripted coding sessions
whose steps are each labelled with the memories that matter for that step. Written blind (without reading
codememory's source, tests, benchmark code or results) as a held-out final judge for the same benchmark as
benchmarks/data/agent_view/; it follows that directory's build.py exactly (same id scheme, same checks, same
output layout), so the benchmark can run it with `--data benchmarks/data/agent_view_judge`.

    python benchmarks/data/agent_view_judge/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name; the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key) (the same scheme as agent_view/; no key is shared with that scenario). Tool-call
arguments may hold `{root}`, which the benchmark replaces with the project's absolute path. The build replays
every scripted `edit` on the files (each edit's oldString must occur exactly once at that point) and checks
that a file is read in a turn before it is edited there (each turn is a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone. Routine
steps (reading a file for an unrelated chore, running the tests, gofmt, git status) have none.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives), reads or edits the file the
memory points to for this task, or does what the memory prescribes where neither the user's request nor the
file being edited would have told it to. A memory the call merely agrees with (a pattern the file already
follows, a warning heeded by not doing something) is relevant, not used. Final answers have no `uses`.
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
    # --- money and tax
    (
        "money_minor_units",
        "convention",
        0.9,
        "money,go",
        "Money is money.Amount{Minor int64, Currency string}: integer minor units plus an ISO 4217 code. Never float64 for amounts, not even in tests or JSON (the API sends minor units as integers).",
    ),
    (
        "decimal_rejected",
        "rejected_alternative",
        0.4,
        "money,dependencies",
        "Rejected shopspring/decimal for amounts: int64 minor units are exact for everything we do, and decimal made the sqlc types and JSON awkward. Tax rates are basis points (2500 = 25.00 %).",
    ),
    (
        "zero_decimal",
        "gotcha",
        0.7,
        "money,currency,jpy",
        "JPY, KRW and ISK have no minor unit: ¥1,500 is Minor=1500. Never divide or multiply by 100 in formatting or conversion code; use money.Exponent(currency) from internal/money/money.go.",
    ),
    (
        "vat_per_line",
        "decision",
        0.7,
        "tax,vat,rounding",
        "VAT is computed per invoice line and rounded half-up to the minor unit with money.RoundHalfUp, then summed. Rounding only the invoice total gave 1-cent differences with DATEV exports.",
    ),
    (
        "vat_rates_table",
        "convention",
        0.7,
        "tax,vat",
        "VAT rates come from internal/tax/rates.go (RateBP(country, date), keyed by country and validity date). Never hard-code a rate like 1900 or 2500 in a handler or a test helper.",
    ),
    (
        "reverse_charge",
        "decision",
        0.8,
        "tax,vat,eu,b2b",
        "EU B2B reverse charge: business customer in another EU country with a VAT id verified in VIES (VATVerified) gets 0 % VAT and the invoice must print 'Reverse charge – Article 196 Council Directive 2006/112/EC'. Unverified VAT id: charge the customer country's VAT.",
    ),
    (
        "vies_flaky",
        "gotcha",
        0.5,
        "tax,vies",
        "The VIES VAT check is down or rate-limited several times a week (MS_UNAVAILABLE). verifyvat runs as a River job with retries and stores the result on the customer; never call VIES inside a request.",
    ),
    (
        "customer_currency",
        "fact",
        0.4,
        "money,customers",
        "A customer's currency is fixed when the customer is created; invoices in another currency are rejected with currency_mismatch. Changing it means a new customer record.",
    ),
    # --- invoices
    (
        "invoice_numbers_gapless",
        "gotcha",
        0.9,
        "invoices,numbering,postgres,legal",
        "Invoice numbers (INV-2026-000123) must be gapless per legal entity and year, auditors check. A Postgres SEQUENCE is not gapless: nextval is not undone by a rollback. Allocate with UPDATE invoice_sequences ... RETURNING inside the finalize transaction.",
    ),
    (
        "finalized_immutable",
        "convention",
        0.8,
        "invoices,credit-notes",
        "Finalized invoices are never edited or deleted: corrections are credit notes (CN-2026-000045, their own gapless sequence) that reference the original invoice.",
    ),
    (
        "email_in_tx",
        "convention",
        0.7,
        "invoices,email,river",
        "The invoice email is a River job (SendInvoiceEmail) inserted with InsertTx in the same transaction as finalize, so a rolled-back finalize never sends an email.",
    ),
    (
        "payment_terms",
        "fact",
        0.4,
        "invoices",
        "Default payment terms are net 14; an entity overrides them with entities.default_terms_days and a customer with customers.terms_days (customer wins).",
    ),
    (
        "issue_date_tz",
        "gotcha",
        0.5,
        "invoices,time",
        "issue_date and due_date are DATEs in the legal entity's timezone (entities.tz), not UTC: invoices finalized after 23:00 UTC had tomorrow's date for the Sydney entity.",
    ),
    # --- database
    (
        "sqlc",
        "convention",
        0.8,
        "database,sqlc,go",
        "SQL lives in internal/db/queries/*.sql; `make generate` (sqlc generate) writes internal/db/gen. Never edit internal/db/gen by hand, and commit the regenerated files with the query change.",
    ),
    (
        "goose",
        "convention",
        0.7,
        "database,migrations,goose",
        "Migrations are goose SQL files in migrations/, numbered sequentially (00042_credit_notes.sql), created with `goose -dir migrations create <name> sql -s`. Every file has a -- +goose Down section.",
    ),
    (
        "with_tx",
        "convention",
        0.6,
        "database,pgx",
        "Multi-statement writes go through db.WithTx(ctx, pool, func(q *gen.Queries, tx pgx.Tx) error); it retries serialization failures (40001) up to 3 times. Don't pass a bare pgx.Tx between packages.",
    ),
    (
        "pgx_pool",
        "fact",
        0.4,
        "database,postgres,deploy",
        "pgxpool MaxConns is 20 per API instance (DATABASE_MAX_CONNS); the River workers share the same pool. Fly Postgres allows 100 connections for 3 machines plus migrations.",
    ),
    # --- API
    (
        "api_errors",
        "convention",
        0.7,
        "api,errors",
        'Handlers return errors through api.WriteError(w, r, err), which maps domain errors to {"error": {"code": ..., "message": ...}} and a status. Never http.Error with a raw string.',
    ),
    (
        "idempotency_key",
        "convention",
        0.7,
        "api,idempotency",
        "POST endpoints honour an Idempotency-Key header (stored 24 h in idempotency_keys); POST /v1/invoices/{id}/finalize rejects requests without one (400 idempotency_key_required).",
    ),
    (
        "api_keys",
        "fact",
        0.6,
        "api,auth",
        "API keys are Bearer sk_live_… / sk_test_…, stored as SHA-256 hashes in api_keys. A test-mode key only sees rows with livemode=false; every query must filter on livemode.",
    ),
    (
        "pagination_cursor",
        "convention",
        0.5,
        "api,pagination",
        "List endpoints paginate Stripe-style with limit (max 100) and starting_after=<id>; no page numbers or offsets.",
    ),
    # --- PDF
    (
        "fpdf_choice",
        "decision",
        0.6,
        "pdf,dependencies",
        "Invoice PDFs are drawn with github.com/go-pdf/fpdf (the maintained fork of jung-kurt/gofpdf). Rejected chromedp/headless Chrome: a 300 MB image and 2 s per invoice.",
    ),
    (
        "pdf_utf8_font",
        "gotcha",
        0.8,
        "pdf,fonts,i18n",
        "fpdf's core fonts (Helvetica) are cp1252 only: Polish and Czech letters (ł, ś, ř) come out as '?'. Use doc.AddUTF8FontFromBytes with the embedded internal/pdf/fonts/DejaVuSans.ttf for all text.",
    ),
    (
        "pdf_golden",
        "convention",
        0.6,
        "pdf,tests",
        "PDF tests compare pdftotext output with internal/pdf/testdata/golden/*.txt. After an intended layout change run `go test ./internal/pdf -update` and review the golden diff in the PR.",
    ),
    (
        "pdf_storage",
        "fact",
        0.5,
        "pdf,s3,legal",
        "Finalized PDFs go to s3://tallyhub-invoices/{entity}/{year}/{number}.pdf with Object Lock (compliance mode, 10 years); they can't be overwritten, so a re-render needs a credit note.",
    ),
    # --- jobs, email, dunning
    (
        "river_jobs",
        "decision",
        0.6,
        "jobs,river,postgres",
        "Background jobs use River (riverqueue) on the same Postgres: transactional enqueue with InsertTx and no Redis to run. Workers live in internal/jobs.",
    ),
    (
        "job_args_compat",
        "gotcha",
        0.6,
        "jobs,river",
        "River job args are stored as JSON: renaming or removing a field breaks jobs already queued. Add new fields (with omitempty), keep old ones until the queue has drained.",
    ),
    (
        "postmark",
        "fact",
        0.5,
        "email,postmark",
        "Emails go through Postmark, message stream 'invoices' (not 'outbound'), template aliases invoice-issued and payment-reminder.",
    ),
    (
        "dunning_schedule",
        "fact",
        0.6,
        "dunning,reminders",
        "Dunning: payment reminders 3, 10 and 30 days after the due date (Offsets in internal/dunning/schedule.go).",
    ),
    (
        "late_fee",
        "decision",
        0.7,
        "dunning,legal,b2b",
        "The €40 late-payment fee (EU Late Payment Directive) is B2B only and is added from the second reminder on (LateFeeFrom = 1). Consumers never get a fee.",
    ),
    (
        "dunning_sweep",
        "gotcha",
        0.6,
        "dunning,jobs",
        "DunningSweep (River periodic job, daily 06:00 UTC) recomputes due reminders from Offsets for every open invoice. Changing Offsets applies to invoices already overdue on the next run: expect a burst of reminders, tell support first.",
    ),
    # --- payments
    (
        "stripe_webhook",
        "convention",
        0.6,
        "payments,stripe,webhooks",
        "Payments arrive via the Stripe webhook POST /webhooks/stripe (payment_intent.succeeded), matched on metadata.invoice_id. Verify with webhook.ConstructEvent on the raw body; handlers must be idempotent (Stripe redelivers).",
    ),
    (
        "partial_payments",
        "fact",
        0.4,
        "payments,invoices",
        "Partial payments are allowed: the invoice stays open with amount_remaining until it reaches 0, then becomes paid. Overpayments become customer credit.",
    ),
    # --- tests and tooling
    (
        "test_db",
        "convention",
        0.7,
        "tests,postgres,docker",
        "Integration tests need Postgres: `make test-db` starts the compose service testdb on port 55432, and `make test` sets TALLYHUB_TEST_DATABASE_URL. testdb.New(t) gives each test its own schema.",
    ),
    (
        "go_cmp",
        "preference",
        0.5,
        "tests,go",
        "Tests are table-driven with t.Run and compare with github.com/google/go-cmp (cmp.Diff, -want +got). No testify.",
    ),
    (
        "clock",
        "convention",
        0.6,
        "time,tests,go",
        "Domain code never calls time.Now(): it takes a clock.Clock (internal/clock) so tests can freeze time with clock.Fixed(...).",
    ),
    (
        "golangci",
        "convention",
        0.5,
        "ci,lint,go",
        "CI runs `make lint` (golangci-lint v1.61 with errcheck, gosec, gofumpt) before the tests; a //nolint needs the linter name and a reason.",
    ),
    (
        "go_version_old",
        "fact",
        0.3,
        "go,toolchain",
        "Go 1.22 for the service and CI (setup-go reads go.mod).",
    ),
    (
        "go_version",
        "fact",
        0.4,
        "go,toolchain",
        "Moved to Go 1.23 (go.mod: go 1.23, toolchain go1.23.4) for range-over-func iterators; CI and the Dockerfile follow go.mod.",
    ),
    (
        "commit_style",
        "preference",
        0.6,
        "git,workflow",
        "Conventional commits with the package as scope: fix(invoices): ..., feat(tax): ...; subject under 72 characters, body says why.",
    ),
    # --- everything else (true, but for none of the scripted steps)
    (
        "slog_pii",
        "convention",
        0.6,
        "logging,privacy",
        "Log with log/slog (JSON handler) and ids only: customer_id and invoice_id, never customer names, email addresses, postal addresses or VAT ids.",
    ),
    (
        "fly_deploy",
        "fact",
        0.5,
        "deploy,fly",
        "Deployed to Fly.io (app tallyhub-api, region fra) by CI on merge to main; migrations run as the release_command, so a failing migration aborts the deploy.",
    ),
    (
        "config_env",
        "convention",
        0.5,
        "config",
        "Configuration is environment variables parsed by caarlos0/env into internal/config.Config; every new variable also goes into .env.example with a comment.",
    ),
    (
        "todo_einvoicing",
        "todo",
        0.4,
        "invoices,einvoicing,legal",
        "TODO: structured e-invoices (EN 16931: XRechnung/ZUGFeRD for German public-sector customers, Peppol later). Not started.",
    ),
    (
        "todo_multi_entity_reports",
        "todo",
        0.3,
        "reports",
        "TODO: revenue report across legal entities in EUR; today finance exports per entity and converts in a spreadsheet.",
    ),
    (
        "datev_export",
        "fact",
        0.4,
        "accounting,export",
        "The monthly DATEV export (cmd/datevexport) writes EXTF CSV in cp1252 with semicolons, as the accountants' software expects; it runs on the 2nd of each month.",
    ),
    (
        "vague_note",
        "note",
        0.2,
        "invoices",
        "Worked on the invoice stuff, see the PR for details.",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# tallyhub

Invoicing service: drafts, finalizes and sends invoices and credit notes for the company's legal
entities, renders the PDFs and chases late payments.

- `cmd/tallyhub`: the HTTP API (`make run`)
- `internal/`: domain packages (invoices, tax, money, pdf, dunning) and the sqlc queries
- `migrations/`: goose migrations (`make migrate`)
- integration tests need Postgres: `make test-db` once, then `make test`
""",
    "go.mod": """module github.com/tallyhub/tallyhub

go 1.23

toolchain go1.23.4

require (
	github.com/caarlos0/env/v11 v11.2.2
	github.com/go-chi/chi/v5 v5.1.0
	github.com/go-pdf/fpdf v0.9.0
	github.com/google/go-cmp v0.6.0
	github.com/jackc/pgx/v5 v5.7.1
	github.com/riverqueue/river v0.13.0
	github.com/stripe/stripe-go/v80 v80.2.0
)
""",
    "Makefile": """.PHONY: run generate migrate lint test test-db

run:
	go run ./cmd/tallyhub

generate:
	sqlc generate

migrate:
	goose -dir migrations postgres "$$DATABASE_URL" up

lint:
	golangci-lint run ./...

test-db:
	docker compose up -d testdb

test:
	TALLYHUB_TEST_DATABASE_URL=postgres://tallyhub:tallyhub@localhost:55432/tallyhub_test?sslmode=disable go test ./...
""",
    "internal/money/money.go": """package money

// Amount is an amount in the minor unit (cent, öre, yen) of Currency. Never float64.
type Amount struct {
	Minor    int64
	Currency string // ISO 4217
}

var zeroDecimal = map[string]bool{"JPY": true, "KRW": true, "ISK": true}

// Exponent is the number of decimals of the currency's minor unit.
func Exponent(currency string) int {
	if zeroDecimal[currency] {
		return 0
	}
	return 2
}

// RoundHalfUp returns num/den rounded half away from zero.
func RoundHalfUp(num, den int64) int64 {
	if num < 0 {
		return -RoundHalfUp(-num, den)
	}
	return (num + den/2) / den
}
""",
    "internal/money/format.go": """package money

import "fmt"

// Format renders an amount for emails and PDFs, e.g. "1,234.50 EUR".
func Format(a Amount) string {
	whole := a.Minor / 100
	frac := a.Minor % 100
	return fmt.Sprintf("%s.%02d %s", group(whole), frac, a.Currency)
}

func group(n int64) string {
	s := fmt.Sprintf("%d", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
""",
    "internal/money/format_test.go": """package money

import "testing"

func TestFormat(t *testing.T) {
	tests := []struct {
		in   Amount
		want string
	}{
		{Amount{Minor: 123450, Currency: "EUR"}, "1,234.50 EUR"},
		{Amount{Minor: 5, Currency: "SEK"}, "0.05 SEK"},
	}
	for _, tt := range tests {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
""",
    "internal/tax/compute.go": """package tax

import (
	"time"

	"github.com/tallyhub/tallyhub/internal/money"
)

// Customer is what the tax computation needs to know about the buyer.
type Customer struct {
	Country     string // ISO 3166-1 alpha-2
	VATID       string
	VATVerified bool // checked against VIES by the verifyvat job
	Business    bool
}

// Line is one invoice line before tax.
type Line struct {
	Net money.Amount
}

// Result is the tax on one line.
type Result struct {
	RateBP int // basis points: 2500 = 25.00 %
	Tax    money.Amount
	Note   string
}

// ForLine computes the VAT of one line for a seller established in sellerCountry.
func ForLine(sellerCountry string, c Customer, l Line, on time.Time) Result {
	rate := RateBP(c.Country, on)
	if c.Country != sellerCountry && !IsEU(c.Country) {
		rate = 0 // export outside the EU
	}
	tax := money.RoundHalfUp(l.Net.Minor*int64(rate), 10000)
	return Result{RateBP: rate, Tax: money.Amount{Minor: tax, Currency: l.Net.Currency}}
}
""",
    "internal/tax/compute_test.go": """package tax

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tallyhub/tallyhub/internal/money"
)

func TestForLine(t *testing.T) {
	on := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	eur := func(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: "EUR"} }
	tests := []struct {
		name string
		c    Customer
		net  money.Amount
		want Result
	}{
		{"domestic consumer", Customer{Country: "DE"}, eur(10000), Result{RateBP: 1900, Tax: eur(1900)}},
		{"outside the EU", Customer{Country: "NO", Business: true}, eur(10000), Result{RateBP: 0, Tax: eur(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ForLine("DE", tt.c, Line{Net: tt.net}, on)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ForLine() mismatch (-want +got):\\n%s", diff)
			}
		})
	}
}
""",
    "internal/pdf/render.go": """package pdf

import (
	"bytes"
	_ "embed"

	"github.com/go-pdf/fpdf"

	"github.com/tallyhub/tallyhub/internal/invoices"
	"github.com/tallyhub/tallyhub/internal/money"
)

// Render draws an invoice or a credit note on A4 and returns the PDF.
func Render(inv invoices.Invoice) ([]byte, error) {
	doc := fpdf.New("P", "mm", "A4", "")
	doc.AddPage()
	doc.SetFont("Helvetica", "", 10)

	doc.CellFormat(0, 6, inv.Entity.LegalName, "", 1, "L", false, 0, "")
	doc.CellFormat(0, 6, inv.Customer.Name, "", 1, "L", false, 0, "")
	doc.CellFormat(0, 6, inv.Customer.PostalCode+" "+inv.Customer.City, "", 1, "L", false, 0, "")
	doc.Ln(8)
	doc.CellFormat(0, 6, inv.Number+"  "+inv.IssueDate.Format("2006-01-02"), "", 1, "L", false, 0, "")
	for _, l := range inv.Lines {
		doc.CellFormat(120, 6, l.Description, "", 0, "L", false, 0, "")
		doc.CellFormat(0, 6, money.Format(l.Net), "", 1, "R", false, 0, "")
	}
	doc.Ln(4)
	doc.CellFormat(0, 6, "VAT: "+money.Format(inv.TaxTotal), "", 1, "R", false, 0, "")
	doc.CellFormat(0, 6, "Total: "+money.Format(inv.Total), "", 1, "R", false, 0, "")

	var out bytes.Buffer
	err := doc.Output(&out)
	return out.Bytes(), err
}
""",
    "internal/invoices/finalize.go": """package invoices

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tallyhub/tallyhub/internal/clock"
	"github.com/tallyhub/tallyhub/internal/db"
	"github.com/tallyhub/tallyhub/internal/db/gen"
	"github.com/tallyhub/tallyhub/internal/jobs"
)

// Finalize gives a draft its number, freezes it and queues the invoice email.
func Finalize(ctx context.Context, pool *pgxpool.Pool, rc *river.Client[pgx.Tx], clk clock.Clock, id string) (Invoice, error) {
	var inv Invoice
	err := db.WithTx(ctx, pool, func(q *gen.Queries, tx pgx.Tx) error {
		draft, err := q.GetDraftForUpdate(ctx, id)
		if err != nil {
			return err
		}
		seq, err := q.NextInvoiceNumber(ctx)
		if err != nil {
			return err
		}
		number := fmt.Sprintf("INV-%d-%06d", clk.Now().Year(), seq)
		row, err := q.FinalizeInvoice(ctx, gen.FinalizeInvoiceParams{ID: draft.ID, Number: number, IssuedAt: clk.Now()})
		if err != nil {
			return err
		}
		if _, err := rc.InsertTx(ctx, tx, jobs.SendInvoiceEmailArgs{InvoiceID: row.ID}, nil); err != nil {
			return err
		}
		inv = fromRow(row)
		return nil
	})
	return inv, err
}
""",
    "internal/db/queries/invoices.sql": """-- name: GetDraftForUpdate :one
SELECT * FROM invoices WHERE id = $1 AND status = 'draft' FOR UPDATE;

-- name: NextInvoiceNumber :one
SELECT nextval('invoice_number_seq')::bigint;

-- name: FinalizeInvoice :one
UPDATE invoices
SET status = 'open', number = $2, issued_at = $3
WHERE id = $1
RETURNING *;
""",
    "internal/dunning/schedule.go": """package dunning

import "time"

// Offsets are the payment reminders, counted from the due date. DunningSweep sends
// whichever reminder has become due.
var Offsets = []time.Duration{
	3 * 24 * time.Hour,
	10 * 24 * time.Hour,
	30 * 24 * time.Hour,
}

// LateFeeFrom is the index of the first reminder that carries the late fee (B2B only).
const LateFeeFrom = 1
""",
    "internal/api/doc.go": """// Package api holds the HTTP handlers of the tallyhub API (chi router, /v1 routes).
package api
""",
    "migrations/00041_customer_terms.sql": """-- +goose Up
ALTER TABLE customers ADD COLUMN terms_days integer;

-- +goose Down
ALTER TABLE customers DROP COLUMN terms_days;
""",
    "migrations/00042_credit_notes.sql": """-- +goose Up
CREATE TABLE credit_notes (
    id uuid PRIMARY KEY,
    invoice_id uuid NOT NULL REFERENCES invoices (id),
    number text NOT NULL UNIQUE,
    amount_minor bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE credit_notes;
""",
    ".env.example": """DATABASE_URL=postgres://tallyhub:tallyhub@localhost:5432/tallyhub?sslmode=disable
DATABASE_MAX_CONNS=20
POSTMARK_TOKEN=
STRIPE_WEBHOOK_SECRET=
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


# Session 1: EU reverse charge, then a two-question follow-up.
session("reverse-charge")
user(
    "Add EU reverse charge to the tax calculation: a business customer in another EU country with a valid VAT number gets 0 % VAT, and the invoice has to say so."
)
bash("ls internal/tax", "List the tax package", note="look around")
read(
    "internal/tax/compute.go",
    "reverse_charge",
    "vat_rates_table",
    "vat_per_line",
    note="the tax computation",
)
edit(
    "internal/tax/compute.go",
    """// ForLine computes the VAT of one line for a seller established in sellerCountry.
func ForLine(sellerCountry string, c Customer, l Line, on time.Time) Result {
	rate := RateBP(c.Country, on)
""",
    """// ReverseChargeNote must be printed on invoices where the EU B2B reverse charge applies.
const ReverseChargeNote = "Reverse charge – Article 196 Council Directive 2006/112/EC"

// ForLine computes the VAT of one line for a seller established in sellerCountry.
func ForLine(sellerCountry string, c Customer, l Line, on time.Time) Result {
	if c.Business && c.VATVerified && c.Country != sellerCountry && IsEU(c.Country) {
		return Result{RateBP: 0, Tax: money.Amount{Currency: l.Net.Currency}, Note: ReverseChargeNote}
	}
	rate := RateBP(c.Country, on)
""",
    "reverse_charge",
    "vat_rates_table",
    "money_minor_units",
    note="zero rate and the legal note",
    uses=("reverse_charge",),
)
read("internal/tax/compute_test.go", "go_cmp", "reverse_charge", note="the table test")
edit(
    "internal/tax/compute_test.go",
    """		{"outside the EU", Customer{Country: "NO", Business: true}, eur(10000), Result{RateBP: 0, Tax: eur(0)}},
""",
    """		{"outside the EU", Customer{Country: "NO", Business: true}, eur(10000), Result{RateBP: 0, Tax: eur(0)}},
		{"EU business, verified VAT id", Customer{Country: "FR", VATID: "FR40303265045", VATVerified: true, Business: true}, eur(10000), Result{RateBP: 0, Tax: eur(0), Note: ReverseChargeNote}},
		{"EU business, VAT id not verified", Customer{Country: "FR", VATID: "FR40303265045", Business: true}, eur(10000), Result{RateBP: 2000, Tax: eur(2000)}},
""",
    "reverse_charge",
    "go_cmp",
    note="two new cases",
    uses=("reverse_charge",),
)
bash("go test ./internal/tax/...", "Run the tax tests", note="run the tests")
read("internal/pdf/render.go", "reverse_charge", "pdf_golden", note="where the invoice is drawn")
edit(
    "internal/pdf/render.go",
    """	doc.CellFormat(0, 6, "Total: "+money.Format(inv.Total), "", 1, "R", false, 0, "")
""",
    """	doc.CellFormat(0, 6, "Total: "+money.Format(inv.Total), "", 1, "R", false, 0, "")
	for _, note := range inv.TaxNotes() { // e.g. the reverse-charge note
		doc.Ln(4)
		doc.MultiCell(0, 5, note, "", "L", false)
	}
""",
    "reverse_charge",
    "pdf_golden",
    note="print the tax notes",
    uses=("reverse_charge",),
)
bash("gofmt -l internal/tax internal/pdf", "Check formatting", note="gofmt")
bash(
    "go test ./internal/pdf -update",
    "Refresh the PDF golden files",
    "pdf_golden",
    note="goldens",
    uses=("pdf_golden",),
)
bash("git diff --stat", "See what changed", note="overview")
answer(
    "ForLine now returns 0 % with ReverseChargeNote ('Reverse charge – Article 196 Council Directive 2006/112/EC') for a business "
    "customer in another EU country whose VAT id is VIES-verified; an unverified id still pays the customer country's VAT. "
    "The PDF prints the note under the totals; the golden files were regenerated, please review their diff.",
    "reverse_charge",
    "pdf_golden",
)
user("Does this need a database migration? And how do I run the tests that need Postgres?")
bash(
    "grep -rn vat_verified migrations/ internal/db/queries/",
    "Is the verified flag already stored?",
    "goose",
    "vies_flaky",
    note="check the schema",
)
answer(
    "No migration: the verifyvat job already stores vat_verified on the customer. (If one were needed it would be a goose "
    "file in migrations/ with a Down section.) For the Postgres tests run `make test-db` once, then `make test`.",
    "goose",
    "test_db",
    "vies_flaky",
)

# Session 2: a gap in the invoice numbers, then tests and a commit.
session("invoice-number-gap")
user(
    "Our auditor found a gap in the 2026 invoice numbers: INV-2026-000311 doesn't exist, 310 is followed by 312. Find out why and fix it."
)
call(
    "memory_search",
    {"query": "invoice number gap sequence"},
    "invoice_numbers_gapless",
    note="ask the memory first",
)
read(
    "internal/invoices/finalize.go",
    "invoice_numbers_gapless",
    "with_tx",
    "email_in_tx",
    note="where numbers are assigned",
)
read(
    "internal/db/queries/invoices.sql",
    "invoice_numbers_gapless",
    "sqlc",
    note="the NextInvoiceNumber query",
    uses=("sqlc",),
)
bash("git log --oneline -5 -- internal/db/queries/invoices.sql", "Who changed the query", note="history")
edit(
    "internal/db/queries/invoices.sql",
    """-- name: NextInvoiceNumber :one
SELECT nextval('invoice_number_seq')::bigint;
""",
    """-- name: NextInvoiceNumber :one
-- Gapless: the row stays locked until the finalize transaction ends (nextval is not undone by a rollback).
UPDATE invoice_sequences
SET last_value = last_value + 1
WHERE entity_id = $1 AND year = $2
RETURNING last_value;
""",
    "invoice_numbers_gapless",
    "sqlc",
    note="counter row instead of a sequence",
    uses=("invoice_numbers_gapless", "sqlc"),
)
edit(
    "internal/invoices/finalize.go",
    """		seq, err := q.NextInvoiceNumber(ctx)
		if err != nil {
			return err
		}
		number := fmt.Sprintf("INV-%d-%06d", clk.Now().Year(), seq)
""",
    """		year := clk.Now().In(entityLocation(draft.EntityTz)).Year() // the issue date's year, in the entity's timezone
		seq, err := q.NextInvoiceNumber(ctx, gen.NextInvoiceNumberParams{EntityID: draft.EntityID, Year: int32(year)})
		if err != nil {
			return err
		}
		number := fmt.Sprintf("INV-%d-%06d", year, seq)
""",
    "invoice_numbers_gapless",
    "issue_date_tz",
    "with_tx",
    "clock",
    note="per entity and year",
    uses=("invoice_numbers_gapless", "issue_date_tz"),
)
bash(
    "goose -dir migrations create invoice_sequences sql -s",
    "New migration for the counter table",
    "goose",
    "invoice_numbers_gapless",
    note="migration",
    uses=("goose",),
)
bash("make generate", "Regenerate the sqlc code", "sqlc", note="sqlc", uses=("sqlc",))
bash("go build ./...", "Compile", note="build")
bash("gofmt -l internal/invoices", "Check formatting", note="gofmt")
answer(
    "NextInvoiceNumber used a Postgres sequence, and nextval is not undone when the finalize transaction rolls back "
    "(e.g. when inserting the email job failed), so 311 was consumed and lost. Numbers now come from an invoice_sequences "
    "row per entity and year, locked with UPDATE … RETURNING inside the finalize transaction; the year is taken in the "
    "entity's timezone. migrations/00043_invoice_sequences.sql still needs the table and a seed from the current maximum. "
    "The existing gap can't be filled (finalized invoices are immutable): document it for the auditor.",
    "invoice_numbers_gapless",
    "finalized_immutable",
    "email_in_tx",
    "goose",
    "sqlc",
)
user("Run the integration tests and commit.")
bash("make test-db", "Start the test Postgres", "test_db", note="test db", uses=("test_db",))
bash("make test", "Run all tests", "test_db", note="tests", uses=("test_db",))
bash("git status --short", "What is staged", note="status")
bash(
    "git add -A && git commit -q -m 'fix(invoices): allocate gapless invoice numbers per entity and year' && git log --oneline -1",
    "Commit the fix",
    "commit_style",
    "golangci",
    note="commit",
    uses=("commit_style",),
)
answer(
    "Tests pass; committed as `fix(invoices): allocate gapless invoice numbers per entity and year`.", "commit_style"
)

# Session 3: dunning (a three-part message), then a currency formatting bug.
session("dunning-and-yen")
user(
    "Customers complain the first payment reminder comes too early. What's our reminder schedule right now? Move the first reminder to 7 days after the due date, and tell me whether the late fee still starts with the second reminder."
)
bash("git status --short", "Clean tree?", note="status")
read(
    "internal/dunning/schedule.go",
    "dunning_schedule",
    "late_fee",
    "dunning_sweep",
    note="the schedule",
    uses=("dunning_schedule",),
)
edit(
    "internal/dunning/schedule.go",
    "	3 * 24 * time.Hour,\n",
    "	7 * 24 * time.Hour,\n",
    "dunning_schedule",
    "late_fee",
    "dunning_sweep",
    note="first reminder at 7 days",
    uses=("dunning_schedule",),
)
bash("go test ./internal/dunning/...", "Run the dunning tests", note="tests")
answer(
    "The schedule was 3, 10 and 30 days after the due date; the first reminder is now at 7 days (10 and 30 unchanged). "
    "The late fee still starts with the second reminder (LateFeeFrom = 1) and only for business customers. Heads-up: "
    "DunningSweep applies the new offsets to invoices already overdue on its next 06:00 UTC run, so tell support to "
    "expect a burst.",
    "dunning_schedule",
    "late_fee",
    "dunning_sweep",
)
user(
    "Another one: the reminder for a Japanese customer says '1,235.00 JPY' for a ¥123,500 invoice. Fix the formatting."
)
read("internal/money/format.go", "zero_decimal", "money_minor_units", note="the formatter")
read("internal/money/money.go", "zero_decimal", note="Exponent", uses=("zero_decimal",))
edit(
    "internal/money/format.go",
    """func Format(a Amount) string {
	whole := a.Minor / 100
""",
    """func Format(a Amount) string {
	if Exponent(a.Currency) == 0 {
		return fmt.Sprintf("%s %s", group(a.Minor), a.Currency) // JPY, KRW, ISK: no minor unit
	}
	whole := a.Minor / 100
""",
    "zero_decimal",
    "money_minor_units",
    note="zero-decimal currencies",
    uses=("zero_decimal",),
)
read("internal/money/format_test.go", "go_cmp", note="the formatter's test")
edit(
    "internal/money/format_test.go",
    """		{Amount{Minor: 5, Currency: "SEK"}, "0.05 SEK"},
""",
    """		{Amount{Minor: 5, Currency: "SEK"}, "0.05 SEK"},
		{Amount{Minor: 123500, Currency: "JPY"}, "123,500 JPY"},
""",
    "zero_decimal",
    "go_cmp",
    note="a yen case",
    uses=("zero_decimal",),
)
bash("go test ./internal/money/", "Run the money tests", note="tests")
bash("gofmt -l internal/", "Check formatting", note="gofmt")
answer(
    "Format divided every amount by 100; JPY has no minor unit, so ¥123,500 is stored as 123500 and now prints as "
    "'123,500 JPY' (money.Exponent decides). Added a test case.",
    "zero_decimal",
)

# Session 4: a PDF encoding bug, then a question and a memory to store in one message.
session("pdf-font")
user("A customer in Wrocław says her invoice PDF shows 'Wroc?aw'. Fix it.")
read("internal/pdf/render.go", "pdf_utf8_font", "fpdf_choice", note="the renderer")
edit(
    "internal/pdf/render.go",
    """// Render draws an invoice or a credit note on A4 and returns the PDF.
func Render(inv invoices.Invoice) ([]byte, error) {
	doc := fpdf.New("P", "mm", "A4", "")
	doc.AddPage()
	doc.SetFont("Helvetica", "", 10)
""",
    """//go:embed fonts/DejaVuSans.ttf
var dejaVuSans []byte

// Render draws an invoice or a credit note on A4 and returns the PDF.
func Render(inv invoices.Invoice) ([]byte, error) {
	doc := fpdf.New("P", "mm", "A4", "")
	doc.AddUTF8FontFromBytes("DejaVu", "", dejaVuSans) // core fonts are cp1252: no ł, ś, ř
	doc.AddPage()
	doc.SetFont("DejaVu", "", 10)
""",
    "pdf_utf8_font",
    "pdf_golden",
    note="embed a UTF-8 font",
    uses=("pdf_utf8_font",),
)
bash("ls internal/pdf/fonts/", "Is the font there?", "pdf_utf8_font", note="font file", uses=("pdf_utf8_font",))
bash("gofmt -l internal/pdf", "Check formatting", note="gofmt")
bash(
    "go test ./internal/pdf -update && git diff --stat internal/pdf/testdata",
    "Refresh and review the goldens",
    "pdf_golden",
    note="goldens",
    uses=("pdf_golden",),
)
answer(
    "The renderer used fpdf's core Helvetica, which is cp1252 only, so ł became '?'. It now embeds DejaVuSans with "
    "AddUTF8FontFromBytes; golden files regenerated (review the diff).",
    "pdf_utf8_font",
    "pdf_golden",
)
user("Can we just regenerate her existing invoice PDF? And save a note that the PDF font has to stay a UTF-8 one.")
call(
    "memory_store",
    {
        "text": "Invoice PDFs must use the embedded UTF-8 font (DejaVuSans via AddUTF8FontFromBytes in internal/pdf/render.go); a switch back to Helvetica broke Polish names ('Wroc?aw').",
        "category": "gotcha",
        "tags": ["pdf", "fonts"],
    },
    "pdf_utf8_font",
    note="store the gotcha",
    uses=("pdf_utf8_font",),
)
answer(
    "Not in place: finalized PDFs sit in S3 under Object Lock and finalized invoices are never changed. To give her a "
    "corrected document, issue a credit note and a new invoice. Note saved.",
    "pdf_storage",
    "finalized_immutable",
    "pdf_utf8_font",
)


# Session 5: chores that need no memory at all (every step's `relevant` is empty).
session("chores")
user("In README.md, say 'chases overdue invoices' instead of 'chases late payments'.")
read("README.md", note="the sentence")
edit("README.md", "chases late payments", "chases overdue invoices", note="the wording")
answer("Done: the README now says 'chases overdue invoices'.")
user("Which chi version is in go.mod?")
read("go.mod", note="look it up")
answer("github.com/go-chi/chi/v5 v5.1.0.")
user("What's the module path?")
read("go.mod", note="look it up")
answer("github.com/tallyhub/tallyhub.")
user("Show me the last three commits.")
bash("git log --oneline -3", "Recent commits", note="log")
answer("Listed above: the latest is the PDF font fix.")
user("How many lines does the Makefile have?")
bash("wc -l Makefile", "Count the lines", note="count")
answer("The Makefile has 19 lines.")
user("List the migration files.")
bash("ls migrations", "List migrations", note="list")
answer("00041_customer_terms.sql, 00042_credit_notes.sql and the new 00043_invoice_sequences.sql.")
user("What does internal/api/doc.go say?")
read("internal/api/doc.go", note="look at it")
answer("Just the package comment: the HTTP handlers of the tallyhub API (chi router, /v1 routes).")
user("What does money.RoundHalfUp do with negative numbers?")
read("internal/money/money.go", note="look at it")
answer("It rounds the absolute value half-up and negates it, so -0.5 rounds to -1 (half away from zero).")
user("How many TODO comments are there under internal/?")
bash("grep -rn TODO internal/ | wc -l", "Count TODOs", note="count")
answer("None: grep finds no TODO comments under internal/.")


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
                "tags": ["tallyhub", *tags.split(",")],
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
        "project": "tallyhub",
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
