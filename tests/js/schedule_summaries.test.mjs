// ui-schedule: one-line tool summaries and the follow-up line, in English and Chinese.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { describeError } from "../../src/dsh_host/web/static/errors.js";
import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import { messages, NAMESPACE } from "../../src/dsh_schedule_ui/static/schedule-words.js";
import register, {
  followupCount,
  PLUGIN,
  summarizeAck,
  summarizeCreate,
  summarizeDelete,
  summarizeFollowup,
  summarizeList,
  summarizeSnooze,
  TOOLS,
} from "../../src/dsh_schedule_ui/static/tool-summaries.js";
import { fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
const NOW = Date.parse("2026-12-03T17:00:00Z");

function input(locale, fields) {
  return {
    name: "schedule_create",
    pending: false,
    isError: false,
    locale,
    t: (key, params) => t(key, params, locale),
    time: createTime({ now: () => NOW, locale, timeZone: "Asia/Shanghai" }),
    errorText: (value) => describeError(value, locale).text,
    ...fields,
  };
}

const CREATED = {
  id: "schedule-1",
  kind: "after",
  prompt: "stretch",
  afterSeconds: 600,
  scheduledAt: "2026-12-03T17:10:00.000Z",
  state: "scheduled",
  deliveryMode: "session-local",
};

describe("schedule_create", () => {
  test("pending, set with its local time, repeating, refused", () => {
    assert.equal(summarizeCreate(input("en", { pending: true })), "Setting a reminder…");
    assert.equal(summarizeCreate(input("en", { value: CREATED })), "Reminder set · today 01:10");
    assert.equal(summarizeCreate(input("zh", { value: CREATED })), "已设置提醒 · 今天 01:10");
    const every = { ...CREATED, kind: "every", everySeconds: 1800, afterSeconds: undefined };
    assert.equal(
      summarizeCreate(input("en", { value: every })),
      "Repeating reminder set · every 30 min · next today 01:10",
    );
    assert.equal(
      summarizeCreate(input("zh", { value: every })),
      "已设置重复提醒 · 每 30 分钟 · 下次 今天 01:10",
    );
    const refused = { code: "not_future", message: "The scheduled time must be strictly in the future." };
    assert.equal(
      summarizeCreate(input("en", { value: refused, isError: true })),
      "Reminder not set: That time has already passed.",
    );
    assert.equal(
      summarizeCreate(input("zh", { value: refused, isError: true })),
      "未能设置提醒：这个时间已经过去了。",
    );
  });
  test("a value it does not recognise falls back to the generic summary", () => {
    assert.equal(summarizeCreate(input("en", { value: { id: "x" } })), null);
    assert.equal(summarizeCreate(input("en", { value: null })), null);
  });
});

describe("schedule_list and schedule_delete", () => {
  test("counts", () => {
    assert.equal(summarizeList(input("en", { pending: true })), "Looking up reminders…");
    assert.equal(summarizeList(input("en", { value: [] })), "No active reminders");
    assert.equal(summarizeList(input("en", { value: [CREATED] })), "1 active reminder");
    assert.equal(summarizeList(input("zh", { value: [CREATED, CREATED] })), "2 条待办提醒");
    assert.equal(
      summarizeList(input("en", { value: { code: "persistence_uncertain" }, isError: true })),
      "Could not list reminders: It is not certain the change was saved; check the reminder list.",
    );
    assert.equal(summarizeList(input("en", { value: {} })), null);
  });
  test("cancelled, already gone, refused", () => {
    assert.equal(summarizeDelete(input("en", { pending: true })), "Cancelling a reminder…");
    assert.equal(summarizeDelete(input("en", { value: { id: "s", deleted: true } })), "Reminder cancelled");
    assert.equal(summarizeDelete(input("zh", { value: { id: "s", deleted: true } })), "已取消提醒");
    assert.equal(
      summarizeDelete(
        input("en", { value: { id: "s", deleted: false, code: "schedule_not_found" } }),
      ),
      "That reminder was already gone",
    );
    assert.equal(
      summarizeDelete(input("en", { value: { code: "invalid_rule", message: "m" }, isError: true })),
      "Reminder not cancelled: That time does not work for a reminder.",
    );
    assert.equal(summarizeDelete(input("en", { value: 3 })), null);
  });
});

describe("follow-ups", () => {
  const single = '[SCHEDULE REMINDER]\nPresent ...\nschedule_id_json: "s"\noccurrence_at: x\nreminder_prompt_json: "a"';
  const batch = (items) =>
    `[SCHEDULE REMINDER BATCH]\nPresent all due reminders ...\nreminders_json: ${JSON.stringify(items)}`;
  test("one reminder, or a batch's count", () => {
    assert.equal(followupCount(single), 1);
    assert.equal(followupCount(batch([{}, {}, {}])), 3);
    assert.equal(followupCount(batch([])), 1);
    assert.equal(followupCount("[SCHEDULE REMINDER BATCH]\nno json line"), 1);
    assert.equal(followupCount("[SCHEDULE REMINDER BATCH]\nreminders_json: {oops"), 1);
    assert.equal(followupCount(null), 1);
    assert.equal(summarizeFollowup(input("en", { text: single })), "Reminder handed to the assistant");
    assert.equal(summarizeFollowup(input("zh", { text: batch([{}, {}]) })), "2 条提醒已交给助手");
  });
});

test("the default export registers the four tools and the follow-up line, and unregisters them", () => {
  const registry = new RendererRegistry({ document: fakeDocument });
  const drop = register(registry);
  assert.deepEqual(TOOLS, [
    "schedule_create",
    "schedule_list",
    "schedule_delete",
    "schedule_update",
    "schedule_ack",
    "schedule_snooze",
  ]);
  assert.equal(
    registry.toolSummary(input("en", { name: "schedule_update", pending: true })),
    "Changing a reminder…",
  );
  assert.equal(
    registry.toolSummary(input("en", { name: "schedule_delete", value: { deleted: true } })),
    "Reminder cancelled",
  );
  assert.equal(
    registry.followupSummary({ ...input("en", {}), text: "x", source: { kind: "plugin", plugin: PLUGIN } }),
    "Reminder handed to the assistant",
  );
  drop();
  assert.equal(registry.toolSummary(input("en", { name: "schedule_delete", value: {} })), null);
  assert.equal(registry.toolSummary(input("en", { name: "schedule_update", pending: true })), null);
  assert.equal(registry.followupSummary({ text: "x", source: { plugin: PLUGIN } }), null);
});

describe("schedule_ack and schedule_snooze", () => {
  const created = {
    type: "schedule/change",
    data: { version: 1, operation: "create", schedule: { ...CREATED, title: "Stretch <b>now</b>" } },
  };
  const findEvent = (predicate) => (predicate(created) ? created : null);
  const ack = (locale, fields) =>
    input(locale, {
      name: "schedule_ack",
      arguments: { id: "schedule-1", occurrence_at: CREATED.scheduledAt },
      ...fields,
    });

  test("Done names the reminder when its create is loaded; refusals in plain words", () => {
    assert.equal(summarizeAck(ack("en", { pending: true })), "Marking a reminder done…");
    const done = { done: true, id: "schedule-1", occurrenceAt: CREATED.scheduledAt };
    assert.equal(summarizeAck(ack("en", { value: done, findEvent })), "Done: Stretch <b>now</b>");
    assert.equal(summarizeAck(ack("zh", { value: done, findEvent })), "已完成：Stretch <b>now</b>");
    assert.equal(summarizeAck(ack("en", { value: done })), "Reminder marked done");
    assert.equal(summarizeAck(ack("zh", { value: done })), "提醒已标记为完成");
    assert.equal(
      summarizeAck(ack("en", { value: { code: "not_found", message: "no delivery" } })),
      "Not marked done: This delivery is not in this session any more.",
    );
    assert.equal(
      summarizeAck(ack("zh", { value: { code: "persistence_uncertain" } })),
      "未能标记为完成：不确定更改是否已保存，请查看提醒列表。",
    );
    assert.equal(summarizeAck(ack("en", { value: { done: false } })), null);
  });

  test("Snoozed says until when; refusals in plain words", () => {
    const snooze = (locale, fields) => input(locale, { name: "schedule_snooze", ...fields });
    assert.equal(summarizeSnooze(snooze("zh", { pending: true })), "正在推迟提醒…");
    const value = {
      ...CREATED,
      id: "schedule-2",
      kind: "at",
      scheduledAt: "2026-12-03T17:20:00.000Z",
      snoozedFrom: { id: "schedule-1", occurrenceAt: "2026-12-03T17:00:00.000Z" },
    };
    assert.equal(summarizeSnooze(snooze("en", { value })), "Snoozed: stretch · until today 01:20");
    assert.equal(summarizeSnooze(snooze("zh", { value })), "已推迟：stretch · 到 今天 01:20");
    assert.equal(
      summarizeSnooze(snooze("en", { value: { code: "already_snoozed", message: "as s2" } })),
      "Not snoozed: This was already snoozed.",
    );
    assert.equal(summarizeSnooze(snooze("en", { value: { id: "x", prompt: "p" } })), null);
    assert.equal(summarizeSnooze(snooze("en", { value: { scheduledAt: CREATED.scheduledAt } })), null);
  });
});
