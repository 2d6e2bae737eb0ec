// ui-schedule's boards: "All reminders" (every pending reminder on the host, with Cancel through
// the same user action as the Reminders panel), the start page's "Coming up" and "While you were
// away", and the words a Session's delete confirmation uses for its pending reminders. Both
// languages; the reminder text is text only and its time reads as people read times.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import registerBoards, {
  cancelAction,
  cancelDone,
  DELIVERED_BOARD,
  PENDING_BOARD,
  renderRow,
  rowReminder,
} from "../../src/dsh_schedule_ui/static/all-reminders.js";
import registerPanel, { deleteNote } from "../../src/dsh_schedule_ui/static/reminders-panel.js";
import { messages, NAMESPACE } from "../../src/dsh_schedule_ui/static/schedule-words.js";
import { fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
const tr = (locale) => (key, params) => t(key, params, locale);

const NOW = Date.parse("2026-12-03T13:00:00.000Z"); // 14:00 in Berlin
const SECRET = "water <b>the</b> plants <img src=x onerror=alert(1)>";

function row(atMs, data, key = "schedule-3") {
  return { sessionId: "s1", sessionName: "Groceries", key, kind: "pending", atMs, data };
}

function ctx(locale, r) {
  return {
    row: r,
    locale,
    t: tr(locale),
    time: createTime({ now: () => NOW, locale, timeZone: "Europe/Berlin" }),
    document: fakeDocument,
  };
}

const byClass = (root, name) => [...root.descendants()].find((e) => e.classList.contains(name));

describe("a reminder row", () => {
  test("its text as text, its time absolute and relative, how often it repeats (en / zh)", () => {
    const due = NOW + 3 * 3600_000; // today 17:00 in Berlin
    const en = renderRow(ctx("en", row(due, { text: SECRET, everySeconds: 1800 })));
    const text = byClass(en, "schedule-board-text");
    assert.equal(text.textContent, SECRET);
    assert.equal(text.childNodes.length, 1);
    assert.equal(text.childNodes[0].nodeType, 3);
    assert.equal(en.querySelectorAll("img").length + en.querySelectorAll("b").length, 0);
    assert.equal(byClass(en, "schedule-board-when").textContent, "today 17:00 · in 3 h · every 30 min");
    const [absolute, relative] = en.findAll("time");
    assert.equal(absolute.getAttribute("datetime"), new Date(due).toISOString());
    assert.equal(absolute.getAttribute("title"), "2026-12-03 16:00:00 UTC");
    assert.equal(absolute.getAttribute("data-dsh-relative"), null);
    assert.equal(relative.getAttribute("data-dsh-relative"), "always"); // kept current by the host

    const tomorrow = NOW + 19 * 3600_000; // tomorrow 09:00 in Berlin
    const zh = renderRow(ctx("zh", row(tomorrow, { text: "开会" })));
    assert.equal(byClass(zh, "schedule-board-text").textContent, "开会");
    assert.equal(byClass(zh, "schedule-board-when").textContent, "明天 09:00 · 19 小时后");
    assert.equal(byClass(zh, "schedule-board-every"), undefined);
  });

  test("a malformed row's data degrades to an empty text, and a bad interval is dropped", () => {
    assert.deepEqual(rowReminder(row(NOW, null)), { text: "" });
    assert.deepEqual(rowReminder(row(NOW, { text: 3, everySeconds: -5 })), { text: "" });
    assert.deepEqual(rowReminder(row(NOW, { text: "x", everySeconds: 1.5 })), { text: "x" });
    assert.deepEqual(rowReminder(row(NOW, { text: "x", everySeconds: 600 })), { text: "x", everySeconds: 600 });
  });
});

describe("Cancel from the board", () => {
  test("is schedule_delete of the row's reminder, named by its text (en / zh)", () => {
    const r = row(NOW, { text: "stretch" });
    assert.deepEqual(cancelAction(ctx("en", r)), {
      label: "Cancel",
      busyLabel: "Cancelling…",
      description: "Cancel reminder: stretch",
      tool: "schedule_delete",
      arguments: { id: "schedule-3" },
    });
    const zh = cancelAction(ctx("zh", r));
    assert.equal(zh.label, "取消");
    assert.equal(zh.description, "取消提醒：stretch");
  });

  test("deleted or already gone: the row goes; a refusal is an error", () => {
    assert.equal(cancelDone({ id: "schedule-3", deleted: true }), "done");
    assert.equal(cancelDone({ code: "schedule_not_found" }), "done");
    assert.deepEqual(cancelDone({ code: "persistence_uncertain" }), { error: { code: "persistence_uncertain" } });
    assert.deepEqual(cancelDone(null), { error: { code: "unknown" } });
  });
});

describe("registration", () => {
  test("two boards: every pending reminder (titled, on the start page) and the deliveries (away)", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const drop = registerBoards(registry);
    const pending = registry.board(PENDING_BOARD);
    assert.equal(pending.plugin, "schedule");
    assert.equal(pending.kind, "pending");
    assert.equal(pending.title(tr("en")), "All reminders");
    assert.equal(pending.title(tr("zh")), "所有提醒");
    assert.equal(pending.home.title(tr("en")), "Coming up");
    assert.equal(pending.home.limit, 5);
    assert.match(pending.empty(tr("en")), /^No pending reminders in any session/);
    assert.equal(pending.failed({ reason: "no", t: tr("en") }), "Could not cancel: no");
    assert.equal(pending.outcome({ deleted: true }), "done");
    const delivered = registry.board(DELIVERED_BOARD);
    assert.equal(delivered.kind, "delivered");
    assert.equal(delivered.title, undefined, "no entry of its own");
    assert.equal(delivered.action, undefined);
    assert.equal(delivered.away.title({ count: 3, t: tr("en") }), "While you were away: 3 reminders");
    assert.equal(delivered.away.title({ count: 1, t: tr("en") }), "While you were away: 1 reminder");
    assert.equal(delivered.away.title({ count: 3, t: tr("zh") }), "你不在时：3 条提醒");
    drop();
    assert.deepEqual(registry.boards(), []);
  });

  test("the delete confirmation's words for the pending reminders that go with a Session", () => {
    assert.equal(deleteNote({ count: 2, t: tr("en") }), "Its 2 pending reminders will be deleted too.");
    assert.equal(deleteNote({ count: 1, t: tr("en") }), "Its pending reminder will be deleted too.");
    assert.equal(deleteNote({ count: 2, t: tr("zh") }), "它的 2 条待办提醒也会一并删除。");
    const registry = new RendererRegistry({ document: fakeDocument });
    registerPanel(registry);
    assert.equal(
      registry.deleteNote("schedule.reminders", 4, tr("en")),
      "Its 4 pending reminders will be deleted too.",
    );
    assert.equal(registry.deleteNote("other.view", 4, tr("en")), null);
  });
});
