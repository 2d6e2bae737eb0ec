// Issue 25 item 5: a cancel names the reminder it cancelled and offers Undo for a few seconds;
// Undo re-creates it with the same text and time through the user-action route.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { describeError } from "../../src/dsh_host/web/static/errors.js";
import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { createTime } from "../../src/dsh_host/web/static/time.js";
import { messages, NAMESPACE } from "../../src/dsh_schedule_ui/static/schedule-words.js";
import {
  offerUndo,
  summarizeDelete,
  UNDO_MIN_LEFT_MS,
  UNDO_MS,
} from "../../src/dsh_schedule_ui/static/tool-summaries.js";
import { bootApp, until } from "./fake-browser.mjs";

registerMessages(NAMESPACE, messages);
const NOW = Date.now();
const iso = (ms) => new Date(ms).toISOString();

function createEvent(id, kind, prompt, scheduledAt) {
  const schedule = { id, kind, prompt, scheduledAt };
  if (kind === "after") schedule.afterSeconds = 3600;
  if (kind === "every") schedule.everySeconds = 3600;
  return { type: "schedule/change", data: { version: 1, operation: "create", schedule } };
}

function input(locale, { kind = "after", dueIn = 3_600_000, cancelledAgo = 1_000, found = true } = {}) {
  const event = createEvent("schedule-1", kind, "stretch", iso(NOW + dueIn));
  return {
    name: "schedule_delete",
    arguments: { id: "schedule-1" },
    value: { id: "schedule-1", deleted: true },
    pending: false,
    isError: false,
    locale,
    t: (key, params) => t(key, params, locale),
    time: createTime({ now: () => NOW, locale }),
    errorText: (value) => describeError(value, locale).text,
    findEvent: (predicate) => (found && predicate(event) ? event : null),
    resultTime: NOW - cancelledAgo,
    now: NOW,
  };
}

describe("the cancel line and its Undo", () => {
  test("names the reminder in both languages; plain when its history is not loaded", () => {
    assert.equal(summarizeDelete(input("en")), "Reminder cancelled: stretch");
    assert.equal(summarizeDelete(input("zh")), "已取消提醒：stretch");
    assert.equal(summarizeDelete(input("en", { found: false })), "Reminder cancelled");
    assert.equal(summarizeDelete({ ...input("en"), findEvent: undefined }), "Reminder cancelled");
  });

  test("Undo re-creates the same text at the same instant, for a few seconds", () => {
    const offer = offerUndo(input("zh"));
    assert.deepEqual(offer, {
      label: "撤销",
      description: "撤销取消提醒：stretch",
      until: NOW - 1_000 + UNDO_MS,
      tool: "schedule_create",
      arguments: { prompt: "stretch", at: iso(NOW + 3_600_000) },
    });
    assert.equal(offerUndo(input("en", { kind: "at" })).label, "Undo");
  });

  test("no Undo when it cannot be rebuilt exactly or comes too late", () => {
    assert.equal(offerUndo(input("en", { kind: "every" })), null);
    assert.equal(offerUndo(input("en", { dueIn: UNDO_MS + UNDO_MIN_LEFT_MS - 2_000 })), null);
    assert.equal(offerUndo(input("en", { found: false })), null);
    assert.equal(offerUndo({ ...input("en"), value: { deleted: false } }), null);
    assert.equal(offerUndo({ ...input("en"), resultTime: undefined }), null);
  });

  test("the registry checks what a tool action offers", () => {
    const warnings = [];
    const registry = new RendererRegistry({ warn: (...args) => warnings.push(args) });
    const drop = registry.registerToolAction("x", (i) => i.offer);
    assert.equal(registry.toolAction({ name: "y" }), null);
    assert.equal(registry.toolAction({ name: "x", offer: null }), null);
    assert.equal(registry.toolAction({ name: "x", offer: { label: "Undo" } }), null);
    assert.equal(warnings.length, 1);
    const good = { label: "Undo", until: 1, tool: "t", arguments: {} };
    assert.equal(registry.toolAction({ name: "x", offer: good }), good);
    assert.throws(() => registry.registerToolAction("x", "nope"), TypeError);
    drop();
    assert.equal(registry.toolAction({ name: "x", offer: good }), null);
  });
});

// ---------------------------------------------------------------- the page

let seq = 0;
const ev = (type, data, time = NOW) => ({ event: { seq: seq++, type, time, data } });

function cancelled(callId, id, prompt, dueIn, cancelledAgo = 1_000) {
  const at = NOW - cancelledAgo;
  return [
    { event: { ...createEvent(id, "after", prompt, iso(NOW + dueIn)), seq: seq++, time: NOW - 60_000 } },
    ev("tool/call", { callId, name: "schedule_delete", arguments: { id }, source: { kind: "user" } }, at),
    ev("schedule/change", { version: 1, operation: "delete", id }, at),
    ev("tool/result", { callId, name: "schedule_delete", value: { id, deleted: true } }, at),
  ];
}

test("the page: Undo posts schedule_create as the user's action and says how it went", async () => {
  const renderers = ["schedule-words", "tool-summaries"].map((name) => ({
    url: new URL(`../../src/dsh_schedule_ui/static/${name}.js`, import.meta.url).href,
  }));
  const entries = [
    ...cancelled("c1", "schedule-1", "stretch", 3_600_000),
    ...cancelled("c2", "schedule-2", "oven", 7_200_000),
    ...cancelled("c3", "schedule-3", "too late", 3_600_000, 60_000),
  ];
  const app = await bootApp({
    initial: "s1",
    renderers,
    route: ({ method, path, body }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") return { entries, hasMore: false };
      if (method === "GET" && path === "/api/sessions/s1/views") return { views: {}, throughSeq: 0 };
      if (method === "POST" && path === "/api/sessions/s1/tools/schedule_create") {
        if (body.arguments.prompt === "oven") return { value: { code: "not_future", message: "x" } };
        return { value: { id: "schedule-4", prompt: body.arguments.prompt } };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const rows = () => app.$("transcript").querySelectorAll('[data-kind="tool-result"]');
  await until(() => rows().length === 3, "the cancel rows");
  const texts = rows().map((row) => row.querySelector(".tool-text").textContent);
  assert.deepEqual(texts, [
    "You · Reminder cancelled: stretch",
    "You · Reminder cancelled: oven",
    "You · Reminder cancelled: too late",
  ]);
  const [first, second, old] = rows();
  assert.equal(old.querySelector("[data-tool-action]"), null); // its few seconds are over
  const undo = first.querySelector("[data-tool-action]");
  assert.equal(undo.textContent, "Undo");
  assert.equal(undo.getAttribute("aria-label"), "Undo cancelling the reminder: stretch");

  undo.click();
  await until(() => first.querySelector(".tool-action-note") !== null, "the first outcome");
  const posts = app.calls.filter((call) => call.method === "POST");
  assert.deepEqual(posts.map((call) => [call.path, call.body]), [
    ["/api/sessions/s1/tools/schedule_create", { arguments: { prompt: "stretch", at: iso(NOW + 3_600_000) } }],
  ]);
  assert.equal(first.querySelector(".tool-action-note").textContent, "Undone");
  assert.equal(first.querySelector("[data-tool-action]"), null);

  second.querySelector("[data-tool-action]").click();
  await until(() => second.querySelector(".tool-action-note") !== null, "the second outcome");
  assert.match(second.querySelector(".tool-action-note").textContent, /^Could not undo: /);
});
