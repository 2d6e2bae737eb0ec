// SessionWindow: the 15 "late event views" cases (upstream section 7) plus edge cases.
// loadPage is driven by hand-resolved deferred promises; no timers, no sleeps.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { jsonEqual, SessionWindow } from "../../src/dsh_host/web/static/session-window.js";
import { deferred, settle } from "./async-helpers.mjs";

// ------------------------------------------------------------------ helpers



function ev(seq, text = `m${seq}`) {
  return { seq, type: "user/message", time: 1_000 + seq, data: { text } };
}

/** The same event as ev(seq) but built with a different key order (still identical). */
function evReordered(seq) {
  return { data: { text: `m${seq}` }, time: 1_000 + seq, type: "user/message", seq };
}

function receipt(id = "schedule-1") {
  return {
    for: "event",
    view: {
      scheduleId: id,
      prompt: "Check the deployment log",
      occurrenceAt: "2026-08-05T12:00:01.000Z",
      deliveryMode: "session-local",
    },
  };
}

function page(from, to, { hasMore = from > 0, views = {}, make = ev } = {}) {
  const entries = [];
  for (let seq = from; seq <= to; seq += 1) {
    const entry = { event: make(seq) };
    if (views[seq] !== undefined) entry.view = views[seq];
    entries.push(entry);
  }
  return { entries, hasMore };
}

function harness({ pageSize = 50 } = {}) {
  const calls = [];
  const changes = [];
  const win = new SessionWindow({
    pageSize,
    loadPage: (args) => {
      const d = deferred();
      calls.push({ args, ...d });
      return d.promise;
    },
    onChange: (_win, change) => changes.push(change),
  });
  return { win, calls, changes };
}

async function openWith(h, firstPage) {
  const opened = h.win.open();
  h.calls[h.calls.length - 1].resolve(firstPage);
  await opened;
  await settle();
}

const seqs = (win) => win.events.map((event) => event.seq);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// ------------------------------------------------------------------ the 15 cases

describe("late event views", () => {
  test("upgrade without duplication and no erasure by an absent sidecar", async () => {
    const h = harness();
    await openWith(h, page(0, 2, { hasMore: false }));
    h.win.acceptLiveEvent(ev(3));
    assert.deepEqual(seqs(h.win), [0, 1, 2, 3]);
    assert.equal(h.win.views[3], undefined);

    h.changes.length = 0;
    // Same seq again with a late view (and a different key order): upgrade in place.
    h.win.acceptLiveEvent(evReordered(3), receipt());
    assert.deepEqual(seqs(h.win), [0, 1, 2, 3]);
    assert.deepEqual(h.win.views[3], receipt());
    assert.deepEqual(h.changes, [{ type: "view", seq: 3, index: 3 }]);

    // An absent (or null) sidecar never erases it, and an identical one changes nothing.
    h.win.acceptLiveEvent(ev(3));
    h.win.acceptLiveEvent(ev(3), null);
    h.win.acceptLiveEvent(ev(3), receipt());
    assert.deepEqual(h.win.views[3], receipt());
    assert.equal(h.changes.length, 1);
    assert.equal(h.win.events.length, 4);
    assert.equal(h.calls.length, 1, "no resync, no repair");
    assert.deepEqual(h.win.entries[3], { event: ev(3), view: receipt() });
  });

  test("view during tail load", async () => {
    const h = harness();
    const opened = h.win.open();
    assert.equal(h.win.openState, "loading");
    assert.deepEqual(h.calls[0].args, { maxMessages: 50 });
    // A late view for an event the tail page will contain, and a newer raw event.
    h.win.acceptLiveEvent(ev(1), receipt());
    h.win.acceptLiveEvent(ev(3));
    assert.equal(h.win.liveBuffer.length, 2);
    h.calls[0].resolve(page(0, 2, { hasMore: false }));
    await opened;
    await settle();
    assert.equal(h.win.openState, "open");
    assert.deepEqual(seqs(h.win), [0, 1, 2, 3]);
    assert.deepEqual(h.win.views[1], receipt());
    assert.deepEqual(h.win.liveBuffer, []);
    assert.equal(h.calls.length, 1);
  });

  test("view behind a gap-repair snapshot", async () => {
    const h = harness();
    await openWith(h, page(0, 2, { hasMore: false }));
    h.win.acceptLiveEvent(ev(5)); // true gap: 3 and 4 are missing
    assert.equal(h.win.stitching, true);
    assert.equal(h.calls.length, 2);
    assert.deepEqual(h.calls[1].args, { maxMessages: 50 });
    // The flush commits seq 4 while the (older) snapshot is in flight.
    h.win.acceptLiveEvent(ev(4), receipt());
    h.calls[1].resolve(page(0, 5, { hasMore: false }));
    await settle();
    assert.deepEqual(seqs(h.win), range(0, 5));
    assert.deepEqual(h.win.views[4], receipt());
    assert.equal(h.win.stitching, false);
    assert.deepEqual(h.win.liveBuffer, []);
    assert.equal(h.calls.length, 2);
  });

  test("retained view during loadOlder across prepend", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true, views: { 51: receipt("schedule-1") } }));
    h.win.acceptLiveEvent(ev(52), receipt("schedule-2"));
    const older = h.win.loadOlder();
    assert.deepEqual(h.calls[1].args, { beforeSeq: 50, maxMessages: 50 });
    h.calls[1].resolve(page(0, 49, { hasMore: false }));
    await older;
    assert.deepEqual(seqs(h.win), range(0, 52));
    assert.equal(h.win.baseSeq, 0);
    assert.equal(h.win.hasMore, false);
    assert.deepEqual(h.win.views[51], receipt("schedule-1"));
    assert.deepEqual(h.win.views[52], receipt("schedule-2"));
    assert.equal(h.win.loadingOlder, null);
    assert.ok(h.changes.some((c) => c.type === "prepend" && c.count === 50));
  });

  test("late view for an in-flight older page", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    const older = h.win.loadOlder();
    h.win.acceptLiveEvent(ev(10), receipt());
    h.win.acceptLiveEvent(ev(11)); // raw and below the window: dropped
    assert.deepEqual(seqs(h.win), [50, 51, 52], "the stash does not touch the window");
    assert.equal(h.win.loadingOlder.views.size, 1);
    assert.equal(h.calls.length, 2, "no repair for a stashed view");
    h.calls[1].resolve(page(0, 49, { hasMore: false }));
    await older;
    assert.deepEqual(seqs(h.win), range(0, 52));
    assert.deepEqual(h.win.views[10], receipt());
    assert.equal(h.win.views[11], undefined);
  });

  test("older-page view with concurrent repair", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    h.win.acceptLiveEvent(ev(55)); // gap -> repair (call 1)
    assert.equal(h.win.stitching, true);
    const older = h.win.loadOlder(); // call 2
    assert.deepEqual(h.calls[2].args, { beforeSeq: 50, maxMessages: 50 });
    h.win.acceptLiveEvent(ev(20), receipt());
    // The repair snapshot overlaps the tail, so the retained prefix (and base) stay.
    h.calls[1].resolve(page(52, 55, { hasMore: true }));
    await settle();
    assert.deepEqual(seqs(h.win), range(50, 55));
    assert.equal(h.win.baseSeq, 50);
    assert.equal(h.win.stitching, false);
    h.calls[2].resolve(page(0, 49, { hasMore: false }));
    await older;
    assert.deepEqual(seqs(h.win), range(0, 55));
    assert.deepEqual(h.win.views[20], receipt());
    assert.equal(h.win.hasMore, false);
  });

  test("drop older page after repair moves the base", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    h.win.acceptLiveEvent(ev(60)); // gap -> repair (call 1)
    const older = h.win.loadOlder(); // call 2
    h.win.acceptLiveEvent(ev(20), receipt());
    // A disjoint snapshot replaces the window: the base moves to 58.
    h.calls[1].resolve(page(58, 60, { hasMore: true }));
    await settle();
    assert.deepEqual(seqs(h.win), [58, 59, 60]);
    assert.equal(h.win.baseSeq, 58);
    h.calls[2].resolve(page(0, 49, { hasMore: false }));
    await older;
    assert.deepEqual(seqs(h.win), [58, 59, 60], "the stale page is dropped");
    assert.equal(h.win.hasMore, true);
    assert.equal(h.win.loadingOlder, null);
    // Paging continues from the new base.
    h.win.loadOlder();
    assert.deepEqual(h.calls[3].args, { beforeSeq: 58, maxMessages: 50 });
  });

  test("resync on identity disagreement: page stash", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    const older = h.win.loadOlder();
    const generation = h.win.openGeneration;
    h.win.acceptLiveEvent(ev(10), receipt());
    h.win.acceptLiveEvent(ev(10, "something else"), receipt());
    assert.equal(h.win.openGeneration, generation + 1);
    assert.equal(h.win.openState, "loading");
    assert.equal(h.win.loadingOlder, null);
    assert.deepEqual(h.calls[2].args, { maxMessages: 50 });
    // The superseded page settles harmlessly; the fresh tail opens.
    h.calls[1].resolve(page(0, 49, { hasMore: false }));
    await older;
    h.calls[2].resolve(page(48, 53, { hasMore: true }));
    await settle();
    assert.equal(h.win.openState, "open");
    assert.deepEqual(seqs(h.win), range(48, 53));
  });

  test("resync on identity disagreement: page result", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    const older = h.win.loadOlder();
    h.win.acceptLiveEvent(ev(10), receipt());
    const generation = h.win.openGeneration;
    // The page's seq 10 is not the event the view was sent for.
    h.calls[1].resolve(page(0, 49, { make: (s) => (s === 10 ? ev(10, "divergent") : ev(s)) }));
    await older;
    assert.equal(h.win.openGeneration, generation + 1);
    assert.equal(h.win.openState, "loading");
    assert.deepEqual(h.win.events, []);
    assert.equal(h.calls.length, 3);
    assert.deepEqual(h.calls[2].args, { maxMessages: 50 });
  });

  test("resync on identity disagreement: gap snapshot", async () => {
    const h = harness();
    await openWith(h, page(0, 2, { hasMore: false }));
    h.win.acceptLiveEvent(ev(5));
    const generation = h.win.openGeneration;
    // The snapshot disagrees with the retained seq 1.
    h.calls[1].resolve(page(0, 5, { make: (s) => (s === 1 ? ev(1, "rewritten") : ev(s)) }));
    await settle();
    assert.equal(h.win.openGeneration, generation + 1);
    assert.equal(h.win.openState, "loading");
    assert.equal(h.win.stitching, false);
    assert.equal(h.calls.length, 3);
    h.calls[2].resolve(page(0, 5, { hasMore: false }));
    await settle();
    assert.equal(h.win.openState, "open");
    assert.deepEqual(seqs(h.win), range(0, 5));
  });

  test("continue repair when a later gap remains", async () => {
    const h = harness();
    await openWith(h, page(0, 2, { hasMore: false }));
    h.win.acceptLiveEvent(ev(5));
    h.win.acceptLiveEvent(ev(9)); // arrives while stitching: buffered
    assert.equal(h.calls.length, 2);
    // The snapshot advances the tail to 6 but 7..8 are still missing before 9: pull again.
    h.calls[1].resolve(page(0, 6, { hasMore: false }));
    await settle();
    assert.deepEqual(seqs(h.win), range(0, 6));
    assert.equal(h.calls.length, 3);
    assert.equal(h.win.stitching, true);
    h.calls[2].resolve(page(0, 9, { hasMore: false }));
    await settle();
    assert.deepEqual(seqs(h.win), range(0, 9));
    assert.deepEqual(h.win.liveBuffer, []);
    assert.equal(h.win.stitching, false);
    assert.equal(h.calls.length, 3);
  });

  test("concurrent live tail kept before prepend", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    const older = h.win.loadOlder();
    h.win.acceptLiveEvent(ev(53));
    h.win.acceptLiveEvent(ev(54), receipt());
    assert.deepEqual(seqs(h.win), range(50, 54), "live tail lands while the page is in flight");
    h.calls[1].resolve(page(0, 49, { hasMore: false }));
    await older;
    assert.deepEqual(seqs(h.win), range(0, 54));
    assert.deepEqual(h.win.views[54], receipt());
  });

  // Shared setup for the three generation-fencing cases: a loadOlder (call 2) and a repair
  // (call 1) in flight, then a resync whose fresh tail page (call 3) opens at 40..45.
  async function staleSetup() {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    h.win.acceptLiveEvent(ev(60)); // repair: call 1
    const staleOlder = h.win.loadOlder(); // call 2
    h.win.resync(); // call 3
    h.calls[3].resolve(page(40, 45, { hasMore: true }));
    await settle();
    assert.equal(h.win.openState, "open");
    assert.deepEqual(seqs(h.win), range(40, 45));
    return { h, staleOlder };
  }

  function snapshot(win) {
    return {
      events: win.events.slice(),
      views: win.views.slice(),
      baseSeq: win.baseSeq,
      hasMore: win.hasMore,
      openState: win.openState,
      liveBuffer: win.liveBuffer.slice(),
      error: win.error,
      olderError: win.olderError,
    };
  }

  test("stale loadOlder / repair success cannot touch a fresh generation", async () => {
    const { h, staleOlder } = await staleSetup();
    const before = snapshot(h.win);
    const changes = h.changes.length;
    h.calls[1].resolve(page(55, 60, { hasMore: true }));
    h.calls[2].resolve(page(0, 49, { hasMore: false }));
    await staleOlder;
    await settle();
    assert.deepEqual(snapshot(h.win), before);
    assert.equal(h.changes.length, changes, "no change notifications from stale work");
    assert.equal(h.calls.length, 4, "stale success starts no further pulls");
  });

  test("stale loadOlder / repair rejection cannot touch a fresh generation", async () => {
    const { h, staleOlder } = await staleSetup();
    const before = snapshot(h.win);
    const changes = h.changes.length;
    h.calls[1].reject(new Error("repair failed"));
    h.calls[2].reject(new Error("page failed"));
    await staleOlder;
    await settle();
    assert.deepEqual(snapshot(h.win), before);
    assert.equal(h.win.error, null);
    assert.equal(h.win.olderError, null);
    assert.equal(h.changes.length, changes);
    assert.equal(h.calls.length, 4);
  });

  test("stale loadOlder / repair finally cannot touch a fresh generation", async () => {
    const { h, staleOlder } = await staleSetup();
    // The fresh generation has its own repair (call 4) and older page (call 5) in flight.
    h.win.acceptLiveEvent(ev(48));
    assert.equal(h.win.stitching, true);
    const freshOlder = h.win.loadOlder();
    const freshLoad = h.win.loadingOlder;
    assert.deepEqual(h.calls[5].args, { beforeSeq: 40, maxMessages: 50 });
    // The stale ones settle (one succeeds, one fails): their finally blocks run now.
    h.calls[1].resolve(page(55, 60, { hasMore: true }));
    h.calls[2].reject(new Error("stale page failed"));
    await staleOlder;
    await settle();
    assert.equal(h.win.stitching, true, "stale repair finally left stitching alone");
    assert.equal(h.win.loadingOlder, freshLoad, "stale loadOlder finally left the fresh load");
    // The fresh work still completes normally.
    h.calls[4].resolve(page(40, 48, { hasMore: true }));
    h.calls[5].resolve(page(0, 39, { hasMore: false }));
    await freshOlder;
    await settle();
    assert.deepEqual(seqs(h.win), range(0, 48));
    assert.equal(h.win.stitching, false);
    assert.equal(h.win.loadingOlder, null);
  });
});

// ------------------------------------------------------------------ further behaviour

describe("SessionWindow edge cases", () => {
  test("jsonEqual is structural: key order irrelevant, types strict", () => {
    assert.ok(jsonEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }));
    assert.ok(!jsonEqual({ a: 1 }, { a: true }));
    assert.ok(!jsonEqual({ a: 1 }, { a: "1" }));
    assert.ok(!jsonEqual([1, 2], [2, 1]));
    assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 2 }));
    assert.ok(!jsonEqual(null, {}));
    assert.ok(!jsonEqual([], {}));
    assert.ok(jsonEqual(1, 1.0));
  });

  test("a same-seq event that differs (1 vs true) forces a resync", async () => {
    const h = harness();
    const make = (s) => ({ seq: s, type: "tool/result", time: 5, data: { value: 1 } });
    await openWith(h, page(0, 1, { hasMore: false, make }));
    const generation = h.win.openGeneration;
    h.win.acceptLiveEvent({ seq: 1, type: "tool/result", time: 5, data: { value: true } });
    assert.equal(h.win.openGeneration, generation + 1);
    assert.equal(h.win.openState, "loading");
  });

  test("an empty Session opens with tail -1; seq 0 appends, a later seq is a gap", async () => {
    const h = harness();
    await openWith(h, { entries: [], hasMore: false });
    assert.equal(h.win.openState, "open");
    assert.equal(h.win.tailSeq, -1);
    h.win.acceptLiveEvent(ev(0));
    assert.deepEqual(seqs(h.win), [0]);

    const g = harness();
    await openWith(g, { entries: [], hasMore: false });
    g.win.acceptLiveEvent(ev(2));
    assert.equal(g.win.stitching, true);
    assert.deepEqual(g.win.events, []);
    g.calls[1].resolve(page(0, 2, { hasMore: false }));
    await settle();
    assert.deepEqual(seqs(g.win), [0, 1, 2]);
  });

  test("a failed repair merges what is buffered and does not spin", async () => {
    const h = harness();
    await openWith(h, page(0, 2, { hasMore: false }));
    h.win.acceptLiveEvent(ev(5));
    h.win.acceptLiveEvent(ev(3)); // arrives during the repair, contiguous with the tail
    h.calls[1].reject(new Error("history unavailable"));
    await settle();
    assert.deepEqual(seqs(h.win), [0, 1, 2, 3]);
    assert.equal(h.win.stitching, false);
    assert.deepEqual(
      h.win.liveBuffer.map((item) => item.event.seq),
      [5],
    );
    assert.equal(h.calls.length, 2, "no immediate retry");
    // The missing event arriving on its own drains the buffer without a pull.
    h.win.acceptLiveEvent(ev(4));
    assert.deepEqual(seqs(h.win), range(0, 5));
    assert.deepEqual(h.win.liveBuffer, []);
    assert.equal(h.calls.length, 2);
  });

  test("a repair that does not advance the tail stops", async () => {
    const h = harness();
    await openWith(h, page(0, 2, { hasMore: false }));
    h.win.acceptLiveEvent(ev(5));
    h.calls[1].resolve(page(0, 2, { hasMore: false }));
    await settle();
    assert.equal(h.calls.length, 2);
    assert.equal(h.win.stitching, false);
    assert.equal(h.win.liveBuffer.length, 1);
  });

  test("a gap seen while an older page loads is repaired after it", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    const older = h.win.loadOlder();
    h.win.acceptLiveEvent(ev(55));
    assert.equal(h.win.stitching, false);
    assert.equal(h.calls.length, 2);
    h.calls[1].resolve(page(0, 49, { hasMore: false }));
    await older;
    assert.equal(h.win.stitching, true, "finally started the repair");
    h.calls[2].resolve(page(40, 55, { hasMore: true }));
    await settle();
    assert.deepEqual(seqs(h.win), range(0, 55));
  });

  test("loadOlder stops paging on an empty or discontinuous page and keeps errors", async () => {
    const h = harness();
    await openWith(h, page(50, 52, { hasMore: true }));
    let older = h.win.loadOlder();
    h.calls[1].resolve(page(0, 48)); // ends at 48, not 49
    await older;
    assert.equal(h.win.hasMore, false);
    assert.deepEqual(seqs(h.win), [50, 51, 52]);

    const g = harness();
    await openWith(g, page(50, 52, { hasMore: true }));
    older = g.win.loadOlder();
    g.calls[1].reject(new Error("boom"));
    await older;
    assert.equal(g.win.olderError.message, "boom");
    assert.equal(g.win.hasMore, true);
    assert.equal(g.win.loadingOlder, null);
    older = g.win.loadOlder();
    g.calls[2].resolve({ entries: [], hasMore: true });
    await older;
    assert.equal(g.win.hasMore, false);
  });

  test("loadOlder is single-flight and needs an open window with more history", async () => {
    const h = harness();
    await h.win.loadOlder();
    assert.equal(h.calls.length, 0);
    await openWith(h, page(0, 2, { hasMore: false }));
    await h.win.loadOlder();
    assert.equal(h.calls.length, 1);
    const g = harness();
    await openWith(g, page(10, 12, { hasMore: true }));
    g.win.loadOlder();
    g.win.loadOlder();
    assert.equal(g.calls.length, 2);
  });

  test("open failure is an error state; resync recovers", async () => {
    const h = harness();
    const opened = h.win.open();
    h.calls[0].reject(new Error("offline"));
    await opened;
    assert.equal(h.win.openState, "error");
    assert.equal(h.win.error.message, "offline");
    h.win.acceptLiveEvent(ev(0));
    assert.deepEqual(h.win.events, [], "live frames are dropped while not open");
    const again = h.win.open();
    h.calls[1].resolve(page(0, 1, { hasMore: false }));
    await again;
    assert.equal(h.win.openState, "open");
    assert.deepEqual(seqs(h.win), [0, 1]);
  });

  test("close makes in-flight work stale", async () => {
    const h = harness();
    const opened = h.win.open();
    h.win.close();
    h.calls[0].resolve(page(0, 3, { hasMore: false }));
    await opened;
    assert.equal(h.win.openState, "cold");
    assert.deepEqual(h.win.events, []);
  });

  test("appends are reported incrementally, rebuilds as resets", async () => {
    const h = harness();
    await openWith(h, page(0, 1, { hasMore: false }));
    h.changes.length = 0;
    h.win.acceptLiveEvent(ev(2));
    assert.deepEqual(h.changes, [{ type: "append", entries: [{ event: ev(2), view: undefined }] }]);
    h.win.acceptLiveEvent(ev(1), receipt());
    assert.equal(h.changes[1].type, "view");
  });

  test("malformed live frames are ignored", async () => {
    const h = harness();
    await openWith(h, page(0, 1, { hasMore: false }));
    h.win.acceptLiveEvent(null);
    h.win.acceptLiveEvent({ seq: "2", type: "x" });
    h.win.acceptLiveEvent({ seq: -1, type: "x" });
    h.win.acceptLiveEvent({ seq: 1.5, type: "x" });
    assert.deepEqual(seqs(h.win), [0, 1]);
    assert.equal(h.calls.length, 1);
  });
});
