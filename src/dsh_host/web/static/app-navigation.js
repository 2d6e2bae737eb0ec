// dsh browser client, app layer: what the page shows, an open Session (`?session=`), a whole
// board (`?board=`), or, with neither, the start page. This module owns the moves between them:
// the address, which board is shown (in the `screen` it is handed), the drawer closing and where
// the keyboard lands. It is given the page's parts by the composition root (app.js).

import { setDrawer } from "./chrome.js";
import { els } from "./dom.js";

/**
 * The moves of one page over the parts app.js made: `registry`, `view` (the SessionView),
 * `boards`, `notice` (the status notice), `page` (its renderers) and `screen` (`{board}`: the
 * board shown instead of a Session, or null). Returns `{showSession, openSession, showBoard,
 * goHome}`.
 */
export function createNavigation({ registry, view, boards, notice, page, screen }) {
  /** The address names what is shown: `?session=` or `?board=` (other parameters stay). */
  function setAddress({ session = null, board = null } = {}) {
    const url = new URL(window.location.href);
    for (const [key, value] of [
      ["session", session],
      ["board", board],
    ]) {
      if (value) url.searchParams.set(key, value);
      else url.searchParams.delete(key);
    }
    window.history.replaceState(null, "", url);
  }

  function leaveBoard() {
    if (screen.board === null) return;
    screen.board = null;
    boards.closeView();
  }

  /** Show Session `id` (from the list, a board's link, a new Session or a branch). */
  function showSession(id) {
    leaveBoard();
    view.select(id);
    page.boards();
  }

  /** Open Session `id` for the person: the keyboard lands in its message box. */
  function openSession(id) {
    showSession(id);
    setDrawer(false);
    els.composer.focus();
  }

  /** Show the whole board `name` instead of a Session. */
  function showBoard(name, { focus = true } = {}) {
    if (registry.board(name) === null) return;
    view.close();
    notice.set(null);
    screen.board = name;
    setAddress({ board: name });
    page.sessions();
    page.panels();
    page.chrome();
    boards.openView(name);
    page.boards();
    setDrawer(false);
    if (focus) els.boardHeading.focus();
  }

  /** The start page: no Session open, no board shown. */
  function goHome() {
    view.close();
    leaveBoard();
    setAddress();
    page.sessions();
    page.panels();
    page.chrome();
    page.status();
    page.boards();
    boards.loadHome();
    setDrawer(false);
  }

  return { showSession, openSession, showBoard, goHome };
}
