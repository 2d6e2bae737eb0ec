// ui-schedule: the reminder card for presented `schedule/change` dispatches. The reminder's
// text is the largest thing on it, beside a bell; the due time reads as people read times and
// a delivery more than a minute late carries a badge with its reason when known. The card is
// marked `data-notify` so the host can raise a notification when it arrives in a hidden tab, and
// offers the host to fold into it (`data-fold-key`: one reminder, `data-fold-at`: this occurrence;
// `data-fold-slot`): the follow-up line, the assistant's echo and repeated deliveries. A
// reminder with a title shows it as the largest thing, its text below; one that repeats on a
// calendar rule says the rule ("Every Monday at 10:00") above which occurrence this was ("Due
// today 10:00", the dispatch's `occurrenceAt`), when the view carries the rule.
//
// Each card is one delivered occurrence (its reminder's id and `occurrenceAt`, the instant the
// dispatch delivered, as the Schedule plugin keys it). It offers Done (`schedule_ack`) and
// Snooze ▾ (`schedule_snooze`: 10 minutes, 1 hour, tomorrow at 09:00 or a chosen time, in the
// browser's zone) as the user's actions, and says what became of it ("Done ✓", "Snoozed until
// 18:10") from the Session's events (an ack of it, a reminder created with `snoozedFrom` it), so
// a Done from the panel, a notification or another tab shows here too. It says where the
// reminder was sent outside the page ("Sent to ntfy", "Could not reach e-mail: timeout") from
// the Session's notices, read again a few times while one is still being sent. The Reminders
// panel and the boards use the same controls (`occurrenceControls`).
// Everything the Session supplies reaches the DOM only as text nodes.

import {
  instantMs,
  latenessText,
  reminderName,
  ruleOf,
  ruleWords,
  scoped,
  textElement,
  timeElement,
} from "./schedule-words.js";

export const EVENT_TYPE = "schedule/change";
export const DELIVERY_MODE = "session-local";

/**
 * Validate a presented reminder view: the normalized `{scheduleId, prompt, occurrenceAt,
 * deliveryMode, lateReason?, title?, kind?, time?, timeZone?, weekdays?, expression?}`, or null
 * when the sidecar is not a compatible receipt (the optional fields are kept when they are
 * strings, `weekdays` when an array).
 */
export function validateReminderView(view) {
  if (view === null || typeof view !== "object" || Array.isArray(view)) return null;
  const { scheduleId, prompt, occurrenceAt, deliveryMode, lateReason } = view;
  if (typeof scheduleId !== "string" || scheduleId === "") return null;
  if (typeof prompt !== "string") return null;
  if (instantMs(occurrenceAt) === null) return null;
  if (deliveryMode !== DELIVERY_MODE) return null;
  const out = { scheduleId, prompt, occurrenceAt, deliveryMode };
  if (lateReason === "busy" || lateReason === "offline") out.lateReason = lateReason;
  for (const field of ["title", "kind", "time", "timeZone", "expression"]) {
    if (typeof view[field] === "string" && view[field] !== "") out[field] = view[field];
  }
  if (Array.isArray(view.weekdays)) out.weekdays = view.weekdays;
  return out;
}

/** Milliseconds between the due instant and the dispatch's record time, or null. */
export function latenessMs(eventTime, occurrenceAt) {
  if (typeof eventTime !== "number" || !Number.isFinite(eventTime)) return null;
  const due = instantMs(occurrenceAt);
  return due === null ? null : eventTime - due;
}

/**
 * What the card shows, as plain data. `node` is a presented-event node `{eventType, time,
 * view}` (`time`: the dispatch event's epoch-ms record time); `time` the host's formatter.
 */
export function reminderCardModel(node, t, time) {
  const s = scoped(t);
  const receipt = validateReminderView(node?.view);
  if (receipt === null) return { valid: false, unavailable: s("unavailable") };
  return {
    valid: true,
    label: s("label"),
    name: reminderName(receipt),
    prompt: receipt.prompt,
    rule: ruleWords(ruleOf(receipt), t, time.timeZone),
    scheduleId: receipt.scheduleId,
    occurrenceAt: receipt.occurrenceAt,
    dueText: s("due", { time: time.absolute(instantMs(receipt.occurrenceAt)) }),
    lateText: latenessText(
      latenessMs(node.time, receipt.occurrenceAt),
      receipt.lateReason,
      t,
      time,
    ),
    delivery: s("delivery"),
  };
}

const SVG = "http://www.w3.org/2000/svg";
const BELL_PATH =
  "M12 2.5a1.5 1.5 0 0 0-1.5 1.5v.6A6.5 6.5 0 0 0 5.5 11v4.2L3.8 18v1h16.4v-1l-1.7-2.8V11a6.5" +
  " 6.5 0 0 0-5-6.4V4A1.5 1.5 0 0 0 12 2.5ZM9.8 20.2a2.3 2.3 0 0 0 4.4 0Z";

/** The bell: an inline SVG drawn in the text colour (no emoji font needed), hidden from
 * assistive technology (the card's label says "Reminder"). */
export function bellIcon(doc) {
  const svg = doc.createElementNS(SVG, "svg");
  svg.classList.add("schedule-card-bell");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = doc.createElementNS(SVG, "path");
  path.setAttribute("d", BELL_PATH);
  path.setAttribute("fill", "currentColor");
  svg.appendChild(path);
  return svg;
}

/**
 * Build the card. `ctx` is `{node, locale, t, time, document?}` as the registry hands it, and,
 * from a host that offers them, `sessionId`, `runTool(name, args)` (the user's action on this
 * Session), `findEvent(predicate)` (the latest loaded event that matches), `errorText(error)`
 * and `notices()` (the Session's notices: `[{key, channel, label, status, error, ...}]`).
 * Without `runTool` the card offers no action; without `notices` it says nothing of them.
 */
export function renderReminderCard(ctx) {
  const { node, locale, t, time, document: doc = globalThis.document } = ctx;
  const model = reminderCardModel(node, t, time);
  const section = doc.createElement("section");
  section.setAttribute("role", "note");
  section.setAttribute("data-schedule-reminder", "");
  section.setAttribute("lang", locale === "zh" ? "zh-CN" : "en");
  section.className = "schedule-card";
  if (!model.valid) {
    section.setAttribute("data-invalid", "");
    section.appendChild(textElement(doc, "p", model.unavailable, "schedule-card-unavailable"));
    return section;
  }
  section.setAttribute("data-schedule-id", model.scheduleId);
  // The host folds this delivery's follow-up and answer, and repeats of one reminder, in here.
  section.setAttribute("data-fold-key", model.scheduleId);
  section.setAttribute("data-fold-at", model.occurrenceAt);
  section.setAttribute("data-notify", model.name);
  section.setAttribute("aria-label", `${model.label}: ${model.name}`);

  section.appendChild(bellIcon(doc));

  const body = doc.createElement("div");
  body.className = "schedule-card-body";
  body.appendChild(textElement(doc, "p", model.label, "schedule-card-label"));
  body.appendChild(textElement(doc, "p", model.name, "schedule-reminder-prompt"));
  if (model.name !== model.prompt) {
    body.appendChild(textElement(doc, "p", model.prompt, "schedule-card-text"));
  }
  if (model.rule !== null) {
    body.appendChild(textElement(doc, "p", model.rule, "schedule-card-rule"));
  }
  const meta = doc.createElement("p");
  meta.className = "schedule-card-meta";
  meta.appendChild(timeElement(doc, model.occurrenceAt, model.dueText, time, "schedule-card-due"));
  if (model.lateText !== null) {
    meta.appendChild(doc.createTextNode(" "));
    meta.appendChild(textElement(doc, "span", model.lateText, "schedule-card-late"));
  }
  body.appendChild(meta);
  body.appendChild(cardNotices(ctx, model, doc));
  body.appendChild(
    occurrenceControls({
      document: doc,
      t,
      time,
      place: "card",
      key: occurrenceKey(ctx.sessionId, model.scheduleId, model.occurrenceAt),
      scheduleId: model.scheduleId,
      occurrenceAt: model.occurrenceAt,
      name: model.name,
      state: () => occurrenceState(ctx.findEvent, model.scheduleId, model.occurrenceAt),
      runTool: ctx.runTool,
      errorText: ctx.errorText,
    }),
  );
  const slot = doc.createElement("div");
  slot.className = "schedule-card-folded";
  slot.setAttribute("data-fold-slot", "");
  body.appendChild(slot);
  section.appendChild(body);
  return section;
}

// ---- what became of a delivered occurrence

export const ACK_TOOL = "schedule_ack";
export const SNOOZE_TOOL = "schedule_snooze";

function sameInstant(a, b) {
  const ms = instantMs(a);
  return ms !== null && ms === instantMs(b);
}

function changeOf(event, operation) {
  if (event?.type !== EVENT_TYPE) return null;
  const data = event.data;
  return data !== null && typeof data === "object" && data.operation === operation ? data : null;
}

/**
 * What became of one delivered occurrence, from the Session's events: `{done, snoozedUntil}`
 * (`done`: an ack of it was recorded; `snoozedUntil`: the due instant of the reminder created
 * to snooze it, else null). `findEvent(predicate)` answers the latest loaded event that matches
 * (or null); without it nothing is known.
 */
export function occurrenceState(findEvent, scheduleId, occurrenceAt) {
  if (typeof findEvent !== "function") return { done: false, snoozedUntil: null };
  const ack = findEvent((event) => {
    const data = changeOf(event, "ack");
    return data?.id === scheduleId && sameInstant(data.occurrenceAt, occurrenceAt);
  });
  const snooze = findEvent((event) => {
    const from = changeOf(event, "create")?.schedule?.snoozedFrom;
    return from?.id === scheduleId && sameInstant(from.occurrenceAt, occurrenceAt);
  });
  const until = snooze?.data.schedule.scheduledAt;
  return { done: Boolean(ack), snoozedUntil: instantMs(until) === null ? null : until };
}

/** The same from a Reminders view item or a delivered board row's data (`done`, `snoozedUntil`). */
export function itemState(item) {
  const until = item?.snoozedUntil;
  return { done: item?.done === true, snoozedUntil: instantMs(until) === null ? null : until };
}

// ---- snooze times, on the wall clock of the browser's zone

const pad2 = (value) => String(value).padStart(2, "0");

function zoneParts(ms, timeZone) {
  const parts = {};
  const format = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  });
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  return parts;
}

/** The offset of `timeZone` from UTC at `ms`, in minutes (east of Greenwich positive). */
export function zoneOffsetMinutes(ms, timeZone) {
  const p = zoneParts(ms, timeZone);
  const [year, month, day, hour, minute, second] = [
    p.year,
    p.month,
    p.day,
    p.hour,
    p.minute,
    p.second,
  ].map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
}

/**
 * The instant of the wall time `date` (`YYYY-MM-DD`) `time` (`HH:MM`) in `timeZone`. A wall
 * time a clock change skips is read after the change ("02:30" becomes 03:30); one it repeats is
 * the later of the two.
 */
export function wallInstant(date, time, timeZone) {
  const [year, month, day] = date.split("-").map(Number);
  const [hour, minute] = time.split(":").map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  const first = wall - zoneOffsetMinutes(wall, timeZone) * 60_000;
  return wall - zoneOffsetMinutes(first, timeZone) * 60_000;
}

/** `ms` as `2026-12-04T09:00:00+01:00`: the wall time of `timeZone` with its offset. */
export function offsetIso(ms, timeZone) {
  const offset = zoneOffsetMinutes(ms, timeZone);
  const wall = new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000).toISOString().slice(0, 19);
  const size = Math.abs(offset);
  return `${wall}${offset < 0 ? "-" : "+"}${pad2(Math.floor(size / 60))}:${pad2(size % 60)}`;
}

/** `ms` as a datetime-local input shows it in `timeZone`: `YYYY-MM-DDTHH:MM`. */
export function localInputValue(ms, timeZone) {
  const p = zoneParts(ms, timeZone);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

/** The `YYYY-MM-DD` after `date`. */
function nextDate(date) {
  const [year, month, day] = date.split("-").map(Number);
  return new Date(Date.UTC(year, month - 1, day + 1)).toISOString().slice(0, 10);
}

/**
 * The Snooze menu at `now` (epoch ms) in `timeZone`: `[{label, args}]` for 10 minutes, 1 hour
 * and tomorrow at 09:00 on that zone's wall clock (`label`: a message name; `args`: what
 * `schedule_snooze` gets besides the occurrence).
 */
export function snoozeChoices(now, timeZone) {
  const today = localInputValue(now, timeZone).slice(0, 10);
  const tomorrow = wallInstant(nextDate(today), "09:00", timeZone);
  return [
    { label: "act.minutes10", args: { minutes: 10 } },
    { label: "act.hour1", args: { minutes: 60 } },
    { label: "act.tomorrow", args: { until: offsetIso(tomorrow, timeZone) } },
  ];
}

const LOCAL_DATE = "([0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))";
const LOCAL_TIME = "((?:[01][0-9]|2[0-3]):[0-5][0-9])(?::[0-5][0-9](?:\\.[0-9]+)?)?";
const LOCAL_INPUT = new RegExp(`^${LOCAL_DATE}T${LOCAL_TIME}$`);

/**
 * A datetime-local value (the wall clock of `timeZone`) as `schedule_snooze`'s `until`, or null
 * when it is malformed or not after `now`.
 */
export function pickedUntil(value, now, timeZone) {
  const match = typeof value === "string" ? LOCAL_INPUT.exec(value) : null;
  if (match === null) return null;
  const ms = wallInstant(match[1], match[2], timeZone);
  return ms > now ? offsetIso(ms, timeZone) : null;
}

/** "18:10" when `ms` is today on `time`'s clock, else as the card's times read ("tomorrow 09:00").
 */
export function untilText(ms, time) {
  const shown = time.absolute(ms);
  return time.day(ms) === time.day(time.now()) ? shown.slice(shown.lastIndexOf(" ") + 1) : shown;
}

// ---- Done and Snooze

/** What an ack's or a snooze's answer means: `{done: true}`, `{snoozedUntil}` or `{error}`. */
export function actionOutcome(tool, value) {
  if (value !== null && typeof value === "object" && typeof value.code !== "string") {
    if (tool === ACK_TOOL && value.done === true) return { done: true };
    if (tool === SNOOZE_TOOL && instantMs(value.scheduledAt) !== null) {
      return { snoozedUntil: value.scheduledAt };
    }
  }
  return { error: value ?? { code: "unknown" } };
}

const OWN_CODES = Object.freeze({
  already_done: "act.alreadyDone",
  already_snoozed: "act.alreadySnoozed",
  not_found: "act.notFound",
});

/**
 * A failed Done or Snooze in plain words: the plugin's refusals in its own sentences, anything
 * else as the host words it (`errorText`), else by its message.
 */
export function actionErrorText(error, t, errorText) {
  const s = scoped(t);
  const code = error?.code;
  if (typeof code === "string" && Object.hasOwn(OWN_CODES, code)) return s(OWN_CODES[code]);
  if (typeof errorText === "function") return errorText(error);
  const message = error?.message;
  return typeof message === "string" && message !== "" ? message : s("act.failed");
}

/** The key of one occurrence in one Session: the places showing it share its controls' state. */
export function occurrenceKey(sessionId, scheduleId, occurrenceAt) {
  return `${sessionId ?? ""}\u0000${scheduleId}@${instantMs(occurrenceAt)}`;
}

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

function controlButton(doc, text, className, focusKey) {
  const element = textElement(doc, "button", text, className);
  element.setAttribute("type", "button");
  element.setAttribute("data-focus-key", focusKey);
  return element;
}

function actionParts(shown, ui) {
  const { spec } = shown;
  const doc = spec.document;
  const s = scoped(spec.t);
  const tag = tagOf(spec);
  const parts = [];
  const row = doc.createElement("div");
  row.className = "schedule-occurrence-actions";
  const done = controlButton(doc, s("act.done"), "schedule-occurrence-done", `done:${tag}`);
  done.setAttribute("aria-label", s("act.doneLabel", { prompt: spec.name }));
  done.disabled = ui.running;
  done.addEventListener("click", () => run(shown, ACK_TOOL, {}, "done"));
  const snooze = controlButton(doc, s("act.snooze"), "schedule-occurrence-snooze", `snooze:${tag}`);
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
    const item = controlButton(doc, s(choice.label), "schedule-snooze-choice", key);
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

// ---- where a delivery was sent

/** How long a card waits before reading the notices again while one is still being sent. */
export const NOTICE_RETRY_MS = Object.freeze([2_000, 4_000, 8_000, 16_000, 30_000]);

const NOTICE_KEY = /^(.+)@([^@#]+)(?:#([0-9]+))?$/;

/**
 * The notices of one delivered occurrence among a Session's (each `key` is
 * `<sessionId>/schedule/<id>@<occurrenceAt>[#n]/<channel>`): the first notice per channel, as
 * `{channel, label, status, error}` (re-notifications, `#n`, are left out; so is anything
 * malformed).
 */
export function occurrenceNotices(notices, sessionId, scheduleId, occurrenceAt) {
  if (!Array.isArray(notices)) return [];
  const prefix = `${sessionId}/schedule/`;
  const out = [];
  for (const notice of notices) {
    if (notice === null || typeof notice !== "object") continue;
    const { key, channel, label, status, error } = notice;
    if (typeof key !== "string" || typeof channel !== "string" || channel === "") continue;
    if (!key.startsWith(prefix) || !key.endsWith(`/${channel}`)) continue;
    const match = NOTICE_KEY.exec(key.slice(prefix.length, key.length - channel.length - 1));
    if (match === null || match[3] !== undefined) continue;
    if (match[1] !== scheduleId || !sameInstant(match[2], occurrenceAt)) continue;
    out.push({
      channel,
      label: typeof label === "string" && label !== "" ? label : channel,
      status: typeof status === "string" ? status : "",
      error: typeof error === "string" && error !== "" ? error : null,
    });
  }
  return out;
}

const SENT_GROUPS = [
  [["delivered"], "sent.to", "sent"],
  [["pending", "sending"], "sent.sending", "sending"],
  [["unknown"], "sent.unknown", "unknown"],
];

/**
 * Where a delivery was sent, one line each (`[{kind, text}]`): "Sent to A, B", "Sending to C…",
 * "Not sure it reached D", then "Could not reach E: timeout" for each failure (the error as it
 * was given). A withdrawn notice (done or snoozed before it went) says nothing.
 */
export function noticeLines(entries, t) {
  const s = scoped(t);
  const lines = [];
  for (const [statuses, key, kind] of SENT_GROUPS) {
    const labels = [
      ...new Set(entries.filter((e) => statuses.includes(e.status)).map((e) => e.label)),
    ];
    if (labels.length === 0) continue;
    lines.push({ kind, text: s(key, { labels: labels.join(s("sent.list")) }) });
  }
  for (const entry of entries) {
    if (entry.status !== "failed") continue;
    const text =
      entry.error === null
        ? s("sent.failedBare", { label: entry.label })
        : s("sent.failed", { label: entry.label, error: entry.error });
    lines.push({ kind: "failed", text });
  }
  return lines;
}

function stillSending(entries) {
  return entries.some((entry) => entry.status === "pending" || entry.status === "sending");
}

function payloadNotices(payload) {
  if (Array.isArray(payload)) return payload;
  return Array.isArray(payload?.notices) ? payload.notices : [];
}

/**
 * The notices of the Sessions whose cards are shown. A Session's are read (once for all the
 * cards shown at a time) when a card shows a delivery no read has covered yet, then again after
 * each of `retries` (ms) while a shown card's notice is still being sent, and no more: a read
 * that fails is not repeated. `setTimer(callback, ms)` schedules a read.
 */
export class NoticeWatch {
  constructor({
    setTimer = (callback, ms) => globalThis.setTimeout(callback, ms),
    retries = NOTICE_RETRY_MS,
  } = {}) {
    this._setTimer = setTimer;
    this._retries = retries;
    this._sessions = new Map();
  }

  /**
   * Show where occurrence `scheduleId`/`occurrenceAt` of `sessionId` was sent through
   * `update(entries)` after every read (`occurrenceNotices`), while `root` is in the page;
   * `load()` reads the Session's notices. Returns what the last read said (null: none yet).
   */
  watch({ sessionId, scheduleId, occurrenceAt, load, update, root }) {
    let session = this._sessions.get(sessionId);
    if (session === undefined) {
      session = {
        id: sessionId,
        notices: null,
        load,
        cards: new Set(),
        covered: new Set(),
        queued: false,
        reading: false,
        again: false,
        timer: false,
        tries: 0,
      };
      this._sessions.set(sessionId, session);
    }
    session.load = load;
    const card = { scheduleId, occurrenceAt, update, root };
    session.cards.add(card);
    if (!session.covered.has(occurrenceKey(sessionId, scheduleId, occurrenceAt))) {
      session.tries = 0;
      this._queue(session);
    }
    if (session.notices === null) return null;
    return occurrenceNotices(session.notices, sessionId, scheduleId, occurrenceAt);
  }

  _queue(session) {
    if (session.reading) {
      session.again = true;
      return;
    }
    if (session.queued) return;
    session.queued = true;
    // After the cards rendered in this task joined: one read for all of them.
    queueMicrotask(() => {
      session.queued = false;
      this._read(session);
    });
  }

  async _read(session) {
    session.reading = true;
    const asked = [...session.cards];
    try {
      session.notices = payloadNotices(await session.load());
    } catch {
      // Quiet: the cards keep saying what the last read said.
    }
    session.reading = false;
    for (const card of asked) {
      session.covered.add(occurrenceKey(session.id, card.scheduleId, card.occurrenceAt));
    }
    let sending = false;
    for (const card of [...session.cards]) {
      if (card.root.isConnected === false) {
        session.cards.delete(card);
        continue;
      }
      const { scheduleId, occurrenceAt } = card;
      const entries = occurrenceNotices(session.notices, session.id, scheduleId, occurrenceAt);
      card.update(session.notices === null ? null : entries);
      sending ||= stillSending(entries);
    }
    if (session.again) {
      session.again = false;
      this._queue(session);
    } else if (sending && !session.timer && session.tries < this._retries.length) {
      session.timer = true;
      this._setTimer(() => {
        session.timer = false;
        this._queue(session);
      }, this._retries[session.tries]);
      session.tries += 1;
    }
  }
}

let noticeWatch = new NoticeWatch();

/** The page's NoticeWatch (tests give one of their own); returns the one it replaces. */
export function useNoticeWatch(watch) {
  const previous = noticeWatch;
  noticeWatch = watch;
  return previous;
}

/**
 * The card's lines about where it was sent ("Sent to ntfy"), or "Delivered in this session
 * only" while there are none; kept current by the NoticeWatch.
 */
function cardNotices(ctx, model, doc) {
  const box = doc.createElement("div");
  box.className = "schedule-card-notices";
  const show = (entries) => {
    const lines = entries === null ? [] : noticeLines(entries, ctx.t);
    if (lines.length === 0) {
      box.replaceChildren(textElement(doc, "p", model.delivery, "schedule-card-delivery"));
      return;
    }
    box.replaceChildren(
      ...lines.map((line) => {
        const element = textElement(doc, "p", line.text, "schedule-card-sent");
        element.setAttribute("data-notice", line.kind);
        return element;
      }),
    );
  };
  const known =
    typeof ctx.notices === "function" && typeof ctx.sessionId === "string"
      ? noticeWatch.watch({
          sessionId: ctx.sessionId,
          scheduleId: model.scheduleId,
          occurrenceAt: model.occurrenceAt,
          load: ctx.notices,
          update: show,
          root: box,
        })
      : null;
  show(known);
  return box;
}

/** Plugin entry point: registers the card; returns the unregister function. */
export default function register(registry) {
  return registry.register(EVENT_TYPE, renderReminderCard);
}
