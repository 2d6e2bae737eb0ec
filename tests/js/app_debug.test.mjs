// app.js and the developer setting (issue 25 item 4): Flush is a developer's control, offered
// only with `?debug=1` in the address or `localStorage["dsh.debug"] === "1"`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

test("?debug=1 shows Flush, and the stored setting does too; nothing else does", async () => {
  const app = await bootApp({
    address: "/?debug=1&session=s1",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path.endsWith("/history")) return { entries: [], hasMore: false };
      if (method === "GET" && path.endsWith("/views")) return { views: {}, throughSeq: 0 };
      if (method === "POST" && path === "/api/sessions/s1/flush") {
        return { durable: true, throughSeq: 4 };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  await until(() => app.$("session-id").textContent === "s1", "the open session");
  const flush = app.$("flush");
  assert.equal(flush.hidden, false);
  assert.equal(flush.textContent, "Flush");
  flush.click();
  await until(() => app.$("status").textContent !== "", "the flush notice");
  assert.equal(app.$("status").textContent, "Flushed through seq 4 (durable).");

  const { debugMode } = await import("../../src/dsh_host/web/static/chrome.js");
  const stored = new Map();
  globalThis.localStorage = { getItem: (key) => stored.get(key) ?? null };
  const at = (search) => {
    globalThis.window.location = { search };
    return debugMode();
  };
  assert.equal(at("?debug=1"), true);
  assert.equal(at(""), false);
  assert.equal(at("?debug=0"), false);
  stored.set("dsh.debug", "1");
  assert.equal(at(""), true);
  stored.set("dsh.debug", "yes");
  assert.equal(at(""), false);
  globalThis.localStorage = {
    getItem() {
      throw new Error("blocked by the browser's privacy settings");
    },
  };
  assert.equal(at(""), false);
});
