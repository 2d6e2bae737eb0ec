// ui-schedule: the Reminders panel's data, as plain data. This module owns reading the
// `schedule.reminders` view (`panelState`: pending reminders and the latest deliveries, bad
// items dropped), the record a pending reminder shows (what an Edit sends as `expected`), what
// a Cancel's and an Edit's answers mean, the Edit form's fields (how an item's timing is edited,
// its starting values, what is wrong with what was typed, the `schedule_update` arguments for
// what changed), and the panel's state on one page (each Cancel's and each open Edit form's, by
// Session and reminder). No DOM, no network.

import { localInputValue } from "./occurrence.js";
import { clockText, instantMs, isoWeekdays, scoped } from "./schedule-words.js";

export const VIEW_NAME = "schedule.reminders";
export const DELETE_TOOL = "schedule_delete";
export const UPDATE_TOOL = "schedule_update";
/** The longest title `schedule_update` accepts. */
export const TITLE_MAX_CHARS = 120;

const CLOCK = /^([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,3}))?$/;

function nonEmptyString(value) {
  return typeof value === "string" && value !== "";
}

function positiveInteger(value) {
  return Number.isSafeInteger(value) && value > 0;
}

function activeItem(item) {
  if (item === null || typeof item !== "object") return null;
  const { scheduleId, prompt, kind, nextAt, everySeconds, afterSeconds } = item;
  if (!nonEmptyString(scheduleId) || typeof prompt !== "string") return null;
  const due = instantMs(nextAt);
  if (due === null) return null;
  const out = { scheduleId, prompt, kind: typeof kind === "string" ? kind : "after", nextAt, due };
  if (typeof everySeconds === "number" && everySeconds > 0) out.everySeconds = everySeconds;
  if (positiveInteger(afterSeconds)) out.afterSeconds = afterSeconds;
  if (nonEmptyString(item.title)) out.title = item.title;
  if (typeof item.time === "string" && CLOCK.test(item.time)) out.time = item.time;
  if (nonEmptyString(item.timeZone)) out.timeZone = item.timeZone;
  const weekdays = isoWeekdays(item.weekdays);
  if (weekdays !== null) out.weekdays = weekdays;
  if (nonEmptyString(item.expression)) out.expression = item.expression;
  return out;
}

function recentItem(item) {
  if (item === null || typeof item !== "object") return null;
  const { scheduleId, prompt, occurrenceAt, deliveredAt, lateMs, lateReason } = item;
  if (!nonEmptyString(scheduleId) || typeof prompt !== "string") return null;
  if (instantMs(occurrenceAt) === null || instantMs(deliveredAt) === null) return null;
  const out = {
    scheduleId,
    prompt,
    occurrenceAt,
    deliveredAt,
    lateMs: typeof lateMs === "number" && Number.isFinite(lateMs) ? lateMs : 0,
    lateReason: lateReason === "busy" || lateReason === "offline" ? lateReason : null,
  };
  if (nonEmptyString(item.title)) out.title = item.title;
  if (item.done === true) out.done = true;
  if (instantMs(item.snoozedUntil) !== null) out.snoozedUntil = item.snoozedUntil;
  return out;
}

/** The panel's data from a (possibly malformed) view: `{active, recent}`, bad items dropped. */
export function panelState(view) {
  const pick = (list, make) =>
    Array.isArray(list) ? list.map(make).filter((item) => item !== null) : [];
  const ok = view !== null && typeof view === "object";
  return {
    active: ok ? pick(view.active, activeItem) : [],
    recent: ok ? pick(view.recent, recentItem) : [],
  };
}

/**
 * The record a pending item shows, in the record shape of a `schedule/change` create (`{id,
 * kind, prompt, <the kind's fields>, scheduledAt, title?}`): what an Edit sends as `expected`.
 */
export function recordOf(item) {
  const record = { id: item.scheduleId, kind: item.kind, prompt: item.prompt };
  for (const field of RECORD_FIELDS) {
    if (item[field] !== undefined) record[field] = item[field];
  }
  record.scheduledAt = item.nextAt;
  if (item.title !== undefined) record.title = item.title;
  return record;
}

const RECORD_FIELDS = ["afterSeconds", "everySeconds", "time", "timeZone", "weekdays", "expression"];
/** Whether two records are the same record. */
export function sameRecord(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What a Cancel's answer means: `"gone"` (deleted, or already gone) or `{error}` to show. */
export function cancelOutcome(value) {
  if (value !== null && typeof value === "object") {
    if (value.deleted === true || value.code === "schedule_not_found") return "gone";
    if (typeof value.code === "string") return { error: value };
  }
  return { error: { code: "unknown" } };
}

/**
 * What an Edit's answer means: `"saved"` (the record view), `"unchanged"` (`updated: false`
 * without a code: nothing to write), `"conflict"` (the reminder changed since the form showed
 * it), or `{error}` to show.
 */
export function updateOutcome(value) {
  if (value !== null && typeof value === "object") {
    if (value.code === "schedule_conflict") return "conflict";
    if (typeof value.code === "string") return { error: value };
    if (value.updated === false) return "unchanged";
    if (nonEmptyString(value.id)) return "saved";
  }
  return { error: { code: "unknown" } };
}

/** An Edit's failure in plain words (the form's own sentences for the codes that need them). */
export function updateErrorText(error, ctx) {
  const s = scoped(ctx.t);
  const own = {
    schedule_not_found: "edit.gone",
    schedule_ended: "edit.ended",
    invalid_rule: "edit.badRule",
    invalid_selector: "edit.badRule",
  }[error?.code];
  return s("edit.failed", { reason: own === undefined ? ctx.errorText(error) : s(own) });
}

// ---- the Edit form's fields

/** How an item's timing is edited: "at" (date and time), "every", "daily", "weekly",
 * "cronTime" (a cron rule at one time of day: that time), "cron" (the expression), or null. */
export function editShape(item) {
  const calendar = item.timeZone !== undefined;
  switch (item.kind) {
    case "after":
    case "at":
      return "at";
    case "every":
      return item.everySeconds !== undefined ? "every" : null;
    case "daily":
      return calendar && item.time !== undefined ? "daily" : null;
    case "weekly":
      return calendar && item.time !== undefined && item.weekdays !== undefined ? "weekly" : null;
    case "cron":
      if (!calendar || item.expression === undefined) return null;
      return /^[0-9]+ [0-9]+ /.test(item.expression) ? "cronTime" : "cron";
    default:
      return null;
  }
}

/** The `YYYY-MM-DD` date and `HH:MM` time of `ms` on the wall clock of `timeZone`. */
export function wallClock(ms, timeZone) {
  const [date, time] = localInputValue(ms, timeZone).split("T");
  return { date, time };
}

/** A rule's `HH:mm:ss.SSS` as a time input shows it: `HH:MM`, with the seconds when not zero. */
function inputClock(time) {
  const shown = clockText(time);
  return shown.length > 5 ? time.slice(0, shown.length > 8 ? 12 : 8) : shown;
}

/** A time input's value as a rule's time: `HH:MM` gains `:00`. */
function ruleClock(value) {
  return value.length === 5 ? `${value}:00` : value;
}

/** The form's starting values for `item` (strings; `weekdays` an array). */
export function formValues(item, ctx) {
  const values = { prompt: item.prompt };
  if (item.title !== undefined) values.title = item.title;
  switch (editShape(item)) {
    case "at":
      Object.assign(values, wallClock(item.due, ctx.time.timeZone));
      break;
    case "every":
      values.every = String(item.everySeconds / 60);
      break;
    case "weekly":
      values.weekdays = item.weekdays;
    // falls through: a weekly rule has a time too
    case "daily":
      values.time = inputClock(item.time);
      break;
    case "cronTime": {
      const [minute, hour] = item.expression.split(" ").map(Number);
      values.time = `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
      break;
    }
    case "cron":
      values.expression = item.expression;
      break;
  }
  return values;
}

const DATE_INPUT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const TIME_INPUT = /^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,3})?)?$/;

/** The first thing wrong with `values` (a message key), or null. */
export function formProblem(item, values) {
  if (values.prompt.trim() === "") return "edit.needText";
  if (item.title !== undefined) {
    const title = values.title.trim();
    if (title === "" || title.length > TITLE_MAX_CHARS) return "edit.needTitle";
  }
  switch (editShape(item)) {
    case "at":
      return DATE_INPUT.test(values.date) && TIME_INPUT.test(values.time) ? null : "edit.needDate";
    case "every": {
      const minutes = Number(values.every);
      return values.every.trim() !== "" && Number.isFinite(minutes) && minutes > 0
        ? null
        : "edit.needEvery";
    }
    case "weekly":
      if (values.weekdays.length === 0) return "edit.needDays";
    // falls through: a weekly rule has a time too
    case "daily":
    case "cronTime":
      return TIME_INPUT.test(values.time) ? null : "edit.needTime";
    case "cron":
      return values.expression.trim().split(/\s+/).length === 5 ? null : "edit.needExpression";
    default:
      return null;
  }
}

/**
 * The `schedule_update` arguments for what changed between `initial` and `values`: `{id,
 * prompt?, title?, <one selector>?, expected}`, or null when nothing did. A rule keeps its kind
 * and zone; a one-time reminder's new time is a local `at` in the browser's zone. `expected` is
 * the record the form showed (left out for an after reminder whose view lacks afterSeconds).
 */
export function updateArguments(item, initial, values, ctx) {
  const args = { id: item.scheduleId };
  const prompt = values.prompt.trim();
  if (prompt !== item.prompt) args.prompt = prompt;
  const title = item.title === undefined ? undefined : values.title.trim();
  if (title !== item.title) args.title = title;
  const shape = editShape(item);
  const ruleFields = ["date", "time", "every", "weekdays", "expression"];
  const changed = ruleFields.some((field) => String(values[field]) !== String(initial[field]));
  if (changed) {
    const zone = item.timeZone;
    if (shape === "at") {
      const time_zone = ctx.time.timeZone ?? "UTC";
      args.at = { date: values.date, time: ruleClock(values.time), time_zone };
    } else if (shape === "every") {
      args.every_seconds = Math.round(Number(values.every) * 60);
    } else if (shape === "daily") {
      args.daily = { time: ruleClock(values.time), time_zone: zone };
    } else if (shape === "weekly") {
      const weekdays = [...values.weekdays].sort((a, b) => a - b);
      args.weekly = { time: ruleClock(values.time), time_zone: zone, weekdays };
    } else if (shape === "cronTime") {
      const [hour, minute] = values.time.split(":").map(Number);
      const rest = item.expression.split(" ").slice(2).join(" ");
      args.cron = { expression: `${minute} ${hour} ${rest}`, time_zone: zone };
    } else {
      args.cron = { expression: values.expression.trim().split(/\s+/).join(" "), time_zone: zone };
    }
  }
  if (Object.keys(args).length === 1) return null;
  // An after reminder's record holds its afterSeconds: without it in the view, the record shown
  // is not the whole record, and the tool then reads the current one itself.
  if (item.kind !== "after" || item.afterSeconds !== undefined) args.expected = recordOf(item);
  return args;
}

// ---- the panel's state on one page

/** The key of reminder `scheduleId` of the panel's Session: its Cancel's and its Edit's state. */
export function cancelKey(ctx, scheduleId) {
  return `${ctx.sessionId}\u0000${scheduleId}`;
}

/** The open Edit forms of the panel's state (by `cancelKey`). */
export function editsOf(state) {
  if (!(state.edits instanceof Map)) state.edits = new Map();
  return state.edits;
}

/**
 * The panel's state on one page: a Map of Cancel states with `edits` (the open Edit forms, by
 * the same keys) and `rerender()`, which rebuilds the panel.
 */
export function createCancels(rerender) {
  const cancels = new Map();
  cancels.edits = new Map();
  cancels.rerender = rerender;
  return cancels;
}

/** A helper module of the plugin: it registers nothing (the modules that import it do). */
export default function register() {}
