// dsh browser client: the Session list (parents before their forks, live / cold / damaged
// badges) and its refresh from the API.

import { api, errorMessage } from "./api.js";
import { el, els, toEpochMs } from "./dom.js";
import { getLocale, t } from "./i18n.js";
import { renderChrome } from "./render.js";
import { jsonEqual } from "./session-window.js";
import { sessionLabel, state } from "./state.js";
import { createTime } from "./time.js";

let onSelect = () => {};

/** What clicking a Session in the list does (the app opens that Session). */
export function onSessionSelect(handler) {
  onSelect = handler;
}

/** Parents before their forks; roots newest first, forks oldest first; cycles tolerated. */
function sessionTree(sessions) {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map();
  const roots = [];
  for (const session of sessions) {
    const parent = session.parentSession;
    if (typeof parent === "string" && parent !== session.id && byId.has(parent)) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(session);
    } else {
      roots.push(session);
    }
  }
  const created = (s) => toEpochMs(s.createdAt) ?? 0;
  roots.sort((a, b) => created(b) - created(a));
  const out = [];
  const seen = new Set();
  const visit = (session, depth) => {
    if (seen.has(session.id)) return;
    seen.add(session.id);
    out.push({ session, depth });
    const kids = (children.get(session.id) ?? []).slice().sort((a, b) => created(a) - created(b));
    for (const kid of kids) visit(kid, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  for (const session of sessions) visit(session, 0); // members of a parent cycle
  return out;
}

export function renderSessions() {
  const list = els.sessionList;
  const items = sessionTree(state.sessions ?? []);
  const rows = items.map(({ session, depth }) => {
    const li = el("li", "session-item");
    li.setAttribute("data-session-id", session.id);
    li.setAttribute("data-live", session.live ? "true" : "false");
    li.style.setProperty("--depth", String(Math.min(depth, 8)));
    if (depth > 0) li.classList.add("is-fork");
    const button = el("button", "session-button");
    button.type = "button";
    if (state.current && state.current.id === session.id) {
      button.setAttribute("aria-current", "true");
      li.classList.add("is-current");
    }
    const damaged = session.damaged === true; // stored, but the host could not decode it
    if (damaged) {
      li.setAttribute("data-damaged", "true");
      li.classList.add("is-damaged");
    }
    const top = el("span", "session-row");
    const name = el("span", "session-name", sessionLabel(session, t));
    name.title = session.id;
    top.appendChild(name);
    const badges = el("span", "session-badges");
    const pending = pendingCount(session);
    if (pending > 0) {
      const count = el("span", "badge badge-count", t("sessions.pending", { count: pending }));
      count.setAttribute("data-testid", "pending-badge");
      count.setAttribute("aria-label", t("sessions.pendingLabel", { count: pending }));
      badges.appendChild(count);
    }
    const badge = damaged
      ? el("span", "badge badge-error", t("sessions.damaged"))
      : el(
          "span",
          session.live ? "badge badge-live" : "badge badge-cold",
          t(session.live ? "sessions.live" : "sessions.cold"),
        );
    badges.appendChild(badge);
    top.appendChild(badges);
    button.appendChild(top);
    const createdMs = toEpochMs(session.createdAt);
    if (createdMs !== null) {
      const { text, title } = createTime({ locale: getLocale() }).when(createdMs);
      const time = el("time", "session-created", text);
      time.setAttribute("datetime", new Date(createdMs).toISOString());
      time.setAttribute("title", title);
      time.setAttribute("data-dsh-relative", "");
      button.appendChild(time);
    }
    if (damaged && typeof session.error === "string") {
      button.appendChild(el("span", "session-damage", session.error));
    }
    if (typeof session.parentSession === "string") {
      const parent = state.sessions?.find((s) => s.id === session.parentSession);
      const label = sessionLabel(parent ?? { id: session.parentSession }, t);
      button.appendChild(el("span", "session-lineage", t("sessions.forkOf", { id: label })));
    }
    button.addEventListener("click", () => onSelect(session.id));
    li.appendChild(button);
    return li;
  });
  if (rows.length === 0) rows.push(el("li", "session-empty", t("sessions.empty")));
  list.replaceChildren(...rows);
  if (state.sessionsError) {
    els.sessionsError.hidden = false;
    els.sessionsError.textContent = t("sessions.loadFailed", {
      message: errorMessage(state.sessionsError),
    });
  } else {
    els.sessionsError.hidden = true;
    els.sessionsError.textContent = "";
  }
}

/** The sum of a row's view badges (e.g. its pending reminders). */
export function pendingCount(session) {
  const badges = session?.badges;
  if (badges === null || typeof badges !== "object") return 0;
  let total = 0;
  for (const value of Object.values(badges)) {
    if (Number.isSafeInteger(value) && value > 0) total += value;
  }
  return total;
}

let refreshing = null;

/** The positive badges of a views payload, as the list rows carry them. */
function viewBadges(views) {
  const out = {};
  if (views === null || typeof views !== "object") return out;
  for (const [name, view] of Object.entries(views)) {
    const badge = view !== null && typeof view === "object" ? view.badge : undefined;
    if (Number.isInteger(badge) && badge > 0) out[name] = badge;
  }
  return out;
}

/** Whether a Session's newly committed views payload (`{views, name}`) changed what its list
 * row shows (its name or a badge): then the list is fetched again. */
export function rowIsStale(sessionId, payload) {
  const row = state.sessions?.find((s) => s.id === sessionId);
  if (!row || payload === null || typeof payload !== "object") return false;
  if ((row.name ?? null) !== (payload.name ?? null)) return true;
  return !jsonEqual(sortedEntries(row.badges ?? {}), sortedEntries(viewBadges(payload.views)));
}

function sortedEntries(object) {
  return Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export async function refreshSessions() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    const previous = state.sessions;
    const previousError = state.sessionsError;
    try {
      const payload = await api("GET", "/api/sessions");
      state.sessions = Array.isArray(payload?.sessions)
        ? payload.sessions.filter((s) => s && typeof s.id === "string")
        : [];
      state.sessionsError = null;
    } catch (error) {
      state.sessionsError = error;
    } finally {
      refreshing = null;
    }
    // Periodic refreshes leave the list (and keyboard focus in it) alone when nothing changed.
    if (
      !jsonEqual(previous, state.sessions) ||
      Boolean(previousError) !== Boolean(state.sessionsError)
    ) {
      renderSessions();
      renderChrome();
    }
  })();
  return refreshing;
}
