// app.js and a running turn (issue 23 item 2): while a turn runs the composer offers Stop (a
// keyboard-reachable button named "Stop" / "停止"); clicking it POSTs .../turn/cancel; it goes
// at the turn's end; a `turn/end` with outcome "cancelled" is one quiet "Stopped" / "已停止" line
// (no error styling, no code) and the text that was streaming is dropped.

import assert from "node:assert/strict";
import { test } from "node:test";

import { deferred } from "./async-helpers.mjs";
import { bootApp, until } from "./fake-browser.mjs";

const at = (seq, type, data) => ({ seq, type, time: 1_000 + seq, data });
const piece = (messageId, text) => ({ type: "assistant/stream", messageId, text });

test("Stop shows while a turn runs, stops it, and the turn ends as one quiet line", async () => {
  let answer = deferred();
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") {
        return { entries: [{ event: at(0, "user/message", { text: "hi" }) }], hasMore: false };
      }
      if (method === "POST" && path === "/api/sessions/s1/turn/cancel") return answer.promise;
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const stop = app.$("stop");
  const drafts = app.$("drafts");
  const status = app.$("status");
  const cancels = () => app.calls.filter((c) => c.path === "/api/sessions/s1/turn/cancel");
  await until(() => app.transcript().length === 1, "the history");
  const stream = app.streams.get("s1")[0];

  // Nothing runs: no Stop.
  assert.equal(stop.hidden, true);
  // A button of its own in the composer, reachable by keyboard (not a submit, not tabindex -1).
  assert.equal(stop.tagName, "BUTTON");
  assert.equal(stop.getAttribute("type"), "button");
  assert.equal(stop.getAttribute("tabindex"), null);
  assert.equal(stop.parentNode, app.$("composer-form"));
  assert.equal(stop.textContent, "Stop");

  // A turn starts: Stop appears (and the text it streams is in progress).
  stream.send({ event: at(1, "turn/start", { messageId: "m1" }) }, "1");
  stream.send({ event: at(2, "user/message", { text: "tell me" }) }, "2");
  await until(() => stop.hidden === false, "Stop to appear at turn/start");
  assert.equal(stop.disabled, false);
  stream.sendStream(piece("m1", "half a sent"));
  await until(() => drafts.children.length === 1, "the streamed text");

  // Clicking it POSTs the cancel (no body); a second click while it is pending sends nothing.
  stop.click();
  assert.equal(cancels().length, 1);
  assert.equal(cancels()[0].method, "POST");
  assert.equal(cancels()[0].body, undefined);
  assert.equal(stop.disabled, true);
  stop.dispatch("click");
  assert.equal(cancels().length, 1);
  answer.resolve({ cancelled: true });
  await until(() => status.textContent.includes("Stopping…"), "the stopping note");
  assert.equal(stop.hidden, false);
  assert.equal(stop.disabled, true, "a Stop the host accepted is not offered again");

  // The turn ends cancelled: Stop goes (the keyboard stays in the composer), the streamed
  // text is dropped, and one quiet line says so.
  const focused = [];
  app.$("composer").focus = () => focused.push("composer");
  app.document.activeElement = stop;
  stream.send({ event: at(3, "turn/end", { outcome: "cancelled" }) }, "3");
  await until(() => stop.hidden === true, "Stop to go at turn/end");
  assert.deepEqual(focused, ["composer"]);
  app.document.activeElement = null;
  assert.equal(drafts.children.length, 0, "no half message");
  assert.deepEqual(app.transcript().at(-1), [3, "turn-cancelled"]);
  assert.ok(!app.transcript().some(([, kind]) => kind === "assistant"));
  const line = app.$("transcript").children.at(-1);
  assert.equal(line.textContent, "Stopped");
  assert.ok(!line.className.includes("error"), line.className);
  assert.equal(line.querySelector(".turn-error-text"), null);
  assert.ok(!status.textContent.includes("Stopping"));
  assert.ok(!status.classList.contains("is-error"));

  // In Chinese: the line and the button speak it too.
  app.document.querySelector('button[data-locale="zh"]').click();
  await until(() => app.$("transcript").children.at(-1).textContent === "已停止", "已停止");
  assert.equal(stop.textContent, "停止");

  // The next turn offers Stop again; a host that answers false (the turn had just ended)
  // leaves it offered and shows no error.
  answer = deferred();
  stream.send({ event: at(4, "turn/start", { messageId: "m2" }) }, "4");
  await until(() => stop.hidden === false && stop.disabled === false, "Stop for the next turn");
  stop.click();
  answer.resolve({ cancelled: false });
  await until(() => stop.disabled === false, "Stop to be offered again");
  assert.ok(!status.classList.contains("is-error"));
  assert.equal(cancels().length, 2);

  // A failed Stop is a plain-words notice, and the button can be pressed again.
  answer = deferred();
  stop.click();
  answer.resolve(
    new Response(JSON.stringify({ error: { code: "storage_unavailable", message: "x" } }), {
      status: 503,
      headers: { "content-type": "application/json" },
    }),
  );
  await until(() => status.classList.contains("is-error"), "the error notice");
  assert.match(status.textContent, /storage_unavailable/);
  assert.equal(stop.disabled, false);
  stream.send({ event: at(5, "turn/end", { outcome: "ok" }) }, "5");
  await until(() => stop.hidden === true, "Stop to go");

  // Text streaming with no open turn in view (its turn/start is not loaded) also offers Stop.
  stream.sendStream(piece("m3", "more"));
  await until(() => stop.hidden === false, "Stop while text streams");
  assert.equal(stop.textContent, "停止");
  stream.send({ event: at(6, "assistant/message", { text: "more." }) }, "6");
  await until(() => stop.hidden === true, "Stop to go with the draft");
});
