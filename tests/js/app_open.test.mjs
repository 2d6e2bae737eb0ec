// app.js and opening a Session (issue 25 items 4 and 6): no developer words on a person's
// screen. Opening a Session the host has not loaded (cold) resumes it, with no banner and no
// Resume button; Flush is not offered (see app_debug.test.mjs); Fork reads "Branch" with its
// one-line explanation; the id sits in a Details disclosure; the keyboard lands in the message
// box after opening a Session (from the list, or a new branch).

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const message = (seq, text) => ({ seq, type: "user/message", time: 1_000 + seq, data: { text } });

test("opening a cold Session resumes it, and the page shows no developer words", async () => {
  let sessions = [
    { id: "warm", live: true, createdAt: 2_000, name: "water the plants" },
    { id: "chilly", live: false, createdAt: 1_000, name: "call mom" },
    { id: "broken", live: false, createdAt: 500, damaged: true, error: "bad header" },
    { id: "stuck", live: false, createdAt: 400 },
  ];
  const app = await bootApp({
    initial: "warm",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions };
      if (method === "GET" && path.endsWith("/history")) {
        return { entries: [{ event: message(0, "hello") }], hasMore: false };
      }
      if (method === "GET" && path.endsWith("/views")) return { views: {}, throughSeq: 0 };
      if (method === "POST" && path === "/api/sessions/chilly/resume") {
        sessions = sessions.map((s) => (s.id === "chilly" ? { ...s, live: true } : s));
        return { id: "chilly", live: true };
      }
      if (method === "POST" && path === "/api/sessions/stuck/resume") {
        const error = { code: "storage_unavailable", message: "storage did not answer" };
        return new Response(JSON.stringify({ error }), { status: 503 });
      }
      if (method === "POST" && path === "/api/sessions/warm/fork") {
        sessions = [...sessions, { id: "twig", live: true, createdAt: 3_000, parentSession: "warm" }];
        return { id: "twig", header: {} };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const resumes = () => app.calls.filter((c) => c.path.endsWith("/resume")).map((c) => c.path);
  await until(() => app.transcript().length === 1, "the open session");
  assert.deepEqual(resumes(), [], "a live Session is not resumed");

  // The toolbar: Branch with its explanation, no Flush, the id only inside Details.
  const fork = app.$("fork");
  assert.equal(fork.textContent, "Branch");
  const hint = "Start a new conversation from here; reminders stay in this one";
  assert.equal(fork.getAttribute("title"), hint);
  const described = app.document.getElementById(fork.getAttribute("aria-describedby"));
  assert.equal(described.textContent, hint);
  assert.equal(app.$("flush").hidden, true);
  assert.equal(app.$("resume"), null);
  assert.equal(app.$("session-note"), null);
  const details = app.$("session-details");
  assert.equal(details.hidden, false);
  assert.equal(details.querySelector("summary").textContent, "Details");
  assert.equal(app.$("session-id").textContent, "warm");
  assert.ok(details.contains(app.$("session-id")));
  assert.equal(app.$("session-name").textContent, "water the plants");

  // Clicking a cold row opens it, resumes it and puts the keyboard in the message box.
  const row = (id) =>
    app.$("session-list").querySelector(`li[data-session-id="${id}"]`).querySelector("button");
  app.document.activeElement = null;
  row("chilly").click();
  await until(() => resumes().length === 1, "the resume");
  assert.deepEqual(resumes(), ["/api/sessions/chilly/resume"]);
  assert.equal(app.document.activeElement, app.$("composer"));
  await until(() => app.$("session-list").querySelector('li[data-session-id="chilly"]')
    ?.getAttribute("data-live") === "true", "the list after the resume");
  assert.equal(app.$("status").textContent, "");

  // A damaged Session cannot be resumed: opening it asks nothing.
  row("broken").click();
  await until(() => app.$("session-id").textContent === "broken", "the damaged session");
  assert.deepEqual(resumes(), ["/api/sessions/chilly/resume"]);

  // A resume that fails says so in the status line (the history stays readable).
  row("stuck").click();
  await until(() => app.$("status").classList.contains("is-error"), "the resume's failure");
  assert.deepEqual(resumes(), ["/api/sessions/chilly/resume", "/api/sessions/stuck/resume"]);
  assert.match(app.$("status").textContent, /^Error: /);

  // Branching opens the branch with the keyboard in its message box and a plain notice.
  row("warm").click();
  await until(() => app.$("session-id").textContent === "warm", "back to warm");
  await until(() => fork.disabled === false, "Branch enabled");
  app.document.activeElement = null;
  fork.click();
  await until(() => app.$("session-id").textContent === "twig", "the branch");
  assert.equal(app.document.activeElement, app.$("composer"));
  assert.equal(
    app.$("status").textContent,
    "Branched: a new conversation from here. Reminders stay in the one you left.",
  );
  const branch = app.$("session-list").querySelector('li[data-session-id="twig"]');
  assert.ok(branch.textContent.includes("branch of water the plants"));
  assert.ok(!branch.textContent.includes("Untitled session twig"));
});
