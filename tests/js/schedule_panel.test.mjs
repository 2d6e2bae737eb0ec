// ui-schedule: the Reminders panel (its state from the view, the countdowns, Cancel through the
// user's tool call, failures kept across rebuilds, text-only rendering, both languages).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import {
  cancelOutcome,
  createCancels,
  DELETE_TOOL,
  panelState,
  VIEW_NAME,
} from "../../src/dsh_schedule_ui/static/panel-state.js";
import registerPanel, { panelSummary, renderPanel } from "../../src/dsh_schedule_ui/static/reminders-panel.js";
import { messages, NAMESPACE } from "../../src/dsh_schedule_ui/static/schedule-words.js";
import { fakeDocument } from "./fake-dom.mjs";

registerMessages(NAMESPACE, messages);
const tr = (locale) => (key, params) => t(key, params, locale);

const NOW = Date.parse("2026-12-03T17:00:00.000Z");
const at = (ms) => new Date(ms).toISOString();
const SECRET = "SECRET <img src=x onerror=alert(1)>";
const VIEW = {
  badge: 2,
  active: [
    { scheduleId: "s1", prompt: "Stretch", kind: "after", nextAt: at(NOW + 9 * 60_000) },
    {
      scheduleId: "s2",
      prompt: SECRET,
      kind: "every",
      nextAt: at(NOW + 3 * 3600_000),
      everySeconds: 1800,
    },
  ],
  recent: [
    {
      scheduleId: "s0",
      prompt: "Call mom",
      occurrenceAt: at(NOW - 600_000),
      deliveredAt: at(NOW - 480_000),
      lateMs: 120_000,
      lateReason: "offline",
    },
    {
      scheduleId: "s9",
      prompt: "Water",
      occurrenceAt: at(NOW - 900_000),
      deliveredAt: at(NOW - 899_000),
      lateMs: 1_000,
    },
  ],
};

function context({ view = VIEW, locale = "en", runTool, refreshViews, errorText } = {}) {
  return {
    view,
    sessionId: "abc",
    locale,
    t: tr(locale),
    time: createTime({ now: () => NOW, locale, timeZone: "Europe/Berlin" }),
    document: fakeDocument,
    errorText: errorText ?? ((error) => `plain words for ${error?.code}`),
    runTool: runTool ?? (async () => ({ id: "s1", deleted: true })),
    refreshViews: refreshViews ?? (() => {}),
  };
}

const all = (root, name) => [...root.descendants()].filter((e) => e.classList.contains(name));
const texts = (root, name) => all(root, name).map((e) => e.textContent);

describe("panel state", () => {
  test("keeps well-formed items in order and drops malformed ones", () => {
    const state = panelState({
      active: [
        VIEW.active[0],
        null,
        { scheduleId: "", prompt: "x", nextAt: at(NOW) },
        { scheduleId: "s3", prompt: 4, nextAt: at(NOW) },
        { scheduleId: "s4", prompt: "bad time", nextAt: "soon" },
        { scheduleId: "s5", prompt: "no kind", nextAt: at(NOW), everySeconds: -1 },
      ],
      recent: [
        VIEW.recent[0],
        "junk",
        { scheduleId: "r1", prompt: "x", occurrenceAt: at(NOW), deliveredAt: "never" },
        { scheduleId: "r2", prompt: "x", occurrenceAt: at(NOW), deliveredAt: at(NOW), lateReason: "?" },
      ],
    });
    assert.deepEqual(
      state.active.map((item) => [item.scheduleId, item.kind, item.everySeconds]),
      [
        ["s1", "after", undefined],
        ["s5", "after", undefined],
      ],
    );
    assert.deepEqual(
      state.recent.map((item) => [item.scheduleId, item.lateMs, item.lateReason]),
      [
        ["s0", 120_000, "offline"],
        ["r2", 0, null],
      ],
    );
  });

  test("a missing or broken view is an empty panel", () => {
    for (const view of [null, undefined, 3, "x", { active: "no", recent: {} }]) {
      assert.deepEqual(panelState(view), { active: [], recent: [] });
    }
  });

  test("a Cancel's answer: deleted or already gone ends it; a code is an error to show", () => {
    assert.equal(cancelOutcome({ id: "s1", deleted: true }), "gone");
    assert.equal(cancelOutcome({ deleted: false, code: "schedule_not_found" }), "gone");
    assert.deepEqual(cancelOutcome({ code: "persistence_uncertain" }), {
      error: { code: "persistence_uncertain" },
    });
    assert.deepEqual(cancelOutcome(undefined), { error: { code: "unknown" } });
    assert.deepEqual(cancelOutcome({ deleted: false }), { error: { code: "unknown" } });
  });
});

describe("rendering", () => {
  test("pending reminders show a live countdown and a labelled Cancel; recent show lateness", () => {
    const body = renderPanel(context(), createCancels(() => {}));
    assert.deepEqual(texts(body, "schedule-panel-heading"), ["Pending", "Recently delivered"]);
    assert.deepEqual(texts(body, "schedule-panel-prompt"), ["Stretch", SECRET, "Call mom", "Water"]);
    const [soon, later] = body.querySelectorAll("time[data-dsh-relative]");
    assert.equal(soon.textContent, "in 9 min");
    assert.equal(soon.getAttribute("datetime"), VIEW.active[0].nextAt);
    assert.match(soon.getAttribute("title"), /UTC/);
    assert.notEqual(later.textContent, "");
    assert.deepEqual(texts(body, "schedule-panel-every"), [" · every 30 min"]);
    const buttons = body.querySelectorAll("button.schedule-panel-cancel");
    assert.deepEqual(
      buttons.map((b) => [b.textContent, b.getAttribute("aria-label"), b.getAttribute("type")]),
      [
        ["Cancel", "Cancel reminder: Stretch", "button"],
        ["Cancel", `Cancel reminder: ${SECRET}`, "button"],
      ],
    );
    assert.deepEqual(
      buttons.map((b) => b.getAttribute("data-focus-key")),
      ["cancel:s1", "cancel:s2"],
    );
    assert.equal(texts(body, "schedule-panel-late")[0], " · 2 min late · the host was offline or the session was not open");
    assert.deepEqual(texts(body, "schedule-panel-ontime"), [" · on time"]);
    // Session text is only ever text: no element came from the prompt.
    assert.equal(body.querySelectorAll("img").length, 0);
  });

  test("empty lists say so, in English and in Chinese", () => {
    const en = renderPanel(context({ view: { active: [], recent: [] } }), createCancels(() => {}));
    assert.match(texts(en, "schedule-panel-empty")[0], /^No pending reminders/);
    assert.equal(texts(en, "schedule-panel-empty")[1], "Nothing delivered yet.");
    const zh = renderPanel(context({ view: VIEW, locale: "zh" }), createCancels(() => {}));
    assert.deepEqual(texts(zh, "schedule-panel-heading"), ["待办", "最近送达"]);
    assert.equal(zh.querySelectorAll("button.schedule-panel-cancel")[0].textContent, "取消");
    assert.equal(zh.querySelectorAll("button.schedule-panel-cancel")[0].getAttribute("aria-label"), "取消提醒：Stretch");
  });
});

describe("Cancel", () => {
  test("runs schedule_delete as the user's action, waits in 'Cancelling…', then asks for views", async () => {
    const calls = [];
    let answer;
    const replied = new Promise((resolve) => {
      answer = resolve;
    });
    let refreshed = 0;
    let rebuilds = 0;
    let ctx;
    const cancels = createCancels(() => {
      rebuilds += 1;
      body = renderPanel(ctx, cancels);
    });
    ctx = context({
      runTool: (name, args) => {
        calls.push([name, args]);
        return replied;
      },
      refreshViews: () => {
        refreshed += 1;
      },
    });
    let body = renderPanel(ctx, cancels);
    body.querySelectorAll("button.schedule-panel-cancel")[0].click();
    assert.deepEqual(calls, [[DELETE_TOOL, { id: "s1" }]]);
    const pending = body.querySelectorAll("button.schedule-panel-cancel")[0];
    assert.equal(pending.textContent, "Cancelling…");
    assert.equal(pending.disabled, true);
    pending.click(); // a second click while it runs does nothing
    assert.equal(calls.length, 1);
    answer({ id: "s1", deleted: true });
    await replied;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(refreshed, 1);
    assert.equal(rebuilds, 1); // only the one when it started: it stays "Cancelling…"
    assert.equal(body.querySelectorAll("button.schedule-panel-cancel")[0].textContent, "Cancelling…");
    // The views after the flush no longer have it: the row and its state are gone.
    ctx = { ...ctx, view: { ...VIEW, active: [VIEW.active[1]] } };
    body = renderPanel(ctx, cancels);
    assert.equal(cancels.size, 0);
    assert.deepEqual(texts(body, "schedule-panel-prompt").slice(0, 1), [SECRET]);
  });

  test("a refusal or a failed request is shown in plain words and survives a rebuild", async () => {
    for (const runTool of [
      async () => ({ code: "persistence_uncertain", message: "raw" }),
      async () => {
        throw Object.assign(new Error("down"), { code: "network" });
      },
    ]) {
      let ctx;
      let body;
      let settled;
      const done = new Promise((resolve) => {
        settled = resolve;
      });
      let rebuilds = 0;
      const cancels = createCancels(() => {
        body = renderPanel(ctx, cancels);
        rebuilds += 1;
        if (rebuilds === 2) settled();
      });
      ctx = context({ runTool });
      body = renderPanel(ctx, cancels);
      body.querySelectorAll("button.schedule-panel-cancel")[0].click();
      await done;
      const error = all(body, "schedule-panel-error");
      assert.equal(error.length, 1);
      assert.match(error[0].textContent, /^Could not cancel: plain words for (persistence_uncertain|network)$/);
      assert.equal(error[0].getAttribute("role"), "alert");
      const again = renderPanel(ctx, cancels); // the host rebuilt the panel (a views frame)
      assert.equal(all(again, "schedule-panel-error").length, 1);
      assert.equal(again.querySelectorAll("button.schedule-panel-cancel")[0].disabled, false); // it can be tried again
    }
  });
});

describe("the summary line a phone shows", () => {
  test("counts the pending reminders and names the soonest's time, live, in both languages", () => {
    // Fails before issue 25 item 6: the panel had no summary line.
    const line = panelSummary(context());
    assert.equal(line.textContent, "2 reminders · next in 9 min");
    const countdown = line.querySelector("time");
    assert.equal(countdown.getAttribute("datetime"), VIEW.active[0].nextAt);
    assert.ok(countdown.hasAttribute("data-dsh-relative"));
    assert.equal(panelSummary(context({ locale: "zh" })).textContent, "2 条提醒 · 下一条 9 分钟后");
    const later = { active: [VIEW.active[1], VIEW.active[0]] }; // soonest first, whatever the order
    assert.equal(panelSummary(context({ view: later })).textContent, "2 reminders · next in 9 min");
    const one = { active: [VIEW.active[1]] };
    assert.match(panelSummary(context({ view: one })).textContent, /^1 reminder · today 2[01]:00$/);
    assert.equal(panelSummary(context({ view: { active: [] } })).textContent, "No pending reminders");
    assert.equal(panelSummary(context({ view: null, locale: "zh" })).textContent, "没有待办提醒");
    // The text a Session supplies never reaches it: only counts and times.
    assert.ok(!panelSummary(context()).textContent.includes("SECRET"));
  });
});

describe("registration", () => {
  test("registers the Reminders panel titled in both languages and unregisters it", () => {
    const registry = new RendererRegistry();
    const drop = registerPanel(registry);
    const [[name, panel]] = registry.panels();
    assert.equal(name, VIEW_NAME);
    assert.equal(panel.title(tr("en")), "Reminders");
    assert.equal(panel.title(tr("zh")), "提醒");
    assert.equal(panel.summary, panelSummary);
    let rebuilt = 0;
    const ctx = { ...context(), rerender: () => (rebuilt += 1) };
    const body = panel.render(ctx);
    assert.equal(body.querySelectorAll("button.schedule-panel-cancel").length, 2);
    assert.equal(body.querySelectorAll("button.schedule-panel-edit").length, 2);
    drop();
    assert.deepEqual(registry.panels(), []);
  });

  test("a Cancel started from a registered panel rebuilds through the host's rerender", async () => {
    const registry = new RendererRegistry();
    registerPanel(registry);
    const [[, panel]] = registry.panels();
    let rebuilt = 0;
    const ctx = { ...context(), rerender: () => (rebuilt += 1) };
    panel.render(ctx).querySelectorAll("button.schedule-panel-cancel")[0].click();
    assert.equal(rebuilt, 1);
  });

  test("after unregistering, a settling Cancel rebuilds nothing", async () => {
    const registry = new RendererRegistry();
    const drop = registerPanel(registry);
    const [[, panel]] = registry.panels();
    let rebuilt = 0;
    let fail;
    const failed = new Promise((resolve) => {
      fail = resolve;
    });
    const ctx = { ...context({ runTool: () => failed }), rerender: () => (rebuilt += 1) };
    panel.render(ctx).querySelectorAll("button.schedule-panel-cancel")[0].click();
    assert.equal(rebuilt, 1);
    drop();
    fail({ code: "tool_failed" });
    await failed;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(rebuilt, 1);
  });
});
