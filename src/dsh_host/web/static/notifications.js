// dsh browser client: the Notifications dialog (its entry sits beside the Session list). It
// shows where due reminders are also sent: the channels the server was started with and the
// devices that get Web Push, each by its masked label (as text); "Send a test notification"
// sends one on every channel and says, per channel, what happened in plain words; and, when the
// server offers Web Push, "Notify me on this device" asks the browser's permission, installs
// the service worker (/sw.js), subscribes with the server's key and registers the subscription
// (`POST /api/notify/push`). The worker is given the tab's token and the page's language, so
// that a notification's Done and Snooze work while the page is closed.
//
// Settings are read when the dialog opens, never at page load. The device's subscription id is
// kept in localStorage (one per browser profile, shared by its tabs). Every string from the
// server reaches the DOM as text only.

import { errorMessage } from "./errors.js";
import { getLocale, t } from "./i18n.js";

/** localStorage key of this browser's Web Push subscription id. */
export const PUSH_ID_KEY = "dsh.push";
/** The service worker's address; its scope is the whole page. */
export const WORKER_URL = "/sw.js";
/** How long the page waits for the worker to start or to answer (ms). */
const WORKER_WAIT_MS = 10000;

function storage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

function storedPushId(store = storage()) {
  try {
    return store?.getItem(PUSH_ID_KEY) ?? null;
  } catch {
    return null;
  }
}

function storePushId(id, store = storage()) {
  try {
    if (id === null) store?.removeItem(PUSH_ID_KEY);
    else store?.setItem(PUSH_ID_KEY, id);
  } catch {
    // not remembered: the dialog will offer to turn it on again
  }
}

/** One channel's test outcome in plain words: "Delivered", "Not delivered: 503 …". */
export function resultLine(result, translate = t) {
  const reason =
    typeof result?.reason === "string" && result.reason !== ""
      ? result.reason
      : translate("notify.reasonUnknown");
  switch (result?.status) {
    case "delivered":
      return translate("notify.resultDelivered");
    case "retry":
      return translate("notify.resultRetry", { reason });
    case "failed":
      return translate("notify.resultFailed", { reason });
    default:
      return translate("notify.resultUnknown", { reason });
  }
}

/** The bytes of a base64url string (the server's application server key). */
export function base64UrlBytes(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="));
  return Uint8Array.from(raw, (char) => char.charCodeAt(0));
}

function sameBytes(buffer, bytes) {
  if (!buffer) return false;
  const held = new Uint8Array(buffer);
  return held.length === bytes.length && held.every((value, index) => value === bytes[index]);
}

/** Why turning on Web Push failed, as a message key (and its parameters). */
class PushFailure extends Error {
  constructor(key, params) {
    super(key);
    this.key = key;
    this.params = params;
  }
}

function within(promise, ms, failure) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(failure), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Tell the service worker `message` and wait for its answer (it stores settings). */
async function tellWorker(worker, message) {
  if (!worker) return;
  const channel = new MessageChannel();
  const answered = new Promise((resolve) => {
    channel.port1.onmessage = () => resolve();
  });
  worker.postMessage(message, [channel.port2]);
  await within(answered, WORKER_WAIT_MS, new PushFailure("notify.workerSlow"));
}

/**
 * The dialog over the page's elements `{dialog, opener, intro, channels, test, device, push,
 * pushState, error, close}`. `http`: `{api, token}` (`token()` is the tab's token or null);
 * `onPermission()` runs once the browser answered the permission request; `browser`: the
 * globals it uses (`navigator`, `Notification`, `PushManager`), for tests.
 */
export class NotifyDialog {
  constructor({ elements, http, onPermission = () => {}, browser = globalThis }) {
    this._el = elements;
    this._http = http;
    this._onPermission = onPermission;
    this._browser = browser;
    this._state = this._fresh();
    elements.opener.addEventListener("click", () => this.open());
    elements.close.addEventListener("click", () => this.close());
    elements.test.addEventListener("click", () => this._test());
    elements.push.addEventListener("click", () => this._togglePush());
    elements.dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      this.close();
    });
  }

  _fresh() {
    return {
      loading: true,
      loadError: null,
      channels: [],
      push: { available: false, key: null },
      results: null,
      testing: false,
      testError: null,
      pushBusy: false,
      pushNote: null,
    };
  }

  get isOpen() {
    return this._open === true;
  }

  async open() {
    this._state = this._fresh();
    this._open = true;
    const dialog = this._el.dialog;
    if (typeof dialog.showModal === "function") {
      if (!dialog.open) dialog.showModal();
    } else dialog.setAttribute("open", "");
    this.render();
    this._el.close.focus();
    await this._load();
  }

  close() {
    this._open = false;
    const dialog = this._el.dialog;
    if (typeof dialog.close !== "function") dialog.removeAttribute("open");
    else if (dialog.open) dialog.close();
    this._el.opener.focus();
  }

  async _load() {
    try {
      const answer = await this._http.api("GET", "/api/notify");
      this._state.channels = Array.isArray(answer?.channels) ? answer.channels : [];
      const push = answer?.push ?? {};
      this._state.push = {
        available: push.available === true && typeof push.applicationServerKey === "string",
        key: typeof push.applicationServerKey === "string" ? push.applicationServerKey : null,
      };
      this._state.loadError = null;
      // A subscription the server no longer lists (its push service said it is gone, or it was
      // removed) is not this device's any more.
      const mine = storedPushId();
      if (mine !== null && !this._state.channels.some((channel) => channel?.id === mine)) {
        storePushId(null);
      }
    } catch (error) {
      this._state.loadError = error;
    } finally {
      this._state.loading = false;
      this.render();
    }
  }

  async _test() {
    const state = this._state;
    if (state.testing) return;
    state.testing = true;
    state.testError = null;
    this.render();
    try {
      const answer = await this._http.api("POST", "/api/notify/test", {
        title: t("notify.testTitle"),
        body: t("notify.testBody"),
      });
      const results = new Map();
      for (const result of Array.isArray(answer?.results) ? answer.results : []) {
        if (typeof result?.id === "string") results.set(result.id, result);
      }
      state.results = results;
    } catch (error) {
      state.testError = error;
    } finally {
      state.testing = false;
      this.render();
    }
  }

  /** This device's subscription id when the server still lists it, else null. */
  _mine() {
    const mine = storedPushId();
    return mine !== null && this._state.channels.some((channel) => channel?.id === mine)
      ? mine
      : null;
  }

  async _togglePush() {
    const state = this._state;
    if (state.pushBusy) return;
    state.pushBusy = true;
    state.pushNote = null;
    this.render();
    const on = this._mine() === null;
    try {
      if (on) await this._enablePush();
      else await this._disablePush();
      state.pushNote = { key: on ? "notify.pushOn" : "notify.pushStopped", tone: "ok" };
    } catch (error) {
      state.pushNote =
        error instanceof PushFailure
          ? { key: error.key, params: error.params, tone: "error" }
          : { key: "notify.pushFailed", params: { message: errorMessage(error) }, tone: "error" };
    } finally {
      state.pushBusy = false;
      await this._load();
    }
  }

  async _enablePush() {
    const { navigator: nav, Notification: api, PushManager: manager } = this._browser;
    if (!nav?.serviceWorker || typeof manager !== "function" || typeof api !== "function") {
      throw new PushFailure("notify.pushUnsupported");
    }
    const permission = await api.requestPermission();
    this._onPermission();
    if (permission !== "granted") throw new PushFailure("notify.pushRefused");
    let registration;
    try {
      await nav.serviceWorker.register(WORKER_URL, { scope: "/" });
      registration = await within(
        nav.serviceWorker.ready,
        WORKER_WAIT_MS,
        new PushFailure("notify.workerSlow"),
      );
    } catch (error) {
      if (error instanceof PushFailure) throw error;
      throw new PushFailure("notify.pushFailed", { message: String(error?.message ?? error) });
    }
    await this.syncWorker(registration);
    const key = base64UrlBytes(this._state.push.key ?? "");
    let subscription = await registration.pushManager.getSubscription();
    if (subscription !== null && !sameBytes(subscription.options?.applicationServerKey, key)) {
      await subscription.unsubscribe(); // made for another server key: it cannot be used
      subscription = null;
    }
    if (subscription === null) {
      try {
        subscription = await registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: key,
        });
      } catch (error) {
        throw new PushFailure(
          error?.name === "NotAllowedError" ? "notify.pushRefused" : "notify.pushUnreachable",
        );
      }
    }
    const added = await this._http.api("POST", "/api/notify/push", {
      subscription: subscription.toJSON(),
      userAgent: String(nav.userAgent ?? ""),
    });
    storePushId(added.id);
  }

  async _disablePush() {
    const mine = storedPushId();
    if (mine !== null) {
      try {
        await this._http.api("DELETE", `/api/notify/push/${encodeURIComponent(mine)}`);
      } catch (error) {
        if (error?.status !== 404) throw error;
      }
    }
    storePushId(null);
    const registration = await this._browser.navigator?.serviceWorker?.getRegistration?.("/");
    const subscription = await registration?.pushManager?.getSubscription?.();
    await subscription?.unsubscribe();
    await tellWorker(registration?.active, { type: "dsh.forget" });
  }

  /** Give the worker the tab's token and the page's language (again after a switch). */
  async syncWorker(registration) {
    let found = registration;
    if (found === undefined) {
      if (storedPushId() === null) return;
      found = await this._browser.navigator?.serviceWorker?.getRegistration?.("/");
    }
    await tellWorker(found?.active, {
      type: "dsh.settings",
      token: this._http.token(),
      language: getLocale(),
    });
  }

  // ---------------------------------------------------------------- rendering

  render() {
    const el = this._el;
    const state = this._state;
    const doc = el.dialog.ownerDocument ?? document;
    const make = (tag, className, text) => {
      const node = doc.createElement(tag);
      if (className) node.className = className;
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const mine = this._mine();
    el.intro.textContent = state.loading
      ? t("notify.loading")
      : state.loadError !== null
        ? t("notify.loadFailed", { message: errorMessage(state.loadError) })
        : state.channels.length === 0
          ? t("notify.none")
          : t("notify.intro");
    const rows = state.channels.map((channel) => {
      const row = make("li", "notify-channel");
      row.setAttribute("data-channel-id", String(channel?.id ?? ""));
      const name = make("span", "notify-channel-label", String(channel?.label ?? ""));
      const service = String(channel?.service ?? "");
      const detail = make(
        "span",
        "notify-channel-service",
        channel?.id === mine ? t("notify.thisDevice", { service }) : service,
      );
      row.append(name, detail);
      const result = state.results?.get(channel?.id);
      if (result !== undefined) {
        const line = make("span", "notify-channel-result", resultLine(result));
        line.setAttribute("data-status", String(result.status));
        row.append(line);
      }
      return row;
    });
    el.channels.replaceChildren(...rows);
    el.channels.hidden = rows.length === 0;
    el.test.hidden = rows.length === 0;
    el.test.textContent = t(state.testing ? "notify.testing" : "notify.test");
    el.test.disabled = state.testing;
    el.device.hidden = state.loading || !state.push.available;
    el.push.textContent = t(
      state.pushBusy ? "notify.pushWorking" : mine !== null ? "notify.pushStop" : "notify.pushEnable",
    );
    el.push.disabled = state.pushBusy;
    el.push.className = mine !== null ? "" : "primary";
    const note = state.pushNote ?? (mine !== null ? { key: "notify.pushOn", tone: "ok" } : null);
    el.pushState.textContent = note === null ? "" : t(note.key, note.params);
    el.pushState.setAttribute("data-tone", note?.tone ?? "");
    el.error.hidden = state.testError === null;
    el.error.textContent =
      state.testError === null ? "" : t("notify.testFailed", { message: errorMessage(state.testError) });
  }
}
