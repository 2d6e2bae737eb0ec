// ui-schedule reminder row: validation, lateness copy and the rendered structure.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import register, {
  formatDuration,
  formatLateness,
  LATE_THRESHOLD_MS,
  latenessMs,
  messages,
  NAMESPACE,
  reminderRowModel,
  renderReminderRow,
  validateReminderView,
} from "../../src/dsh_schedule_ui/static/reminder-row.js";
import { fakeDocument } from "./fake-dom.mjs";

// The host registers the `schedule` namespace when the plugin loads; the pure helpers get the
// locale-bound translator the registry would hand them.
registerMessages(NAMESPACE, messages);
const tr = (locale) => (key, params) => t(key, params, locale);

// ------------------------------------------------------------------ fixtures

const DUE = "2026-08-05T12:00:01.000Z";
const DUE_MS = Date.parse(DUE);
const VALID = {
  scheduleId: "schedule-1",
  prompt: "Check the deployment log",
  occurrenceAt: DUE,
  deliveryMode: "session-local",
};
const SECRET = "SECRET-PROMPT <script>alert(1)</script>";

// A presented node as the transcript builds it: `time` is the dispatch event's record time.
function presented(view, time = DUE_MS + 250) {
  return { kind: "presented-event", seq: 7, time, eventType: "schedule/change", view };
}

const INCOMPATIBLE = [
  ["null", null],
  ["undefined", undefined],
  ["array", [VALID]],
  ["string", "schedule-1"],
  ["number", 5],
  ["missing scheduleId", { ...VALID, scheduleId: undefined, prompt: SECRET }],
  ["empty scheduleId", { ...VALID, scheduleId: "", prompt: SECRET }],
  ["numeric scheduleId", { ...VALID, scheduleId: 1, prompt: SECRET }],
  ["missing prompt", { scheduleId: "s", occurrenceAt: DUE, deliveryMode: "session-local" }],
  ["numeric prompt", { ...VALID, prompt: 42 }],
  ["null prompt", { ...VALID, prompt: null }],
  ["missing occurrenceAt", { ...VALID, occurrenceAt: undefined, prompt: SECRET }],
  ["empty occurrenceAt", { ...VALID, occurrenceAt: "", prompt: SECRET }],
  ["numeric occurrenceAt", { ...VALID, occurrenceAt: DUE_MS, prompt: SECRET }],
  ["unparseable occurrenceAt", { ...VALID, occurrenceAt: "not a date", prompt: SECRET }],
  ["missing deliveryMode", { ...VALID, deliveryMode: undefined, prompt: SECRET }],
  ["global deliveryMode", { ...VALID, deliveryMode: "global", prompt: SECRET }],
  ["miscased deliveryMode", { ...VALID, deliveryMode: "Session-Local", prompt: SECRET }],
];

// ------------------------------------------------------------------ tests

describe("validation", () => {
  test("a valid receipt (an empty prompt is still a string)", () => {
    assert.deepEqual(validateReminderView(VALID), VALID);
    assert.deepEqual(validateReminderView({ ...VALID, prompt: "" }), { ...VALID, prompt: "" });
    assert.deepEqual(validateReminderView({ ...VALID, extra: 1 }), VALID);
  });

  for (const [name, view] of INCOMPATIBLE) {
    test(`incompatible sidecar: ${name}`, () => {
      assert.equal(validateReminderView(view), null);
      for (const locale of ["en", "zh"]) {
        const model = reminderRowModel(presented(view), tr(locale));
        assert.equal(model.valid, false);
        assert.equal(JSON.stringify(model).includes("SECRET-PROMPT"), false);
        const row = renderReminderRow({
          node: presented(view),
          locale,
          t: tr(locale),
          document: fakeDocument,
        });
        assert.equal(row.tagName, "SECTION");
        assert.equal(row.getAttribute("role"), "note");
        assert.equal(row.hasAttribute("data-schedule-reminder"), true);
        assert.equal(row.children.length, 1);
        assert.equal(row.children[0].tagName, "P");
        assert.equal(
          row.textContent,
          locale === "en"
            ? "Reminder receipt unavailable · schedule/change"
            : "提醒回执不可用 · schedule/change",
        );
        assert.equal(row.textContent.includes("SECRET"), false);
      }
    });
  }
});

describe("lateness", () => {
  test("threshold: more than 60 s only", () => {
    assert.equal(LATE_THRESHOLD_MS, 60_000);
    assert.equal(formatLateness(0, tr("en")), null);
    assert.equal(formatLateness(59_999, tr("en")), null);
    assert.equal(formatLateness(60_000, tr("en")), null);
    assert.equal(formatLateness(60_001, tr("en")), "delivered 1 min late");
    assert.equal(formatLateness(60_001, tr("zh")), "延迟 1 分钟送达");
    assert.equal(formatLateness(-5_000_000, tr("en")), null);
    assert.equal(formatLateness(Number.NaN, tr("en")), null);
    assert.equal(formatLateness(null, tr("en")), null);
  });

  test("whole units, floored: s / min / h / d and 秒 / 分钟 / 小时 / 天", () => {
    const h = 3_600_000;
    assert.equal(formatLateness(2 * h, tr("en")), "delivered 2 h late");
    assert.equal(formatLateness(2 * h, tr("zh")), "延迟 2 小时送达");
    assert.equal(formatLateness(3 * h - 1, tr("en")), "delivered 2 h late");
    assert.equal(formatLateness(59 * 60_000 + 59_999, tr("en")), "delivered 59 min late");
    assert.equal(formatLateness(59 * 60_000, tr("zh")), "延迟 59 分钟送达");
    assert.equal(formatLateness(24 * h, tr("en")), "delivered 1 d late");
    assert.equal(formatLateness(50 * h, tr("zh")), "延迟 2 天送达");
    assert.deepEqual(formatDuration(59_999, tr("en")), { amount: 59, unit: "s" });
    assert.deepEqual(formatDuration(59_999, tr("zh")), { amount: 59, unit: "秒" });
    assert.equal(formatLateness(2 * h, tr("zh-CN")), "延迟 2 小时送达");
  });

  test("latenessMs from the event time and the due instant", () => {
    assert.equal(latenessMs(DUE_MS + 7_200_000, DUE), 7_200_000);
    assert.equal(latenessMs("soon", DUE), null);
    assert.equal(latenessMs(DUE_MS, "garbage"), null);
  });
});

describe("row", () => {
  test("English row: header, prompt, footer with id, due, recorded and lateness", () => {
    const time = DUE_MS + 2 * 3_600_000 + 5_000;
    const row = renderReminderRow({
      node: presented({ ...VALID, prompt: SECRET }, time),
      locale: "en",
      t: tr("en"),
      document: fakeDocument,
    });
    assert.equal(row.getAttribute("role"), "note");
    assert.equal(row.hasAttribute("data-schedule-reminder"), true);
    const [header, p, footer] = row.children;
    assert.equal(header.tagName, "HEADER");
    assert.equal(header.textContent, "Scheduled reminder Delivered in this session only");
    assert.equal(p.tagName, "P");
    assert.equal(p.textContent, SECRET);
    assert.deepEqual(
      p.childNodes.map((c) => c.nodeType),
      [3],
      "the prompt is a single inert text node",
    );
    assert.equal(footer.tagName, "FOOTER");
    const [due, recorded] = footer.findAll("time");
    assert.equal(due.getAttribute("datetime"), DUE);
    assert.equal(due.textContent, `Due at ${DUE}`);
    const recordedIso = new Date(time).toISOString();
    assert.equal(recorded.getAttribute("datetime"), recordedIso);
    assert.equal(recorded.textContent, `Recorded at ${recordedIso}`);
    assert.equal(
      footer.textContent,
      `ID schedule-1 · Due at ${DUE} · Recorded at ${recordedIso} · delivered 2 h late`,
    );
  });

  test("Chinese row; no lateness note within 60 s", () => {
    const row = renderReminderRow({
      node: presented(VALID, DUE_MS + 60_000),
      locale: "zh",
      t: tr("zh"),
      document: fakeDocument,
    });
    const [header, p, footer] = row.children;
    assert.equal(header.textContent, "定时提醒 仅在当前会话中交付");
    assert.equal(p.textContent, "Check the deployment log");
    const recordedIso = new Date(DUE_MS + 60_000).toISOString();
    assert.equal(
      footer.textContent,
      `编号 schedule-1 · 触发时间 ${DUE} · 记录时间 ${recordedIso}`,
    );
  });

  test("the default export registers schedule/change; the locale comes from the argument", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const unregister = register(registry);
    assert.equal(registry.has("schedule/change"), true);
    const zh = registry.render(presented(VALID), { locale: "zh" });
    assert.equal(zh.tagName, "SECTION");
    assert.equal(zh.children[0].textContent, "定时提醒 仅在当前会话中交付");
    const en = registry.render(presented(VALID), { locale: "en" });
    assert.equal(en.children[0].textContent, "Scheduled reminder Delivered in this session only");
    unregister();
    assert.equal(registry.has("schedule/change"), false);
  });
});
