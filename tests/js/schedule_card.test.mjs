// ui-schedule: the reminder card (validation, the due time and lateness as people read them,
// text-only rendering) and the strings module.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import registerCard, {
  latenessMs,
  reminderCardModel,
  renderReminderCard,
  validateReminderView,
} from "../../src/dsh_schedule_ui/static/reminder-row.js";
import { readFileSync } from "node:fs";
import registerWords, {
  instantMs,
  LATE_THRESHOLD_MS,
  latenessText,
  messages,
  NAMESPACE,
} from "../../src/dsh_schedule_ui/static/schedule-words.js";
import { fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
const tr = (locale) => (key, params) => t(key, params, locale);

const DUE = "2026-12-03T17:08:00.000Z";
const DUE_MS = Date.parse(DUE);
const clock = (locale, now = DUE_MS + 5_000) =>
  createTime({ now: () => now, locale, timeZone: "Europe/Berlin" });
const VALID = {
  scheduleId: "schedule-1",
  prompt: "Check the deployment log",
  occurrenceAt: DUE,
  deliveryMode: "session-local",
};
const SECRET = "SECRET-PROMPT <script>alert(1)</script>";

function presented(view, time = DUE_MS + 250) {
  return { kind: "presented-event", seq: 7, time, eventType: "schedule/change", view };
}

function card(view, { locale = "en", time, now } = {}) {
  return renderReminderCard({
    node: presented(view, time),
    locale,
    t: tr(locale),
    time: clock(locale, now),
    document: fakeDocument,
  });
}

const byClass = (root, name) =>
  [...root.descendants()].find((e) => e.classList.contains(name)) ?? null;

const INCOMPATIBLE = [
  ["null", null],
  ["array", [VALID]],
  ["string", "schedule-1"],
  ["missing scheduleId", { ...VALID, scheduleId: undefined, prompt: SECRET }],
  ["empty scheduleId", { ...VALID, scheduleId: "", prompt: SECRET }],
  ["numeric prompt", { ...VALID, prompt: 42 }],
  ["numeric occurrenceAt", { ...VALID, occurrenceAt: DUE_MS, prompt: SECRET }],
  ["empty occurrenceAt", { ...VALID, occurrenceAt: "", prompt: SECRET }],
  ["unparseable occurrenceAt", { ...VALID, occurrenceAt: "not a date", prompt: SECRET }],
  ["global deliveryMode", { ...VALID, deliveryMode: "global", prompt: SECRET }],
];

describe("validation", () => {
  test("a valid receipt; extra keys dropped; a known late reason kept", () => {
    assert.deepEqual(validateReminderView(VALID), VALID);
    assert.deepEqual(validateReminderView({ ...VALID, extra: 1 }), VALID);
    assert.deepEqual(validateReminderView({ ...VALID, lateReason: "busy" }), {
      ...VALID,
      lateReason: "busy",
    });
    assert.deepEqual(validateReminderView({ ...VALID, lateReason: "<b>" }), VALID);
  });
  for (const [name, view] of INCOMPATIBLE) {
    test(`incompatible sidecar: ${name}`, () => {
      assert.equal(validateReminderView(view), null);
      for (const locale of ["en", "zh"]) {
        const row = card(view, { locale });
        assert.equal(row.getAttribute("role"), "note");
        assert.equal(row.hasAttribute("data-invalid"), true);
        assert.equal(row.hasAttribute("data-notify"), false);
        assert.equal(
          row.textContent,
          locale === "en"
            ? "Reminder receipt unavailable · schedule/change"
            : "提醒回执不可用 · schedule/change",
        );
      }
    });
  }
});

describe("lateness", () => {
  const en = clock("en");
  test("more than a minute only, in whole units", () => {
    assert.equal(LATE_THRESHOLD_MS, 60_000);
    assert.equal(latenessText(60_000, undefined, tr("en"), en), null);
    assert.equal(latenessText(60_001, undefined, tr("en"), en), "1 min late");
    assert.equal(latenessText(2 * 3_600_000 + 5 * 60_000, undefined, tr("en"), en), "2 h 5 min late");
    assert.equal(latenessText(120_000, undefined, tr("zh"), clock("zh")), "晚了 2 分钟");
    for (const bad of [Number.NaN, null, "5", -90_000]) {
      assert.equal(latenessText(bad, undefined, tr("en"), en), null);
    }
  });
  test("the reason when known, in both languages", () => {
    assert.equal(
      latenessText(120_000, "offline", tr("en"), en),
      "2 min late · the host was offline or the session was not open",
    );
    assert.equal(latenessText(120_000, "busy", tr("zh"), clock("zh")), "晚了 2 分钟 · 当时助手正忙");
    assert.equal(latenessText(120_000, "other", tr("en"), en), "2 min late");
  });
  test("latenessMs from the record time and the due instant", () => {
    assert.equal(latenessMs(DUE_MS + 7_200_000, DUE), 7_200_000);
    assert.equal(latenessMs("soon", DUE), null);
    assert.equal(latenessMs(DUE_MS, "garbage"), null);
    assert.equal(instantMs(5), null);
  });
});

describe("card", () => {
  test("the prompt is the main text, one inert text node, beside a bell", () => {
    const row = card({ ...VALID, prompt: SECRET });
    assert.equal(row.getAttribute("data-notify"), SECRET);
    assert.equal(row.getAttribute("aria-label"), `Reminder: ${SECRET}`);
    assert.equal(row.getAttribute("data-schedule-id"), "schedule-1");
    const bell = byClass(row, "schedule-card-bell");
    assert.equal(bell.getAttribute("aria-hidden"), "true");
    assert.equal(bell.namespaceURI, "http://www.w3.org/2000/svg"); // drawn, no emoji font needed
    assert.equal(bell.children[0].getAttribute("fill"), "currentColor");
    const prompt = byClass(row, "schedule-reminder-prompt");
    assert.equal(prompt.textContent, SECRET);
    assert.deepEqual(
      prompt.childNodes.map((c) => c.nodeType),
      [3],
    );
    assert.equal(byClass(row, "schedule-card-label").textContent, "Reminder");
    assert.equal(byClass(row, "schedule-card-delivery").textContent, "Delivered in this session only");
  });
  test("the due time in the browser's zone, the UTC instant as its tooltip; on time: no badge", () => {
    const row = card(VALID, { time: DUE_MS + 60_000 });
    const due = row.find("time");
    assert.equal(due.getAttribute("datetime"), DUE);
    assert.equal(due.getAttribute("title"), "2026-12-03 17:08:00 UTC");
    assert.equal(due.textContent, "Due today 18:08");
    assert.equal(byClass(row, "schedule-card-late"), null);
  });
  test("a late delivery shows its badge; Chinese card", () => {
    const row = card({ ...VALID, lateReason: "offline" }, { locale: "zh", time: DUE_MS + 180_000 });
    assert.equal(row.getAttribute("lang"), "zh-CN");
    assert.equal(row.find("time").textContent, "到期 今天 18:08");
    assert.equal(
      byClass(row, "schedule-card-late").textContent,
      "晚了 3 分钟 · 当时主机离线或会话未打开",
    );
    assert.equal(byClass(row, "schedule-card-label").textContent, "提醒");
  });
  test("a receipt without a record time shows no lateness", () => {
    const model = reminderCardModel(presented(VALID, undefined), tr("en"), clock("en"));
    assert.equal(model.lateText, null);
  });
});

describe("registration", () => {
  test("the card module registers schedule/change; the words module the namespace", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const dropWords = registerWords(registry);
    const dropCard = registerCard(registry);
    assert.equal(registry.has("schedule/change"), true);
    const zh = registry.render(presented(VALID), { locale: "zh", time: clock("zh") });
    assert.equal(byClass(zh, "schedule-card-label").textContent, "提醒");
    dropCard();
    dropWords();
    assert.equal(registry.has("schedule/change"), false);
  });
  test("the stylesheet uses only the host's theme properties, no colours of its own", () => {
    const css = readFileSync(new URL("../../src/dsh_schedule_ui/static/schedule.css", import.meta.url), "utf8");
    const used = new Set([...css.matchAll(/var\((--[\w-]+)\)/g)].map((m) => m[1]));
    const allowed = new Set(
      "--bg --surface --surface-2 --fg --muted --border --accent --accent-fg --danger --warn --success --radius --font".split(" "),
    );
    assert.ok(used.size > 5);
    assert.deepEqual([...used].filter((name) => !allowed.has(name)), []);
    assert.equal(/#[0-9a-f]{3,6}\b|rgb\(/i.test(css), false, "no hard-coded colours");
  });
});
