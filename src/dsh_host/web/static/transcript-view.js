// dsh browser client, rendering: the open Session's transcript. `TranscriptView` keeps one
// element per node in step with that Session's window (appends, older pages and late views
// touch only their own nodes; a reset rebuilds) and keeps the reader's place as it changes
// (`keepingScroll`). After every change it hides a call row its result's row shows, and folds a
// delivery's follow-up and the assistant's answer into the card that offers it, and repeats of
// one reminder on one day into the last (which rows fold is `foldPlan`, transcript.js). It
// receives what it shows and talks to no network (node markup is nodes.js). Every string that
// comes from a Session reaches the DOM through textContent / createTextNode only.

import { el, els, isNearBottom, scrollToBottom } from "./dom.js";
import { t } from "./i18n.js";
import { pageTime, renderNode } from "./nodes.js";
import { foldPlan, nodeFor, nodesFor } from "./transcript.js";

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

/** The rows the fold reads: each shown transcript element as `{seq, kind, foldKey?, day?}`. */
function foldRows(time) {
  const rows = [];
  for (const element of els.transcript.children) {
    if (element.hidden) continue;
    const seq = Number(element.getAttribute("data-seq"));
    const kind = element.getAttribute("data-kind");
    const card = kind === "presented-event" ? element.querySelector("[data-fold-key]") : null;
    if (card === null) {
      rows.push({ seq, kind });
      continue;
    }
    const at = Date.parse(card.getAttribute("data-fold-at") ?? "");
    const day = Number.isFinite(at) ? time.day(at) : null;
    rows.push({ seq, kind: "card", foldKey: card.getAttribute("data-fold-key"), day });
  }
  return rows;
}

/**
 * A `<details>` the fold builds, reopened when the reader had it open before the last pass (`id`
 * names it across passes: a repeats list by its first card, which stays while later ones join).
 */
function foldDetails(part, id, opened, summaryText) {
  const details = el("details", `fold-${part}`);
  details.setAttribute("data-fold-part", part);
  details.setAttribute("data-fold-id", `${id}:${part}`);
  details.open = opened.has(`${id}:${part}`);
  details.appendChild(el("summary", `fold-${part}-summary`, summaryText));
  return details;
}

/**
 * One delivery is one card (transcript.js, foldPlan): a card that offers to fold (an element
 * with `data-fold-key` and `data-fold-at`, the occurrence's instant; its `[data-fold-slot]`
 * receives what folds) shows the follow-up line as a collapsed detail and the assistant's answer
 * as a line; the rows they came from are hidden (`data-folded`). Repeated deliveries of one key
 * on one day collapse into the last card ("Delivered 12 times today", opening to each time).
 * Runs after every change, from scratch; texts are copied as text.
 */
function foldDeliveries() {
  const transcript = els.transcript;
  const opened = new Set();
  for (const details of transcript.querySelectorAll("details[data-fold-id]")) {
    if (details.open) opened.add(details.getAttribute("data-fold-id"));
  }
  for (const row of transcript.querySelectorAll("[data-folded]")) {
    row.hidden = false;
    row.removeAttribute("data-folded");
  }
  for (const slot of transcript.querySelectorAll("[data-fold-slot]")) slot.replaceChildren();
  const time = pageTime();
  const { cards, folded } = foldPlan(foldRows(time));
  const bySeq = new Map();
  for (const element of transcript.children) {
    bySeq.set(Number(element.getAttribute("data-seq")), element);
  }
  for (const seq of folded) {
    const row = bySeq.get(seq);
    row.hidden = true;
    row.setAttribute("data-folded", "");
  }
  for (const [seq, fold] of cards) {
    const card = bySeq.get(seq).querySelector("[data-fold-key]");
    const slot = card.querySelector("[data-fold-slot]") ?? card;
    if (fold.echo !== null) {
      const text = bySeq.get(fold.echo).querySelector(".text")?.textContent ?? "";
      const echo = el("p", "fold-echo", text);
      echo.setAttribute("data-fold-echo", "");
      slot.appendChild(echo);
    }
    if (fold.repeats.length > 1) {
      const instants = fold.repeats.map((repeat) =>
        bySeq.get(repeat).querySelector("[data-fold-key]").getAttribute("data-fold-at"),
      );
      const last = Date.parse(instants[instants.length - 1]);
      const count = instants.length;
      const label =
        time.day(last) === time.day(time.now())
          ? t("fold.repeatsToday", { count })
          : t("fold.repeats", { count, day: time.date(last) });
      const details = foldDetails("repeats", fold.repeats[0], opened, label);
      const list = el("ul", "fold-repeats-list");
      for (const iso of instants) {
        const item = el("li", "");
        const stamp = el("time", "", time.absolute(Date.parse(iso)));
        stamp.setAttribute("datetime", iso);
        item.appendChild(stamp);
        list.appendChild(item);
      }
      details.appendChild(list);
      slot.appendChild(details);
    }
    if (fold.followup !== null) {
      const row = bySeq.get(fold.followup);
      const summary = row.querySelector(".followup-summary")?.textContent ?? "";
      const details = foldDetails("followup", seq, opened, summary);
      const text = row.querySelector(".followup-text")?.textContent ?? "";
      details.appendChild(el("pre", "followup-text", text));
      slot.appendChild(details);
    }
  }
}

// ------------------------------------------------------------------ transcript

/**
 * The transcript DOM of one open Session: it mirrors `win` (its SessionWindow), one element per
 * node in seq order (`data-seq`). Appends, older pages and late views touch only their own
 * nodes; a reset rebuilds. `registry` renders plugins' nodes; `lineage()` is `{seedLength,
 * parentName}` when the Session is a fork (else null), read at render time; `onArrivals(elements)`
 * hears about elements that arrived live (history loads do not count); `runTool(name, args)` runs
 * a tool as the user's action (a tool row's offered action, e.g. Undo; a card's, e.g. Done);
 * `sessionId` names the Session and `notices()` reads its notices (for the cards).
 */
export class TranscriptView {
  constructor({ win, registry, lineage, onArrivals, runTool, sessionId, notices }) {
    this.win = win;
    const view = this;
    this._ctx = {
      registry,
      runTool,
      sessionId,
      notices,
      findEvent(predicate) {
        const { events } = view.win;
        for (let i = events.length - 1; i >= 0; i -= 1) {
          if (predicate(events[i])) return events[i];
        }
        return null;
      },
      callFor(callId) {
        const { events, views } = view.win;
        if (callId === undefined) return null;
        for (let i = events.length - 1; i >= 0; i -= 1) {
          const event = events[i];
          if (event.type === "tool/call" && event.data?.callId === callId) {
            return nodeFor({ event, view: views[i] });
          }
        }
        return null;
      },
      isForkBoundary(seq) {
        return lineage()?.seedLength === seq;
      },
      parentName() {
        return lineage()?.parentName ?? null;
      },
    };
    this._onArrivals = onArrivals;
  }

  _element(node) {
    return renderNode(node, this._ctx);
  }

  /** Apply one SessionWindow change (`append`, `prepend`, `view`, `state` or a reset). */
  change(change) {
    const win = this.win;
    switch (change.type) {
      case "state":
        break;
      case "append": {
        const elements = nodesFor(change.entries).map((node) => this._element(node));
        keepingScroll("append", () => {
          for (const element of elements) els.transcript.appendChild(element);
          this._renderCardsAgain(change.entries);
        });
        this._onArrivals(elements);
        break;
      }
      case "prepend": {
        const entries = [];
        for (let i = 0; i < change.count; i += 1) {
          entries.push({ event: win.events[i], view: win.views[i] });
        }
        const added = nodesFor(entries).map((node) => this._element(node));
        keepingScroll("prepend", () => els.transcript.prepend(...added));
        break;
      }
      case "view": {
        const node = nodeFor({ event: win.events[change.index], view: win.views[change.index] });
        const element = node === null ? null : this._element(node);
        keepingScroll("view", () => replaceNode(change.seq, element));
        if (element !== null) this._onArrivals([element]);
        break;
      }
      default:
        // A reset. While a resync reloads, keep showing what we had instead of flashing an
        // empty page.
        if (!(win.openState === "loading" && win.events.length === 0)) this.rebuild("reset");
    }
    hideAnsweredCalls();
    foldDeliveries();
  }

  /**
   * A card may say what later events of its type did to it (a reminder card: Done, Snoozed):
   * when events of a type with a renderer arrive, the cards of that type already shown are
   * rendered again in place (they are not arrivals).
   */
  _renderCardsAgain(entries) {
    const types = new Set();
    const fresh = new Set();
    for (const { event } of entries) {
      fresh.add(event?.seq);
      if (this._ctx.registry.has(event?.type)) types.add(event.type);
    }
    if (types.size === 0) return;
    const win = this.win;
    for (const element of [...els.transcript.querySelectorAll('[data-kind="presented-event"]')]) {
      const seq = Number(element.getAttribute("data-seq"));
      if (fresh.has(seq) || !types.has(element.getAttribute("data-event-type"))) continue;
      const index = seq - win.baseSeq;
      const node = nodeFor({ event: win.events[index], view: win.views[index] });
      if (node === null) continue;
      const again = this._element(node);
      // What the fold put in the old card (and which of it is open) moves to the new one.
      const slot = again.querySelector("[data-fold-slot]");
      const folded = element.querySelector("[data-fold-slot]");
      if (slot !== null && folded !== null) slot.replaceChildren(...folded.childNodes);
      element.replaceWith(again);
    }
  }

  /** Render the whole window again (`mode`: "reset" goes to the bottom, see keepingScroll). */
  rebuild(mode) {
    const elements = nodesFor(this.win.entries).map((node) => this._element(node));
    keepingScroll(mode, () => els.transcript.replaceChildren(...elements));
    hideAnsweredCalls();
    foldDeliveries();
  }
}

/**
 * Mutate the transcript keeping the reader's place: a reader at the bottom stays there (and a
 * reset always goes there); otherwise content added above (`prepend`) does not move what is on
 * screen, and anything else keeps the scroll offset.
 */
export function keepingScroll(mode, mutate) {
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
