// dsh browser client: opening one Session: its history window, its event stream (attach first,
// then load, so nothing appended in between is missed), the assistant message it is streaming
// (ephemeral `event: stream` frames, see streaming.js) and the URL that names it.

import { api, authHeaders, sessionPath } from "./api.js";
import { els } from "./dom.js";
import { acceptViews, loadViews, renderPanels } from "./panels.js";
import { onWindowChange, renderChrome, renderDraft, renderStatus, setNotice } from "./render.js";
import { refreshSessions, renderSessions, rowIsStale } from "./session-list.js";
import { SessionWindow } from "./session-window.js";
import { connectEvents } from "./sse.js";
import { state } from "./state.js";
import { StreamingDraft } from "./streaming.js";

const PAGE_SIZE = 50;
const OPEN_FALLBACK_MS = 3000;

function closeCurrent() {
  const current = state.current;
  if (!current) return;
  state.current = null;
  clearTimeout(current.fallbackTimer);
  current.conn.close();
  current.win.close();
  current.draft.clear();
  renderDraft(null);
}

function replaceUrlSession(id) {
  const url = new URL(window.location.href);
  if (id) url.searchParams.set("session", id);
  else url.searchParams.delete("session");
  window.history.replaceState(null, "", url);
}

export function selectSession(id, { updateUrl = true } = {}) {
  if (state.current && state.current.id === id) return;
  closeCurrent();
  const current = {
    id,
    streamState: "connecting",
    streamError: null,
    fallbackTimer: null,
    win: null,
    conn: null,
    draft: new StreamingDraft(),
    views: null,
    stopping: null, // the running turn a Stop was accepted for (see render.js runningTurn)
  };
  state.current = current;
  state.notice = null;
  els.transcript.replaceChildren();
  renderPanels();

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
    url: sessionPath(id, "/events?views=1"),
    headers: authHeaders,
    onOpen: ({ reconnect }) => {
      if (state.current !== current) return;
      // The pieces of a message in progress are never sent again: the finished message
      // comes with the history (or on this stream) when it lands.
      if (reconnect && current.draft.clear()) renderDraft(current);
      clearTimeout(current.fallbackTimer);
      current.streamState = "open";
      current.streamError = null;
      if (reconnect) {
        // What failed while the connection was down is stale now: clear it and catch up.
        if (state.notice?.tone === "error") setNotice(null);
        refreshSessions();
      }
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
      if (current.views === null) loadViews(current);
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
  if (!message || typeof message !== "object") return;
  if (frame.event === "views") {
    acceptViews(current, message);
    if (rowIsStale(current.id, message)) refreshSessions();
    return;
  }
  if (frame.event === "stream") {
    if (current.draft.piece(message.stream)) renderDraft(current);
    return;
  }
  if (!message.event) return;
  current.win.acceptLiveEvent(message.event, message.view);
  if (current.draft.event(message.event)) renderDraft(current);
}
