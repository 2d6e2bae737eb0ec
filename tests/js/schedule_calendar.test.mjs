// ui-schedule: calendar reminders in the page's words: a daily, weekly or cron rule in English
// and Chinese ("Every weekday at 09:00", "每周一 10:00", "On day 1 of every month at 09:00",
// the expression itself otherwise), its zone only when it is not the browser's, the title when
// there is one; in the Reminders panel, the card of a delivered occurrence, the All reminders row
// and the tool lines (a create, a `schedule_update`).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { describeError } from "../../src/dsh_host/web/static/errors.js";
import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import { renderRow, rowReminder } from "../../src/dsh_schedule_ui/static/all-reminders.js";
import { renderReminderCard, validateReminderView } from "../../src/dsh_schedule_ui/static/reminder-row.js";
import { createCancels, panelState } from "../../src/dsh_schedule_ui/static/panel-state.js";
import { renderPanel } from "../../src/dsh_schedule_ui/static/reminders-panel.js";
import {
  clockText,
  cronWords,
  isoWeekdays,
  messages,
  NAMESPACE,
  reminderName,
  ruleWords,
  scoped,
} from "../../src/dsh_schedule_ui/static/schedule-words.js";
import { summarizeCreate, summarizeUpdate } from "../../src/dsh_schedule_ui/static/tool-summaries.js";
import { fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
const tr = (locale) => (key, params) => t(key, params, locale);
const BERLIN = "Europe/Berlin";
const NOW = Date.parse("2026-12-03T17:00:00.000Z"); // Thursday, 18:00 in Berlin
const clock = (locale) => createTime({ now: () => NOW, locale, timeZone: BERLIN });
const SECRET = "SECRET <img src=x onerror=alert(1)>";

const weekly = (weekdays, time = "10:00:00.000", timeZone = BERLIN) => ({
  kind: "weekly",
  time,
  timeZone,
  weekdays,
});
const cron = (expression, timeZone = BERLIN) => ({ kind: "cron", expression, timeZone });
const words = (rule, locale = "en") => ruleWords(rule, tr(locale), BERLIN);

describe("a rule in words", () => {
  test("weekly and daily rules, in English and Chinese", () => {
    assert.equal(words(weekly([1, 2, 3, 4, 5], "09:00:00.000", "Europe/Paris")), "Every weekday at 09:00 (Europe/Paris)");
    assert.equal(words(weekly([1])), "Every Monday at 10:00");
    assert.equal(words({ kind: "daily", time: "22:00:00.000", timeZone: BERLIN }), "Every day at 22:00");
    assert.equal(words(weekly([1]), "zh"), "每周一 10:00");
    assert.equal(words(weekly([1, 2, 3, 4, 5], "09:00:00.000"), "zh"), "每个工作日 09:00");
    assert.equal(words({ kind: "daily", time: "22:00:00.000", timeZone: BERLIN }, "zh"), "每天 22:00");
    assert.equal(words(weekly([1, 3, 5])), "Every Monday, Wednesday and Friday at 10:00");
    assert.equal(words(weekly([1, 3, 5]), "zh"), "每周一、三、五 10:00");
    assert.equal(words(weekly([6, 7])), "Every Saturday and Sunday at 10:00");
    assert.equal(words(weekly([1, 2, 3, 4, 5, 6, 7])), "Every day at 10:00");
    assert.equal(words(weekly([7], "07:05:30.250", "UTC"), "zh"), "每周日 07:05:30.25（UTC）");
  });

  test("the zone shows only when it is not the browser's", () => {
    const paris = { kind: "daily", time: "08:00:00.000", timeZone: "Europe/Paris" };
    assert.equal(ruleWords(paris, tr("en"), "Europe/Paris"), "Every day at 08:00");
    assert.equal(ruleWords(paris, tr("en"), BERLIN), "Every day at 08:00 (Europe/Paris)");
    assert.equal(ruleWords(paris, tr("en"), undefined), "Every day at 08:00 (Europe/Paris)");
    assert.equal(ruleWords({ ...paris, timeZone: undefined }, tr("en"), BERLIN), "Every day at 08:00");
  });

  test("cron rules of the common shapes in words, any other as the expression", () => {
    const cases = [
      ["0 9 1 * *", "On day 1 of every month at 09:00", "每月 1 日 09:00"],
      ["30 8 1,15 * *", "On days 1 and 15 of every month at 08:30", "每月 1、15 日 08:30"],
      ["0 9 * * 1-5", "Every weekday at 09:00", "每个工作日 09:00"],
      ["0 10 * * 1", "Every Monday at 10:00", "每周一 10:00"],
      ["0 10 * * 0,6", "Every Saturday and Sunday at 10:00", "每周六、日 10:00"],
      ["0 22 * * *", "Every day at 22:00", "每天 22:00"],
      ["0 9,17 * * *", "Every day at 09:00 and 17:00", "每天 09:00、17:00"],
      ["0 8 25 12 *", "Every year on 25 December at 08:00", "每年 12 月 25 日 08:00"],
      ["*/15 * * * *", "Every 15 minutes", "每 15 分钟"],
      ["30 * * * *", "Every hour at minute 30", "每小时第 30 分钟"],
      ["* * * * *", "Every minute", "每分钟"],
      // Both day fields restricted (either matches), steps, several months, many times: as is.
      ["0 9 */2 * 1", "cron 0 9 */2 * 1", "cron 0 9 */2 * 1"],
      ["0 9 1 * 1", "cron 0 9 1 * 1", "cron 0 9 1 * 1"],
      ["0 9 1 1,7 *", "cron 0 9 1 1,7 *", "cron 0 9 1 1,7 *"],
      ["0 */2 * * *", "cron 0 */2 * * *", "cron 0 */2 * * *"],
      ["*/7 * * * *", "cron */7 * * * *", "cron */7 * * * *"],
      ["0,30 * * * *", "cron 0,30 * * * *", "cron 0,30 * * * *"],
      ["0 9 * 2 *", "cron 0 9 * 2 *", "cron 0 9 * 2 *"],
      ["0 1-7 * * *", "cron 0 1-7 * * *", "cron 0 1-7 * * *"],
      ["0 9 * * */2", "cron 0 9 * * */2", "cron 0 9 * * */2"],
      ["0 9 1-7 * *", "On days 1, 2, 3, 4, 5, 6 and 7 of every month at 09:00", "每月 1、2、3、4、5、6、7 日 09:00"],
    ];
    for (const [expression, en, zh] of cases) {
      assert.equal(words(cron(expression)), en, expression);
      assert.equal(words(cron(expression), "zh"), zh, expression);
    }
    assert.equal(words(cron("0 9 */2 * 1", "UTC")), "cron 0 9 */2 * 1 (UTC)");
    assert.equal(words(cron("0 9 */2 * 1", "UTC"), "zh"), "cron 0 9 */2 * 1（UTC）");
    assert.equal(words(cron("0 10 * * 7")), "Every Sunday at 10:00"); // 7 is Sunday too
  });

  test("a malformed expression is shown as it is; a malformed rule has no words", () => {
    const s = scoped(tr("en"));
    for (const bad of ["0 9 * *", "0 9 * * MON", "61 9 * * *", "0 9 5-1 * *", "0 9 * * 1/2", "0 9 */0 * *"]) {
      assert.equal(cronWords(bad, s), `cron ${bad}`);
    }
    assert.equal(cronWords(7, s), "cron ");
    for (const rule of [
      null,
      { kind: "at" },
      { kind: "every", everySeconds: 60 },
      { kind: "daily", time: "24:00:00", timeZone: BERLIN },
      { kind: "weekly", time: "10:00:00.000", timeZone: BERLIN, weekdays: [] },
      weekly([1, 1]),
      weekly([0]),
      weekly("1"),
      { kind: "cron", expression: "", timeZone: BERLIN },
    ]) {
      assert.equal(words(rule), null, JSON.stringify(rule));
    }
    assert.equal(clockText("09:00"), null);
    assert.equal(clockText("09:00:00"), "09:00");
    assert.equal(clockText("09:00:05.100"), "09:00:05.1");
    assert.deepEqual(isoWeekdays([5, 1]), [1, 5]);
    assert.equal(reminderName({ title: "  ", prompt: "text" }), "text");
    assert.equal(reminderName({ title: "Stand-up", prompt: "text" }), "Stand-up");
    assert.equal(reminderName(null), "");
  });
});

const PANEL_VIEW = {
  badge: 3,
  active: [
    {
      scheduleId: "w1",
      prompt: "Read the notes before the stand-up",
      title: "Stand-up",
      kind: "weekly",
      time: "09:00:00.000",
      timeZone: "Europe/Paris",
      weekdays: [1, 2, 3, 4, 5],
      nextAt: "2026-12-04T08:00:00.000Z",
    },
    {
      scheduleId: "d1",
      prompt: SECRET,
      kind: "daily",
      time: "22:00:00.000",
      timeZone: BERLIN,
      nextAt: "2026-12-03T21:00:00.000Z",
    },
    {
      scheduleId: "c1",
      prompt: "Pay the rent",
      kind: "cron",
      expression: "0 9 1 * *",
      timeZone: BERLIN,
      nextAt: "2027-01-01T08:00:00.000Z",
    },
  ],
  recent: [
    {
      scheduleId: "w1",
      prompt: "Read the notes before the stand-up",
      title: "Stand-up",
      occurrenceAt: "2026-12-03T08:00:00.000Z",
      deliveredAt: "2026-12-03T08:00:01.000Z",
      lateMs: 1000,
    },
  ],
};

function panelContext(locale = "en") {
  return {
    view: PANEL_VIEW,
    sessionId: "abc",
    locale,
    t: tr(locale),
    time: clock(locale),
    document: fakeDocument,
    errorText: (error) => describeError(error, locale).text,
    runTool: async () => ({}),
    refreshViews: () => {},
  };
}

const texts = (root, name) =>
  [...root.descendants()].filter((e) => e.classList.contains(name)).map((e) => e.textContent);

describe("the Reminders panel", () => {
  test("names a reminder by its title, says its rule and when it is next due (en / zh)", () => {
    const en = renderPanel(panelContext(), createCancels(() => {}));
    assert.deepEqual(texts(en, "schedule-panel-prompt"), ["Stand-up", SECRET, "Pay the rent", "Stand-up"]);
    assert.deepEqual(texts(en, "schedule-panel-rule"), [
      "Every weekday at 09:00 (Europe/Paris)",
      "Every day at 22:00",
      "On day 1 of every month at 09:00",
    ]);
    assert.deepEqual(texts(en, "schedule-panel-when").slice(0, 3), [
      "tomorrow 09:00",
      "today 22:00",
      "Fri 1 Jan 2027 09:00",
    ]);
    const cancel = en.querySelectorAll("button.schedule-panel-cancel")[0];
    assert.equal(cancel.getAttribute("aria-label"), "Cancel reminder: Stand-up");
    const edit = en.querySelectorAll("button.schedule-panel-edit")[1];
    assert.equal(edit.getAttribute("aria-label"), `Edit reminder: ${SECRET}`);
    assert.equal(en.querySelectorAll("img").length, 0);

    const zh = renderPanel(panelContext("zh"), createCancels(() => {}));
    assert.deepEqual(texts(zh, "schedule-panel-rule"), [
      "每个工作日 09:00（Europe/Paris）",
      "每天 22:00",
      "每月 1 日 09:00",
    ]);
    assert.deepEqual(texts(zh, "schedule-panel-when").slice(0, 2), ["明天 09:00", "今天 22:00"]);
    assert.equal(zh.querySelectorAll("button.schedule-panel-edit")[0].textContent, "编辑");
  });

  test("keeps a calendar item's fields, and drops the malformed ones", () => {
    const [item] = panelState({
      active: [
        {
          ...PANEL_VIEW.active[0],
          title: "",
          time: "9:00",
          timeZone: 3,
          weekdays: [1, 1],
          expression: "",
          afterSeconds: -1,
        },
      ],
    }).active;
    assert.deepEqual(Object.keys(item).sort(), ["due", "kind", "nextAt", "prompt", "scheduleId"]);
  });
});

describe("the card of a delivered occurrence", () => {
  const view = {
    scheduleId: "w1",
    prompt: "Read the notes before the stand-up",
    occurrenceAt: "2026-12-03T08:00:00.000Z",
    deliveryMode: "session-local",
    title: "Stand-up",
    kind: "weekly",
    time: "09:00:00.000",
    timeZone: "Europe/Paris",
    weekdays: [1, 2, 3, 4, 5],
  };
  const card = (v, locale = "en") =>
    renderReminderCard({
      node: { eventType: "schedule/change", time: Date.parse(v.occurrenceAt) + 500, view: v },
      locale,
      t: tr(locale),
      time: clock(locale),
      document: fakeDocument,
    });

  test("says which occurrence it was, under its title and rule", () => {
    const en = card(view);
    assert.deepEqual(texts(en, "schedule-reminder-prompt"), ["Stand-up"]);
    assert.deepEqual(texts(en, "schedule-card-text"), ["Read the notes before the stand-up"]);
    assert.deepEqual(texts(en, "schedule-card-rule"), ["Every weekday at 09:00 (Europe/Paris)"]);
    assert.deepEqual(texts(en, "schedule-card-due"), ["Due today 09:00"]);
    assert.equal(en.getAttribute("data-fold-at"), view.occurrenceAt);
    assert.equal(en.getAttribute("aria-label"), "Reminder: Stand-up");
    assert.equal(en.getAttribute("data-notify"), "Stand-up");
    const zh = card(view, "zh");
    assert.deepEqual(texts(zh, "schedule-card-rule"), ["每个工作日 09:00（Europe/Paris）"]);
    assert.deepEqual(texts(zh, "schedule-card-due"), ["到期 今天 09:00"]);
  });

  test("a view without a rule or title shows the card as before; odd fields are dropped", () => {
    const plain = card({ ...view, title: undefined, kind: undefined, weekdays: "1-5" });
    assert.deepEqual(texts(plain, "schedule-reminder-prompt"), ["Read the notes before the stand-up"]);
    assert.deepEqual(texts(plain, "schedule-card-text"), []);
    assert.deepEqual(texts(plain, "schedule-card-rule"), []);
    const kept = validateReminderView({ ...view, title: 3, weekdays: "1-5" });
    assert.equal(kept.title, undefined);
    assert.equal(kept.weekdays, undefined);
    const secret = card({ ...view, title: SECRET });
    assert.equal(secret.querySelectorAll("img").length, 0);
    assert.deepEqual(texts(secret, "schedule-reminder-prompt"), [SECRET]);
  });
});

describe("an All reminders row", () => {
  const at = Date.parse("2026-12-04T08:00:00.000Z");
  const data = {
    text: "Read the notes before the stand-up",
    title: "Stand-up",
    rule: { kind: "weekly", time: "09:00:00.000", timeZone: "Europe/Paris", weekdays: [1, 2, 3, 4, 5] },
  };
  const row = (d) => ({ sessionId: "s1", sessionName: "Work", key: "w1", kind: "pending", atMs: at, data: d });
  const render = (d, locale = "en") =>
    renderRow({ row: row(d), locale, t: tr(locale), time: clock(locale), document: fakeDocument });

  test("shows the title and the rule in words", () => {
    const en = render(data);
    assert.deepEqual(texts(en, "schedule-board-text"), ["Stand-up"]);
    assert.deepEqual(texts(en, "schedule-board-rule"), [" · Every weekday at 09:00 (Europe/Paris)"]);
    assert.match(texts(en, "schedule-board-when")[0], /^tomorrow 09:00 · in 15 h · Every weekday/);
    assert.deepEqual(texts(render(data, "zh"), "schedule-board-rule"), [" · 每个工作日 09:00（Europe/Paris）"]);
  });

  test("without a title or a calendar kind it is the row it was", () => {
    assert.deepEqual(rowReminder(row({ text: "x", title: "", rule: { kind: "at" } })), { text: "x" });
    assert.deepEqual(rowReminder(row({ text: "x", rule: "weekly" })), { text: "x" });
    const plain = render({ text: "x", everySeconds: 1800 });
    assert.deepEqual(texts(plain, "schedule-board-rule"), []);
    const broken = render({ ...data, rule: { ...data.rule, time: "late" } });
    assert.deepEqual(texts(broken, "schedule-board-rule"), []);
  });
});

describe("the tool lines", () => {
  const input = (locale, fields) => ({
    name: "schedule_update",
    pending: false,
    isError: false,
    locale,
    t: tr(locale),
    time: clock(locale),
    errorText: (value) => describeError(value, locale).text,
    ...fields,
  });
  const VIEW = {
    id: "w1",
    kind: "weekly",
    prompt: "Read the notes",
    title: "Stand-up",
    time: "09:30:00.000",
    timeZone: BERLIN,
    weekdays: [1],
    scheduledAt: "2026-12-07T08:30:00.000Z",
    state: "scheduled",
    deliveryMode: "session-local",
  };

  test("a calendar create says its rule and its next time", () => {
    assert.equal(
      summarizeCreate(input("en", { name: "schedule_create", value: VIEW })),
      "Repeating reminder set · Every Monday at 09:30 · next Mon 7 Dec 09:30",
    );
    assert.equal(
      summarizeCreate(input("zh", { name: "schedule_create", value: VIEW })),
      "已设置重复提醒 · 每周一 09:30 · 下次 12月7日 周一 09:30",
    );
  });

  test("schedule_update: refused, changed meanwhile, gone, ended, unchanged, changed", () => {
    const en = (value) => summarizeUpdate(input("en", { value }));
    const zh = (value) => summarizeUpdate(input("zh", { value }));
    assert.equal(en({ code: "invalid_rule", message: "raw" }), "Reminder not changed: That time does not work for a reminder.");
    assert.equal(zh({ code: "invalid_rule", message: "raw" }), "未能修改提醒：这个时间不能用于提醒。");
    const conflict = { id: "w1", updated: false, code: "schedule_conflict" };
    assert.equal(en(conflict), "Reminder not changed: it changed meanwhile");
    assert.equal(zh(conflict), "未修改提醒：它刚刚有了变化");
    assert.equal(en({ id: "w1", updated: false, code: "schedule_not_found" }), "That reminder was already gone");
    assert.equal(en({ id: "w1", updated: false, code: "schedule_ended" }), "That reminder has already ended");
    assert.equal(zh({ id: "w1", updated: false, code: "schedule_ended" }), "该提醒已经结束");
    assert.equal(en({ ...VIEW, updated: false }), "Reminder unchanged: Stand-up");
    assert.equal(en(VIEW), "Reminder changed: Stand-up · Every Monday at 09:30 · next Mon 7 Dec 09:30");
    assert.equal(zh(VIEW), "已修改提醒：Stand-up · 每周一 09:30 · 下次 12月7日 周一 09:30");
    const oneShot = { id: "a1", kind: "at", prompt: "call mom", scheduledAt: "2026-12-03T18:00:00.000Z" };
    assert.equal(en(oneShot), "Reminder changed: call mom · next today 19:00");
    assert.equal(summarizeUpdate(input("en", { pending: true })), "Changing a reminder…");
    assert.equal(zh({ ...oneShot, scheduledAt: "soon" }), null);
    assert.equal(en(null), null);
    assert.equal(en({ id: "w1" }), null);
  });
});
