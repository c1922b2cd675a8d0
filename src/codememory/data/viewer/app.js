// The codememory viewer: a hash router over a few pages, each filled from the daemon's JSON endpoints.
import { ApiError, hasToken, post, session, start, takeLoginToken } from "./api.js";
import { facts, go, h, number, replace, routeParams, short, table, tags } from "./dom.js";
import { memoriesPage, memoryPage } from "./memories.js";
import { reviewPage } from "./review.js";

const main = document.getElementById("main");
const PROJECT_KEY = "codememory.viewer.project";

function percent(share) {
  return typeof share === "number" ? `${Math.floor(share * 1000) / 10}%` : "—";
}

function seconds(value) {
  return typeof value === "number" ? `${Math.round(value)} s` : "—";
}

function card(label, value, id) {
  return h("div", { class: "card", id }, h("div", { class: "n" }, value), h("div", { class: "muted" }, label));
}

async function overviewPage() {
  const data = await post("/viewer/overview");
  const s = data.stats;
  const health = data.health;
  const emb = s.embeddings;
  const spend = s.llm_spend;
  const budget = spend.budget || {};
  // What is wrong, in red. Running without an LLM is the default, not a fault: it is said plainly, below.
  const degraded = [
    emb.reason ? `embeddings: ${emb.reason}` : null,
    health.embedding.available === false ? `embedding model ${health.embedding.provider} failed to load` : null,
    health.last_error ? `last error (${health.last_error_at}): ${health.last_error}` : null,
  ].filter(Boolean);
  replace(main,
    h("h1", {}, "Overview"),
    h("div", { class: "cards" },
      card("live memories", s.live, "count-live"), card("archived", s.archived), card("expired", s.expired),
      card("superseded", s.superseded), card("links", s.link_count), card("entities", s.entity_count),
      card("embedding coverage", percent(emb.coverage), "coverage"), card("capture lag", seconds(health.capture_lag_seconds))),
    h("h2", {}, "By category"),
    table(["category", "memories"], Object.entries(s.categories).map(([c, n]) => h("tr", {}, h("td", {}, c), h("td", {}, n)))),
    h("h2", {}, "Embeddings"),
    facts([["model", emb.model], ["with a vector", `${emb.with_vector} of ${emb.total}`], ["coverage", percent(emb.coverage)],
      ["why none", emb.reason]]),
    h("h2", {}, "Extraction spend (tokens)"),
    table(["", "calls", "prompt", "completion", "total"], ["today", "last_7_days", "all_time"].map((k) => h("tr", {},
      h("td", {}, k.replace(/_/g, " ")), h("td", {}, spend[k].calls), h("td", {}, spend[k].prompt_tokens),
      h("td", {}, spend[k].completion_tokens), h("td", {}, spend[k].total_tokens)))),
    facts([["daily budget", budget.daily_token_budget], ["session budget", budget.session_token_budget],
      ["left today", budget.today_remaining]]),
    h("h2", {}, "Daemon and dependencies"),
    facts([["status", `${health.status}, version ${health.version}, up ${seconds(health.uptime_seconds)}`],
      ["projects open", health.projects_open],
      ["LLM", health.llm ? health.llm_provider : h("span", { id: "llm-none" }, "none: extraction uses its rules (the default; [llm] in your config adds a model)")],
      ["embedder", `${health.embedding.provider} (${health.embedding.loaded ? "loaded" : health.embedding.available === false ? "unavailable" : "not loaded yet"})`],
      ["capture", health.capture_last_run_at
        ? `${seconds(health.capture_lag_seconds)} behind, last run ${health.capture_last_run_at}`
        : h("span", { id: "capture-never" }, "capture has not run yet")],
      ["background tasks", health.tasks_last_run_at || "not run yet"], ["errors", health.errors_total]]),
    h("div", { id: "degraded" }, degraded.length
      ? [h("h2", {}, "Degraded"), h("ul", {}, degraded.map((d) => h("li", { class: "bad" }, d)))]
      : h("p", { class: "muted" }, "Nothing degraded.")),
    h("h2", {}, "Recent memories"),
    table(["id", "text", "category", "created"], data.recent_memories.memories.map((m) => h("tr", {},
      h("td", {}, h("a", { href: `#/memory/${m.id}` }, m.id)), h("td", { class: "text" }, short(m.text, 100)),
      h("td", {}, m.category), h("td", { class: "muted" }, m.created_at)))),
    h("h2", {}, "Recent sessions"),
    table(["session", "goal", "status", "updated"], data.recent_sessions.sessions.map((x) => h("tr", {},
      h("td", {}, h("a", { href: `#/session/${x.session_id}` }, x.session_id)), h("td", {}, short(x.goal, 80)),
      h("td", {}, x.status), h("td", { class: "muted" }, x.updated_at)))),
    h("h2", {}, "Recent injections"),
    table(["agent session", "injections", "last"], data.recent_injections.map((x) => h("tr", {},
      h("td", {}, h("a", { href: `#/injections?session=${encodeURIComponent(x.session_id || "")}` }, x.session_id || "(none)")),
      h("td", {}, x.injections), h("td", { class: "muted" }, x.at)))));
}

async function sessionsPage() {
  const params = routeParams();
  const query = (params.get("q") || "").trim();
  const input = h("input", { name: "q", value: query, size: 40, placeholder: "what was worked on, a file, a date" });
  const form = h("form", { class: "filters", id: "session-search" }, h("label", {}, "Search sessions", input),
    h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go("#/sessions", { q: input.value.trim() });
  });
  const results = h("div", { id: "results" });
  replace(main, h("h1", {}, "Sessions"), form, results);
  if (query) {
    const found = await post("/sessions/search", { query });
    replace(results, found.results.length ? table(["session", "goal", "date", "tool", "why"], found.results.map((r) => h("tr", {},
      h("td", {}, h("a", { href: `#/session/${r.session_id}` }, r.session_id)), h("td", {}, short(r.goal, 100)),
      h("td", {}, r.date), h("td", {}, r.tool), h("td", { class: "muted" }, short(typeof r.why === "string" ? r.why : JSON.stringify(r.why), 120)))))
      : h("p", {}, "No session matches."));
    return;
  }
  const data = await post("/sessions/list", { limit: 100 });
  replace(results, data.sessions.length ? table(["session", "goal", "status", "tool", "updated"], data.sessions.map((x) => h("tr", {},
    h("td", {}, h("a", { href: `#/session/${x.session_id}` }, x.session_id)), h("td", {}, short(x.goal, 100)),
    h("td", {}, x.status), h("td", {}, x.tool), h("td", { class: "muted" }, x.updated_at))))
    : h("p", { class: "muted" }, "No sessions saved yet (agents save them with checkpoints)."));
}

async function sessionPage(id) {
  const data = await post("/viewer/session-detail", { session_id: id });
  const markdown = h("div", { class: "markdown", id: "session-markdown" });
  // The daemon rendered this markdown with raw HTML escaped and only http(s)/mailto links (render_markdown);
  // the CSP refuses inline script besides.
  markdown.innerHTML = data.html;
  replace(main, h("h1", {}, data.session_id),
    facts([["goal", data.goal], ["tool", data.tool], ["status", data.status], ["started", data.started_at],
      ["updated", data.updated_at], ["file", data.markdown_path]]),
    h("h2", {}, "Files"),
    data.files.length ? table(["path", "change"], data.files.map((f) => h("tr", {}, h("td", {}, f.path), h("td", {}, f.change_type))))
      : h("p", { class: "muted" }, "None recorded."),
    h("h2", {}, "Markdown"), markdown);
}

function why(parts) {
  const bits = [];
  for (const key of ["retriever", "match", "by"]) if (parts[key]) bits.push(`${key} ${parts[key]}`);
  for (const key of ["bm25", "cosine", "fused"]) if (typeof parts[key] === "number") bits.push(`${key} ${number(parts[key])}`);
  if (parts.words && parts.words.length) bits.push(`words ${parts.words.join(", ")}`);
  if (parts.entities && parts.entities.length) bits.push(`entities ${parts.entities.join(", ")}`);
  if (parts.pinned) bits.push("pinned");
  return bits.join(" · ");
}

async function injectionsPage() {
  const params = routeParams();
  const chosen = params.get("session") || null;
  const data = await post("/viewer/injections", { session_id: chosen, last: 50 });
  const ex = data.explained;
  const picker = h("select", { id: "injection-session" }, data.sessions.map((x) =>
    h("option", { value: x.session_id || "", selected: x.session_id === ex.session_id }, `${x.session_id || "(none)"} — ${x.injections} call(s), last ${x.at}`)));
  picker.addEventListener("change", () => go("#/injections", { session: picker.value }));
  const calls = ex.injections.slice().reverse().map((inj) => h("div", { class: "injection" },
    h("p", {}, h("strong", {}, `${inj.kind} · ${inj.at}`), " ", h("span", { class: "muted" }, `${inj.source} · ${inj.tokens} tokens (memories ${inj.tokens_by_part.memories}, framing ${inj.tokens_by_part.framing ?? "not reported"})`)),
    inj.query.length ? h("p", {}, "Query: ", h("span", { class: "text" }, inj.query.join(" ; "))) : null,
    inj.degraded ? h("p", { class: "bad" }, `Degraded: ${inj.degraded_reason || "yes"}`) : null,
    table(["memory", "state", "text", "why", "tokens"], inj.memories.map((m) => h("tr", {},
      h("td", {}, m.state === "forgotten" ? m.id : h("a", { href: `#/memory/${m.id}` }, m.id)), h("td", {}, m.state),
      h("td", { class: "text" }, short(m.text, 120)), h("td", { class: "muted" }, why(m.parts)), h("td", {}, m.tokens))))));
  replace(main, h("h1", {}, "Injections"),
    h("p", { class: "muted" }, "What was put in front of an agent, why, and at what token cost (the ledger `codememory explain` reads)."),
    data.sessions.length ? h("label", {}, "Agent session ", picker) : null,
    ex.injections.length ? h("p", { class: "muted" }, `${ex.shown} of ${ex.total} call(s), newest first`) : h("p", {}, "Nothing injected yet."),
    calls);
}

// Usefulness: what memory cost the agents and what they did with it (POST /viewer/report, `codememory report`).
function memoryRows(rows, what) {
  return table(["memory", what, "ranking", "text"], rows.map((r) => h("tr", { class: "use", "data-id": r.id },
    h("td", {}, r.state === "forgotten" ? r.id : h("a", { href: `#/memory/${r.id}` }, r.id)),
    h("td", {}, typeof what === "string" ? useCell(r, what) : ""), h("td", {}, `x${number(r.factor, 2)}`),
    h("td", { class: "text" }, short(r.text || `(${r.state})`, 120), r.evidence ? h("div", { class: "muted" }, short(r.evidence, 160)) : null))));
}

function useCell(r, what) {
  if (what === "used") return `${r.used} of ${r.shown} sessions`;
  if (what === "shown, never used") return `${r.shown_total} sessions${r.offered ? " (offered for archiving)" : ""}`;
  if (what === "contradicted") return `${r.contradicted} sessions`;
  return `${r.shown} sessions`;
}

async function reportPage() {
  const params = routeParams();
  const since = params.get("since") || "";
  const input = h("input", { name: "since", value: since, size: 14, placeholder: "7d, yesterday, 2026-01-01" });
  const form = h("form", { class: "filters", id: "report-since" }, h("label", {}, "Since", input), h("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go("#/report", { since: input.value.trim() });
  });
  const r = await post("/viewer/report", { since: since || null, limit: 20 });
  const section = (title, id, rows, what) => [h("h2", {}, title),
    rows.length ? h("div", { id }, memoryRows(rows, what)) : h("p", { class: "muted", id }, "None.")];
  replace(main, h("h1", {}, "Usefulness"),
    h("p", { class: "muted" }, "What memory cost the agents and what they did with it: a memory counts as used in a session when the agent cited it, fetched it, a later tool call held one of its paths, names, commands or values, or the agent looked up what it names and answered with its values."),
    form,
    h("div", { class: "cards" }, card("agent sessions", r.sessions, "use-sessions"), card("tokens on memory", r.tokens.toLocaleString(), "use-tokens"),
      card("memories shown", r.shown, "use-shown"), card("memories used", r.used, "use-used"),
      card("showings used", r.exposures ? percent(r.uses / r.exposures) : "—", "use-rate")),
    h("h2", {}, "Per day"),
    r.days.length ? h("div", { id: "use-days" }, table(["day", "sessions", "tokens", "shown", "used"], r.days.map((d) => h("tr", {},
      h("td", {}, d.day), h("td", {}, d.sessions), h("td", {}, d.tokens), h("td", {}, d.shown), h("td", {}, d.used))))) : h("p", { class: "muted" }, "Nothing shown yet."),
    h("h2", {}, "Per session"),
    r.per_session.length ? table(["agent session", "tool", "tokens", "shown", "used", "contradicted"], r.per_session.slice().reverse().map((x) => h("tr", {},
      h("td", {}, h("a", { href: `#/injections?session=${encodeURIComponent(x.session_id || "")}` }, x.session_id || "(none)")), h("td", {}, x.source),
      h("td", {}, x.tokens), h("td", {}, x.shown), h("td", {}, x.used), h("td", {}, x.contradicted)))) : h("p", { class: "muted" }, "None."),
    section("Most useful", "use-most", r.most_useful, "used"),
    section("Shown and never used", "use-never", r.never_used, "shown, never used"),
    section("Contradicted (review: stale or wrong?)", "use-contradicted", r.contradicted, "contradicted"),
    section("Stale and still shown", "use-stale", r.stale_shown, "shown"));
}

// Runs: the project's consolidation runs and staleness checks, newest first (POST /viewer/runs). A daemon older
// than the page answers 404: say so instead of failing.
async function runsPage() {
  let data = null;
  try {
    data = await post("/viewer/runs");
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
  }
  if (data === null) {
    replace(main, h("h1", {}, "Runs"), h("p", { class: "muted", id: "runs-placeholder" },
      "This daemon does not report consolidation or staleness runs; restart it after upgrading."));
    return;
  }
  const runs = Array.isArray(data.runs) ? data.runs : [];
  const counts = (c) => Object.entries(c && typeof c === "object" ? c : {}).map(([k, v]) => `${k} ${v}`).join(", ");
  replace(main, h("h1", {}, "Runs"), runs.length
    ? table(["kind", "run", "finished", "status", "trigger", "what changed"], runs.map((r) => h("tr", { class: "run" }, [
      h("td", {}, short(r.kind, 20)), h("td", {}, short(String(r.id), 20)), h("td", {}, short(r.finished_at, 40)),
      h("td", {}, short(r.status, 20)), h("td", {}, short(r.trigger ?? "", 20)), h("td", { class: "text" }, short(counts(r.counts), 200)),
    ])))
    : h("p", { class: "muted", id: "runs-none" }, "No consolidation or staleness runs yet."));
}

async function route() {
  const hash = location.hash || "#/overview";
  const path = hash.split("?")[0];
  const page = path.split("/")[1] || "overview";
  for (const link of document.querySelectorAll("#nav a")) {
    const active = link.dataset.page === page || (link.dataset.page === "memories" && page === "memory")
      || (link.dataset.page === "sessions" && page === "session");
    link.classList.toggle("active", active);
  }
  const id = decodeURIComponent(path.split("/")[2] || "");
  try {
    if (page === "memories") await memoriesPage(main);
    else if (page === "memory") await memoryPage(main, id);
    else if (page === "sessions") await sessionsPage();
    else if (page === "session") await sessionPage(id);
    else if (page === "injections") await injectionsPage();
    else if (page === "runs") await runsPage();
    else if (page === "review") await reviewPage(main);
    else if (page === "report") await reportPage();
    else await overviewPage();
    main.dataset.page = page;
  } catch (err) {
    showError(err);
  }
}

function showNotLoggedIn() {
  replace(main, h("h1", {}, "Not logged in"), h("p", {}, "Run ", h("code", {}, "codememory viewer"),
    " in a terminal and open the link it prints (each link works once)."));
  main.dataset.page = "error";
}

function showError(err) {
  if (err instanceof ApiError && err.status === 401) {
    showNotLoggedIn();
    return;
  }
  replace(main, h("div", { class: "error", id: "page-error" }, err.message || String(err)));
  main.dataset.page = "error";
}

async function boot() {
  const login = takeLoginToken();
  const opened = login.project;
  if (!login.token && !hasToken()) {  // never logged in from this origin: the daemon would refuse every request
    showNotLoggedIn();
    return;
  }
  try {
    await start(login.token);
  } catch (err) {
    showError(err);
    return;
  }
  const select = document.getElementById("project");
  const usable = session.projects.filter((p) => p.exists);
  // The project `codememory viewer` was run in, else the one chosen last in this browser, else the first.
  if (opened && usable.some((p) => p.root === opened)) localStorage.setItem(PROJECT_KEY, opened);
  const saved = localStorage.getItem(PROJECT_KEY);
  session.project = (usable.find((p) => p.root === saved) || usable[0] || {}).root || null;
  replace(select, session.projects.map((p) => h("option", { value: p.root, selected: p.root === session.project, disabled: !p.exists },
    `${p.name} — ${p.root}`)));
  select.addEventListener("change", () => {
    session.project = select.value;
    localStorage.setItem(PROJECT_KEY, select.value);
    route();
  });
  if (!session.project) {
    replace(main, h("p", {}, "No project is registered on this machine: run ", h("code", {}, "codememory init"), " in one."));
    return;
  }
  window.addEventListener("hashchange", route);
  await route();
}

boot();
