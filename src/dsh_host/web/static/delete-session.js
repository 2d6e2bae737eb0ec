// dsh browser client: deleting a Session. Its Details offer "Delete session"; a modal dialog asks
// first, naming the Session and what goes with it (each plugin words its own view badges through
// the registry, e.g. "Its 2 pending reminders will be deleted too."; a view without words gets
// the host's generic sentence). Cancel (or Escape) keeps the Session and gives the focus back to
// the button that opened the dialog; confirming runs the delete the app hands in and, once it
// succeeded, closes the dialog and lets the app move on. A failure stays in the dialog, as text.

import { errorMessage } from "./errors.js";
import { getLocale, t } from "./i18n.js";

/** The positive badges of a Session, by view name: its open views when given, else its row's. */
export function sessionBadges(row, views) {
  const out = {};
  if (views !== null && typeof views === "object") {
    for (const [name, view] of Object.entries(views)) {
      const badge = view !== null && typeof view === "object" ? view.badge : undefined;
      if (Number.isSafeInteger(badge) && badge > 0) out[name] = badge;
    }
    return out;
  }
  const badges = row?.badges;
  if (badges === null || typeof badges !== "object") return out;
  for (const [name, count] of Object.entries(badges)) {
    if (Number.isSafeInteger(count) && count > 0) out[name] = count;
  }
  return out;
}

/**
 * The confirmation's sentence: "Delete “Groceries”? Its 2 pending reminders will be deleted
 * too." (`name`: what a person calls the Session; `badges`: by view name; `registry` words them).
 */
export function deleteQuestion({ name, badges, registry, locale = getLocale() }) {
  const translate = (key, params) => t(key, params, locale);
  const parts = [translate("delete.question", { name })];
  for (const [view, count] of Object.entries(badges).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    parts.push(registry.deleteNote(view, count, translate) ?? translate("delete.items", { count }));
  }
  return parts.join(translate("delete.gap")); // a space between English sentences, none in Chinese
}

/** Whether a failed delete means the Session is gone anyway (deleted meanwhile, elsewhere). */
function alreadyGone(error) {
  return error?.status === 404 || error?.code === "session_not_found";
}

/**
 * The dialog over the page's elements `{dialog, text, error, cancel, confirm}`. `ask({question,
 * remove, done, returnFocus})` opens it: `question()` is its sentence in the page's language,
 * `remove()` deletes (a promise), `done()` runs after it succeeded (the dialog is closed by
 * then), `returnFocus()` after Cancel or Escape.
 */
export class DeleteDialog {
  constructor({ dialog, text, error, cancel, confirm }) {
    this._dialog = dialog;
    this._text = text;
    this._error = error;
    this._cancel = cancel;
    this._confirm = confirm;
    this._asked = null;
    this._busy = false;
    cancel.addEventListener("click", () => this._dismiss());
    confirm.addEventListener("click", () => this._run());
    // Escape: the browser's cancel event; kept open while the delete runs.
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      this._dismiss();
    });
  }

  get isOpen() {
    return this._asked !== null;
  }

  ask({ question, remove, done, returnFocus }) {
    this._asked = { question, remove, done, returnFocus };
    this._busy = false;
    this._error.textContent = "";
    this._error.hidden = true;
    this.relocalize();
    if (typeof this._dialog.showModal === "function") this._dialog.showModal();
    else this._dialog.setAttribute("open", "");
    // The safe choice has the keyboard first.
    this._cancel.focus();
  }

  /** The question and the buttons in the page's language (again after a switch while open). */
  relocalize() {
    if (this._asked === null) return;
    this._text.textContent = this._asked.question();
    this._labels();
  }

  _labels() {
    this._cancel.textContent = t("delete.cancel");
    this._confirm.textContent = t(this._busy ? "delete.deleting" : "delete.confirm");
    if (this._busy) this._confirm.setAttribute("aria-disabled", "true");
    else this._confirm.removeAttribute("aria-disabled");
  }

  _close() {
    if (typeof this._dialog.close !== "function") this._dialog.removeAttribute("open");
    else if (this._dialog.open) this._dialog.close();
  }

  _dismiss() {
    if (this._asked === null || this._busy) return;
    const { returnFocus } = this._asked;
    this._asked = null;
    this._close();
    returnFocus?.();
  }

  async _run() {
    const asked = this._asked;
    if (asked === null || this._busy) return;
    this._busy = true;
    this._error.hidden = true;
    this._labels();
    let failure = null;
    try {
      await asked.remove();
    } catch (error) {
      if (!alreadyGone(error)) failure = error;
    }
    if (this._asked !== asked) return;
    this._busy = false;
    if (failure !== null) {
      this._labels();
      this._error.textContent = t("delete.failed", { message: errorMessage(failure) });
      this._error.hidden = false;
      return;
    }
    this._asked = null;
    this._close();
    asked.done();
  }
}
