// ui-schedule: the bilingual reminder row for presented `schedule/change` events.
//
// The default export registers the row with the host's renderer registry, and its strings as
// the `schedule` locale namespace. Everything the Session supplies (prompt, id, times) reaches
// the DOM only as text nodes. The named helpers are pure so they can be tested without a DOM;
// they translate with the locale-bound `t(key, params)` the registry hands to renderers.

export const EVENT_TYPE = "schedule/change";
export const NAMESPACE = "schedule";
export const DELIVERY_MODE = "session-local";
/** A dispatch recorded more than this long after its due time gets a lateness note. */
export const LATE_THRESHOLD_MS = 60_000;

/** The `schedule` namespace's tables: `t("schedule.title")` and so on. */
export const messages = Object.freeze({
  en: Object.freeze({
    title: "Scheduled reminder",
    delivery: "Delivered in this session only",
    id: "ID {id}",
    due: "Due at {time}",
    recorded: "Recorded at {time}",
    late: "delivered {amount} {unit} late",
    unavailable: "Reminder receipt unavailable · schedule/change",
    "unit.s": "s",
    "unit.min": "min",
    "unit.h": "h",
    "unit.d": "d",
  }),
  zh: Object.freeze({
    title: "定时提醒",
    delivery: "仅在当前会话中交付",
    id: "编号 {id}",
    due: "触发时间 {time}",
    recorded: "记录时间 {time}",
    late: "延迟 {amount} {unit}送达",
    unavailable: "提醒回执不可用 · schedule/change",
    "unit.s": "秒",
    "unit.min": "分钟",
    "unit.h": "小时",
    "unit.d": "天",
  }),
});

const key = (name) => `${NAMESPACE}.${name}`;

/**
 * Validate a presented reminder view. Returns the normalized
 * `{scheduleId, prompt, occurrenceAt, deliveryMode}` or null when the sidecar is not a
 * compatible reminder receipt.
 */
export function validateReminderView(view) {
  if (view === null || typeof view !== "object" || Array.isArray(view)) return null;
  const { scheduleId, prompt, occurrenceAt, deliveryMode } = view;
  if (typeof scheduleId !== "string" || scheduleId === "") return null;
  if (typeof prompt !== "string") return null;
  if (typeof occurrenceAt !== "string" || occurrenceAt === "") return null;
  if (Number.isNaN(Date.parse(occurrenceAt))) return null;
  if (deliveryMode !== DELIVERY_MODE) return null;
  return { scheduleId, prompt, occurrenceAt, deliveryMode };
}

/** Whole units, floored: "2 h" / "2 小时"; null for a negative or non-finite duration. */
export function formatDuration(ms, t) {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return null;
  const seconds = Math.floor(ms / 1000);
  let amount = seconds;
  let unit = "s";
  if (seconds >= 86_400) {
    amount = Math.floor(seconds / 86_400);
    unit = "d";
  } else if (seconds >= 3_600) {
    amount = Math.floor(seconds / 3_600);
    unit = "h";
  } else if (seconds >= 60) {
    amount = Math.floor(seconds / 60);
    unit = "min";
  }
  return { amount, unit: t(key(`unit.${unit}`)) };
}

/**
 * The lateness note for a delivery `lateMs` after its due time: null unless it is strictly
 * more than 60 s late; otherwise "delivered 2 h late" / "延迟 2 小时送达".
 */
export function formatLateness(lateMs, t) {
  if (typeof lateMs !== "number" || !Number.isFinite(lateMs) || lateMs <= LATE_THRESHOLD_MS) {
    return null;
  }
  return t(key("late"), formatDuration(lateMs, t));
}

/** Milliseconds between the due instant and the dispatch record time, or null. */
export function latenessMs(eventTime, occurrenceAt) {
  if (typeof eventTime !== "number" || !Number.isFinite(eventTime)) return null;
  const due = typeof occurrenceAt === "string" ? Date.parse(occurrenceAt) : Number.NaN;
  if (Number.isNaN(due)) return null;
  return eventTime - due;
}

/** The dispatch event's epoch-ms time as an ISO UTC string, or null. */
export function recordedIso(eventTime) {
  if (typeof eventTime !== "number" || !Number.isFinite(eventTime)) return null;
  const date = new Date(eventTime);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * Everything the row shows, as plain data (no DOM). `node` is a presented-event node
 * `{eventType, time, view}` (`time` is the dispatch event's epoch-ms record time).
 */
export function reminderRowModel(node, t) {
  const receipt = validateReminderView(node?.view);
  if (receipt === null) return { valid: false, unavailable: t(key("unavailable")) };
  const recorded = recordedIso(node.time);
  return {
    valid: true,
    title: t(key("title")),
    delivery: t(key("delivery")),
    prompt: receipt.prompt,
    scheduleId: receipt.scheduleId,
    idText: t(key("id"), { id: receipt.scheduleId }),
    occurrenceAt: receipt.occurrenceAt,
    dueText: t(key("due"), { time: receipt.occurrenceAt }),
    recordedAt: recorded,
    recordedText: recorded === null ? null : t(key("recorded"), { time: recorded }),
    lateText: formatLateness(latenessMs(node.time, receipt.occurrenceAt), t),
  };
}

function text(doc, tag, content, className) {
  const element = doc.createElement(tag);
  if (className) element.className = className;
  element.appendChild(doc.createTextNode(content));
  return element;
}

/** Build the row. `ctx` is `{node, locale, t, document?}` as handed over by the registry. */
export function renderReminderRow({ node, locale, t, document: doc = globalThis.document }) {
  const model = reminderRowModel(node, t);
  const section = doc.createElement("section");
  section.setAttribute("role", "note");
  section.setAttribute("data-schedule-reminder", "");
  section.setAttribute("lang", locale);
  section.className = "schedule-reminder";
  if (!model.valid) {
    section.setAttribute("data-invalid", "");
    section.appendChild(text(doc, "p", model.unavailable, "schedule-reminder-unavailable"));
    return section;
  }

  const header = doc.createElement("header");
  header.appendChild(text(doc, "strong", model.title, "schedule-reminder-title"));
  header.appendChild(doc.createTextNode(" "));
  header.appendChild(text(doc, "span", model.delivery, "schedule-reminder-delivery"));
  section.appendChild(header);

  section.appendChild(text(doc, "p", model.prompt, "schedule-reminder-prompt"));

  const footer = doc.createElement("footer");
  footer.appendChild(text(doc, "span", model.idText, "schedule-reminder-id"));
  footer.appendChild(doc.createTextNode(" · "));
  const due = text(doc, "time", model.dueText, "schedule-reminder-due");
  due.setAttribute("datetime", model.occurrenceAt);
  footer.appendChild(due);
  if (model.recordedText !== null) {
    footer.appendChild(doc.createTextNode(" · "));
    const recorded = text(doc, "time", model.recordedText, "schedule-reminder-recorded");
    recorded.setAttribute("datetime", model.recordedAt);
    footer.appendChild(recorded);
  }
  if (model.lateText !== null) {
    footer.appendChild(doc.createTextNode(" · "));
    footer.appendChild(text(doc, "span", model.lateText, "schedule-reminder-late"));
  }
  section.appendChild(footer);
  return section;
}

/** Plugin entry point: `register(registry)` returns the unregister function. */
export default function register(registry) {
  const dropMessages = registry.registerMessages(NAMESPACE, messages);
  try {
    const dropRow = registry.register(EVENT_TYPE, renderReminderRow);
    return () => {
      dropRow();
      dropMessages();
    };
  } catch (error) {
    dropMessages();
    throw error;
  }
}
