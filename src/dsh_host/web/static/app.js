// dsh browser client: wires the HTTP API, the event stream, the Session window, the
// transcript nodes and the renderer registry to the page. Every string that comes from a
// Session reaches the DOM through textContent / createTextNode only.

import { getLocale, onLocaleChange, setLocale, t } from "./i18n.js";
import { prettyJson, RendererRegistry } from "./registry.js";
import { jsonEqual, SessionWindow } from "./session-window.js";
import { connectEvents } from "./sse.js";
import { nodeFor, nodesFor } from "./transcript.js";

const TOKEN_KEY = "dsh.token";
const PAGE_SIZE = 50;
const OPEN_FALLBACK_MS = 3000;
const SESSIONS_REFRESH_MS = 15000;

// ------------------------------------------------------------------ auth and API

function readToken() {
  const fromUrl = new URLSearchParams(window.location.search).get("token");
  try {
    if (fromUrl) {
      window.sessionStorage.setItem(TOKEN_KEY, fromUrl);
      return fromUrl;
    }
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return fromUrl;
  }
}

const token = readToken();

function authHeaders() {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json", ...authHeaders() };
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let payload = null;
  if (text !== "") {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = null;
    }
  }
  if (!response.ok) {
    const error = payload && typeof payload === "object" ? payload.error : null;
    throw new ApiError(
      response.status,
      typeof error?.code === "string" ? error.code : `http_${response.status}`,
      typeof error?.message === "string" ? error.message : `HTTP ${response.status}`,
    );
  }
  return payload;
}

const sessionPath = (id, suffix = "") => `/api/sessions/${encodeURIComponent(id)}${suffix}`;

/**
 * One line for any failure: API errors with their code, Errors and `{message}` values by their
 * message, strings as they are, anything else (a turn's error value) as JSON.
 */
function errorMessage(error) {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && typeof error.message === "string") {
    return error.message;
  }
  return prettyJson(error);
}

// ------------------------------------------------------------------ DOM helpers

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

const els = {
  newSession: $("new-session"),
  sessionList: $("session-list"),
  sessionsError: $("sessions-error"),
  sessionId: $("session-id"),
  sessionNote: $("session-note"),
  resume: $("resume"),
  fork: $("fork"),
  flush: $("flush"),
  scroll: $("transcript-scroll"),
  loadOlder: $("load-older"),
  olderNote: $("older-note"),
  transcript: $("transcript"),
  placeholder: $("transcript-placeholder"),
  status: $("status"),
  form: $("composer-form"),
  composer: $("composer"),
  send: $("send"),
  langButtons: [...document.querySelectorAll("button[data-locale]")],
};

function el(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined && text !== null) element.textContent = String(text);
  return element;
}

function isNearBottom(scroller) {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
}

function scrollToBottom(scroller) {
  scroller.scrollTop = scroller.scrollHeight;
}

/** Epoch milliseconds from an epoch-ms number or a date string; null when it is neither. */
function toEpochMs(value) {
  const ms = typeof value === "number" ? value : Date.parse(String(value));
  return Number.isFinite(ms) ? ms : null;
}

function formatTime(value) {
  const ms = toEpochMs(value);
  if (ms === null) return value === undefined || value === null ? "" : String(value);
  try {
    return new Date(ms).toLocaleString(getLocale() === "zh" ? "zh-CN" : "en-US");
  } catch {
    return new Date(ms).toISOString();
  }
}

// ------------------------------------------------------------------ state

const registry = new RendererRegistry({ document });

const state = {
  sessions: null, // null until the first listing arrives
  sessionsError: null,
  current: null,
  notice: null, // {key, params, tone}
  busy: new Set(), // actions in flight ("create", "resume", "fork", "flush", "send")
};

function currentSessionInfo() {
  const current = state.current;
  return current ? state.sessions?.find((s) => s.id === current.id) ?? null : null;
}

function setNotice(key, params, tone = "info") {
  state.notice = key ? { key, params, tone } : null;
  renderStatus();
}

// ------------------------------------------------------------------ session list

/** Parents before their forks; roots newest first, forks oldest first; cycles tolerated. */
function sessionTree(sessions) {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map();
  const roots = [];
  for (const session of sessions) {
    const parent = session.parentSession;
    if (typeof parent === "string" && parent !== session.id && byId.has(parent)) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(session);
    } else {
      roots.push(session);
    }
  }
  const created = (s) => toEpochMs(s.createdAt) ?? 0;
  roots.sort((a, b) => created(b) - created(a));
  const out = [];
  const seen = new Set();
  const visit = (session, depth) => {
    if (seen.has(session.id)) return;
    seen.add(session.id);
    out.push({ session, depth });
    const kids = (children.get(session.id) ?? []).slice().sort((a, b) => created(a) - created(b));
    for (const kid of kids) visit(kid, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  for (const session of sessions) visit(session, 0); // members of a parent cycle
  return out;
}

function renderSessions() {
  const list = els.sessionList;
  const items = sessionTree(state.sessions ?? []);
  const rows = items.map(({ session, depth }) => {
    const li = el("li", "session-item");
    li.setAttribute("data-session-id", session.id);
    li.setAttribute("data-live", session.live ? "true" : "false");
    li.style.setProperty("--depth", String(Math.min(depth, 8)));
    if (depth > 0) li.classList.add("is-fork");
    const button = el("button", "session-button");
    button.type = "button";
    if (state.current && state.current.id === session.id) {
      button.setAttribute("aria-current", "true");
      li.classList.add("is-current");
    }
    const damaged = session.damaged === true; // stored, but the host could not decode it
    if (damaged) {
      li.setAttribute("data-damaged", "true");
      li.classList.add("is-damaged");
    }
    const top = el("span", "session-row");
    top.appendChild(el("span", "session-name", session.id));
    const badge = damaged
      ? el("span", "badge badge-error", t("sessions.damaged"))
      : el(
          "span",
          session.live ? "badge badge-live" : "badge badge-cold",
          t(session.live ? "sessions.live" : "sessions.cold"),
        );
    top.appendChild(badge);
    button.appendChild(top);
    if (session.createdAt !== undefined) {
      const time = el("span", "session-created", formatTime(session.createdAt));
      button.appendChild(time);
    }
    if (damaged && typeof session.error === "string") {
      button.appendChild(el("span", "session-damage", session.error));
    }
    if (typeof session.parentSession === "string") {
      button.appendChild(
        el("span", "session-lineage", t("sessions.forkOf", { id: session.parentSession })),
      );
    }
    button.addEventListener("click", () => selectSession(session.id));
    li.appendChild(button);
    return li;
  });
  if (rows.length === 0) rows.push(el("li", "session-empty", t("sessions.empty")));
  list.replaceChildren(...rows);
  if (state.sessionsError) {
    els.sessionsError.hidden = false;
    els.sessionsError.textContent = t("sessions.loadFailed", {
      message: errorMessage(state.sessionsError),
    });
  } else {
    els.sessionsError.hidden = true;
    els.sessionsError.textContent = "";
  }
}

let refreshing = null;

async function refreshSessions() {
  if (refreshing) return refreshing;
  refreshing = (async () => {
    const previous = state.sessions;
    const previousError = state.sessionsError;
    try {
      const payload = await api("GET", "/api/sessions");
      state.sessions = Array.isArray(payload?.sessions)
        ? payload.sessions.filter((s) => s && typeof s.id === "string")
        : [];
      state.sessionsError = null;
    } catch (error) {
      state.sessionsError = error;
    } finally {
      refreshing = null;
    }
    // Periodic refreshes leave the list (and keyboard focus in it) alone when nothing changed.
    if (
      !jsonEqual(previous, state.sessions) ||
      Boolean(previousError) !== Boolean(state.sessionsError)
    ) {
      renderSessions();
      renderChrome();
    }
  })();
  return refreshing;
}

// ------------------------------------------------------------------ open Session

function closeCurrent() {
  const current = state.current;
  if (!current) return;
  state.current = null;
  clearTimeout(current.fallbackTimer);
  current.conn.close();
  current.win.close();
}

function replaceUrlSession(id) {
  const url = new URL(window.location.href);
  if (id) url.searchParams.set("session", id);
  else url.searchParams.delete("session");
  window.history.replaceState(null, "", url);
}

function selectSession(id, { updateUrl = true } = {}) {
  if (state.current && state.current.id === id) return;
  closeCurrent();
  const current = {
    id,
    streamState: "connecting",
    streamError: null,
    fallbackTimer: null,
    win: null,
    conn: null,
  };
  state.current = current;
  state.notice = null;
  els.transcript.replaceChildren();

  current.win = new SessionWindow({
    pageSize: PAGE_SIZE,
    loadPage: ({ beforeSeq, maxMessages }) => {
      const query = new URLSearchParams();
      if (beforeSeq !== undefined) query.set("beforeSeq", String(beforeSeq));
      query.set("maxMessages", String(maxMessages));
      return api("GET", sessionPath(id, `/history?${query}`));
    },
    onChange: (win, change) => {
      if (state.current === current) onWindowChange(current, change);
    },
  });

  // Open the window once the stream is attached (so nothing appended in between is missed);
  // every later (re)connection rebuilds it, since frames may have been missed meanwhile.
  const openOrResync = () => {
    if (state.current !== current) return;
    if (current.win.openState === "cold") current.win.open();
    else current.win.resync();
  };
  current.conn = connectEvents({
    url: sessionPath(id, "/events"),
    headers: authHeaders,
    onOpen: () => {
      if (state.current !== current) return;
      clearTimeout(current.fallbackTimer);
      current.streamState = "open";
      current.streamError = null;
      openOrResync();
      renderStatus();
    },
    onFrame: (frame) => {
      if (state.current === current) handleFrame(current, frame);
    },
    onError: (error, { fatal }) => {
      if (state.current !== current) return;
      current.streamState = fatal ? "failed" : "retrying";
      current.streamError = error;
      // History stays readable even when live updates are unavailable.
      if (current.win.openState === "cold") current.win.open();
      renderStatus();
    },
  });
  current.fallbackTimer = setTimeout(() => {
    if (state.current === current && current.win.openState === "cold") current.win.open();
  }, OPEN_FALLBACK_MS);

  if (updateUrl) replaceUrlSession(id);
  renderSessions();
  renderChrome();
  renderStatus();
}

function handleFrame(current, frame) {
  let message;
  try {
    message = JSON.parse(frame.data);
  } catch {
    console.warn("dsh: ignoring a non-JSON event frame");
    return;
  }
  if (!message || typeof message !== "object" || !message.event) return;
  current.win.acceptLiveEvent(message.event, message.view);
}

// The transcript DOM mirrors the window: one element per node, in seq order (`data-seq`).
// Appends, older pages and late views touch only their own nodes; a reset rebuilds.
function onWindowChange(current, change) {
  const win = current.win;
  switch (change.type) {
    case "state":
      break;
    case "append":
      keepingScroll("append", () => {
        for (const node of nodesFor(change.entries)) els.transcript.appendChild(renderNode(node));
      });
      break;
    case "prepend": {
      const entries = [];
      for (let i = 0; i < change.count; i += 1) {
        entries.push({ event: win.events[i], view: win.views[i] });
      }
      const added = nodesFor(entries).map(renderNode);
      keepingScroll("prepend", () => els.transcript.prepend(...added));
      break;
    }
    case "view": {
      const node = nodeFor({ event: win.events[change.index], view: win.views[change.index] });
      keepingScroll("view", () => replaceNode(change.seq, node));
      break;
    }
    default:
      // A reset. While a resync reloads, keep showing what we had instead of flashing an
      // empty page.
      if (!(win.openState === "loading" && win.events.length === 0)) renderTranscript(win, "reset");
  }
  renderChrome();
  renderStatus();
}

/**
 * Mutate the transcript keeping the reader's place: a reader at the bottom stays there (and a
 * reset always goes there); otherwise content added above (`prepend`) does not move what is on
 * screen, and anything else keeps the scroll offset.
 */
function keepingScroll(mode, mutate) {
  const scroller = els.scroll;
  const atBottom = isNearBottom(scroller);
  const previousHeight = scroller.scrollHeight;
  const previousTop = scroller.scrollTop;
  mutate();
  if (mode === "prepend" && !atBottom) {
    scroller.scrollTop = previousTop + (scroller.scrollHeight - previousHeight);
  } else if (atBottom || mode === "reset") {
    scrollToBottom(scroller);
  } else {
    scroller.scrollTop = previousTop;
  }
}

/** Put `node` (or nothing, when null) where the element for `seq` is or belongs. */
function replaceNode(seq, node) {
  const transcript = els.transcript;
  // Late views mostly concern recent events: search from the end.
  let before = transcript.lastElementChild;
  while (before !== null && Number(before.getAttribute("data-seq")) > seq) {
    before = before.previousElementSibling;
  }
  if (before !== null && Number(before.getAttribute("data-seq")) === seq) {
    if (node === null) before.remove();
    else before.replaceWith(renderNode(node));
  } else if (node !== null) {
    const next = before === null ? transcript.firstChild : before.nextSibling;
    transcript.insertBefore(renderNode(node), next);
  }
}

function renderTranscript(win, mode) {
  const elements = nodesFor(win.entries).map(renderNode);
  keepingScroll(mode, () => els.transcript.replaceChildren(...elements));
}

// ------------------------------------------------------------------ node rendering

function jsonBlock(value) {
  return el("pre", "json", prettyJson(value));
}

function renderNode(node) {
  const wrapper = el("div", `node node-${node.kind}`);
  wrapper.setAttribute("data-seq", String(node.seq));
  wrapper.setAttribute("data-kind", node.kind);
  switch (node.kind) {
    case "user": {
      wrapper.appendChild(el("div", "node-label", t("node.user")));
      wrapper.appendChild(el("div", "bubble", node.text));
      const source = node.source;
      if (source && typeof source === "object" && typeof source.plugin === "string") {
        wrapper.appendChild(el("div", "node-meta", t("node.viaPlugin", { plugin: source.plugin })));
      }
      break;
    }
    case "assistant":
      wrapper.appendChild(el("div", "node-label", t("node.assistant")));
      wrapper.appendChild(el("div", "text", node.text));
      break;
    case "tool-call": {
      const details = el("details", "tool");
      details.open = true;
      const summary = el("summary", "tool-title", t("node.toolCall", { name: String(node.name) }));
      if (node.callId !== undefined) summary.title = String(node.callId);
      details.appendChild(summary);
      details.appendChild(jsonBlock(node.arguments));
      wrapper.appendChild(details);
      break;
    }
    case "tool-result": {
      if (node.isError) wrapper.classList.add("is-error");
      const details = el("details", "tool");
      details.open = true;
      const summary = el(
        "summary",
        "tool-title",
        t("node.toolResult", { name: String(node.name) }),
      );
      if (node.isError) {
        summary.appendChild(document.createTextNode(" "));
        summary.appendChild(el("span", "badge badge-error", t("node.toolError")));
      }
      if (node.callId !== undefined) summary.title = String(node.callId);
      details.appendChild(summary);
      details.appendChild(jsonBlock(node.value));
      wrapper.appendChild(details);
      break;
    }
    case "turn-error":
      wrapper.appendChild(
        el(
          "div",
          "turn-error-text",
          node.error === null || node.error === undefined
            ? t("node.turnErrorUnknown")
            : t("node.turnError", { error: errorMessage(node.error) }),
        ),
      );
      break;
    case "presented-event":
      wrapper.setAttribute("data-event-type", String(node.eventType));
      wrapper.appendChild(registry.render(node, { locale: getLocale(), document }));
      break;
    default:
      wrapper.appendChild(jsonBlock(node));
  }
  return wrapper;
}

// ------------------------------------------------------------------ chrome

function isWorking(win) {
  for (let i = win.events.length - 1; i >= 0; i -= 1) {
    const type = win.events[i].type;
    if (type === "turn/end") return false;
    if (type === "turn/start") return true;
  }
  return false;
}

function renderChrome() {
  const current = state.current;
  const hasSession = current !== null;
  const info = currentSessionInfo();
  const busy = (action) => state.busy.has(action);
  els.newSession.disabled = busy("create");
  // A cold Session does nothing until it is resumed: its due reminders are delivered then.
  els.resume.hidden = !(hasSession && info && !info.live);
  els.resume.disabled = busy("resume");
  els.fork.disabled = !hasSession || busy("fork");
  els.flush.disabled = !hasSession || busy("flush");
  els.composer.disabled = !hasSession;
  els.send.disabled = !hasSession || busy("send");
  els.sessionId.textContent = hasSession ? current.id : "";
  els.sessionNote.textContent = hasSession && info && !info.live ? t("session.cold") : "";

  const placeholder = els.placeholder;
  placeholder.replaceChildren();
  if (!hasSession) {
    placeholder.textContent = t("session.none");
    els.loadOlder.hidden = true;
    els.olderNote.textContent = "";
    return;
  }
  const win = current.win;
  if (win.openState === "error") {
    placeholder.appendChild(
      el("span", "error-text", t("transcript.error", { message: errorMessage(win.error) })),
    );
    placeholder.appendChild(document.createTextNode(" "));
    const retry = el("button", "", t("transcript.retry"));
    retry.type = "button";
    retry.setAttribute("data-testid", "retry");
    retry.addEventListener("click", () => win.resync());
    placeholder.appendChild(retry);
  } else if (els.transcript.childElementCount === 0) {
    placeholder.textContent =
      win.openState === "open" ? t("transcript.empty") : t("transcript.loading");
  }
  els.loadOlder.hidden = !(win.openState === "open" && win.hasMore);
  els.loadOlder.disabled = win.loadingOlder !== null;
  if (win.loadingOlder !== null) els.olderNote.textContent = t("toolbar.loadingOlder");
  else if (win.olderError) {
    els.olderNote.textContent = t("toolbar.olderFailed", { message: errorMessage(win.olderError) });
  } else els.olderNote.textContent = "";
}

function renderStatus() {
  const parts = [];
  let tone = "info";
  const current = state.current;
  if (current) {
    if (current.streamState === "connecting") parts.push(t("status.connecting"));
    if (current.streamState === "retrying") parts.push(t("status.reconnecting"));
    if (current.streamState === "failed") {
      parts.push(t("status.streamFailed", { message: errorMessage(current.streamError) }));
      tone = "error";
    }
    if (current.win.openState === "open" && isWorking(current.win)) {
      parts.push(t("status.working"));
    }
  }
  if (state.notice) {
    parts.push(t(state.notice.key, state.notice.params));
    if (state.notice.tone === "error") tone = "error";
  }
  els.status.textContent = parts.join(" · ");
  els.status.classList.toggle("is-error", tone === "error");
}

function applyStaticText() {
  const locale = getLocale();
  document.documentElement.lang = locale === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) {
    node.textContent = t(node.getAttribute("data-i18n"));
  }
  for (const node of document.querySelectorAll("[data-i18n-label]")) {
    node.setAttribute("aria-label", t(node.getAttribute("data-i18n-label")));
  }
  els.composer.placeholder = t("composer.placeholder");
  for (const button of els.langButtons) {
    const active = button.getAttribute("data-locale") === locale;
    button.setAttribute("aria-pressed", active ? "true" : "false");
  }
}

function rerenderAll() {
  applyStaticText();
  renderSessions();
  if (state.current && state.current.win.events.length > 0) {
    renderTranscript(state.current.win, "relocalize");
  }
  renderChrome();
  renderStatus();
}

// ------------------------------------------------------------------ actions

/**
 * Run one user action at a time per name: renderChrome keeps its button disabled (through any
 * re-render meanwhile) until it settles, and a failure becomes the status notice.
 */
async function runAction(name, action) {
  if (state.busy.has(name)) return;
  state.busy.add(name);
  renderChrome();
  try {
    await action();
  } catch (error) {
    setNotice("status.error", { message: errorMessage(error) }, "error");
  } finally {
    state.busy.delete(name);
    renderChrome();
  }
}

async function createSession() {
  const created = await api("POST", "/api/sessions", {});
  await refreshSessions();
  selectSession(created.id);
  setNotice("status.created", { id: created.id });
  els.composer.focus();
}

async function forkCurrent() {
  const current = state.current;
  if (!current) return;
  const child = await api("POST", sessionPath(current.id, "/fork"), {});
  await refreshSessions();
  selectSession(child.id);
  setNotice("status.forked", { id: child.id });
}

async function resumeCurrent() {
  const current = state.current;
  if (!current) return;
  await api("POST", sessionPath(current.id, "/resume"));
  await refreshSessions();
  if (state.current !== current) return;
  if (!current.conn.connected) current.conn.reconnectNow();
  setNotice("status.resumed", { id: current.id });
  renderChrome();
}

async function flushCurrent() {
  const current = state.current;
  if (!current) return;
  const result = await api("POST", sessionPath(current.id, "/flush"));
  if (state.current !== current) return;
  setNotice(result?.durable ? "status.flushed" : "status.flushNotDurable", {
    seq: result?.throughSeq,
  });
}

function sendMessage() {
  const current = state.current;
  const text = els.composer.value;
  if (!current || text.trim() === "") return;
  // Read before the POST: sending resumes a cold Session (and the selection may change).
  const wasCold = currentSessionInfo()?.live === false;
  runAction("send", async () => {
    await api("POST", sessionPath(current.id, "/messages"), { text });
    if (state.current === current) {
      els.composer.value = "";
      setNotice(null);
      if (!current.conn.connected) current.conn.reconnectNow();
    }
    if (wasCold) await refreshSessions();
  });
}

function wireEvents() {
  els.newSession.addEventListener("click", () => runAction("create", createSession));
  els.resume.addEventListener("click", () => runAction("resume", resumeCurrent));
  els.fork.addEventListener("click", () => runAction("fork", forkCurrent));
  els.flush.addEventListener("click", () => runAction("flush", flushCurrent));
  els.loadOlder.addEventListener("click", () => state.current?.win.loadOlder());
  // loadOlder itself ignores calls while a page loads or when there is no more history.
  els.scroll.addEventListener("scroll", () => {
    if (els.scroll.scrollTop < 24) state.current?.win.loadOlder();
  });
  els.form.addEventListener("submit", (event) => {
    event.preventDefault();
    sendMessage();
  });
  els.composer.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      sendMessage();
    }
  });
  for (const button of els.langButtons) {
    button.addEventListener("click", () => setLocale(button.getAttribute("data-locale")));
  }
  onLocaleChange(rerenderAll);
}

// ------------------------------------------------------------------ plugins and boot

function readConfig() {
  const node = document.getElementById("dsh-config");
  if (!node) return { renderers: [] };
  try {
    const config = JSON.parse(node.textContent ?? "");
    return config && typeof config === "object" ? config : { renderers: [] };
  } catch (error) {
    console.warn("dsh: unreadable #dsh-config", error);
    return { renderers: [] };
  }
}

async function loadRenderers(config) {
  const renderers = Array.isArray(config.renderers) ? config.renderers : [];
  await Promise.all(
    renderers.map(async (entry) => {
      if (!entry || typeof entry.url !== "string") return;
      try {
        const module = await import(entry.url);
        if (typeof module.default !== "function") {
          throw new TypeError("the module has no default register(registry) export");
        }
        await module.default(registry);
      } catch (error) {
        console.warn(`dsh: renderer plugin ${entry.plugin ?? entry.url} failed to load`, error);
      }
    }),
  );
}

async function boot() {
  applyStaticText();
  wireEvents();
  await loadRenderers(readConfig());
  renderChrome();
  renderStatus();
  await refreshSessions();
  const initial = new URLSearchParams(window.location.search).get("session");
  if (initial) selectSession(initial, { updateUrl: false });
  window.setInterval(() => {
    if (document.visibilityState !== "hidden") refreshSessions();
  }, SESSIONS_REFRESH_MS);
}

boot().catch((error) => {
  console.error("dsh: boot failed", error);
});
