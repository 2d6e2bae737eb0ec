// app.js with no Session open: the empty state's examples show, the toolbar has nothing to act
// on, and typing a message starts a Session and sends it there (as in any chat app).

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

test("a message typed with no session open starts one and goes to it", async () => {
  let sessions = [];
  const app = await bootApp({
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions };
      if (method === "POST" && path === "/api/sessions") {
        sessions = [{ id: "n1", live: true, createdAt: 1_000 }];
        return { id: "n1", header: {} };
      }
      if (method === "GET" && path === "/api/sessions/n1/history") return { entries: [], hasMore: false };
      if (method === "GET" && path === "/api/sessions/n1/views") return { views: {}, name: null, throughSeq: 0 };
      if (method === "POST" && path === "/api/sessions/n1/messages") return { accepted: true };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  await until(() => app.calls.some((c) => c.path === "/api/sessions"), "the listing");
  assert.equal(app.$("empty-state").hidden, false);
  assert.equal(app.$("examples").children.length, 3);
  assert.equal(app.$("fork").hidden, true);
  assert.equal(app.$("rename").hidden, true);
  assert.equal(app.$("composer").disabled, false);
  app.$("examples").children[0].click(); // an example fills the composer
  const text = app.$("composer").value;
  assert.equal(text, "remind me to stretch in 10 minutes");
  app.$("composer-form").dispatch("submit");
  await until(() => app.calls.some((c) => c.path === "/api/sessions/n1/messages"), "the message");
  const order = app.calls.filter((c) => c.method === "POST").map((c) => c.path);
  assert.deepEqual(order, ["/api/sessions", "/api/sessions/n1/messages"]);
  assert.equal(app.calls.find((c) => c.path === "/api/sessions/n1/messages").body.text, text);
  await until(() => app.$("composer").value === "", "the composer to clear");
  assert.equal(app.$("session-id").textContent, "n1");
  assert.equal(app.$("fork").hidden, false);
});
