// dsh service worker: shows the Web Push notifications the host sends (a reminder that is due)
// and runs their buttons. Served from /sw.js, so that its scope is the whole page. A classic
// script: no import, no module.
//
// A push carries JSON {title, body, key, url, data} (the host's Web Push sender). It is shown
// with `tag: key`, so a repeat of one notice replaces it instead of stacking. `data.actions`,
// when present, is a JSON list of {action, title, tool, arguments}: each becomes a button,
// labelled in the language the page stored ("done" and "snooze" have words of their own; any
// other keeps its title). A button runs its tool on the Session `data.sessionId` as the person's
// action (POST /api/sessions/{id}/tools/{tool} with the token the page stored) and closes the
// notification without opening the page; if that fails, one plain sentence takes the
// notification's place. Clicking the notification itself focuses a tab showing `url`, or opens
// one.
//
// The page stores {token, language} here (a message {type: "dsh.settings"}) when the person
// turns on notifications on this device, and forgets them ({type: "dsh.forget"}) when they turn
// them off. They are kept in Cache Storage: a worker has no sessionStorage, and the browser
// stops and starts it again between pushes.

const SETTINGS_CACHE = "dsh-worker";
const SETTINGS_URL = "/__dsh/worker-settings";

const WORDS = {
  en: {
    buttons: { done: "Done", snooze: "Snooze 10 min" },
    reminder: "Reminder",
    failed: "That did not work ({reason}). Open dsh to try again.",
  },
  zh: {
    buttons: { done: "完成", snooze: "10 分钟后提醒" },
    reminder: "提醒",
    failed: "操作没有成功（{reason}）。请打开 dsh 再试一次。",
  },
};

function words(language) {
  return WORDS[language] ?? WORDS.en;
}

// ------------------------------------------------------------------ settings

async function readSettings() {
  try {
    const cache = await caches.open(SETTINGS_CACHE);
    const stored = await cache.match(SETTINGS_URL);
    const value = stored ? await stored.json() : null;
    return {
      token: typeof value?.token === "string" && value.token !== "" ? value.token : null,
      language: value?.language === "zh" ? "zh" : "en",
    };
  } catch {
    return { token: null, language: "en" };
  }
}

async function writeSettings(message) {
  const settings = {
    token: typeof message.token === "string" && message.token !== "" ? message.token : null,
    language: message.language === "zh" ? "zh" : "en",
  };
  const cache = await caches.open(SETTINGS_CACHE);
  await cache.put(
    SETTINGS_URL,
    new Response(JSON.stringify(settings), { headers: { "Content-Type": "application/json" } }),
  );
}

async function forgetSettings() {
  await caches.delete(SETTINGS_CACHE);
}

// ------------------------------------------------------------------ showing a push

/** The buttons a notice offers: `data.actions` (a JSON string, or already a list). */
function actionsOf(data) {
  let list = data?.actions;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list);
    } catch {
      list = [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list.filter(
    (item) =>
      item !== null &&
      typeof item === "object" &&
      typeof item.action === "string" &&
      item.action !== "" &&
      typeof item.tool === "string" &&
      item.tool !== "",
  );
}

function payloadOf(data) {
  if (!data) return {};
  try {
    const value = data.json();
    return value !== null && typeof value === "object" ? value : {};
  } catch {
    return { body: data.text() };
  }
}

/** The notification a push shows: `{title, options}`. */
function notificationOf(payload, settings) {
  const said = words(settings.language);
  const extra = payload.data !== null && typeof payload.data === "object" ? payload.data : {};
  const actions = actionsOf(extra);
  const key = typeof payload.key === "string" ? payload.key : "";
  const title =
    typeof payload.title === "string" && payload.title !== "" ? payload.title : said.reminder;
  const limit = typeof Notification === "function" ? Notification.maxActions ?? 2 : 2;
  const options = {
    body: typeof payload.body === "string" ? payload.body : "",
    lang: settings.language === "zh" ? "zh-CN" : "en",
    data: {
      ...extra,
      actions,
      key,
      url: typeof payload.url === "string" ? payload.url : null,
      title,
    },
    actions: actions.slice(0, limit).map((item) => ({
      action: item.action,
      title: Object.hasOwn(said.buttons, item.action)
        ? said.buttons[item.action]
        : typeof item.title === "string" && item.title !== ""
          ? item.title
          : item.action,
    })),
  };
  if (key !== "") options.tag = key;
  return { title, options };
}

async function showPush(data) {
  const settings = await readSettings();
  const { title, options } = notificationOf(payloadOf(data), settings);
  await self.registration.showNotification(title, options);
}

// ------------------------------------------------------------------ clicks

/** Run `chosen.tool` on the notice's Session; null when done, else the reason it failed. */
async function runTool(sessionId, chosen) {
  const settings = await readSettings();
  const headers = { "Content-Type": "application/json", Accept: "application/json" };
  if (settings.token !== null) headers.Authorization = `Bearer ${settings.token}`;
  const path =
    `/api/sessions/${encodeURIComponent(sessionId)}` +
    `/tools/${encodeURIComponent(chosen.tool)}`;
  const args =
    chosen.arguments !== null && typeof chosen.arguments === "object" ? chosen.arguments : {};
  let response;
  try {
    response = await fetch(path, {
      method: "POST",
      headers,
      body: JSON.stringify({ arguments: args }),
      cache: "no-store",
    });
  } catch {
    return "the server cannot be reached";
  }
  if (response.ok) return null;
  try {
    const answer = await response.json();
    const message = answer?.error?.message;
    if (typeof message === "string" && message !== "") return message;
  } catch {
    // no JSON: the status says it
  }
  return `HTTP ${response.status}`;
}

async function openPage(url) {
  const target = new URL(typeof url === "string" && url !== "" ? url : "/", self.location.origin);
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const client of windows) {
    if (client.url === target.href && typeof client.focus === "function") {
      await client.focus();
      return;
    }
  }
  await self.clients.openWindow(target.href);
}

/** What a click does: a button runs its tool (the page stays closed); the body opens the page. */
async function clicked(notification, action) {
  const data = notification.data !== null && typeof notification.data === "object"
    ? notification.data
    : {};
  notification.close();
  if (typeof action !== "string" || action === "") {
    await openPage(data.url);
    return;
  }
  const chosen = actionsOf(data).find((item) => item.action === action);
  if (chosen === undefined || typeof data.sessionId !== "string" || data.sessionId === "") return;
  const reason = await runTool(data.sessionId, chosen);
  if (reason === null) return;
  const settings = await readSettings();
  const options = {
    body: words(settings.language).failed.replace("{reason}", reason),
    lang: settings.language === "zh" ? "zh-CN" : "en",
    data: { ...data, actions: [] },
  };
  if (typeof data.key === "string" && data.key !== "") options.tag = data.key;
  await self.registration.showNotification(
    typeof data.title === "string" ? data.title : notification.title,
    options,
  );
}

// ------------------------------------------------------------------ events

/** Keep the worker alive until `work` ends (an event built by a script cannot be kept). */
function keep(event, work) {
  const logged = work.catch((error) => console.warn("dsh: the service worker failed", error));
  try {
    event.waitUntil(logged);
  } catch {
    // not dispatched by the browser: the work runs all the same
  }
}

self.addEventListener("install", (event) => keep(event, self.skipWaiting()));

self.addEventListener("activate", (event) => keep(event, self.clients.claim()));

self.addEventListener("push", (event) => keep(event, showPush(event.data)));

self.addEventListener("notificationclick", (event) => {
  keep(event, clicked(event.notification, event.action));
});

self.addEventListener("message", (event) => {
  const message = event.data;
  const reply = () => event.ports?.[0]?.postMessage({ ok: true });
  if (message?.type === "dsh.settings") keep(event, writeSettings(message).then(reply));
  else if (message?.type === "dsh.forget") keep(event, forgetSettings().then(reply));
});
