// ui-schedule: one-line summaries for the schedule tools ("Reminder set · today 18:08",
// "Repeating reminder set · Every Monday at 10:00 · next today 10:00", "Reminder changed:
// stretch · next today 18:30", "Reminder cancelled: stretch", "Done: stretch", "Snoozed:
// stretch · until today 18:20"), Undo on a cancel for a few seconds, and the collapsed line for
// the plugin's follow-ups ("Reminder handed to the assistant"). Pure functions of what the host
// hands over; the default export registers them.

import { actionErrorText } from "./occurrence.js";
import { instantMs, reminderName, ruleOf, ruleWords, scoped } from "./schedule-words.js";

/** The plugin name the Schedule's follow-ups carry in `source.plugin`. */
export const PLUGIN = "schedule";
export const TOOLS = Object.freeze([
  "schedule_create",
  "schedule_list",
  "schedule_delete",
  "schedule_update",
  "schedule_ack",
  "schedule_snooze",
]);
const BATCH_HEADER = "[SCHEDULE REMINDER BATCH]";
const REMINDERS_PREFIX = "reminders_json: ";

function isErrorValue(value) {
  return value !== null && typeof value === "object" && typeof value.code === "string";
}

function reason(input) {
  return input.errorText(input.value);
}

/** schedule_create: pending, set (with when it is due), or why not. */
export function summarizeCreate(input) {
  const s = scoped(input.t);
  if (input.pending) return s("tool.createPending");
  const value = input.value;
  if (isErrorValue(value)) return s("tool.createFailed", { reason: reason(input) });
  const due = instantMs(value?.scheduledAt);
  if (due === null) return null;
  const when = input.time.absolute(due);
  const rule = ruleWords(ruleOf(value), input.t, input.time.timeZone);
  if (rule !== null) return s("tool.createdRule", { rule, time: when });
  if (typeof value.everySeconds === "number") {
    return s("tool.createdEvery", { every: input.time.duration(value.everySeconds * 1000), time: when });
  }
  return s("tool.created", { time: when });
}

/** schedule_list: how many are active. */
export function summarizeList(input) {
  const s = scoped(input.t);
  if (input.pending) return s("tool.listPending");
  if (isErrorValue(input.value)) return s("tool.listFailed", { reason: reason(input) });
  if (!Array.isArray(input.value)) return null;
  const count = input.value.length;
  if (count === 0) return s("tool.listedNone");
  return count === 1 ? s("tool.listedOne") : s("tool.listed", { count });
}

/**
 * The record a `schedule_delete` row cancelled, or a `schedule_ack` row marked done (`{id,
 * kind, prompt, scheduledAt, ...}` from its `create` change in the loaded history), or null
 * when it is not there.
 */
export function cancelledRecord(input) {
  const id = input.arguments?.id ?? input.value?.id;
  if (typeof id !== "string" || typeof input.findEvent !== "function") return null;
  const event = input.findEvent(
    (e) =>
      e?.type === "schedule/change" &&
      e.data?.operation === "create" &&
      e.data?.schedule?.id === id,
  );
  const record = event?.data?.schedule;
  return typeof record?.prompt === "string" ? record : null;
}

/** schedule_delete: cancelled (naming the reminder when its history is loaded), gone, or not. */
export function summarizeDelete(input) {
  const s = scoped(input.t);
  if (input.pending) return s("tool.deletePending");
  const value = input.value;
  if (value?.deleted === true) {
    const record = cancelledRecord(input);
    return record === null ? s("tool.deleted") : s("tool.deletedNamed", { prompt: record.prompt });
  }
  if (value?.code === "schedule_not_found") return s("tool.deleteMissing");
  if (isErrorValue(value)) return s("tool.deleteFailed", { reason: reason(input) });
  return null;
}

/**
 * schedule_update: changed (named, with when it is next due and its rule in words), unchanged,
 * changed meanwhile, gone or ended, or why not.
 */
export function summarizeUpdate(input) {
  const s = scoped(input.t);
  if (input.pending) return s("tool.updatePending");
  const value = input.value;
  if (value?.code === "schedule_conflict") return s("tool.updateConflict");
  if (value?.code === "schedule_not_found") return s("tool.updateMissing");
  if (value?.code === "schedule_ended") return s("tool.updateEnded");
  if (isErrorValue(value)) return s("tool.updateFailed", { reason: reason(input) });
  if (value === null || typeof value !== "object" || typeof value.prompt !== "string") return null;
  const prompt = reminderName(value);
  if (value.updated === false) return s("tool.unchanged", { prompt });
  const due = instantMs(value.scheduledAt);
  if (due === null) return null;
  const rule = ruleWords(ruleOf(value), input.t, input.time.timeZone);
  const time = input.time.absolute(due);
  return rule === null
    ? s("tool.updated", { prompt, time })
    : s("tool.updatedRule", { prompt, rule, time });
}

/** schedule_ack: done (naming the reminder when its history is loaded), or why not. */
export function summarizeAck(input) {
  const s = scoped(input.t);
  if (input.pending) return s("tool.ackPending");
  const value = input.value;
  if (isErrorValue(value)) {
    return s("tool.ackFailed", { reason: actionErrorText(value, input.t, input.errorText) });
  }
  if (value?.done !== true) return null;
  const record = cancelledRecord(input);
  return record === null ? s("tool.ackedPlain") : s("tool.acked", { prompt: reminderName(record) });
}

/** schedule_snooze: snoozed until when (the new reminder's time), or why not. */
export function summarizeSnooze(input) {
  const s = scoped(input.t);
  if (input.pending) return s("tool.snoozePending");
  const value = input.value;
  if (isErrorValue(value)) {
    return s("tool.snoozeFailed", { reason: actionErrorText(value, input.t, input.errorText) });
  }
  const due = instantMs(value?.scheduledAt);
  if (due === null || typeof value.prompt !== "string") return null;
  return s("tool.snoozed", { prompt: reminderName(value), time: input.time.absolute(due) });
}

/** How long a cancel offers Undo, and how much of the reminder's wait must be left after it. */
export const UNDO_MS = 10_000;
export const UNDO_MIN_LEFT_MS = 60_000;

/**
 * Undo for a cancel, for UNDO_MS after it was recorded: `schedule_create` with the same text at
 * the same instant. Offered only for a one-time reminder (a repeating one's alignment cannot be
 * rebuilt exactly) whose time is still at least UNDO_MIN_LEFT_MS after the offer ends.
 */
export function offerUndo(input) {
  if (input.value?.deleted !== true || typeof input.resultTime !== "number") return null;
  const record = cancelledRecord(input);
  if (record === null || (record.kind !== "after" && record.kind !== "at")) return null;
  const due = instantMs(record.scheduledAt);
  const until = input.resultTime + UNDO_MS;
  if (due === null || due - Math.max(until, input.now) < UNDO_MIN_LEFT_MS) return null;
  const s = scoped(input.t);
  return {
    label: s("tool.undo"),
    description: s("tool.undoLabel", { prompt: record.prompt }),
    until,
    tool: "schedule_create",
    arguments: { prompt: record.prompt, at: record.scheduledAt },
  };
}

/** How many reminders a follow-up hands over: a batch's array length, else one. */
export function followupCount(text) {
  if (typeof text !== "string" || !text.startsWith(BATCH_HEADER)) return 1;
  const line = text.split("\n").find((l) => l.startsWith(REMINDERS_PREFIX));
  try {
    const items = JSON.parse(line.slice(REMINDERS_PREFIX.length));
    return Array.isArray(items) && items.length > 0 ? items.length : 1;
  } catch {
    return 1;
  }
}

/** The follow-up's collapsed line. */
export function summarizeFollowup({ text, t }) {
  const s = scoped(t);
  const count = followupCount(text);
  return count === 1 ? s("followup.one") : s("followup.batch", { count });
}

/** Plugin entry point: registers the summaries; returns the unregister function. */
export default function register(registry) {
  const summarizers = [
    summarizeCreate,
    summarizeList,
    summarizeDelete,
    summarizeUpdate,
    summarizeAck,
    summarizeSnooze,
  ];
  const drops = TOOLS.map((name, index) => registry.registerToolSummary(name, summarizers[index]));
  drops.push(registry.registerFollowupSummary(PLUGIN, summarizeFollowup));
  drops.push(registry.registerToolAction("schedule_delete", offerUndo));
  return () => {
    for (const drop of drops) drop();
  };
}
