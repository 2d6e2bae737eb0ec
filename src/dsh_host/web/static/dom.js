// dsh browser client: the page's elements (by data-testid), element building, scrolling and
// times. Every string that comes from a Session reaches the DOM through textContent only.

export const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

export const els = {
  newSession: $("new-session"),
  sessionList: $("session-list"),
  sessionsError: $("sessions-error"),
  sessionId: $("session-id"),
  sessionName: $("session-name"),
  rename: $("rename"),
  renameForm: $("rename-form"),
  renameInput: $("rename-input"),
  renameCancel: $("rename-cancel"),
  emptyState: $("empty-state"),
  examples: $("examples"),
  panels: $("panels"),
  conversation: $("conversation"),
  details: $("session-details"),
  fork: $("fork"),
  flush: $("flush"),
  scroll: $("transcript-scroll"),
  loadOlder: $("load-older"),
  olderNote: $("older-note"),
  transcript: $("transcript"),
  drafts: $("drafts"),
  placeholder: $("transcript-placeholder"),
  status: $("status"),
  form: $("composer-form"),
  composer: $("composer"),
  skipLink: $("skip-link"),
  send: $("send"),
  stop: $("stop"),
  langButtons: [...document.querySelectorAll("button[data-locale]")],
  homeEntry: $("home-entry"),
  boardEntries: $("board-entries"),
  home: $("home"),
  emptyTitle: $("empty-title"),
  boardView: $("board-view"),
  boardHeading: $("board-heading"),
  boardBody: $("board-body"),
  deleteSession: $("delete-session"),
  deleteDialog: $("delete-dialog"),
  deleteText: $("delete-text"),
  deleteError: $("delete-error"),
  deleteCancel: $("delete-cancel"),
  deleteConfirm: $("delete-confirm"),
  notifyEntry: $("notify-entry"),
  notifyDialog: $("notify-dialog"),
  notifyIntro: $("notify-intro"),
  notifyChannels: $("notify-channels"),
  notifyTest: $("notify-test"),
  notifyError: $("notify-error"),
  notifyDevice: $("notify-device"),
  notifyPush: $("notify-push"),
  notifyPushState: $("notify-push-state"),
  notifyClose: $("notify-close"),
};

export function el(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined && text !== null) element.textContent = String(text);
  return element;
}

export function isNearBottom(scroller) {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
}

export function scrollToBottom(scroller) {
  scroller.scrollTop = scroller.scrollHeight;
}

/** Epoch milliseconds from an epoch-ms number or a date string; null when it is neither. */
export function toEpochMs(value) {
  const ms = typeof value === "number" ? value : Date.parse(String(value));
  return Number.isFinite(ms) ? ms : null;
}
