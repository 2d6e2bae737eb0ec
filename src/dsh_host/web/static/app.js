// dsh browser client, app layer: the composition root. It makes the page's parts, hands each
// what it uses, and boots: the renderer registry plugins fill (registry.js), the Session list
// (session-list.js), the open Session (session-view.js), the boards plugins register (board.js:
// a whole board, and the start page's first rows and what arrived while the person was away),
// the delete confirmation (delete-session.js), the Notifications dialog (notifications.js: the
// channels, a test notification, Web Push on this device), the renderers (render.js and
// transcript-view.js with nodes.js, panels.js, chrome.js), the moves between what the page
// shows (app-navigation.js) and the user's actions (app-actions.js). Only this module imports
// the network layer (api.js, sse.js); it hands the others what they call; rendering modules
// import neither.
//
// What the page shows: an open Session (`?session=`), a whole board (`?board=`), or, with
// neither, the start page. One owner per piece of state: api.js the token; SessionList the
// listed rows; SessionView the open Session (its window, stream, draft, views); Boards the
// boards' rows and the last-seen instant's summary; this module the status notice, the actions
// in flight and which board is shown; chrome.js the theme, the drawer and the unread count;
// panels.js the panels opened on a phone and the focus a panel holds.

import { api, authHeaders, currentToken, sessionPath } from "./api.js";
import { createActions } from "./app-actions.js";
import { createNavigation } from "./app-navigation.js";
import { Boards } from "./board.js";
import { boardApi, markSeen, readLastSeen } from "./board-data.js";
import {
  applyTheme,
  debugMode,
  noticeArrivals,
  refreshTimes,
  renderNotifyButton,
  wireChrome,
} from "./chrome.js";
import { DeleteDialog } from "./delete-session.js";
import { els } from "./dom.js";
import { getLocale, t } from "./i18n.js";
import { NotifyDialog } from "./notifications.js";
import { renderPanels } from "./panels.js";
import { RendererRegistry } from "./registry.js";
import { applyStaticText, renderChrome, renderDraft, renderStatus, renderStop } from "./render.js";
import { SessionList, sessionsPath } from "./session-list.js";
import { SessionView } from "./session-view.js";
import { connectEvents } from "./sse.js";

const SESSIONS_REFRESH_MS = 15000;

/** The renderers plugins register (see loadRenderers). */
const registry = new RendererRegistry({ document });

/** The status notice: `{key, params, tone}`, or null. */
const notice = {
  current: null,
  set(key, params, tone = "info") {
    this.current = key ? { key, params, tone } : null;
    page.status();
  },
};

/** The actions in flight ("create", "fork", "flush", "rename", "send", "stop"). */
const busy = new Set();

/** Developer controls (Flush) are shown only with `?debug=1` or the stored setting. */
const debug = debugMode();

/** The last instant the page was seen before this visit (null on a first visit). */
const awaySince = readLastSeen();

/** What the open Session is called: its list row's name, else (a Session beyond the pages
 * listed) the name its views carry, else "Untitled session". */
function openLabel(open) {
  const name = open.views?.name;
  if (sessions.find(open.id) === null && typeof name === "string" && name !== "") return name;
  return sessions.label(open.id);
}

/** The board shown instead of a Session (its registered name), or null. */
const screen = { board: null };

/** The page's renderers, each given what it shows by the state's owners. */
const page = {
  chrome() {
    const open = view.current;
    renderChrome({
      session: open && { id: open.id, label: openLabel(open), win: open.win },
      busy: (action) => busy.has(action),
      debug,
    });
    page.stop();
  },
  stop() {
    const open = view.current;
    renderStop({
      running: open !== null && open.runningTurn() !== null,
      stopping: busy.has("stop") || (open !== null && open.isStopping()),
    });
  },
  status() {
    const open = view.current;
    renderStatus({
      stream: open && { state: open.streamState, error: open.streamError },
      turn: open?.turnState() ?? null,
      notice: notice.current,
    });
  },
  draft() {
    renderDraft(view.current?.draft.current ?? null);
    page.stop();
  },
  panels() {
    const open = view.current;
    renderPanels({
      registry,
      session: open && {
        id: open.id,
        views: open.views,
        runTool: (name, args) => view.runTool(open, name, args),
        refreshViews: () => view.loadViews(open),
      },
      rerender: page.panels,
    });
  },
  sessions() {
    sessions.render();
  },
  boards() {
    const showing = screen.board !== null;
    els.conversation.hidden = showing;
    els.boardView.hidden = !showing;
    const atHome = !showing && view.current === null;
    if (atHome) els.homeEntry.setAttribute("aria-current", "page");
    else els.homeEntry.removeAttribute("aria-current");
    // Rebuilt only when they change: a keyboard on an entry keeps its place.
    const entries = JSON.stringify([getLocale(), screen.board, boards.entries().map(([n]) => n)]);
    if (els.boardEntries.getAttribute("data-shown") !== entries) {
      els.boardEntries.setAttribute("data-shown", entries);
      els.boardEntries.replaceChildren(...boards.renderEntries(els.boardEntries, screen.board));
    }
    if (showing) boards.renderView({ heading: els.boardHeading, body: els.boardBody });
    els.scroll.classList.toggle("at-home", atHome);
    if (atHome) boards.renderHome(els.home, els.emptyTitle);
    else els.home.hidden = true;
  },
};

const sessions = new SessionList({
  load: (page) => api("GET", sessionsPath(page)),
  currentId: () => view.current?.id ?? null,
  onSelect: (id) => nav.openSession(id),
  onChange: () => page.chrome(),
});

const view = new SessionView({
  http: { api, sessionPath, authHeaders },
  connect: connectEvents,
  registry,
  sessions,
  notice,
  page,
  onArrivals: noticeArrivals,
});

/** Run a tool as the user's action on Session `sessionId`; resolves with the tool's value. */
async function runToolOn(sessionId, name, args) {
  const path = sessionPath(sessionId, `/tools/${encodeURIComponent(name)}`);
  const answer = await api("POST", path, { arguments: args ?? {} });
  return answer?.value;
}

const boards = new Boards({
  registry,
  http: boardApi(api),
  runTool: runToolOn,
  openSession: (id) => nav.openSession(id),
  openBoard: (name) => nav.showBoard(name),
  onChange: () => page.boards(),
  document,
});

const deleteDialog = new DeleteDialog({
  dialog: els.deleteDialog,
  text: els.deleteText,
  error: els.deleteError,
  cancel: els.deleteCancel,
  confirm: els.deleteConfirm,
});

const notifyDialog = new NotifyDialog({
  elements: {
    dialog: els.notifyDialog,
    opener: els.notifyEntry,
    intro: els.notifyIntro,
    channels: els.notifyChannels,
    test: els.notifyTest,
    error: els.notifyError,
    device: els.notifyDevice,
    push: els.notifyPush,
    pushState: els.notifyPushState,
    close: els.notifyClose,
  },
  http: { api, token: currentToken },
  // The header's Enable button and its refused sentence follow the browser's answer.
  onPermission: renderNotifyButton,
});

/** The parts the moves and the actions work on. */
const parts = { registry, sessions, view, boards, notice, busy, page, screen, deleteDialog };

/** The moves between an open Session, a whole board and the start page (app-navigation.js). */
const nav = createNavigation(parts);

/** The person's actions and the controls wired to them (app-actions.js). */
const actions = createActions({ ...parts, http: { api, sessionPath }, nav, rerenderAll });

// ------------------------------------------------------------------ the page in a new language

/** Everything the page shows again, in the language now chosen. */
function rerenderAll() {
  applyStaticText();
  applyTheme();
  renderExamples();
  page.sessions();
  page.panels();
  const open = view.current;
  if (open && open.win.events.length > 0) open.transcript.rebuild("relocalize");
  page.draft();
  page.chrome();
  page.status();
  page.boards();
  deleteDialog.relocalize();
  if (notifyDialog.isOpen) notifyDialog.render();
  // The worker words its notifications' buttons in the page's language.
  notifyDialog.syncWorker().catch((error) => console.warn("dsh: the service worker did not answer", error));
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
  actions.wireEvents();
  await loadRenderers(readConfig());
  registry.onPanelsChange(() => {
    page.panels();
    page.boards();
  });
  page.panels();
  page.chrome();
  page.status();
  page.boards();
  // "While you were away" counts from the instant the page was last seen; from now on that
  // instant moves while the page is visible (and is kept as the tab hides or closes).
  markSeen();
  document.addEventListener("visibilitychange", () => markSeen());
  window.addEventListener("pagehide", () => {
    if (document.visibilityState !== "hidden") markSeen();
  });
  await sessions.refresh();
  const query = new URLSearchParams(window.location.search);
  const initial = query.get("session");
  const board = query.get("board");
  if (initial) view.select(initial, { updateUrl: false });
  else if (board && registry.board(board) !== null) nav.showBoard(board, { focus: false });
  page.boards();
  boards.loadHome(awaySince);
  window.setInterval(() => {
    if (document.visibilityState === "hidden") return;
    markSeen();
    sessions.refresh();
    if (screen.board !== null) boards.refreshView();
    else if (view.current === null) boards.refreshHome();
  }, SESSIONS_REFRESH_MS);
}

boot().catch((error) => {
  console.error("dsh: boot failed", error);
});
