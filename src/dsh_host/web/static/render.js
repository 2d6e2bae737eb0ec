// dsh browser client: rendering. The transcript DOM (one element per node, kept in step with
// the Session window), each node's markup, the toolbar and placeholder chrome, the composer's
// Stop (shown while a turn runs), the status line and the page's static text. Every string that
// comes from a Session reaches the DOM through textContent / createTextNode only.

import { errorMessage } from "./api.js";
import { el, els, isNearBottom, scrollToBottom } from "./dom.js";
import { getLocale, t } from "./i18n.js";
import { registry, renderNode as nodeElement } from "./nodes.js";
import { currentSessionInfo, sessionLabel, state } from "./state.js";
import { nodeFor, nodesFor } from "./transcript.js";

export { registry };

/** Where a node's element finds its context: a result's call, a fork's parent. */
const lookup = {
  callFor(callId) {
    const win = state.current?.win;
    if (!win || callId === undefined) return null;
    for (let i = win.events.length - 1; i >= 0; i -= 1) {
      const event = win.events[i];
      if (event.type === "tool/call" && event.data?.callId === callId) {
        return nodeFor({ event, view: win.views[i] });
      }
    }
    return null;
  },
  isForkBoundary(seq) {
    const info = currentSessionInfo();
    return typeof info?.parentSession === "string" && info.seedLength === seq;
  },
  parentName() {
    const parent = currentSessionInfo()?.parentSession;
    if (typeof parent !== "string") return null;
    return sessionLabel(state.sessions?.find((s) => s.id === parent) ?? { id: parent }, t);
  },
};

function renderNode(node) {
  return nodeElement(node, lookup);
}

/** A call row is hidden once its result's row (which shows both) is on screen. */
function hideAnsweredCalls() {
  const answered = new Set();
  for (const row of els.transcript.querySelectorAll('[data-kind="tool-result"][data-call-id]')) {
    answered.add(row.getAttribute("data-call-id"));
  }
  for (const row of els.transcript.querySelectorAll('[data-kind="tool-call"][data-call-id]')) {
    row.hidden = answered.has(row.getAttribute("data-call-id"));
  }
}

export function setNotice(key, params, tone = "info") {
  state.notice = key ? { key, params, tone } : null;
  renderStatus();
}

// ------------------------------------------------------------------ transcript

// The transcript DOM mirrors the window: one element per node, in seq order (`data-seq`).
// Appends, older pages and late views touch only their own nodes; a reset rebuilds.
export function onWindowChange(current, change) {
  const win = current.win;
  switch (change.type) {
    case "state":
      break;
    case "append":
      const nodes = nodesFor(change.entries);
      const elements = nodes.map(renderNode);
      keepingScroll("append", () => {
        for (const element of elements) els.transcript.appendChild(element);
      });
      onArrivals(elements);
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
      const element = node === null ? null : renderNode(node);
      keepingScroll("view", () => replaceNode(change.seq, element));
      if (node !== null) {
        onArrivals([element]);
      }
      break;
    }
    default:
      // A reset. While a resync reloads, keep showing what we had instead of flashing an
      // empty page.
      if (!(win.openState === "loading" && win.events.length === 0)) renderTranscript(win, "reset");
  }
  hideAnsweredCalls();
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

/** Put `element` (or nothing, when null) where the element for `seq` is or belongs. */
function replaceNode(seq, element) {
  const transcript = els.transcript;
  // Late views mostly concern recent events: search from the end.
  let before = transcript.lastElementChild;
  while (before !== null && Number(before.getAttribute("data-seq")) > seq) {
    before = before.previousElementSibling;
  }
  if (before !== null && Number(before.getAttribute("data-seq")) === seq) {
    if (element === null) before.remove();
    else before.replaceWith(element);
  } else if (element !== null) {
    const next = before === null ? transcript.firstChild : before.nextSibling;
    transcript.insertBefore(element, next);
  }
}

export function renderTranscript(win, mode) {
  const elements = nodesFor(win.entries).map(renderNode);
  keepingScroll(mode, () => els.transcript.replaceChildren(...elements));
  hideAnsweredCalls();
}

let arrivalListener = () => {};

/** Who hears about elements that arrived live (the notifier); history loads do not count. */
export function onLiveArrivals(listener) {
  arrivalListener = listener;
}

function onArrivals(elements) {
  arrivalListener(elements);
}

// ------------------------------------------------------------------ the message in progress

/**
 * The assistant message a turn is streaming, as one bubble after the transcript (outside it, so
 * transcript rebuilds never touch it): `aria-busy` while it grows, text only, gone when the
 * durable message (or the turn's end) arrives.
 */
export function renderDraft(current) {
  const draft = current?.draft.current ?? null;
  const shown = els.drafts.children[0] ?? null;
  if (draft === null) {
    if (shown !== null) els.drafts.replaceChildren();
    renderStop();
    return;
  }
  keepingScroll("append", () => {
    let bubble = shown;
    if (bubble === null || bubble.getAttribute("data-message-id") !== draft.messageId) {
      bubble = el("div", "node node-assistant is-streaming");
      bubble.setAttribute("data-kind", "assistant-draft");
      bubble.setAttribute("data-message-id", draft.messageId);
      bubble.setAttribute("aria-busy", "true");
      els.drafts.replaceChildren(bubble);
    }
    const label = el("div", "node-label", `${t("node.assistant")} · `);
    label.appendChild(el("span", "writing", t("node.writing")));
    bubble.replaceChildren(label, el("div", "text", draft.text));
  });
  renderStop();
}

// ------------------------------------------------------------------ the running turn

/** The seq of the window's turn/start that has no turn/end yet, or null. */
function openTurn(win) {
  for (let i = win.events.length - 1; i >= 0; i -= 1) {
    const event = win.events[i];
    if (event.type === "turn/end") return null;
    if (event.type === "turn/start") return event.seq;
  }
  return null;
}

/**
 * What names the turn the open Session is running (its open turn/start, else the message it
 * is streaming), or null when none runs. A Stop the host accepted is remembered by this key
 * (`current.stopping`), so it is not offered twice for the same turn.
 */
export function runningTurn(current) {
  if (!current) return null;
  const seq = openTurn(current.win);
  if (seq !== null) return `turn:${seq}`;
  const draft = current.draft.current;
  return draft === null ? null : `message:${draft.messageId}`;
}

function isStopping(current) {
  const turn = runningTurn(current);
  return turn !== null && current.stopping === turn;
}

/** The composer's Stop: shown while a turn runs, gone at its turn/end. */
export function renderStop() {
  const current = state.current;
  const running = runningTurn(current) !== null;
  if (!running && els.stop.hidden === false && document.activeElement === els.stop) {
    els.composer.focus(); // the button goes: keep the keyboard in the composer
  }
  els.stop.hidden = !running;
  els.stop.disabled = !running || state.busy.has("stop") || isStopping(current);
}

// ------------------------------------------------------------------ chrome

export function renderChrome() {
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
  // Without a Session the toolbar has nothing to act on; the composer starts one.
  for (const button of [els.fork, els.flush]) button.hidden = !hasSession;
  els.rename.hidden = !hasSession || !els.renameForm.hidden;
  els.composer.disabled = false;
  els.send.disabled = busy("send");
  renderStop();
  els.sessionId.textContent = hasSession ? current.id : "";
  els.sessionName.textContent = hasSession ? sessionLabel(info ?? { id: current.id }, t) : "";
  els.rename.disabled = !hasSession || busy("rename");
  els.sessionNote.textContent = hasSession && info && !info.live ? t("session.cold") : "";

  const placeholder = els.placeholder;
  placeholder.replaceChildren();
  els.emptyState.hidden = true;
  if (!hasSession) {
    els.emptyState.hidden = false;
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
    if (win.openState === "open") els.emptyState.hidden = false;
    else placeholder.textContent = t("transcript.loading");
  }
  els.loadOlder.hidden = !(win.openState === "open" && win.hasMore);
  els.loadOlder.disabled = win.loadingOlder !== null;
  if (win.loadingOlder !== null) els.olderNote.textContent = t("toolbar.loadingOlder");
  else if (win.olderError) {
    els.olderNote.textContent = t("toolbar.olderFailed", { message: errorMessage(win.olderError) });
  } else els.olderNote.textContent = "";
}

export function renderStatus() {
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
    if (current.win.openState === "open" && openTurn(current.win) !== null) {
      parts.push(t(isStopping(current) ? "status.stopping" : "status.working"));
    }
  }
  if (state.notice) {
    parts.push(t(state.notice.key, state.notice.params));
    if (state.notice.tone === "error") tone = "error";
  }
  els.status.textContent = parts.join(" · ");
  // The event stream's state, for tests: "open" once the server has attached this page.
  els.status.setAttribute("data-stream", current ? current.streamState : "none");
  els.status.classList.toggle("is-error", tone === "error");
}

export function applyStaticText() {
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
