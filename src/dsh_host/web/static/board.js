// dsh browser client: the boards, host-wide lists over the rows plugins post across Sessions
// (`GET /api/board`, e.g. every pending reminder on the host). A plugin registers a board
// (registry.registerBoard) with its words and how one row looks; the rows are BoardRows'
// (board-rows.js, over board-data.js), and this module shows them in three places: the whole
// board (opened from its entry beside the Session list; soonest first, paged with "Show more"),
// the start page's first rows, and the rows that arrived while the person was away. Each row
// links to its Session and may offer one action (e.g. Cancel); the keyboard's focus follows a
// rebuild.
//
// It knows nothing of any plugin's words. Every string from a Session (its name, a row's text)
// reaches the DOM as text only. The DOM is reached through the `document` it is given, so Node
// can exercise it with a small stand-in.

import { rowKey } from "./board-data.js";
import { BoardRows } from "./board-rows.js";
import { describeError, errorMessage } from "./errors.js";
import { getLocale } from "./i18n.js";
import { createTime } from "./time.js";

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

/** The boards of one page: their rows (BoardRows, with its arguments) and their rendering. */
export class Boards extends BoardRows {
  get document() {
    return this._document ?? globalThis.document;
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
