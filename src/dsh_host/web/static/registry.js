// The renderer registry plugins fill (see the app's boot): event-type keyed renderers for
// presented-event nodes (with a JSON fallback), tool and follow-up summaries, tool-row actions,
// Session-view panels, host-wide boards (lists over the rows plugins post across Sessions) and
// locale namespaces. The DOM is reached only through the injected
// `document` (or the browser's global one at render time), so Node can exercise the registry with
// a small stand-in.

import { getLocale, normalizeLocale, registerMessages, t } from "./i18n.js";
import { prettyJson } from "./json.js";

export { prettyJson };

function isDomNode(value) {
  return value !== null && typeof value === "object" && typeof value.nodeType === "number";
}

/** The generic card: an expandable `<details>` "Event: {type}" with the JSON view. */
export function renderFallback(node, { locale = getLocale(), document: doc } = {}) {
  const type = String(node?.eventType ?? "");
  const details = doc.createElement("details");
  details.className = "event-fallback";
  details.setAttribute("data-event-type", type);
  const summary = doc.createElement("summary");
  summary.textContent = t("event.title", { type }, locale);
  const pre = doc.createElement("pre");
  pre.textContent = prettyJson(node?.view);
  details.appendChild(summary);
  details.appendChild(pre);
  return details;
}

export class RendererRegistry {
  /** @param {{document?: Document, warn?: (...args: unknown[]) => void}} [options] */
  constructor({ document: doc, warn } = {}) {
    this._document = doc ?? null;
    this._warn = typeof warn === "function" ? warn : (...args) => globalThis.console?.warn?.(...args);
    this._renderers = new Map();
    this._toolSummaries = new Map();
    this._followupSummaries = new Map();
    this._toolActions = new Map();
    this._panels = new Map();
    this._panelListeners = new Set();
    this._boards = new Map();
  }

  /**
   * The one way anything is registered: `value` under `key` in `map` (a second registration of
   * the key throws; `keyName` names the key in that error). Returns the unregister, which
   * removes only this registration (a stale one leaves a newer registration alone).
   */
  _keyed(map, kind, key, value, keyName = kind) {
    if (typeof key !== "string" || key === "") {
      throw new TypeError(`${keyName} must be a non-empty string`);
    }
    if (map.has(key)) throw new Error(`a ${kind} ${key} is already registered`);
    map.set(key, value);
    return () => {
      if (map.get(key) === value) map.delete(key);
    };
  }

  /**
   * A one-line summary for a tool call and its result: `summarize({name, arguments, value,
   * isError, pending, source, locale, t, time, errorText(value)})` returns a string, or null for the generic one.
   */
  registerToolSummary(toolName, summarize) {
    if (typeof summarize !== "function") throw new TypeError("summarize must be a function");
    return this._keyed(this._toolSummaries, "tool summary", toolName, summarize);
  }

  /**
   * One action a finished tool row offers for a while (e.g. Undo after a cancel): `offer(input)`
   * (the tool summary's input plus `resultTime`, the result's epoch-ms record time, and `now`)
   * returns `{label, description?, until, tool, arguments}` (the button shows until `until`,
   * epoch ms, and runs `tool` with `arguments` as the user's action), or null for none.
   */
  registerToolAction(toolName, offer) {
    if (typeof offer !== "function") throw new TypeError("offer must be a function");
    return this._keyed(this._toolActions, "tool action", toolName, offer);
  }

  /** The plugin's action for a tool row, or null (none offered, a malformed offer, a failure). */
  toolAction(input) {
    const offer = this._toolActions.get(input?.name);
    if (offer === undefined) return null;
    try {
      const out = offer(input);
      if (out === null || out === undefined) return null;
      const ok =
        typeof out.label === "string" &&
        out.label !== "" &&
        typeof out.until === "number" &&
        typeof out.tool === "string" &&
        out.arguments !== null &&
        typeof out.arguments === "object";
      if (!ok) throw new TypeError("a tool action needs label, until, tool and arguments");
      return out;
    } catch (error) {
      this._warn(`action for ${input.name} failed; offering none`, error);
      return null;
    }
  }

  /**
   * The collapsed system line for a plugin's follow-up message: `summarize({text, source,
   * locale, t})` returns a string, or null for the generic one.
   */
  registerFollowupSummary(pluginName, summarize) {
    if (typeof summarize !== "function") throw new TypeError("summarize must be a function");
    return this._keyed(this._followupSummaries, "follow-up summary", pluginName, summarize);
  }

  /**
   * A panel for one Session view: `{title(t), summary?(ctx), render(ctx), deleteNote?({count,
   * t})}` where ctx is `{view, sessionId, locale, t, time, document, runTool(name, args), ...}`
   * (panels.js). `summary` returns the one line (a string or a node) a phone shows while the
   * panel is collapsed, e.g. "2 reminders · next in 9 min"; without it the line is the title.
   * `deleteNote` words what goes with a deleted Session whose list row carries this view's badge
   * `count` (e.g. "Its 2 pending reminders will be deleted too."), for the confirmation.
   */
  registerPanel(viewName, panel) {
    if (panel === null || typeof panel !== "object" || typeof panel.render !== "function") {
      throw new TypeError("a panel needs a render(ctx) function");
    }
    if (typeof panel.title !== "function") throw new TypeError("a panel needs a title(t) function");
    if (panel.summary !== undefined && typeof panel.summary !== "function") {
      throw new TypeError("a panel's summary, when given, is a summary(ctx) function");
    }
    if (panel.deleteNote !== undefined && typeof panel.deleteNote !== "function") {
      throw new TypeError("a panel's deleteNote, when given, is a deleteNote({count, t}) function");
    }
    const drop = this._keyed(this._panels, "panel", viewName, panel);
    this._notifyPanels();
    return () => {
      drop();
      this._notifyPanels();
    };
  }

  /** The registered panels, as `[viewName, panel]` pairs in registration order. */
  panels() {
    return [...this._panels.entries()];
  }

  /**
   * The sentence a panel gives for `count` of its view's badge on a Session about to be deleted,
   * or null (no panel, no deleteNote, a non-string answer, a failure).
   */
  deleteNote(viewName, count, translate) {
    const panel = this._panels.get(viewName);
    if (panel?.deleteNote === undefined) return null;
    try {
      const out = panel.deleteNote({ count, t: translate });
      return typeof out === "string" && out !== "" ? out : null;
    } catch (error) {
      this._warn(`deleteNote for ${viewName} failed; using the generic one`, error);
      return null;
    }
  }

  /**
   * A board: a host-wide list over the rows one plugin posts across Sessions (`GET /api/board`),
   * shown by the host (board.js) with each row's Session as a link. `spec`:
   * - `plugin`, `kind`: which rows (the plugin's name and the rows' kind);
   * - `row(ctx)`: the node for one row (`ctx`: `{row, locale, t, time, document, runTool(name,
   *   args), errorText(error)}`, `row`: `{sessionId, sessionName, key, kind, atMs, data}`;
   *   `runTool` runs a tool as the user's action on the row's Session; Session text as text
   *   only);
   * - `title?(t)`: a board with a title has an entry beside the Session list that opens the whole
   *   board, paged, soonest first; `empty?(t)`: what that view says when there are no rows;
   * - `home?`: `{title(t), limit?}`: the start page shows its first `limit` (default 5) rows;
   * - `away?`: `{title({count, t})}`: the start page shows the rows that arrived since the
   *   person was last here, under this title (e.g. "While you were away: 3 reminders");
   * - `action?(ctx)`: one action a row offers, `{label, busyLabel?, description?, tool,
   *   arguments}` (run as the user's action on the row's Session), or null; `outcome?(value)`:
   *   what the tool's value means, `"done"` (the row goes) or `{error}` (shown on the row);
   *   without it a value with a string `code` is an error; `failed?({reason, t})`: that line.
   * Returns the unregister function; a second board of one name throws.
   */
  registerBoard(name, spec) {
    if (spec === null || typeof spec !== "object" || typeof spec.row !== "function") {
      throw new TypeError("a board needs a row(ctx) function");
    }
    for (const field of ["plugin", "kind"]) {
      if (typeof spec[field] !== "string" || spec[field] === "") {
        throw new TypeError(`a board needs its ${field}, a non-empty string`);
      }
    }
    for (const field of ["title", "empty", "action", "outcome", "failed"]) {
      if (spec[field] !== undefined && typeof spec[field] !== "function") {
        throw new TypeError(`a board's ${field}, when given, is a function`);
      }
    }
    if (spec.home !== undefined && typeof spec.home?.title !== "function") {
      throw new TypeError("a board's home, when given, is {title(t), limit?}");
    }
    if (spec.away !== undefined && typeof spec.away?.title !== "function") {
      throw new TypeError("a board's away, when given, is {title({count, t})}");
    }
    const drop = this._keyed(this._boards, "board", name, spec);
    this._notifyPanels();
    return () => {
      drop();
      this._notifyPanels();
    };
  }

  /** The registered boards, as `[name, spec]` pairs in registration order. */
  boards() {
    return [...this._boards.entries()];
  }

  /** The board registered as `name`, or null. */
  board(name) {
    return this._boards.get(name) ?? null;
  }

  onPanelsChange(listener) {
    this._panelListeners.add(listener);
    return () => this._panelListeners.delete(listener);
  }

  _notifyPanels() {
    for (const listener of this._panelListeners) listener();
  }

  /** The plugin's summary for a tool row, or null (no summarizer, a null answer, a failure). */
  toolSummary(input) {
    return this._summary(this._toolSummaries, input?.name, input);
  }

  /** The plugin's line for a follow-up, or null. */
  followupSummary(input) {
    return this._summary(this._followupSummaries, input?.source?.plugin, input);
  }

  _summary(map, key, input) {
    const summarize = map.get(key);
    if (summarize === undefined) return null;
    try {
      const out = summarize(input);
      return typeof out === "string" && out !== "" ? out : null;
    } catch (error) {
      this._warn(`summary for ${key} failed; using the generic one`, error);
      return null;
    }
  }

  get document() {
    return this._document ?? globalThis.document;
  }

  /**
   * Register `render({node, locale, t, time, document, sessionId, runTool, findEvent,
   * errorText, notices})` for one durable event type: `locale` is "en" or "zh" and `t(key,
   * params)` translates in it (host keys and registered namespaces); `runTool(name, args)` runs
   * a tool as the user's action on the Session, `findEvent(predicate)` answers its latest loaded
   * event that matches (or null), `notices()` reads its notices (`GET .../notices`). The cards of
   * a type are rendered again when more events of that type arrive. Returns the unregister
   * function; registering a type twice throws.
   */
  register(eventType, render) {
    if (typeof render !== "function") throw new TypeError("render must be a function");
    // Wrapped: the same function registered again after an unregister is a new registration.
    return this._keyed(this._renderers, "renderer for", eventType, { render }, "eventType");
  }

  /** A plugin's locale namespace (see i18n.registerMessages); returns the unregister function. */
  registerMessages(namespace, tables) {
    return registerMessages(namespace, tables);
  }

  has(eventType) {
    return this._renderers.has(eventType);
  }

  /** Render a presented-event node with its keyed renderer, or the JSON fallback. */
  render(node, ctx = {}) {
    const doc = ctx.document ?? this.document;
    const locale = normalizeLocale(ctx.locale ?? getLocale());
    const registration = this._renderers.get(node?.eventType);
    if (registration !== undefined) {
      try {
        const translate = (key, params) => t(key, params, locale);
        const out = registration.render({ ...ctx, node, locale, t: translate, document: doc });
        if (isDomNode(out)) return out;
        throw new TypeError("renderer returned no DOM node");
      } catch (error) {
        this._warn(`renderer for ${node.eventType} failed; using the JSON fallback`, error);
      }
    }
    return renderFallback(node, { locale, document: doc });
  }
}
