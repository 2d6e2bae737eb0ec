// app.js transcript DOM: late views and older pages touch only their own nodes, so the other
// elements (and a collapsed <details>) survive; a reset still rebuilds.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const user = (seq) => ({ seq, type: "user/message", time: 1_000 + seq, data: { text: `m${seq}` } });
const call = (seq) => ({
  seq,
  type: "tool/call",
  time: 1_000 + seq,
  data: { callId: `c${seq}`, name: "schedule_create", arguments: {} },
});
const dispatch = (seq) => ({
  seq,
  type: "schedule/change",
  time: 1_000 + seq,
  data: { version: 1, operation: "dispatch", id: "schedule-1" },
});
const receipt = (prompt) => ({
  for: "event",
  view: {
    scheduleId: "schedule-1",
    prompt,
    occurrenceAt: "2026-08-05T12:00:01.000Z",
    deliveryMode: "session-local",
  },
});

test("late views replace or insert one node; older pages are prepended", async () => {
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path, query }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") {
        if (query.beforeSeq === "50") {
          return { entries: [{ event: user(48) }, { event: user(49) }], hasMore: false };
        }
        // The dispatch at 51 is raw: its receipt view arrives later.
        const entries = [user(50), dispatch(51), call(52), user(53)].map((event) => ({ event }));
        return { entries, hasMore: true };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const transcript = app.$("transcript");
  await until(() => app.transcript().length === 3, "the tail page");
  assert.deepEqual(app.transcript(), [
    [50, "user"],
    [52, "tool-call"],
    [53, "user"],
  ]);
  const [m50, call52, m53] = transcript.children;
  const details = call52.children.find((el) => el.tagName === "DETAILS");
  details.open = false; // the reader collapsed the tool call

  // A late view for the raw dispatch: a new node, inserted in seq order.
  const stream = app.streams.get("s1")[0];
  stream.send({ event: dispatch(51), view: receipt("first") }, "51");
  await until(() => app.transcript().length === 4, "the inserted receipt");
  assert.deepEqual(app.transcript(), [
    [50, "user"],
    [51, "presented-event"],
    [52, "tool-call"],
    [53, "user"],
  ]);
  assert.deepEqual(transcript.children.filter((el) => el !== transcript.children[1]), [
    m50,
    call52,
    m53,
  ]);
  assert.equal(details.open, false);
  assert.match(transcript.children[1].textContent, /first/);

  // A different view for the same seq replaces that node only.
  const first = transcript.children[1];
  stream.send({ event: dispatch(51), view: receipt("second") }, "51");
  await until(() => transcript.children[1] !== first, "the replaced receipt");
  assert.equal(app.transcript().length, 4);
  assert.match(transcript.children[1].textContent, /second/);
  assert.equal(transcript.children[0], m50);
  assert.equal(transcript.children[2], call52);
  assert.equal(details.open, false);

  // An older page is prepended; the existing elements stay.
  const shown = transcript.children;
  app.$("load-older").click();
  await until(() => app.transcript().length === 6, "the older page");
  assert.deepEqual(
    app.transcript().map(([seq]) => seq),
    [48, 49, 50, 51, 52, 53],
  );
  assert.deepEqual(transcript.children.slice(2), shown);
  assert.equal(details.open, false);
  assert.equal(app.$("load-older").hidden, true, "no more history");
});
