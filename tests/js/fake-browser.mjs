// Just enough of a browser to boot the real app.js under Node: a small DOM built from the
// served index.html, window/location/history/sessionStorage, and a scripted fetch() that
// answers the host's JSON API and keeps event streams open for the test to feed.
//
// Use one bootApp() per test file: app.js is a page script that boots once, and the modules it
// imports (dom.js, i18n.js, ...) hold the page's state for the life of the process (node
// --test runs each file in a process of its own).

import { readFileSync } from "node:fs";

import { FakeElement, FakeText } from "./fake-dom.mjs";

const STATIC = new URL("../../src/dsh_host/web/static/", import.meta.url);

const VOID = new Set(["meta", "link", "br", "input", "img"]);

/** The body of index.html as a tree (attributes and structure; static text is not kept). */
function parseBody(html, document) {
  const body = document.createElement("body");
  const stack = [body];
  const source = html.slice(html.indexOf("<body>") + "<body>".length, html.indexOf("</body>"));
  for (const [, closing, tag, attrs] of source.matchAll(/<(\/?)([a-z0-9]+)([^>]*)>/gi)) {
    if (closing) {
      stack.pop();
      continue;
    }
    const element = document.createElement(tag);
    for (const [, name, , value] of attrs.matchAll(/([\w-]+)(="([^"]*)")?/g)) {
      element.setAttribute(name, value ?? "");
      if (name === "hidden") element.hidden = true;
      if (name === "disabled") element.disabled = true;
      if (name === "class") element.className = value ?? "";
    }
    stack.at(-1).appendChild(element);
    if (!VOID.has(tag.toLowerCase())) stack.push(element);
  }
  return body;
}

function makeDocument() {
  const document = {
    createElement: (tag) => new FakeElement(tag),
    createElementNS: (namespace, tag) => Object.assign(new FakeElement(tag), { namespaceURI: namespace }),
    createTextNode: (data) => new FakeText(data),
    documentElement: new FakeElement("html"),
    visibilityState: "visible",
    querySelector: (selector) => document.body.querySelector(selector),
    querySelectorAll: (selector) => document.body.querySelectorAll(selector),
    getElementById: (id) => document.body.querySelector(`[id="${id}"]`),
    head: new FakeElement("head"),
    title: "dsh",
    activeElement: null,
    listeners: new Map(),
    addEventListener(type, listener) {
      if (!document.listeners.has(type)) document.listeners.set(type, []);
      document.listeners.get(type).push(listener);
    },
    /** Fire a document event (e.g. "visibilitychange") at its listeners. */
    dispatch(type, init = {}) {
      for (const listener of document.listeners.get(type) ?? []) listener({ type, ...init });
    },
  };
  document.body = parseBody(readFileSync(new URL("index.html", STATIC), "utf8"), document);
  return document;
}

function json(status, body) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/**
 * Install the fake browser and import app.js at `/?session=<initial>`, or at `address` (a path
 * with its query and hash, e.g. `/?token=T&session=s1#top`) when given; `renderers` (the
 * `#dsh-config` entries, `{url}` of plugin modules) are loaded as the page loads them.
 *
 * `route({method, path, query, body, headers})` answers API calls: return a value (sent as JSON 200),
 * a promise of one, or a Response. Event streams are answered here and exposed as
 * `streams` (per session id: `{send(message, id?), sendStream(payload), end()}` with the newest
 * connection last).
 */
export async function bootApp({ initial, route, address, renderers }) {
  const document = makeDocument();
  if (renderers !== undefined) {
    // The page's #dsh-config: the plugin modules (file URLs) app.js loads at boot.
    const config = new FakeElement("script");
    config.setAttribute("id", "dsh-config");
    config.appendChild(new FakeText(JSON.stringify({ renderers })));
    document.body.appendChild(config);
  }
  const location = new URL(address ?? `/${initial ? `?session=${initial}` : ""}`, "http://dsh.test");
  const storage = new Map();
  const intervals = [];
  const calls = [];
  const streams = new Map();

  globalThis.document = document;
  globalThis.window = {
    location: {
      get search() {
        return location.search;
      },
      get href() {
        return location.href;
      },
    },
    history: {
      replaceState(_state, _title, url) {
        location.href = String(url);
      },
    },
    sessionStorage: {
      getItem: (key) => storage.get(key) ?? null,
      setItem: (key, value) => storage.set(key, String(value)),
    },
    setInterval(callback) {
      intervals.push(callback);
      return intervals.length;
    },
    addEventListener() {},
  };
  globalThis.fetch = async (path, init = {}) => {
    const url = new URL(path, "http://dsh.test");
    const method = init.method ?? "GET";
    const call = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: init.body === undefined ? undefined : JSON.parse(init.body),
      headers: init.headers ?? {},
    };
    calls.push(call);
    const events = /^\/api\/sessions\/([^/]+)\/events$/.exec(url.pathname);
    if (events) {
      const id = decodeURIComponent(events[1]);
      const encoder = new TextEncoder();
      let controller;
      const body = new ReadableStream({
        start(c) {
          controller = c;
        },
      });
      init.signal?.addEventListener("abort", () => {
        try {
          controller.close();
        } catch {
          // already closed or cancelled
        }
      });
      if (!streams.has(id)) streams.set(id, []);
      streams.get(id).push({
        send(message, eventId = "") {
          const idLine = eventId === "" ? "" : `id: ${eventId}\n`;
          controller.enqueue(encoder.encode(`${idLine}data: ${JSON.stringify(message)}\n\n`));
        },
        /** An ephemeral frame as the host sends it: `event: stream`, no `id:`. */
        sendStream(payload) {
          const data = JSON.stringify({ stream: payload });
          controller.enqueue(encoder.encode(`event: stream\ndata: ${data}\n\n`));
        },
        /** A plugin views frame as the host sends it: `event: views`, no `id:`. */
        sendViews(payload) {
          controller.enqueue(encoder.encode(`event: views\ndata: ${JSON.stringify(payload)}\n\n`));
        },
        /** The server ends the response (the client reconnects). */
        end() {
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    }
    const answer = await route(call);
    return answer instanceof Response ? answer : json(200, answer ?? {});
  };

  // A fresh app.js per boot (its imports are shared: see the note at the top).
  await import(new URL(`app.js?boot=${Math.random()}`, STATIC).href);

  const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);
  return {
    document,
    $,
    calls,
    /** The address bar: the page's URL now, and the tab's sessionStorage. */
    location,
    storage,
    streams,
    /** Run the periodic session-list refresh now. */
    tick: () => {
      for (const callback of intervals) callback();
    },
    /** The transcript's node elements as [seq, kind] pairs. */
    transcript: () =>
      $("transcript").children.map((el) => [
        Number(el.getAttribute("data-seq")),
        el.getAttribute("data-kind"),
      ]),
  };
}

/** Let promises, fetch bodies and stream reads run until `condition()` holds. */
export async function until(condition, what = "condition") {
  for (let i = 0; i < 500; i += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}
