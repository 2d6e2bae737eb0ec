// ui-schedule: the `schedule` locale namespace (English and Chinese) and the pure helpers the
// card, the tool summaries and the Reminders panel share. The default export registers the
// namespace with the host's registry.

export const NAMESPACE = "schedule";
/** A delivery recorded more than this long after its due time is shown as late. */
export const LATE_THRESHOLD_MS = 60_000;

export const messages = Object.freeze({
  en: Object.freeze({
    label: "Reminder",
    delivery: "Delivered in this session only",
    due: "Due {time}",
    late: "{duration} late",
    "reason.offline": "the host was offline or the session was not open",
    "reason.busy": "the assistant was busy",
    unavailable: "Reminder receipt unavailable · schedule/change",
    "followup.one": "Reminder handed to the assistant",
    "followup.batch": "{count} reminders handed to the assistant",
    "tool.createPending": "Setting a reminder…",
    "tool.created": "Reminder set · {time}",
    "tool.createdEvery": "Repeating reminder set · every {every} · next {time}",
    "tool.createFailed": "Reminder not set: {reason}",
    "tool.listPending": "Looking up reminders…",
    "tool.listed": "{count} active reminders",
    "tool.listedOne": "1 active reminder",
    "tool.listedNone": "No active reminders",
    "tool.listFailed": "Could not list reminders: {reason}",
    "tool.deletePending": "Cancelling a reminder…",
    "tool.deleted": "Reminder cancelled",
    "tool.deletedNamed": "Reminder cancelled: {prompt}",
    "tool.undo": "Undo",
    "tool.undoLabel": "Undo cancelling the reminder: {prompt}",
    "tool.deleteMissing": "That reminder was already gone",
    "tool.deleteFailed": "Reminder not cancelled: {reason}",
    "panel.title": "Reminders",
    "panel.badge": "{count} pending reminders",
    "panel.active": "Pending",
    "panel.recent": "Recently delivered",
    "panel.none": "No pending reminders. Ask the assistant, e.g. “remind me in 10 minutes to stretch”.",
    "panel.noneRecent": "Nothing delivered yet.",
    "panel.every": "every {every}",
    "panel.cancel": "Cancel",
    "panel.cancelLabel": "Cancel reminder: {prompt}",
    "panel.cancelling": "Cancelling…",
    "panel.cancelFailed": "Could not cancel: {reason}",
    "panel.onTime": "on time",
    "panel.summary": "{count} reminders · next",
    "panel.summaryOne": "1 reminder ·",
    "panel.summaryNone": "No pending reminders",
    "panel.deleteNote": "Its {count} pending reminders will be deleted too.",
    "panel.deleteNoteOne": "Its pending reminder will be deleted too.",
    "board.title": "All reminders",
    "board.empty": "No pending reminders in any session. Ask the assistant, e.g. “remind me in 10 minutes to stretch”.",
    "board.comingUp": "Coming up",
    "board.away": "While you were away: {count} reminders",
    "board.awayOne": "While you were away: 1 reminder",
  }),
  zh: Object.freeze({
    label: "提醒",
    delivery: "仅在当前会话中交付",
    due: "到期 {time}",
    late: "晚了 {duration}",
    "reason.offline": "当时主机离线或会话未打开",
    "reason.busy": "当时助手正忙",
    unavailable: "提醒回执不可用 · schedule/change",
    "followup.one": "提醒已交给助手",
    "followup.batch": "{count} 条提醒已交给助手",
    "tool.createPending": "正在设置提醒…",
    "tool.created": "已设置提醒 · {time}",
    "tool.createdEvery": "已设置重复提醒 · 每 {every} · 下次 {time}",
    "tool.createFailed": "未能设置提醒：{reason}",
    "tool.listPending": "正在查看提醒…",
    "tool.listed": "{count} 条待办提醒",
    "tool.listedOne": "1 条待办提醒",
    "tool.listedNone": "没有待办提醒",
    "tool.listFailed": "无法列出提醒：{reason}",
    "tool.deletePending": "正在取消提醒…",
    "tool.deleted": "已取消提醒",
    "tool.deletedNamed": "已取消提醒：{prompt}",
    "tool.undo": "撤销",
    "tool.undoLabel": "撤销取消提醒：{prompt}",
    "tool.deleteMissing": "该提醒已不存在",
    "tool.deleteFailed": "未能取消提醒：{reason}",
    "panel.title": "提醒",
    "panel.badge": "{count} 条待办提醒",
    "panel.active": "待办",
    "panel.recent": "最近送达",
    "panel.none": "没有待办提醒。可以对助手说，例如“提醒我10分钟后伸展一下”。",
    "panel.noneRecent": "还没有送达的提醒。",
    "panel.every": "每 {every}",
    "panel.cancel": "取消",
    "panel.cancelLabel": "取消提醒：{prompt}",
    "panel.cancelling": "正在取消…",
    "panel.cancelFailed": "无法取消：{reason}",
    "panel.onTime": "准时",
    "panel.summary": "{count} 条提醒 · 下一条",
    "panel.summaryOne": "1 条提醒 ·",
    "panel.summaryNone": "没有待办提醒",
    "panel.deleteNote": "它的 {count} 条待办提醒也会一并删除。",
    "panel.deleteNoteOne": "它的 1 条待办提醒也会一并删除。",
    "board.title": "所有提醒",
    "board.empty": "所有会话都没有待办提醒。可以对助手说，例如“提醒我10分钟后伸展一下”。",
    "board.comingUp": "即将到来",
    "board.away": "你不在时：{count} 条提醒",
    "board.awayOne": "你不在时：1 条提醒",
  }),
});

/** `t` bound to this namespace: `st(t)("late", {...})` is `t("schedule.late", {...})`. */
export function scoped(t) {
  return (name, params) => t(`${NAMESPACE}.${name}`, params);
}

/** Epoch ms of an ISO instant, or null. */
export function instantMs(value) {
  if (typeof value !== "string" || value === "") return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The lateness badge text ("2 min late · the assistant was busy"), or null when `lateMs` is not
 * strictly more than a minute. `reason` is "busy", "offline" or absent.
 */
export function latenessText(lateMs, reason, t, time) {
  if (typeof lateMs !== "number" || !Number.isFinite(lateMs) || lateMs <= LATE_THRESHOLD_MS) {
    return null;
  }
  const s = scoped(t);
  const late = s("late", { duration: time.duration(lateMs) });
  return reason === "busy" || reason === "offline" ? `${late} · ${s(`reason.${reason}`)}` : late;
}

/** A text-only element: `content` always becomes one text node. */
export function textElement(doc, tag, content, className) {
  const element = doc.createElement(tag);
  if (className) element.className = className;
  element.appendChild(doc.createTextNode(String(content)));
  return element;
}

/** A `<time>` for an ISO instant with its exact UTC instant as the tooltip. */
export function timeElement(doc, iso, text, time, className) {
  const element = textElement(doc, "time", text, className);
  element.setAttribute("datetime", iso);
  element.setAttribute("title", time.utc(instantMs(iso)));
  return element;
}

/** Plugin entry point: registers the namespace; returns the unregister function. */
export default function register(registry) {
  return registry.registerMessages(NAMESPACE, messages);
}
