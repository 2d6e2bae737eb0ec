// dsh browser client: the Session list (parents before their branches, pending counts, a
// damaged badge). Whether a Session is loaded in memory (live or cold) is the host's business,
// never shown: opening a Session resumes it. `SessionList` owns the rows and the last listing error: it fetches
// them through the `load` it is given and renders them; nothing else changes them.

import { el, els, toEpochMs } from "./dom.js";
import { errorMessage } from "./errors.js";
import { getLocale, t } from "./i18n.js";
import { jsonEqual } from "./session-window.js";
import { createTime } from "./time.js";

/** What a person calls a Session: its name, else "Untitled session" (never its id). */
export function sessionLabel(session, translate) {
  if (typeof session?.name === "string" && session.name !== "") return session.name;
  return translate("sessions.unnamed");
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

function renderSessions(sessions, error, currentId, onSelect) {
  const list = els.sessionList;
  const items = sessionTree(sessions ?? []);
  const rows = items.map(({ session, depth }) => {
    const li = el("li", "session-item");
    li.setAttribute("data-session-id", session.id);
    li.setAttribute("data-live", session.live ? "true" : "false");
    li.style.setProperty("--depth", String(Math.min(depth, 8)));
    if (depth > 0) li.classList.add("is-fork");
    const button = el("button", "session-button");
    button.type = "button";
    if (currentId === session.id) {
      button.setAttribute("aria-current", "true");
      li.classList.add("is-current");
    }
    const damaged = session.damaged === true; // stored, but the host could not decode it
    if (damaged) {
      li.setAttribute("data-damaged", "true");
      li.classList.add("is-damaged");
    }
    const top = el("span", "session-row");
    top.appendChild(el("span", "session-name", sessionLabel(session, t)));
    const badges = el("span", "session-badges");
    const pending = pendingCount(session);
    if (pending > 0) {
      const count = el("span", "badge badge-count", t("sessions.pending", { count: pending }));
      count.setAttribute("data-testid", "pending-badge");
      count.setAttribute("aria-label", t("sessions.pendingLabel", { count: pending }));
      badges.appendChild(count);
    }
    if (damaged) badges.appendChild(el("span", "badge badge-error", t("sessions.damaged")));
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
      const parent = sessions?.find((s) => s.id === session.parentSession);
      const label = sessionLabel(parent ?? { id: session.parentSession }, t);
      button.appendChild(el("span", "session-lineage", t("sessions.forkOf", { id: label })));
    }
    button.addEventListener("click", () => onSelect(session.id));
    li.appendChild(button);
    return li;
  });
  if (rows.length === 0) rows.push(el("li", "session-empty", t("sessions.empty")));
  list.replaceChildren(...rows);
  if (error) {
    els.sessionsError.hidden = false;
    els.sessionsError.textContent = t("sessions.loadFailed", { message: errorMessage(error) });
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

function sortedEntries(object) {
  return Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export class SessionList {
  /**
   * `load()` resolves with the listing (`{sessions: [...]}`); `currentId()` names the open
   * Session (its row is marked); `onSelect(id)` runs when a row is clicked; `onChange()` after a
   * listing that changed what the list shows.
   */
  constructor({ load, currentId, onSelect, onChange }) {
    this._load = load;
    this._currentId = currentId;
    this._onSelect = onSelect;
    this._onChange = onChange;
    /** The rows of the last listing; null until the first arrives. */
    this.rows = null;
    /** Why the last listing failed, or null. */
    this.error = null;
    this._refreshing = null;
  }

  /** The row of Session `id`, or null. */
  find(id) {
    return this.rows?.find((s) => s.id === id) ?? null;
  }

  /** What a person calls Session `id` (its row's name when listed). */
  label(id) {
    return sessionLabel(this.find(id) ?? { id }, t);
  }

  render() {
    renderSessions(this.rows, this.error, this._currentId(), this._onSelect);
  }

  /** Whether a Session's newly committed views payload (`{views, name}`) changed what its list
   * row shows (its name or a badge): then the list is fetched again. */
  rowIsStale(sessionId, payload) {
    const row = this.find(sessionId);
    if (!row || payload === null || typeof payload !== "object") return false;
    if ((row.name ?? null) !== (payload.name ?? null)) return true;
    return !jsonEqual(sortedEntries(row.badges ?? {}), sortedEntries(viewBadges(payload.views)));
  }

  /** Fetch the listing (one at a time: a call while one runs shares it). */
  refresh() {
    if (this._refreshing) return this._refreshing;
    this._refreshing = (async () => {
      const previous = this.rows;
      const previousError = this.error;
      try {
        const payload = await this._load();
        this.rows = Array.isArray(payload?.sessions)
          ? payload.sessions.filter((s) => s && typeof s.id === "string")
          : [];
        this.error = null;
      } catch (error) {
        this.error = error;
      } finally {
        this._refreshing = null;
      }
      // Periodic refreshes leave the list (and keyboard focus in it) alone when nothing changed.
      if (!jsonEqual(previous, this.rows) || Boolean(previousError) !== Boolean(this.error)) {
        this.render();
        this._onChange();
      }
    })();
    return this._refreshing;
  }
}
