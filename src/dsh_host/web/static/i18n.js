// UI strings (English / Chinese) and the current locale. Pure module: browser globals are
// reached only through guarded accessors, so Node can import it.

export const LOCALES = Object.freeze(["en", "zh"]);
export const STORAGE_KEY = "dsh.locale";

export const messages = Object.freeze({
  en: Object.freeze({
    "app.title": "dsh",
    "lang.label": "Language",
    "lang.en": "English",
    "lang.zh": "中文",
    "sessions.heading": "Sessions",
    "sessions.new": "New session",
    "sessions.empty": "No sessions yet.",
    "sessions.damaged": "damaged",
    "sessions.forkOf": "branch of {id}",
    "sessions.loadFailed": "Could not list sessions: {message}",
    "sessions.more": "Show more",
    "sessions.loadingMore": "Loading more…",
    "toolbar.fork": "Branch",
    "toolbar.forkHint": "Start a new conversation from here; reminders stay in this one",
    "toolbar.flush": "Flush",
    "details.summary": "Details",
    "details.id": "Session id",
    "skip.composer": "Skip to message box",
    "notify.off": "Notifications are off: reminders will show only in this open tab.",
    "toolbar.loadOlder": "Load older messages",
    "toolbar.loadingOlder": "Loading older messages…",
    "toolbar.olderFailed": "Could not load older messages: {message}",
    "transcript.label": "Transcript",
    "transcript.empty": "No messages yet.",
    "transcript.loading": "Loading…",
    "transcript.error": "Could not load this session: {message}",
    "transcript.retry": "Retry",
    "composer.label": "Message",
    "composer.placeholder": "Message… (Enter to send, Shift+Enter for a new line)",
    "composer.send": "Send",
    "composer.stop": "Stop",
    "node.user": "You",
    "node.assistant": "Assistant",
    "node.writing": "writing…",
    "node.viaPlugin": "via plugin {plugin}",
    "node.toolCall": "Tool call · {name}",
    "node.toolResult": "Tool result · {name}",
    "node.toolError": "error",
    "node.turnError": "Turn failed: {error}",
    "node.turnErrorUnknown": "Turn failed.",
    "node.turnCancelled": "Stopped",
    "event.title": "Event: {type}",
    "status.working": "Agent is working…",
    "status.stopping": "Stopping…",
    "status.connecting": "Connecting…",
    "status.reconnecting": "Connection lost, reconnecting…",
    "status.streamFailed": "Live updates unavailable: {message}",
    "status.flushed": "Flushed through seq {seq} (durable).",
    "status.flushNotDurable": "Flushed through seq {seq}, but nothing confirmed durability.",
    "status.forked": "Branched: a new conversation from here. Reminders stay in the one you left.",
    "status.created": "New session started.",
    "status.error": "Error: {message}",
    "tool.running": "{name} · running…",
    "tool.done": "{name} · done",
    "tool.failed": "{name} · failed: {reason}",
    "tool.byUser": "You",
    "tool.arguments": "Arguments",
    "tool.value": "Result",
    "followup.generic": "Message from {plugin} handed to the assistant",
    "fold.repeatsToday": "Delivered {count} times today",
    "fold.repeats": "Delivered {count} times · {day}",
    "tool.undoing": "Undoing…",
    "tool.undone": "Undone",
    "tool.undoFailed": "Could not undo: {reason}",
    "fork.divider": "Branched from {name}; its pending reminders stay there",
    "fork.dividerUnknown": "Branched from another session; its pending reminders stay there",
    "notify.reminder": "Reminder",
    "sessions.unnamed": "Untitled session",
    "app.tagline": "Reminders that wait for you",
    "drawer.open": "Show sessions",
    "notify.enable": "Enable notifications",
    "notify.title": "Reminder",
    "theme.auto": "Theme: auto",
    "theme.light": "Theme: light",
    "theme.dark": "Theme: dark",
    "rename.label": "Session name",
    "rename.save": "Save",
    "rename.cancel": "Cancel",
    "toolbar.rename": "Rename",
    "status.renamed": "Renamed.",
    "empty.title": "What should I remind you of?",
    "empty.hint": "Ask in plain words. Try one of these:",
    "empty.example1": "remind me to stretch in 10 minutes",
    "empty.example2": "remind me tomorrow at 9am to call mom",
    "empty.example3": "every 30 minutes remind me to drink water",
    "panels.label": "Session panels",
    "sessions.pending": "{count} pending",
    "sessions.pendingLabel": "{count} pending reminders",
    "nav.label": "Overview",
    "nav.home": "Start",
    "board.showMore": "Show more",
    "board.loadingMore": "Loading more…",
    "board.failed": "Could not load this list: {message}",
    "board.empty": "Nothing here yet.",
    "board.andMore": "… and {count} more",
    "board.actionFailed": "That did not work: {reason}",
    "details.delete": "Delete session",
    "delete.title": "Delete session",
    "delete.question": "Delete “{name}”?",
    "delete.items": "Its {count} pending items will be deleted too.",
    "delete.gap": " ",
    "delete.confirm": "Delete",
    "delete.cancel": "Cancel",
    "delete.deleting": "Deleting…",
    "delete.failed": "Could not delete: {message}",
    "status.deleted": "Deleted “{name}”.",
    "notify.settings": "Notifications",
    "notify.heading": "Notifications",
    "notify.loading": "Loading…",
    "notify.loadFailed": "Could not load the notification settings: {message}",
    "notify.intro": "Reminders that come due are also sent here:",
    "notify.none": "No notification channel is set up on this server, so reminders show only in the page.",
    "notify.channelsLabel": "Where reminders are sent",
    "notify.thisDevice": "{service} · this device",
    "notify.test": "Send a test notification",
    "notify.testing": "Sending…",
    "notify.testTitle": "dsh: test notification",
    "notify.testBody": "If you can read this, your reminders reach you here.",
    "notify.testFailed": "Could not send a test notification: {message}",
    "notify.resultDelivered": "Delivered",
    "notify.resultRetry": "Not delivered: {reason}",
    "notify.resultFailed": "Refused: {reason}",
    "notify.resultUnknown": "Sent, but no answer came back: {reason}",
    "notify.reasonUnknown": "no reason given",
    "notify.device": "This device",
    "notify.pushHint": "Reminders reach this browser even when dsh is closed.",
    "notify.pushEnable": "Notify me on this device",
    "notify.pushStop": "Stop notifications on this device",
    "notify.pushWorking": "One moment…",
    "notify.pushOn": "This device gets notifications.",
    "notify.pushStopped": "This device no longer gets notifications.",
    "notify.pushRefused": "The browser refused notifications for this page. Allow them in the site settings, then try again.",
    "notify.pushUnsupported": "This browser cannot get notifications while the page is closed.",
    "notify.pushUnreachable": "This browser could not reach a push service (a private window cannot), so this device cannot get notifications right now.",
    "notify.pushFailed": "Could not turn on notifications on this device. {message}",
    "notify.workerSlow": "The browser did not start the notification helper in time. Try again.",
    "notify.close": "Close",
  }),
  zh: Object.freeze({
    "app.title": "dsh",
    "lang.label": "语言",
    "lang.en": "English",
    "lang.zh": "中文",
    "sessions.heading": "会话",
    "sessions.new": "新建会话",
    "sessions.empty": "还没有会话。",
    "sessions.damaged": "已损坏",
    "sessions.forkOf": "分支自 {id}",
    "sessions.loadFailed": "无法列出会话：{message}",
    "sessions.more": "显示更多",
    "sessions.loadingMore": "正在加载更多…",
    "toolbar.fork": "分支",
    "toolbar.forkHint": "从这里开始一段新对话；提醒留在这段对话里",
    "toolbar.flush": "刷写",
    "details.summary": "详情",
    "details.id": "会话编号",
    "skip.composer": "跳到输入框",
    "notify.off": "通知已关闭：提醒只会显示在这个打开的标签页里。",
    "toolbar.loadOlder": "加载更早的消息",
    "toolbar.loadingOlder": "正在加载更早的消息…",
    "toolbar.olderFailed": "无法加载更早的消息：{message}",
    "transcript.label": "对话记录",
    "transcript.empty": "还没有消息。",
    "transcript.loading": "加载中…",
    "transcript.error": "无法加载此会话：{message}",
    "transcript.retry": "重试",
    "composer.label": "消息",
    "composer.placeholder": "输入消息…（Enter 发送，Shift+Enter 换行）",
    "composer.send": "发送",
    "composer.stop": "停止",
    "node.user": "你",
    "node.assistant": "助手",
    "node.writing": "正在输入…",
    "node.viaPlugin": "来自插件 {plugin}",
    "node.toolCall": "工具调用 · {name}",
    "node.toolResult": "工具结果 · {name}",
    "node.toolError": "错误",
    "node.turnError": "本轮失败：{error}",
    "node.turnErrorUnknown": "本轮失败。",
    "node.turnCancelled": "已停止",
    "event.title": "事件：{type}",
    "status.working": "智能体正在处理…",
    "status.stopping": "正在停止…",
    "status.connecting": "正在连接…",
    "status.reconnecting": "连接已断开，正在重新连接…",
    "status.streamFailed": "实时更新不可用：{message}",
    "status.flushed": "已刷写至序号 {seq}（已持久化）。",
    "status.flushNotDurable": "已刷写至序号 {seq}，但没有确认持久化。",
    "status.forked": "已建立分支：从这里开始的新对话。提醒留在原来的对话里。",
    "status.created": "已新建会话。",
    "status.error": "错误：{message}",
    "tool.running": "{name} · 运行中…",
    "tool.done": "{name} · 完成",
    "tool.failed": "{name} · 失败：{reason}",
    "tool.byUser": "你",
    "tool.arguments": "参数",
    "tool.value": "结果",
    "followup.generic": "来自 {plugin} 的消息已交给助手",
    "fold.repeatsToday": "今天已送达 {count} 次",
    "fold.repeats": "{day} 已送达 {count} 次",
    "tool.undoing": "正在撤销…",
    "tool.undone": "已撤销",
    "tool.undoFailed": "无法撤销：{reason}",
    "fork.divider": "分支自「{name}」；它的待办提醒留在原会话",
    "fork.dividerUnknown": "分支自另一个会话；它的待办提醒留在原会话",
    "notify.reminder": "提醒",
    "sessions.unnamed": "未命名会话",
    "app.tagline": "会等你的提醒",
    "drawer.open": "显示会话",
    "notify.enable": "开启通知",
    "notify.title": "提醒",
    "theme.auto": "主题：自动",
    "theme.light": "主题：浅色",
    "theme.dark": "主题：深色",
    "rename.label": "会话名称",
    "rename.save": "保存",
    "rename.cancel": "取消",
    "toolbar.rename": "重命名",
    "status.renamed": "已重命名。",
    "empty.title": "要我提醒你什么？",
    "empty.hint": "用平常的话说就行。试试这些：",
    "empty.example1": "提醒我10分钟后伸展一下",
    "empty.example2": "明天早上9点提醒我给妈妈打电话",
    "empty.example3": "每30分钟提醒我喝水",
    "panels.label": "会话面板",
    "sessions.pending": "{count} 待办",
    "sessions.pendingLabel": "{count} 条待办提醒",
    "nav.label": "概览",
    "nav.home": "首页",
    "board.showMore": "显示更多",
    "board.loadingMore": "正在加载更多…",
    "board.failed": "无法加载这个列表：{message}",
    "board.empty": "这里还没有内容。",
    "board.andMore": "……还有 {count} 条",
    "board.actionFailed": "操作没有成功：{reason}",
    "details.delete": "删除会话",
    "delete.title": "删除会话",
    "delete.question": "删除“{name}”？",
    "delete.items": "它的 {count} 项待办也会一并删除。",
    "delete.gap": "",
    "delete.confirm": "删除",
    "delete.cancel": "取消",
    "delete.deleting": "正在删除…",
    "delete.failed": "无法删除：{message}",
    "status.deleted": "已删除“{name}”。",
    "notify.settings": "通知",
    "notify.heading": "通知",
    "notify.loading": "加载中…",
    "notify.loadFailed": "无法加载通知设置：{message}",
    "notify.intro": "到时的提醒也会发送到这里：",
    "notify.none": "这台服务器还没有设置通知渠道，提醒只会显示在页面里。",
    "notify.channelsLabel": "提醒发送到的地方",
    "notify.thisDevice": "{service} · 这台设备",
    "notify.test": "发送测试通知",
    "notify.testing": "正在发送…",
    "notify.testTitle": "dsh：测试通知",
    "notify.testBody": "如果你看到了这条消息，提醒就能送到这里。",
    "notify.testFailed": "无法发送测试通知：{message}",
    "notify.resultDelivered": "已送达",
    "notify.resultRetry": "没有送达：{reason}",
    "notify.resultFailed": "被拒绝：{reason}",
    "notify.resultUnknown": "已发送，但没有收到回应：{reason}",
    "notify.reasonUnknown": "未说明原因",
    "notify.device": "这台设备",
    "notify.pushHint": "即使关闭了 dsh，提醒也会送到这个浏览器。",
    "notify.pushEnable": "在这台设备上通知我",
    "notify.pushStop": "停止在这台设备上通知",
    "notify.pushWorking": "请稍候…",
    "notify.pushOn": "这台设备会收到通知。",
    "notify.pushStopped": "这台设备不再接收通知。",
    "notify.pushRefused": "浏览器拒绝了此页面的通知。请在网站设置中允许通知，然后再试。",
    "notify.pushUnsupported": "这个浏览器无法在页面关闭时接收通知。",
    "notify.pushUnreachable": "这个浏览器连接不到推送服务（无痕窗口无法连接），所以这台设备暂时无法接收通知。",
    "notify.pushFailed": "无法在这台设备上开启通知。{message}",
    "notify.workerSlow": "浏览器没有及时启动通知助手，请再试一次。",
    "notify.close": "关闭",
  }),
});

function storage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // access can throw (privacy settings, opaque origins)
  }
}

/** Normalize any language tag to a supported locale ("zh*" -> "zh", else "en"). */
export function normalizeLocale(value) {
  return typeof value === "string" && /^zh/i.test(value.trim()) ? "zh" : "en";
}

/** The default locale from `navigator.language`. */
export function detectLocale(navigatorLike = globalThis.navigator) {
  let language;
  try {
    language = navigatorLike?.language;
  } catch {
    language = undefined;
  }
  return normalizeLocale(language);
}

let current = null;
const listeners = new Set();

export function getLocale() {
  if (current === null) {
    let stored = null;
    try {
      stored = storage()?.getItem(STORAGE_KEY) ?? null;
    } catch {
      stored = null;
    }
    current = LOCALES.includes(stored) ? stored : detectLocale();
  }
  return current;
}

/** Switch and persist the locale; listeners run only on an actual change. */
export function setLocale(locale) {
  const next = LOCALES.includes(locale) ? locale : normalizeLocale(locale);
  const previous = getLocale();
  try {
    storage()?.setItem(STORAGE_KEY, next);
  } catch {
    // not persisted; still switch for this page
  }
  if (next === previous) return;
  current = next;
  for (const listener of [...listeners]) {
    try {
      listener(next, previous);
    } catch (error) {
      globalThis.console?.error?.("locale listener failed", error);
    }
  }
}

/** Subscribe to locale switches; returns the unsubscribe function. */
export function onLocaleChange(callback) {
  listeners.add(callback);
  return () => listeners.delete(callback);
}

// Plugin locale namespaces: namespace -> stack of registered {en, zh} tables (newest last).
const namespaces = new Map();

function isCoreNamespace(namespace) {
  const prefix = `${namespace}.`;
  return Object.keys(messages.en).some((key) => key.startsWith(prefix));
}

/**
 * Register a plugin's strings as the locale namespace `namespace`: afterwards
 * `t("namespace.key")` reads `tables[locale].key` (falling back to `tables.en.key`). The
 * newest registration of a namespace wins; returns the function that removes this one.
 */
export function registerMessages(namespace, tables) {
  if (typeof namespace !== "string" || !/^[A-Za-z0-9_-]+$/.test(namespace)) {
    throw new TypeError("a message namespace is a non-empty word without dots");
  }
  if (isCoreNamespace(namespace)) {
    throw new Error(`the message namespace ${namespace} belongs to the host`);
  }
  if (tables === null || typeof tables !== "object" || typeof tables.en !== "object") {
    throw new TypeError("registerMessages needs at least an English table");
  }
  const registration = { tables };
  const stack = namespaces.get(namespace) ?? [];
  stack.push(registration);
  namespaces.set(namespace, stack);
  return () => {
    const index = stack.indexOf(registration);
    if (index < 0) return;
    stack.splice(index, 1);
    if (stack.length === 0 && namespaces.get(namespace) === stack) namespaces.delete(namespace);
  };
}

function template(key, locale) {
  const dot = key.indexOf(".");
  const stack = dot > 0 ? namespaces.get(key.slice(0, dot)) : undefined;
  if (stack !== undefined) {
    const { tables } = stack[stack.length - 1];
    const name = key.slice(dot + 1);
    return tables[locale]?.[name] ?? tables.en[name];
  }
  return messages[locale][key] ?? messages.en[key];
}

/**
 * Translate `key` (a host key, or "namespace.key" for a registered plugin namespace) with
 * `{name}` placeholders filled from `params` in one pass (a parameter value is never
 * re-interpreted as a placeholder). `locale` may be any language tag ("zh-CN" -> "zh").
 * Falls back to English, then to the key.
 */
export function t(key, params, locale = getLocale()) {
  const lang = LOCALES.includes(locale) ? locale : normalizeLocale(locale);
  const found = template(key, lang);
  return (typeof found === "string" ? found : key).replace(/\{([A-Za-z0-9_]+)\}/g, (match, name) =>
    params && Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : match,
  );
}
