// app.js and a reconnect: the stream resumes from `Last-Event-ID` and the server's replay fills
// the gap, so the history is not read again; the resume point is the committed mark, so a view
// committed while the connection was down still arrives; a window showing more than the server
// replayed (events the server lost) is read again.

import assert from "node:assert/strict";
import { test } from "node:test";

import { bootApp, until } from "./fake-browser.mjs";

const at = (seq, type, data) => ({ seq, type, time: 1_000 + seq, data });
const dispatch = (seq) => at(seq, "schedule/change", { version: 1, operation: "dispatch", id: "r1" });
const receipt = {
  for: "event",
  view: {
    scheduleId: "r1",
    prompt: "stretch",
    occurrenceAt: "2026-08-05T12:00:01.000Z",
    deliveryMode: "session-local",
  },
};

test("a reconnect resumes from Last-Event-ID without reading the history again", async () => {
  let log = [at(0, "user/message", { text: "hi" }), at(1, "assistant/message", { text: "hello" })]
    .map((event) => ({ event }));
  const app = await bootApp({
    initial: "s1",
    route: ({ method, path }) => {
      if (method === "GET" && path === "/api/sessions") {
        return { sessions: [{ id: "s1", live: true, createdAt: 1_000 }] };
      }
      if (method === "GET" && path === "/api/sessions/s1/history") {
        return { entries: log, hasMore: false };
      }
      if (method === "GET" && path === "/api/sessions/s1/views") {
        return { views: {}, name: null, throughSeq: 0 };
      }
      if (method === "POST" && path === "/api/sessions/s1/messages") return { accepted: true };
      throw new Error(`unexpected ${method} ${path}`);
    },
  });
  const histories = () => app.calls.filter((c) => c.path === "/api/sessions/s1/history").length;
  const connections = () => app.calls.filter((c) => c.path === "/api/sessions/s1/events");
  const status = app.$("status");
  /** The stream drops; sending a message reconnects it at once (no backoff wait). */
  const dropAndReconnect = async (stream, count) => {
    stream.end();
    await until(() => status.getAttribute("data-stream") === "retrying", "the drop");
    app.$("composer").value = "again";
    app.$("composer-form").dispatch("submit");
    await until(() => app.streams.get("s1").length === count, "the reconnect");
    await until(() => status.getAttribute("data-stream") === "open", "the stream to open");
  };

  await until(() => app.transcript().length === 2, "the history");
  const first = app.streams.get("s1")[0];
  assert.equal(connections()[0].headers["Last-Event-ID"], undefined);
  first.sendViews({ views: {}, name: null, throughSeq: 2 }); // 0 and 1 are committed
  first.send({ event: at(2, "user/message", { text: "remind me" }) }, "2");
  first.send({ event: dispatch(3) }, "3"); // raw: its receipt comes once it is committed
  await until(() => app.transcript().length === 3, "the live message");
  const shown = app.$("transcript").children.slice();

  // Down: 2 and 3 are committed and 4 is appended meanwhile. The client resumes from the
  // committed mark (1), so the replay brings 3's receipt as well as 4.
  await dropAndReconnect(first, 2);
  assert.equal(connections()[1].headers["Last-Event-ID"], "1");
  const second = app.streams.get("s1")[1];
  second.send({ event: at(2, "user/message", { text: "remind me" }) }, "2");
  second.send({ event: dispatch(3), view: receipt }, "3");
  second.send({ event: at(4, "assistant/message", { text: "Done." }) }, "4");
  second.sendViews({ views: {}, name: null, throughSeq: 5 });
  await until(() => app.transcript().length === 5, "the replayed gap");
  assert.deepEqual(app.transcript(), [
    [0, "user"],
    [1, "assistant"],
    [2, "user"],
    [3, "presented-event"],
    [4, "assistant"],
  ]);
  assert.match(app.$("transcript").children[3].textContent, /stretch/);
  // Fails before the change: every reconnect read the history again and rebuilt the transcript.
  assert.equal(histories(), 1, "the history is not read again");
  assert.deepEqual(app.$("transcript").children.slice(0, 3), shown, "nothing was rebuilt");

  // 5 is shown, then the server restarts without it: the replay (from 4, the committed mark
  // minus one) ends below what the page shows, so the page reads the history again.
  second.send({ event: at(5, "user/message", { text: "lost" }) }, "5");
  await until(() => app.transcript().length === 6, "the doomed message");
  log = [
    ...log,
    { event: at(2, "user/message", { text: "remind me" }) },
    { event: dispatch(3), view: receipt },
    { event: at(4, "assistant/message", { text: "Done." }) },
  ];
  await dropAndReconnect(second, 3);
  assert.equal(connections()[2].headers["Last-Event-ID"], "4");
  const third = app.streams.get("s1")[2];
  third.sendViews({ views: {}, name: null, throughSeq: 5 });
  await until(() => histories() === 2, "the history read again");
  await until(() => app.transcript().length === 5, "the lost message to go");
  assert.deepEqual(app.transcript().at(-1), [4, "assistant"]);
});
