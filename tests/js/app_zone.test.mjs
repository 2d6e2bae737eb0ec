// app.js sends a message with the browser's zone; a host that refuses that zone
// (`invalid_time_zone`, nothing changed) gets the message once more without it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

test("a refused zone is dropped and the message still goes", async () => {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  assert.ok(zone, "this Node knows its zone");
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path, body }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") {
        return { entries: [], hasMore: false };
      }
      if (method === "POST" && path === "/api/sessions/s1/messages") {
        if (body.timeZone === undefined) return { accepted: true };
        const error = { code: "invalid_time_zone", message: "timeZone must be UTC or ..." };
        return new Response(JSON.stringify({ error }), {
          status: 400,
          headers: { "content-type": "application/json" },
        });
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  await until(() => app.$("session-id").textContent === "s1", "the open session");
  app.$("composer").value = "remind me tomorrow at 9am to stretch";
  app.$("composer-form").dispatch("submit");
  const posts = () => app.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages"));
  await until(() => posts().length === 2, "the second POST");
  const text = "remind me tomorrow at 9am to stretch";
  assert.deepEqual(
    posts().map((c) => c.body),
    [{ text, timeZone: zone }, { text }],
  );
  await until(() => app.$("composer").value === "", "the composer to clear");
  assert.doesNotMatch(app.$("status").textContent, /invalid_time_zone/);
});
