// Window entries -> conversation nodes: presented-event nodes on replay and live append.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { isErrorValue, nodeFor, nodesFor } from "../../src/dsh_host/web/static/transcript.js";

const RECEIPT = {
  scheduleId: "schedule-1",
  prompt: "Check the deployment log",
  occurrenceAt: "2026-08-05T12:00:01.000Z",
  deliveryMode: "session-local",
};
const PRESENTED = { for: "event", view: RECEIPT };

const events = {
  user: { seq: 0, type: "user/message", time: 10, data: { text: "hello" } },
  turnStart: { seq: 1, type: "turn/start", time: 11, data: { messageId: "m1" } },
  call: {
    seq: 2,
    type: "tool/call",
    time: 12,
    data: { callId: "c1", name: "schedule_create", arguments: { prompt: "x", after_seconds: 1 } },
  },
  result: {
    seq: 3,
    type: "tool/result",
    time: 13,
    data: { callId: "c1", name: "schedule_create", value: { id: "schedule-1" } },
  },
  assistant: { seq: 4, type: "assistant/message", time: 14, data: { text: "done" } },
  turnEnd: { seq: 5, type: "turn/end", time: 15, data: { outcome: "ok" } },
  create: {
    seq: 6,
    type: "schedule/change",
    time: 16,
    data: { version: 1, operation: "create", schedule: {} },
  },
  dispatch: {
    seq: 7,
    type: "schedule/change",
    time: 17,
    data: { version: 1, operation: "dispatch", id: "schedule-1" },
  },
  followup: {
    seq: 8,
    type: "agent/followup",
    time: 18,
    data: { messageId: "m2", text: "[SCHEDULE REMINDER]", source: { kind: "plugin" } },
  },
  pluginUser: {
    seq: 9,
    type: "user/message",
    time: 19,
    data: { text: "[SCHEDULE REMINDER]", source: { kind: "plugin", plugin: "schedule" } },
  },
  failed: { seq: 10, type: "turn/end", time: 20, data: { outcome: "error", error: "no model" } },
  unknown: { seq: 11, type: "something/new", time: 21, data: { x: 1 } },
};

describe("nodes", () => {
  test("reset / replay materializes transcript and presented nodes", () => {
    const entries = Object.values(events).map((event) => ({ event }));
    entries[7] = { event: events.dispatch, view: PRESENTED };
    const nodes = nodesFor(entries);
    assert.deepEqual(
      nodes.map((n) => [n.seq, n.kind]),
      [
        [0, "user"],
        [2, "tool-call"],
        [3, "tool-result"],
        [4, "assistant"],
        [7, "presented-event"],
        [9, "user"],
        [10, "turn-error"],
      ],
    );
    assert.deepEqual(nodes[0], { kind: "user", seq: 0, text: "hello" });
    assert.deepEqual(nodes[1], {
      kind: "tool-call",
      seq: 2,
      callId: "c1",
      name: "schedule_create",
      arguments: { prompt: "x", after_seconds: 1 },
    });
    assert.deepEqual(nodes[2], {
      kind: "tool-result",
      seq: 3,
      time: 13,
      callId: "c1",
      name: "schedule_create",
      value: { id: "schedule-1" },
      isError: false,
    });
    assert.deepEqual(nodes[3], { kind: "assistant", seq: 4, text: "done" });
    assert.deepEqual(nodes[4], {
      kind: "presented-event",
      seq: 7,
      time: 17,
      eventType: "schedule/change",
      view: RECEIPT,
    });
    assert.deepEqual(nodes[5].source, { kind: "plugin", plugin: "schedule" });
    assert.deepEqual(nodesFor(entries), nodes);
    assert.deepEqual(
      entries.map(nodeFor).filter((n) => n !== null),
      nodes,
    );
  });

  test("live append: raw dispatch has no node; its late view yields a presented node", () => {
    // What the client shows: the replayed nodes plus those each appended entry produces.
    const shown = nodesFor([{ event: events.user }]);
    assert.deepEqual(nodesFor([{ event: events.dispatch }]), []);
    const added = nodesFor([{ event: events.dispatch, view: PRESENTED }]);
    assert.equal(added.length, 1);
    assert.equal(added[0].kind, "presented-event");
    assert.equal(added[0].eventType, "schedule/change");
    assert.deepEqual(added[0].view, RECEIPT);
    shown.push(...added);
    assert.equal(nodeFor({ event: events.assistant }).kind, "assistant");
    shown.push(...nodesFor([{ event: events.assistant }]));
    assert.deepEqual(
      shown.map((n) => n.kind),
      ["user", "presented-event", "assistant"],
    );
  });

  test("any event type with a presented view becomes a presented node", () => {
    const node = nodeFor({ event: events.unknown, view: { for: "event", view: [1, 2] } });
    assert.equal(node.kind, "presented-event");
    assert.equal(node.eventType, "something/new");
    assert.deepEqual(node.view, [1, 2]);
    const user = nodeFor({ event: events.user, view: { for: "event", view: null } });
    assert.equal(user.kind, "presented-event");
    // Other sidecar kinds do not change materialization.
    assert.equal(nodeFor({ event: events.user, view: { for: "tool" } }).kind, "user");
    assert.equal(nodeFor({ event: events.unknown }), null);
    assert.equal(nodeFor({ event: events.dispatch, view: { view: RECEIPT } }), null);
  });

  test("tool error detection", () => {
    assert.equal(isErrorValue({ code: "schedule_not_found", message: "x" }), true);
    assert.equal(isErrorValue({ code: "invalid_arguments" }), true);
    assert.equal(isErrorValue({ code: 1 }), false);
    assert.equal(isErrorValue(["code"]), false);
    assert.equal(isErrorValue(null), false);
    assert.equal(isErrorValue("code"), false);
    assert.equal(isErrorValue({ id: "schedule-1", deleted: true }), false);
    const errorResult = {
      seq: 3,
      type: "tool/result",
      time: 1,
      data: { callId: "c", name: "t", value: { code: "unknown_tool", message: "no" } },
    };
    assert.equal(nodeFor({ event: errorResult }).isError, true);
  });

  test("turn errors", () => {
    assert.deepEqual(nodeFor({ event: events.failed }), {
      kind: "turn-error",
      seq: 10,
      error: "no model",
    });
    const bare = { seq: 1, type: "turn/end", time: 0, data: { outcome: "error" } };
    assert.deepEqual(nodeFor({ event: bare }), { kind: "turn-error", seq: 1, error: null });
    assert.equal(nodeFor({ event: events.turnEnd }), null);
    assert.equal(nodeFor({ event: events.turnStart }), null);
  });

  test("a turn the user stopped is its own quiet node, not an error", () => {
    const stopped = { seq: 4, type: "turn/end", time: 0, data: { outcome: "cancelled" } };
    assert.deepEqual(nodeFor({ event: stopped }), { kind: "turn-cancelled", seq: 4 });
  });

  test("malformed transcript data produces no node", () => {
    assert.equal(nodeFor({ event: { seq: 0, type: "user/message", time: 0, data: {} } }), null);
    assert.equal(nodeFor({ event: { seq: 0, type: "assistant/message", time: 0, data: 5 } }), null);
    assert.equal(nodeFor(null), null);
    assert.equal(nodeFor({}), null);
  });
});
