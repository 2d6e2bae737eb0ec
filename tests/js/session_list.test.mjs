// app.js session list: a stored Session the host could not decode is shown as damaged, as
// text, beside the others (issue 9 item 6).

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

/** The first descendant carrying this class, or null. */
const byClass = (root, name) =>
  [...root.descendants()].find((e) => e.classList.contains(name)) ?? null;

test("a damaged row is listed, marked and explained as text", async () => {
  const reason = 'the stored header is invalid: <img src=x onerror="alert(1)">';
  const sessions = [
    { id: "s1", live: false, createdAt: 1_000 },
    { id: "s2", live: false, createdAt: 2_000, damaged: true, error: reason },
    { id: "s3", live: true, createdAt: 3_000 },
  ];
  const app = await bootApp({
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const list = app.$("session-list");
  await until(() => list.children.length === 3, "the session list");
  const row = (id) => list.querySelector(`li[data-session-id="${id}"]`);
  const [first, damaged, third] = [row("s1"), row("s2"), row("s3")];
  assert.equal(damaged.getAttribute("data-damaged"), "true");
  assert.ok(damaged.classList.contains("is-damaged"));
  assert.equal(byClass(damaged, "badge").textContent, "damaged");
  assert.ok(byClass(damaged, "badge").classList.contains("badge-error"));
  // The reason is text, never markup.
  const error = byClass(damaged, "session-damage");
  assert.equal(error.textContent, reason);
  assert.equal(error.querySelectorAll("img").length, 0);
  // The healthy rows are unchanged.
  assert.equal(first.getAttribute("data-damaged"), null);
  assert.equal(byClass(first, "badge").textContent, "cold");
  assert.equal(byClass(third, "badge").textContent, "live");
  assert.equal(byClass(first, "session-damage"), null);
});
