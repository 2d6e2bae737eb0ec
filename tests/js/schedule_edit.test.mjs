// ui-schedule: Edit in the Reminders panel. The form shows the reminder's text and its time or
// rule (same kind; a weekly rule's days), survives the host's rebuilds with what was typed, and
// runs `schedule_update` as the user's action with `expected` = the record it showed. A change
// meanwhile reloads the form with what the reminder says now; a no-op closes quietly; a refusal
// is said in plain words (en / zh); a save waits for the views to show it, then closes.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { describeError } from "../../src/dsh_host/web/static/errors.js";
import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import {
  createCancels,
  editShape,
  formProblem,
  formValues,
  panelState,
  recordOf,
  UPDATE_TOOL,
  updateArguments,
  updateOutcome,
  wallClock,
} from "../../src/dsh_schedule_ui/static/panel-state.js";
import { renderPanel } from "../../src/dsh_schedule_ui/static/reminders-panel.js";
import { messages, NAMESPACE } from "../../src/dsh_schedule_ui/static/schedule-words.js";
import { fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
// The fake DOM records focus on the global document.
globalThis.document = { activeElement: null };

const NOW = Date.parse("2026-12-03T17:00:00.000Z"); // Thursday, 18:00 in Berlin
const BERLIN = "Europe/Berlin";
const SECRET = "SECRET <img src=x onerror=alert(1)>";

const WEEKLY = {
  scheduleId: "w1",
  prompt: "Read the notes before the stand-up",
  title: "Stand-up",
  kind: "weekly",
  time: "09:00:00.000",
  timeZone: "Europe/Paris",
  weekdays: [1, 2, 3, 4, 5],
  nextAt: "2026-12-04T08:00:00.000Z",
};
const DAILY = {
  scheduleId: "d1",
  prompt: "Lights out",
  kind: "daily",
  time: "22:00:00.000",
  timeZone: BERLIN,
  nextAt: "2026-12-03T21:00:00.000Z",
};
const CRON_TIME = {
  scheduleId: "c1",
  prompt: "Pay the rent",
  kind: "cron",
  expression: "0 9 1 * *",
  timeZone: BERLIN,
  nextAt: "2027-01-01T08:00:00.000Z",
};
const CRON = {
  scheduleId: "c2",
  prompt: "Check the queue",
  kind: "cron",
  expression: "*/30 9-17 * * 1-5",
  timeZone: "UTC",
  nextAt: "2026-12-07T09:00:00.000Z",
};
const AT = { scheduleId: "a1", prompt: "Call mom", kind: "at", nextAt: "2026-12-03T18:00:00.000Z" };
const AFTER = {
  scheduleId: "f1",
  prompt: "Stretch",
  kind: "after", // as the view has it today: without its afterSeconds
  nextAt: "2026-12-03T17:10:00.000Z",
};
const EVERY = {
  scheduleId: "e1",
  prompt: "Drink water",
  kind: "every",
  everySeconds: 1800,
  nextAt: "2026-12-03T17:30:00.000Z",
};
const ALL = [AFTER, EVERY, AT, DAILY, WEEKLY, CRON, CRON_TIME];

/** The panel on a page: `runTool` answers with `answers` in turn (a function throws). */
function page({ active = ALL, locale = "en", answers = [], refresh } = {}) {
  const p = { calls: [], refreshed: 0, rebuilds: 0 };
  const queue = [...answers];
  const state = createCancels(() => {
    p.rebuilds += 1;
    p.body = renderPanel(p.ctx, state);
  });
  p.state = state;
  p.ctx = {
    view: { badge: active.length, active, recent: [] },
    sessionId: "abc",
    locale,
    t: (key, params) => t(key, params, locale),
    time: createTime({ now: () => NOW, locale, timeZone: BERLIN }),
    document: fakeDocument,
    errorText: (error) => describeError(error, locale).text,
    runTool: async (name, args) => {
      p.calls.push([name, structuredClone(args)]);
      const next = queue.shift();
      if (typeof next === "function") return next();
      return next;
    },
    refreshViews: () => {
      p.refreshed += 1;
      return refresh?.();
    },
  };
  p.body = renderPanel(p.ctx, state);
  p.views = (list) => {
    p.ctx = { ...p.ctx, view: { badge: list.length, active: list, recent: [] } };
    p.body = renderPanel(p.ctx, state); // the host's rebuild on a views frame
  };
  p.row = (id) => p.body.querySelector(`li[data-schedule-id="${id}"]`);
  p.form = (id) => p.row(id).querySelector("form");
  p.open = (id) => p.row(id).querySelector("button.schedule-panel-edit").click();
  p.input = (id, name) => p.form(id).querySelector(`input[name=${name}]`);
  p.type = (id, name, value) => {
    const input = p.input(id, name);
    input.value = value;
    input.dispatch("input");
  };
  p.day = (id, day) => p.form(id).querySelector(`input[value="${day}"]`);
  p.toggle = (id, day) => {
    const box = p.day(id, day);
    box.checked = !box.checked;
    box.dispatch("change");
  };
  p.save = (id) => p.form(id).dispatch("submit");
  p.notice = (id) => p.form(id).querySelector("p.schedule-edit-notice")?.textContent ?? null;
  return p;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const focusKey = () => globalThis.document.activeElement?.getAttribute("data-focus-key") ?? null;

describe("failures first", () => {
  test("changed meanwhile: the form says so and reloads with what the reminder says now", async () => {
    const p = page({ answers: [{ id: "w1", updated: false, code: "schedule_conflict" }] });
    p.open("w1");
    p.type("w1", "time", "09:30");
    p.save("w1");
    await settle();
    assert.equal(p.calls.length, 1);
    assert.equal(p.refreshed, 1);
    assert.equal(
      p.notice("w1"),
      "This reminder changed meanwhile (it may just have fired). Here is what it says now.",
    );
    assert.equal(p.form("w1").querySelector("p.schedule-edit-notice").getAttribute("role"), "alert");
    assert.equal(p.input("w1", "time").value, "09:00"); // what was typed is dropped
    // The views after the refresh: it fired and was edited elsewhere; the form shows that.
    const now = { ...WEEKLY, prompt: "Bring the slides", time: "08:45:00.000", nextAt: "2026-12-07T07:45:00.000Z" };
    p.views([now]);
    assert.equal(p.input("w1", "prompt").value, "Bring the slides");
    assert.equal(p.input("w1", "time").value, "08:45");
    assert.match(p.notice("w1"), /changed meanwhile/);
    // Saving again sends the record it now shows.
    p.type("w1", "prompt", "Bring the slides and the notes");
    p.save("w1");
    assert.deepEqual(p.calls[1][1].expected, recordOf(panelState({ active: [now] }).active[0]));
  });

  test("Chinese: the conflict sentence and a refusal in plain words", async () => {
    const p = page({
      locale: "zh",
      answers: [{ id: "w1", updated: false, code: "schedule_conflict" }, { code: "invalid_rule", message: "raw" }],
    });
    p.open("w1");
    p.type("w1", "time", "09:30");
    p.save("w1");
    await settle();
    assert.equal(p.notice("w1"), "这条提醒刚刚有了变化（可能刚刚送达）。下面是它现在的内容。");
    p.type("w1", "time", "25:00x");
    p.save("w1");
    assert.equal(p.notice("w1"), "请选择时间。");
    p.type("w1", "time", "10:00");
    p.save("w1");
    await settle();
    assert.equal(p.notice("w1"), "未保存：这个时间或规则不能用于这条提醒。");
    assert.equal(p.form("w1").querySelector("button.schedule-edit-save").textContent, "保存");
  });

  test("refusals, a gone or ended reminder and a failed request are said in plain words", async () => {
    const down = () => {
      throw Object.assign(new TypeError("Failed to fetch"));
    };
    const p = page({
      answers: [
        { code: "not_future", message: "The scheduled time must be strictly in the future." },
        { code: "frequency_too_high", message: "every_seconds must be at least 300." },
        { id: "e1", updated: false, code: "schedule_ended" },
        { id: "e1", updated: false, code: "schedule_not_found" },
        down,
        "nonsense",
      ],
    });
    p.open("a1");
    p.type("a1", "time", "17:00");
    p.save("a1");
    await settle();
    assert.equal(p.notice("a1"), "Not saved: That time has already passed.");
    p.open("e1");
    p.type("e1", "every", "1");
    const expected = [
      "Not saved: A repeating reminder can run at most every 5 minutes.",
      "Not saved: This reminder has ended; there is nothing left to change.",
      "Not saved: This reminder no longer exists.",
      "Not saved: The server cannot be reached. Check that it is running.",
      "Not saved: Something went wrong.",
    ];
    for (const sentence of expected) {
      p.save("e1");
      await settle();
      assert.equal(p.notice("e1"), sentence);
      assert.equal(p.input("e1", "every").value, "1"); // what was typed stays for another try
    }
    assert.equal(p.refreshed, 2); // ended and gone: the views are asked for again
    assert.ok(!p.body.textContent.includes("frequency_too_high"));
  });

  test("what cannot be saved is said before asking: text, title, time, days, interval, expression", () => {
    const p = page();
    const problems = [
      ["w1", "prompt", "   ", "The reminder needs some text."],
      ["w1", "title", "", "The title needs some text (at most 120 characters)."],
      ["w1", "title", "x".repeat(121), "The title needs some text (at most 120 characters)."],
      ["d1", "time", "", "Pick a time."],
      ["a1", "date", "", "Pick a date and a time."],
      ["e1", "every", "0", "Say how many minutes apart, e.g. 30."],
      ["e1", "every", " ", "Say how many minutes apart, e.g. 30."],
      ["c2", "expression", "0 9 * *", "A cron expression has five fields, e.g. 0 9 * * 1."],
    ];
    for (const [id, name, value, sentence] of problems) {
      p.open(id);
      p.type(id, name, value);
      p.save(id);
      assert.equal(p.notice(id), sentence, `${id} ${name}`);
      p.form(id).querySelector("button.schedule-edit-close").click();
    }
    p.open("w1");
    for (const day of [1, 2, 3, 4, 5]) p.toggle("w1", day);
    p.save("w1");
    assert.equal(p.notice("w1"), "Pick at least one day.");
    assert.deepEqual(p.calls, []);
  });
});

describe("saving", () => {
  test("a weekly rule: new time and days, same zone, with the record it showed as expected", async () => {
    let views;
    const refreshed = new Promise((resolve) => {
      views = resolve;
    });
    const saved = { id: "w1", kind: "weekly", prompt: WEEKLY.prompt, scheduledAt: "2026-12-07T09:30:00.000Z" };
    const p = page({ answers: [saved], refresh: () => refreshed });
    p.open("w1");
    assert.equal(focusKey(), "edit-title:w1"); // the first field takes the focus
    assert.equal(p.form("w1").getAttribute("aria-label"), "Edit reminder: Stand-up");
    assert.equal(p.row("w1").querySelector("button.schedule-panel-edit"), null);
    assert.equal(p.input("w1", "time").value, "09:00");
    const checked = [1, 2, 3, 4, 5, 6, 7].filter((day) => p.day("w1", day).checked);
    assert.deepEqual(checked, [1, 2, 3, 4, 5]);
    assert.equal(p.form("w1").querySelector("p.schedule-edit-zone").textContent, "Times in Europe/Paris");
    const labels = p.form("w1").querySelectorAll("label").map((label) => label.textContent);
    assert.deepEqual(labels.slice(0, 3), ["Title", "Reminder text", "Time"]);
    p.type("w1", "time", "10:30");
    p.toggle("w1", 5);
    p.toggle("w1", 7);
    p.save("w1");
    assert.deepEqual(p.calls, [
      [
        UPDATE_TOOL,
        {
          id: "w1",
          weekly: { time: "10:30:00", time_zone: "Europe/Paris", weekdays: [1, 2, 3, 4, 7] },
          expected: {
            id: "w1",
            kind: "weekly",
            prompt: WEEKLY.prompt,
            time: "09:00:00.000",
            timeZone: "Europe/Paris",
            weekdays: [1, 2, 3, 4, 5],
            scheduledAt: WEEKLY.nextAt,
            title: "Stand-up",
          },
        },
      ],
    ]);
    const save = p.form("w1").querySelector("button.schedule-edit-save");
    assert.equal(save.textContent, "Saving…");
    assert.equal(save.getAttribute("aria-disabled"), "true");
    assert.equal(p.input("w1", "time").readOnly, true);
    p.save("w1"); // a second submit while it runs does nothing
    await settle();
    assert.equal(p.calls.length, 1);
    assert.equal(p.refreshed, 1);
    // Saved: it says "Saving…" until the views show the change; then the form is closed.
    assert.equal(p.form("w1").querySelector("button.schedule-edit-save").textContent, "Saving…");
    p.views(ALL); // a views frame that does not have it yet
    assert.notEqual(p.form("w1"), null);
    const changed = { ...WEEKLY, time: "10:30:00.000", weekdays: [1, 2, 3, 4, 7], nextAt: "2026-12-06T09:30:00.000Z" };
    p.views(ALL.map((item) => (item.scheduleId === "w1" ? changed : item)));
    assert.equal(p.form("w1"), null);
    assert.equal(p.row("w1").querySelector(".schedule-panel-rule").textContent,
      "Every Monday, Tuesday, Wednesday, Thursday and Sunday at 10:30 (Europe/Paris)");
    views();
    await settle();
    assert.equal(p.form("w1"), null);
  });

  test("the form closes when the refresh ends even if the views never showed the change", async () => {
    const p = page({ answers: [{ id: "d1", kind: "daily", prompt: "Lights off" }] });
    p.open("d1");
    p.type("d1", "prompt", "  Lights off ");
    p.save("d1");
    assert.deepEqual(p.calls[0][1], { id: "d1", prompt: "Lights off", expected: recordOf(panelState({ active: [DAILY] }).active[0]) });
    // The focus was on the Save button: after the form closes it is on Edit (same key).
    assert.equal(p.form("d1").querySelector("button.schedule-edit-save").getAttribute("data-focus-key"), "edit:d1");
    await settle();
    await settle();
    assert.equal(p.form("d1"), null);
    assert.equal(p.row("d1").querySelector("button.schedule-panel-edit").getAttribute("data-focus-key"), "edit:d1");
  });

  test("each kind keeps its kind: daily, cron at one time, cron expression, interval, one-time", async () => {
    const ok = { id: "x", kind: "x", prompt: "x" };
    const p = page({ answers: [ok, ok, ok, ok, ok, ok] });
    const edits = [
      ["d1", "time", "07:15", { daily: { time: "07:15:00", time_zone: BERLIN } }],
      ["c1", "time", "08:05", { cron: { expression: "5 8 1 * *", time_zone: BERLIN } }],
      ["c2", "expression", " 0  10 */2 * 1 ", { cron: { expression: "0 10 */2 * 1", time_zone: "UTC" } }],
      ["e1", "every", "45", { every_seconds: 2700 }],
      ["a1", "time", "20:30", { at: { date: "2026-12-03", time: "20:30:00", time_zone: BERLIN } }],
      ["f1", "date", "2026-12-24", { at: { date: "2026-12-24", time: "18:10:00", time_zone: BERLIN } }],
    ];
    for (const [id, name, value] of edits) {
      p.open(id);
      p.type(id, name, value);
      p.save(id);
    }
    await settle();
    const sent = p.calls.map(([, args]) => {
      const { id, expected, ...rest } = args;
      assert.equal(expected?.id ?? id, id);
      return [id, rest];
    });
    assert.deepEqual(sent, edits.map(([id, , , selector]) => [id, selector]));
    // An after reminder's record is whole only with its afterSeconds: without it in the view,
    // no expectation is sent (the tool reads the current record); with it, the whole record.
    assert.equal(Object.hasOwn(p.calls[5][1], "expected"), false);
    const q = page({ active: [{ ...AFTER, afterSeconds: 600 }], answers: [{ id: "f1", prompt: "x" }] });
    q.open("f1");
    q.type("f1", "prompt", "Stretch the legs");
    q.save("f1");
    assert.deepEqual(q.calls[0][1], {
      id: "f1",
      prompt: "Stretch the legs",
      expected: { id: "f1", kind: "after", prompt: "Stretch", afterSeconds: 600, scheduledAt: AFTER.nextAt },
    });
  });

  test("nothing changed, or `updated: false`: the form closes quietly and Edit has the focus", async () => {
    const p = page({ answers: [{ id: "e1", kind: "every", prompt: "Drink water", updated: false }] });
    p.open("e1");
    p.type("e1", "every", "30");
    p.save("e1"); // the same interval: nothing to ask
    assert.deepEqual(p.calls, []);
    assert.equal(p.form("e1"), null);
    assert.equal(focusKey(), "edit:e1");
    p.open("e1");
    p.type("e1", "every", "30.0"); // the same, said differently: the tool says nothing changed
    p.save("e1");
    await settle();
    assert.equal(p.calls.length, 1);
    assert.equal(p.form("e1"), null);
    assert.equal(p.body.querySelectorAll("p.schedule-edit-notice").length, 0);
  });
});

describe("the form on a page", () => {
  test("what was typed survives the host's rebuilds and stays over the record it showed", async () => {
    const p = page({ answers: [{ id: "w1", updated: false, code: "schedule_conflict" }] });
    p.open("w1");
    p.type("w1", "prompt", "Bring the slides");
    p.toggle("w1", 6);
    p.views(ALL); // a rebuild
    assert.equal(p.input("w1", "prompt").value, "Bring the slides");
    assert.equal(p.day("w1", 6).checked, true);
    // It fired meanwhile (its next time moved): the form still shows what it was typed over,
    // and the save sends that record, which the tool finds changed.
    const fired = { ...WEEKLY, nextAt: "2026-12-07T08:00:00.000Z" };
    p.views(ALL.map((item) => (item.scheduleId === "w1" ? fired : item)));
    assert.equal(p.input("w1", "prompt").value, "Bring the slides");
    p.save("w1");
    assert.equal(p.calls[0][1].expected.scheduledAt, WEEKLY.nextAt);
    await settle();
    assert.match(p.notice("w1"), /changed meanwhile/);
    assert.equal(p.input("w1", "prompt").value, WEEKLY.prompt);
  });

  test("an untouched form follows the views; Close and Escape close it and Edit has the focus", () => {
    const p = page();
    p.open("d1");
    const later = { ...DAILY, time: "23:00:00.000" };
    p.views(ALL.map((item) => (item.scheduleId === "d1" ? later : item)));
    assert.equal(p.input("d1", "time").value, "23:00");
    p.form("d1").querySelector("button.schedule-edit-close").click();
    assert.equal(p.form("d1"), null);
    assert.equal(focusKey(), "edit:d1");
    p.open("d1");
    assert.equal(focusKey(), "edit-prompt:d1");
    p.form("d1").dispatch("keydown", { key: "Tab" });
    assert.notEqual(p.form("d1"), null);
    p.form("d1").dispatch("keydown", { key: "Escape" });
    assert.equal(p.form("d1"), null);
  });

  test("a reminder that leaves the view takes its form along; a Cancel in flight disables Edit", async () => {
    let answer;
    const replied = new Promise((resolve) => {
      answer = resolve;
    });
    const p = page({ answers: [() => replied] });
    p.open("d1");
    p.type("d1", "prompt", "x");
    p.views(ALL.filter((item) => item.scheduleId !== "d1"));
    assert.equal(p.state.edits.size, 0);
    p.views(ALL);
    assert.equal(p.form("d1"), null);
    p.row("e1").querySelector("button.schedule-panel-cancel").click();
    assert.equal(p.row("e1").querySelector("button.schedule-panel-edit").disabled, true);
    answer({ id: "e1", deleted: true });
    await settle();
    // A save whose form was closed meanwhile changes nothing when it answers.
    const q = page({ answers: [() => replied] });
    q.open("d1");
    q.type("d1", "prompt", "Lights off");
    q.save("d1");
    q.form("d1").querySelector("button.schedule-edit-close").click();
    await settle();
    assert.equal(q.form("d1"), null);
    assert.equal(q.state.edits.size, 0);
  });

  test("a weekly reminder's days in Chinese; the zone note only when it is not the browser's", () => {
    const p = page({ locale: "zh" });
    p.open("w1");
    const days = p.form("w1").querySelector("fieldset");
    assert.equal(days.querySelector("legend").textContent, "哪几天");
    const names = days.querySelectorAll("label").map((label) => label.textContent);
    assert.deepEqual(names, ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]);
    assert.equal(p.form("w1").querySelector("p.schedule-edit-zone").textContent, "时间按 Europe/Paris");
    p.open("d1");
    assert.equal(p.form("d1").querySelector("p.schedule-edit-zone"), null);
    assert.equal(p.form("d1").querySelector("button.schedule-edit-close").textContent, "关闭");
  });

  test("Session text reaches the form only as text", () => {
    const secret = { ...DAILY, prompt: SECRET, title: SECRET };
    const p = page({ active: [secret] });
    p.open("d1");
    assert.equal(p.body.querySelectorAll("img").length, 0);
    assert.equal(p.input("d1", "prompt").value, SECRET);
    assert.equal(p.form("d1").getAttribute("aria-label"), `Edit reminder: ${SECRET}`);
  });
});

describe("the pieces", () => {
  const item = (raw) => panelState({ active: [raw] }).active[0];
  const ctx = { time: createTime({ now: () => NOW, locale: "en", timeZone: BERLIN }) };

  test("which fields each kind edits", () => {
    assert.deepEqual(ALL.map((raw) => editShape(item(raw))), [
      "at",
      "every",
      "at",
      "daily",
      "weekly",
      "cron",
      "cronTime",
    ]);
    for (const broken of [
      { ...DAILY, timeZone: undefined },
      { ...WEEKLY, weekdays: [] },
      { ...CRON, expression: undefined },
      { ...EVERY, everySeconds: 0 },
      { ...DAILY, kind: "yearly" },
    ]) {
      assert.equal(editShape(item(broken)), null, JSON.stringify(broken));
      const values = formValues(item(broken), ctx);
      assert.equal(formProblem(item(broken), values), null);
      assert.equal(updateArguments(item(broken), values, values, ctx), null);
    }
    assert.deepEqual(formValues(item({ ...DAILY, time: "22:00:30.000" }), ctx).time, "22:00:30");
    assert.deepEqual(formValues(item({ ...DAILY, time: "22:00:30.500" }), ctx).time, "22:00:30.500");
    assert.deepEqual(wallClock(Date.parse("2026-12-31T23:30:00Z"), BERLIN), { date: "2027-01-01", time: "00:30" });
  });

  test("a time with seconds keeps them; a browser without a zone sends UTC", () => {
    const p = page({ active: [{ ...DAILY, time: "22:00:30.000" }] });
    p.open("d1");
    assert.equal(p.input("d1", "time").getAttribute("step"), "1");
    const at = item(AT);
    const values = { ...formValues(at, ctx), time: "20:00" };
    const noZone = { time: { timeZone: undefined } };
    assert.deepEqual(updateArguments(at, formValues(at, ctx), values, noZone).at.time_zone, "UTC");
  });

  test("what an answer means", () => {
    assert.equal(updateOutcome({ id: "w1", updated: false, code: "schedule_conflict" }), "conflict");
    assert.equal(updateOutcome({ id: "w1", updated: false }), "unchanged");
    assert.equal(updateOutcome({ id: "w1", kind: "weekly" }), "saved");
    assert.deepEqual(updateOutcome({ code: "invalid_rule" }), { error: { code: "invalid_rule" } });
    for (const value of [null, undefined, "x", {}, { id: "" }]) {
      assert.deepEqual(updateOutcome(value), { error: { code: "unknown" } });
    }
  });
});
