// dsh browser client: where an open Session's event stream picks up after a reconnect, so the
// page resumes without reading the history again. Pure module (no DOM, no timers); runs under
// Node as well.
//
// What the server sends (web/_stream.py): to a request carrying `Last-Event-ID: n`, every event
// above n (the replay; a committed event with its view), then one `event: views` frame whose
// `throughSeq` is the committed length of that snapshot, then live frames. A view comes only
// once its event is committed, live as a late view; so resuming from the largest id seen would
// miss the late views of events committed while the connection was down. Hence a reconnect
// resumes from the committed mark: every seq from it on is replayed, with its view.
//
// The committed mark: every seq below it is committed and its view (if any) has reached the
// page. It moves with each `views` frame (a connection's first one ends its replay; a later one
// follows a flush's late views) and with each event that arrives with a view (replay and late
// views go in seq order).
//
// The replay's end: when the first `views` frame of a resumed connection arrives, a window
// showing a seq the replay did not reach holds events the server no longer has (it restarted
// before they were stored); the caller then reads the history again.

function isSeq(value) {
  return Number.isSafeInteger(value) && value >= 0;
}

export class StreamResume {
  constructor() {
    /** Seqs below this are committed, with their views delivered. */
    this.committed = 0;
    this._replay = null; // {reached} while a resumed connection's replay runs
  }

  /**
   * The `Last-Event-ID` a (re)connection sends, from the largest id seen (null before any): the
   * last seq below the committed mark, or null (nothing to resume from: read the history).
   */
  resumeId(lastEventId) {
    if (lastEventId === null || lastEventId === undefined) return null;
    const text = String(lastEventId);
    if (!/^[0-9]+$/.test(text) || this.committed === 0) return null;
    return String(Math.min(Number(text), this.committed - 1));
  }

  /** A connection opened; `sentId` is the id it resumed from (null: it does not resume). */
  opened(sentId) {
    this._replay = sentId === null || sentId === undefined ? null : { reached: Number(sentId) };
  }

  /** A durable event frame: its `seq` and its sidecar `view` (undefined or null when none). */
  event(seq, view) {
    if (!isSeq(seq)) return;
    if (view !== undefined && view !== null) this.committed = Math.max(this.committed, seq + 1);
    if (this._replay !== null) this._replay.reached = Math.max(this._replay.reached, seq);
  }

  /**
   * A `views` frame with its `throughSeq`. Returns the highest seq the replay reached when the
   * frame ends a resumed connection's replay, else null.
   */
  views(throughSeq) {
    if (isSeq(throughSeq)) this.committed = Math.max(this.committed, throughSeq);
    const replay = this._replay;
    this._replay = null;
    return replay === null ? null : replay.reached;
  }
}
