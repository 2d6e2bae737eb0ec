// app.js with the Schedule's boards (issue 25 item 3: one place for every reminder). The start
// page shows what was delivered while the person was away (from the last-seen instant this tab
// kept) and what is coming up; "All reminders" beside the Session list opens every pending
// reminder on the host; a row's Session link opens it (the keyboard in its message box); Cancel
// there runs the same user action as the Reminders panel and the row goes; "Start" comes back.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const NOW = Date.now();
const SEEN = NOW - 3 * 3600_000;
const SECRET = "<img src=x onerror=alert(1)> buy milk";

const pending = [
  { sessionId: "s2", sessionName: "Groceries", key: "schedule-1", kind: "pending", atMs: NOW + 600_000, data: { text: SECRET } },
  { sessionId: "s1", sessionName: null, key: "schedule-4", kind: "pending", atMs: NOW + 7_200_000, data: { text: "stretch", everySeconds: 1800 } },
];
const delivered = [
  { sessionId: "s1", sessionName: null, key: "schedule-2@7", kind: "delivered", atMs: SEEN - 60_000, data: { text: "before" } },
  { sessionId: "s1", sessionName: null, key: "schedule-2@9", kind: "delivered", atMs: SEEN + 60_000, data: { text: "water the plants" } },
  { sessionId: "s2", sessionName: "Groceries", key: "schedule-3@4", kind: "delivered", atMs: SEEN + 120_000, data: { text: "call mom" } },
];

test("the start page, All reminders, a Session link and Cancel", async () => {
  const kept = new Map([["dsh.lastSeen", String(SEEN)]]);
  globalThis.localStorage = {
    getItem: (key) => kept.get(key) ?? null,
    setItem: (key, value) => kept.set(key, String(value)),
  };
  const renderers = ["schedule-words", "reminders-panel", "all-reminders"].map((name) => ({
    url: new URL(`../../src/dsh_schedule_ui/static/${name}.js`, import.meta.url).href,
  }));
  let rows = pending;
  const app = await bootApp({
    renderers,
    route: ({ method, path, query, body }) => {
      if (method === "GET" && path === "/api/sessions") {
        return {
          sessions: [
            { id: "s1", live: true, createdAt: 1_000 },
            { id: "s2", live: true, createdAt: 2_000, name: "Groceries", badges: { "schedule.reminders": 1 } },
          ],
        };
      }
      if (method === "GET" && path === "/api/board/count") {
        assert.deepEqual(query, { plugin: "schedule", kind: "delivered", after: String(SEEN) });
        return { count: 2 };
      }
      if (method === "GET" && path === "/api/board") {
        if (query.kind === "delivered") return { rows: delivered, next: null };
        return { rows: rows.slice(0, Number(query.limit)), next: null };
      }
      if (method === "GET" && path.endsWith("/history")) return { entries: [], hasMore: false };
      if (method === "GET" && path.endsWith("/views")) return { views: {}, throughSeq: 0 };
      if (method === "POST" && path === "/api/sessions/s2/tools/schedule_delete") {
        assert.deepEqual(body, { arguments: { id: "schedule-1" } });
        rows = rows.filter((r) => r.key !== "schedule-1");
        return { callId: "c1", name: "schedule_delete", value: { id: "schedule-1", deleted: true } };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const home = app.$("home");
  const section = (id) => home.querySelector(`[data-testid="${id}"]`);
  await until(() => section("home-away") !== null && section("home-upcoming") !== null, "the start page");
  // The last-seen instant moved to now once the page was seen.
  assert.ok(Number(kept.get("dsh.lastSeen")) >= NOW);

  // While you were away: what was delivered after the last-seen instant, newest first, linked.
  const away = section("home-away");
  assert.equal(away.querySelector("h2").textContent, "While you were away: 2 reminders");
  const awayRows = away.querySelectorAll("li.board-row");
  assert.deepEqual(
    awayRows.map((r) => r.querySelector(".schedule-board-text").textContent),
    ["call mom", "water the plants"],
  );
  assert.deepEqual(awayRows.map((r) => r.querySelector("a").textContent), ["Groceries", "Untitled session"]);
  assert.equal(awayRows[0].querySelector("button"), null, "a delivery offers no Cancel");

  // Coming up: the first pending reminders, soonest first, with the way to all of them.
  const upcoming = section("home-upcoming");
  assert.equal(upcoming.querySelector("h2").textContent, "Coming up");
  const texts = upcoming.querySelectorAll(".schedule-board-text").map((n) => n.textContent);
  assert.deepEqual(texts, [SECRET, "stretch"]);
  assert.equal(upcoming.querySelectorAll("img").length, 0);
  assert.match(upcoming.querySelectorAll(".schedule-board-when")[1].textContent, / · every 30 min$/);
  assert.equal(app.$("home-entry").getAttribute("aria-current"), "page");
  assert.equal(app.$("empty-state").hidden, false);

  // The entry beside the Session list opens every pending reminder on the host.
  const entry = app.$("board-entries").querySelector("button");
  assert.equal(entry.textContent, "All reminders");
  entry.click();
  await until(() => app.$("board-body").querySelectorAll("li.board-row").length === 2, "All reminders");
  assert.equal(app.$("board-view").hidden, false);
  assert.equal(app.$("conversation").hidden, true);
  assert.equal(app.$("board-heading").textContent, "All reminders");
  assert.equal(app.document.activeElement, app.$("board-heading"));
  assert.equal(app.$("board-entries").querySelector("button").getAttribute("aria-current"), "page");
  assert.equal(app.$("home-entry").getAttribute("aria-current"), null);
  assert.equal(app.location.searchParams.get("board"), "schedule.pending");
  const pages = app.calls.filter((c) => c.path === "/api/board" && c.query.kind === "pending");
  assert.deepEqual(pages.at(-1).query, { plugin: "schedule", kind: "pending", limit: "50" });

  // Cancel runs schedule_delete on the row's Session as the user's action; the row goes and the
  // keyboard moves to the next row's Cancel.
  const board = app.$("board-body");
  const cancel = board.querySelector('[data-testid="board-action"]');
  assert.equal(cancel.textContent, "Cancel");
  assert.equal(cancel.getAttribute("aria-label"), `Cancel reminder: ${SECRET}`);
  cancel.focus();
  cancel.click();
  await until(() => board.querySelectorAll("li.board-row").length === 1, "the cancelled row gone");
  assert.equal(app.document.activeElement.getAttribute("data-focus-key"), "action:s1/schedule-4");

  // A Session link opens that Session with the keyboard in its message box.
  board.querySelector("a").dispatch("click", { button: 0 });
  await until(() => app.$("session-id").textContent === "s1", "the linked session");
  assert.equal(app.$("board-view").hidden, true);
  assert.equal(app.$("conversation").hidden, false);
  assert.equal(app.$("home").hidden, true);
  assert.equal(app.document.activeElement, app.$("composer"));
  assert.equal(app.location.searchParams.get("session"), "s1");
  assert.equal(app.location.searchParams.get("board"), null);

  // Start: back to the start page (no Session open); what arrived stays listed.
  app.$("home-entry").click();
  await until(() => app.$("home").hidden === false, "the start page again");
  assert.equal(app.location.searchParams.get("session"), null);
  assert.equal(app.$("session-details").hidden, true);
  assert.equal(app.document.activeElement, app.$("empty-title"));
  assert.equal(section("home-away").querySelector("h2").textContent, "While you were away: 2 reminders");
  await until(() => section("home-upcoming")?.querySelectorAll("li.board-row").length === 1, "fresh rows");

  // The host keeps a row's relative time current, at any distance ("in 2 h", never a date).
  const relative = section("home-upcoming").querySelector('time[data-dsh-relative="always"]');
  relative.textContent = "stale";
  app.tick();
  assert.match(relative.textContent, /^in (1 h 59 min|2 h)$/);
});
