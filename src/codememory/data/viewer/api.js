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

// What /login just handed over, taken out of the address bar (and the history): `{ token, project }`, each null when
// absent. The fragment is `#login=<token>`, optionally `&project=<root>` (the project `codememory viewer` was run in,
// for the page to open on). Read once, when the page starts, and only on the load /login redirected to
// (`/#login=...` reached by a navigation, not a reload or a step back): a `#login=` link in a session's markdown,
// clicked and then reloaded, hands nothing over. Even then the token is only a candidate: `start` keeps it only if
// the daemon takes it with this browser's session cookie.
export function takeLoginToken() {
  const none = { token: null, project: null };
  if (!location.hash.startsWith(LOGIN_PREFIX)) return none;
  const fields = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, "", location.pathname + location.search);
  const navigation = performance.getEntriesByType("navigation")[0];
  const redirected = location.pathname === "/" && location.search === "" && (!navigation || navigation.type === "navigate");
  if (!redirected) return none;
  return { token: fields.get("login") || null, project: fields.get("project") };
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

async function sessionWith(csrf) {
  return answer(await fetch("/viewer/session", { credentials: "same-origin", headers: { "X-CSRF-Token": csrf } }));
}

// The session's facts; with a `candidate` token (from takeLoginToken), that token is tried first and stored only if
// the daemon accepts it, else the stored one goes on being used.
export async function start(candidate = null) {
  let data = null;
  if (candidate) {
    try {
      data = await sessionWith(candidate);
      localStorage.setItem(TOKEN_KEY, candidate);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
    }
  }
  if (data === null) data = await sessionWith(token());
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
