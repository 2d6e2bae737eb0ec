// Where a reconnect resumes: the committed mark (views frames, events that came with a view) and
// the end of a resumed connection's replay.

import assert from "node:assert/strict";
import { test } from "node:test";

import { StreamResume } from "../../src/dsh_host/web/static/resume.js";

const VIEW = { for: "event", view: {} };

test("a reconnect resumes from the last seq below the committed mark", () => {
  const resume = new StreamResume();
  // Nothing seen, or nothing known to be committed: no id (the history is read again).
  assert.equal(resume.resumeId(null), null);
  assert.equal(resume.resumeId("7"), null);
  // A connection's views frame: 5 events committed (and their views delivered).
  assert.equal(resume.views(5), null, "a connection that did not resume ends no replay");
  assert.equal(resume.committed, 5);
  assert.equal(resume.resumeId("7"), "4", "the uncommitted 5..7 are replayed, views included");
  assert.equal(resume.resumeId("3"), "3", "never later than the largest id seen");
  assert.equal(resume.resumeId(3), "3");
  assert.equal(resume.resumeId("x"), null, "an id that is not a seq: read again");
  // Raw events move nothing; an event with a view (a late view, a replayed one) does.
  resume.event(6, undefined);
  resume.event(7, null);
  assert.equal(resume.committed, 5);
  resume.event(6, VIEW);
  assert.equal(resume.committed, 7);
  resume.event(2, VIEW);
  resume.views(4);
  resume.views("9");
  resume.event(-1, VIEW);
  resume.event(1.5, VIEW);
  assert.equal(resume.committed, 7, "the mark never moves back, and ignores what is not a seq");
});

test("the first views frame of a resumed connection tells how far its replay reached", () => {
  const resume = new StreamResume();
  resume.views(3);
  resume.opened("2");
  resume.event(3, undefined);
  resume.event(4, VIEW);
  resume.event(2, VIEW); // a late view below what was reached
  assert.equal(resume.views(5), 4);
  assert.equal(resume.views(5), null, "later views frames end nothing");
  resume.opened("4");
  assert.equal(resume.views(5), 4, "an empty replay reached the id it resumed from");
  resume.opened(null);
  resume.event(9, undefined);
  assert.equal(resume.views(6), null);
});
