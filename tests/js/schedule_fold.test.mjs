// Issue 25 item 5: one delivery is one card (the follow-up line and the assistant's echo fold
// into it), repeated deliveries of one reminder collapse ("Delivered 3 times today"), and a
// cancel names its reminder and offers Undo for a few seconds.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { t } from "../../src/dsh_host/web/static/i18n.js";
import { foldPlan } from "../../src/dsh_host/web/static/transcript.js";
import { bootApp, until } from "./fake-browser.mjs";

describe("foldPlan", () => {
  const card = (seq, foldKey = "schedule-1", day = 1) => ({ seq, kind: "card", foldKey, day });
  const row = (seq, kind) => ({ seq, kind });

  test("a card takes the follow-up right after it and the answer right after that", () => {
    const { cards, folded } = foldPlan([
      card(1),
      row(2, "followup"),
      row(3, "assistant"),
      row(4, "assistant"),
    ]);
    assert.deepEqual([...cards], [[1, { followup: 2, echo: 3, repeats: [1] }]]);
    assert.deepEqual([...folded], [2, 3]);
  });

  test("nothing folds that does not follow the card directly", () => {
    const { cards, folded } = foldPlan([card(1), row(2, "assistant"), card(3), row(4, "user")]);
    assert.deepEqual([...cards.values()].map((fold) => fold.followup), [null, null]);
    assert.equal(folded.size, 0);
  });

  test("repeats of one reminder on one day collapse into the last card", () => {
    const rows = [];
    for (let i = 0; i < 12; i += 1) {
      rows.push(card(i * 3), row(i * 3 + 1, "followup"), row(i * 3 + 2, "assistant"));
    }
    const { cards, folded } = foldPlan(rows);
    assert.deepEqual([...cards.keys()], [33]);
    assert.equal(cards.get(33).repeats.length, 12);
    assert.deepEqual(cards.get(33).repeats.slice(0, 2), [0, 3]);
    assert.equal(folded.size, 35); // every row but the last card
  });

  test("another reminder, another day or a row between them starts a new card", () => {
    const { cards } = foldPlan([
      card(1),
      card(2, "schedule-2"),
      card(3, "schedule-2", 2),
      row(4, "user"),
      card(5, "schedule-2", 2),
      card(6, null),
      card(7, null),
    ]);
    assert.deepEqual([...cards.keys()], [1, 2, 3, 5, 6, 7]);
  });

  test("the collapsed line in both languages", () => {
    assert.equal(t("fold.repeatsToday", { count: 12 }, "en"), "Delivered 12 times today");
    assert.equal(t("fold.repeatsToday", { count: 12 }, "zh"), "今天已送达 12 次");
    assert.equal(t("fold.repeats", { count: 2, day: "昨天" }, "zh"), "昨天 已送达 2 次");
  });
});

// ---------------------------------------------------------------- the page

const NOW = Date.now();
const iso = (ms) => new Date(ms).toISOString();
let seq = 0;
const ev = (type, data, time = NOW) => ({ event: { seq: seq++, type, time, data } });

function delivery(prompt, at, { scheduleId = "schedule-1", echo = `Reminder: ${prompt}` } = {}) {
  const dispatch = ev("schedule/change", { version: 1, operation: "dispatch", id: scheduleId }, at);
  dispatch.view = {
    for: "event",
    view: { scheduleId, prompt, occurrenceAt: iso(at), deliveryMode: "session-local" },
  };
  return [
    dispatch,
    ev("user/message", {
      text: `[SCHEDULE REMINDER]\nprompt_json: ${JSON.stringify(prompt)}`,
      source: { kind: "followup", plugin: "schedule" },
    }, at),
    ev("turn/start", { messageId: `m${seq}` }, at),
    ev("assistant/message", { text: echo }, at),
    ev("turn/end", { outcome: "ok" }, at),
  ];
}

const PLUGIN = new URL("../../src/dsh_schedule_ui/static/", import.meta.url);
const renderers = ["schedule-words", "reminder-row", "tool-summaries"].map((name) => ({
  url: new URL(`${name}.js`, PLUGIN).href,
}));

async function open(entries, extraRoute = () => undefined) {
  return bootApp({
    initial: "s1",
    renderers,
    route: (call) => {
      const { method, path } = call;
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") return { entries, hasMore: false };
      if (method === "GET" && path === "/api/sessions/s1/views") return { views: {}, throughSeq: 0 };
      const answer = extraRoute(call);
      if (answer !== undefined) return answer;
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
}

const shown = (app) =>
  app.$("transcript").children.filter((el) => !el.hidden).map((el) => el.getAttribute("data-kind"));

describe("the transcript folds deliveries", () => {
  test("one delivery is one card; repeats collapse into one card that lists each time", async () => {
    seq = 0;
    const today = new Date(NOW);
    today.setHours(0, 0, 0, 0);
    const start = Math.max(today.getTime(), NOW - 3_600_000);
    const app = await open([
      ev("user/message", { text: "remind me" }),
      ...delivery("stretch", start, { scheduleId: "schedule-9" }),
    ]);
    await until(() => app.$("transcript").children.length === 4, "the history");
    assert.deepEqual(shown(app), ["user", "presented-event"]);
    const card = app.$("transcript").querySelector("[data-fold-key]");
    assert.equal(card.querySelector("[data-fold-echo]").textContent, "Reminder: stretch");
    const followup = card.querySelector('details[data-fold-part="followup"]');
    assert.match(followup.textContent, /Reminder handed to the assistant/);
    assert.match(followup.textContent, /prompt_json/);
    assert.equal(card.querySelector('details[data-fold-part="repeats"]'), null);

    // Three deliveries of another reminder arrive: one card, "Delivered 3 times today".
    const stream = app.streams.get("s1")[0];
    const send = (entries) => {
      for (const entry of entries) stream.send(entry, String(entry.event.seq));
    };
    for (let i = 0; i < 3; i += 1) send(delivery("drink <b>water</b>", start + i * 600_000));
    await until(() => app.$("transcript").children.length === 13, "the deliveries");
    assert.deepEqual(shown(app), ["user", "presented-event", "presented-event"]);
    const repeats = () => app.$("transcript").querySelector('details[data-fold-part="repeats"]');
    assert.equal(repeats().querySelector("summary").textContent, "Delivered 3 times today");
    assert.deepEqual(
      repeats().querySelectorAll("time").map((el) => el.getAttribute("datetime")),
      [0, 1, 2].map((i) => iso(start + i * 600_000)),
    );
    assert.equal(app.$("transcript").querySelectorAll("b").length, 0); // Session text stays text

    // A reader's open list stays open when the next delivery joins it.
    repeats().open = true;
    send(delivery("drink <b>water</b>", start + 1_800_000));
    await until(() => app.$("transcript").children.length === 16, "the next delivery");
    assert.deepEqual(shown(app), ["user", "presented-event", "presented-event"]);
    assert.equal(repeats().querySelector("summary").textContent, "Delivered 4 times today");
    assert.equal(repeats().open, true);
  });
});

