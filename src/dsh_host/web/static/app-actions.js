// dsh browser client, app layer: the person's actions on the page. This module owns running
// them (one at a time per name, the chrome's button kept disabled until it settles, a failure
// made the status notice) and wiring the page's controls to them: new Session, Branch, Rename,
// Flush, Stop, sending a message (which starts a Session when none is open), Delete (asked
// first), the language and the history's older pages. It reaches the network only through the
// `http` the composition root (app.js) hands it.

import { deleteQuestion, sessionBadges } from "./delete-session.js";
import { els } from "./dom.js";
import { errorMessage } from "./errors.js";
import { onLocaleChange, setLocale } from "./i18n.js";
import { browserTimeZone, sendWithZone } from "./streaming.js";

/**
 * The actions of one page over the parts app.js made: `http` (`{api, sessionPath}`),
 * `registry`, `sessions` (the SessionList), `view` (the SessionView), `boards`, `notice`,
 * `busy` (the names of the actions in flight), `page` (its renderers), `deleteDialog`, `nav`
 * (createNavigation's moves) and `rerenderAll()` (the page in a new language). Returns
 * `{wireEvents}`.
 */
export function createActions({
  http: { api, sessionPath },
  registry,
  sessions,
  view,
  boards,
  notice,
  busy,
  page,
  deleteDialog,
  nav: { showSession, goHome },
  rerenderAll,
}) {
  /** Ask, then delete the open Session: the page returns to the start page without it. */
  function askDelete() {
    const current = view.current;
    if (current === null) return;
    const id = current.id;
    const badges = () =>
      sessionBadges(sessions.find(id), view.current?.id === id ? view.current.views?.views : null);
    deleteDialog.ask({
      question: () => deleteQuestion({ name: sessions.label(id), badges: badges(), registry }),
      remove: () => api("DELETE", sessionPath(id)),
      done: async () => {
        const name = sessions.label(id);
        boards.forgetSession(id);
        if (view.current?.id === id) goHome();
        notice.set("status.deleted", { name });
        els.emptyTitle.focus();
        await sessions.refresh();
      },
      returnFocus: () => els.deleteSession.focus(),
    });
  }

  /**
   * Run one user action at a time per name: the chrome keeps its button disabled (through any
   * re-render meanwhile) until it settles, and a failure becomes the status notice.
   */
  async function runAction(name, action) {
    if (busy.has(name)) return;
    busy.add(name);
    page.chrome();
    try {
      await action();
    } catch (error) {
      notice.set("status.error", { message: errorMessage(error) }, "error");
    } finally {
      busy.delete(name);
      page.chrome();
    }
  }

  async function createSession() {
    const created = await api("POST", "/api/sessions", {});
    await sessions.refresh();
    showSession(created.id);
    notice.set("status.created");
    els.composer.focus();
  }

  async function forkCurrent() {
    const current = view.current;
    if (!current) return;
    const child = await api("POST", sessionPath(current.id, "/fork"), {});
    await sessions.refresh();
    showSession(child.id);
    notice.set("status.forked");
    els.composer.focus();
  }

  function startRename() {
    if (!view.current) return;
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
    const current = view.current;
    const name = els.renameInput.value.trim();
    if (!current || name === "") return;
    await api("POST", sessionPath(current.id, "/name"), { name });
    endRename();
    await sessions.refresh();
    notice.set("status.renamed");
    els.rename.focus();
  }

  async function flushCurrent() {
    const current = view.current;
    if (!current) return;
    const result = await api("POST", sessionPath(current.id, "/flush"));
    if (view.current !== current) return;
    notice.set(result?.durable ? "status.flushed" : "status.flushNotDurable", {
      seq: result?.throughSeq,
    });
  }

  /** Stop the turn the open Session runs (the host answers false when it had already ended). */
  async function stopCurrent() {
    const current = view.current;
    const turn = current?.runningTurn() ?? null;
    if (turn === null) return;
    const result = await api("POST", sessionPath(current.id, "/turn/cancel"));
    // Its turn/end ("Stopped") comes on the stream; until then the same turn is not offered again.
    if (result?.cancelled === true) current.stopping = turn;
    page.status();
  }

  function sendMessage() {
    const text = els.composer.value;
    if (text.trim() === "") return;
    const current = view.current;
    // Read before the POST: sending resumes a cold Session (and the selection may change).
    const wasCold = current !== null && sessions.find(current.id)?.live === false;
    runAction("send", async () => {
      let target = current;
      if (target === null) {
        // Typing with no Session open starts one, as in any chat app.
        const created = await api("POST", "/api/sessions", {});
        await sessions.refresh();
        showSession(created.id);
        target = view.current;
      }
      // The browser's zone, for this message's turn only ("tomorrow at 9" means here).
      const post = (body) => api("POST", sessionPath(target.id, "/messages"), body);
      await sendWithZone(post, text, browserTimeZone());
      if (view.current === target) {
        els.composer.value = "";
        notice.set(null);
        if (!target.conn.connected) target.conn.reconnectNow();
      }
      if (wasCold) await sessions.refresh();
    });
  }

  function wireEvents() {
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
    els.homeEntry.addEventListener("click", () => {
      goHome();
      els.emptyTitle.focus();
    });
    els.deleteSession.addEventListener("click", askDelete);
    els.fork.addEventListener("click", () => runAction("fork", forkCurrent));
    els.flush.addEventListener("click", () => runAction("flush", flushCurrent));
    els.stop.addEventListener("click", () => runAction("stop", stopCurrent));
    els.loadOlder.addEventListener("click", () => view.current?.win.loadOlder());
    // loadOlder itself ignores calls while a page loads or when there is no more history.
    els.scroll.addEventListener("scroll", () => {
      if (els.scroll.scrollTop < 24) view.current?.win.loadOlder();
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

  return { wireEvents };
}
