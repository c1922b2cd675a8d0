// Building the page without ever parsing untrusted text as HTML: every string a memory, a session or a query
// holds goes in as a text node (h's string children, textContent). The one exception is a session's markdown,
// which the daemon renders with raw HTML escaped and links restricted (see viewer_api.render_markdown).

export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "value") node.value = value;
    else if (key === "checked") node.checked = Boolean(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

export function replace(target, ...children) {
  target.replaceChildren();
  append(target, children);
}

export function table(headers, rows) {
  return h("table", {}, h("thead", {}, h("tr", {}, headers.map((t) => h("th", {}, t)))), h("tbody", {}, rows));
}

export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter((p) => p).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "—")]));
}

export function short(text, width = 160) {
  const line = String(text ?? "").replace(/\s+/g, " ").trim();
  return line.length > width ? line.slice(0, width - 1) + "…" : line;
}

export function number(value, digits = 3) {
  return typeof value === "number" ? String(Math.round(value * 10 ** digits) / 10 ** digits) : "—";
}

export function tags(list) {
  return (list || []).map((t) => h("span", { class: "tag" }, t));
}

// A hash route's query ("#/memories?q=x&tags=a") as URLSearchParams.
export function routeParams() {
  const hash = location.hash || "#/overview";
  const at = hash.indexOf("?");
  return new URLSearchParams(at < 0 ? "" : hash.slice(at + 1));
}

export function go(path, params) {
  const query = params ? new URLSearchParams(Object.entries(params).filter(([, v]) => v)).toString() : "";
  location.hash = query ? `${path}?${query}` : path;
}
