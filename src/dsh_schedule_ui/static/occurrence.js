// ui-schedule: what a delivered occurrence is, as plain data. One occurrence is a reminder's id
// and its `occurrenceAt`. This module owns what became of it (`occurrenceState` from the
// Session's events, `itemState` from a view item or a board row), the Snooze menu's times on the
// wall clock of the browser's zone, what a Done's or a Snooze's answer means and how a failure
// reads, and the key the places showing one occurrence share. No DOM, no network: the pure core
// the card, the Reminders panel and the boards build on.

import { instantMs, scoped } from "./schedule-words.js";

export const EVENT_TYPE = "schedule/change";

export const ACK_TOOL = "schedule_ack";
export const SNOOZE_TOOL = "schedule_snooze";

/** Whether `a` and `b` are one instant (ISO strings in any offset). */
export function sameInstant(a, b) {
  const ms = instantMs(a);
  return ms !== null && ms === instantMs(b);
}

function changeOf(event, operation) {
  if (event?.type !== EVENT_TYPE) return null;
  const data = event.data;
  return data !== null && typeof data === "object" && data.operation === operation ? data : null;
}

/**
 * What became of one delivered occurrence, from the Session's events: `{done, snoozedUntil}`
 * (`done`: an ack of it was recorded; `snoozedUntil`: the due instant of the reminder created
 * to snooze it, else null). `findEvent(predicate)` answers the latest loaded event that matches
 * (or null); without it nothing is known.
 */
export function occurrenceState(findEvent, scheduleId, occurrenceAt) {
  if (typeof findEvent !== "function") return { done: false, snoozedUntil: null };
  const ack = findEvent((event) => {
    const data = changeOf(event, "ack");
    return data?.id === scheduleId && sameInstant(data.occurrenceAt, occurrenceAt);
  });
  const snooze = findEvent((event) => {
    const from = changeOf(event, "create")?.schedule?.snoozedFrom;
    return from?.id === scheduleId && sameInstant(from.occurrenceAt, occurrenceAt);
  });
  const until = snooze?.data.schedule.scheduledAt;
  return { done: Boolean(ack), snoozedUntil: instantMs(until) === null ? null : until };
}

/** The same from a Reminders view item or a delivered board row's data (`done`, `snoozedUntil`). */
export function itemState(item) {
  const until = item?.snoozedUntil;
  return { done: item?.done === true, snoozedUntil: instantMs(until) === null ? null : until };
}

// ---- snooze times, on the wall clock of the browser's zone

const pad2 = (value) => String(value).padStart(2, "0");

function zoneParts(ms, timeZone) {
  const parts = {};
  const format = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  });
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  return parts;
}

/** The offset of `timeZone` from UTC at `ms`, in minutes (east of Greenwich positive). */
export function zoneOffsetMinutes(ms, timeZone) {
  const p = zoneParts(ms, timeZone);
  const [year, month, day, hour, minute, second] = [
    p.year,
    p.month,
    p.day,
    p.hour,
    p.minute,
    p.second,
  ].map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
}

/**
 * The instant of the wall time `date` (`YYYY-MM-DD`) `time` (`HH:MM`) in `timeZone`. A wall
 * time a clock change skips is read after the change ("02:30" becomes 03:30); one it repeats is
 * the later of the two.
 */
export function wallInstant(date, time, timeZone) {
  const [year, month, day] = date.split("-").map(Number);
  const [hour, minute] = time.split(":").map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const first = wall - zoneOffsetMinutes(wall, timeZone) * 60_000;
  return wall - zoneOffsetMinutes(first, timeZone) * 60_000;
}

/** `ms` as `2026-12-04T09:00:00+01:00`: the wall time of `timeZone` with its offset. */
export function offsetIso(ms, timeZone) {
  const offset = zoneOffsetMinutes(ms, timeZone);
  const wall = new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000).toISOString().slice(0, 19);
  const size = Math.abs(offset);
  return `${wall}${offset < 0 ? "-" : "+"}${pad2(Math.floor(size / 60))}:${pad2(size % 60)}`;
}

/** `ms` as a datetime-local input shows it in `timeZone`: `YYYY-MM-DDTHH:MM`. */
export function localInputValue(ms, timeZone) {
  const p = zoneParts(ms, timeZone);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

/** The `YYYY-MM-DD` after `date`. */
function nextDate(date) {
  const [year, month, day] = date.split("-").map(Number);
  return new Date(Date.UTC(year, month - 1, day + 1)).toISOString().slice(0, 10);
}

/**
 * The Snooze menu at `now` (epoch ms) in `timeZone`: `[{label, args}]` for 10 minutes, 1 hour
 * and tomorrow at 09:00 on that zone's wall clock (`label`: a message name; `args`: what
 * `schedule_snooze` gets besides the occurrence).
 */
export function snoozeChoices(now, timeZone) {
  const today = localInputValue(now, timeZone).slice(0, 10);
  const tomorrow = wallInstant(nextDate(today), "09:00", timeZone);
  return [
    { label: "act.minutes10", args: { minutes: 10 } },
    { label: "act.hour1", args: { minutes: 60 } },
    { label: "act.tomorrow", args: { until: offsetIso(tomorrow, timeZone) } },
  ];
}

const LOCAL_DATE = "([0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))";
const LOCAL_TIME = "((?:[01][0-9]|2[0-3]):[0-5][0-9])(?::[0-5][0-9](?:\\.[0-9]+)?)?";
const LOCAL_INPUT = new RegExp(`^${LOCAL_DATE}T${LOCAL_TIME}$`);

/**
 * A datetime-local value (the wall clock of `timeZone`) as `schedule_snooze`'s `until`, or null
 * when it is malformed or not after `now`.
 */
export function pickedUntil(value, now, timeZone) {
  const match = typeof value === "string" ? LOCAL_INPUT.exec(value) : null;
  if (match === null) return null;
  const ms = wallInstant(match[1], match[2], timeZone);
  return ms > now ? offsetIso(ms, timeZone) : null;
}

/** "18:10" when `ms` is today on `time`'s clock, else as the card's times read ("tomorrow 09:00").
 */
export function untilText(ms, time) {
  const shown = time.absolute(ms);
  return time.day(ms) === time.day(time.now()) ? shown.slice(shown.lastIndexOf(" ") + 1) : shown;
}

// ---- Done and Snooze

/** What an ack's or a snooze's answer means: `{done: true}`, `{snoozedUntil}` or `{error}`. */
export function actionOutcome(tool, value) {
  if (value !== null && typeof value === "object" && typeof value.code !== "string") {
    if (tool === ACK_TOOL && value.done === true) return { done: true };
    if (tool === SNOOZE_TOOL && instantMs(value.scheduledAt) !== null) {
      return { snoozedUntil: value.scheduledAt };
    }
  }
  return { error: value ?? { code: "unknown" } };
}

const OWN_CODES = Object.freeze({
  already_done: "act.alreadyDone",
  already_snoozed: "act.alreadySnoozed",
  not_found: "act.notFound",
});

/**
 * A failed Done or Snooze in plain words: the plugin's refusals in its own sentences, anything
 * else as the host words it (`errorText`), else by its message.
 */
export function actionErrorText(error, t, errorText) {
  const s = scoped(t);
  const code = error?.code;
  if (typeof code === "string" && Object.hasOwn(OWN_CODES, code)) return s(OWN_CODES[code]);
  if (typeof errorText === "function") return errorText(error);
  const message = error?.message;
  return typeof message === "string" && message !== "" ? message : s("act.failed");
}

/** The key of one occurrence in one Session: the places showing it share its controls' state. */
export function occurrenceKey(sessionId, scheduleId, occurrenceAt) {
  return `${sessionId ?? ""}\u0000${scheduleId}@${instantMs(occurrenceAt)}`;
}

/** A helper module of the plugin: it registers nothing (the modules that import it do). */
export default function register() {}
