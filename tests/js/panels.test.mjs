// panels.js (issue 25 item 6): the keyboard stays in a panel when the control it was on goes
// (a Cancel's row leaves: the next row's control, else the panel's heading; while the control is
// disabled, the heading holds the focus), and on a phone a panel is one summary line that opens
// on tap and stays open across rebuilds.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp } from "./fake-browser.mjs";

test("focus after a row goes, and the summary line", async () => {
  const app = await bootApp({
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions: [] };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const { renderPanels } = await import("../../src/dsh_host/web/static/panels.js");
  const { RendererRegistry } = await import("../../src/dsh_host/web/static/registry.js");
  const doc = app.document;
  const registry = new RendererRegistry({ document: doc });
  /** Rows `[{id, pending}]`: each a Cancel keyed `cancel:<id>`, disabled while pending. */
  registry.registerPanel("x.rows", {
    title: () => "Rows",
    summary: ({ view }) => `${view.rows.length} rows`,
    render({ view, document: d }) {
      const list = d.createElement("ul");
      for (const row of view.rows) {
        const item = d.createElement("li");
        const button = d.createElement("button");
        button.textContent = `Cancel ${row.id}`;
        button.setAttribute("data-focus-key", `cancel:${row.id}`);
        button.disabled = row.pending === true;
        item.appendChild(button);
        list.appendChild(item);
      }
      return list;
    },
  });
  registry.registerPanel("x.plain", { title: () => "Plain", render: () => null });
  let views = null;
  const render = () =>
    renderPanels({
      registry,
      session: { id: "s1", views: { views, throughSeq: 0 }, runTool: async () => null },
      rerender: render,
    });
  const show = (rows) => {
    views = { "x.rows": { rows }, "x.plain": {} };
    render();
  };
  const panel = (name) => app.$("panels").querySelector(`section[data-panel="${name}"]`);
  const cancel = (id) =>
    [...panel("x.rows").querySelectorAll("button")].find((b) => b.textContent === `Cancel ${id}`);
  const focused = () => doc.activeElement;

  show([{ id: "a" }, { id: "b" }, { id: "c" }]);
  const heading = () => panel("x.rows").querySelector("h2");
  assert.equal(heading().getAttribute("tabindex"), "-1");

  // Cancel b: while it runs its button is disabled and the heading holds the focus ...
  cancel("b").focus();
  show([{ id: "a" }, { id: "b", pending: true }, { id: "c" }]);
  assert.equal(focused(), heading());
  show([{ id: "a" }, { id: "b", pending: true }, { id: "c" }]); // any rebuild meanwhile
  assert.equal(focused(), heading());
  // ... and once its row is gone, the next row's Cancel has it.
  show([{ id: "a" }, { id: "c" }]);
  assert.equal(focused(), cancel("c"));
  // A Cancel that failed is enabled again: it gets the focus back.
  show([{ id: "a" }, { id: "c", pending: true }]);
  assert.equal(focused(), heading());
  show([{ id: "a" }, { id: "c" }]);
  assert.equal(focused(), cancel("c"));
  // The last row goes: no row after it, so the heading.
  show([{ id: "a" }]);
  assert.equal(focused(), heading());
  // The same control again when it stays.
  cancel("a").focus();
  show([{ id: "a" }]);
  assert.equal(focused(), cancel("a"));
  // None left: the heading.
  show([]);
  assert.equal(focused(), heading());
  // Focus elsewhere on the page is left alone by a rebuild.
  app.$("composer").focus();
  show([{ id: "d" }]);
  assert.equal(focused(), app.$("composer"));

  // The summary line: the panel's own summary, else its title; collapsed until tapped.
  const summary = (name) => panel(name).querySelector("button.panel-summary");
  assert.equal(summary("x.rows").textContent, "1 rows");
  assert.equal(summary("x.plain").textContent, "Plain");
  assert.ok(panel("x.rows").classList.contains("is-collapsed"));
  assert.equal(summary("x.rows").getAttribute("aria-expanded"), "false");
  const body = panel("x.rows").querySelector("div.panel-body");
  assert.equal(summary("x.rows").getAttribute("aria-controls"), body.id);
  summary("x.rows").focus();
  summary("x.rows").click();
  assert.ok(!panel("x.rows").classList.contains("is-collapsed"));
  assert.equal(summary("x.rows").getAttribute("aria-expanded"), "true");
  assert.equal(focused(), summary("x.rows"), "the tapped line keeps the focus");
  assert.ok(panel("x.plain").classList.contains("is-collapsed"), "each panel on its own");
  show([{ id: "d" }, { id: "e" }]); // a views update keeps it open
  assert.ok(!panel("x.rows").classList.contains("is-collapsed"));
  assert.equal(summary("x.rows").textContent, "2 rows");
  summary("x.rows").click();
  assert.ok(panel("x.rows").classList.contains("is-collapsed"));

  // A summary that throws falls back to the title; a node is shown as it is.
  const failing = new RendererRegistry({ document: doc });
  const warn = console.warn;
  console.warn = () => {};
  failing.registerPanel("x.rows", {
    title: () => "Rows",
    summary: () => {
      throw new Error("broken");
    },
    render: () => null,
  });
  failing.registerPanel("x.plain", {
    title: () => "Plain",
    summary: ({ document: d }) => {
      const span = d.createElement("span");
      span.textContent = "as a node";
      return span;
    },
    render: () => null,
  });
  renderPanels({
    registry: failing,
    session: { id: "s1", views: { views, throughSeq: 0 }, runTool: async () => null },
    rerender: () => {},
  });
  console.warn = warn;
  assert.equal(summary("x.rows").textContent, "Rows");
  assert.equal(summary("x.plain").querySelector("span").textContent, "as a node");
  assert.throws(
    () => registry.registerPanel("x.other", { title: () => "", render: () => null, summary: 3 }),
    TypeError,
  );
});
