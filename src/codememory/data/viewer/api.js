// The daemon's own JSON endpoints. The session cookie (HttpOnly) goes with every request by itself, but the
// browser also sends it to any other server on 127.0.0.1 (cookies are per host, not per port), so the daemon also
// wants the session's CSRF token with every request. It hands the token out once, in the login redirect's URL
// fragment (`/#login=<token>`, never sent to a server); the page keeps it in localStorage, which is per origin
// (per port: no other local server's page reads it) and shared by this origin's tabs.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const TOKEN_KEY = "codememory.viewer.csrf";
const LOGIN_PREFIX = "#login=";

export const session = { project: null, projects: [], categories: [], linkTypes: [] };

// Move a token just handed over by /login from the address bar into storage, out of sight and out of the history.
// The fragment may also name the project `codememory viewer` was run in (`#login=<token>&project=<root>`): that
// root is returned, for the page to open on.
export function takeLoginToken() {
  if (!location.hash.startsWith(LOGIN_PREFIX)) return null;
  const fields = new URLSearchParams(location.hash.slice(1));
  const token = fields.get("login");
  if (token) localStorage.setItem(TOKEN_KEY, token);
  history.replaceState(null, "", location.pathname + location.search);
  return fields.get("project");
}

// Read at every request, not kept: a newer login in another tab replaces both the cookie and the token.
function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function hasToken() {
  return token() !== "";
}

async function answer(response) {
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, (data && data.error) || `HTTP ${response.status}`);
  return data;
}

export async function start() {
  const data = await answer(await fetch("/viewer/session", {
    credentials: "same-origin",
    headers: { "X-CSRF-Token": token() },
  }));
  session.projects = data.projects;
  session.categories = data.categories;
  session.linkTypes = data.link_types;
  return data;
}

// POST `path` with `body` for the chosen project.
export async function post(path, body = {}) {
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": token() },
    body: JSON.stringify({ project_root: session.project, ...body }),
  });
  return answer(response);
}
