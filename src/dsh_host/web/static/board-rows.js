// dsh browser client, pure core: the boards' rows and their loading. `BoardRows` owns what the
// boards of one page hold: the whole board shown (its pages, read through the `http` it is
// given, soonest first, with "Show more"), the start page's first rows of each board and what
// arrived on it while the person was away, and each row action's state (run as the user's
// action on the row's Session). It asks the page to render again through `onChange()`; the
// rendering is Boards' (board.js). It knows nothing of any plugin's words.

import { HOME_LIMIT, MAX_LIMIT, PAGE_SIZE, rowKey, rowsSince } from "./board-data.js";
import { getLocale, t } from "./i18n.js";

/**
 * The rows of the boards of one page. `registry` holds the boards; `http` is boardApi(api);
 * `runTool(sessionId, name, args)` runs a tool as the user's action and resolves with its value;
 * `openSession(id)` and `openBoard(name)` navigate; `onChange()` asks the page to render again;
 * `document` is the page's; `warn` logs.
 */
export class BoardRows {
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

  /** A translator in the page's language now. */
  _translate() {
    const locale = getLocale();
    return (key, params) => t(key, params, locale);
  }
}
