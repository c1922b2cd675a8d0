// The memories pages: search and filter (the CLI's engine and filters), and one memory with its curation.
import { post, session } from "./api.js";
import { facts, go, h, number, replace, routeParams, short, table, tags } from "./dom.js";
import { answer } from "./review.js";

const PAGE = 50;
const FILTERS = ["q", "tags", "any_tags", "category", "after", "before", "entered_by", "mode", "archived"];

function list(value) {
  const items = (value || "").split(",").map((t) => t.trim()).filter(Boolean);
  return items.length ? items : null;
}

function explainLine(explain) {
  return Object.entries(explain || {})
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : typeof v === "object" && v ? JSON.stringify(v) : v}`)
    .join("  ");
}

function filterForm(params) {
  const field = (name, label, attrs = {}) =>
    h("label", {}, label, h("input", { name, value: params.get(name) || "", ...attrs }));
  const category = h("select", { name: "category" }, h("option", { value: "" }, "any"),
    session.categories.map((c) => h("option", { value: c, selected: params.get("category") === c }, c)));
  const mode = h("select", { name: "mode" }, ["hybrid", "lexical", "semantic"].map((m) =>
    h("option", { value: m, selected: (params.get("mode") || "hybrid") === m }, m)));
  const form = h("form", { class: "filters", id: "memory-filters" },
    field("q", "Query", { size: 32, placeholder: 'words, "a phrase", -word, a OR b, pre*' }),
    field("tags", "Tags (all)", { size: 12 }),
    field("any_tags", "Tags (any)", { size: 12 }),
    h("label", {}, "Category", category),
    field("after", "After", { size: 10, placeholder: "7d, 2026-01-01" }),
    field("before", "Before", { size: 10 }),
    field("entered_by", "Entered by", { size: 10 }),
    h("label", {}, "Mode", mode),
    h("label", {}, "Archived", h("input", { type: "checkbox", name: "archived", checked: params.get("archived") === "1" })),
    h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = {};
    for (const name of FILTERS) next[name] = name === "archived" ? (data.get(name) ? "1" : "") : data.get(name);
    go("#/memories", next);
  });
  return form;
}

export async function memoriesPage(main) {
  const params = routeParams();
  const filters = {
    tags: list(params.get("tags")),
    any_tags: list(params.get("any_tags")),
    category: params.get("category") || null,
    after: params.get("after") || null,
    before: params.get("before") || null,
    entered_by: params.get("entered_by") || null,
    include_archived: params.get("archived") === "1",
    limit: PAGE,
    offset: Math.max(Number(params.get("offset")) || 0, 0),
  };
  const query = (params.get("q") || "").trim();
  const results = h("div", { id: "results" }, h("p", { class: "muted" }, "Loading…"));
  const forgotten = params.get("forgotten");
  replace(main, h("h1", {}, "Memories"), forgotten ? h("div", { class: "notice", id: "forgotten" }, `Forgot ${forgotten}.`) : null,
    filterForm(params), results);
  if (query) {
    const all = params.get("all") === "1";
    const found = await post("/viewer/search", { ...filters, query, mode: params.get("mode") || "hybrid", all });
    const rows = found.results.map((hit) => h("tr", { class: hit.held_back ? "hit held-back" : "hit", "data-id": hit.id },
      h("td", {}, h("a", { href: `#/memory/${hit.id}` }, hit.id)),
      h("td", { class: "text" }, short(hit.text)),
      h("td", {}, hit.category), h("td", {}, tags(hit.tags)),
      h("td", { class: "provenance" }, hit.provenance ? hit.provenance.label : ""),
      h("td", {}, number(hit.score), " ", h("span", { class: "muted" }, hit.held_back ? "held back" : hit.match)),
      h("td", { class: "muted" }, explainLine(hit.explain))));
    // What the relevance decision left out is counted, and one click lists it (as `search --all` does).
    const shown = found.results.filter((hit) => !hit.held_back).length;
    const held = found.held_back
      ? h("span", { id: "held-back" }, ` — ${found.held_back} held back as unlikely to be relevant `,
        all ? null : h("button", { id: "show-held-back", onclick: () => go("#/memories", { ...Object.fromEntries(params.entries()), all: "1", offset: "" }) }, "Show them"))
      : null;
    replace(results,
      h("p", { class: "muted" }, `${shown} result(s), ranked by ${found.mode}`, held,
        found.degraded ? ` — degraded: ${found.degraded_reason}` : "", found.literal ? " (searched as plain words)" : ""),
      rows.length ? table(["id", "text", "category", "tags", "from", "score", "why"], rows)
        : h("p", { id: "nothing-found" }, found.held_back ? "Nothing relevant found." : "Nothing found."),
      pager(params, filters.offset, found.has_more));
    return;
  }
  const page = await post("/viewer/list", { ...filters, sort: "created", order: "desc" });
  const rows = page.memories.map((m) => h("tr", { class: "hit", "data-id": m.id },
    h("td", {}, h("a", { href: `#/memory/${m.id}` }, m.id)),
    h("td", { class: "text" }, short(m.text)),
    h("td", {}, m.category), h("td", {}, tags(m.tags)), h("td", {}, number(m.importance, 2)),
    h("td", { class: "provenance" }, m.provenance ? m.provenance.label : ""),
    h("td", { class: "muted" }, m.created_at)));
  replace(results, h("p", { class: "muted" }, `${page.count} of ${page.total}, newest first`),
    table(["id", "text", "category", "tags", "importance", "from", "created"], rows),
    pager(params, filters.offset, filters.offset + page.count < page.total));
}

function pager(params, offset, more) {
  const at = (value) => {
    const next = Object.fromEntries(params.entries());
    next.offset = value ? String(value) : "";
    return () => go("#/memories", next);
  };
  return h("div", { class: "actions" },
    offset > 0 ? h("button", { id: "page-previous", onclick: at(Math.max(offset - PAGE, 0)) }, "← Previous") : null,
    more ? h("button", { id: "page-next", onclick: at(offset + PAGE) }, "Next →") : null);
}

function notice(box, text, kind = "notice") {
  replace(box, h("div", { class: kind }, text));
}

function editForm(memory, status, reload) {
  const text = h("textarea", { name: "text", id: "edit-text" });
  text.value = memory.text;
  const category = h("select", { name: "category", id: "edit-category" },
    session.categories.map((c) => h("option", { value: c, selected: c === memory.category }, c)));
  const tagInput = h("input", { name: "tags", id: "edit-tags", value: (memory.tags || []).join(", ") });
  const importance = h("input", { name: "importance", id: "edit-importance", type: "number", min: 0, max: 1,
    step: 0.05, value: memory.importance });
  const form = h("form", { class: "edit", id: "edit-form" },
    h("label", {}, "Text", text), h("label", {}, "Category", category),
    h("label", {}, "Tags (comma separated)", tagInput), h("label", {}, "Importance (0–1)", importance),
    h("div", {}, h("button", { type: "submit", id: "edit-save" }, "Save")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await post("/viewer/memory/edit", {
        id: memory.id, text: text.value, category: category.value,
        tags: list(tagInput.value) || [], importance: Number(importance.value),
      });
      await reload();
      notice(document.getElementById("status"), "Saved.");
    } catch (err) {
      notice(status, err.message, "error");
    }
  });
  return form;
}

function actions(memory, status, reload) {
  const confirmBox = h("span", {});
  const act = (label, fn) => async () => {
    try {
      await fn();
    } catch (err) {
      notice(status, err.message, "error");
    }
  };
  const archive = h("button", { id: "archive", onclick: act("archive", async () => {
    await post("/viewer/memory/archive", { ids: [memory.id], undo: memory.archived });
    await reload();
    notice(document.getElementById("status"), memory.archived ? "Brought back." : "Archived.");
  }) }, memory.archived ? "Unarchive" : "Archive");
  const forget = h("button", { id: "forget", class: "danger", onclick: () => replace(confirmBox,
    h("span", { class: "confirm" }, `Forget ${memory.id} for good? This cannot be undone. `,
      h("button", { id: "forget-confirm", class: "danger", onclick: act("forget", async () => {
        await post("/viewer/memory/forget", { ids: [memory.id] });
        go("#/memories", { forgotten: memory.id });
      }) }, "Yes, forget it"), " ",
      h("button", { id: "forget-cancel", onclick: () => replace(confirmBox) }, "Cancel"))) }, "Forget…");
  const target = h("input", { id: "link-to", placeholder: "mem_…", size: 14 });
  const type = h("select", { id: "link-type" }, session.linkTypes.map((t) => h("option", { value: t }, t)));
  const link = h("button", { id: "link", onclick: act("link", async () => {
    await post("/viewer/memory/link", { from_id: memory.id, to_id: target.value.trim(), type: type.value });
    await reload();
    notice(document.getElementById("status"), "Linked.");
  }) }, "Link");
  return h("div", { class: "actions" }, archive, forget, confirmBox, h("span", {}, "This memory ", type, " ", target, link));
}

// A memory from elsewhere whose text reads like instructions: its review state, and the answer buttons.
function reviewControls(memory, status, reload) {
  const act = (accept) => async () => {
    try {
      await answer([memory.id], accept);
      await reload();
      notice(document.getElementById("status"), accept ? "Accepted." : "Rejected.");
    } catch (err) {
      notice(status, err.message, "error");
    }
  };
  const state = memory.provenance.review;
  return h("span", { id: "memory-review" }, state === "pending" ? "waiting for you " : `${state} `,
    state !== "accepted" ? h("button", { id: "review-accept", onclick: act(true) }, "Accept") : null, " ",
    state !== "rejected" ? h("button", { id: "review-reject", class: "danger", onclick: act(false) }, "Reject") : null);
}

async function transcriptInto(box, memory) {
  try {
    const data = await post("/memory/transcript", { reference: memory.id });
    replace(box, data.turns.map((turn) => h("div", {},
      h("p", { class: "muted" }, `${turn.source} · session ${turn.session_id} · turn ${turn.turn_id} · ${turn.started_at || ""}`),
      h("pre", {}, turn.transcript || turn.fallback_reason || ""))));
  } catch (err) {
    notice(box, err.message, "error");
  }
}

// What agents did with the memory when it was shown (the memory's `usefulness`, as `codememory show` gives it).
function usefulness(u) {
  if (!u || !u.shown) return h("p", { class: "muted", id: "usefulness" }, "Never shown to an agent yet.");
  return h("div", { id: "usefulness" }, facts([
    ["used", `in ${u.used} of the ${u.shown} agent sessions it was shown in`],
    u.warning ? ["counted", "a warning: a session that did not go against it is not counted as ignoring it"] : null,
    ["last used", u.last_used_at], ["last use", u.last_use], ["ranking", `x${number(u.factor, 2)}`],
    u.contradicted ? ["contradicted", `${u.review ? "review: " : ""}in ${u.contradicted} session(s), last ${u.last_contradicted_at}`] : null,
    u.last_contradiction ? ["contradiction", u.last_contradiction] : null,
  ]));
}

export async function memoryPage(main, id) {
  const status = h("div", { id: "status" });
  const reload = async () => {
    let m;
    try {
      m = await post("/viewer/memory", { id });
    } catch (err) {
      if (err.status !== 404) throw err;
      replace(main, h("h1", {}, id), h("p", { class: "error" }, "No such memory (forgotten?)."));
      return;
    }
    const transcript = h("div", { id: "transcript" });
    const source = m.source
      ? [h("span", { class: "text" }, m.source), " ", h("button", { id: "show-transcript", onclick: () => transcriptInto(transcript, m) }, "Show transcript")]
      : "—";
    replace(main,
      h("h1", {}, m.id, m.archived ? " (archived)" : "", m.superseded_by ? ` (superseded by ${m.superseded_by})` : ""),
      status,
      h("div", { class: "memory-text text", id: "memory-text" }, m.text),
      h("h2", {}, "Details"),
      facts([
        ["origin", h("span", { id: "memory-origin" }, m.provenance ? m.provenance.label : "—")],
        m.provenance && m.provenance.review ? ["review", reviewControls(m, status, reload)] : null,
        ["category", m.category], ["tags", tags(m.tags)],
        ["importance", m.provenance && !m.provenance.trusted ? `${number(m.importance, 2)} (claimed; ranked as neutral)` : number(m.importance, 2)],
        ["entered by", m.entered_by], ["source", source], ["created", m.created_at], ["updated", m.updated_at],
        ["expires", m.expires_at], ["accessed", `${m.access_count} time(s), last ${m.last_accessed_at || "never"}`],
      ]),
      transcript,
      h("h2", {}, "Usefulness"),
      usefulness(m.usefulness),
      h("h2", {}, "Links"),
      m.links.length ? table(["direction", "memory", "type", "score"], m.links.map((l) => h("tr", { class: "link" },
        h("td", {}, l.direction === "out" ? "this →" : "→ this"),
        h("td", { class: "text" }, h("a", { href: `#/memory/${l.id}`, title: l.id }, l.text ? short(l.text, 120) : l.id)),
        h("td", {}, l.type), h("td", {}, number(l.score))))) : h("p", { class: "muted" }, "None."),
      h("h2", {}, "Entities"),
      m.entities.length ? h("p", {}, m.entities.map((e) => h("span", { class: "tag" }, `${e.name} (${e.type})`)))
        : h("p", { class: "muted" }, "None."),
      h("h2", {}, "Curate"),
      actions(m, status, reload),
      editForm(m, status, reload));
  };
  await reload();
}
