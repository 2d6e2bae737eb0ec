// SSE over fetch: the incremental parser and the reconnecting reader.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { connectEvents, newerEventId, SSEParser } from "../../src/dsh_host/web/static/sse.js";
import { deferred, settle } from "./async-helpers.mjs";

const encoder = new TextEncoder();

function feedAll(chunks) {
  const parser = new SSEParser();
  const frames = [];
  for (const chunk of chunks) frames.push(...parser.feed(chunk));
  return { frames, parser };
}

// A stream exercising LF, CRLF and lone CR endings, comments, multi-line data, ids, named
// events, a field without a colon, an id-only block and multi-byte text.
const STREAM =
  ": keep-alive\n" +
  'id: 1\ndata: {"event":{"seq":1}}\n\n' +
  "id: 2\r\ndata: first line\r\ndata: second line\r\n\r\n" +
  "event: custom\rdata:no-space\r\r" +
  ": another comment\r\n" +
  "data\ndata: 中文 ✓\n\n" +
  "id: 7\n\n" +
  "data: after id-only block\n\n" +
  "retry: 2500\nevent: ignored-without-data\n\n";

const EXPECTED = [
  { id: "1", event: "message", data: '{"event":{"seq":1}}' },
  { id: "2", event: "message", data: "first line\nsecond line" },
  { id: "2", event: "custom", data: "no-space" },
  { id: "2", event: "message", data: "\n中文 ✓" },
  { id: "7", event: "message", data: "after id-only block" },
];

describe("SSEParser", () => {
  test("parses a whole stream", () => {
    const { frames, parser } = feedAll([STREAM]);
    assert.deepEqual(frames, EXPECTED);
    assert.equal(parser.comments, 2);
    assert.equal(parser.retry, 2500);
    assert.equal(parser.lastEventId, "7");
  });

  test("chunk boundaries anywhere (two and three pieces, every split point)", () => {
    for (let i = 0; i <= STREAM.length; i += 1) {
      assert.deepEqual(feedAll([STREAM.slice(0, i), STREAM.slice(i)]).frames, EXPECTED, `split ${i}`);
    }
    for (let i = 0; i <= STREAM.length; i += 7) {
      for (let j = i; j <= STREAM.length; j += 1) {
        const pieces = [STREAM.slice(0, i), STREAM.slice(i, j), STREAM.slice(j)];
        assert.deepEqual(feedAll(pieces).frames, EXPECTED, `split ${i}/${j}`);
      }
    }
    assert.deepEqual(feedAll([...STREAM]).frames, EXPECTED, "one character per chunk");
  });

  test("byte chunks split inside multi-byte UTF-8 characters", () => {
    const bytes = encoder.encode(STREAM);
    for (let i = 0; i <= bytes.length; i += 1) {
      const { frames } = feedAll([bytes.subarray(0, i), bytes.subarray(i)]);
      assert.deepEqual(frames, EXPECTED, `byte split ${i}`);
    }
    const single = [];
    for (const byte of bytes) single.push(Uint8Array.of(byte));
    assert.deepEqual(feedAll(single).frames, EXPECTED, "one byte per chunk");
  });

  test("a CRLF split across chunks is one line ending", () => {
    const { frames } = feedAll(["data: a\r", "\ndata: b\r", "\n\r", "\n"]);
    assert.deepEqual(frames, [{ id: "", event: "message", data: "a\nb" }]);
  });

  test("comments and keep-alives dispatch nothing", () => {
    const seen = [];
    const parser = new SSEParser({ onComment: (text) => seen.push(text) });
    assert.deepEqual(parser.feed(": keep-alive\n\n:\n\n"), []);
    assert.deepEqual(seen, [" keep-alive", ""]);
  });

  test("id tracking: persists across frames, NUL ignored, empty id resets", () => {
    const { frames } = feedAll([
      "id: 5\ndata: a\n\n",
      "data: b\n\n",
      "id: 6\u0000x\ndata: c\n\n",
      "id\ndata: d\n\n",
    ]);
    assert.deepEqual(
      frames.map((f) => [f.id, f.data]),
      [
        ["5", "a"],
        ["5", "b"],
        ["5", "c"],
        ["", "d"],
      ],
    );
  });

  test("a byte-order mark at the start is dropped; an unterminated frame is not dispatched", () => {
    const { frames } = feedAll(["\uFEFFdata: x\n\n", "data: incomplete\n"]);
    assert.deepEqual(frames, [{ id: "", event: "message", data: "x" }]);
  });

  test("newerEventId keeps the highest numeric id", () => {
    assert.equal(newerEventId(null, "3"), "3");
    assert.equal(newerEventId("5", "3"), "5");
    assert.equal(newerEventId("5", "12"), "12");
    assert.equal(newerEventId("5", ""), "5");
    assert.equal(newerEventId("a", "b"), "b");
  });
});

// ------------------------------------------------------------------ fake fetch



/** A body whose cancel() does NOT settle pending reads (a worst-case stream). */
function controllableBody() {
  const queue = [];
  const waiting = [];
  const body = {
    cancelled: false,
    push(text) {
      const item = { value: encoder.encode(text), done: false };
      if (waiting.length > 0) waiting.shift().resolve(item);
      else queue.push(item);
    },
    end() {
      const item = { value: undefined, done: true };
      if (waiting.length > 0) waiting.shift().resolve(item);
      else queue.push(item);
    },
    getReader() {
      return {
        read() {
          if (queue.length > 0) return Promise.resolve(queue.shift());
          const d = deferred();
          waiting.push(d);
          return d.promise;
        },
        cancel() {
          body.cancelled = true;
          return Promise.resolve();
        },
      };
    },
  };
  return body;
}

function fakeFetch() {
  const calls = [];
  const impl = (url, init) => {
    const body = controllableBody();
    const d = deferred();
    calls.push({ url, init, body, ...d });
    return d.promise;
  };
  const ok = (call, status = 200) =>
    call.resolve({
      ok: status >= 200 && status < 300,
      status,
      headers: new Headers({ "content-type": "text/event-stream; charset=utf-8" }),
      body: call.body,
    });
  return { calls, impl, ok };
}

const frame = (seq, view) =>
  `id: ${seq}\ndata: ${JSON.stringify({ event: { seq, type: "x", time: 0, data: {} }, view })}\n\n`;

describe("connectEvents", () => {
  test("sends headers, delivers frames and reconnects with Last-Event-ID", async () => {
    const net = fakeFetch();
    const frames = [];
    const opens = [];
    const sleeps = [];
    const handle = connectEvents({
      url: "/api/sessions/s1/events",
      headers: () => ({ Authorization: "Bearer T" }),
      fetchImpl: net.impl,
      sleep: (ms) => {
        sleeps.push(ms);
      },
      random: () => 1,
      onFrame: (f) => frames.push(f),
      onOpen: (info) => opens.push(info),
    });
    await settle();
    assert.equal(net.calls.length, 1);
    const first = net.calls[0];
    assert.equal(first.url, "/api/sessions/s1/events");
    assert.equal(first.init.headers.Authorization, "Bearer T");
    assert.equal(first.init.headers.Accept, "text/event-stream");
    assert.equal("Last-Event-ID" in first.init.headers, false);
    net.ok(first);
    await settle();
    assert.deepEqual(opens, [{ reconnect: false, lastEventId: null, status: 200 }]);
    first.body.push(": keep-alive\n\n" + frame(4) + frame(5).slice(0, 9));
    await settle();
    first.body.push(frame(5).slice(9) + frame(3, { for: "event", view: {} }));
    await settle();
    assert.deepEqual(
      frames.map((f) => f.id),
      ["4", "5", "3"],
    );
    assert.equal(handle.lastEventId, "5", "a late view for an older seq does not move it back");
    first.body.end(); // the server closed the stream
    await settle();
    assert.equal(net.calls.length, 2);
    assert.equal(net.calls[1].init.headers["Last-Event-ID"], "5");
    assert.equal(sleeps.length, 1);
    net.ok(net.calls[1]);
    await settle();
    assert.equal(opens[1].reconnect, true);
    assert.equal(handle.connected, true);
    handle.close();
    await handle.done;
    assert.equal(handle.connected, false);
  });

  test("an initial lastEventId is sent on the first request", async () => {
    const net = fakeFetch();
    const handle = connectEvents({ url: "/e", lastEventId: 7, fetchImpl: net.impl });
    await settle();
    assert.equal(net.calls[0].init.headers["Last-Event-ID"], "7");
    handle.close();
    net.ok(net.calls[0]);
    await handle.done;
  });

  test("resumeId picks the Last-Event-ID each request sends; the largest id seen stays", async () => {
    const net = fakeFetch();
    const opens = [];
    const asked = [];
    let answer = (id) => id;
    const handle = connectEvents({
      url: "/e",
      fetchImpl: net.impl,
      sleep: () => {},
      resumeId: (id) => {
        asked.push(id);
        return answer(id);
      },
      onOpen: (info) => opens.push(info),
    });
    await settle();
    assert.equal("Last-Event-ID" in net.calls[0].init.headers, false);
    net.ok(net.calls[0]);
    await settle();
    net.calls[0].body.push(frame(8) + frame(9));
    await settle();
    // An earlier point: the server replays from there; the largest id seen does not move.
    answer = () => 3;
    net.calls[0].body.end();
    await settle();
    assert.equal(net.calls[1].init.headers["Last-Event-ID"], "3");
    net.ok(net.calls[1]);
    await settle();
    assert.deepEqual(opens.at(-1), { reconnect: true, lastEventId: "3", status: 200 });
    assert.equal(handle.lastEventId, "9");
    // None at all; then a throwing resumeId falls back to the largest id.
    answer = () => null;
    net.calls[1].body.end();
    await settle();
    assert.equal("Last-Event-ID" in net.calls[2].init.headers, false);
    net.ok(net.calls[2]);
    await settle();
    assert.equal(opens.at(-1).lastEventId, null);
    answer = () => {
      throw new Error("boom");
    };
    const logged = [];
    const original = console.error;
    console.error = (...args) => logged.push(args);
    try {
      net.calls[2].body.end();
      await settle();
    } finally {
      console.error = original;
    }
    assert.equal(net.calls[3].init.headers["Last-Event-ID"], "9");
    assert.equal(logged.length, 1);
    assert.deepEqual(asked, [null, "9", "9", "9"]);
    handle.close();
    net.ok(net.calls[3]);
    await handle.done;
  });

  test("a stale stream never delivers after close()", async () => {
    const net = fakeFetch();
    const frames = [];
    const handle = connectEvents({ url: "/e", fetchImpl: net.impl, onFrame: (f) => frames.push(f) });
    await settle();
    net.ok(net.calls[0]);
    await settle();
    net.calls[0].body.push(frame(1));
    await settle();
    assert.equal(frames.length, 1);
    handle.close();
    assert.equal(net.calls[0].init.signal.aborted, true);
    assert.equal(net.calls[0].body.cancelled, true);
    // This body ignores cancel(): the pending read still resolves with data.
    net.calls[0].body.push(frame(2));
    await settle();
    await handle.done;
    assert.equal(frames.length, 1);
    assert.equal(net.calls.length, 1, "no reconnect after close");
  });

  test("an aborted signal stops delivery, including a response that arrives late", async () => {
    const net = fakeFetch();
    const frames = [];
    const opens = [];
    const controller = new AbortController();
    const handle = connectEvents({
      url: "/e",
      fetchImpl: net.impl,
      signal: controller.signal,
      onFrame: (f) => frames.push(f),
      onOpen: (info) => opens.push(info),
    });
    await settle();
    controller.abort();
    net.ok(net.calls[0]); // the response resolves after the abort
    net.calls[0].body.push(frame(1));
    await settle();
    await handle.done;
    assert.deepEqual(frames, []);
    assert.deepEqual(opens, []);
    assert.equal(net.calls.length, 1);
  });

  test("reconnectNow supersedes the current stream", async () => {
    const net = fakeFetch();
    const frames = [];
    const handle = connectEvents({
      url: "/e",
      fetchImpl: net.impl,
      sleep: () => {},
      onFrame: (f) => frames.push(f.id),
    });
    await settle();
    net.ok(net.calls[0]);
    await settle();
    net.calls[0].body.push(frame(1));
    await settle();
    handle.reconnectNow();
    net.calls[0].body.push(frame(2)); // old stream: must not deliver
    await settle();
    assert.equal(net.calls.length, 2);
    assert.equal(net.calls[1].init.headers["Last-Event-ID"], "1");
    net.ok(net.calls[1]);
    await settle();
    net.calls[1].body.push(frame(3));
    await settle();
    assert.deepEqual(frames, ["1", "3"]);
    handle.close();
    await handle.done;
  });

  test("failures back off exponentially; a fatal status stops", async () => {
    const net = fakeFetch();
    const sleeps = [];
    const errors = [];
    const handle = connectEvents({
      url: "/e",
      fetchImpl: net.impl,
      initialDelayMs: 100,
      maxDelayMs: 1000,
      random: () => 1,
      sleep: (ms) => {
        sleeps.push(ms);
      },
      onError: (error, info) => errors.push([error.message, info.fatal]),
    });
    for (let i = 0; i < 5; i += 1) {
      await settle();
      net.calls[i].reject(new TypeError("network down"));
    }
    await settle();
    assert.deepEqual(sleeps, [200, 400, 800, 1000, 1000]);
    net.ok(net.calls[5], 401);
    await handle.done;
    assert.equal(net.calls.length, 6);
    assert.deepEqual(errors.at(-1), ["event stream answered HTTP 401", true]);
    assert.equal(errors.length, 6);
  });

  test("works with a real Response and ReadableStream", async () => {
    const frames = [];
    let controller;
    const stream = new ReadableStream({
      start(c) {
        controller = c;
      },
    });
    const fetchImpl = async () =>
      new Response(stream, { headers: { "content-type": "text/event-stream" } });
    const handle = connectEvents({ url: "/e", fetchImpl, onFrame: (f) => frames.push(f) });
    const bytes = encoder.encode(frame(1) + "data: 中\n\n");
    controller.enqueue(bytes.subarray(0, bytes.length - 4));
    controller.enqueue(bytes.subarray(bytes.length - 4));
    for (let i = 0; i < 20 && frames.length < 2; i += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.deepEqual(
      frames.map((f) => f.data),
      [JSON.stringify({ event: { seq: 1, type: "x", time: 0, data: {} } }), "中"],
    );
    handle.close();
    await handle.done;
  });
});
