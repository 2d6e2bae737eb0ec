// Client Session window: a contiguous, seq-ordered slice of one Session's log plus the
// optional sidecar view of each event, kept consistent while history pages, gap repairs,
// live frames and late (commit-aware) views race each other.
//
// Pure module: no DOM, no timers. Every asynchronous step is fenced by `openGeneration`, so
// results (and `finally` blocks) that belong to a window that has since been resynced or
// closed never touch the rebuilt state.

/** Raised when two sources disagree about the event at one seq; callers answer with resync. */
export class IdentityConflictError extends Error {
  constructor(message) {
    super(message);
    this.name = "IdentityConflictError";
  }
}

/**
 * Structural equality of JSON values: object key order is irrelevant, array order is not,
 * and values of different JSON types never compare equal (`1` is not `true`, `"1"` is not `1`).
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b) return false;
  if (typeof a !== "object" || a === null || b === null) return false;
  const aArray = Array.isArray(a);
  if (aArray !== Array.isArray(b)) return false;
  if (aArray) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) {
      if (!jsonEqual(a[i], b[i])) return false;
    }
    return true;
  }
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (const key of aKeys) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!jsonEqual(a[key], b[key])) return false;
  }
  return true;
}

function isEvent(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Number.isSafeInteger(value.seq) &&
    value.seq >= 0
  );
}

// `null` and `undefined` both mean "no sidecar".
function normalizeView(view) {
  return view === null ? undefined : view;
}

/**
 * Two sightings of one seq: the events must be identical and a defined later view wins (an
 * absent one never erases). Returns the combined entry (keeping the earlier event object),
 * or null when the events disagree.
 */
function combine(kept, next) {
  if (!jsonEqual(kept.event, next.event)) return null;
  return { event: kept.event, view: next.view === undefined ? kept.view : next.view };
}

function pageEntries(page) {
  const raw = page && Array.isArray(page.entries) ? page.entries : null;
  if (raw === null) throw new TypeError("history page has no entries array");
  const entries = raw.map((entry) => {
    if (!entry || !isEvent(entry.event)) throw new TypeError("history entry without an event");
    return { event: entry.event, view: normalizeView(entry.view) };
  });
  for (let i = 1; i < entries.length; i += 1) {
    if (entries[i].event.seq !== entries[i - 1].event.seq + 1) {
      throw new TypeError("history page is not one contiguous seq range");
    }
  }
  return entries;
}

export class SessionWindow {
  /**
   * @param {{loadPage: (q: {beforeSeq?: number, maxMessages: number}) =>
   *            Promise<{entries: Array<{event: object, view?: object}>, hasMore: boolean}>,
   *          onChange?: (window: SessionWindow, change: object) => void,
   *          pageSize?: number}} options
   */
  constructor({ loadPage, onChange, pageSize = 50 } = {}) {
    if (typeof loadPage !== "function") throw new TypeError("loadPage is required");
    this._loadPage = loadPage;
    this._onChange = typeof onChange === "function" ? onChange : () => {};
    this.pageSize = pageSize;
    this.events = [];
    this.views = [];
    this.baseSeq = 0;
    this.hasMore = false;
    this.openState = "cold";
    this.openGeneration = 0;
    this.loadingOlder = null;
    this.liveBuffer = [];
    this.stitching = false;
    this.error = null; // why the open failed (openState "error")
    this.olderError = null; // why the last older page failed
    this._openPromise = null;
  }

  /** Seq of the last event in the window; `baseSeq - 1` (normally -1) when it is empty. */
  get tailSeq() {
    const n = this.events.length;
    return n === 0 ? this.baseSeq - 1 : this.events[n - 1].seq;
  }

  /** The window as `{event, view}` pairs (view is undefined when there is none). */
  get entries() {
    return this.events.map((event, i) => ({ event, view: this.views[i] }));
  }

  // ---------------------------------------------------------------- lifecycle

  /** Load the tail page and start accepting live events. Idempotent while loading/open. */
  open() {
    if ((this.openState === "loading" || this.openState === "open") && this._openPromise) {
      return this._openPromise;
    }
    return this.resync();
  }

  /** Discard everything and reopen from the tail (used on reconnect and identity conflict). */
  resync() {
    this.openGeneration += 1;
    const generation = this.openGeneration;
    this._clear();
    this.openState = "loading";
    this._emit({ type: "reset" });
    this._openPromise = this._doOpen(generation);
    return this._openPromise;
  }

  /** Stop: every in-flight result becomes stale. */
  close() {
    this.openGeneration += 1;
    this._clear();
    this.openState = "cold";
    this._openPromise = null;
    this._emit({ type: "reset" });
  }

  _clear() {
    this.events = [];
    this.views = [];
    this.baseSeq = 0;
    this.hasMore = false;
    this.loadingOlder = null;
    this.liveBuffer = [];
    this.stitching = false;
    this.error = null;
    this.olderError = null;
  }

  async _doOpen(generation) {
    try {
      const page = await this._loadPage({ maxMessages: this.pageSize });
      if (generation !== this.openGeneration) return;
      this._merge(page);
      this.openState = "open";
      this._emit({ type: "reset" });
      if (this.liveBuffer.length > 0) this._repairGap();
    } catch (error) {
      if (generation !== this.openGeneration) return;
      if (error instanceof IdentityConflictError) {
        this.resync();
        return;
      }
      this.openState = "error";
      this.error = error;
      this._emit({ type: "state" });
    }
  }

  // ---------------------------------------------------------------- live events

  /** Feed one live frame (`view` undefined/null when the frame carries no sidecar). */
  acceptLiveEvent(event, view) {
    if (!isEvent(event)) return;
    view = normalizeView(view);
    const { seq } = event;

    // 1. A sidecar for an event below the in-flight older page's boundary stays with that page.
    const load = this.loadingOlder;
    if (load !== null && view !== undefined && seq < load.beforeSeq) {
      const stashed = load.views.get(seq);
      const combined = stashed === undefined ? { event, view } : combine(stashed, { event, view });
      if (combined === null) {
        this.resync();
        return;
      }
      load.views.set(seq, combined);
      return;
    }

    // 2. Opening or stitching: the merge will place it.
    if (this.openState === "loading" || this.stitching) {
      this.liveBuffer.push({ event, view });
      return;
    }

    // 3. Not open: nothing to keep consistent.
    if (this.openState !== "open") return;

    // 4. Same seq as a retained event (or older than the window).
    const tail = this.tailSeq;
    if (seq <= tail) {
      if (seq < this.baseSeq) return;
      const index = seq - this.baseSeq;
      const kept = { event: this.events[index], view: this.views[index] };
      const combined = combine(kept, { event, view });
      if (combined === null) {
        this.resync();
        return;
      }
      if (!jsonEqual(this.views[index], combined.view)) {
        this.views[index] = combined.view;
        this._emit({ type: "view", seq, index });
      }
      return;
    }

    // 5. A true gap: buffer and repair from the tail.
    if (seq > tail + 1) {
      this.liveBuffer.push({ event, view });
      if (this.loadingOlder === null) this._repairGap();
      return;
    }

    // 6. The next event.
    if (this.liveBuffer.length > 0) {
      // The missing event arrived on its own: buffered successors may now be contiguous.
      this.liveBuffer.push({ event, view });
      this._mergeOrResync(undefined);
      return;
    }
    this.events.push(event);
    this.views.push(view);
    this._emit({ type: "append", entries: [{ event, view }] });
  }

  // ---------------------------------------------------------------- merge

  /**
   * Rebuild the window from an optional contiguous snapshot page plus the live buffer.
   * Throws IdentityConflictError when a retained or buffered event disagrees with it.
   * Returns the change descriptor (or null when nothing visible changed).
   */
  _merge(page) {
    const oldEvents = this.events;
    const oldViews = this.views;
    const oldBase = this.baseSeq;
    const oldTail = this.tailSeq;
    let events = oldEvents;
    let views = oldViews;
    let base = oldBase;
    let hasMore = this.hasMore;
    let rewritten = false;

    if (page !== undefined) {
      const entries = pageEntries(page);
      if (entries.length === 0) {
        if (oldEvents.length > 0) {
          throw new IdentityConflictError("empty snapshot for a non-empty window");
        }
        hasMore = Boolean(page.hasMore);
      } else {
        const first = entries[0].event.seq;
        const last = entries[entries.length - 1].event.seq;
        const merged = entries.map(({ event, view }) => {
          if (event.seq >= oldBase && event.seq <= oldTail) {
            const index = event.seq - oldBase;
            const kept = { event: oldEvents[index], view: oldViews[index] };
            const combined = combine(kept, { event, view });
            if (combined === null) {
              throw new IdentityConflictError(`snapshot disagrees at seq ${event.seq}`);
            }
            if (!jsonEqual(kept.view, combined.view)) rewritten = true;
            return combined;
          }
          return { event, view };
        });
        let prefixEnd = 0;
        if (oldEvents.length === 0 || first <= oldBase || first > oldTail + 1) {
          // Install the snapshot as the new window (a disjoint snapshot moves the base).
          base = first;
          hasMore = Boolean(page.hasMore);
          rewritten = rewritten || oldEvents.length > 0;
          if (oldEvents.length > 0 && first <= oldBase && last < oldBase - 1) {
            throw new IdentityConflictError("snapshot ends below the retained window");
          }
        } else {
          // The snapshot overlaps or adjoins the tail: keep the retained prefix.
          prefixEnd = first - oldBase;
        }
        events = oldEvents.slice(0, prefixEnd).concat(merged.map((e) => e.event));
        views = oldViews.slice(0, prefixEnd).concat(merged.map((e) => e.view));
        if (oldEvents.length > 0 && oldTail > last && last >= oldBase - 1) {
          // Retained events newer than the snapshot stay (they were verified on arrival).
          const from = last + 1 - oldBase;
          events = events.concat(oldEvents.slice(from));
          views = views.concat(oldViews.slice(from));
        }
      }
    }

    // Deduplicate the buffer by seq: identical events only, a later defined view wins.
    const bySeq = new Map();
    for (const item of this.liveBuffer) {
      const previous = bySeq.get(item.event.seq);
      const combined = previous === undefined ? item : combine(previous, item);
      if (combined === null) {
        throw new IdentityConflictError(`live frames disagree at seq ${item.event.seq}`);
      }
      bySeq.set(item.event.seq, combined);
    }
    const buffered = [...bySeq.values()].sort((x, y) => x.event.seq - y.event.seq);

    if (events === oldEvents) {
      events = oldEvents.slice();
      views = oldViews.slice();
    }
    const keep = [];
    for (const item of buffered) {
      const { seq } = item.event;
      const tail = events.length === 0 ? base - 1 : events[events.length - 1].seq;
      if (seq < base) continue;
      if (seq <= tail) {
        const index = seq - base;
        const combined = combine({ event: events[index], view: views[index] }, item);
        if (combined === null) {
          throw new IdentityConflictError(`buffered event disagrees at seq ${seq}`);
        }
        if (!jsonEqual(views[index], combined.view)) {
          views[index] = combined.view;
          if (seq <= oldTail && seq >= oldBase) rewritten = true;
        }
        continue;
      }
      if (seq === tail + 1) {
        events.push(item.event);
        views.push(item.view);
        continue;
      }
      keep.push(item);
    }

    // Commit.
    const sameBase = base === oldBase;
    this.events = events;
    this.views = views;
    this.baseSeq = base;
    this.hasMore = hasMore;
    this.liveBuffer = keep;

    if (!rewritten && sameBase && oldEvents.length <= events.length) {
      const appended = [];
      for (let i = oldEvents.length; i < events.length; i += 1) {
        appended.push({ event: events[i], view: views[i] });
      }
      return appended.length > 0 ? { type: "append", entries: appended } : null;
    }
    return { type: "reset" };
  }

  // Merge and emit; on an identity conflict resync instead. Returns false when resynced.
  _mergeOrResync(page) {
    let change;
    try {
      change = this._merge(page);
    } catch (error) {
      if (error instanceof IdentityConflictError) {
        this.resync();
        return false;
      }
      throw error;
    }
    this._emit(change ?? { type: "state" });
    return true;
  }

  // ---------------------------------------------------------------- gap repair

  /** Single-flight tail pulls until no later gap remains or the tail stops advancing. */
  async _repairGap() {
    if (this.stitching || this.openState !== "open") return;
    const generation = this.openGeneration;
    this.stitching = true;
    try {
      for (;;) {
        const before = this.tailSeq;
        let page;
        try {
          page = await this._loadPage({ maxMessages: this.pageSize });
        } catch {
          if (generation !== this.openGeneration || this.openState !== "open") return;
          // Keep what is buffered and contiguous; no immediate retry (avoid spinning). The
          // next out-of-order live event starts another repair.
          this._mergeOrResync(undefined);
          return;
        }
        if (generation !== this.openGeneration || this.openState !== "open") return;
        let merged;
        try {
          merged = this._mergeOrResync(page);
        } catch {
          // A malformed snapshot counts as a failed pull.
          this._mergeOrResync(undefined);
          return;
        }
        if (!merged) return;
        if (this.liveBuffer.length === 0 || this.tailSeq <= before) return;
      }
    } finally {
      if (generation === this.openGeneration) this.stitching = false;
    }
  }

  // ---------------------------------------------------------------- older pages

  /** Prepend the page that ends just before `baseSeq`. */
  async loadOlder() {
    if (this.openState !== "open" || !this.hasMore || this.loadingOlder !== null) return;
    const generation = this.openGeneration;
    const load = { beforeSeq: this.baseSeq, views: new Map() };
    this.loadingOlder = load;
    this.olderError = null;
    this._emit({ type: "state" });
    try {
      const page = await this._loadPage({
        beforeSeq: load.beforeSeq,
        maxMessages: this.pageSize,
      });
      if (generation !== this.openGeneration || this.loadingOlder !== load) return;
      if (this.baseSeq !== load.beforeSeq) return; // a gap repair replaced the window
      let entries;
      try {
        entries = pageEntries(page);
      } catch {
        this.hasMore = false;
        return;
      }
      if (entries.length === 0) {
        this.hasMore = false;
        return;
      }
      if (entries[entries.length - 1].event.seq + 1 !== load.beforeSeq) {
        this.hasMore = false; // not continuous with the window: stop paging
        return;
      }
      for (const entry of entries) {
        const stashed = load.views.get(entry.event.seq);
        if (stashed === undefined) continue;
        const combined = combine(entry, stashed);
        if (combined === null) {
          this.resync();
          return;
        }
        entry.view = combined.view;
      }
      this.events = entries.map((e) => e.event).concat(this.events);
      this.views = entries.map((e) => e.view).concat(this.views);
      this.baseSeq = entries[0].event.seq;
      this.hasMore = Boolean(page.hasMore);
      this._emit({ type: "prepend", count: entries.length });
    } catch (error) {
      if (generation !== this.openGeneration || this.loadingOlder !== load) return;
      this.olderError = error;
    } finally {
      if (generation === this.openGeneration && this.loadingOlder === load) {
        this.loadingOlder = null;
        this._emit({ type: "state" });
        if (this.liveBuffer.length > 0) this._repairGap();
      }
    }
  }

  // ---------------------------------------------------------------- notify

  _emit(change) {
    try {
      this._onChange(this, change);
    } catch (error) {
      // A rendering failure must not corrupt the window's own state machine.
      globalThis.console?.error?.("SessionWindow onChange failed", error);
    }
  }
}
