// streaming.js: the draft of the message in progress, the browser's zone and the message body.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  browserTimeZone,
  DRAFT_ENDS,
  messageBody,
  sendWithZone,
  StreamingDraft,
} from "../../src/dsh_host/web/static/streaming.js";

const piece = (messageId, text) => ({ type: "assistant/stream", messageId, text });

test("pieces of one message accumulate; another message starts a new draft", () => {
  const draft = new StreamingDraft();
  assert.equal(draft.current, null);
  assert.equal(draft.piece(piece("m1", "Hel")), true);
  assert.equal(draft.piece(piece("m1", "lo")), true);
  assert.deepEqual(draft.current, { messageId: "m1", text: "Hello" });
  assert.equal(draft.piece(piece("m2", "Bye")), true);
  assert.deepEqual(draft.current, { messageId: "m2", text: "Bye" });
});

test("malformed or empty pieces change nothing", () => {
  const draft = new StreamingDraft();
  draft.piece(piece("m1", "a"));
  for (const bad of [
    null,
    "text",
    [],
    piece("m1", ""),
    piece("m1", 5),
    piece(7, "x"),
    { type: "assistant/message", messageId: "m1", text: "x" },
  ]) {
    assert.equal(draft.piece(bad), false);
  }
  assert.deepEqual(draft.current, { messageId: "m1", text: "a" });
});

test("the durable message, a turn's start or end removes the draft; other events do not", () => {
  assert.deepEqual([...DRAFT_ENDS], ["assistant/message", "turn/start", "turn/end"]);
  const draft = new StreamingDraft();
  assert.equal(draft.event({ type: "turn/end" }), false, "no draft: nothing to remove");
  for (const type of DRAFT_ENDS) {
    draft.piece(piece("m1", "a"));
    assert.equal(draft.event({ type: "tool/call" }), false);
    assert.equal(draft.event(null), false);
    assert.notEqual(draft.current, null);
    assert.equal(draft.event({ type }), true);
    assert.equal(draft.current, null);
  }
  draft.piece(piece("m1", "a"));
  assert.equal(draft.clear(), true);
  assert.equal(draft.clear(), false);
});

test("the browser's zone comes from Intl, and is null when Intl has none", () => {
  const intl = (timeZone) => ({ DateTimeFormat: () => ({ resolvedOptions: () => ({ timeZone }) }) });
  assert.equal(browserTimeZone(intl("Asia/Shanghai")), "Asia/Shanghai");
  assert.equal(browserTimeZone(intl("")), null);
  assert.equal(browserTimeZone(intl(undefined)), null);
  assert.equal(browserTimeZone(null), null);
  const broken = {
    DateTimeFormat: () => {
      throw new RangeError("no");
    },
  };
  assert.equal(browserTimeZone(broken), null);
  assert.equal(browserTimeZone(), Intl.DateTimeFormat().resolvedOptions().timeZone || null);
});

test("the body carries timeZone only when there is one", () => {
  assert.deepEqual(messageBody("hi", "Europe/Berlin"), { text: "hi", timeZone: "Europe/Berlin" });
  assert.deepEqual(messageBody("hi", null), { text: "hi" });
  assert.deepEqual(messageBody("hi", ""), { text: "hi" });
});

test("a zone the host refuses is dropped and the message sent once more; nothing else is", async () => {
  const refused = Object.assign(new Error("bad zone"), { code: "invalid_time_zone" });
  const bodies = [];
  const post = async (body) => {
    bodies.push(body);
    if (body.timeZone) throw refused;
    return { accepted: true };
  };
  assert.deepEqual(await sendWithZone(post, "hi", "Etc/Unknown"), { accepted: true });
  assert.deepEqual(bodies, [{ text: "hi", timeZone: "Etc/Unknown" }, { text: "hi" }]);

  // Without a zone there is nothing to drop; other errors are the caller's.
  bodies.length = 0;
  const failing = async (body) => {
    bodies.push(body);
    throw body.timeZone ? Object.assign(new Error("x"), { code: "session_not_found" }) : refused;
  };
  await assert.rejects(sendWithZone(failing, "hi", null), refused);
  await assert.rejects(sendWithZone(failing, "hi", "UTC"), { code: "session_not_found" });
  assert.deepEqual(bodies, [{ text: "hi" }, { text: "hi", timeZone: "UTC" }]);
});
