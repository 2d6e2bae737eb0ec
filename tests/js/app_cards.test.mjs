// A presented event's card on the page: its renderer gets the Session (its id, the user's tool
// calls, its loaded events, its notices), and a card is rendered again when more events of its
// type arrive (the reminder card: Done from the card, the ack arrives, "Done ✓"; the fold's
// open parts stay open across it).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const NOW = Date.now();
const iso = (ms) => new Date(ms).toISOString();
const DUE = iso(NOW - 60_000);
let seq = 0;
const ev = (type, data, time = NOW) => ({ event: { seq: seq++, type, time, data } });

function dispatch(scheduleId, at) {
  const entry = ev("schedule/change", { version: 1, operation: "dispatch", id: scheduleId });
  entry.view = {
    for: "event",
    view: { scheduleId, prompt: "stretch", occurrenceAt: at, deliveryMode: "session-local" },
  };
  return entry;
}

const PLUGIN = new URL("../../src/dsh_schedule_ui/static/", import.meta.url);
const renderers = ["schedule-words", "reminder-row"].map((name) => ({
  url: new URL(`${name}.js`, PLUGIN).href,
}));

describe("a card on the page", () => {
  test("Done runs the tool on the Session; the ack arriving renders the card again", async () => {
    seq = 0;
    const entries = [ev("user/message", { text: "remind me" }), dispatch("schedule-1", DUE)];
    const notices = [
      {
        key: `s1/schedule/schedule-1@${DUE}/ntfy`,
        channel: "ntfy",
        label: "ntfy <i>phone</i>",
        service: "ntfy",
        status: "delivered",
        attempts: 1,
        error: null,
        updatedAt: DUE,
      },
    ];
    const app = await bootApp({
      initial: "s1",
      renderers,
      route: ({ method, path }) => {
        if (method === "GET" && path === "/api/sessions") {
          return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
        }
        if (path === "/api/sessions/s1/history") return { entries, hasMore: false };
        if (path === "/api/sessions/s1/views") return { views: {}, throughSeq: 0 };
        if (path === "/api/sessions/s1/notices") return { notices };
        if (path === "/api/sessions/s1/tools/schedule_ack") {
          return { value: { done: true, id: "schedule-1", occurrenceAt: DUE } };
        }
        throw new Error(`unexpected ${method} ${path}`);
      },
    });
    const card = () => app.$("transcript").querySelector("[data-schedule-reminder]");
    await until(() => card() !== null, "the card");
    await until(() => card().querySelector(".schedule-card-sent") !== null, "the notices");
    assert.equal(card().querySelector(".schedule-card-sent").textContent, "Sent to ntfy <i>phone</i>");
    const done = card().querySelector("button.schedule-occurrence-done");
    done.click();
    await until(() => app.calls.some((c) => c.path.endsWith("/tools/schedule_ack")), "the call");
    const call = app.calls.find((c) => c.path.endsWith("/tools/schedule_ack"));
    assert.deepEqual(call.body, { arguments: { id: "schedule-1", occurrence_at: DUE } });
    // The ack arrives on the stream: the card is rendered again, from the Session's events.
    const before = card();
    const ack = ev("schedule/change", {
      version: 1,
      operation: "ack",
      id: "schedule-1",
      occurrenceAt: DUE,
    });
    app.streams.get("s1")[0].send(ack, String(ack.event.seq));
    await until(() => card() !== before, "the card rendered again");
    assert.equal(card().querySelector(".schedule-occurrence-state").textContent, "Done ✓");
    assert.equal(app.$("transcript").querySelectorAll("[data-schedule-reminder]").length, 1);
    assert.equal(app.$("transcript").querySelectorAll("i").length, 0); // Session text as text
  });
});
