// dsh browser client, network layer: the HTTP API (the tab's bearer token, JSON bodies, error
// answers as ApiError). It owns the token; nothing here renders. Only app.js imports it and
// hands what it needs to the others.

const TOKEN_KEY = "dsh.token";

/** Take `token` out of the address bar and this history entry, keeping every other query
 * parameter (`session=`) and the hash: the token stays out of screenshots, shared links and
 * the browser's history. */
function forgetTokenInUrl() {
  const url = new URL(window.location.href);
  url.searchParams.delete("token");
  window.history.replaceState(window.history.state ?? null, "", url);
}

/** The page's token: `?token=` (then kept for the tab in sessionStorage and taken out of the
 * URL), else the one this tab kept, so a reload of the cleaned URL still signs in. */
function readToken() {
  const fromUrl = new URLSearchParams(window.location.search).get("token");
  try {
    if (fromUrl) {
      window.sessionStorage.setItem(TOKEN_KEY, fromUrl);
      forgetTokenInUrl();
      return fromUrl;
    }
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    // No storage for this tab: the URL is the only place the token is kept, so it stays there.
    return fromUrl;
  }
}

const token = readToken();

/** The tab's token (null on a server without one): the service worker gets it for the
 * buttons of its notifications. */
export function currentToken() {
  return token || null;
}

export function authHeaders() {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

export async function api(method, path, body) {
  const headers = { Accept: "application/json", ...authHeaders() };
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let payload = null;
  if (text !== "") {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = null;
    }
  }
  if (!response.ok) {
    const error = payload && typeof payload === "object" ? payload.error : null;
    throw new ApiError(
      response.status,
      typeof error?.code === "string" ? error.code : `http_${response.status}`,
      typeof error?.message === "string" ? error.message : `HTTP ${response.status}`,
    );
  }
  return payload;
}

export const sessionPath = (id, suffix = "") =>
  `/api/sessions/${encodeURIComponent(id)}${suffix}`;

