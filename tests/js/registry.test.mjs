// RendererRegistry: keyed dispatch and the JSON fallback, with a tiny stand-in document.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { registerMessages, t } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry, renderFallback } from "../../src/dsh_host/web/static/registry.js";
import { fakeDocument } from "./fake-dom.mjs";

// ------------------------------------------------------------------ tests

const node = (eventType, view = { a: 1 }) => ({
  kind: "presented-event",
  seq: 4,
  time: 1000,
  eventType,
  event: { seq: 4, type: eventType, time: 1000, data: {} },
  view,
});

describe("RendererRegistry", () => {
  test("keyed dispatch passes node, locale and document", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const seen = [];
    registry.register("schedule/change", (ctx) => {
      seen.push(ctx);
      const el = ctx.document.createElement("section");
      el.textContent = `${ctx.locale}:${ctx.node.seq}`;
      return el;
    });
    const out = registry.render(node("schedule/change"), { locale: "zh" });
    assert.equal(out.tagName, "SECTION");
    assert.equal(out.textContent, "zh:4");
    assert.equal(seen.length, 1);
    assert.equal(seen[0].document, fakeDocument);
    assert.equal(seen[0].node.eventType, "schedule/change");
  });

  test("an unknown type gets the expandable JSON fallback (en / zh)", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const view = { html: "<img src=x onerror=alert(1)>", n: [1, true, null] };
    const en = registry.render(node("other/type", view), { locale: "en" });
    assert.equal(en.tagName, "DETAILS");
    const [summary, pre] = en.children;
    assert.equal(summary.tagName, "SUMMARY");
    assert.equal(summary.textContent, "Event: other/type");
    assert.equal(pre.tagName, "PRE");
    assert.equal(pre.textContent, JSON.stringify(view, null, 2));
    assert.equal(pre.childNodes[0].nodeType, 3, "the JSON is one inert text node");
    const zh = registry.render(node("other/type", view), { locale: "zh" });
    assert.equal(zh.children[0].textContent, "事件：other/type");
  });

  test("a throwing renderer falls back and warns", () => {
    const warnings = [];
    const registry = new RendererRegistry({
      document: fakeDocument,
      warn: (...args) => warnings.push(args),
    });
    registry.register("schedule/change", () => {
      throw new Error("broken renderer");
    });
    registry.register("returns/nothing", () => undefined);
    const out = registry.render(node("schedule/change"), { locale: "en" });
    assert.equal(out.tagName, "DETAILS");
    assert.equal(out.children[0].textContent, "Event: schedule/change");
    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0][1]), /broken renderer/);
    assert.equal(registry.render(node("returns/nothing")).tagName, "DETAILS");
    assert.equal(warnings.length, 2);
  });

  test("duplicate keys throw; unregister frees the key and is idempotent", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const first = () => fakeDocument.createElement("p");
    const unregister = registry.register("schedule/change", first);
    assert.throws(() => registry.register("schedule/change", first), /already registered/);
    unregister();
    assert.equal(registry.has("schedule/change"), false);
    const second = () => fakeDocument.createElement("aside");
    registry.register("schedule/change", second);
    unregister(); // a stale unregister must not remove the newer renderer
    assert.equal(registry.has("schedule/change"), true);
    assert.equal(registry.render(node("schedule/change")).tagName, "ASIDE");
    assert.throws(() => registry.register("", first), TypeError);
    assert.throws(() => registry.register("x", "not a function"), TypeError);
  });

  test("renderFallback shows null for an absent view", () => {
    const absent = { ...node("x"), view: undefined };
    const out = renderFallback(absent, { locale: "en", document: fakeDocument });
    assert.equal(out.children[1].textContent, "null");
    assert.equal(out.getAttribute("data-event-type"), "x");
  });
});

describe("locale namespaces", () => {
  const tables = {
    en: { greeting: "Hello {name}", only: "English only" },
    zh: { greeting: "你好 {name}" },
  };

  test("registered keys translate per locale, falling back to English, then to the key", () => {
    const unregister = registerMessages("demo", tables);
    try {
      assert.equal(t("demo.greeting", { name: "A" }, "en"), "Hello A");
      assert.equal(t("demo.greeting", { name: "A" }, "zh"), "你好 A");
      assert.equal(t("demo.greeting", { name: "A" }, "zh-CN"), "你好 A");
      assert.equal(t("demo.only", {}, "zh"), "English only");
      assert.equal(t("demo.missing", {}, "zh"), "demo.missing");
      assert.equal(t("event.title", { type: "x" }, "zh"), "事件：x", "host keys are unaffected");
    } finally {
      unregister();
    }
    assert.equal(t("demo.greeting", {}, "en"), "demo.greeting");
  });

  test("the newest registration wins; removing it uncovers the previous one", () => {
    const first = registerMessages("stacked", { en: { a: "first" } });
    const second = registerMessages("stacked", { en: { a: "second" } });
    assert.equal(t("stacked.a", {}, "en"), "second");
    second();
    assert.equal(t("stacked.a", {}, "en"), "first");
    second(); // idempotent
    first();
    assert.equal(t("stacked.a", {}, "en"), "stacked.a");
  });

  test("host namespaces and malformed registrations are refused", () => {
    assert.throws(() => registerMessages("status", tables), /belongs to the host/);
    assert.throws(() => registerMessages("a.b", tables), TypeError);
    assert.throws(() => registerMessages("", tables), TypeError);
    assert.throws(() => registerMessages("demo", { zh: {} }), TypeError);
  });

  test("renderers get a locale-bound t that reads registered namespaces", () => {
    const registry = new RendererRegistry({ document: fakeDocument });
    const unregister = registry.registerMessages("demo", tables);
    registry.register("demo/event", ({ t: translate, locale, document: doc }) => {
      const el = doc.createElement("p");
      el.textContent = `${locale}|${translate("demo.greeting", { name: "B" })}`;
      return el;
    });
    try {
      const zh = registry.render(node("demo/event"), { locale: "zh-CN" });
      assert.equal(zh.textContent, "zh|你好 B");
      const en = registry.render(node("demo/event"), { locale: "en" });
      assert.equal(en.textContent, "en|Hello B");
    } finally {
      unregister();
    }
  });
});

describe("tool summaries, follow-up lines and panels", () => {
  test("a summary is the plugin's string; null, a non-string or a throw fall back", () => {
    const warnings = [];
    const registry = new RendererRegistry({ warn: (...args) => warnings.push(args) });
    const drop = registry.registerToolSummary("t1", ({ value }) => `done ${value}`);
    registry.registerToolSummary("t2", () => null);
    registry.registerToolSummary("t3", () => {
      throw new Error("boom");
    });
    registry.registerToolSummary("t4", () => 5);
    assert.equal(registry.toolSummary({ name: "t1", value: 1 }), "done 1");
    assert.equal(registry.toolSummary({ name: "t2" }), null);
    assert.equal(registry.toolSummary({ name: "t3" }), null);
    assert.equal(registry.toolSummary({ name: "t4" }), null);
    assert.equal(registry.toolSummary({ name: "unknown" }), null);
    assert.equal(warnings.length, 1);
    assert.throws(() => registry.registerToolSummary("t1", () => ""), /already registered/);
    assert.throws(() => registry.registerToolSummary("", () => ""), TypeError);
    assert.throws(() => registry.registerToolSummary("t9", "x"), TypeError);
    drop();
    assert.equal(registry.toolSummary({ name: "t1", value: 1 }), null);
  });

  test("a follow-up line is keyed by the plugin that queued it", () => {
    const registry = new RendererRegistry();
    const drop = registry.registerFollowupSummary("p", ({ text }) => `line for ${text}`);
    assert.equal(registry.followupSummary({ text: "x", source: { plugin: "p" } }), "line for x");
    assert.equal(registry.followupSummary({ text: "x", source: { plugin: "q" } }), null);
    assert.equal(registry.followupSummary({ text: "x" }), null);
    drop();
    assert.equal(registry.followupSummary({ text: "x", source: { plugin: "p" } }), null);
    assert.throws(() => registry.registerFollowupSummary("p", null), TypeError);
  });

  test("panels are listed in registration order and tell listeners when they change", () => {
    const registry = new RendererRegistry();
    let changes = 0;
    const stop = registry.onPanelsChange(() => {
      changes += 1;
    });
    const panel = { title: () => "A", render: () => null };
    const dropA = registry.registerPanel("a.view", panel);
    registry.registerPanel("b.view", { title: () => "B", render: () => null });
    assert.deepEqual(
      registry.panels().map(([name]) => name),
      ["a.view", "b.view"],
    );
    assert.equal(changes, 2);
    assert.throws(() => registry.registerPanel("a.view", panel), /already registered/);
    assert.throws(() => registry.registerPanel("c.view", { title: () => "C" }), TypeError);
    assert.throws(() => registry.registerPanel("c.view", { render: () => null }), TypeError);
    dropA();
    assert.deepEqual(
      registry.panels().map(([name]) => name),
      ["b.view"],
    );
    assert.equal(changes, 3);
    stop();
    registry.registerPanel("d.view", panel);
    assert.equal(changes, 3);
  });
});
