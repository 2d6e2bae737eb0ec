// dsh browser client: wires the HTTP API, the event stream, the Session window, the
// transcript nodes and the renderer registry to the page: the user's actions and the boot.
// The parts live in api.js (HTTP), dom.js (elements), state.js (page state), render.js
// (transcript, chrome, status), session-list.js and session-view.js (the open Session).

import { api, errorMessage, sessionPath } from "./api.js";
import { applyTheme, noticeArrivals, refreshTimes, setDrawer, wireChrome } from "./chrome.js";
import { els } from "./dom.js";
import { onLocaleChange, setLocale, t } from "./i18n.js";
import { renderPanels } from "./panels.js";
import {
  applyStaticText,
  onLiveArrivals,
  registry,
  renderChrome,
  renderDraft,
  renderStatus,
  renderTranscript,
  runningTurn,
  setNotice,
} from "./render.js";
import { onSessionSelect, refreshSessions, renderSessions } from "./session-list.js";
import { selectSession } from "./session-view.js";
import { currentSessionInfo, state } from "./state.js";
import { browserTimeZone, sendWithZone } from "./streaming.js";

const SESSIONS_REFRESH_MS = 15000;

function rerenderAll() {
  applyStaticText();
  applyTheme();
  renderExamples();
  renderSessions();
  renderPanels();
  if (state.current && state.current.win.events.length > 0) {
    renderTranscript(state.current.win, "relocalize");
  }
  renderDraft(state.current);
  renderChrome();
  renderStatus();
  refreshTimes();
}

/** The empty state's example prompts: clicking one puts it in the composer. */
function renderExamples() {
  const buttons = ["empty.example1", "empty.example2", "empty.example3"].map((key) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = t(key);
    button.addEventListener("click", () => {
      els.composer.value = t(key);
      els.composer.focus();
    });
    return button;
  });
  els.examples.replaceChildren(...buttons);
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

function startRename() {
  if (!state.current) return;
  els.renameInput.value = els.sessionName.textContent;
  els.renameForm.hidden = false;
  els.sessionName.hidden = true;
  els.rename.hidden = true;
  els.renameInput.focus();
  els.renameInput.select?.();
}

function endRename() {
  els.renameForm.hidden = true;
  els.sessionName.hidden = false;
  els.rename.hidden = false;
}

async function renameCurrent() {
  const current = state.current;
  const name = els.renameInput.value.trim();
  if (!current || name === "") return;
  await api("POST", sessionPath(current.id, "/name"), { name });
  endRename();
  await refreshSessions();
  setNotice("status.renamed");
  els.rename.focus();
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

/** Stop the turn the open Session runs (the host answers false when it had already ended). */
async function stopCurrent() {
  const current = state.current;
  const turn = runningTurn(current);
  if (!current || turn === null) return;
  const result = await api("POST", sessionPath(current.id, "/turn/cancel"));
  // Its turn/end ("Stopped") comes on the stream; until then the same turn is not offered again.
  if (result?.cancelled === true) current.stopping = turn;
  renderStatus();
}

function sendMessage() {
  const text = els.composer.value;
  if (text.trim() === "") return;
  const current = state.current;
  // Read before the POST: sending resumes a cold Session (and the selection may change).
  const wasCold = current !== null && currentSessionInfo()?.live === false;
  runAction("send", async () => {
    let target = current;
    if (target === null) {
      // Typing with no Session open starts one, as in any chat app.
      const created = await api("POST", "/api/sessions", {});
      await refreshSessions();
      selectSession(created.id);
      target = state.current;
    }
    // The browser's zone, for this message's turn only ("tomorrow at 9" means here).
    const post = (body) => api("POST", sessionPath(target.id, "/messages"), body);
    await sendWithZone(post, text, browserTimeZone());
    if (state.current === target) {
      els.composer.value = "";
      setNotice(null);
      if (!target.conn.connected) target.conn.reconnectNow();
    }
    if (wasCold) await refreshSessions();
  });
}

function wireEvents() {
  onSessionSelect((id) => {
    selectSession(id);
    setDrawer(false);
  });
  els.rename.addEventListener("click", startRename);
  els.renameCancel.addEventListener("click", () => {
    endRename();
    els.rename.focus();
  });
  els.renameForm.addEventListener("submit", (event) => {
    event.preventDefault();
    runAction("rename", renameCurrent);
  });
  els.renameInput.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      endRename();
      els.rename.focus();
    }
  });
  els.newSession.addEventListener("click", () => runAction("create", createSession));
  els.resume.addEventListener("click", () => runAction("resume", resumeCurrent));
  els.fork.addEventListener("click", () => runAction("fork", forkCurrent));
  els.flush.addEventListener("click", () => runAction("flush", flushCurrent));
  els.stop.addEventListener("click", () => runAction("stop", stopCurrent));
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
      if (entry.kind === "style") {
        // A plugin's stylesheet: linked, never inlined (the page's policy allows no inline CSS).
        const link = document.createElement("link");
        link.rel = "stylesheet";
        link.href = entry.url;
        document.head.appendChild(link);
        return;
      }
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
  renderExamples();
  wireChrome();
  wireEvents();
  onLiveArrivals(noticeArrivals);
  await loadRenderers(readConfig());
  registry.onPanelsChange(renderPanels);
  renderPanels();
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
