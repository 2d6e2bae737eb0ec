// dsh browser client: the boards, host-wide lists over the rows plugins post across Sessions
// (`GET /api/board`, e.g. every pending reminder on the host). A plugin registers a board
// (registry.registerBoard) with its words and how one row looks; this module fetches the rows
// through the `http` it is given and shows them in three places: the whole board (opened from
// its entry beside the Session list; soonest first, paged with "Show more"), the start page's
// first rows, and the rows that arrived while the person was away (since the last-seen instant
// this module keeps in localStorage while the page is visible). Each row links to its Session
// and may offer one action (e.g. Cancel), run as the user's action on that Session.
//
// It knows nothing of any plugin's words. Every string from a Session (its name, a row's text)
// reaches the DOM as text only. The DOM is reached through the `document` it is given, so Node
// can exercise it with a small stand-in.

import { describeError, errorMessage } from "./errors.js";
import { getLocale, t } from "./i18n.js";
import { createTime } from "./time.js";

/** Rows per page of the whole board (the API allows 1..200). */
export const PAGE_SIZE = 50;
export const MAX_LIMIT = 200;
/** Rows a board's start-page section shows when it names no limit. */
export const HOME_LIMIT = 5;
/** Pages read (of MAX_LIMIT rows) to find the rows that arrived while the person was away. */
export const AWAY_PAGES = 10;
/** Rows the away section lists (newest first); the rest are counted. */
export const AWAY_SHOWN = 10;
/** localStorage key of the last instant (epoch ms) the page was seen. */
export const LAST_SEEN_KEY = "dsh.lastSeen";

function storage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** The last instant the page was seen (epoch ms), or null on a first visit. */
export function readLastSeen(store = storage()) {
  let raw = null;
  try {
    raw = store?.getItem(LAST_SEEN_KEY) ?? null;
  } catch {
    raw = null;
  }
  const ms = raw === null ? NaN : Number(raw);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : null;
}

/** Remember `now` as the last instant the page was seen. */
export function markSeen(now = Date.now(), store = storage()) {
  try {
    store?.setItem(LAST_SEEN_KEY, String(Math.floor(now)));
  } catch {
    // not remembered: the next visit shows nothing about being away
  }
}

// ------------------------------------------------------------------ the API

function normalizeRow(raw) {
  if (raw === null || typeof raw !== "object") return null;
  const { sessionId, sessionName, key, kind, atMs, data } = raw;
  if (typeof sessionId !== "string" || sessionId === "") return null;
  if (typeof key !== "string" || key === "") return null;
  if (typeof atMs !== "number" || !Number.isFinite(atMs)) return null;
  return {
    sessionId,
    sessionName: typeof sessionName === "string" && sessionName !== "" ? sessionName : null,
    key,
    kind: typeof kind === "string" ? kind : "",
    atMs,
    data: data ?? null,
  };
}

/** The board routes over `api(method, path)` (api.js): pages of rows and counts. */
export function boardApi(api) {
  return {
    /** `{rows, next}`: the rows after the cursor `after` (soonest first); `next` or null. */
    async page({ plugin, kind, limit = PAGE_SIZE, after = null, since = null }) {
      const query = new URLSearchParams({ plugin, kind, limit: String(limit) });
      if (after !== null) query.set("after", after);
      else if (since !== null) query.set("since", String(since));
      const payload = await api("GET", `/api/board?${query}`);
      const rows = Array.isArray(payload?.rows) ? payload.rows.map(normalizeRow) : [];
      const next = typeof payload?.next === "string" && payload.next !== "" ? payload.next : null;
      return { rows: rows.filter((row) => row !== null), next };
    },
    /** How many rows of that plugin and kind are later than `afterMs`. */
    async count({ plugin, kind, afterMs }) {
      const query = new URLSearchParams({ plugin, kind, after: String(afterMs) });
      const payload = await api("GET", `/api/board/count?${query}`);
      const count = payload?.count;
      return Number.isSafeInteger(count) && count > 0 ? count : 0;
    },
  };
}

/**
 * The rows of a board later than `sinceMs`, newest first, at most `shown` of them, reading at
 * most `maxPages` pages: `{rows, complete}` (`complete`: every page was read).
 */
export async function rowsSince(http, { plugin, kind }, sinceMs, { shown = AWAY_SHOWN, maxPages = AWAY_PAGES } = {}) {
  const found = [];
  let after = null;
  for (let page = 0; page < maxPages; page += 1) {
    // The first page starts at the first row after `sinceMs`; the next ones follow its cursor.
    const { rows, next } = await http.page(
      after === null
        ? { plugin, kind, limit: MAX_LIMIT, since: sinceMs }
        : { plugin, kind, limit: MAX_LIMIT, after },
    );
    for (const row of rows) if (row.atMs > sinceMs) found.push(row);
    if (next === null) return { rows: found.reverse().slice(0, shown), complete: true };
    after = next;
  }
  return { rows: found.reverse().slice(0, shown), complete: false };
}

// ------------------------------------------------------------------ rendering helpers

function make(doc, tag, className, text) {
  const element = doc.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined && text !== null) element.appendChild(doc.createTextNode(String(text)));
  return element;
}

function isDomNode(value) {
  return value !== null && typeof value === "object" && typeof value.nodeType === "number";
}

/** A row's key across boards: its Session and its key there. */
export function rowKey(row) {
  return `${row.sessionId}/${row.key}`;
}

function focusKeys(container) {
  return [...container.querySelectorAll("[data-focus-key]")].map((node) =>
    node.getAttribute("data-focus-key"),
  );
}

/**
 * Where the focus is in `container` before a rebuild (`{key, after}`: its `data-focus-key` and
 * the keys after it), or null when it is elsewhere or on an unkeyed element.
 */
function focusBefore(doc, container) {
  const active = doc.activeElement;
  if (!active || !container.contains(active)) return null;
  const key = active.getAttribute?.("data-focus-key") ?? null;
  if (key === null) return null;
  const keys = focusKeys(container);
  return { key, after: keys.slice(keys.indexOf(key) + 1) };
}

/**
 * Focus the same keyed element again, else the next one of its kind that is still there (the
 * next row's action after an action), else the next one, else `fallback`.
 */
function restoreFocus(container, before, fallback) {
  if (before === null) return;
  const kind = before.key.slice(0, before.key.indexOf(":") + 1);
  const byKey = new Map(
    [...container.querySelectorAll("[data-focus-key]")].map((node) => [
      node.getAttribute("data-focus-key"),
      node,
    ]),
  );
  const sameKind = before.after.filter((key) => kind !== "" && key.startsWith(kind));
  for (const key of [before.key, ...sameKind, ...before.after]) {
    const node = byKey.get(key);
    if (node !== undefined) {
      node.focus();
      return;
    }
  }
  fallback?.focus();
}

// ------------------------------------------------------------------ the boards

/**
 * The boards of one page. `registry` holds them; `http` is boardApi(api); `runTool(sessionId,
 * name, args)` runs a tool as the user's action and resolves with its value; `openSession(id)`
 * and `openBoard(name)` navigate; `onChange()` asks the page to render again; `document` is the
 * page's; `warn` logs.
 */
export class Boards {
  constructor({ registry, http, runTool, openSession, openBoard, onChange, document: doc, warn }) {
    this._registry = registry;
    this._http = http;
    this._runTool = runTool;
    this._openSession = openSession;
    this._openBoard = openBoard;
    this._onChange = onChange ?? (() => {});
    this._document = doc ?? null;
    this._warn = warn ?? ((...args) => globalThis.console?.warn?.(...args));
    /** The whole board shown: `{name, rows, next, state, error, more}`, or null. */
    this.view = null;
    /** The start page: each home board's first rows and each away board's rows since `since`. */
    this.home = { upcoming: new Map(), away: new Map(), since: null };
    /** Each row action's state by row key: "pending" or `{error}`. */
    this.actions = new Map();
    this._generation = 0;
  }

  get document() {
    return this._document ?? globalThis.document;
  }

  /** `[name, spec]` of the boards with an entry beside the Session list. */
  entries() {
    return this._registry.boards().filter(([, spec]) => typeof spec.title === "function");
  }

  // ---------------------------------------------------------------- the whole board

  /** Show board `name` from its first page. */
  async openView(name) {
    const spec = this._registry.board(name);
    this._generation += 1;
    if (spec === null) {
      this.view = null;
      this._onChange();
      return;
    }
    this.view = { name, rows: [], next: null, state: "loading", error: null, more: null };
    this._onChange();
    await this._loadView(PAGE_SIZE);
  }

  closeView() {
    this._generation += 1;
    this.view = null;
  }

  /** Read the board again from its start, as many rows as it shows (the periodic refresh). */
  async refreshView() {
    const view = this.view;
    if (view === null || view.more === "loading" || view.state === "loading") return;
    if (view.rows.length > MAX_LIMIT) return; // more than one read: leave the pages as they are
    this._generation += 1;
    await this._loadView(Math.max(PAGE_SIZE, view.rows.length), { quiet: true });
  }

  async _loadView(limit, { quiet = false } = {}) {
    const view = this.view;
    const spec = this._registry.board(view.name);
    const generation = this._generation;
    if (!quiet) {
      view.state = "loading";
      view.error = null;
    }
    try {
      const page = await this._http.page({ plugin: spec.plugin, kind: spec.kind, limit });
      if (generation !== this._generation || this.view !== view) return;
      view.rows = page.rows;
      view.next = page.next;
      view.state = "ready";
      view.error = null;
    } catch (error) {
      if (generation !== this._generation || this.view !== view) return;
      if (quiet && view.state === "ready") return; // keep showing what we have
      view.state = "error";
      view.error = error;
    }
    this._onChange();
  }

  /** The next page ("Show more"). */
  async more() {
    const view = this.view;
    if (view === null || view.next === null || view.more === "loading") return;
    const spec = this._registry.board(view.name);
    const generation = this._generation;
    view.more = "loading";
    this._onChange();
    try {
      const page = await this._http.page({
        plugin: spec.plugin,
        kind: spec.kind,
        limit: PAGE_SIZE,
        after: view.next,
      });
      if (generation !== this._generation || this.view !== view) return;
      const seen = new Set(view.rows.map(rowKey));
      view.rows.push(...page.rows.filter((row) => !seen.has(rowKey(row))));
      view.next = page.next;
      view.more = null;
      view.focusRow = page.rows[0] === undefined ? null : rowKey(page.rows[0]);
    } catch (error) {
      if (generation !== this._generation || this.view !== view) return;
      view.more = { error };
    }
    this._onChange();
  }

  // ---------------------------------------------------------------- the start page

  /**
   * Load the start page: each home board's first rows and, when `since` (the last-seen instant,
   * null on a first visit) is given, each away board's rows that arrived after it.
   */
  async loadHome(since = this.home.since) {
    this.home.since = since;
    const jobs = [];
    for (const [name, spec] of this._registry.boards()) {
      if (spec.home !== undefined) jobs.push(this._loadUpcoming(name, spec));
      if (spec.away !== undefined && since !== null && !this.home.away.has(name)) {
        jobs.push(this._loadAway(name, spec, since));
      }
    }
    await Promise.all(jobs);
  }

  /** The periodic refresh of the start page: the first rows again (what arrived stays). */
  async refreshHome() {
    await Promise.all(
      this._registry
        .boards()
        .filter(([, spec]) => spec.home !== undefined)
        .map(([name, spec]) => this._loadUpcoming(name, spec)),
    );
  }

  async _loadUpcoming(name, spec) {
    const limit = Math.min(MAX_LIMIT, Math.max(1, Math.floor(spec.home.limit ?? HOME_LIMIT)));
    try {
      const page = await this._http.page({ plugin: spec.plugin, kind: spec.kind, limit });
      this.home.upcoming.set(name, page.rows);
    } catch (error) {
      this._warn(`dsh: could not read the board ${name}`, error);
      if (!this.home.upcoming.has(name)) return;
    }
    this._onChange();
  }

  async _loadAway(name, spec, since) {
    try {
      const count = await this._http.count({ plugin: spec.plugin, kind: spec.kind, afterMs: since });
      if (count === 0) return;
      const { rows } = await rowsSince(this._http, spec, since);
      this.home.away.set(name, { count: Math.max(count, rows.length), rows });
    } catch (error) {
      this._warn(`dsh: could not read what arrived on the board ${name}`, error);
      return;
    }
    this._onChange();
  }

  // ---------------------------------------------------------------- row actions

  _offer(spec, row) {
    if (typeof spec.action !== "function") return null;
    try {
      const offer = spec.action({ row, t: this._translate(), locale: getLocale() });
      if (offer === null || offer === undefined) return null;
      const ok =
        typeof offer.label === "string" &&
        offer.label !== "" &&
        typeof offer.tool === "string" &&
        offer.tool !== "" &&
        offer.arguments !== null &&
        typeof offer.arguments === "object";
      if (!ok) throw new TypeError("a board action needs label, tool and arguments");
      return offer;
    } catch (error) {
      this._warn("dsh: a board action failed; offering none", error);
      return null;
    }
  }

  /** Run a row's action; "done" removes the row everywhere it is shown. */
  async runAction(spec, row, offer) {
    const key = rowKey(row);
    if (this.actions.get(key) === "pending") return;
    this.actions.set(key, "pending");
    this._onChange();
    let outcome;
    try {
      const value = await this._runTool(row.sessionId, offer.tool, offer.arguments);
      outcome = this._outcome(spec, value);
    } catch (error) {
      outcome = { error };
    }
    if (outcome === "done") {
      this.actions.delete(key);
      this.drop((other) => rowKey(other) === key);
    } else {
      this.actions.set(key, outcome);
    }
    this._onChange();
  }

  _outcome(spec, value) {
    if (typeof spec.outcome === "function") {
      try {
        const out = spec.outcome(value);
        if (out === "done" || (out !== null && typeof out === "object" && "error" in out)) return out;
      } catch (error) {
        this._warn("dsh: a board outcome failed", error);
      }
    }
    const failed = value !== null && typeof value === "object" && typeof value.code === "string";
    return failed ? { error: value } : "done";
  }

  /** Remove the rows `match` selects from every list shown (e.g. a deleted Session's). */
  drop(match) {
    if (this.view !== null) this.view.rows = this.view.rows.filter((row) => !match(row));
    for (const [name, rows] of this.home.upcoming) {
      this.home.upcoming.set(name, rows.filter((row) => !match(row)));
    }
  }

  /** Forget what was shown of Session `id` (it was deleted). */
  forgetSession(id) {
    this.drop((row) => row.sessionId === id);
    for (const [name, away] of this.home.away) {
      const rows = away.rows.filter((row) => row.sessionId !== id);
      const count = away.count - (away.rows.length - rows.length);
      if (count > 0) this.home.away.set(name, { count, rows });
      else this.home.away.delete(name);
    }
    for (const key of [...this.actions.keys()]) if (key.startsWith(`${id}/`)) this.actions.delete(key);
  }

  // ---------------------------------------------------------------- rendering

  _translate() {
    const locale = getLocale();
    return (key, params) => t(key, params, locale);
  }

  /** One row: the plugin's node, its Session as a link, the offered action and its failure. */
  _row(spec, row) {
    const doc = this.document;
    const locale = getLocale();
    const translate = this._translate();
    const key = rowKey(row);
    const item = make(doc, "li", "board-row");
    item.setAttribute("data-row-key", key);
    item.setAttribute("data-row-session", row.sessionId);
    let body = null;
    try {
      body = spec.row({
        row,
        locale,
        t: translate,
        time: createTime({ locale }),
        document: doc,
        runTool: (name, args) => this._runTool(row.sessionId, name, args),
        errorText: (error) => describeError(error, locale).text,
      });
    } catch (error) {
      this._warn("dsh: a board row failed; showing its key", error);
    }
    if (!isDomNode(body)) body = make(doc, "span", "board-row-fallback", row.key);
    const main = make(doc, "div", "board-row-main");
    main.appendChild(body);
    const name = row.sessionName ?? translate("sessions.unnamed");
    const link = make(doc, "a", "board-session", name);
    link.setAttribute("href", `?session=${encodeURIComponent(row.sessionId)}`);
    link.setAttribute("data-focus-key", `link:${key}`);
    link.setAttribute("data-testid", "board-session-link");
    link.addEventListener("click", (event) => {
      // A new tab or window (a modifier, the middle button) is the browser's business.
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || event.button > 0) {
        return;
      }
      event.preventDefault();
      this._openSession(row.sessionId);
    });
    main.appendChild(link);
    item.appendChild(main);

    const state = this.actions.get(key);
    const offer = this._offer(spec, row);
    if (offer !== null) {
      const pending = state === "pending";
      const button = make(doc, "button", "board-action", pending ? offer.busyLabel ?? offer.label : offer.label);
      button.setAttribute("type", "button");
      button.setAttribute("data-focus-key", `action:${key}`);
      button.setAttribute("data-testid", "board-action");
      if (offer.description) button.setAttribute("aria-label", offer.description);
      // Busy, it keeps the keyboard's focus (a disabled button would drop it) but does nothing.
      if (pending) button.setAttribute("aria-disabled", "true");
      button.addEventListener("click", () => {
        if (this.actions.get(key) !== "pending") this.runAction(spec, row, offer);
      });
      item.appendChild(button);
    }
    if (state !== undefined && state !== "pending") {
      const reason = describeError(state.error, locale).text;
      let text = null;
      try {
        text = typeof spec.failed === "function" ? spec.failed({ reason, t: translate }) : null;
      } catch (error) {
        this._warn("dsh: a board's failed() failed", error);
      }
      const line = make(
        doc,
        "p",
        "board-row-error",
        typeof text === "string" && text !== "" ? text : translate("board.actionFailed", { reason }),
      );
      line.setAttribute("role", "alert");
      item.appendChild(line);
    }
    return item;
  }

  _list(spec, rows) {
    const list = make(this.document, "ul", "board-list");
    for (const row of rows) list.appendChild(this._row(spec, row));
    return list;
  }

  /** The entries beside the Session list: one button per titled board (`current`: the shown). */
  renderEntries(container, current) {
    const doc = this.document;
    const translate = this._translate();
    const buttons = this.entries().map(([name, spec]) => {
      const button = make(doc, "button", "nav-entry board-entry", spec.title(translate));
      button.setAttribute("type", "button");
      button.setAttribute("data-board", name);
      button.setAttribute("data-testid", "board-entry");
      if (current === name) button.setAttribute("aria-current", "page");
      button.addEventListener("click", () => this._openBoard(name));
      return button;
    });
    return buttons;
  }

  /** The whole board into `heading` (its h2) and `body`. */
  renderView({ heading, body }) {
    const view = this.view;
    const spec = view === null ? null : this._registry.board(view.name);
    if (spec === null) {
      heading.textContent = "";
      body.replaceChildren();
      return;
    }
    const doc = this.document;
    const translate = this._translate();
    const before = focusBefore(doc, body);
    heading.textContent = spec.title?.(translate) ?? view.name;
    const parts = [];
    if (view.state === "loading" && view.rows.length === 0) {
      parts.push(make(doc, "p", "board-note", translate("transcript.loading")));
    } else if (view.state === "error") {
      const problem = make(doc, "p", "board-error", translate("board.failed", { message: errorMessage(view.error) }));
      problem.setAttribute("role", "alert");
      const retry = make(doc, "button", "", translate("transcript.retry"));
      retry.setAttribute("type", "button");
      retry.setAttribute("data-focus-key", "retry");
      retry.addEventListener("click", () => this.openView(view.name));
      problem.appendChild(doc.createTextNode(" "));
      problem.appendChild(retry);
      parts.push(problem);
    } else if (view.rows.length === 0) {
      const empty = spec.empty?.(translate) ?? translate("board.empty");
      const note = make(doc, "p", "board-empty", empty);
      note.setAttribute("data-testid", "board-empty");
      parts.push(note);
    }
    if (view.rows.length > 0) parts.push(this._list(spec, view.rows));
    if (view.next !== null && view.state === "ready") {
      const footer = make(doc, "div", "board-more");
      const loading = view.more === "loading";
      const button = make(doc, "button", "", translate(loading ? "board.loadingMore" : "board.showMore"));
      button.setAttribute("type", "button");
      button.setAttribute("data-focus-key", "more");
      button.setAttribute("data-testid", "board-more");
      if (loading) button.setAttribute("aria-disabled", "true");
      button.addEventListener("click", () => this.more());
      footer.appendChild(button);
      if (view.more !== null && view.more !== "loading") {
        const problem = make(doc, "p", "board-error", translate("board.failed", { message: errorMessage(view.more.error) }));
        problem.setAttribute("role", "alert");
        footer.appendChild(problem);
      }
      parts.push(footer);
    }
    body.replaceChildren(...parts);
    if (view.focusRow) {
      // After "Show more": the keyboard moves to the first row it brought.
      const first = [...body.querySelectorAll("[data-focus-key]")].find(
        (node) => node.getAttribute("data-focus-key") === `link:${view.focusRow}`,
      );
      view.focusRow = null;
      if (first !== undefined && before !== null) {
        first.focus();
        return;
      }
    }
    restoreFocus(body, before, heading);
  }

  /**
   * The start page's sections into `container`: what arrived while the person was away (newest
   * first), then each home board's first rows with a way to the whole board. Hidden when empty.
   */
  renderHome(container, headingFallback) {
    const doc = this.document;
    const translate = this._translate();
    const before = focusBefore(doc, container);
    const sections = [];
    const section = (name, part, title) => {
      const node = make(doc, "section", `home-section home-${part}`);
      const id = `home-${part}-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;
      node.setAttribute("aria-labelledby", id);
      node.setAttribute("data-home", `${part}:${name}`);
      node.setAttribute("data-testid", `home-${part}`);
      const heading = make(doc, "h2", "home-heading", title);
      heading.id = id;
      node.appendChild(heading);
      return node;
    };
    for (const [name, spec] of this._registry.boards()) {
      const away = this.home.away.get(name);
      if (spec.away === undefined || away === undefined || away.count === 0) continue;
      const node = section(name, "away", spec.away.title({ count: away.count, t: translate }));
      if (away.rows.length > 0) node.appendChild(this._list(spec, away.rows));
      if (away.count > away.rows.length) {
        node.appendChild(
          make(doc, "p", "home-more", translate("board.andMore", { count: away.count - away.rows.length })),
        );
      }
      sections.push(node);
    }
    for (const [name, spec] of this._registry.boards()) {
      const rows = this.home.upcoming.get(name);
      if (spec.home === undefined || rows === undefined || rows.length === 0) continue;
      const node = section(name, "upcoming", spec.home.title(translate));
      node.appendChild(this._list(spec, rows));
      if (typeof spec.title === "function") {
        const all = make(doc, "button", "link-button home-all", spec.title(translate));
        all.setAttribute("type", "button");
        all.setAttribute("data-focus-key", `all:${name}`);
        all.setAttribute("data-testid", "home-all");
        all.addEventListener("click", () => this._openBoard(name));
        node.appendChild(all);
      }
      sections.push(node);
    }
    container.replaceChildren(...sections);
    container.hidden = sections.length === 0;
    restoreFocus(container, before, headingFallback ?? null);
  }
}
