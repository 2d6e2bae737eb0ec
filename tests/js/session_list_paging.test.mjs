// app.js session list on a host with many Sessions: the host answers a page at a time, newest
// first ({sessions, next}); the list shows the first page and "Show more" while more follow, a
// failed page says so and keeps what is shown, and a refresh reads as many rows as are shown.

import assert from "node:assert/strict";
import { test } from "node:test";

import { deferred } from "./async-helpers.mjs";
import { bootApp, until } from "./fake-browser.mjs";

const TOTAL = 120;
/** Session n is created at n seconds; names carry markup that must stay text. */
const all = Array.from({ length: TOTAL }, (_, n) => ({
  id: `s${String(n).padStart(3, "0")}`,
  live: false,
  createdAt: 1_700_000_000_000 + n * 1000,
  name: `<i>chat ${n}</i>`,
})).reverse(); // newest first, as the host lists them

/** What the host answers for `limit` and `after` (a cursor is the index where a page starts). */
function page(query) {
  const limit = query.limit === undefined ? 50 : Number(query.limit);
  const start = query.after === undefined ? 0 : Number(query.after.slice(1));
  const sessions = all.slice(start, start + limit);
  const next = start + limit < all.length ? `c${start + limit}` : null;
  return { sessions, next };
}

test("the list pages with Show more, survives a failed page and refreshes what is shown", async () => {
  let failNext = false;
  let hold = null; // a page the host has not answered yet
  const app = await bootApp({
    route: ({ method, path, query }) => {
      if (method === "GET" && path === "/api/sessions") {
        if (failNext && query.after !== undefined) {
          failNext = false;
          const error = { code: "storage_unavailable", message: "storage is unavailable (list); retry later" };
          return new Response(JSON.stringify({ error }), { status: 503 });
        }
        if (hold !== null && query.after !== undefined) {
          const answer = page(query);
          return hold.promise.then(() => answer);
        }
        return page(query);
      }
      if (method === "GET" && path === "/api/board/count") return { count: 0 };
      if (method === "GET" && path === "/api/board") return { rows: [], next: null };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const list = app.$("session-list");
  const rows = () => list.querySelectorAll("li[data-session-id]").map((li) => li.getAttribute("data-session-id"));
  const more = () => app.$("sessions-more");
  const listings = () => app.calls.filter((c) => c.method === "GET" && c.path === "/api/sessions");

  await until(() => rows().length === 50, "the first page");
  assert.deepEqual(rows(), all.slice(0, 50).map((s) => s.id));
  assert.deepEqual(listings().map((c) => c.query), [{}]); // the host's default page
  assert.equal(more().textContent, "Show more");
  assert.equal(more().disabled, false);
  // Names are text, never markup.
  const first = list.querySelector('li[data-session-id="s119"]');
  assert.equal(first.querySelector(".session-name").textContent, "<i>chat 119</i>");
  assert.equal(first.querySelectorAll("i").length, 0);

  // A page that fails says so, keeps the rows shown and the button to try again.
  failNext = true;
  more().click();
  await until(() => app.$("sessions-error").hidden === false, "the failure");
  assert.match(app.$("sessions-error").textContent, /^Could not list sessions: /);
  assert.equal(rows().length, 50);
  assert.equal(more().disabled, false);
  assert.equal(app.document.activeElement, more()); // the keyboard stays on the button

  // Show more: the next page after the cursor; the first row it brought has the keyboard.
  hold = deferred();
  more().click();
  await until(() => more().disabled, "the button while the page loads");
  assert.equal(more().textContent, "Loading more…");
  more().click(); // a disabled button does nothing
  hold.resolve();
  hold = null;
  await until(() => rows().length === 100, "the second page");
  assert.deepEqual(listings().at(-1).query, { after: "c50" });
  assert.deepEqual(rows(), all.slice(0, 100).map((s) => s.id));
  assert.equal(app.$("sessions-error").hidden, true);
  const s069 = list.querySelector('li[data-session-id="s069"]').querySelector("button");
  assert.equal(app.document.activeElement, s069);
  more().click();
  await until(() => rows().length === TOTAL, "the last page");
  assert.equal(more(), null); // nothing follows: no button
  assert.deepEqual(rows(), all.map((s) => s.id));

  // The periodic refresh reads as many rows as are shown, in as few requests as allowed.
  const before = listings().length;
  app.tick();
  await until(() => listings().length === before + 1, "the refresh");
  assert.deepEqual(listings().at(-1).query, { limit: "120" });
  assert.equal(rows().length, TOTAL);

  // In Chinese.
  app.document.querySelector('button[data-locale="zh"]').click();
  all.push({ id: "s-extra", live: false, createdAt: 1, name: "x" }); // one more row: a button again
  app.tick();
  await until(() => more() !== null, "the button after a refresh");
  assert.equal(more().textContent, "显示更多");
  app.document.querySelector('button[data-locale="en"]').click();
});
