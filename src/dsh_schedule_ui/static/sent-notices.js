// ui-schedule: where a delivery was sent outside the page. This module owns which of a
// Session's notices belong to one delivered occurrence (`occurrenceNotices`), how they read
// ("Sent to ntfy", "Could not reach e-mail: timeout": `noticeLines`), and the NoticeWatch, which
// reads a Session's notices through the `load()` it is given once for all the cards shown at a
// time, and again a few times while one is still being sent. No DOM: the card shows the lines.

import { scoped } from "./schedule-words.js";
import { occurrenceKey, sameInstant } from "./occurrence.js";

/** How long a card waits before reading the notices again while one is still being sent. */
export const NOTICE_RETRY_MS = Object.freeze([2_000, 4_000, 8_000, 16_000, 30_000]);

const NOTICE_KEY = /^(.+)@([^@#]+)(?:#([0-9]+))?$/;

/**
 * The notices of one delivered occurrence among a Session's (each `key` is
 * `<sessionId>/schedule/<id>@<occurrenceAt>[#n]/<channel>`): the first notice per channel, as
 * `{channel, label, status, error}` (re-notifications, `#n`, are left out; so is anything
 * malformed).
 */
export function occurrenceNotices(notices, sessionId, scheduleId, occurrenceAt) {
  if (!Array.isArray(notices)) return [];
  const prefix = `${sessionId}/schedule/`;
  const out = [];
  for (const notice of notices) {
    if (notice === null || typeof notice !== "object") continue;
    const { key, channel, label, status, error } = notice;
    if (typeof key !== "string" || typeof channel !== "string" || channel === "") continue;
    if (!key.startsWith(prefix) || !key.endsWith(`/${channel}`)) continue;
    const match = NOTICE_KEY.exec(key.slice(prefix.length, key.length - channel.length - 1));
    if (match === null || match[3] !== undefined) continue;
    if (match[1] !== scheduleId || !sameInstant(match[2], occurrenceAt)) continue;
    out.push({
      channel,
      label: typeof label === "string" && label !== "" ? label : channel,
      status: typeof status === "string" ? status : "",
      error: typeof error === "string" && error !== "" ? error : null,
    });
  }
  return out;
}

const SENT_GROUPS = [
  [["delivered"], "sent.to", "sent"],
  [["pending", "sending"], "sent.sending", "sending"],
  [["unknown"], "sent.unknown", "unknown"],
];

/**
 * Where a delivery was sent, one line each (`[{kind, text}]`): "Sent to A, B", "Sending to C…",
 * "Not sure it reached D", then "Could not reach E: timeout" for each failure (the error as it
 * was given). A withdrawn notice (done or snoozed before it went) says nothing.
 */
export function noticeLines(entries, t) {
  const s = scoped(t);
  const lines = [];
  for (const [statuses, key, kind] of SENT_GROUPS) {
    const labels = [
      ...new Set(entries.filter((e) => statuses.includes(e.status)).map((e) => e.label)),
    ];
    if (labels.length === 0) continue;
    lines.push({ kind, text: s(key, { labels: labels.join(s("sent.list")) }) });
  }
  for (const entry of entries) {
    if (entry.status !== "failed") continue;
    const text =
      entry.error === null
        ? s("sent.failedBare", { label: entry.label })
        : s("sent.failed", { label: entry.label, error: entry.error });
    lines.push({ kind: "failed", text });
  }
  return lines;
}

function stillSending(entries) {
  return entries.some((entry) => entry.status === "pending" || entry.status === "sending");
}

function payloadNotices(payload) {
  if (Array.isArray(payload)) return payload;
  return Array.isArray(payload?.notices) ? payload.notices : [];
}

/**
 * The notices of the Sessions whose cards are shown. A Session's are read (once for all the
 * cards shown at a time) when a card shows a delivery no read has covered yet, then again after
 * each of `retries` (ms) while a shown card's notice is still being sent, and no more: a read
 * that fails is not repeated. `setTimer(callback, ms)` schedules a read.
 */
export class NoticeWatch {
  constructor({
    setTimer = (callback, ms) => globalThis.setTimeout(callback, ms),
    retries = NOTICE_RETRY_MS,
  } = {}) {
    this._setTimer = setTimer;
    this._retries = retries;
    this._sessions = new Map();
  }

  /**
   * Show where occurrence `scheduleId`/`occurrenceAt` of `sessionId` was sent through
   * `update(entries)` after every read (`occurrenceNotices`), while `root` is in the page;
   * `load()` reads the Session's notices. Returns what the last read said (null: none yet).
   */
  watch({ sessionId, scheduleId, occurrenceAt, load, update, root }) {
    let session = this._sessions.get(sessionId);
    if (session === undefined) {
      session = {
        id: sessionId,
        notices: null,
        load,
        cards: new Set(),
        covered: new Set(),
        queued: false,
        reading: false,
        again: false,
        timer: false,
        tries: 0,
      };
      this._sessions.set(sessionId, session);
    }
    session.load = load;
    const card = { scheduleId, occurrenceAt, update, root };
    session.cards.add(card);
    if (!session.covered.has(occurrenceKey(sessionId, scheduleId, occurrenceAt))) {
      session.tries = 0;
      this._queue(session);
    }
    if (session.notices === null) return null;
    return occurrenceNotices(session.notices, sessionId, scheduleId, occurrenceAt);
  }

  _queue(session) {
    if (session.reading) {
      session.again = true;
      return;
    }
    if (session.queued) return;
    session.queued = true;
    // After the cards rendered in this task joined: one read for all of them.
    queueMicrotask(() => {
      session.queued = false;
      this._read(session);
    });
  }

  async _read(session) {
    session.reading = true;
    const asked = [...session.cards];
    try {
      session.notices = payloadNotices(await session.load());
    } catch {
      // Quiet: the cards keep saying what the last read said.
    }
    session.reading = false;
    for (const card of asked) {
      session.covered.add(occurrenceKey(session.id, card.scheduleId, card.occurrenceAt));
    }
    let sending = false;
    for (const card of [...session.cards]) {
      if (card.root.isConnected === false) {
        session.cards.delete(card);
        continue;
      }
      const { scheduleId, occurrenceAt } = card;
      const entries = occurrenceNotices(session.notices, session.id, scheduleId, occurrenceAt);
      card.update(session.notices === null ? null : entries);
      sending ||= stillSending(entries);
    }
    if (session.again) {
      session.again = false;
      this._queue(session);
    } else if (sending && !session.timer && session.tries < this._retries.length) {
      session.timer = true;
      this._setTimer(() => {
        session.timer = false;
        this._queue(session);
      }, this._retries[session.tries]);
      session.tries += 1;
    }
  }
}

/** A helper module of the plugin: it registers nothing (the modules that import it do). */
export default function register() {}
