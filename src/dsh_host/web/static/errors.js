// Errors in plain words: the closed API and tool codes map to sentences in English and Chinese;
// the raw code stays beside them (for copying into a bug report); `errorMessage` is the one line
// any failure is shown as. Pure module.

import { getLocale, normalizeLocale } from "./i18n.js";
import { prettyJson } from "./json.js";

const SENTENCES = Object.freeze({
  en: Object.freeze({
    bad_request: "The request was not understood.",
    bad_cursor: "That place in the list is no longer valid; open the list again.",
    body_too_large: "That is too long to send.",
    event_rejected: "The session refused that change.",
    forbidden_host: "This page was opened through an address the server does not accept.",
    forbidden_origin: "This page's origin is not allowed to talk to the server.",
    internal_error: "Something went wrong on the server. Try again.",
    invalid_body: "The request was not understood.",
    invalid_boundary: "That page of history does not exist.",
    invalid_field: "One of the values is not acceptable.",
    invalid_json: "The request was not understood.",
    invalid_last_event_id: "The live connection could not resume; reload the page.",
    invalid_query: "The request was not understood.",
    invalid_time_zone: "That time zone is not known. Use UTC or a name like Europe/Berlin.",
    method_not_allowed: "The server does not allow that action.",
    missing_field: "A required value is missing.",
    not_found: "That was not found.",
    request_timeout: "The server took too long to answer. Try again.",
    session_live_elsewhere: "This session is open in another server process.",
    session_not_found: "That session does not exist (any more).",
    session_unavailable: "This session cannot be opened right now.",
    shutting_down: "The server is shutting down.",
    storage_unavailable: "Storage is not answering; what you just did may still finish. Check, then retry shortly.",
    unauthorized: "The server needs the access token; open the link it printed.",
    unknown_field: "The request had a value the server does not know.",
    unsupported_media_type: "The request was not understood.",
    network: "The server cannot be reached. Check that it is running.",
    no_channels: "No notification channel is set up on this server yet.",
    push_off: "This server does not offer notifications on devices (it needs a public address).",
    invalid_subscription: "The browser's notification subscription was not accepted.",
    subscription_not_found: "That device no longer gets notifications.",
    unknown_tool: "The assistant asked for a tool that does not exist.",
    tool_not_found: "That action is not available in this session.",
    invalid_arguments: "The tool was called with values it does not accept.",
    tool_failed: "The tool failed.",
    invalid_prompt: "The reminder needs some text.",
    invalid_selector: "Say exactly one of: after how long, at what time, or how often.",
    invalid_rule: "That time does not work for a reminder.",
    invalid_every_rule: "That repeat interval is not a whole number of seconds.",
    frequency_too_high: "A repeating reminder can run at most every 5 minutes.",
    not_future: "That time has already passed.",
    invalid_delete_id: "No reminder was named.",
    time_out_of_range: "That time is too far away.",
    corrupt_schedule_log: "This session's reminders could not be read.",
    persistence_uncertain: "It is not certain the change was saved; check the reminder list.",
    prompt_too_long: "The reminder text is too long.",
    too_many_active: "This session has too many reminders; cancel one first.",
    schedule_not_found: "That reminder no longer exists.",
    unknown: "Something went wrong.",
  }),
  zh: Object.freeze({
    bad_request: "无法理解该请求。",
    bad_cursor: "列表中的这个位置已失效，请重新打开列表。",
    body_too_large: "内容太长，无法发送。",
    event_rejected: "会话拒绝了这个更改。",
    forbidden_host: "此页面的访问地址不被服务器接受。",
    forbidden_origin: "此页面的来源不允许访问服务器。",
    internal_error: "服务器出错了，请重试。",
    invalid_body: "无法理解该请求。",
    invalid_boundary: "这一页历史记录不存在。",
    invalid_field: "其中一个值不可接受。",
    invalid_json: "无法理解该请求。",
    invalid_last_event_id: "实时连接无法恢复，请刷新页面。",
    invalid_query: "无法理解该请求。",
    invalid_time_zone: "无法识别该时区。请使用 UTC 或类似 Asia/Shanghai 的名称。",
    method_not_allowed: "服务器不允许这个操作。",
    missing_field: "缺少必填的值。",
    not_found: "未找到。",
    request_timeout: "服务器响应超时，请重试。",
    session_live_elsewhere: "此会话正在另一个服务器进程中打开。",
    session_not_found: "该会话不存在（或已不存在）。",
    session_unavailable: "此会话目前无法打开。",
    shutting_down: "服务器正在关闭。",
    storage_unavailable: "存储暂时没有响应，刚才的操作可能稍后仍会完成。请先查看，稍后再试。",
    unauthorized: "服务器需要访问令牌，请打开它打印的链接。",
    unknown_field: "请求中有服务器不认识的值。",
    unsupported_media_type: "无法理解该请求。",
    network: "无法连接服务器，请确认它正在运行。",
    no_channels: "这台服务器还没有设置任何通知渠道。",
    push_off: "这台服务器不提供设备通知（需要一个公开地址）。",
    invalid_subscription: "浏览器的通知订阅未被接受。",
    subscription_not_found: "那台设备已经不再接收通知。",
    unknown_tool: "助手请求了一个不存在的工具。",
    tool_not_found: "此会话中没有这个操作。",
    invalid_arguments: "调用工具的参数不被接受。",
    tool_failed: "工具执行失败。",
    invalid_prompt: "提醒需要填写内容。",
    invalid_selector: "请只给出一种：多久之后、什么时间，或多久一次。",
    invalid_rule: "这个时间不能用于提醒。",
    invalid_every_rule: "重复间隔必须是整数秒。",
    frequency_too_high: "重复提醒最多每 5 分钟一次。",
    not_future: "这个时间已经过去了。",
    invalid_delete_id: "没有指明要取消的提醒。",
    time_out_of_range: "这个时间太远了。",
    corrupt_schedule_log: "无法读取此会话的提醒。",
    persistence_uncertain: "不确定更改是否已保存，请查看提醒列表。",
    prompt_too_long: "提醒内容太长。",
    too_many_active: "此会话的提醒太多，请先取消一个。",
    schedule_not_found: "该提醒已不存在。",
    unknown: "出了点问题。",
  }),
});

/** The closed codes that have a sentence. */
export const KNOWN_CODES = Object.freeze(Object.keys(SENTENCES.en));

function codeOf(value) {
  if (typeof value === "string") return value;
  if (value !== null && typeof value === "object") {
    if (typeof value.code === "string") return value.code;
    if (value.name === "TypeError") return "network"; // fetch's "Failed to fetch"
  }
  return null;
}

/**
 * `{text, code}` for an error code, an API error or a tool's error value: a plain sentence in
 * `locale`, and the raw code (or null when there is none). A 5xx without a known code reads as
 * a server error; anything else unknown keeps its own message when it has one.
 */
export function describeError(value, locale = getLocale()) {
  const table = SENTENCES[normalizeLocale(locale)];
  const code = codeOf(value);
  if (code !== null && Object.hasOwn(table, code)) return { text: table[code], code };
  if (code !== null && /^http_5\d\d$/.test(code)) return { text: table.internal_error, code };
  const message = value !== null && typeof value === "object" ? value.message : undefined;
  const text = typeof message === "string" && message !== "" ? message : table.unknown;
  return { text, code };
}

/** One line for a status bar: "sentence (code)". */
export function errorLine(value, locale = getLocale()) {
  const { text, code } = describeError(value, locale);
  return code === null ? text : `${text} (${code})`;
}

/**
 * One line for any failure: coded errors (API errors, a turn's or a tool's error value) and
 * network failures in plain words with the raw code after them, other Errors and `{message}`
 * values by their message, strings as they are, anything else as JSON.
 */
export function errorMessage(error) {
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && (typeof error.code === "string" || error.name === "TypeError")) {
    return errorLine(error);
  }
  if (error && typeof error === "object" && typeof error.message === "string") {
    return error.message;
  }
  return prettyJson(error);
}
