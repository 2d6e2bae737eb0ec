// app.js: deleting a Session (issue 25 item 3). Its Details offer "Delete session"; a dialog
// names the Session and the pending reminders that go with it (worded by the Schedule through
// the registry). Cancel and Escape keep it and give the keyboard back to the button; a failure
// stays in the dialog; confirming deletes it, returns to the start page without it (its branch
// stays) and says so. A first visit asks nothing about being away.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const MARKUP = '<img src=x onerror="alert(1)">';

test("Delete session: the confirmation, Cancel, Escape, a failure, then the delete", async () => {
  let sessions = [
    { id: "s1", live: true, createdAt: 1_000, name: "Groceries", badges: { "schedule.reminders": 2 } },
    { id: "s2", live: true, createdAt: 2_000, parentSession: "s1", name: MARKUP },
  ];
  let failNext = true;
  const renderers = ["schedule-words", "reminders-panel", "all-reminders"].map((name) => ({
    url: new URL(`../../src/dsh_schedule_ui/static/${name}.js`, import.meta.url).href,
  }));
  const app = await bootApp({
    initial: "s1",
    renderers,
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions };
      if (method === "GET" && path === "/api/board") return { rows: [], next: null };
      if (method === "GET" && path.endsWith("/history")) return { entries: [], hasMore: false };
      if (method === "GET" && path.endsWith("/views")) {
        const badge = path.includes("/s1/") ? 2 : 0;
        return { views: { "schedule.reminders": { badge, active: [], recent: [] } }, throughSeq: 0 };
      }
      if (method === "DELETE" && path === "/api/sessions/s1") {
        if (failNext) {
          failNext = false;
          const error = { code: "storage_unavailable", message: "storage did not answer" };
          return new Response(JSON.stringify({ error }), { status: 503 });
        }
        sessions = sessions.filter((s) => s.id !== "s1");
        return { deleted: true };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  await until(() => app.$("session-details").hidden === false, "the open session");
  const button = app.$("delete-session");
  const dialog = app.$("delete-dialog");
  const deletes = () => app.calls.filter((c) => c.method === "DELETE");
  assert.equal(button.textContent, "Delete session");
  assert.ok(app.$("session-details").contains(button), "in the Session's Details");
  assert.equal(dialog.open, false);

  // The dialog names the Session and what goes with it; the keyboard starts on Cancel.
  button.click();
  assert.equal(dialog.open, true);
  assert.equal(
    app.$("delete-text").textContent,
    "Delete “Groceries”? Its 2 pending reminders will be deleted too.",
  );
  assert.equal(app.$("delete-cancel").textContent, "Cancel");
  assert.equal(app.$("delete-confirm").textContent, "Delete");
  assert.equal(app.document.activeElement, app.$("delete-cancel"));
  app.$("delete-cancel").click();
  assert.equal(dialog.open, false);
  assert.equal(app.document.activeElement, button);
  assert.deepEqual(deletes(), []);

  // Escape (the dialog's cancel event) keeps it too.
  button.click();
  let prevented = false;
  dialog.dispatch("cancel", { preventDefault: () => (prevented = true) });
  assert.ok(prevented);
  assert.equal(dialog.open, false);
  assert.equal(app.document.activeElement, button);
  assert.deepEqual(deletes(), []);

  // A failed delete says so in the dialog and keeps everything.
  button.click();
  app.$("delete-confirm").click();
  assert.equal(app.$("delete-confirm").textContent, "Deleting…");
  await until(() => app.$("delete-error").hidden === false, "the failure");
  assert.match(app.$("delete-error").textContent, /^Could not delete: Storage is not answering/);
  assert.equal(dialog.open, true);
  assert.equal(app.$("delete-confirm").textContent, "Delete");
  assert.equal(app.$("session-id").textContent, "s1");

  // Confirming deletes it: the start page, without it in the list; its branch stays.
  app.$("delete-confirm").click();
  await until(() => dialog.open === false, "the dialog closed");
  assert.deepEqual(deletes().map((c) => c.path), ["/api/sessions/s1", "/api/sessions/s1"]);
  await until(() => app.$("session-list").querySelector('li[data-session-id="s1"]') === null, "the list");
  assert.notEqual(app.$("session-list").querySelector('li[data-session-id="s2"]'), null);
  assert.equal(app.$("session-details").hidden, true);
  assert.equal(app.$("empty-state").hidden, false);
  assert.equal(app.location.searchParams.get("session"), null);
  assert.equal(app.$("status").textContent, "Deleted “Groceries”.");
  assert.equal(app.document.activeElement, app.$("empty-title"));

  // In Chinese, for a Session with no pending reminders: the name as text, nothing more.
  app.$("session-list").querySelector('li[data-session-id="s2"]').querySelector("button").click();
  await until(() => app.$("session-id").textContent === "s2", "the branch");
  app.document.querySelector('button[data-locale="zh"]').click();
  await until(() => app.$("delete-session").textContent === "删除会话", "Chinese");
  app.$("delete-session").click();
  assert.equal(app.$("delete-text").textContent, `删除“${MARKUP}”？`);
  assert.equal(app.$("delete-text").querySelectorAll("img").length, 0);
  assert.equal(app.$("delete-cancel").textContent, "取消");
  assert.equal(app.$("delete-confirm").textContent, "删除");
  app.$("delete-cancel").click();

  // A first visit (no last-seen instant): nothing about being away was asked.
  assert.deepEqual(app.calls.filter((c) => c.path === "/api/board/count"), []);
});
