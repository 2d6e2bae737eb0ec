// delete-session.js: the confirmation's sentence (the Session's name as given, each view badge in
// its plugin's words or the host's generic ones, sentences joined as each language joins them)
// and the badges it counts (the open Session's views first, else its list row's).

import assert from "node:assert/strict";
import { test } from "node:test";

import { deleteQuestion, sessionBadges } from "../../src/dsh_host/web/static/delete-session.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { fakeDocument } from "./fake-dom.mjs";

const registry = new RendererRegistry({ document: fakeDocument });
registry.registerPanel("b.notes", {
  title: () => "Notes",
  render: () => null,
  deleteNote: ({ count, t }) => (t("nav.home") === "首页" ? `它的 ${count} 条笔记也会删除。` : `Its ${count} notes go too.`),
});

test("the sentence names the Session and words each badge; a view without words is generic", () => {
  const badges = { "b.notes": 2, "a.other": 3 };
  assert.equal(
    deleteQuestion({ name: "Groceries <b>", badges, registry, locale: "en" }),
    "Delete “Groceries <b>”? Its 3 pending items will be deleted too. Its 2 notes go too.",
  );
  assert.equal(
    deleteQuestion({ name: "买菜", badges: { "b.notes": 1 }, registry, locale: "zh" }),
    "删除“买菜”？它的 1 条笔记也会删除。",
  );
  assert.equal(deleteQuestion({ name: "x", badges: {}, registry, locale: "en" }), "Delete “x”?");
});

test("the badges: the open views when given, else the list row's; only positive counts", () => {
  const row = { badges: { "b.notes": 2, "a.zero": 0, "a.bad": "3" } };
  assert.deepEqual(sessionBadges(row, null), { "b.notes": 2 });
  assert.deepEqual(sessionBadges(row, { "b.notes": { badge: 5 }, "a.none": null, "a.neg": { badge: -1 } }), {
    "b.notes": 5,
  });
  assert.deepEqual(sessionBadges(null, null), {});
  assert.deepEqual(sessionBadges({ badges: null }, undefined), {});
});
