// dsh browser client, app layer: the open Session. `SessionView` owns it (one `OpenSession` at
// a time): its history window, its event stream (attach first, then load, so nothing appended
// in between is missed; a reconnect resumes from `Last-Event-ID` without reading the history
// again, see resume.js), the assistant message it is streaming (ephemeral `event: stream`
// frames, see streaming.js), its plugin views and the URL that names it. Opening a Session the
// list shows as not loaded (cold) resumes it (`POST .../resume`), so its due reminders are
// delivered: a person never has to. It receives the network (`http`, `connect`) and the page's
// renderers from app.js; it renders nothing itself.

import { errorMessage } from "./errors.js";
import { StreamResume } from "./resume.js";
import { TranscriptView } from "./transcript-view.js";
import { SessionWindow } from "./session-window.js";
import { StreamingDraft } from "./streaming.js";

const PAGE_SIZE = 50;
const OPEN_FALLBACK_MS = 3000;

/** The seq of the window's turn/start that has no turn/end yet, or null. */
function openTurn(win) {
  for (let i = win.events.length - 1; i >= 0; i -= 1) {
    const event = win.events[i];
    if (event.type === "turn/end") return null;
    if (event.type === "turn/start") return event.seq;
  }
  return null;
}

/** One open Session: its window, stream, transcript, message in progress and views. */
export class OpenSession {
  constructor(id) {
    this.id = id;
    /** The event stream: "connecting", "open", "retrying" or "failed" (then `streamError`). */
    this.streamState = "connecting";
    this.streamError = null;
    this.fallbackTimer = null;
    this.win = null;
    this.conn = null;
    this.transcript = null;
    this.draft = new StreamingDraft();
    /** The latest plugin views payload `{views, throughSeq}`, or null. */
    this.views = null;
    /** The running turn a Stop was accepted for (see runningTurn). */
    this.stopping = null;
    this.resume = new StreamResume();
  }

  /**
   * What names the turn this Session is running (its open turn/start, else the message it is
   * streaming), or null when none runs. A Stop the host accepted is remembered by this key
   * (`stopping`), so it is not offered twice for the same turn.
   */
  runningTurn() {
    const seq = openTurn(this.win);
    if (seq !== null) return `turn:${seq}`;
    const draft = this.draft.current;
    return draft === null ? null : `message:${draft.messageId}`;
  }

  isStopping() {
    const turn = this.runningTurn();
    return turn !== null && this.stopping === turn;
  }

  /** For the status line: "working" or "stopping" while the loaded window shows a turn run. */
  turnState() {
    if (this.win.openState !== "open" || openTurn(this.win) === null) return null;
    return this.isStopping() ? "stopping" : "working";
  }
}

export class SessionView {
  /**
   * `http`: `{api, sessionPath, authHeaders}` (api.js); `connect`: connectEvents (sse.js);
   * `registry`: the renderer registry; `sessions`: the SessionList; `notice`: the status notice
   * (`{current, set(key, params, tone)}`); `page`: the renderers `{chrome(), status(), draft(),
   * panels(), sessions()}`; `onArrivals(elements)`: elements that arrived live.
   */
  constructor({ http, connect, registry, sessions, notice, page, onArrivals }) {
    this._http = http;
    this._connect = connect;
    this._registry = registry;
    this._sessions = sessions;
    this._notice = notice;
    this._page = page;
    this._onArrivals = onArrivals;
    this._open = null;
  }

  /** The open Session, or null. */
  get current() {
    return this._open;
  }

  _path(open, suffix) {
    return this._http.sessionPath(open.id, suffix);
  }

  /** POST the tool as the user's action; resolves with the tool's value (errors are values). */
  async runTool(open, name, args) {
    const path = this._path(open, `/tools/${encodeURIComponent(name)}`);
    const answer = await this._http.api("POST", path, { arguments: args ?? {} });
    return answer?.value;
  }

  /** Load the Session's views (the first time, and when the stream cannot push them). */
  async loadViews(open) {
    try {
      const payload = await this._http.api("GET", this._path(open, "/views"));
      this._acceptViews(open, payload);
    } catch (error) {
      console.warn("dsh: could not load the session views", error);
    }
  }

  /** Take a views payload `{views, throughSeq}` unless an equal or newer one is already shown. */
  _acceptViews(open, payload) {
    if (!payload || typeof payload !== "object" || typeof payload.views !== "object") return;
    const seen = open.views?.throughSeq ?? -1;
    if (typeof payload.throughSeq === "number" && payload.throughSeq < seen) return;
    // The heading names an unlisted Session (one beyond the list's pages) from its views.
    const renamed = (open.views?.name ?? null) !== (payload.name ?? null);
    open.views = payload;
    if (this._open !== open) return;
    this._page.panels();
    if (renamed) this._page.chrome();
  }

  close() {
    const open = this._open;
    if (!open) return;
    this._open = null;
    clearTimeout(open.fallbackTimer);
    open.conn.close();
    open.win.close();
    open.draft.clear();
    this._page.draft();
  }

  select(id, { updateUrl = true } = {}) {
    if (this._open && this._open.id === id) return;
    this.close();
    const open = new OpenSession(id);
    this._open = open;
    const page = this._page;
    const live = () => this._open === open;

    open.win = new SessionWindow({
      pageSize: PAGE_SIZE,
      loadPage: ({ beforeSeq, maxMessages }) => {
        const query = new URLSearchParams();
        if (beforeSeq !== undefined) query.set("beforeSeq", String(beforeSeq));
        query.set("maxMessages", String(maxMessages));
        return this._http.api("GET", this._path(open, `/history?${query}`));
      },
      onChange: (win, change) => {
        if (!live()) return;
        open.transcript.change(change);
        page.chrome();
        page.status();
      },
    });
    open.transcript = new TranscriptView({
      win: open.win,
      registry: this._registry,
      lineage: () => {
        const info = this._sessions.find(id);
        if (typeof info?.parentSession !== "string") return null;
        const parentName = this._sessions.label(info.parentSession);
        return { seedLength: info.seedLength, parentName };
      },
      onArrivals: (elements) => this._onArrivals(elements),
      runTool: (name, args) => this.runTool(open, name, args),
      sessionId: id,
      notices: async () => {
        const payload = await this._http.api("GET", this._path(open, "/notices"));
        return Array.isArray(payload?.notices) ? payload.notices : [];
      },
    });
    open.transcript.rebuild("reset");
    this._notice.set(null);
    page.panels();

    // Open the window once the stream is attached (so nothing appended in between is missed).
    const openOrResync = () => {
      if (!live()) return;
      if (open.win.openState === "cold") open.win.open();
      else open.win.resync();
    };
    open.conn = this._connect({
      url: this._path(open, "/events?views=1"),
      headers: this._http.authHeaders,
      resumeId: (lastEventId) => open.resume.resumeId(lastEventId),
      onOpen: ({ reconnect, lastEventId }) => {
        if (!live()) return;
        // The pieces of a message in progress are never sent again: the finished message
        // comes with the replay (or the history) when it lands.
        if (reconnect && open.draft.clear()) page.draft();
        clearTimeout(open.fallbackTimer);
        open.streamState = "open";
        open.streamError = null;
        if (reconnect) {
          // What failed while the connection was down is stale now: clear it and catch up.
          if (this._notice.current?.tone === "error") this._notice.set(null);
          this._sessions.refresh();
        }
        // A reconnect that resumed from an id gets every event after it replayed, views
        // included (resume.js): the window keeps what it has. Otherwise it is read again.
        const resumes = reconnect && lastEventId !== null && open.win.openState === "open";
        open.resume.opened(resumes ? lastEventId : null);
        if (!resumes) openOrResync();
        page.status();
      },
      onFrame: (frame) => {
        if (live()) this._frame(open, frame);
      },
      onError: (error, { fatal }) => {
        if (!live()) return;
        open.streamState = fatal ? "failed" : "retrying";
        open.streamError = error;
        // History stays readable even when live updates are unavailable.
        if (open.win.openState === "cold") open.win.open();
        if (open.views === null) this.loadViews(open);
        page.status();
      },
    });
    open.fallbackTimer = setTimeout(() => {
      if (live() && open.win.openState === "cold") open.win.open();
    }, OPEN_FALLBACK_MS);

    if (updateUrl) replaceUrlSession(id);
    page.sessions();
    page.chrome();
    page.status();
    // A Session beyond the pages listed (opened from a board or an address) has no row yet:
    // resuming is harmless when it is live, and brings its due reminders when it is not.
    const row = this._sessions.find(id);
    if (row === null || (row.live === false && row.damaged !== true)) this._resume(open);
  }

  /** Resume a cold Session on open: its due reminders come on the stream once it is live. */
  async _resume(open) {
    try {
      await this._http.api("POST", this._path(open, "/resume"));
    } catch (error) {
      if (this._open !== open) return;
      this._notice.set("status.error", { message: errorMessage(error) }, "error");
      return;
    }
    await this._sessions.refresh();
    if (this._open === open && !open.conn.connected) open.conn.reconnectNow();
  }

  _frame(open, frame) {
    let message;
    try {
      message = JSON.parse(frame.data);
    } catch {
      console.warn("dsh: ignoring a non-JSON event frame");
      return;
    }
    if (!message || typeof message !== "object") return;
    if (frame.event === "views") {
      // The first views frame of a resumed connection ends its replay: a window showing more
      // than the server replayed holds events the server no longer has.
      const reached = open.resume.views(message.throughSeq);
      if (reached !== null && open.win.tailSeq > reached) open.win.resync();
      this._acceptViews(open, message);
      if (this._sessions.rowIsStale(open.id, message)) this._sessions.refresh();
      return;
    }
    if (frame.event === "stream") {
      if (open.draft.piece(message.stream)) this._page.draft();
      return;
    }
    if (!message.event) return;
    open.resume.event(message.event.seq, message.view);
    open.win.acceptLiveEvent(message.event, message.view);
    if (open.draft.event(message.event)) this._page.draft();
  }
}

function replaceUrlSession(id) {
  const url = new URL(window.location.href);
  if (id) url.searchParams.set("session", id);
  else url.searchParams.delete("session");
  url.searchParams.delete("board"); // a Session replaces a board shown in its place
  window.history.replaceState(null, "", url);
}
