# ruff: noqa: E501
"""Build the agent-view judge scenario 6: memories.jsonl, project.json and steps.json.

One made-up project, `kilnworks` (a TypeScript Next.js App Router storefront selling handmade ceramics, with
Prisma on Postgres, Stripe Checkout, next-intl and Resend), with 52 memories of the kind a team records
(decisions, rejected alternatives, conventions, gotchas, facts, preferences, todos), the project's source
files, and five scripted coding sessions whose steps are each labelled with the memories that matter for
that step. Written blind (without reading how codememory chooses) as a final judge: run it once.

    python benchmarks/data/agent_view_judge6/build.py          # rewrite the three files (and validate)
    python benchmarks/data/agent_view_judge6/build.py --check  # validate only: the files are up to date

Memories are keyed by a readable name; the file ids are `mem_` + the first 8 hex digits of
sha1("agent_view:" + key), so they stay the same when entries are added or reordered. Every key here starts
with `kiln_`, so none is shared with the other agent-view scenarios. Tool-call arguments may hold `{root}`,
which the benchmark replaces with the project's absolute path. The build replays every scripted `edit` on
the files (each edit's oldString must occur exactly once at that point) and checks that a file is read in a
turn before it is edited there (OpenCode and Claude Code refuse to edit a file their process has not read,
and each turn is a new process).

Labelling rule: a step's `relevant` memories are the ones a careful teammate would want the agent to have
in mind while taking that step (for the final answer: the ones the answer should respect), judged from the
user's request and the tool calls made so far in the turn, not from the tool call itself alone.

A tool-call step's `uses` (a subset of `relevant`) are the memories its own tool call relies on: the call
applies something the memory states (a value, name, path or command it gives: FREE_SHIPPING_NL_CENTS,
revalidateTag(`product:${slug}`), images.remotePatterns in next.config.mjs, `stripe listen --forward-to`),
reads or edits the file the memory points to for this task, or does what the memory prescribes where
neither the user's request nor the file being edited would have told it to. A memory the call merely agrees
with (a pattern the file already follows, a warning heeded by not doing something) is relevant, not used.
Final answers have no `uses`: use detection watches what the agent does (tool calls and edits) and the ids
it cites. These labels score use detection (bench_agent_view.py: which shown memories the session went on
to use).
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
    # --- money, shipping, stock
    (
        "kiln_cents",
        "convention",
        0.9,
        "money,typescript,prisma",
        "Money is integer cents everywhere (priceCents, subtotalCents, shippingCents Int columns, Stripe unit_amount) and is turned into text only with formatMoney(cents) from src/lib/money.ts. No floats: 0.1 + 0.2 rounding errors showed up in the 2025 cart totals.",
    ),
    (
        "kiln_ship_free_old",
        "decision",
        0.5,
        "shipping,pricing",
        "Shipping within the Netherlands is free for orders of €60 or more (decided for the 2025 launch).",
    ),
    (
        "kiln_shipping_rates",
        "fact",
        0.6,
        "shipping,pricing",
        "Shipping rates live in src/lib/shipping.ts as cents: NL 695 (€6.95), rest of the EU 1495 (€14.95). We do not ship to the UK since Brexit (customs paperwork per parcel).",
    ),
    (
        "kiln_vat",
        "fact",
        0.4,
        "pricing,tax,stripe",
        "Displayed prices include 21% Dutch VAT; Stripe Tax is off and invoices show the VAT part computed by src/lib/tax.ts. OSS registration covers EU customers.",
    ),
    (
        "kiln_one_of_a_kind",
        "fact",
        0.4,
        "catalog,stock",
        "Most pieces are one of a kind (stock 1). A sold piece stays listed with a 'Sold' badge for 90 days instead of disappearing: customers send the link to ask for a similar commission.",
    ),
    (
        "kiln_stock_reservation",
        "decision",
        0.7,
        "stock,checkout,orders",
        "Stock is taken when checkout.session.completed arrives (markPaid in src/lib/orders.ts), not at add-to-cart, in one prisma.$transaction with updateMany where stock gte quantity so a one-of-a-kind piece cannot be sold twice.",
    ),
    (
        "kiln_money_rounding",
        "gotcha",
        0.5,
        "money,stripe,discounts",
        "Percentage discounts must be rounded to whole cents per line (Math.round) before they reach Stripe: a fractional unit_amount fails the checkout with 'Invalid integer: 1234.5'.",
    ),
    # --- Stripe and orders
    (
        "kiln_checkout_hosted",
        "decision",
        0.6,
        "stripe,checkout,payments",
        "Payments go through hosted Stripe Checkout (redirect from POST /api/checkout): it keeps us at PCI SAQ A and brings iDEAL, Bancontact and Apple Pay without extra code.",
    ),
    (
        "kiln_payment_element_rejected",
        "rejected_alternative",
        0.4,
        "stripe,checkout,payments",
        "Rejected an embedded Stripe Payment Element checkout: more PCI scope (SAQ A-EP), and we would have to build the address and shipping steps ourselves.",
    ),
    (
        "kiln_webhook_raw_body",
        "gotcha",
        0.8,
        "stripe,webhooks,nextjs",
        "The Stripe webhook route (src/app/api/webhooks/stripe/route.ts) must pass the raw body from `await req.text()` to stripe.webhooks.constructEvent; parsing with req.json() and re-stringifying changes the bytes and every event fails with 'No signatures found matching the expected signature for payload'.",
    ),
    (
        "kiln_webhook_idempotent",
        "convention",
        0.7,
        "stripe,webhooks,orders",
        "Webhook handling is idempotent: each Stripe event id is recorded in the ProcessedEvent table and a repeated event is answered 200 without doing anything. Stripe retries for three days and sometimes delivers an event twice.",
    ),
    (
        "kiln_order_payment_intent",
        "fact",
        0.6,
        "stripe,orders,refunds",
        "Orders are created with the Checkout session id and get stripePaymentIntentId when they are paid; charge.* events (refunds, disputes) carry no session id, so they are matched to the order by stripePaymentIntentId.",
    ),
    (
        "kiln_partial_refunds",
        "decision",
        0.6,
        "refunds,stock,orders",
        "Partial refunds are common (a piece that arrived chipped is refunded but the customer keeps it), so pieces go back into stock only on a full refund: charge.amount_refunded equal to charge.amount.",
    ),
    (
        "kiln_stripe_api_version",
        "fact",
        0.4,
        "stripe,config",
        "The Stripe client in src/lib/stripe.ts pins apiVersion; change it only together with the webhook endpoint's API version in the Stripe dashboard, or event payloads change shape under us.",
    ),
    (
        "kiln_stripe_cli",
        "gotcha",
        0.6,
        "stripe,webhooks,local-dev",
        "For webhooks in local development run `stripe listen --forward-to localhost:3000/api/webhooks/stripe` and put the whsec_ secret it prints into STRIPE_WEBHOOK_SECRET in .env.local. The dashboard endpoint's secret only matches deployed events: with it every forwarded event fails with 'No signatures found matching the expected signature for payload'.",
    ),
    # --- Next.js
    (
        "kiln_app_router",
        "decision",
        0.5,
        "nextjs,architecture",
        "App Router only: the pages/ directory was removed in 2025. New routes are folders under src/app with page.tsx or route.ts.",
    ),
    (
        "kiln_server_components",
        "convention",
        0.6,
        "nextjs,react",
        "Pages and product components are server components that read data through src/lib; 'use client' only on small interactive leaves (AddToCartButton, CartDrawer, the quantity picker).",
    ),
    (
        "kiln_revalidate_tag",
        "convention",
        0.7,
        "nextjs,caching,admin",
        "Product data is cached with unstable_cache under the tags `product:${slug}` and `products` (src/lib/products.ts). A server action that changes a product must call revalidateTag for both; revalidatePath is not used, it misses the listing pages.",
    ),
    (
        "kiln_next_image_hosts",
        "gotcha",
        0.7,
        "nextjs,images",
        "next/image only loads hosts listed in images.remotePatterns in next.config.mjs; any other host crashes the page with 'Invalid src prop ... hostname \"...\" is not configured under images in your `next.config.js`'. Add a pattern with the path prefix, never a bare '**' hostname.",
    ),
    (
        "kiln_image_sizes",
        "convention",
        0.5,
        "nextjs,images,performance",
        'Every next/image with fill needs a sizes attribute, or phones download the widest variant. The product grid is 4/2/1 columns: sizes="(min-width: 1024px) 25vw, (min-width: 640px) 50vw, 100vw".',
    ),
    (
        "kiln_hydration_format",
        "gotcha",
        0.6,
        "react,hydration,i18n",
        "In client components format money and dates only with the helpers in src/lib (fixed nl-NL locale, Europe/Amsterdam time zone): toLocaleString() with the browser's locale renders differently from the server and React fails with 'Text content does not match server-rendered HTML'.",
    ),
    (
        "kiln_env_public",
        "gotcha",
        0.5,
        "nextjs,env,config",
        "Only NEXT_PUBLIC_ variables reach the browser and they are inlined at build time: changing NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY on Vercel needs a redeploy, not just a restart. Never give a secret that prefix.",
    ),
    (
        "kiln_server_only",
        "convention",
        0.5,
        "nextjs,security",
        'Modules that hold secrets or touch the database (src/lib/db.ts, stripe.ts, orders.ts, email.ts) start with `import "server-only"` so that importing them from a client component fails the build.',
    ),
    (
        "kiln_i18n",
        "convention",
        0.7,
        "i18n,next-intl",
        "Storefront text is Dutch and English through next-intl: every user-facing string in src/ is a key in both messages/nl.json and messages/en.json (nl is the default locale); no hard-coded strings in components.",
    ),
    # --- data
    (
        "kiln_prisma_migrate",
        "convention",
        0.7,
        "prisma,database,migrations",
        "Schema changes are Prisma migrations: edit prisma/schema.prisma, run `pnpm prisma migrate dev --name <change>` and commit the folder it writes under prisma/migrations. Never `prisma db push` against a shared database.",
    ),
    (
        "kiln_prisma_singleton",
        "gotcha",
        0.6,
        "prisma,database,local-dev",
        "Import the one PrismaClient from src/lib/db.ts, which keeps it on globalThis in development: a `new PrismaClient()` anywhere else opens a new pool on every hot reload until Postgres answers 'FATAL: sorry, too many clients already'.",
    ),
    (
        "kiln_neon",
        "fact",
        0.5,
        "database,postgres,deploy",
        "Production Postgres is on Neon: DATABASE_URL is the pooled -pooler host used by the app, DIRECT_URL the direct host that Prisma migrations need (directUrl in schema.prisma). Preview deployments get a Neon branch each.",
    ),
    # --- cart
    (
        "kiln_cart_cookie",
        "decision",
        0.5,
        "cart,cookies",
        "The cart lives in a signed httpOnly cookie kw_cart (product ids and quantities), read on the server; no cart table and no localStorage, so the server-rendered drawer is right on the first paint.",
    ),
    (
        "kiln_cart_zustand_rejected",
        "rejected_alternative",
        0.3,
        "cart,state",
        "Rejected a zustand store persisted to localStorage for the cart: the server render showed an empty cart and the count jumped after hydration.",
    ),
    (
        "kiln_cart_limit",
        "gotcha",
        0.4,
        "cart,cookies",
        "Browsers drop cookies over 4096 bytes without an error, which emptied big carts: the cart is capped at 20 lines (MAX_LINES in src/lib/cart.ts).",
    ),
    # --- UI
    (
        "kiln_tailwind",
        "convention",
        0.4,
        "ui,css,tailwind",
        "Styling is Tailwind only, colours from the clay palette in tailwind.config.ts; no CSS modules and no inline style objects.",
    ),
    (
        "kiln_alt_text",
        "convention",
        0.5,
        "accessibility,images,catalog",
        'Product photos need alt text that describes the piece (shape, glaze, colour), written in the admin into Product.imageAlt; alt="" only for decorative images.',
    ),
    # --- tests and tooling
    (
        "kiln_vitest",
        "convention",
        0.5,
        "tests,vitest",
        "Unit tests sit next to the code as *.test.ts and run in Vitest's node environment; component tests add `// @vitest-environment jsdom` at the top of the file.",
    ),
    (
        "kiln_playwright",
        "fact",
        0.4,
        "tests,e2e,ci",
        "The Playwright end-to-end tests in e2e/ pay with Stripe's test card 4242 4242 4242 4242 against a preview deployment; they run nightly, not on pull requests, because a run takes 12 minutes.",
    ),
    (
        "kiln_stripe_fixtures",
        "convention",
        0.4,
        "tests,stripe",
        "Unit tests never call the Stripe API: event payloads come from the JSON fixtures in src/test/fixtures/stripe/.",
    ),
    (
        "kiln_pnpm",
        "decision",
        0.5,
        "tooling,dependencies",
        "Dependencies are added with `pnpm add`; never run npm install: it writes a package-lock.json, and Vercel then builds with npm and ignores pnpm-lock.yaml.",
    ),
    (
        "kiln_biome",
        "decision",
        0.4,
        "tooling,lint,format",
        "Biome does linting and formatting (biome.json); it replaced ESLint and Prettier in 2025. Do not add eslint or prettier configs or plugins back.",
    ),
    (
        "kiln_ts_strict",
        "convention",
        0.5,
        "typescript",
        "TypeScript runs strict with noUncheckedIndexedAccess; no `any`, and `@ts-expect-error` with a reason instead of `@ts-ignore`.",
    ),
    (
        "kiln_node_version",
        "fact",
        0.3,
        "tooling,node,deploy",
        "Node 20 (.nvmrc); the Vercel project is set to Node 20.x as well. Node 22 broke the sharp build on Vercel in 2026.",
    ),
    (
        "kiln_commit_style",
        "convention",
        0.6,
        "git,workflow",
        "Commits follow Conventional Commits, `type(scope): subject` in lower case with at most 72 characters; scopes are cart, checkout, orders, catalog, admin, emails, infra. The commitlint commit-msg hook rejects anything else.",
    ),
    # --- email
    (
        "kiln_resend",
        "decision",
        0.5,
        "email,resend",
        "Order emails are React Email templates in emails/ sent through Resend by src/lib/email.ts, from orders@kilnworks.nl (SPF and DKIM set on the domain).",
    ),
    (
        "kiln_email_sandbox",
        "gotcha",
        0.6,
        "email,resend,preview,deploy",
        "Preview deployments use Resend's test API key, which only delivers to the team's own verified address; other recipients fail with 'You can only send testing emails to your own email address'. Intended: previews must never mail customers.",
    ),
    (
        "kiln_todo_email_en",
        "todo",
        0.4,
        "email,i18n",
        "TODO: order emails are Dutch only (the templates in emails/ have their text inline); send English ones to customers who ordered on /en.",
    ),
    # --- deploy, release, ops
    (
        "kiln_vercel_preview",
        "fact",
        0.5,
        "deploy,vercel,preview",
        "Every pull request gets a Vercel preview deployment with Stripe test-mode keys, Resend's test key and its own Neon branch database; production deploys from main.",
    ),
    (
        "kiln_deploy_freeze",
        "preference",
        0.4,
        "deploy,workflow",
        "No production deploys from 20 November to 6 December (Black Friday and Sinterklaas orders) except hotfixes agreed in the channel.",
    ),
    (
        "kiln_release_notes",
        "convention",
        0.3,
        "release,changelog",
        "Releases: `pnpm release` bumps the version, writes the CHANGELOG.md entry from the commits and tags vX.Y.Z; the shop owners read the changelog, so entries are in plain words.",
    ),
    (
        "kiln_holiday_mode",
        "fact",
        0.4,
        "config,checkout",
        "Holiday mode (holidayMode in src/config/site.ts) disables checkout and shows the announcement bar while the studio is closed; it is set every August.",
    ),
    (
        "kiln_admin_auth",
        "decision",
        0.5,
        "admin,auth",
        "The /admin area uses Auth.js with the GitHub provider and an allowlist in ADMIN_EMAILS; middleware.ts guards /admin/:path* and each server action calls requireAdmin() again.",
    ),
    (
        "kiln_plausible",
        "decision",
        0.4,
        "analytics,privacy",
        "Analytics is Plausible (cookieless), so the shop needs no cookie banner; do not add Google Analytics, the Meta pixel or any other tracking cookie.",
    ),
    (
        "kiln_ship_free_new",
        "decision",
        0.7,
        "shipping,pricing",
        "Free shipping in the Netherlands now starts at €75 (FREE_SHIPPING_NL_CENTS = 7500 in src/lib/shipping.ts), raised from €60 in March 2026 when PostNL's rates went up. Other EU countries never ship free.",
    ),
    (
        "kiln_todo_gift_cards",
        "todo",
        0.3,
        "checkout,stripe",
        "TODO: gift cards, probably as Stripe promotion codes with a fixed amount off; the studio asks for them every December.",
    ),
    (
        "kiln_contact_turnstile",
        "gotcha",
        0.4,
        "forms,spam",
        "The contact form needs the Cloudflare Turnstile check (verifyTurnstile in src/app/contact/actions.ts): without it bots sent 300 messages a day.",
    ),
]

# ------------------------------------------------------------------------------------------ project
FILES: dict[str, str] = {
    "README.md": """# kilnworks

The web shop of the Kilnworks studio in Utrecht: handmade mugs, bowls and vases, most of them one of a kind.
Customers recieve an email when their order ships.

- `src/app/`: the Next.js App Router storefront and the /admin area (`pnpm dev`)
- `src/lib/`: data access, money, shipping, orders, Stripe
- `emails/`: the React Email templates (`pnpm email`)
- `prisma/`: schema and migrations
""",
    "CHANGELOG.md": """# Changelog

## 1.5.0
- Sold pieces stay visible with a "Sold" badge.
- English shop pages.

## 1.4.1
- Fixed the cart count after removing the last item.

## 1.4.0
- iDEAL and Bancontact at checkout.
""",
    "package.json": """{
  "name": "kilnworks",
  "version": "1.5.2",
  "private": true,
  "scripts": {
    "dev": "next dev",
    "build": "next build",
    "start": "next start",
    "lint": "biome check .",
    "test": "vitest run",
    "email": "email dev --dir emails --port 3001",
    "release": "changelogen --release"
  },
  "dependencies": {
    "@prisma/client": "^5.22.0",
    "@react-email/components": "^0.0.31",
    "next": "15.1.3",
    "next-auth": "5.0.0-beta.25",
    "next-intl": "^3.26.3",
    "react": "19.0.0",
    "react-dom": "19.0.0",
    "resend": "^4.0.1",
    "server-only": "^0.0.1",
    "stripe": "^17.5.0",
    "zod": "^3.24.1"
  },
  "devDependencies": {
    "@biomejs/biome": "1.9.4",
    "@playwright/test": "^1.49.1",
    "prisma": "^5.22.0",
    "react-email": "^3.0.4",
    "tailwindcss": "^3.4.17",
    "typescript": "^5.7.2",
    "vitest": "^2.1.8"
  },
  "packageManager": "pnpm@9.15.1"
}
""",
    "next.config.mjs": """import createNextIntlPlugin from "next-intl/plugin";

const withNextIntl = createNextIntlPlugin();

/** @type {import('next').NextConfig} */
const nextConfig = {
  images: {
    remotePatterns: [{ protocol: "https", hostname: "res.cloudinary.com", pathname: "/kilnworks/**" }],
  },
};

export default withNextIntl(nextConfig);
""",
    ".env.local": """DATABASE_URL="postgresql://kiln:kiln@localhost:5432/kilnworks"
DIRECT_URL="postgresql://kiln:kiln@localhost:5432/kilnworks"
STRIPE_SECRET_KEY="sk_test_local_only"
STRIPE_WEBHOOK_SECRET="whsec_dashboard_endpoint_8c1e"
NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY="pk_test_local_only"
RESEND_API_KEY="re_test_local_only"
""",
    "prisma/schema.prisma": """generator client {
  provider = "prisma-client-js"
}

datasource db {
  provider  = "postgresql"
  url       = env("DATABASE_URL")
  directUrl = env("DIRECT_URL")
}

model Product {
  id         String      @id @default(cuid())
  slug       String      @unique
  name       String
  priceCents Int
  stock      Int         @default(1)
  imageUrl   String
  imageAlt   String      @default("")
  updatedAt  DateTime    @updatedAt
  orderLines OrderLine[]
}

enum OrderStatus {
  PENDING
  PAID
  SHIPPED
  CANCELLED
}

model Order {
  id                    String      @id @default(cuid())
  email                 String
  status                OrderStatus @default(PENDING)
  stripeSessionId       String      @unique
  stripePaymentIntentId String?     @unique
  subtotalCents         Int
  shippingCents         Int
  createdAt             DateTime    @default(now())
  lines                 OrderLine[]
}

model OrderLine {
  id         String  @id @default(cuid())
  orderId    String
  order      Order   @relation(fields: [orderId], references: [id])
  productId  String
  product    Product @relation(fields: [productId], references: [id])
  quantity   Int
  priceCents Int
}

model ProcessedEvent {
  id          String   @id // the Stripe event id
  processedAt DateTime @default(now())
}
""",
    "src/lib/db.ts": """import "server-only";

import { PrismaClient } from "@prisma/client";

const globalForPrisma = globalThis as unknown as { prisma?: PrismaClient };

export const prisma = globalForPrisma.prisma ?? new PrismaClient();

if (process.env.NODE_ENV !== "production") globalForPrisma.prisma = prisma;
""",
    "src/lib/stripe.ts": """import "server-only";

import Stripe from "stripe";

export const stripe = new Stripe(process.env.STRIPE_SECRET_KEY ?? "", {
  apiVersion: "2024-12-18.acacia",
  appInfo: { name: "kilnworks" },
});
""",
    "src/lib/money.ts": """const formatters = new Map<string, Intl.NumberFormat>();

/** Amounts are integer cents; the locale is fixed so the server and the browser render the same text. */
export function formatMoney(cents: number, currency = "EUR"): string {
  let formatter = formatters.get(currency);
  if (!formatter) {
    formatter = new Intl.NumberFormat("nl-NL", { style: "currency", currency });
    formatters.set(currency, formatter);
  }
  return formatter.format(cents / 100);
}

export function sumCents(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
""",
    "src/lib/shipping.ts": """import type { Country } from "@/lib/countries";

// Amounts in cents (EUR). No shipping to the UK.
export const SHIPPING_CENTS = { NL: 695, EU: 1495 } as const;
export const FREE_SHIPPING_NL_CENTS = 7500;

export function shippingCents(subtotalCents: number, country: Country): number {
  if (country === "NL") {
    return subtotalCents >= FREE_SHIPPING_NL_CENTS ? 0 : SHIPPING_CENTS.NL;
  }
  return SHIPPING_CENTS.EU;
}
""",
    "src/lib/shipping.test.ts": """import { describe, expect, it } from "vitest";

import { shippingCents } from "./shipping";

describe("shippingCents", () => {
  it("is free in NL from the threshold", () => {
    expect(shippingCents(7500, "NL")).toBe(0);
    expect(shippingCents(7499, "NL")).toBe(695);
  });

  it("charges the EU rate elsewhere", () => {
    expect(shippingCents(20000, "DE")).toBe(1495);
  });
});
""",
    "src/lib/orders.ts": """import "server-only";

import type Stripe from "stripe";

import { prisma } from "@/lib/db";

/** checkout.session.completed: the order is paid and its pieces leave the stock (never below 0). */
export async function markPaid(session: Stripe.Checkout.Session): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const order = await tx.order.update({
      where: { stripeSessionId: session.id },
      data: { status: "PAID", stripePaymentIntentId: String(session.payment_intent) },
      include: { lines: true },
    });
    for (const line of order.lines) {
      const { count } = await tx.product.updateMany({
        where: { id: line.productId, stock: { gte: line.quantity } },
        data: { stock: { decrement: line.quantity } },
      });
      if (count === 0) throw new Error(`oversold: ${line.productId}`);
    }
  });
}
""",
    "src/lib/products.ts": """import "server-only";

import { unstable_cache } from "next/cache";

import { prisma } from "@/lib/db";

export function getProduct(slug: string) {
  return unstable_cache(() => prisma.product.findUnique({ where: { slug } }), ["product", slug], {
    tags: [`product:${slug}`],
  })();
}

export const listProducts = unstable_cache(
  () => prisma.product.findMany({ orderBy: { updatedAt: "desc" } }),
  ["products"],
  { tags: ["products"] },
);
""",
    "src/lib/email.ts": """import "server-only";

import { Resend } from "resend";

import OrderConfirmation, { type OrderConfirmationProps } from "../../emails/OrderConfirmation";

const resend = new Resend(process.env.RESEND_API_KEY);
const FROM = "Kilnworks <orders@kilnworks.nl>";

export async function sendOrderConfirmation(to: string, props: OrderConfirmationProps): Promise<void> {
  const { error } = await resend.emails.send({
    from: FROM,
    to,
    subject: `Je bestelling ${props.orderId}`,
    react: OrderConfirmation(props),
  });
  if (error) console.error("order email failed", error.name, error.message);
}
""",
    "src/lib/slugify.ts": """export function slugify(name: string): string {
  const itms = name
    .normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return itms.join("-");
}
""",
    "src/app/api/webhooks/stripe/route.ts": """import { headers } from "next/headers";
import type Stripe from "stripe";

import { prisma } from "@/lib/db";
import { markPaid } from "@/lib/orders";
import { stripe } from "@/lib/stripe";

export async function POST(req: Request) {
  const body = await req.text(); // the raw body: the signature covers these exact bytes
  const signature = (await headers()).get("stripe-signature") ?? "";
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(body, signature, process.env.STRIPE_WEBHOOK_SECRET ?? "");
  } catch (err) {
    return new Response(`Webhook Error: ${(err as Error).message}`, { status: 400 });
  }

  const seen = await prisma.processedEvent.findUnique({ where: { id: event.id } });
  if (seen) return new Response("duplicate", { status: 200 });

  switch (event.type) {
    case "checkout.session.completed":
      await markPaid(event.data.object);
      break;
    default:
      break;
  }

  await prisma.processedEvent.create({ data: { id: event.id } });
  return new Response("ok", { status: 200 });
}
""",
    "src/app/admin/products/actions.ts": """"use server";

import { z } from "zod";

import { requireAdmin } from "@/lib/admin";
import { prisma } from "@/lib/db";

const ProductInput = z.object({
  slug: z.string().min(1),
  name: z.string().min(1),
  priceCents: z.coerce.number().int().nonnegative(),
  stock: z.coerce.number().int().nonnegative(),
  imageAlt: z.string(),
});

export async function updateProduct(formData: FormData): Promise<void> {
  await requireAdmin();
  const input = ProductInput.parse(Object.fromEntries(formData));
  await prisma.product.update({ where: { slug: input.slug }, data: input });
}
""",
    "src/components/ProductCard.tsx": """import type { Product } from "@prisma/client";
import Image from "next/image";
import Link from "next/link";
import { getTranslations } from "next-intl/server";

import { formatMoney } from "@/lib/money";

export async function ProductCard({ product }: { product: Product }) {
  const t = await getTranslations("product");
  return (
    <Link href={`/products/${product.slug}`} className="group block">
      <div className="relative aspect-square overflow-hidden rounded-lg bg-clay-100">
        <Image src={product.imageUrl} alt={product.imageAlt} fill className="object-cover" />
        {product.stock === 0 && (
          <span className="absolute left-2 top-2 rounded bg-clay-900 px-2 text-white">{t("sold")}</span>
        )}
      </div>
      <h3 className="mt-2 font-medium">{product.name}</h3>
      <p>{formatMoney(product.priceCents)}</p>
    </Link>
  );
}
""",
    "src/components/CartDrawer.tsx": """"use client";

import { useTranslations } from "next-intl";

import type { CartLine } from "@/lib/cart";
import type { Country } from "@/lib/countries";
import { formatMoney } from "@/lib/money";

type Props = { lines: CartLine[]; subtotalCents: number; country: Country; open: boolean; onClose: () => void };

export function CartDrawer({ lines, subtotalCents, country, open, onClose }: Props) {
  const t = useTranslations("cart");
  if (!open) return null;
  return (
    <aside className="fixed inset-y-0 right-0 w-96 bg-clay-50 p-6 shadow-xl">
      <button type="button" onClick={onClose} aria-label={t("close")}>
        ×
      </button>
      <ul>
        {lines.map((line) => (
          <li key={line.productId}>
            {line.name} × {line.quantity}: {formatMoney(line.priceCents * line.quantity)}
          </li>
        ))}
      </ul>
      <p className="mt-4 font-semibold">
        {t("subtotal")}: {formatMoney(subtotalCents)}
      </p>
      <a href={`/checkout?country=${country}`} className="mt-4 block rounded bg-clay-700 py-2 text-center text-white">
        {t("checkout")}
      </a>
    </aside>
  );
}
""",
    "src/components/AddToCartButton.tsx": """"use client";

import { useTranslations } from "next-intl";
import { useTransition } from "react";

import { addToCart } from "@/app/cart/actions";

export function AddToCartButton({ productId, soldOut }: { productId: string; soldOut: boolean }) {
  const t = useTranslations("product");
  const [pending, startTransition] = useTransition();
  return (
    <button
      type="button"
      disabled={soldOut || pending}
      onClick={() => startTransition(() => addToCart(productId))}
      className="rounded bg-clay-700 px-4 py-2 text-white disabled:opacity-50"
    >
      {soldOut ? t("sold") : t("addToCart")}
    </button>
  );
}
""",
    "src/components/Footer.tsx": """export function Footer() {
  return (
    <footer className="mt-16 border-t border-clay-200 py-8 text-sm text-clay-600">
      Kilnworks · Oudegracht 210 · Utrecht
    </footer>
  );
}
""",
    "messages/en.json": """{
  "cart": {
    "close": "Close cart",
    "subtotal": "Subtotal",
    "checkout": "Checkout"
  },
  "product": {
    "sold": "Sold",
    "addToCart": "Add to cart"
  }
}
""",
    "messages/nl.json": """{
  "cart": {
    "close": "Winkelwagen sluiten",
    "subtotal": "Subtotaal",
    "checkout": "Afrekenen"
  },
  "product": {
    "sold": "Verkocht",
    "addToCart": "In winkelwagen"
  }
}
""",
    "emails/OrderConfirmation.tsx": """import { Body, Column, Container, Heading, Html, Row } from "@react-email/components";

import { formatMoney } from "../src/lib/money";

type Line = { name: string; quantity: number; priceCents: number };
export type OrderConfirmationProps = { orderId: string; lines: Line[]; subtotalCents: number; shippingCents: number };

export default function OrderConfirmation({ orderId, lines, subtotalCents, shippingCents }: OrderConfirmationProps) {
  const totalCents = subtotalCents + shippingCents;
  return (
    <Html lang="nl">
      <Body>
        <Container>
          <Heading>Bedankt voor je bestelling {orderId}</Heading>
          {lines.map((line) => (
            <Row key={line.name}>
              <Column>
                {line.name} × {line.quantity}
              </Column>
              <Column align="right">{formatMoney(line.priceCents * line.quantity)}</Column>
            </Row>
          ))}
          <Row>
            <Column>Totaal</Column>
            <Column align="right">{formatMoney(totalCents)}</Column>
          </Row>
        </Container>
      </Body>
    </Html>
  );
}
""",
    ".github/workflows/ci.yml": """name: ci
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v4
      - uses: actions/setup-node@v4
        with:
          node-version-file: .nvmrc
          cache: pnpm
      - run: pnpm install --frozen-lockfile
      - run: pnpm lint && pnpm exec tsc --noEmit
      - run: pnpm test
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


# Session 1: a free-shipping nudge in the cart drawer, its test, a commit.
session("free-shipping-nudge")
user("In the cart drawer, show Dutch customers how much more they need to spend to get free shipping.")
bash("git status --short", "Check the working tree", note="routine: clean tree?")
bash("ls src/lib src/components", "List the source folders", note="routine: find the files")
read(
    "src/components/CartDrawer.tsx",
    "kiln_i18n",
    "kiln_hydration_format",
    "kiln_cents",
    note="the drawer (a client component)",
)
read(
    "src/lib/shipping.ts",
    "kiln_ship_free_new",
    "kiln_shipping_rates",
    "kiln_cents",
    note="the shipping rules",
    uses=("kiln_ship_free_new", "kiln_shipping_rates"),
)
edit(
    "src/lib/shipping.ts",
    """  return SHIPPING_CENTS.EU;
}
""",
    """  return SHIPPING_CENTS.EU;
}

/** Cents still missing for free shipping; null where shipping is never free. */
export function freeShippingGapCents(subtotalCents: number, country: Country): number | null {
  if (country !== "NL") return null;
  return Math.max(0, FREE_SHIPPING_NL_CENTS - subtotalCents);
}
""",
    "kiln_ship_free_new",
    "kiln_shipping_rates",
    "kiln_cents",
    note="the gap helper",
    uses=("kiln_ship_free_new", "kiln_shipping_rates"),
)
edit(
    "src/components/CartDrawer.tsx",
    """import { formatMoney } from "@/lib/money";
""",
    """import { formatMoney } from "@/lib/money";
import { freeShippingGapCents } from "@/lib/shipping";
""",
    note="routine: the import",
)
edit(
    "src/components/CartDrawer.tsx",
    """      <p className="mt-4 font-semibold">
        {t("subtotal")}: {formatMoney(subtotalCents)}
      </p>
""",
    """      <p className="mt-4 font-semibold">
        {t("subtotal")}: {formatMoney(subtotalCents)}
      </p>
      {gapCents !== null && gapCents > 0 && (
        <p className="mt-1 text-sm text-clay-600">{t("freeShippingGap", { amount: formatMoney(gapCents) })}</p>
      )}
""",
    "kiln_i18n",
    "kiln_hydration_format",
    "kiln_cents",
    note="show the gap through a message key",
    uses=("kiln_i18n",),
)
edit(
    "src/components/CartDrawer.tsx",
    """  if (!open) return null;
""",
    """  if (!open) return null;
  const gapCents = freeShippingGapCents(subtotalCents, country);
""",
    "kiln_cents",
    note="compute the gap",
)
read("messages/en.json", "kiln_i18n", note="the English messages", uses=("kiln_i18n",))
edit(
    "messages/en.json",
    """    "checkout": "Checkout"
""",
    """    "checkout": "Checkout",
    "freeShippingGap": "Spend {amount} more for free shipping"
""",
    "kiln_i18n",
    note="English message",
    uses=("kiln_i18n",),
)
read("messages/nl.json", "kiln_i18n", note="the Dutch messages", uses=("kiln_i18n",))
edit(
    "messages/nl.json",
    """    "checkout": "Afrekenen"
""",
    """    "checkout": "Afrekenen",
    "freeShippingGap": "Nog {amount} tot gratis verzending"
""",
    "kiln_i18n",
    note="Dutch message",
    uses=("kiln_i18n",),
)
bash("pnpm lint", "Lint and format check", note="routine: lint")
bash("pnpm exec tsc --noEmit", "Type-check", note="routine: typecheck")
answer(
    "The cart drawer now shows 'Nog € 12,50 tot gratis verzending' (English: 'Spend € 12,50 more for free shipping') "
    "for Dutch customers below the €75 threshold; freeShippingGapCents in src/lib/shipping.ts computes it, and the "
    "text is in messages/nl.json and messages/en.json.",
    "kiln_ship_free_new",
    "kiln_i18n",
)
user("Add a unit test for the gap: just below, exactly at and above €75, and another country.")
read("src/lib/shipping.test.ts", "kiln_cents", "kiln_ship_free_new", note="the existing shipping tests")
edit(
    "src/lib/shipping.test.ts",
    """  it("charges the EU rate elsewhere", () => {
    expect(shippingCents(20000, "DE")).toBe(1495);
  });
});
""",
    """  it("charges the EU rate elsewhere", () => {
    expect(shippingCents(20000, "DE")).toBe(1495);
  });
});

describe("freeShippingGapCents", () => {
  it("counts down to the NL threshold", () => {
    expect(freeShippingGapCents(7499, "NL")).toBe(1);
    expect(freeShippingGapCents(7500, "NL")).toBe(0);
    expect(freeShippingGapCents(9000, "NL")).toBe(0);
  });

  it("is null where shipping is never free", () => {
    expect(freeShippingGapCents(9000, "BE")).toBeNull();
  });
});
""",
    "kiln_cents",
    "kiln_ship_free_new",
    note="the cases, in cents",
)
edit(
    "src/lib/shipping.test.ts",
    'import { shippingCents } from "./shipping";',
    'import { freeShippingGapCents, shippingCents } from "./shipping";',
    note="routine: the import",
)
bash("pnpm vitest run src/lib/shipping.test.ts", "Run the shipping tests", note="routine: run the tests")
answer(
    "Added four cases for freeShippingGapCents (7499, 7500 and 9000 cents in NL, and Belgium); all shipping tests pass."
)
user("Looks good, commit it.")
bash("git diff --stat", "See what changed", note="routine: the diff")
bash(
    "git add messages src/components/CartDrawer.tsx src/lib/shipping.ts src/lib/shipping.test.ts && git commit -q -m 'feat(cart): show the amount left for free shipping' && git log --oneline -1",
    "Commit the cart change",
    "kiln_commit_style",
    note="commit",
    uses=("kiln_commit_style",),
)
answer("Committed as `feat(cart): show the amount left for free shipping`.", "kiln_commit_style")

# Session 2: restock on refunds, a local webhook failure, then tests and a commit.
session("refund-restock")
user("Handle charge.refunded in the Stripe webhook: mark the order as refunded and put the pieces back in stock.")
bash("git log --oneline -5 -- src/app/api/webhooks/stripe", "Recent changes to the webhook", note="routine: history")
read(
    "src/app/api/webhooks/stripe/route.ts",
    "kiln_webhook_raw_body",
    "kiln_webhook_idempotent",
    "kiln_order_payment_intent",
    "kiln_partial_refunds",
    note="the webhook route",
    uses=("kiln_webhook_raw_body",),
)
read(
    "src/lib/orders.ts",
    "kiln_stock_reservation",
    "kiln_order_payment_intent",
    note="how paid orders take stock",
    uses=("kiln_stock_reservation",),
)
read("src/lib/db.ts", "kiln_prisma_singleton", note="where prisma comes from")
read("prisma/schema.prisma", "kiln_prisma_migrate", "kiln_order_payment_intent", note="the order model")
edit(
    "prisma/schema.prisma",
    """  CANCELLED
}
""",
    """  CANCELLED
  REFUNDED
}
""",
    "kiln_prisma_migrate",
    note="a new order status",
)
bash(
    "pnpm prisma migrate dev --name order_refunded",
    "Create the migration",
    "kiln_prisma_migrate",
    "kiln_neon",
    note="the migration",
    uses=("kiln_prisma_migrate",),
)
edit(
    "src/lib/orders.ts",
    """      if (count === 0) throw new Error(`oversold: ${line.productId}`);
    }
  });
}
""",
    """      if (count === 0) throw new Error(`oversold: ${line.productId}`);
    }
  });
}

/** charge.refunded (full refunds only): the order is refunded and its pieces are for sale again. */
export async function restockRefunded(paymentIntentId: string): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const order = await tx.order.update({
      where: { stripePaymentIntentId: paymentIntentId },
      data: { status: "REFUNDED" },
      include: { lines: true },
    });
    for (const line of order.lines) {
      await tx.product.update({ where: { id: line.productId }, data: { stock: { increment: line.quantity } } });
    }
  });
}
""",
    "kiln_order_payment_intent",
    "kiln_stock_reservation",
    "kiln_prisma_singleton",
    note="the restock in a transaction, by payment intent",
    uses=("kiln_order_payment_intent",),
)
edit(
    "src/app/api/webhooks/stripe/route.ts",
    """      await markPaid(event.data.object);
      break;
""",
    """      await markPaid(event.data.object);
      break;
    case "charge.refunded": {
      const charge = event.data.object;
      if (charge.amount_refunded === charge.amount && typeof charge.payment_intent === "string") {
        await restockRefunded(charge.payment_intent);
      }
      break;
    }
""",
    "kiln_partial_refunds",
    "kiln_order_payment_intent",
    "kiln_webhook_idempotent",
    note="the new event, full refunds only",
    uses=("kiln_partial_refunds", "kiln_order_payment_intent"),
)
edit(
    "src/app/api/webhooks/stripe/route.ts",
    'import { markPaid } from "@/lib/orders";',
    'import { markPaid, restockRefunded } from "@/lib/orders";',
    note="routine: the import",
)
bash("pnpm exec tsc --noEmit", "Type-check", note="routine: typecheck")
answer(
    "charge.refunded now marks the order REFUNDED (new enum value, migration order_refunded) and puts its pieces "
    "back in stock in one transaction, matched by stripePaymentIntentId. Partial refunds leave the stock alone; "
    "repeated events are still skipped through ProcessedEvent.",
    "kiln_partial_refunds",
    "kiln_order_payment_intent",
    "kiln_prisma_migrate",
    "kiln_webhook_idempotent",
)
user(
    "I ran stripe listen and `stripe trigger charge.refunded`. The listen window printed 'Ready! Your webhook signing "
    "secret is whsec_4b7f0e2a9c1d' and then [400] for every event; the dev server logs 'Webhook Error: No signatures "
    "found matching the expected signature for payload'. What's wrong?"
)
bash(
    "grep -n 'req\\.\\(text\\|json\\)' src/app/api/webhooks/stripe/route.ts",
    "Check that the route verifies the raw body",
    "kiln_webhook_raw_body",
    "kiln_stripe_cli",
    note="rule out the body parsing",
    uses=("kiln_webhook_raw_body",),
)
read(".env.local", "kiln_stripe_cli", note="the local webhook secret", uses=("kiln_stripe_cli",))
edit(
    ".env.local",
    'STRIPE_WEBHOOK_SECRET="whsec_dashboard_endpoint_8c1e"',
    'STRIPE_WEBHOOK_SECRET="whsec_4b7f0e2a9c1d"',
    "kiln_stripe_cli",
    note="the secret stripe listen printed",
    uses=("kiln_stripe_cli",),
)
answer(
    "The route already verifies the raw body (req.text()), so the secret was the problem: .env.local had the dashboard "
    "endpoint's secret, which only matches deployed events. It now holds whsec_4b7f0e2a9c1d from stripe listen; "
    "restart `pnpm dev` and trigger again.",
    "kiln_stripe_cli",
    "kiln_webhook_raw_body",
)
user("It works now. Run the unit tests and the linter, then commit the refund handling (not the env file).")
bash("pnpm test", "Run the unit tests", note="routine: tests")
bash("pnpm lint", "Lint and format check", note="routine: lint")
bash("git status --short", "See what to commit", note="routine: status")
bash(
    "git add prisma/schema.prisma prisma/migrations src/lib/orders.ts src/app/api/webhooks/stripe/route.ts && git commit -q -m 'feat(orders): put pieces back in stock on full refunds' && git log --oneline -1",
    "Commit the refund handling",
    "kiln_commit_style",
    "kiln_prisma_migrate",
    note="commit with the migration",
    uses=("kiln_commit_style", "kiln_prisma_migrate"),
)
answer(
    "Tests and lint pass; committed as `feat(orders): put pieces back in stock on full refunds`, with the "
    "order_refunded migration. .env.local stays out of git.",
    "kiln_commit_style",
)

# Session 3: a new image host and image sizes, then stale product pages after admin edits.
session("product-images")
user(
    "New product photos are uploaded to images.kilnworks.nl, and product pages with one crash with: Invalid src prop "
    '(https://images.kilnworks.nl/products/vase-17.jpg) on `next/image`, hostname "images.kilnworks.nl" is not '
    "configured under images in your `next.config.js`. Fix that, and while you are at it: the product cards download "
    "full-size photos on phones; make them load a fitting size."
)
bash("git status --short", "Check the working tree", note="routine: status")
read("next.config.mjs", "kiln_next_image_hosts", note="the image config", uses=("kiln_next_image_hosts",))
edit(
    "next.config.mjs",
    """    remotePatterns: [{ protocol: "https", hostname: "res.cloudinary.com", pathname: "/kilnworks/**" }],
""",
    """    remotePatterns: [
      { protocol: "https", hostname: "res.cloudinary.com", pathname: "/kilnworks/**" },
      { protocol: "https", hostname: "images.kilnworks.nl", pathname: "/products/**" },
    ],
""",
    "kiln_next_image_hosts",
    note="allow the new host with its path",
    uses=("kiln_next_image_hosts",),
)
read("src/components/ProductCard.tsx", "kiln_image_sizes", note="the product card")
edit(
    "src/components/ProductCard.tsx",
    """fill className="object-cover" />""",
    """fill
          sizes="(min-width: 1024px) 25vw, (min-width: 640px) 50vw, 100vw"
          className="object-cover"
        />""",
    "kiln_image_sizes",
    note="the grid's sizes",
    uses=("kiln_image_sizes",),
)
bash("pnpm lint", "Lint and format check", note="routine: lint")
bash("pnpm build", "Build the app", note="routine: build")
bash("git diff --stat", "See what changed", note="routine: the diff")
answer(
    "images.kilnworks.nl/products/** is now an allowed next/image remote pattern in next.config.mjs, and the "
    "product card's image has sizes='(min-width: 1024px) 25vw, (min-width: 640px) 50vw, 100vw', so phones load a "
    "narrow variant. The build passes.",
    "kiln_next_image_hosts",
    "kiln_image_sizes",
)
user(
    "When we change a product in the admin (the price of speckled-mug, say), the shop keeps showing the old price "
    "for hours. Fix it."
)
bash("ls src/app/admin/products", "Find the admin product code", note="routine: find the file")
read("src/app/admin/products/actions.ts", "kiln_revalidate_tag", note="the admin server action")
read("src/lib/products.ts", "kiln_revalidate_tag", note="how products are cached", uses=("kiln_revalidate_tag",))
edit(
    "src/app/admin/products/actions.ts",
    """import { z } from "zod";
""",
    """import { revalidateTag } from "next/cache";
import { z } from "zod";
""",
    "kiln_revalidate_tag",
    note="import revalidateTag",
    uses=("kiln_revalidate_tag",),
)
edit(
    "src/app/admin/products/actions.ts",
    """  await prisma.product.update({ where: { slug: input.slug }, data: input });
""",
    """  await prisma.product.update({ where: { slug: input.slug }, data: input });
  revalidateTag(`product:${input.slug}`);
  revalidateTag("products");
""",
    "kiln_revalidate_tag",
    note="drop both cache tags",
    uses=("kiln_revalidate_tag",),
)
bash("pnpm exec tsc --noEmit", "Type-check", note="routine: typecheck")
answer(
    "updateProduct now calls revalidateTag for `product:${slug}` and `products` after saving, the tags "
    "src/lib/products.ts caches under, so the product page and the listings show the change on the next request.",
    "kiln_revalidate_tag",
)

# Session 4: the order email, checks, and a question about preview deployments.
session("order-email")
user("The order confirmation email should show the shipping cost as its own line above the total.")
read("emails/OrderConfirmation.tsx", "kiln_cents", "kiln_todo_email_en", note="the template")
edit(
    "emails/OrderConfirmation.tsx",
    """          <Row>
            <Column>Totaal</Column>
""",
    """          <Row>
            <Column>Verzending</Column>
            <Column align="right">{formatMoney(shippingCents)}</Column>
          </Row>
          <Row>
            <Column>Totaal</Column>
""",
    "kiln_cents",
    "kiln_todo_email_en",
    note="the shipping row",
)
bash("git diff emails/OrderConfirmation.tsx", "Review the change", note="routine: the diff")
bash("pnpm email", "Preview the email templates", note="routine: preview")
answer(
    "The confirmation email now has a 'Verzending' line with the shipping cost above 'Totaal'.", "kiln_todo_email_en"
)
user("Run the type check and the unit tests.")
bash("pnpm exec tsc --noEmit", "Type-check", note="routine: typecheck")
bash("pnpm test", "Run the unit tests", note="routine: tests")
answer("Both pass: no type errors, 14 test files green.")
user("Why do order emails from preview deployments never reach the customers' addresses? Check the email setup.")
read("src/lib/email.ts", "kiln_email_sandbox", "kiln_vercel_preview", "kiln_resend", note="the mail sender")
answer(
    "On purpose: previews run with Resend's test API key, which only delivers to the team's own verified address; "
    "any other recipient fails with 'You can only send testing emails to your own email address' (logged by "
    "sendOrderConfirmation). Production uses the live key, so customers get their mail there.",
    "kiln_email_sandbox",
    "kiln_vercel_preview",
)

# Session 5: small requests that need no memory at all (every step's `relevant` is empty).
session("chores")
user("What version is the shop at, according to package.json?")
read("package.json", note="look it up")
answer("1.5.2.")
user("Fix the typo 'recieve' in README.md.")
read("README.md", note="the sentence")
edit("README.md", "Customers recieve an email", "Customers receive an email", note="the typo")
answer("Fixed: README.md now says 'receive'.")
user("How many files are in src/components?")
bash("ls src/components | wc -l", "Count the components", note="count")
answer("Four: AddToCartButton, CartDrawer, Footer and ProductCard.")
user("Show me the last five commits.")
bash("git log --oneline -5", "Recent commits", note="log")
answer("Here are the last five commits (newest first), as printed above.")
user("Is there a 1.4.0 entry in CHANGELOG.md?")
bash("grep -n '1.4.0' CHANGELOG.md", "Look for the entry", note="grep")
answer("Yes: 1.4.0 added iDEAL and Bancontact at checkout.")
user("In src/lib/slugify.ts, rename the variable `itms` to `words`.")
read("src/lib/slugify.ts", note="the function")
edit("src/lib/slugify.ts", "  const itms = name\n", "  const words = name\n", note="the declaration")
edit("src/lib/slugify.ts", "  return itms.join", "  return words.join", note="the use")
answer("Renamed `itms` to `words` in slugify.")
user("Run the formatter on that file.")
bash("pnpm biome format --write src/lib/slugify.ts", "Format the file", note="format")
answer("Formatted; nothing else changed.")
user("Which migrations do we have so far?")
bash("ls prisma/migrations", "List the migrations", note="list")
answer("Eight migrations, from 20250301_init to 20261104_order_refunded, plus migration_lock.toml.")
user("What's the studio's address in the footer?")
read("src/components/Footer.tsx", note="the footer")
answer("Oudegracht 210, Utrecht.")


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
                "tags": ["kilnworks", *tags.split(",")],
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
        "project": "kilnworks",
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
