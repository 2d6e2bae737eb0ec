// app.js and the stream: `event: stream` pieces form one in-progress assistant bubble (text
// only, aria-busy), the durable message replaces it, a failed turn's end removes it, and a
// reconnect drops it; a message is sent with the browser's zone.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const at = (seq, type, data) => ({ seq, type, time: 1_000 + seq, data });
const piece = (messageId, text) => ({ type: "assistant/stream", messageId, text });

test("pieces build one text-only busy bubble that the durable message replaces", async () => {
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") {
        return { entries: [{ event: at(0, "user/message", { text: "hi" }) }], hasMore: false };
      }
      if (method === "POST" && path === "/api/sessions/s1/messages") return { accepted: true };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const drafts = app.$("drafts");
  await until(() => app.transcript().length === 1, "the history");
  const stream = app.streams.get("s1")[0];
  stream.send({ event: at(1, "turn/start", { messageId: "m1" }) }, "1");
  stream.send({ event: at(2, "user/message", { text: "tell me" }) }, "2");
  await until(() => app.transcript().length === 2, "the turn's user message");

  // Markup in a piece is text: it is never parsed (the fake DOM throws on innerHTML).
  stream.sendStream(piece("m1", "<b>Hel"));
  await until(() => drafts.children.length === 1, "the in-progress bubble");
  const bubble = drafts.children[0];
  assert.equal(bubble.getAttribute("aria-busy"), "true");
  assert.equal(bubble.getAttribute("data-kind"), "assistant-draft");
  assert.equal(bubble.getAttribute("data-message-id"), "m1");
  const text = () => bubble.children.at(-1);
  assert.equal(text().textContent, "<b>Hel");
  assert.equal(text().children.length, 0, "the text makes no elements");

  stream.sendStream(piece("m1", "lo</b> world"));
  await until(() => text().textContent === "<b>Hello</b> world", "the second piece");
  assert.equal(drafts.children[0], bubble, "the same bubble grows");
  assert.equal(text().children.length, 0);
  // The transcript holds only durable events: no assistant node yet.
  assert.deepEqual(app.transcript(), [
    [0, "user"],
    [2, "user"],
  ]);

  // The durable message replaces the bubble: exactly one assistant text on the page.
  stream.send({ event: at(3, "assistant/message", { text: "<b>Hello</b> world!" }) }, "3");
  await until(() => drafts.children.length === 0, "the bubble to go");
  await until(() => app.transcript().length === 3, "the durable message");
  assert.deepEqual(app.transcript().at(-1), [3, "assistant"]);
  assert.match(app.$("transcript").children.at(-1).textContent, /<b>Hello<\/b> world!/);
  stream.send({ event: at(4, "turn/end", { outcome: "ok" }) }, "4");

  // A turn that fails after streaming: its end removes the bubble, the error shows.
  stream.send({ event: at(5, "turn/start", { messageId: "m2" }) }, "5");
  stream.sendStream(piece("m2", "half a"));
  await until(() => drafts.children.length === 1, "the second bubble");
  assert.equal(drafts.children[0].getAttribute("data-message-id"), "m2");
  assert.equal(drafts.children[0].children.at(-1).textContent, "half a");
  stream.send({ event: at(6, "turn/end", { outcome: "error", error: "model failed" }) }, "6");
  await until(() => drafts.children.length === 0, "the failed turn's bubble to go");
  await until(() => app.transcript().at(-1)?.[1] === "turn-error", "the turn error");

  // A reconnect drops a bubble: the rest of its pieces are never sent again.
  stream.send({ event: at(7, "turn/start", { messageId: "m3" }) }, "7");
  stream.sendStream(piece("m3", "cut "));
  await until(() => drafts.children.length === 1, "the third bubble");
  stream.end();
  app.$("composer").value = "again";
  app.$("composer-form").dispatch("submit"); // sending reconnects a stream that is down
  await until(() => app.streams.get("s1").length === 2, "the reconnect");
  await until(() => drafts.children.length === 0, "the bubble to be dropped on reconnect");

  // The message went with the browser's zone.
  const posts = app.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages"));
  assert.equal(posts.length, 1);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  assert.deepEqual(posts[0].body, zone ? { text: "again", timeZone: zone } : { text: "again" });
});
