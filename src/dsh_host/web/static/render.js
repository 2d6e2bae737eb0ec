// dsh browser client, rendering: the page's chrome around the transcript (the transcript itself
// is transcript-view.js): the message in progress, the composer's Stop (shown while a turn
// runs), the toolbar and placeholder chrome, the status line and the page's static text. Each
// function receives what it shows: none reads or changes page state, none talks to the network.
// Every string that comes from a Session reaches the DOM through textContent / createTextNode
// only.

import { el, els } from "./dom.js";
import { errorMessage } from "./errors.js";
import { getLocale, t } from "./i18n.js";
import { keepingScroll } from "./transcript-view.js";

// ------------------------------------------------------------------ the message in progress

/**
 * The assistant message a turn is streaming (`draft`: `{messageId, text}`, or null), as one
 * bubble after the transcript (outside it, so transcript rebuilds never touch it): `aria-busy`
 * while it grows, text only, gone when the durable message (or the turn's end) arrives.
 */
export function renderDraft(draft) {
  const shown = els.drafts.children[0] ?? null;
  if (draft === null) {
    if (shown !== null) els.drafts.replaceChildren();
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
}

/** The composer's Stop: shown while a turn runs (`running`), not offered while `stopping`. */
export function renderStop({ running, stopping }) {
  if (!running && els.stop.hidden === false && document.activeElement === els.stop) {
    els.composer.focus(); // the button goes: keep the keyboard in the composer
  }
  els.stop.hidden = !running;
  els.stop.disabled = !running || stopping;
}

// ------------------------------------------------------------------ chrome

/**
 * The toolbar, the composer's buttons and the placeholder. `session` is the open Session as
 * `{id, label, win}`, or null; `busy(action)` says whether that action is in flight; `debug`
 * shows the developer's Flush (see chrome.js, debugMode). The Session's id is shown only in its
 * Details disclosure.
 */
export function renderChrome({ session, busy, debug = false }) {
  const hasSession = session !== null;
  els.newSession.disabled = busy("create");
  els.fork.disabled = !hasSession || busy("fork");
  els.flush.disabled = !hasSession || busy("flush");
  // Without a Session the toolbar has nothing to act on; the composer starts one.
  els.fork.hidden = !hasSession;
  els.flush.hidden = !hasSession || !debug;
  els.details.hidden = !hasSession;
  els.rename.hidden = !hasSession || !els.renameForm.hidden;
  els.composer.disabled = false;
  els.send.disabled = busy("send");
  els.sessionId.textContent = hasSession ? session.id : "";
  els.sessionName.textContent = hasSession ? session.label : "";
  els.rename.disabled = !hasSession || busy("rename");

  const placeholder = els.placeholder;
  placeholder.replaceChildren();
  els.emptyState.hidden = true;
  if (!hasSession) {
    els.emptyState.hidden = false;
    els.loadOlder.hidden = true;
    els.olderNote.textContent = "";
    return;
  }
  const win = session.win;
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

/**
 * The status line. `stream` is the open Session's event stream as `{state, error}` (state:
 * "connecting", "open", "retrying" or "failed"), or null when none is open; `turn` is "working"
 * or "stopping" while its turn runs, else null; `notice` is `{key, params, tone}` or null.
 */
export function renderStatus({ stream, turn, notice }) {
  const parts = [];
  let tone = "info";
  if (stream !== null) {
    if (stream.state === "connecting") parts.push(t("status.connecting"));
    if (stream.state === "retrying") parts.push(t("status.reconnecting"));
    if (stream.state === "failed") {
      parts.push(t("status.streamFailed", { message: errorMessage(stream.error) }));
      tone = "error";
    }
    if (turn !== null) parts.push(t(turn === "stopping" ? "status.stopping" : "status.working"));
  }
  if (notice) {
    parts.push(t(notice.key, notice.params));
    if (notice.tone === "error") tone = "error";
  }
  els.status.textContent = parts.join(" · ");
  // The event stream's state, for tests: "open" once the server has attached this page.
  els.status.setAttribute("data-stream", stream !== null ? stream.state : "none");
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
  for (const node of document.querySelectorAll("[data-i18n-title]")) {
    node.setAttribute("title", t(node.getAttribute("data-i18n-title")));
  }
  els.composer.placeholder = t("composer.placeholder");
  for (const button of els.langButtons) {
    const active = button.getAttribute("data-locale") === locale;
    button.setAttribute("aria-pressed", active ? "true" : "false");
  }
}
