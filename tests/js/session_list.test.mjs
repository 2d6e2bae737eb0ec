// app.js session list: a stored Session the host could not decode is shown as damaged, as
// text, beside the others (issue 9 item 6); the others show no developer words (issue 25).

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
  // The healthy rows carry no badge: loaded or not (live or cold) is never shown (issue 25 item
  // 4), and an unnamed Session is "Untitled session", never its id.
  assert.equal(first.getAttribute("data-damaged"), null);
  assert.equal(byClass(first, "badge"), null);
  assert.equal(byClass(third, "badge"), null);
  assert.equal(byClass(first, "session-damage"), null);
  assert.equal(byClass(first, "session-name").textContent, "Untitled session");
  for (const word of ["live", "cold", "s1", "s3"]) {
    assert.ok(!list.textContent.includes(word), `the list shows "${word}"`);
  }
});
