// app.js and views frames: a Session's committed views payload refreshes the session list only
// when it changes what the row shows (the Session's name, a badge).

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

test("a views frame that names the Session or moves a badge refreshes the list; others do not", async () => {
  let rows = [{ id: "s1", live: true, createdAt: 1_000 }];
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions: rows };
      if (method === "GET" && path === "/api/sessions/s1/history") return { entries: [], hasMore: false };
      if (method === "GET" && path === "/api/sessions/s1/views") {
        return { views: {}, name: null, throughSeq: 0 };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const listings = () => app.calls.filter((c) => c.method === "GET" && c.path === "/api/sessions").length;
  await until(() => app.streams.get("s1")?.length === 1, "the stream");
  const stream = app.streams.get("s1")[0];
  const list = app.$("session-list");
  await until(() => list.children.length === 1, "the session list");
  const before = listings();
  // Nothing the row shows changed (a zero badge is no badge): no listing. Frames are handled in
  // order, so the one listing after the next frame proves this one caused none.
  stream.sendViews({ views: { "x.y": { badge: 0 } }, name: null, throughSeq: 1 });
  rows = [{ id: "s1", live: true, createdAt: 1_000, name: "check the deploy" }];
  stream.sendViews({ views: {}, name: "check the deploy", throughSeq: 2 });
  await until(() => list.textContent.includes("check the deploy"), "the named row");
  assert.equal(listings(), before + 1);
  rows = [{ ...rows[0], badges: { "x.y": 2 } }];
  stream.sendViews({ views: { "x.y": { badge: 2 } }, name: "check the deploy", throughSeq: 3 });
  await until(() => listings() === before + 2, "the badge refresh");
});
