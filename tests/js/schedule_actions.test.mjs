// ui-schedule: Done and Snooze on a delivered occurrence (the card, the Reminders panel's
// deliveries, the delivered board rows): what became of it from the Session's events or the
// view, the snooze times on the browser's wall clock, the user's tool calls and their refusals,
// and where the card was sent (the Session's notices, read again while one is still sending).
// Both languages; everything from the Session as text only.

import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";

import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import { renderRow, rowOccurrence } from "../../src/dsh_schedule_ui/static/all-reminders.js";
import {
  ACK_TOOL,
  actionErrorText,
  actionOutcome,
  itemState,
  localInputValue,
  occurrenceState,
  offsetIso,
  pickedUntil,
  SNOOZE_TOOL,
  snoozeChoices,
  untilText,
  wallInstant,
  zoneOffsetMinutes,
} from "../../src/dsh_schedule_ui/static/occurrence.js";
import { resetOccurrences } from "../../src/dsh_schedule_ui/static/occurrence-controls.js";
import { renderReminderCard, useNoticeWatch } from "../../src/dsh_schedule_ui/static/reminder-row.js";
import { NoticeWatch, noticeLines, occurrenceNotices } from "../../src/dsh_schedule_ui/static/sent-notices.js";
import { createCancels } from "../../src/dsh_schedule_ui/static/panel-state.js";
import { renderPanel } from "../../src/dsh_schedule_ui/static/reminders-panel.js";
import { messages, NAMESPACE } from "../../src/dsh_schedule_ui/static/schedule-words.js";
import { deferred, settle } from "./async-helpers.mjs";
import { FakeElement, fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
const tr = (locale) => (key, params) => t(key, params, locale);

const ZONE = "Europe/Berlin";
const DUE = "2026-12-03T17:08:00.000Z"; // 18:08 in Berlin
const DUE_MS = Date.parse(DUE);
const NOW = DUE_MS + 60_000;
const SID = "session-a";
const SECRET = "stretch <img src=x onerror=alert(1)>";
const clock = (locale, now = NOW) => createTime({ now: () => now, locale, timeZone: ZONE });

/** A page: a document that knows what has the focus (FakeElement.focus sets it) and which
 * elements are in it (`isConnected`, as a browser's). */
const page = new FakeElement("body");
const doc = { ...fakeDocument, activeElement: null, body: page };
globalThis.document = doc;
Object.defineProperty(FakeElement.prototype, "isConnected", {
  configurable: true,
  get() {
    return page.contains(this);
  },
});

/** Put `node` in the page, as the host does with what a renderer returns. */
function shown(node) {
  page.appendChild(node);
  return node;
}

beforeEach(() => {
  resetOccurrences();
  page.replaceChildren();
  doc.activeElement = null;
});

const change = (data, seq = 0) => ({ seq, type: "schedule/change", data: { version: 1, ...data } });
const ack = (id, occurrenceAt) => change({ operation: "ack", id, occurrenceAt });
const snoozeCreate = (id, occurrenceAt, scheduledAt) =>
  change({
    operation: "create",
    schedule: {
      id: "s-snooze",
      kind: "at",
      prompt: "x",
      scheduledAt,
      snoozedFrom: { id, occurrenceAt },
    },
  });

/** `findEvent` over `events`, latest first, as the host's. */
const finder = (events) => (predicate) => [...events].reverse().find(predicate) ?? null;

function presented(view) {
  return {
    kind: "presented-event",
    seq: 7,
    time: DUE_MS + 250,
    eventType: "schedule/change",
    view,
  };
}

const VIEW = { scheduleId: "s1", prompt: SECRET, occurrenceAt: DUE, deliveryMode: "session-local" };

function card({ locale = "en", events = [], runTool, notices, errorText, view = VIEW } = {}) {
  return rendered({ locale, events, runTool, notices, errorText, view });
}

/** The card as the host shows it: rendered, then put in the page. */
function rendered(options) {
  return shown(renderCard(options));
}

function renderCard({ locale = "en", events = [], runTool, notices, errorText, view = VIEW }) {
  return renderReminderCard({
    node: presented(view),
    locale,
    t: tr(locale),
    time: clock(locale),
    document: doc,
    sessionId: SID,
    findEvent: finder(events),
    runTool,
    notices,
    errorText,
  });
}

const all = (root, name) => [...root.descendants()].filter((e) => e.classList.contains(name));
const one = (root, name) => all(root, name)[0] ?? null;
const buttonsOf = (root) => root.findAll("button").map((b) => b.textContent);
/** A click as a browser's: the button takes the focus first. */
const press = (button) => {
  button.focus();
  button.click();
};

/** A tool the test answers: records each call, resolves when told. */
function scriptedTool() {
  const calls = [];
  const tool = (name, args) => {
    const reply = deferred();
    calls.push({ name, args, reply });
    return reply.promise;
  };
  return { tool, calls };
}

// ---------------------------------------------------------------------------------------------

describe("what became of an occurrence", () => {
  test("nothing without events, without findEvent, or with events of other occurrences", () => {
    const none = { done: false, snoozedUntil: null };
    assert.deepEqual(occurrenceState(undefined, "s1", DUE), none);
    const others = [
      ack("s2", DUE),
      ack("s1", "2026-12-03T17:09:00.000Z"),
      change({ operation: "dispatch", id: "s1" }),
      {
        seq: 3,
        type: "assistant/message",
        data: { operation: "ack", id: "s1", occurrenceAt: DUE },
      },
      snoozeCreate("s1", "2026-12-02T17:08:00.000Z", "2026-12-03T17:20:00.000Z"),
      change({ operation: "create", schedule: { id: "s9", kind: "at", scheduledAt: DUE } }),
      { seq: 4, type: "schedule/change", data: null },
    ];
    assert.deepEqual(occurrenceState(finder(others), "s1", DUE), none);
  });

  test("an ack of it is Done (the instant compared as an instant); a snooze says until when", () => {
    const sameInstant = "2026-12-03T18:08:00+01:00";
    assert.deepEqual(occurrenceState(finder([ack("s1", sameInstant)]), "s1", DUE), {
      done: true,
      snoozedUntil: null,
    });
    const until = "2026-12-03T17:18:00.000Z";
    assert.deepEqual(occurrenceState(finder([snoozeCreate("s1", DUE, until)]), "s1", DUE), {
      done: false,
      snoozedUntil: until,
    });
    const broken = snoozeCreate("s1", DUE, "later");
    assert.deepEqual(occurrenceState(finder([broken]), "s1", DUE).snoozedUntil, null);
  });

  test("a view item or a board row says it with done / snoozedUntil", () => {
    assert.deepEqual(itemState({ done: true }), { done: true, snoozedUntil: null });
    assert.deepEqual(itemState({ done: "yes", snoozedUntil: DUE }), {
      done: false,
      snoozedUntil: DUE,
    });
    assert.deepEqual(itemState({ snoozedUntil: 5 }), { done: false, snoozedUntil: null });
    assert.deepEqual(itemState(null), { done: false, snoozedUntil: null });
  });
});

describe("snooze times on the browser's wall clock", () => {
  test("offsets and wall times in winter, in summer and across the clock changes", () => {
    assert.equal(zoneOffsetMinutes(DUE_MS, ZONE), 60);
    assert.equal(zoneOffsetMinutes(Date.parse("2026-07-01T12:00:00Z"), ZONE), 120);
    assert.equal(zoneOffsetMinutes(DUE_MS, "America/St_Johns"), -210);
    assert.equal(wallInstant("2026-12-04", "09:00", ZONE), Date.parse("2026-12-04T08:00:00Z"));
    // A skipped wall time reads after the change; a repeated one is the later.
    assert.equal(wallInstant("2026-03-29", "02:30", ZONE), Date.parse("2026-03-29T01:30:00Z"));
    assert.equal(wallInstant("2026-10-25", "02:30", ZONE), Date.parse("2026-10-25T01:30:00Z"));
    assert.equal(
      offsetIso(Date.parse("2026-12-04T08:00:00.500Z"), ZONE),
      "2026-12-04T09:00:00+01:00",
    );
    assert.equal(
      offsetIso(Date.parse("2026-12-04T12:00:00Z"), "America/St_Johns"),
      "2026-12-04T08:30:00-03:30",
    );
    assert.equal(offsetIso(DUE_MS, "UTC"), "2026-12-03T17:08:00+00:00");
    assert.equal(localInputValue(DUE_MS, ZONE), "2026-12-03T18:08");
  });

  test("the menu: 10 minutes, 1 hour, tomorrow at 09:00 (the zone's own offset that day)", () => {
    assert.deepEqual(snoozeChoices(NOW, ZONE), [
      { label: "act.minutes10", args: { minutes: 10 } },
      { label: "act.hour1", args: { minutes: 60 } },
      { label: "act.tomorrow", args: { until: "2026-12-04T09:00:00+01:00" } },
    ]);
    // Just before midnight UTC it is already the next day in Berlin; summer time starts then.
    const late = Date.parse("2026-03-28T23:30:00Z");
    assert.equal(snoozeChoices(late, ZONE)[2].args.until, "2026-03-30T09:00:00+02:00");
    assert.equal(
      snoozeChoices(Date.parse("2026-12-31T12:00:00Z"), ZONE)[2].args.until,
      "2027-01-01T09:00:00+01:00",
    );
  });

  test("a chosen time must be well formed and later than now", () => {
    assert.equal(pickedUntil("2026-12-03T18:30", NOW, ZONE), "2026-12-03T18:30:00+01:00");
    assert.equal(pickedUntil("2026-12-03T18:30:45", NOW, ZONE), "2026-12-03T18:30:00+01:00");
    for (const bad of ["", "2026-12-03", "2026-13-03T18:30", "2026-12-03T24:00", "soon", null, 5]) {
      assert.equal(pickedUntil(bad, NOW, ZONE), null, String(bad));
    }
    assert.equal(pickedUntil("2026-12-03T18:09", NOW, ZONE), null); // now, not later
    assert.equal(pickedUntil("2026-12-03T18:08", NOW, ZONE), null);
  });

  test("until reads as a clock today, else as the card's times read", () => {
    assert.equal(untilText(Date.parse("2026-12-03T17:10:00Z"), clock("en")), "18:10");
    assert.equal(untilText(Date.parse("2026-12-04T08:00:00Z"), clock("en")), "tomorrow 09:00");
    assert.equal(untilText(Date.parse("2026-12-04T08:00:00Z"), clock("zh")), "明天 09:00");
    assert.equal(untilText(Date.parse("2026-12-08T08:00:00Z"), clock("en")), "Tue 8 Dec 09:00");
  });
});

describe("answers and refusals", () => {
  test("an ack's and a snooze's answers; anything else is an error", () => {
    assert.deepEqual(actionOutcome(ACK_TOOL, { done: true, id: "s1", occurrenceAt: DUE }), {
      done: true,
    });
    const snoozed = { id: "s2", scheduledAt: "2026-12-03T17:19:00.000Z", snoozedFrom: {} };
    assert.deepEqual(actionOutcome(SNOOZE_TOOL, snoozed), { snoozedUntil: snoozed.scheduledAt });
    const refusal = { code: "already_done", message: "done already" };
    assert.deepEqual(actionOutcome(ACK_TOOL, refusal), { error: refusal });
    assert.deepEqual(actionOutcome(SNOOZE_TOOL, { done: true }), { error: { done: true } });
    assert.deepEqual(actionOutcome(ACK_TOOL, { done: true, code: "x" }), {
      error: { done: true, code: "x" },
    });
    assert.deepEqual(actionOutcome(ACK_TOOL, undefined), { error: { code: "unknown" } });
    assert.deepEqual(actionOutcome(ACK_TOOL, null), { error: { code: "unknown" } });
  });

  test("the plugin's refusals in its own words; the rest as the host words them, or their message", () => {
    const host = (error) => `host: ${error.code}`;
    assert.equal(
      actionErrorText({ code: "already_done" }, tr("en"), host),
      "This was already marked done.",
    );
    assert.equal(
      actionErrorText({ code: "already_snoozed" }, tr("zh"), host),
      "这条提醒已经推迟过了。",
    );
    assert.equal(
      actionErrorText({ code: "not_found" }, tr("en")),
      "This delivery is not in this session any more.",
    );
    assert.equal(
      actionErrorText({ code: "persistence_uncertain" }, tr("en"), host),
      "host: persistence_uncertain",
    );
    assert.equal(actionErrorText({ code: "toString" }, tr("en"), host), "host: toString");
    assert.equal(actionErrorText(new Error("socket closed"), tr("en")), "socket closed");
    assert.equal(actionErrorText({}, tr("zh")), "操作没有成功，请重试。");
    assert.equal(actionErrorText(undefined, tr("en")), "That did not work. Try again.");
  });
});

describe("Done and Snooze on the card", () => {
  test("without runTool the card shows no action; its state still shows", () => {
    const plain = card();
    assert.deepEqual(buttonsOf(plain), []);
    assert.equal(one(plain, "schedule-occurrence").childNodes.length, 0);
    const done = card({ events: [ack("s1", DUE)] });
    assert.equal(one(done, "schedule-occurrence-state").textContent, "Done ✓");
  });

  test("Done runs schedule_ack as the user's action, disabled while it runs, then Done ✓ (focused)", async () => {
    const { tool, calls } = scriptedTool();
    const node = card({ runTool: tool });
    assert.deepEqual(buttonsOf(node), ["Done", "Snooze ▾"]);
    const [done, snooze] = node.findAll("button");
    assert.equal(done.getAttribute("aria-label"), `Mark as done: ${SECRET}`);
    assert.equal(snooze.getAttribute("aria-label"), `Snooze: ${SECRET}`);
    assert.equal(snooze.getAttribute("aria-expanded"), "false");
    done.focus();
    done.click();
    assert.deepEqual(
      calls.map((c) => [c.name, c.args]),
      [[ACK_TOOL, { id: "s1", occurrence_at: DUE }]],
    );
    const running = node.findAll("button");
    assert.deepEqual(
      running.map((b) => b.disabled),
      [true, true],
    );
    assert.equal(one(node, "schedule-occurrence").getAttribute("aria-busy"), "true");
    assert.equal(one(node, "schedule-occurrence-busy").textContent, "Saving…");
    running[0].click(); // disabled: nothing more runs
    assert.equal(calls.length, 1);
    calls[0].reply.resolve({ done: true, id: "s1", occurrenceAt: DUE });
    await settle();
    assert.deepEqual(buttonsOf(node), []);
    const state = one(node, "schedule-occurrence-state");
    assert.equal(state.textContent, "Done ✓");
    assert.equal(state.getAttribute("data-state"), "done");
    assert.equal(doc.activeElement, state);
    assert.equal(one(node, "schedule-occurrence").getAttribute("aria-busy"), null);
  });

  test("a refusal shows its plain words; the focus goes back to the button; Done again works", async () => {
    const { tool, calls } = scriptedTool();
    const node = card({ runTool: tool, locale: "zh", errorText: (e) => `主机：${e.code}` });
    assert.deepEqual(buttonsOf(node), ["完成", "推迟 ▾"]);
    node.findAll("button")[0].click();
    calls[0].reply.resolve({ code: "not_found", message: "no such delivery" });
    await settle();
    const problem = one(node, "schedule-occurrence-error");
    assert.equal(problem.textContent, "这次提醒已不在当前会话中。");
    assert.equal(problem.getAttribute("role"), "alert");
    assert.equal(doc.activeElement, node.findAll("button")[0]);
    node.findAll("button")[0].click();
    assert.equal(one(node, "schedule-occurrence-error"), null); // cleared while it runs again
    calls[1].reply.reject(new TypeError("Failed to fetch"));
    await settle();
    assert.equal(one(node, "schedule-occurrence-error").textContent, "主机：undefined");
  });

  test("a storage error from the host reads as the host words it", async () => {
    const node = card({
      runTool: async () => ({ code: "persistence_uncertain" }),
      errorText: (e) => `It is not certain the change was saved (${e.code})`,
    });
    node.findAll("button")[0].click();
    await settle();
    assert.equal(
      one(node, "schedule-occurrence-error").textContent,
      "It is not certain the change was saved (persistence_uncertain)",
    );
  });

  test("Snooze ▾ opens the menu; each choice runs schedule_snooze; then Snoozed until 18:18", async () => {
    const { tool, calls } = scriptedTool();
    const node = card({ runTool: tool });
    const snooze = node.findAll("button")[1];
    snooze.click();
    const trigger = node.findAll("button")[1];
    assert.equal(trigger.getAttribute("aria-expanded"), "true");
    const menu = one(node, "schedule-snooze-menu");
    assert.equal(menu.getAttribute("id"), trigger.getAttribute("aria-controls"));
    assert.equal(menu.getAttribute("role"), "group");
    assert.equal(menu.getAttribute("aria-label"), "Snooze until");
    assert.deepEqual(
      all(menu, "schedule-snooze-choice").map((b) => b.textContent),
      ["10 minutes", "1 hour", "Tomorrow at 09:00"],
    );
    assert.equal(doc.activeElement, all(menu, "schedule-snooze-choice")[0]); // the first choice
    const input = menu.find("input");
    assert.equal(input.getAttribute("type"), "datetime-local");
    assert.equal(input.getAttribute("min"), "2026-12-03T18:09");
    all(menu, "schedule-snooze-choice")[0].click();
    assert.deepEqual(calls[0].args, { id: "s1", occurrence_at: DUE, minutes: 10 });
    assert.equal(one(node, "schedule-snooze-menu"), null); // closed while it runs
    const until = "2026-12-03T17:18:00.000Z";
    calls[0].reply.resolve({
      id: "s2",
      kind: "at",
      scheduledAt: until,
      snoozedFrom: { id: "s1", occurrenceAt: DUE },
    });
    await settle();
    const state = one(node, "schedule-occurrence-state");
    assert.equal(state.textContent, "Snoozed until 18:18");
    assert.equal(state.getAttribute("data-state"), "snoozed");
    assert.equal(state.find("time").getAttribute("datetime"), until);
    assert.equal(state.find("time").getAttribute("title"), "2026-12-03 17:18:00 UTC");
    assert.equal(doc.activeElement, state);
  });

  test("1 hour and tomorrow at 09:00 send their own arguments (zh)", async () => {
    for (const [index, extra] of [
      [1, { minutes: 60 }],
      [2, { until: "2026-12-04T09:00:00+01:00" }],
    ]) {
      resetOccurrences();
      const { tool, calls } = scriptedTool();
      const node = card({ runTool: tool, locale: "zh" });
      node.findAll("button")[1].click();
      const choices = all(node, "schedule-snooze-choice");
      assert.deepEqual(
        choices.map((b) => b.textContent),
        ["10 分钟后", "1 小时后", "明天 09:00"],
      );
      choices[index].click();
      assert.deepEqual(calls[0].args, { id: "s1", occurrence_at: DUE, ...extra });
      calls[0].reply.resolve({ id: "s2", scheduledAt: "2026-12-04T08:00:00.000Z" });
      await settle();
      assert.equal(one(node, "schedule-occurrence-state").textContent, "已推迟到 明天 09:00");
    }
  });

  test("a chosen time: one in the past is refused in words; a later one is sent with its offset", async () => {
    const { tool, calls } = scriptedTool();
    const node = card({ runTool: tool });
    node.findAll("button")[1].click();
    const form = node.find("form");
    form.dispatch("submit");
    assert.equal(calls.length, 0);
    const problem = one(node, "schedule-snooze-problem");
    assert.equal(problem.textContent, "Pick a date and time in the future.");
    assert.equal(problem.getAttribute("role"), "alert");
    assert.equal(doc.activeElement, node.find("input"));
    const input = node.find("input");
    input.value = "2026-12-03T21:45";
    input.dispatch("input");
    node.find("form").dispatch("submit");
    assert.deepEqual(calls[0].args, {
      id: "s1",
      occurrence_at: DUE,
      until: "2026-12-03T21:45:00+01:00",
    });
    calls[0].reply.resolve({ code: "already_snoozed", message: "snoozed as s7" });
    await settle();
    assert.equal(one(node, "schedule-occurrence-error").textContent, "This was already snoozed.");
    assert.equal(doc.activeElement, node.findAll("button")[1]); // back on Snooze ▾
  });

  test("Escape closes the menu (the focus back on Snooze ▾); Snooze ▾ again closes it too", () => {
    const node = card({ runTool: async () => ({}) });
    node.findAll("button")[1].click();
    one(node, "schedule-snooze-menu").dispatch("keydown", { key: "Tab" });
    assert.notEqual(one(node, "schedule-snooze-menu"), null);
    one(node, "schedule-snooze-menu").dispatch("keydown", { key: "Escape" });
    assert.equal(one(node, "schedule-snooze-menu"), null);
    assert.equal(doc.activeElement, node.findAll("button")[1]);
    node.findAll("button")[1].click();
    node.findAll("button")[1].click();
    assert.equal(one(node, "schedule-snooze-menu"), null);
    assert.equal(node.findAll("button")[1].getAttribute("aria-expanded"), "false");
  });

  test("the Session's events win: done or snoozed there shows so, whatever this page did", () => {
    const until = "2026-12-04T08:00:00.000Z";
    const snoozed = card({ runTool: async () => ({}), events: [snoozeCreate("s1", DUE, until)] });
    assert.equal(
      one(snoozed, "schedule-occurrence-state").textContent,
      "Snoozed until tomorrow 09:00",
    );
    assert.deepEqual(buttonsOf(snoozed), []);
    const both = card({ events: [snoozeCreate("s1", DUE, until), ack("s1", DUE)], locale: "zh" });
    assert.equal(one(both, "schedule-occurrence-state").textContent, "完成 ✓");
  });

  test("the card and the panel showing one occurrence share what runs and what it answered", async () => {
    const { tool, calls } = scriptedTool();
    const node = card({ runTool: tool });
    const view = {
      active: [],
      recent: [
        { scheduleId: "s1", prompt: SECRET, occurrenceAt: DUE, deliveredAt: DUE, lateMs: 0 },
      ],
    };
    let refreshed = 0;
    const panel = shown(
      renderPanel(
        {
          view,
          sessionId: SID,
          t: tr("en"),
          time: clock("en"),
          document: doc,
          errorText: (e) => String(e?.code),
          runTool: tool,
          refreshViews: () => {
            refreshed += 1;
          },
        },
        createCancels(() => {}),
      ),
    );
    const row = panel.querySelector('li[data-occurrence="s1@2026-12-03T17:08:00.000Z"]');
    assert.deepEqual(buttonsOf(row), ["Done", "Snooze ▾"]);
    row.findAll("button")[0].click();
    assert.deepEqual(
      node.findAll("button").map((b) => b.disabled),
      [true, true],
    );
    calls[0].reply.resolve({ done: true });
    await settle();
    assert.equal(one(row, "schedule-occurrence-state").textContent, "Done ✓");
    assert.equal(one(node, "schedule-occurrence-state").textContent, "Done ✓");
    assert.equal(doc.activeElement, one(row, "schedule-occurrence-state")); // where it was done
    assert.equal(refreshed, 1);
  });

  test("the menu opens and a failure shows only where the person acted", async () => {
    const node = card({ runTool: async () => ({ code: "already_done" }) });
    const panel = shown(
      renderPanel(
        {
          view: {
            active: [],
            recent: [{ scheduleId: "s1", prompt: "x", occurrenceAt: DUE, deliveredAt: DUE }],
          },
          sessionId: SID,
          t: tr("en"),
          time: clock("en"),
          document: doc,
          errorText: () => "",
          runTool: async () => ({}),
        },
        createCancels(() => {}),
      ),
    );
    node.findAll("button")[1].click();
    assert.notEqual(one(node, "schedule-snooze-menu"), null);
    assert.equal(one(panel, "schedule-snooze-menu"), null);
    assert.equal(panel.findAll("button")[1].getAttribute("aria-expanded"), "false");
    node.findAll("button")[0].click();
    await settle();
    assert.equal(
      one(node, "schedule-occurrence-error").textContent,
      "This was already marked done.",
    );
    assert.equal(one(panel, "schedule-occurrence-error"), null);
  });

  test("a card the host rebuilds takes back the focus the old one held", async () => {
    const node = card({ runTool: async () => ({ done: true }) });
    node.findAll("button")[0].click();
    await settle();
    assert.equal(doc.activeElement, one(node, "schedule-occurrence-state"));
    // The Session recorded the ack: the host renders the card again in place of the old one.
    const again = renderCard({ runTool: async () => ({}), events: [ack("s1", DUE)] });
    node.replaceWith(again);
    await settle();
    assert.equal(doc.activeElement, one(again, "schedule-occurrence-state"));
    // ... but not when the person is somewhere else by then.
    const elsewhere = shown(new FakeElement("input"));
    elsewhere.focus();
    const third = renderCard({ runTool: async () => ({}), events: [ack("s1", DUE)] });
    again.replaceWith(third);
    await settle();
    assert.equal(doc.activeElement, elsewhere);
    assert.notEqual(one(third, "schedule-occurrence-state"), null);
  });
});

test("a rebuild of every card gives the focus back to the last one acted on", async () => {
  resetOccurrences();
  page.replaceChildren();
  const other = { ...VIEW, scheduleId: "s2", prompt: "water" };
  const first = card({ runTool: async () => ({ done: true }) });
  const second = card({ runTool: async () => ({ scheduledAt: DUE }), view: other });
  press(first.findAll("button")[0]);
  await settle();
  press(second.findAll("button")[1]);
  press(all(second, "schedule-snooze-choice")[0]);
  await settle();
  assert.equal(doc.activeElement, one(second, "schedule-occurrence-state"));
  // The host renders both cards again (the snooze arrived): the focus stays with the second.
  const events = [ack("s1", DUE), snoozeCreate("s2", DUE, "2026-12-03T17:18:00.000Z")];
  const firstAgain = renderCard({ runTool: async () => ({}), events });
  const secondAgain = renderCard({ runTool: async () => ({}), events, view: other });
  first.replaceWith(firstAgain);
  second.replaceWith(secondAgain);
  await settle();
  assert.equal(doc.activeElement, one(secondAgain, "schedule-occurrence-state"));
});

describe("the Reminders panel's deliveries", () => {
  const item = (extra) => ({
    scheduleId: "s1",
    prompt: "Water the plants",
    occurrenceAt: DUE,
    deliveredAt: DUE,
    lateMs: 0,
    ...extra,
  });
  const panel = (recent, locale = "en", runTool = async () => ({})) =>
    shown(
      renderPanel(
        {
          view: { active: [], recent },
          sessionId: SID,
          t: tr(locale),
          time: clock(locale),
          document: doc,
          errorText: () => "",
          runTool,
        },
        createCancels(() => {}),
      ),
    );

  test("done and snoozed show from the view; the others offer Done and Snooze", () => {
    const body = panel([
      item({ done: true }),
      item({ scheduleId: "s2", snoozedUntil: "2026-12-03T17:10:00.000Z" }),
      item({ scheduleId: "s3", snoozedUntil: "never" }),
    ]);
    const rows = body.findAll("li");
    assert.deepEqual(
      rows.map((r) => one(r, "schedule-occurrence-state")?.textContent ?? buttonsOf(r).join("|")),
      ["Done ✓", "Snoozed until 18:10", "Done|Snooze ▾"],
    );
    const zh = panel(
      [item({ done: true }), item({ scheduleId: "s2", snoozedUntil: "2026-12-03T17:10:00.000Z" })],
      "zh",
    );
    assert.deepEqual(
      all(zh, "schedule-occurrence-state").map((e) => e.textContent),
      ["完成 ✓", "已推迟到 18:10"],
    );
  });

  test("Done from the panel runs schedule_ack with the row's occurrence", async () => {
    const calls = [];
    const body = panel([item({ scheduleId: "s4" })], "en", async (name, args) => {
      calls.push([name, args]);
      return { done: true };
    });
    body
      .findAll("button")
      .find((b) => b.textContent === "Done")
      .click();
    await settle();
    assert.deepEqual(calls, [[ACK_TOOL, { id: "s4", occurrence_at: DUE }]]);
    assert.equal(one(body, "schedule-occurrence-state").textContent, "Done ✓");
  });
});

describe("the delivered board rows", () => {
  const row = (kind, data) => ({
    sessionId: SID,
    sessionName: "Errands",
    key: "s1@x",
    kind,
    atMs: DUE_MS,
    data,
  });
  const ctx = (r, locale = "en", runTool) => ({
    row: r,
    locale,
    t: tr(locale),
    time: clock(locale),
    document: doc,
    runTool,
  });
  const board = (context) => shown(renderRow(context));

  test("the occurrence a row stands for", () => {
    assert.deepEqual(rowOccurrence(row("delivered", { text: "x", id: "s1", occurrenceAt: DUE })), {
      scheduleId: "s1",
      occurrenceAt: DUE,
    });
    for (const data of [
      null,
      "x",
      { id: "", occurrenceAt: DUE },
      { id: "s1" },
      { id: 3, occurrenceAt: DUE },
    ]) {
      assert.equal(rowOccurrence(row("delivered", data)), null);
    }
  });

  test("a delivered row says what became of it; with runTool it offers Done and Snooze", async () => {
    const done = renderRow(
      ctx(row("delivered", { text: SECRET, id: "s1", occurrenceAt: DUE, done: true }), "zh"),
    );
    assert.equal(one(done, "schedule-occurrence-state").textContent, "完成 ✓");
    const open = renderRow(ctx(row("delivered", { text: "x", id: "s2", occurrenceAt: DUE })));
    assert.equal(one(open, "schedule-occurrence").childNodes.length, 0); // no runTool: no action
    const calls = [];
    const acting = board(
      ctx(
        row("delivered", { text: "x", id: "s3", occurrenceAt: DUE }),
        "en",
        async (name, args) => {
          calls.push([name, args]);
          return { done: true };
        },
      ),
    );
    assert.deepEqual(buttonsOf(acting), ["Done", "Snooze ▾"]);
    acting.findAll("button")[0].click();
    await settle();
    assert.deepEqual(calls, [[ACK_TOOL, { id: "s3", occurrence_at: DUE }]]);
    assert.equal(one(acting, "schedule-occurrence-state").textContent, "Done ✓");
    // A pending row, or a delivered one of an older plugin (no id), has none of this.
    assert.equal(
      one(
        renderRow(ctx(row("pending", { text: "x", id: "s1", occurrenceAt: DUE }))),
        "schedule-occurrence",
      ),
      null,
    );
    assert.equal(one(renderRow(ctx(row("delivered", { text: "x" }))), "schedule-occurrence"), null);
  });
});

// ---------------------------------------------------------------------------------------------

const notice = (key, channel, status, extra = {}) => ({
  key: `${SID}/schedule/${key}/${channel}`,
  channel,
  label: `${channel} <b>label</b>`,
  service: channel,
  status,
  attempts: 1,
  error: null,
  updatedAt: "2026-12-03T17:08:01.000Z",
  ...extra,
});

describe("where a delivery was sent", () => {
  test("a card's notices: its own occurrence, first notices only, malformed ones left out", () => {
    const notices = [
      notice(`s1@${DUE}`, "ntfy", "delivered"),
      notice(`s1@${DUE}#1`, "ntfy", "pending"),
      notice(`s1@2026-12-03T17:09:00.000Z`, "mail", "failed"),
      notice(`s2@${DUE}`, "mail", "failed"),
      { ...notice(`s1@${DUE}`, "hook", "sending"), key: `other/schedule/s1@${DUE}/hook` },
      { ...notice(`s1@${DUE}`, "hook", "sending"), key: `${SID}/tally/s1@${DUE}/hook` },
      { ...notice(`s1@${DUE}`, "hook", "sending"), channel: "" },
      { ...notice(`s1@${DUE}`, "hook", "sending"), key: 5 },
      notice(`no-at-sign`, "hook", "sending"),
      null,
      notice(`s1@${DUE}`, "mail", "failed", {
        label: "",
        error: "550 mailbox full",
        status: "failed",
      }),
      notice(`s1@${DUE}`, "web", 3, { error: "" }),
    ];
    assert.deepEqual(occurrenceNotices(notices, SID, "s1", DUE), [
      { channel: "ntfy", label: "ntfy <b>label</b>", status: "delivered", error: null },
      { channel: "mail", label: "mail", status: "failed", error: "550 mailbox full" },
      { channel: "web", label: "web <b>label</b>", status: "", error: null },
    ]);
    assert.deepEqual(occurrenceNotices("nope", SID, "s1", DUE), []);
  });

  test("one line per state: sent, sending, unsure, then each failure with its error (en / zh)", () => {
    const entries = [
      { channel: "a", label: "ntfy", status: "delivered", error: null },
      { channel: "b", label: "phone", status: "delivered", error: null },
      { channel: "c", label: "hook", status: "pending", error: null },
      { channel: "d", label: "chat", status: "sending", error: null },
      { channel: "e", label: "pager", status: "unknown", error: null },
      { channel: "f", label: "mail", status: "failed", error: "timeout <script>" },
      { channel: "g", label: "sms", status: "failed", error: null },
      { channel: "h", label: "old", status: "withdrawn", error: null },
    ];
    assert.deepEqual(noticeLines(entries, tr("en")), [
      { kind: "sent", text: "Sent to ntfy, phone" },
      { kind: "sending", text: "Sending to hook, chat…" },
      { kind: "unknown", text: "Not sure it reached pager" },
      { kind: "failed", text: "Could not reach mail: timeout <script>" },
      { kind: "failed", text: "Could not reach sms" },
    ]);
    assert.deepEqual(
      noticeLines(entries, tr("zh")).map((line) => line.text),
      [
        "已发送到 ntfy、phone",
        "正在发送到 hook、chat…",
        "不确定是否已送达 pager",
        "无法送达 mail：timeout <script>",
        "无法送达 sms",
      ],
    );
    assert.deepEqual(noticeLines([entries[7]], tr("en")), []);
  });

  test("the card reads them once, shows them as text, and reads again while one is sending", async () => {
    const timers = [];
    const previous = useNoticeWatch(
      new NoticeWatch({
        setTimer: (callback, ms) => timers.push({ callback, ms }),
        retries: [2000, 4000],
      }),
    );
    try {
      const reads = [];
      let answer = [notice(`s1@${DUE}`, "ntfy", "sending")];
      const notices = () => {
        reads.push(answer);
        return Promise.resolve({ notices: answer });
      };
      const first = card({ notices });
      const second = card({ notices, view: { ...VIEW, scheduleId: "s2" } });
      // Until the read: the card says where it was delivered.
      assert.equal(
        one(first, "schedule-card-delivery").textContent,
        "Delivered in this session only",
      );
      await settle();
      assert.equal(reads.length, 1); // one read for both cards
      const line = one(first, "schedule-card-sent");
      assert.equal(line.textContent, "Sending to ntfy <b>label</b>…");
      assert.equal(line.childNodes.length, 1);
      assert.equal(line.childNodes[0].nodeType, 3);
      assert.equal(line.getAttribute("data-notice"), "sending");
      assert.equal(
        one(second, "schedule-card-delivery").textContent,
        "Delivered in this session only",
      );
      assert.deepEqual(
        timers.map((timer) => timer.ms),
        [2000],
      );
      answer = [notice(`s1@${DUE}`, "ntfy", "failed", { error: "HTTP 502" })];
      timers[0].callback();
      await settle();
      assert.equal(reads.length, 2);
      assert.equal(
        one(first, "schedule-card-sent").textContent,
        "Could not reach ntfy <b>label</b>: HTTP 502",
      );
      assert.equal(timers.length, 1); // nothing is sending any more: no more reads
      // A card rebuilt for a delivery already read does not read again; it shows what was read.
      const rebuilt = card({ notices });
      assert.equal(
        one(rebuilt, "schedule-card-sent").textContent,
        "Could not reach ntfy <b>label</b>: HTTP 502",
      );
      await settle();
      assert.equal(reads.length, 2);
    } finally {
      useNoticeWatch(previous);
    }
  });

  test("reads stop after the last retry, a failed read is quiet, a new delivery reads again", async () => {
    const timers = [];
    const previous = useNoticeWatch(
      new NoticeWatch({
        setTimer: (callback, ms) => timers.push({ callback, ms }),
        retries: [10, 20],
      }),
    );
    try {
      let reads = 0;
      const stuck = () => {
        reads += 1;
        return Promise.resolve([notice(`s1@${DUE}`, "ntfy", "pending")]);
      };
      card({ notices: stuck });
      await settle();
      timers.shift().callback();
      await settle();
      timers.shift().callback();
      await settle();
      assert.equal(reads, 3);
      assert.deepEqual(timers, []); // two retries and no more
      const failing = deferred();
      const failed = card({ notices: () => failing.promise, view: { ...VIEW, scheduleId: "s5" } });
      await settle();
      failing.reject(new Error("404"));
      await settle();
      // What the last read said stays; s5 had none.
      assert.equal(
        one(failed, "schedule-card-delivery").textContent,
        "Delivered in this session only",
      );
      assert.deepEqual(
        timers.map((timer) => timer.ms),
        [10],
      ); // s1 is still sending: a new round
    } finally {
      useNoticeWatch(previous);
    }
  });

  test("a card shown while a read is in flight is read again after it", async () => {
    const previous = useNoticeWatch(new NoticeWatch({ setTimer: () => {}, retries: [] }));
    try {
      const answers = [];
      const notices = () => {
        const reply = deferred();
        answers.push(reply);
        return reply.promise;
      };
      card({ notices });
      await settle();
      const late = card({ notices, view: { ...VIEW, scheduleId: "s6" } });
      answers[0].resolve([]);
      await settle();
      assert.equal(answers.length, 2);
      answers[1].resolve([notice(`s6@${DUE}`, "ntfy", "delivered")]);
      await settle();
      assert.equal(one(late, "schedule-card-sent").textContent, "Sent to ntfy <b>label</b>");
    } finally {
      useNoticeWatch(previous);
    }
  });
});
