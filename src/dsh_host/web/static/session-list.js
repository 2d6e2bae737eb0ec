// dsh browser client: the Session list (parents before their branches, pending counts, a
// damaged badge). Whether a Session is loaded in memory (live or cold) is the host's business,
// never shown: opening a Session resumes it. `SessionList` owns the rows and the last listing error: it fetches
// them through the `load` it is given and renders them; nothing else changes them.
//
// The host answers the list a page at a time, newest first (`{sessions, next}`): the list shows
// the first page and a "Show more" button while `next` says more follow; a refresh reads again
// as many rows as are shown (so a host with a million Sessions is never listed whole).

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

/** The rows a refresh reads when none are shown yet (the host's default page), and the most
 * one request may ask for. */
export const SESSIONS_PAGE = 50;
export const SESSIONS_MAX_PAGE = 200;

/** The address of one page of the list: `after` a cursor the host gave, `limit` rows. */
export function sessionsPath({ after = null, limit = null } = {}) {
  const query = new URLSearchParams();
  if (limit !== null) query.set("limit", String(limit));
  if (after !== null) query.set("after", after);
  const text = query.toString();
  return text === "" ? "/api/sessions" : `/api/sessions?${text}`;
}

/** The rows and the next cursor of one answer (anything malformed is left out). */
function pageOf(payload) {
  const rows = Array.isArray(payload?.sessions)
    ? payload.sessions.filter((s) => s && typeof s.id === "string")
    : [];
  const next = typeof payload?.next === "string" && payload.next !== "" ? payload.next : null;
  return { rows, next };
}

/** `rows` then the rows of `more` not already among them. */
function appendRows(rows, more) {
  const seen = new Set(rows.map((s) => s.id));
  return [...rows, ...more.filter((s) => !seen.has(s.id))];
}

function renderSessions(sessions, error, currentId, onSelect, more) {
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
  if (more.shown) {
    const item = el("li", "session-more");
    const label = t(more.loading ? "sessions.loadingMore" : "sessions.more");
    const button = el("button", "session-more-button", label);
    button.type = "button";
    button.setAttribute("data-testid", "sessions-more");
    button.disabled = more.loading;
    button.addEventListener("click", () => more.onMore());
    item.appendChild(button);
    rows.push(item);
  }
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
   * `load({after, limit})` resolves with one page of the listing (`{sessions: [...], next}`,
   * see `sessionsPath`); `currentId()` names the open Session (its row is marked);
   * `onSelect(id)` runs when a row is clicked; `onChange()` after a listing that changed what
   * the list shows.
   */
  constructor({ load, currentId, onSelect, onChange }) {
    this._load = load;
    this._currentId = currentId;
    this._onSelect = onSelect;
    this._onChange = onChange;
    /** The rows shown, newest first; null until the first page arrives. */
    this.rows = null;
    /** The cursor of the rows after those shown, or null when every row is shown. */
    this.next = null;
    /** Why the last listing failed, or null. */
    this.error = null;
    this._refreshing = null;
    this._more = null;
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
    const more = {
      shown: this.next !== null,
      loading: this._more !== null,
      onMore: () => this.more({ focus: true }),
    };
    renderSessions(this.rows, this.error, this._currentId(), this._onSelect, more);
  }

  /** Whether a Session's newly committed views payload (`{views, name}`) changed what its list
   * row shows (its name or a badge): then the list is fetched again. */
  rowIsStale(sessionId, payload) {
    const row = this.find(sessionId);
    if (!row || payload === null || typeof payload !== "object") return false;
    if ((row.name ?? null) !== (payload.name ?? null)) return true;
    return !jsonEqual(sortedEntries(row.badges ?? {}), sortedEntries(viewBadges(payload.views)));
  }

  /** Fetch the listing again, as many rows as are shown (one at a time: a call while one runs
   * shares it; one while more rows load runs after them). */
  refresh() {
    if (this._refreshing) return this._refreshing;
    const after = this._more ?? Promise.resolve();
    this._refreshing = after
      .then(() => this._reload())
      .finally(() => {
        this._refreshing = null;
      });
    return this._refreshing;
  }

  /** Show the next page ("Show more"); with `focus`, the first row it added takes the focus. */
  more({ focus = false } = {}) {
    if (this._more) return this._more;
    if (this.next === null && !this._refreshing) return Promise.resolve();
    const after = this._refreshing ?? Promise.resolve();
    this._more = after.then(() => this._loadMore(focus));
    this.render(); // the button says it is loading
    return this._more;
  }

  async _reload() {
    const previous = { rows: this.rows, next: this.next, error: Boolean(this.error) };
    const shown = this.rows?.length ?? 0;
    try {
      // The rows shown, in as few requests as the host allows (the first page when none are).
      const limit = shown > SESSIONS_PAGE ? Math.min(shown, SESSIONS_MAX_PAGE) : null;
      let { rows, next } = pageOf(await this._load({ after: null, limit }));
      while (next !== null && rows.length < shown) {
        const page = pageOf(await this._load({ after: next, limit }));
        rows = appendRows(rows, page.rows);
        next = page.next;
      }
      this.rows = rows;
      this.next = next;
      this.error = null;
    } catch (error) {
      this.error = error;
    }
    this._changed(previous);
  }

  async _loadMore(focus) {
    const previous = { rows: this.rows, next: this.next, error: Boolean(this.error) };
    let added = null;
    try {
      if (this.next !== null) {
        const page = pageOf(await this._load({ after: this.next, limit: null }));
        const rows = appendRows(this.rows ?? [], page.rows);
        added = rows[this.rows?.length ?? 0]?.id ?? null;
        this.rows = rows;
        this.next = page.next;
      }
      this.error = null;
    } catch (error) {
      this.error = error;
    } finally {
      this._more = null;
    }
    this.render();
    if (!jsonEqual(previous, { rows: this.rows, next: this.next, error: Boolean(this.error) })) {
      this._onChange();
    }
    if (focus) {
      // The button that was clicked is gone: the first row it brought takes the focus, or
      // (nothing came) the button that replaced it.
      const row = [...els.sessionList.children].find((li) =>
        added === null
          ? li.classList.contains("session-more")
          : li.getAttribute("data-session-id") === added,
      );
      row?.querySelector("button")?.focus();
    }
  }

  _changed(previous) {
    // Periodic refreshes leave the list (and keyboard focus in it) alone when nothing changed.
    const now = { rows: this.rows, next: this.next, error: Boolean(this.error) };
    if (!jsonEqual(previous, now)) {
      this.render();
      this._onChange();
    }
  }
}
