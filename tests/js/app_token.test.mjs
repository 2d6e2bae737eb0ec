// app.js opened as `/?token=T` (issue 23 item 5): the token is kept for the tab, taken out of the
// address bar (every other query parameter and the hash stay), and every API call carries it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

test("the token leaves the address bar once the tab keeps it, and still signs every call", async () => {
  const app = await bootApp({
    address: "/?token=T0k%2Fen&session=s1&lang=zh#latest",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") return { entries: [], hasMore: false };
      if (method === "GET" && path === "/api/sessions/s1/views") {
        return { views: {}, name: null, throughSeq: 0 };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  // Fails before the fix: the address bar (and this history entry) kept ?token=.
  assert.equal(app.location.href, "http://dsh.test/?session=s1&lang=zh#latest");
  assert.equal(app.storage.get("dsh.token"), "T0k/en");
  await until(() => app.streams.get("s1")?.length === 1, "the Session's stream");
  const history = app.calls.find((c) => c.path === "/api/sessions/s1/history");
  assert.ok(history, "the Session opened");
  assert.ok(app.calls.length >= 3);
  for (const call of app.calls) {
    assert.equal(call.headers.Authorization, "Bearer T0k/en", `${call.method} ${call.path}`);
  }
  assert.equal(app.location.href, "http://dsh.test/?session=s1&lang=zh#latest");
});
