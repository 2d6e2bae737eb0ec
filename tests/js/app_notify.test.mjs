// app.js and the edges a person meets (issue 25 item 6): notifications refused or blocked get
// one plain sentence (reminders show only in the open tab), in the page's language; the skip
// link puts the keyboard in the message box.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

test("refused notifications are said in plain words; the skip link reaches the message box", async () => {
  // A browser that has not asked yet; the person refuses when asked.
  class FakeNotification {
    static permission = "default";
    static async requestPermission() {
      FakeNotification.permission = "denied";
      return "denied";
    }
  }
  globalThis.Notification = FakeNotification;
  const app = await bootApp({
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") return { sessions: [] };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const enable = app.$("enable-notifications");
  const note = app.$("notify-note");
  assert.equal(enable.hidden, false);
  assert.equal(note.hidden, true);
  enable.click();
  await until(() => note.hidden === false, "the refused sentence");
  assert.equal(enable.hidden, true);
  assert.equal(note.textContent, "Notifications are off: reminders will show only in this open tab.");
  app.document.querySelector('button[data-locale="zh"]').click();
  assert.equal(note.textContent, "通知已关闭：提醒只会显示在这个打开的标签页里。");
  assert.equal(app.$("skip-link").textContent, "跳到输入框");
  app.document.querySelector('button[data-locale="en"]').click();

  // The skip link: first in the page, it focuses the message box and leaves the address alone.
  const skip = app.$("skip-link");
  assert.equal(app.document.body.children[0], skip);
  assert.equal(skip.textContent, "Skip to message box");
  assert.equal(skip.getAttribute("href"), "#composer");
  assert.equal(app.$("composer").getAttribute("id"), "composer");
  let prevented = false;
  skip.dispatch("click", { preventDefault: () => (prevented = true) });
  assert.equal(app.document.activeElement, app.$("composer"));
  assert.equal(prevented, true);
});
