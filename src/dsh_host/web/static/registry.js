// Event-type keyed renderers for presented-event nodes, with a JSON fallback.
// The DOM is reached only through the injected `document` (or the browser's global one at
// render time), so Node can exercise the registry with a small stand-in.

import { getLocale, normalizeLocale, registerMessages, t } from "./i18n.js";

/** Pretty JSON for display; never throws. */
export function prettyJson(value) {
  try {
    const text = JSON.stringify(value === undefined ? null : value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

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
  }

  get document() {
    return this._document ?? globalThis.document;
  }

  /**
   * Register `render({node, locale, t, document})` for one durable event type: `locale` is
   * "en" or "zh" and `t(key, params)` translates in it (host keys and registered namespaces).
   * Returns the unregister function; registering a type twice throws.
   */
  register(eventType, render) {
    if (typeof eventType !== "string" || eventType === "") {
      throw new TypeError("eventType must be a non-empty string");
    }
    if (typeof render !== "function") throw new TypeError("render must be a function");
    if (this._renderers.has(eventType)) {
      throw new Error(`a renderer for ${eventType} is already registered`);
    }
    const registration = { render };
    this._renderers.set(eventType, registration);
    return () => {
      if (this._renderers.get(eventType) === registration) this._renderers.delete(eventType);
    };
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
