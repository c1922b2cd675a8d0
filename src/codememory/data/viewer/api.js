// The daemon's own JSON endpoints. The session cookie (HttpOnly) goes with every request by itself; each POST
// also carries the session's CSRF token, which only a page of this origin can read (GET /viewer/session).

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export const session = { csrf: null, project: null, projects: [], categories: [], linkTypes: [] };

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
  const data = await answer(await fetch("/viewer/session", { credentials: "same-origin" }));
  session.csrf = data.csrf_token;
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
    headers: { "Content-Type": "application/json", "X-CSRF-Token": session.csrf || "" },
    body: JSON.stringify({ project_root: session.project, ...body }),
  });
  return answer(response);
}
