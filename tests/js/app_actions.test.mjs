// app.js toolbar actions: a button stays disabled while its request is pending, whatever
// re-renders the chrome meanwhile (live events, session-list refreshes).

import assert from "node:assert/strict";
import { test } from "node:test";

import { deferred } from "./async-helpers.mjs";
import { bootApp, until } from "./fake-browser.mjs";

const message = (seq, text) => ({ seq, type: "user/message", time: 1_000 + seq, data: { text } });

test("a render during a pending action keeps the button disabled", async () => {
  const forked = deferred();
  let sessions = [{ id: "s1", live: true, createdAt: 1_000 }];
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions };
      if (method === "GET" && path.endsWith("/history")) {
        return { entries: path.includes("/s1/") ? [{ event: message(0, "hello") }] : [] };
      }
      if (method === "POST" && path === "/api/sessions/s1/fork") return forked.promise;
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const fork = app.$("fork");
  const forkPosts = () => app.calls.filter((c) => c.method === "POST" && c.path.endsWith("/fork"));

  await until(() => app.transcript().length === 1, "the s1 transcript");
  assert.equal(fork.disabled, false);

  fork.click();
  assert.equal(fork.disabled, true);
  assert.equal(forkPosts().length, 1);

  // A live event re-renders the chrome while the POST is pending.
  app.streams.get("s1")[0].send({ event: message(1, "again") }, "1");
  await until(() => app.transcript().length === 2, "the live event");
  assert.equal(fork.disabled, true, "a live event must not re-enable Fork");

  // So does a session-list refresh that changed something.
  sessions = [...sessions, { id: "other", live: false, createdAt: 2_000 }];
  app.tick();
  await until(() => app.$("session-list").children.length === 2, "the refreshed list");
  assert.equal(fork.disabled, true, "a list refresh must not re-enable Fork");

  // Even a click that gets through (e.g. a handler racing the render) starts no second fork.
  fork.dispatch("click");
  assert.equal(forkPosts().length, 1);

  sessions = [...sessions, { id: "s2", live: true, createdAt: 3_000, parentSession: "s1" }];
  forked.resolve({ id: "s2" });
  await until(() => app.$("session-id").textContent === "s2", "the fork to open");
  await until(() => fork.disabled === false, "Fork to be enabled again");
  assert.equal(forkPosts().length, 1);
});
