// dsh browser client: the page around the conversation. The colour theme (auto follows
// prefers-color-scheme; light and dark override it, remembered), the phone drawer for the
// session list, notifications for reminders that arrive while the tab is hidden (permission
// asked only from the header button; refused or blocked, one plain sentence says reminders show
// only in the open tab), the skip link to the message box, the developer setting (debugMode)
// and the live `<time data-dsh-relative>` texts.

import { $ } from "./dom.js";
import { getLocale, t } from "./i18n.js";
import { createTime, toMs } from "./time.js";

export const THEMES = Object.freeze(["auto", "light", "dark"]);
const THEME_KEY = "dsh.theme";
const DEBUG_KEY = "dsh.debug";
const APP_TITLE = "dsh";

function storage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------ developer setting

/**
 * Whether the page shows developer controls (Flush): `?debug=1` in the address, or
 * `localStorage["dsh.debug"] === "1"` (set it in the browser's console).
 */
export function debugMode() {
  try {
    if (new URLSearchParams(globalThis.window?.location?.search ?? "").get("debug") === "1") {
      return true;
    }
    return storage()?.getItem(DEBUG_KEY) === "1";
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ theme

export function currentTheme() {
  let stored = null;
  try {
    stored = storage()?.getItem(THEME_KEY) ?? null;
  } catch {
    stored = null;
  }
  return THEMES.includes(stored) ? stored : "auto";
}

export function applyTheme(theme = currentTheme()) {
  const root = document.documentElement;
  if (theme === "auto") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", theme);
  const button = $("theme");
  if (button) button.textContent = t(`theme.${theme}`);
}

function cycleTheme() {
  const next = THEMES[(THEMES.indexOf(currentTheme()) + 1) % THEMES.length];
  try {
    storage()?.setItem(THEME_KEY, next);
  } catch {
    // not remembered; still applied to this page
  }
  applyTheme(next);
}

// ------------------------------------------------------------------ drawer

export function setDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  $("drawer-toggle")?.setAttribute("aria-expanded", open ? "true" : "false");
  const backdrop = $("drawer-backdrop");
  if (backdrop) backdrop.hidden = !open;
  // The keyboard starts at the drawer's top: the start page and the boards, then the Sessions.
  if (open) $("home-entry")?.focus();
}

function drawerOpen() {
  return document.body.classList.contains("drawer-open");
}

// ------------------------------------------------------------------ notifications

const unread = { count: 0, notes: [] };

function notificationApi() {
  return typeof globalThis.Notification === "function" ? globalThis.Notification : null;
}

/** The header's Enable button (permission not asked yet) or, once notifications are refused
 * or blocked, the sentence saying reminders show only in the open tab. */
export function renderNotifyButton() {
  const api = notificationApi();
  const button = $("enable-notifications");
  if (button) button.hidden = api === null || api.permission !== "default";
  const note = $("notify-note");
  if (note) note.hidden = api === null || api.permission !== "denied";
}

function updateTitle() {
  document.title = unread.count > 0 ? `(${unread.count}) ${APP_TITLE}` : APP_TITLE;
}

/** Elements that arrived live: a `data-notify` one in a hidden tab raises a notification. */
export function noticeArrivals(elements) {
  if (document.visibilityState !== "hidden") return;
  for (const element of elements) {
    const marked = element?.matches?.("[data-notify]")
      ? element
      : element?.querySelector?.("[data-notify]");
    if (!marked) continue;
    unread.count += 1;
    const api = notificationApi();
    if (api !== null && api.permission === "granted") {
      try {
        unread.notes.push(new api(t("notify.title"), { body: marked.getAttribute("data-notify") }));
      } catch (error) {
        console.warn("dsh: notification failed", error);
      }
    }
  }
  updateTitle();
}

function clearUnread() {
  if (document.visibilityState === "hidden") return;
  unread.count = 0;
  for (const note of unread.notes.splice(0)) note.close?.();
  updateTitle();
}

// ------------------------------------------------------------------ live times

/**
 * Refresh every `<time datetime data-dsh-relative>` in `root` from the clock: relative within the
 * hour, else absolute; `data-dsh-relative="always"` reads relative at any distance ("in 3 h").
 */
export function refreshTimes(root = document) {
  const time = createTime({ locale: getLocale() });
  for (const node of root.querySelectorAll("time[data-dsh-relative]")) {
    const ms = toMs(node.getAttribute("datetime"));
    if (ms === null) continue;
    const always = node.getAttribute("data-dsh-relative") === "always";
    const { text, title } = always ? { text: time.relative(ms), title: time.utc(ms) } : time.when(ms);
    if (node.textContent !== text) node.textContent = text;
    if (node.getAttribute("title") !== title) node.setAttribute("title", title);
  }
}

// ------------------------------------------------------------------ wiring

export function wireChrome() {
  applyTheme();
  $("theme")?.addEventListener("click", cycleTheme);
  $("drawer-toggle")?.addEventListener("click", () => setDrawer(!drawerOpen()));
  $("drawer-backdrop")?.addEventListener("click", () => setDrawer(false));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && drawerOpen()) {
      setDrawer(false);
      $("drawer-toggle")?.focus();
    }
  });
  $("enable-notifications")?.addEventListener("click", async () => {
    const api = notificationApi();
    if (api === null) return;
    try {
      await api.requestPermission();
    } finally {
      renderNotifyButton();
    }
  });
  renderNotifyButton();
  // The skip link moves the keyboard to the message box (and leaves the address alone).
  $("skip-link")?.addEventListener("click", (event) => {
    event.preventDefault();
    $("composer")?.focus();
  });
  document.addEventListener("visibilitychange", clearUnread);
  window.addEventListener("focus", () => {
    clearUnread();
    renderNotifyButton(); // the permission may have changed in the browser's settings
  });
  window.setInterval(() => refreshTimes(), 1000);
}
