// app.js opening a Session the list has not shown (a host with many Sessions lists a page at a
// time; a board row or an address can name any Session): it is resumed like a cold row, and its
// heading names it from its views, as text, until a listed row names it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const message = (seq, text) => ({ seq, type: "user/message", time: 1_000 + seq, data: { text } });

test("an unlisted Session opens resumed and named from its views", async () => {
  const sessions = [{ id: "newest", live: false, createdAt: 9_000, name: "the newest" }];
  const app = await bootApp({
    initial: "old-one",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions, next: "more" };
      if (method === "POST" && path === "/api/sessions/old-one/resume") {
        return { id: "old-one", live: true };
      }
      if (method === "GET" && path === "/api/sessions/old-one/history") {
        return { entries: [{ event: message(0, "hello") }], hasMore: false };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const resumes = () => app.calls.filter((c) => c.path.endsWith("/resume")).map((c) => c.path);
  await until(() => resumes().length === 1, "the resume");
  assert.deepEqual(resumes(), ["/api/sessions/old-one/resume"]);
  await until(() => app.transcript().length === 1, "the history");
  await until(() => app.streams.get("old-one")?.length > 0, "the event stream");
  app.streams.get("old-one").at(-1).sendViews({ views: {}, name: "<b>an old chat</b>", throughSeq: 1 });
  await until(() => app.$("session-name").textContent === "<b>an old chat</b>", "its name");
  assert.equal(app.$("session-name").querySelectorAll("b").length, 0);
  // The list still shows its first page, and offers more.
  assert.equal(app.$("session-list").querySelectorAll("li[data-session-id]").length, 1);
  assert.equal(app.$("sessions-more").textContent, "Show more");
});
