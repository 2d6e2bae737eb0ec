// ui-schedule: the plugin's words. The `schedule` locale namespace (English and Chinese) and
// the pure helpers that word what the card, the tool summaries, the Reminders panel and the
// boards show (instants, lateness, rules in words, a reminder's name). No DOM: the text-only
// builders are schedule-dom.js. The default export registers the namespace with the host's
// registry.

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
    "tool.createdRule": "Repeating reminder set · {rule} · next {time}",
    "tool.updatePending": "Changing a reminder…",
    "tool.updated": "Reminder changed: {prompt} · next {time}",
    "tool.updatedRule": "Reminder changed: {prompt} · {rule} · next {time}",
    "tool.unchanged": "Reminder unchanged: {prompt}",
    "tool.updateConflict": "Reminder not changed: it changed meanwhile",
    "tool.updateMissing": "That reminder was already gone",
    "tool.updateEnded": "That reminder has already ended",
    "tool.updateFailed": "Reminder not changed: {reason}",
    "rule.daily": "Every day at {time}",
    "rule.weekdays": "Every weekday at {time}",
    "rule.weekly": "Every {days} at {time}",
    "rule.monthly": "On day {days} of every month at {time}",
    "rule.monthlyMany": "On days {days} of every month at {time}",
    "rule.yearly": "Every year on {day} {month} at {time}",
    "rule.hourly": "Every hour at minute {minute}",
    "rule.minutes": "Every {count} minutes",
    "rule.minute": "Every minute",
    "rule.cron": "cron {expression}",
    "rule.zone": "{rule} ({zone})",
    "rule.list": "{rest} and {last}",
    "rule.comma": ", ",
    "rule.day.1": "Monday",
    "rule.day.2": "Tuesday",
    "rule.day.3": "Wednesday",
    "rule.day.4": "Thursday",
    "rule.day.5": "Friday",
    "rule.day.6": "Saturday",
    "rule.day.7": "Sunday",
    "rule.month.1": "January",
    "rule.month.2": "February",
    "rule.month.3": "March",
    "rule.month.4": "April",
    "rule.month.5": "May",
    "rule.month.6": "June",
    "rule.month.7": "July",
    "rule.month.8": "August",
    "rule.month.9": "September",
    "rule.month.10": "October",
    "rule.month.11": "November",
    "rule.month.12": "December",
    "edit.open": "Edit",
    "edit.openLabel": "Edit reminder: {prompt}",
    "edit.form": "Edit reminder: {prompt}",
    "edit.title": "Title",
    "edit.text": "Reminder text",
    "edit.date": "Date",
    "edit.time": "Time",
    "edit.every": "Repeat every (minutes)",
    "edit.days": "Days",
    "edit.day.1": "Monday",
    "edit.day.2": "Tuesday",
    "edit.day.3": "Wednesday",
    "edit.day.4": "Thursday",
    "edit.day.5": "Friday",
    "edit.day.6": "Saturday",
    "edit.day.7": "Sunday",
    "edit.expression": "Cron expression (minute hour day month weekday)",
    "edit.zone": "Times in {zone}",
    "edit.save": "Save",
    "edit.saving": "Saving…",
    "edit.close": "Close",
    "edit.conflict": "This reminder changed meanwhile (it may just have fired). Here is what it says now.",
    "edit.failed": "Not saved: {reason}",
    "edit.needText": "The reminder needs some text.",
    "edit.needTitle": "The title needs some text (at most 120 characters).",
    "edit.needDate": "Pick a date and a time.",
    "edit.needTime": "Pick a time.",
    "edit.needDays": "Pick at least one day.",
    "edit.needEvery": "Say how many minutes apart, e.g. 30.",
    "edit.needExpression": "A cron expression has five fields, e.g. 0 9 * * 1.",
    "edit.gone": "This reminder no longer exists.",
    "edit.ended": "This reminder has ended; there is nothing left to change.",
    "edit.badRule": "That time or rule does not work for this reminder.",
    "tool.ackPending": "Marking a reminder done…",
    "tool.acked": "Done: {prompt}",
    "tool.ackedPlain": "Reminder marked done",
    "tool.ackFailed": "Not marked done: {reason}",
    "tool.snoozePending": "Snoozing a reminder…",
    "tool.snoozed": "Snoozed: {prompt} · until {time}",
    "tool.snoozeFailed": "Not snoozed: {reason}",
    "act.done": "Done",
    "act.doneLabel": "Mark as done: {prompt}",
    "act.snooze": "Snooze ▾",
    "act.snoozeLabel": "Snooze: {prompt}",
    "act.snoozeMenu": "Snooze until",
    "act.minutes10": "10 minutes",
    "act.hour1": "1 hour",
    "act.tomorrow": "Tomorrow at 09:00",
    "act.pick": "At a time",
    "act.pickGo": "Snooze",
    "act.needFuture": "Pick a date and time in the future.",
    "act.saving": "Saving…",
    "act.alreadyDone": "This was already marked done.",
    "act.alreadySnoozed": "This was already snoozed.",
    "act.notFound": "This delivery is not in this session any more.",
    "act.failed": "That did not work. Try again.",
    "state.done": "Done ✓",
    "state.snoozed": "Snoozed until {time}",
    "sent.to": "Sent to {labels}",
    "sent.sending": "Sending to {labels}…",
    "sent.unknown": "Not sure it reached {labels}",
    "sent.failed": "Could not reach {label}: {error}",
    "sent.failedBare": "Could not reach {label}",
    "sent.list": ", ",
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
    "tool.createdRule": "已设置重复提醒 · {rule} · 下次 {time}",
    "tool.updatePending": "正在修改提醒…",
    "tool.updated": "已修改提醒：{prompt} · 下次 {time}",
    "tool.updatedRule": "已修改提醒：{prompt} · {rule} · 下次 {time}",
    "tool.unchanged": "提醒没有变化：{prompt}",
    "tool.updateConflict": "未修改提醒：它刚刚有了变化",
    "tool.updateMissing": "该提醒已不存在",
    "tool.updateEnded": "该提醒已经结束",
    "tool.updateFailed": "未能修改提醒：{reason}",
    "rule.daily": "每天 {time}",
    "rule.weekdays": "每个工作日 {time}",
    "rule.weekly": "每周{days} {time}",
    "rule.monthly": "每月 {days} 日 {time}",
    "rule.monthlyMany": "每月 {days} 日 {time}",
    "rule.yearly": "每年 {month} 月 {day} 日 {time}",
    "rule.hourly": "每小时第 {minute} 分钟",
    "rule.minutes": "每 {count} 分钟",
    "rule.minute": "每分钟",
    "rule.cron": "cron {expression}",
    "rule.zone": "{rule}（{zone}）",
    "rule.list": "{rest}、{last}",
    "rule.comma": "、",
    "rule.day.1": "一",
    "rule.day.2": "二",
    "rule.day.3": "三",
    "rule.day.4": "四",
    "rule.day.5": "五",
    "rule.day.6": "六",
    "rule.day.7": "日",
    "rule.month.1": "1",
    "rule.month.2": "2",
    "rule.month.3": "3",
    "rule.month.4": "4",
    "rule.month.5": "5",
    "rule.month.6": "6",
    "rule.month.7": "7",
    "rule.month.8": "8",
    "rule.month.9": "9",
    "rule.month.10": "10",
    "rule.month.11": "11",
    "rule.month.12": "12",
    "edit.open": "编辑",
    "edit.openLabel": "编辑提醒：{prompt}",
    "edit.form": "编辑提醒：{prompt}",
    "edit.title": "标题",
    "edit.text": "提醒内容",
    "edit.date": "日期",
    "edit.time": "时间",
    "edit.every": "每隔（分钟）",
    "edit.days": "哪几天",
    "edit.day.1": "周一",
    "edit.day.2": "周二",
    "edit.day.3": "周三",
    "edit.day.4": "周四",
    "edit.day.5": "周五",
    "edit.day.6": "周六",
    "edit.day.7": "周日",
    "edit.expression": "cron 表达式（分 时 日 月 星期）",
    "edit.zone": "时间按 {zone}",
    "edit.save": "保存",
    "edit.saving": "正在保存…",
    "edit.close": "关闭",
    "edit.conflict": "这条提醒刚刚有了变化（可能刚刚送达）。下面是它现在的内容。",
    "edit.failed": "未保存：{reason}",
    "edit.needText": "提醒需要填写内容。",
    "edit.needTitle": "标题需要填写内容（最多 120 个字符）。",
    "edit.needDate": "请选择日期和时间。",
    "edit.needTime": "请选择时间。",
    "edit.needDays": "请至少选择一天。",
    "edit.needEvery": "请填写间隔多少分钟，例如 30。",
    "edit.needExpression": "cron 表达式有五个字段，例如 0 9 * * 1。",
    "edit.gone": "该提醒已不存在。",
    "edit.ended": "这条提醒已经结束，没有可以修改的了。",
    "edit.badRule": "这个时间或规则不能用于这条提醒。",
    "tool.ackPending": "正在标记提醒为完成…",
    "tool.acked": "已完成：{prompt}",
    "tool.ackedPlain": "提醒已标记为完成",
    "tool.ackFailed": "未能标记为完成：{reason}",
    "tool.snoozePending": "正在推迟提醒…",
    "tool.snoozed": "已推迟：{prompt} · 到 {time}",
    "tool.snoozeFailed": "未能推迟：{reason}",
    "act.done": "完成",
    "act.doneLabel": "标记为完成：{prompt}",
    "act.snooze": "推迟 ▾",
    "act.snoozeLabel": "推迟：{prompt}",
    "act.snoozeMenu": "推迟到",
    "act.minutes10": "10 分钟后",
    "act.hour1": "1 小时后",
    "act.tomorrow": "明天 09:00",
    "act.pick": "指定时间",
    "act.pickGo": "推迟",
    "act.needFuture": "请选择一个将来的日期和时间。",
    "act.saving": "正在保存…",
    "act.alreadyDone": "这条提醒已经标记为完成。",
    "act.alreadySnoozed": "这条提醒已经推迟过了。",
    "act.notFound": "这次提醒已不在当前会话中。",
    "act.failed": "操作没有成功，请重试。",
    "state.done": "完成 ✓",
    "state.snoozed": "已推迟到 {time}",
    "sent.to": "已发送到 {labels}",
    "sent.sending": "正在发送到 {labels}…",
    "sent.unknown": "不确定是否已送达 {labels}",
    "sent.failed": "无法送达 {label}：{error}",
    "sent.failedBare": "无法送达 {label}",
    "sent.list": "、",
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

const CLOCK = /^([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,3}))?$/;

/**
 * A rule's wall time as people read it: "09:00" for "09:00:00.000"; the seconds (and their
 * fraction) only when they are not zero ("09:00:30", "09:00:30.25"). Null when malformed.
 */
export function clockText(value) {
  const match = typeof value === "string" ? CLOCK.exec(value) : null;
  if (match === null) return null;
  const [, hh, mm, ss, fraction = ""] = match;
  const rest = fraction.replace(/0+$/, "");
  if (rest !== "") return `${hh}:${mm}:${ss}.${rest}`;
  return ss === "00" ? `${hh}:${mm}` : `${hh}:${mm}:${ss}`;
}

/** ISO weekdays (1 = Monday .. 7 = Sunday), ascending and unique, or null when malformed. */
export function isoWeekdays(value) {
  if (!Array.isArray(value) || value.length === 0) return null;
  if (!value.every((day) => Number.isInteger(day) && day >= 1 && day <= 7)) return null;
  const days = [...new Set(value)].sort((a, b) => a - b);
  return days.length === value.length ? days : null;
}

/** "a", "a and b", "a, b and c" (zh "a、b、c"). */
function listWords(items, s) {
  if (items.length === 1) return items[0];
  return s("rule.list", { rest: items.slice(0, -1).join(s("rule.comma")), last: items.at(-1) });
}

/** "Every day / weekday / Monday and Friday at {time}" for ISO `days`. */
function weekdayWords(days, time, s) {
  if (days.length === 7) return s("rule.daily", { time });
  if (days.join() === "1,2,3,4,5") return s("rule.weekdays", { time });
  return s("rule.weekly", { days: listWords(days.map((day) => s(`rule.day.${day}`)), s), time });
}

const CRON_RANGES = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];
const CRON_ELEMENT = /^(?:(\*)|([0-9]+)(?:-([0-9]+))?)(?:\/([0-9]+))?$/;

/** One cron field: `{star, all, values}` (`star`: its text begins with "*"), or null. */
function cronField(text, [low, high], dayOfWeek) {
  const values = new Set();
  for (const element of text.split(",")) {
    const match = CRON_ELEMENT.exec(element);
    // "n/s" is not in the dialect (only "*/s" and "a-b/s" step).
    if (match === null) return null;
    if (match[2] !== undefined && match[3] === undefined && match[4] !== undefined) return null;
    const step = match[4] === undefined ? 1 : Number(match[4]);
    const from = match[1] ? low : Number(match[2]);
    const to = match[1] ? high : Number(match[3] ?? match[2]);
    if (step < 1 || from < low || to > high || from > to) return null;
    for (let value = from; value <= to; value += step) {
      values.add(dayOfWeek && value === 7 ? 0 : value);
    }
  }
  return {
    star: text.startsWith("*"),
    all: text === "*",
    values: [...values].sort((a, b) => a - b),
  };
}

const pad2 = (value) => String(value).padStart(2, "0");

/**
 * A cron expression in words for the common shapes (every N minutes, hourly, daily, on
 * weekdays, on days of the month, yearly, at one or a few times), else "cron {expression}".
 * A shape is worded only when the other day field is "*" (when both day fields are restricted,
 * either matching is enough, and that reads best as the expression itself).
 */
export function cronWords(expression, s) {
  const texts = typeof expression === "string" ? expression.trim().split(/\s+/) : [];
  const canonical = s("rule.cron", { expression: texts.join(" ") });
  if (texts.length !== 5) return canonical;
  const fields = texts.map((text, index) => cronField(text, CRON_RANGES[index], index === 4));
  if (fields.includes(null)) return canonical;
  const [minute, hour, day, month, weekday] = fields;
  const everyDay = day.all && month.all && weekday.all;
  if (everyDay && hour.all) {
    if (minute.all) return s("rule.minute");
    const step = minute.values[1] - minute.values[0];
    const even = minute.values.every((value, index) => value === index * step);
    if (minute.star && even && 60 % step === 0) return s("rule.minutes", { count: step });
    if (!minute.star && minute.values.length === 1) {
      return s("rule.hourly", { minute: minute.values[0] });
    }
    return canonical;
  }
  if (minute.star || hour.star || minute.values.length * hour.values.length > 6) return canonical;
  const clocks = hour.values.flatMap((h) => minute.values.map((m) => `${pad2(h)}:${pad2(m)}`));
  const time = listWords(clocks, s);
  if (everyDay) return s("rule.daily", { time });
  if (day.all && month.all && !weekday.star) {
    const days = weekday.values.map((value) => (value === 0 ? 7 : value)).sort((a, b) => a - b);
    return weekdayWords(days, time, s);
  }
  if (!day.star && month.all && weekday.all) {
    const key = day.values.length === 1 ? "rule.monthly" : "rule.monthlyMany";
    return s(key, { days: listWords(day.values.map(String), s), time });
  }
  const once = (f) => !f.star && f.values.length === 1;
  if (once(day) && once(month) && weekday.all) {
    return s("rule.yearly", { day: day.values[0], month: s(`rule.month.${month.values[0]}`), time });
  }
  return canonical;
}

/**
 * A calendar rule in the page's language (`rule`: `{kind, time, timeZone, weekdays,
 * expression}` as a record carries them): "Every weekday at 09:00", "每周一 10:00", "On day 1 of
 * every month at 09:00", "cron 0 9 1-7 * 1"; its zone in brackets only when it is not
 * `browserZone` ("Every day at 22:00 (Europe/Paris)"). Null for a one-time or interval reminder,
 * or a rule whose fields are malformed.
 */
export function ruleWords(rule, t, browserZone) {
  const s = scoped(t);
  let words;
  if (rule?.kind === "daily" || rule?.kind === "weekly") {
    const time = clockText(rule.time);
    if (time === null) return null;
    if (rule.kind === "daily") words = s("rule.daily", { time });
    else {
      const days = isoWeekdays(rule.weekdays);
      if (days === null) return null;
      words = weekdayWords(days, time, s);
    }
  } else if (rule?.kind === "cron" && typeof rule.expression === "string" && rule.expression) {
    words = cronWords(rule.expression, s);
  } else {
    return null;
  }
  const zone = rule.timeZone;
  if (typeof zone !== "string" || zone === "" || zone === browserZone) return words;
  return s("rule.zone", { rule: words, zone });
}

/** The rule fields of a record-like object (a view item, a board row's data, a tool value). */
export function ruleOf(value) {
  if (value === null || typeof value !== "object") return null;
  const { kind, time, timeZone, weekdays, expression } = value;
  return { kind, time, timeZone, weekdays, expression };
}

/** The words a reminder goes by: its title when it has one, else its text. */
export function reminderName(value) {
  const title = value?.title;
  if (typeof title === "string" && title.trim() !== "") return title;
  return typeof value?.prompt === "string" ? value.prompt : "";
}

/** Plugin entry point: registers the namespace; returns the unregister function. */
export default function register(registry) {
  return registry.registerMessages(NAMESPACE, messages);
}
