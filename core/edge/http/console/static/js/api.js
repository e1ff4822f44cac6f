// The console's only way to the gateway: its HTTP API, the one the CLI uses (D79).
// The session cookie stands for the token; X-Crosstalk-Console marks the console's own calls.

export class ApiError extends Error {
  constructor(status, message, type) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

let onSignedOut = () => location.reload();

/** Called when the sign-in ended: the page reloads and the gateway shows the sign-in form. */
export function whenSignedOut(handler) { onSignedOut = handler; }

export async function api(method, path, body) {
  const headers = { "X-Crosstalk-Console": "1", Accept: "application/json" };
  const init = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (resp.status === 401) {
    onSignedOut();
    throw new ApiError(401, "signed out", "unauthorized");
  }
  if (!resp.ok) {
    const err = data && data.error ? data.error : {};
    throw new ApiError(resp.status, err.message || `${resp.status} ${resp.statusText}`, err.type);
  }
  return data;
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);
export const patch = (path, body) => api("PATCH", path, body);
export const del = (path) => api("DELETE", path);

/** A tool over POST /tools/invoke (as `crosstalk tools invoke` does); returns its details. */
export async function invoke(tool, args) {
  const body = await post("tools/invoke", { tool, args, sessionKey: "main" });
  return body.result.details;
}

export const enc = encodeURIComponent;

let spec = null;
/** Whether the gateway serves a route (its OpenAPI document lists it): sections for features
 * that other work adds (linked identities, tool approvals) appear once their routes exist. */
export async function hasRoute(path) {
  if (spec === null) spec = await get("openapi.json");
  return Object.prototype.hasOwnProperty.call(spec.paths || {}, path);
}
