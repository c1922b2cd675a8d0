// The Review page: memories that did not start on this machine (pulled through git, found in a committed store,
// imported) and read like instructions to an agent wait here; accepting one lets it into the blocks agents get
// unasked, rejecting one keeps it out of every agent's context (`codememory review`, POST /viewer/review).
import { post } from "./api.js";
import { go, h, replace, routeParams, short, table } from "./dom.js";

const STATES = ["pending", "accepted", "rejected"];

export async function answer(ids, accept) {
  return post("/viewer/review/answer", { ids, accept });
}

export async function reviewPage(main) {
  const params = routeParams();
  const state = STATES.includes(params.get("state")) ? params.get("state") : "pending";
  const data = await post("/viewer/review", { state });
  const status = h("div", { id: "review-status" });
  const act = (id, accept) => async () => {
    try {
      await answer([id], accept);
      await reviewPage(main);
      replace(document.getElementById("review-status"), h("div", { class: "notice" }, `${accept ? "Accepted" : "Rejected"} ${id}.`));
    } catch (err) {
      replace(status, h("div", { class: "error" }, err.message));
    }
  };
  const tabs = h("div", { class: "actions", id: "review-states" }, STATES.map((s) =>
    h("button", { "data-state": s, class: s === state ? "active" : null, onclick: () => go("#/review", { state: s }) },
      `${s} (${data.counts[s] ?? 0})`)));
  const rows = data.memories.map((m) => h("tr", { class: "review-item", "data-id": m.id },
    h("td", {}, h("a", { href: `#/memory/${m.id}` }, m.id)),
    h("td", { class: "text" }, short(m.text, 300)),
    h("td", {}, m.category),
    h("td", { class: "provenance" }, m.provenance),
    h("td", { class: "bad" }, m.reason || ""),
    h("td", {},
      m.review !== "accepted" ? h("button", { class: "accept", onclick: act(m.id, true) }, "Accept") : null, " ",
      m.review !== "rejected" ? h("button", { class: "reject danger", onclick: act(m.id, false) }, "Reject") : null)));
  replace(main, h("h1", {}, "Review"),
    h("p", { class: "muted" }, "Memories from elsewhere (git, a committed store, an import) whose text reads like " +
      "instructions to an agent. Until you accept one, it stays out of the blocks agents get at session start and " +
      "with each step; a rejected one stays out of every agent's context."),
    tabs, status,
    rows.length ? table(["id", "text", "category", "from", "reads like", ""], rows)
      : h("p", { id: "review-none" }, state === "pending" ? "Nothing waits for review." : `No memory is ${state}.`));
}
