// ui-schedule: Done and Snooze ▾ for one delivered occurrence, the controls the reminder card,
// the Reminders panel and the boards show (`occurrenceControls`). This module owns their state
// on the page, per occurrence (the action running, the last failure, the open Snooze menu and
// the time typed, an answer the Session's state may not show yet, where the focus goes next,
// and the places showing it), builds them into the DOM, and runs Done (`schedule_ack`) and a
// Snooze (`schedule_snooze`) as the user's action through the `runTool` it is given; once one
// is done or snoozed it says so ("Done ✓", "Snoozed until 18:10"). Text reaches the DOM only as
// text nodes.

import { buttonElement, textElement, timeElement } from "./schedule-dom.js";
import { instantMs, scoped } from "./schedule-words.js";
import {
  ACK_TOOL,
  actionErrorText,
  actionOutcome,
  localInputValue,
  pickedUntil,
  SNOOZE_TOOL,
  snoozeChoices,
  untilText,
} from "./occurrence.js";

/**
 * Each occurrence's controls on this page, by `occurrenceKey`: the action running (every place
 * waits for it), the last failure (`{place, text}`: shown where it was taken), the Snooze menu
 * (the place it is open in, the time typed, its problem), an answer the Session's state may not
 * show yet, where the focus goes next (`{place, key}`) and the places showing it.
 */
const occurrences = new Map();
let menus = 0;
/** How long a rebuilt place takes back the focus an action left in it. */
const HOLD_FOCUS_MS = 5_000;
/** The focus the last action left (`{occurrence, place, key, until}`), or null. */
let held = null;

function controlsOf(key) {
  let ui = occurrences.get(key);
  if (ui === undefined) {
    ui = {
      running: false,
      error: null,
      menu: null,
      pick: "",
      problem: null,
      answered: null,
      focus: null,
      shown: new Set(),
    };
    occurrences.set(key, ui);
  }
  return ui;
}

/** Forget every occurrence's controls (for tests). */
export function resetOccurrences() {
  occurrences.clear();
  held = null;
}

/** Rebuild every place that shows `ui` (one the page has dropped since is forgotten). */
function refreshAll(ui) {
  for (const shown of [...ui.shown]) {
    if (shown.root.isConnected === false) ui.shown.delete(shown);
    else fill(shown);
  }
}

/**
 * Done and Snooze ▾ for one delivered occurrence, or what became of it: "Done ✓", "Snoozed
 * until 18:10". `spec`: `{document, t, time, place, key, scheduleId, occurrenceAt, name,
 * state(), runTool?, errorText?, after?}`. `place` names where it is shown ("card", "panel",
 * "board": the focus follows an action in the place it was taken); `key` is `occurrenceKey(...)`
 * (the places showing one occurrence share its running action, failure and menu); `state()`
 * says what the Session records became of it (`{done, snoozedUntil}`, read at every rebuild);
 * `after()` runs once an action succeeded. Without `runTool` only the state shows.
 */
export function occurrenceControls(spec) {
  const root = spec.document.createElement("div");
  root.className = "schedule-occurrence";
  const shown = { root, spec, menuId: `schedule-snooze-${(menus += 1)}` };
  const places = controlsOf(spec.key).shown;
  // The places the page has dropped since (a rebuilt panel, card or board) are forgotten.
  for (const old of [...places]) if (old.root.isConnected === false) places.delete(old);
  places.add(shown);
  fill(shown);
  return root;
}

function resolvedState(spec, ui) {
  const told = spec.state();
  if (told.done || told.snoozedUntil !== null) return told;
  return { done: ui.answered?.done === true, snoozedUntil: ui.answered?.snoozedUntil ?? null };
}

function keyed(root, key) {
  const nodes = [...root.querySelectorAll("[data-focus-key]")];
  return nodes.find((node) => node.getAttribute("data-focus-key") === key) ?? null;
}

function fill(shown) {
  const { root, spec } = shown;
  const doc = spec.document;
  const ui = controlsOf(spec.key);
  const active = doc.activeElement ?? null;
  const had =
    active !== null && root.contains(active) ? active.getAttribute("data-focus-key") : null;
  const state = resolvedState(spec, ui);
  let parts = [];
  if (state.done || state.snoozedUntil !== null) {
    ui.menu = null;
    ui.error = null;
    parts = [stateLine(spec, state)];
  } else if (typeof spec.runTool === "function") {
    parts = actionParts(shown, ui);
  }
  root.replaceChildren(...parts);
  if (ui.running) root.setAttribute("aria-busy", "true");
  else root.removeAttribute("aria-busy");
  const asked = ui.focus?.place === spec.place ? keyed(root, ui.focus.key) : null;
  if (asked !== null) {
    focusOnceShown(doc, ui, spec, asked, ui.focus);
    return;
  }
  if (had !== null) {
    keyed(root, had)?.focus();
    return;
  }
  // A place the host rebuilt (the card, once the Session recorded the action) takes back the
  // focus the last action left in it, when the focus was lost with the old one.
  const last = held;
  if (last?.occurrence === spec.key && last.place === spec.place && last.until > Date.now()) {
    const again = keyed(root, last.key);
    if (again !== null) focusOnceShown(doc, ui, spec, again, last);
  }
}

/** The focus is nowhere (the page's body), or on an element no longer in the page. */
function focusLost(doc) {
  const active = doc.activeElement ?? null;
  return (
    active === null ||
    active === doc.body ||
    active.isConnected === false ||
    active.parentNode === null
  );
}

/**
 * Focus `element` (shown for `spec`) for `wish` (`ui.focus`, or the focus an action left, `held`)
 * once it is in the page, unless the person has moved on to something else since.
 */
function focusOnceShown(doc, ui, spec, element, wish) {
  const go = () => {
    if (element.isConnected === false) return;
    if (ui.focus === wish) ui.focus = null;
    else if (held !== wish) return;
    const root = element.closest(".schedule-occurrence");
    if (!focusLost(doc) && !root?.contains(doc.activeElement)) return;
    element.focus();
    const until = wish.until ?? Date.now() + HOLD_FOCUS_MS;
    held = { occurrence: spec.key, place: wish.place, key: wish.key, until };
  };
  if (element.isConnected === false) queueMicrotask(go);
  else go();
}

function tagOf(spec) {
  return `${spec.scheduleId}@${spec.occurrenceAt}`;
}

function stateLine(spec, state) {
  const doc = spec.document;
  const s = scoped(spec.t);
  const line = doc.createElement("p");
  line.className = "schedule-occurrence-state";
  line.setAttribute("tabindex", "-1");
  line.setAttribute("data-focus-key", `state:${tagOf(spec)}`);
  if (state.done) {
    line.setAttribute("data-state", "done");
    line.appendChild(doc.createTextNode(s("state.done")));
    return line;
  }
  line.setAttribute("data-state", "snoozed");
  // The time is a <time> inside the sentence, wherever the language puts it.
  const [head, tail = ""] = s("state.snoozed", { time: "\u0000" }).split("\u0000");
  const ms = instantMs(state.snoozedUntil);
  if (head !== "") line.appendChild(doc.createTextNode(head));
  line.appendChild(timeElement(doc, state.snoozedUntil, untilText(ms, spec.time), spec.time));
  if (tail !== "") line.appendChild(doc.createTextNode(tail));
  return line;
}

function actionParts(shown, ui) {
  const { spec } = shown;
  const doc = spec.document;
  const s = scoped(spec.t);
  const tag = tagOf(spec);
  const parts = [];
  const row = doc.createElement("div");
  row.className = "schedule-occurrence-actions";
  const done = buttonElement(doc, s("act.done"), "schedule-occurrence-done", `done:${tag}`);
  done.setAttribute("aria-label", s("act.doneLabel", { prompt: spec.name }));
  done.disabled = ui.running;
  done.addEventListener("click", () => run(shown, ACK_TOOL, {}, "done"));
  const snooze = buttonElement(doc, s("act.snooze"), "schedule-occurrence-snooze", `snooze:${tag}`);
  snooze.setAttribute("aria-label", s("act.snoozeLabel", { prompt: spec.name }));
  const open = ui.menu === spec.place && !ui.running;
  snooze.setAttribute("aria-expanded", open ? "true" : "false");
  snooze.setAttribute("aria-controls", shown.menuId);
  snooze.disabled = ui.running;
  snooze.addEventListener("click", () => {
    if (ui.running) return;
    ui.menu = open ? null : spec.place;
    ui.problem = null;
    ui.focus = { place: spec.place, key: open ? `snooze:${tag}` : `snooze-0:${tag}` };
    refreshAll(ui);
  });
  row.appendChild(done);
  row.appendChild(snooze);
  if (ui.running) {
    const busy = textElement(doc, "span", s("act.saving"), "schedule-occurrence-busy");
    busy.setAttribute("role", "status");
    row.appendChild(busy);
  }
  parts.push(row);
  if (open) parts.push(snoozeMenu(shown, ui));
  if (ui.error?.place === spec.place) {
    const problem = textElement(doc, "p", ui.error.text, "schedule-occurrence-error");
    problem.setAttribute("role", "alert");
    parts.push(problem);
  }
  return parts;
}

function snoozeMenu(shown, ui) {
  const { spec } = shown;
  const doc = spec.document;
  const s = scoped(spec.t);
  const tag = tagOf(spec);
  const now = spec.time.now();
  const zone = spec.time.timeZone ?? "UTC";
  const menu = doc.createElement("div");
  menu.className = "schedule-snooze-menu";
  menu.setAttribute("id", shown.menuId);
  menu.setAttribute("role", "group");
  menu.setAttribute("aria-label", s("act.snoozeMenu"));
  snoozeChoices(now, zone).forEach((choice, index) => {
    const key = `snooze-${index}:${tag}`;
    const item = buttonElement(doc, s(choice.label), "schedule-snooze-choice", key);
    item.addEventListener("click", () => run(shown, SNOOZE_TOOL, choice.args, "snooze"));
    menu.appendChild(item);
  });
  const form = doc.createElement("form");
  form.className = "schedule-snooze-pick";
  form.setAttribute("novalidate", "");
  const field = doc.createElement("label");
  field.className = "schedule-snooze-field";
  field.appendChild(textElement(doc, "span", s("act.pick"), "schedule-snooze-label"));
  const input = doc.createElement("input");
  input.setAttribute("type", "datetime-local");
  input.setAttribute("min", localInputValue(now, zone));
  input.setAttribute("data-focus-key", `snooze-pick:${tag}`);
  input.value = ui.pick;
  input.addEventListener("input", () => {
    ui.pick = input.value;
  });
  field.appendChild(input);
  form.appendChild(field);
  const go = textElement(doc, "button", s("act.pickGo"), "schedule-snooze-go");
  go.setAttribute("type", "submit");
  go.setAttribute("data-focus-key", `snooze-go:${tag}`);
  form.appendChild(go);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const until = pickedUntil(ui.pick, spec.time.now(), zone);
    if (until === null) {
      ui.problem = s("act.needFuture");
      ui.focus = { place: spec.place, key: `snooze-pick:${tag}` };
      refreshAll(ui);
      return;
    }
    run(shown, SNOOZE_TOOL, { until }, "snooze");
  });
  menu.appendChild(form);
  if (ui.problem !== null) {
    const problem = textElement(doc, "p", ui.problem, "schedule-snooze-problem");
    problem.setAttribute("role", "alert");
    menu.appendChild(problem);
  }
  menu.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    ui.menu = null;
    ui.problem = null;
    ui.focus = { place: spec.place, key: `snooze:${tag}` };
    refreshAll(ui);
  });
  return menu;
}

/** Run Done or a Snooze as the user's action; every place showing the occurrence follows. */
async function run(shown, tool, args, trigger) {
  const { spec } = shown;
  const ui = controlsOf(spec.key);
  if (ui.running) return;
  ui.running = true;
  ui.error = null;
  ui.problem = null;
  ui.menu = null;
  ui.focus = null;
  refreshAll(ui);
  let outcome;
  try {
    const call = { id: spec.scheduleId, occurrence_at: spec.occurrenceAt, ...args };
    outcome = actionOutcome(tool, await spec.runTool(tool, call));
  } catch (error) {
    outcome = { error };
  }
  ui.running = false;
  const tag = tagOf(spec);
  if (outcome.error !== undefined) {
    ui.error = { place: spec.place, text: actionErrorText(outcome.error, spec.t, spec.errorText) };
    ui.focus = { place: spec.place, key: `${trigger}:${tag}` };
  } else {
    ui.pick = "";
    ui.answered = outcome;
    ui.focus = { place: spec.place, key: `state:${tag}` };
  }
  refreshAll(ui);
  if (outcome.error === undefined) spec.after?.();
}

/** A helper module of the plugin: it registers nothing (the modules that import it do). */
export default function register() {}
