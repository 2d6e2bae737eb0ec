// ui-schedule: the Reminders panel over the `schedule.reminders` Session view. Pending reminders
// soonest first, each by its title (else its text), its rule in words for a calendar reminder
// ("Every weekday at 09:00", "每周一 10:00") and a live countdown (`<time data-dsh-relative>`,
// refreshed by the host) to its next occurrence; Edit, a small form that runs `schedule_update`
// as the user's action with `expected` = the record the form showed; and Cancel, which runs
// `schedule_delete`. Then the latest deliveries with their lateness, each with Done and Snooze ▾
// (the reminder card's controls: `schedule_ack`, `schedule_snooze`) until the view says it was
// done ("Done ✓") or snoozed ("Snoozed until 18:10"). On a phone the host shows its
// one summary line ("2 reminders · next in 9 min", `panelSummary`) until tapped. The view comes
// from the committed log, so the panel only changes when a flush made the change durable: it and
// the transcript agree. A Cancel in flight or one that failed, and an open Edit form (what was
// typed, a save in flight, its notice), keep their state across the host's rebuilds of the panel.
// It also words the pending reminders that go with a deleted Session (`deleteNote`).
// Everything the Session supplies reaches the DOM only as text nodes.

import {
  clockText,
  instantMs,
  isoWeekdays,
  latenessText,
  reminderName,
  ruleOf,
  ruleWords,
  scoped,
  textElement,
  timeElement,
} from "./schedule-words.js";
import { itemState, occurrenceKey } from "./occurrence.js";
import { occurrenceControls } from "./occurrence-controls.js";

export const VIEW_NAME = "schedule.reminders";
export const DELETE_TOOL = "schedule_delete";
export const UPDATE_TOOL = "schedule_update";
/** The longest title `schedule_update` accepts. */
export const TITLE_MAX_CHARS = 120;

const CLOCK = /^([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,3}))?$/;

function nonEmptyString(value) {
  return typeof value === "string" && value !== "";
}

function positiveInteger(value) {
  return Number.isSafeInteger(value) && value > 0;
}

function activeItem(item) {
  if (item === null || typeof item !== "object") return null;
  const { scheduleId, prompt, kind, nextAt, everySeconds, afterSeconds } = item;
  if (!nonEmptyString(scheduleId) || typeof prompt !== "string") return null;
  const due = instantMs(nextAt);
  if (due === null) return null;
  const out = { scheduleId, prompt, kind: typeof kind === "string" ? kind : "after", nextAt, due };
  if (typeof everySeconds === "number" && everySeconds > 0) out.everySeconds = everySeconds;
  if (positiveInteger(afterSeconds)) out.afterSeconds = afterSeconds;
  if (nonEmptyString(item.title)) out.title = item.title;
  if (typeof item.time === "string" && CLOCK.test(item.time)) out.time = item.time;
  if (nonEmptyString(item.timeZone)) out.timeZone = item.timeZone;
  const weekdays = isoWeekdays(item.weekdays);
  if (weekdays !== null) out.weekdays = weekdays;
  if (nonEmptyString(item.expression)) out.expression = item.expression;
  return out;
}

function recentItem(item) {
  if (item === null || typeof item !== "object") return null;
  const { scheduleId, prompt, occurrenceAt, deliveredAt, lateMs, lateReason } = item;
  if (!nonEmptyString(scheduleId) || typeof prompt !== "string") return null;
  if (instantMs(occurrenceAt) === null || instantMs(deliveredAt) === null) return null;
  const out = {
    scheduleId,
    prompt,
    occurrenceAt,
    deliveredAt,
    lateMs: typeof lateMs === "number" && Number.isFinite(lateMs) ? lateMs : 0,
    lateReason: lateReason === "busy" || lateReason === "offline" ? lateReason : null,
  };
  if (nonEmptyString(item.title)) out.title = item.title;
  if (item.done === true) out.done = true;
  if (instantMs(item.snoozedUntil) !== null) out.snoozedUntil = item.snoozedUntil;
  return out;
}

/** The panel's data from a (possibly malformed) view: `{active, recent}`, bad items dropped. */
export function panelState(view) {
  const pick = (list, make) =>
    Array.isArray(list) ? list.map(make).filter((item) => item !== null) : [];
  const ok = view !== null && typeof view === "object";
  return {
    active: ok ? pick(view.active, activeItem) : [],
    recent: ok ? pick(view.recent, recentItem) : [],
  };
}

/**
 * The record a pending item shows, in the record shape of a `schedule/change` create (`{id,
 * kind, prompt, <the kind's fields>, scheduledAt, title?}`): what an Edit sends as `expected`.
 */
export function recordOf(item) {
  const record = { id: item.scheduleId, kind: item.kind, prompt: item.prompt };
  for (const field of RECORD_FIELDS) {
    if (item[field] !== undefined) record[field] = item[field];
  }
  record.scheduledAt = item.nextAt;
  if (item.title !== undefined) record.title = item.title;
  return record;
}

const RECORD_FIELDS = ["afterSeconds", "everySeconds", "time", "timeZone", "weekdays", "expression"];

function sameRecord(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What a Cancel's answer means: `"gone"` (deleted, or already gone) or `{error}` to show. */
export function cancelOutcome(value) {
  if (value !== null && typeof value === "object") {
    if (value.deleted === true || value.code === "schedule_not_found") return "gone";
    if (typeof value.code === "string") return { error: value };
  }
  return { error: { code: "unknown" } };
}

/**
 * What an Edit's answer means: `"saved"` (the record view), `"unchanged"` (`updated: false`
 * without a code: nothing to write), `"conflict"` (the reminder changed since the form showed
 * it), or `{error}` to show.
 */
export function updateOutcome(value) {
  if (value !== null && typeof value === "object") {
    if (value.code === "schedule_conflict") return "conflict";
    if (typeof value.code === "string") return { error: value };
    if (value.updated === false) return "unchanged";
    if (nonEmptyString(value.id)) return "saved";
  }
  return { error: { code: "unknown" } };
}

/** An Edit's failure in plain words (the form's own sentences for the codes that need them). */
export function updateErrorText(error, ctx) {
  const s = scoped(ctx.t);
  const own = {
    schedule_not_found: "edit.gone",
    schedule_ended: "edit.ended",
    invalid_rule: "edit.badRule",
    invalid_selector: "edit.badRule",
  }[error?.code];
  return s("edit.failed", { reason: own === undefined ? ctx.errorText(error) : s(own) });
}

// ---- the Edit form's fields

/** How an item's timing is edited: "at" (date and time), "every", "daily", "weekly",
 * "cronTime" (a cron rule at one time of day: that time), "cron" (the expression), or null. */
export function editShape(item) {
  const calendar = item.timeZone !== undefined;
  switch (item.kind) {
    case "after":
    case "at":
      return "at";
    case "every":
      return item.everySeconds !== undefined ? "every" : null;
    case "daily":
      return calendar && item.time !== undefined ? "daily" : null;
    case "weekly":
      return calendar && item.time !== undefined && item.weekdays !== undefined ? "weekly" : null;
    case "cron":
      if (!calendar || item.expression === undefined) return null;
      return /^[0-9]+ [0-9]+ /.test(item.expression) ? "cronTime" : "cron";
    default:
      return null;
  }
}

/** The `YYYY-MM-DD` date and `HH:MM` time of `ms` on the wall clock of `timeZone`. */
export function wallClock(ms, timeZone) {
  const parts = {};
  const format = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  return { date, time: `${parts.hour}:${parts.minute}` };
}

/** A rule's `HH:mm:ss.SSS` as a time input shows it: `HH:MM`, with the seconds when not zero. */
function inputClock(time) {
  const shown = clockText(time);
  return shown.length > 5 ? time.slice(0, shown.length > 8 ? 12 : 8) : shown;
}

/** A time input's value as a rule's time: `HH:MM` gains `:00`. */
function ruleClock(value) {
  return value.length === 5 ? `${value}:00` : value;
}

/** The form's starting values for `item` (strings; `weekdays` an array). */
export function formValues(item, ctx) {
  const values = { prompt: item.prompt };
  if (item.title !== undefined) values.title = item.title;
  switch (editShape(item)) {
    case "at":
      Object.assign(values, wallClock(item.due, ctx.time.timeZone));
      break;
    case "every":
      values.every = String(item.everySeconds / 60);
      break;
    case "weekly":
      values.weekdays = item.weekdays;
    // falls through: a weekly rule has a time too
    case "daily":
      values.time = inputClock(item.time);
      break;
    case "cronTime": {
      const [minute, hour] = item.expression.split(" ").map(Number);
      values.time = `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
      break;
    }
    case "cron":
      values.expression = item.expression;
      break;
  }
  return values;
}

const DATE_INPUT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const TIME_INPUT = /^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,3})?)?$/;

/** The first thing wrong with `values` (a message key), or null. */
export function formProblem(item, values) {
  if (values.prompt.trim() === "") return "edit.needText";
  if (item.title !== undefined) {
    const title = values.title.trim();
    if (title === "" || title.length > TITLE_MAX_CHARS) return "edit.needTitle";
  }
  switch (editShape(item)) {
    case "at":
      return DATE_INPUT.test(values.date) && TIME_INPUT.test(values.time) ? null : "edit.needDate";
    case "every": {
      const minutes = Number(values.every);
      return values.every.trim() !== "" && Number.isFinite(minutes) && minutes > 0
        ? null
        : "edit.needEvery";
    }
    case "weekly":
      if (values.weekdays.length === 0) return "edit.needDays";
    // falls through: a weekly rule has a time too
    case "daily":
    case "cronTime":
      return TIME_INPUT.test(values.time) ? null : "edit.needTime";
    case "cron":
      return values.expression.trim().split(/\s+/).length === 5 ? null : "edit.needExpression";
    default:
      return null;
  }
}

/**
 * The `schedule_update` arguments for what changed between `initial` and `values`: `{id,
 * prompt?, title?, <one selector>?, expected}`, or null when nothing did. A rule keeps its kind
 * and zone; a one-time reminder's new time is a local `at` in the browser's zone. `expected` is
 * the record the form showed (left out for an after reminder whose view lacks afterSeconds).
 */
export function updateArguments(item, initial, values, ctx) {
  const args = { id: item.scheduleId };
  const prompt = values.prompt.trim();
  if (prompt !== item.prompt) args.prompt = prompt;
  const title = item.title === undefined ? undefined : values.title.trim();
  if (title !== item.title) args.title = title;
  const shape = editShape(item);
  const ruleFields = ["date", "time", "every", "weekdays", "expression"];
  const changed = ruleFields.some((field) => String(values[field]) !== String(initial[field]));
  if (changed) {
    const zone = item.timeZone;
    if (shape === "at") {
      const time_zone = ctx.time.timeZone ?? "UTC";
      args.at = { date: values.date, time: ruleClock(values.time), time_zone };
    } else if (shape === "every") {
      args.every_seconds = Math.round(Number(values.every) * 60);
    } else if (shape === "daily") {
      args.daily = { time: ruleClock(values.time), time_zone: zone };
    } else if (shape === "weekly") {
      const weekdays = [...values.weekdays].sort((a, b) => a - b);
      args.weekly = { time: ruleClock(values.time), time_zone: zone, weekdays };
    } else if (shape === "cronTime") {
      const [hour, minute] = values.time.split(":").map(Number);
      const rest = item.expression.split(" ").slice(2).join(" ");
      args.cron = { expression: `${minute} ${hour} ${rest}`, time_zone: zone };
    } else {
      args.cron = { expression: values.expression.trim().split(/\s+/).join(" "), time_zone: zone };
    }
  }
  if (Object.keys(args).length === 1) return null;
  // An after reminder's record holds its afterSeconds: without it in the view, the record shown
  // is not the whole record, and the tool then reads the current one itself.
  if (item.kind !== "after" || item.afterSeconds !== undefined) args.expected = recordOf(item);
  return args;
}

// ---- rendering

/**
 * The panel's `render(ctx)`: `ctx` is `{view, sessionId, t, time, document, errorText, runTool,
 * refreshViews}` as the host hands it. `state` (see `createCancels`) keeps each Cancel's state
 * by Session and id (`"pending"` or `{error}`) and each open Edit form's across rebuilds; a
 * state whose reminder left the view is forgotten.
 */
export function renderPanel(ctx, state) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const { active, recent } = panelState(ctx.view);
  const shown = new Set(active.map((item) => cancelKey(ctx, item.scheduleId)));
  const prefix = cancelKey(ctx, "");
  const edits = editsOf(state);
  for (const map of [state, edits]) {
    for (const key of [...map.keys()]) {
      if (key.startsWith(prefix) && !shown.has(key)) map.delete(key);
    }
  }
  const body = doc.createElement("div");
  body.className = "schedule-panel";

  const pending = active.map((item) => activeRow(ctx, state, item));
  appendList(doc, body, [s("panel.active"), s("panel.none")], "schedule-panel-list", pending);
  const delivered = recent.map((item) => recentRow(ctx, item));
  const recentClass = "schedule-panel-list schedule-panel-recent";
  appendList(doc, body, [s("panel.recent"), s("panel.noneRecent")], recentClass, delivered);
  state.body = body;
  return body;
}

/** A heading, then the rows as a list, or the empty text when there are none. */
function appendList(doc, body, [heading, emptyText], className, rows) {
  body.appendChild(textElement(doc, "h3", heading, "schedule-panel-heading"));
  if (rows.length === 0) {
    body.appendChild(textElement(doc, "p", emptyText, "schedule-panel-empty"));
    return;
  }
  const list = doc.createElement("ul");
  list.className = className;
  for (const row of rows) list.appendChild(row);
  body.appendChild(list);
}

function cancelKey(ctx, scheduleId) {
  return `${ctx.sessionId}\u0000${scheduleId}`;
}

function editsOf(state) {
  if (!(state.edits instanceof Map)) state.edits = new Map();
  return state.edits;
}

function button(doc, text, className, focusKey) {
  const element = textElement(doc, "button", text, className);
  element.setAttribute("type", "button");
  element.setAttribute("data-focus-key", focusKey);
  return element;
}

function activeRow(ctx, state, item) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const name = reminderName(item);
  const row = doc.createElement("li");
  row.className = "schedule-panel-item";
  row.setAttribute("data-schedule-id", item.scheduleId);
  const main = doc.createElement("div");
  main.className = "schedule-panel-main";
  main.appendChild(textElement(doc, "span", name, "schedule-panel-prompt"));
  const rule = ruleWords(ruleOf(item), ctx.t, ctx.time.timeZone);
  if (rule !== null) main.appendChild(textElement(doc, "span", rule, "schedule-panel-rule"));

  const when = doc.createElement("span");
  when.className = "schedule-panel-when";
  const countdown = timeElement(doc, item.nextAt, ctx.time.when(item.due).text, ctx.time);
  countdown.setAttribute("data-dsh-relative", "");
  when.appendChild(countdown);
  if (item.everySeconds !== undefined) {
    const every = s("panel.every", { every: ctx.time.duration(item.everySeconds * 1000) });
    when.appendChild(textElement(doc, "span", ` · ${every}`, "schedule-panel-every"));
  }
  main.appendChild(when);
  row.appendChild(main);

  const key = cancelKey(ctx, item.scheduleId);
  const cancelState = state.get(key);
  const edit = editsOf(state).get(key);
  if (edit?.phase === "saved" && !sameRecord(recordOf(item), edit.saved)) {
    editsOf(state).delete(key); // the view shows the change: the form's work is done
  }
  const editing = editsOf(state).get(key);

  const actions = doc.createElement("div");
  actions.className = "schedule-panel-actions";
  if (editing === undefined) {
    const open = button(doc, s("edit.open"), "schedule-panel-edit", `edit:${item.scheduleId}`);
    open.setAttribute("aria-label", s("edit.openLabel", { prompt: name }));
    open.disabled = cancelState === "pending";
    open.addEventListener("click", () => openEdit(ctx, state, item.scheduleId));
    actions.appendChild(open);
  }
  const cancelButton = button(
    doc,
    cancelState === "pending" ? s("panel.cancelling") : s("panel.cancel"),
    "schedule-panel-cancel",
    `cancel:${item.scheduleId}`,
  );
  cancelButton.setAttribute("aria-label", s("panel.cancelLabel", { prompt: name }));
  cancelButton.disabled = cancelState === "pending";
  cancelButton.addEventListener("click", () => cancel(ctx, state, item.scheduleId));
  actions.appendChild(cancelButton);
  row.appendChild(actions);

  if (cancelState !== undefined && cancelState !== "pending") {
    const problem = textElement(
      doc,
      "p",
      s("panel.cancelFailed", { reason: ctx.errorText(cancelState.error) }),
      "schedule-panel-error",
    );
    problem.setAttribute("role", "alert");
    row.appendChild(problem);
  }
  if (editing !== undefined) row.appendChild(editForm(ctx, state, item, editing));
  return row;
}

function recentRow(ctx, item) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const row = doc.createElement("li");
  row.className = "schedule-panel-item";
  row.setAttribute("data-occurrence", `${item.scheduleId}@${item.occurrenceAt}`);
  const main = doc.createElement("div");
  main.className = "schedule-panel-main";
  main.appendChild(textElement(doc, "span", reminderName(item), "schedule-panel-prompt"));
  const when = doc.createElement("span");
  when.className = "schedule-panel-when";
  const delivered = instantMs(item.deliveredAt);
  when.appendChild(timeElement(doc, item.deliveredAt, ctx.time.absolute(delivered), ctx.time));
  const late = latenessText(item.lateMs, item.lateReason, ctx.t, ctx.time);
  when.appendChild(
    textElement(
      doc,
      "span",
      ` · ${late ?? s("panel.onTime")}`,
      late === null ? "schedule-panel-ontime" : "schedule-panel-late",
    ),
  );
  main.appendChild(when);
  row.appendChild(main);
  const controls = occurrenceControls({
    document: doc,
    t: ctx.t,
    time: ctx.time,
    place: "panel",
    key: occurrenceKey(ctx.sessionId, item.scheduleId, item.occurrenceAt),
    scheduleId: item.scheduleId,
    occurrenceAt: item.occurrenceAt,
    name: reminderName(item),
    state: () => itemState(item),
    runTool: ctx.runTool,
    errorText: ctx.errorText,
    // The view says it once the flush made it durable (pushed on the stream; asked for too).
    after: () => ctx.refreshViews?.(),
  });
  controls.classList.add("schedule-panel-occurrence");
  row.appendChild(controls);
  return row;
}

// ---- the Edit form

/** A labelled input: `<label><span>Label</span><input></label>`. */
function field(doc, label, input, className = "schedule-edit-field") {
  const wrap = doc.createElement("label");
  wrap.className = className;
  wrap.appendChild(textElement(doc, "span", label, "schedule-edit-label"));
  wrap.appendChild(input);
  return wrap;
}

function editForm(ctx, state, live, edit) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const item = edit.snapshot ?? live;
  const id = item.scheduleId;
  const busy = edit.phase !== "editing";
  const initial = formValues(item, ctx);
  const values = { ...initial, ...edit.draft };
  /** Take what was typed; the form then shows the record it was typed over until saved. */
  const keep = (name, value) => {
    if (edit.phase !== "editing") return;
    edit.snapshot ??= live;
    edit.draft[name] = value;
  };

  const form = doc.createElement("form");
  form.className = "schedule-edit";
  form.setAttribute("novalidate", "");
  form.setAttribute("aria-label", s("edit.form", { prompt: reminderName(live) }));
  if (busy) form.setAttribute("aria-busy", "true");
  if (edit.notice !== null) {
    const notice = textElement(doc, "p", edit.notice, "schedule-edit-notice");
    notice.setAttribute("role", "alert");
    form.appendChild(notice);
  }

  const input = (name, type, extra = {}) => {
    const element = doc.createElement("input");
    element.setAttribute("type", type);
    element.setAttribute("name", name);
    element.setAttribute("data-focus-key", `edit-${name}:${id}`);
    for (const [attribute, value] of Object.entries(extra)) element.setAttribute(attribute, value);
    element.value = values[name];
    element.readOnly = busy;
    element.addEventListener("input", () => keep(name, element.value));
    return element;
  };
  if (item.title !== undefined) {
    const title = input("title", "text", { maxlength: String(TITLE_MAX_CHARS) });
    form.appendChild(field(doc, s("edit.title"), title));
  }
  form.appendChild(field(doc, s("edit.text"), input("prompt", "text", { autocomplete: "off" })));

  const shape = editShape(item);
  const timing = doc.createElement("div");
  timing.className = "schedule-edit-timing";
  const secondsStep = (value) => (value.length > 5 ? { step: "1" } : {});
  if (shape === "at") {
    timing.appendChild(field(doc, s("edit.date"), input("date", "date")));
    timing.appendChild(field(doc, s("edit.time"), input("time", "time")));
  } else if (shape === "every") {
    const every = input("every", "number", { min: "1", step: "any", inputmode: "decimal" });
    timing.appendChild(field(doc, s("edit.every"), every));
  } else if (shape === "daily" || shape === "weekly" || shape === "cronTime") {
    timing.appendChild(field(doc, s("edit.time"), input("time", "time", secondsStep(values.time))));
  } else if (shape === "cron") {
    const expression = input("expression", "text", { spellcheck: "false", autocomplete: "off" });
    timing.appendChild(field(doc, s("edit.expression"), expression));
  }
  if (timing.childNodes.length > 0) form.appendChild(timing);
  if (shape === "weekly") form.appendChild(dayPicker(ctx, id, values.weekdays, busy, keep));
  if (item.timeZone !== undefined && item.timeZone !== ctx.time.timeZone) {
    const zone = s("edit.zone", { zone: item.timeZone });
    form.appendChild(textElement(doc, "p", zone, "schedule-edit-zone"));
  }

  const actions = doc.createElement("div");
  actions.className = "schedule-edit-actions";
  // The Save button has the Edit button's focus key: after a save the focus is back on Edit.
  const saveText = busy ? s("edit.saving") : s("edit.save");
  const save = textElement(doc, "button", saveText, "schedule-edit-save");
  save.setAttribute("type", "submit");
  save.setAttribute("data-focus-key", `edit:${id}`);
  if (busy) save.setAttribute("aria-disabled", "true");
  const close = button(doc, s("edit.close"), "schedule-edit-close", `edit-close:${id}`);
  close.addEventListener("click", () => closeEdit(ctx, state, id));
  actions.appendChild(save);
  actions.appendChild(close);
  form.appendChild(actions);

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    saveEdit(ctx, state, item, initial);
  });
  form.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      closeEdit(ctx, state, id);
    }
  });
  return form;
}

/** Seven labelled checkboxes, Monday first. */
function dayPicker(ctx, id, chosen, busy, keep) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const set = doc.createElement("fieldset");
  set.className = "schedule-edit-days";
  set.appendChild(textElement(doc, "legend", s("edit.days")));
  for (let day = 1; day <= 7; day += 1) {
    const box = doc.createElement("input");
    box.setAttribute("type", "checkbox");
    box.setAttribute("name", "weekdays");
    box.setAttribute("value", String(day));
    box.setAttribute("data-focus-key", `edit-day-${day}:${id}`);
    box.checked = chosen.includes(day);
    box.addEventListener("change", () => {
      if (busy) {
        box.checked = chosen.includes(day);
        return;
      }
      const others = chosen.filter((other) => other !== day);
      chosen = box.checked ? [...others, day].sort((a, b) => a - b) : others;
      keep("weekdays", chosen);
    });
    set.appendChild(field(doc, s(`edit.day.${day}`), box, "schedule-edit-day"));
  }
  return set;
}

/** Focus the element of the latest build with `key`, when there is one. */
function focusKey(state, key) {
  const keyed = state.body?.querySelectorAll("[data-focus-key]") ?? [];
  const target = [...keyed].find((node) => node.getAttribute("data-focus-key") === key);
  target?.focus();
}

function openEdit(ctx, state, scheduleId) {
  const key = cancelKey(ctx, scheduleId);
  editsOf(state).set(key, { phase: "editing", snapshot: null, draft: {}, notice: null });
  state.rerender();
  // The first field: the title when the reminder has one, else its text.
  const inputs = state.body?.querySelectorAll("input[data-focus-key]") ?? [];
  const mine = (node) => node.getAttribute("data-focus-key").endsWith(`:${scheduleId}`);
  [...inputs].find(mine)?.focus();
}

function closeEdit(ctx, state, scheduleId) {
  editsOf(state).delete(cancelKey(ctx, scheduleId));
  state.rerender();
  focusKey(state, `edit:${scheduleId}`);
}

async function saveEdit(ctx, state, item, initial) {
  const key = cancelKey(ctx, item.scheduleId);
  const edits = editsOf(state);
  const edit = edits.get(key);
  if (edit === undefined || edit.phase !== "editing") return;
  const s = scoped(ctx.t);
  const values = { ...initial, ...edit.draft };
  const problem = formProblem(item, values);
  if (problem !== null) {
    edit.notice = s(problem);
    state.rerender();
    return;
  }
  const args = updateArguments(item, initial, values, ctx);
  if (args === null) {
    closeEdit(ctx, state, item.scheduleId); // nothing changed: nothing to save
    return;
  }
  edit.phase = "saving";
  edit.notice = null;
  state.rerender();
  let outcome;
  try {
    outcome = updateOutcome(await ctx.runTool(UPDATE_TOOL, args));
  } catch (error) {
    outcome = { error };
  }
  if (edits.get(key) !== edit) return; // closed (or its reminder left) meanwhile
  if (outcome === "unchanged") {
    edits.delete(key);
    state.rerender();
    return;
  }
  if (outcome === "saved") {
    // "Saving…" until the views after the flush show the change (pushed on the stream; asked
    // for too, in case the stream is down), then the form closes.
    edit.phase = "saved";
    edit.saved = args.expected;
    state.rerender();
    try {
      await ctx.refreshViews?.();
    } finally {
      if (edits.get(key) === edit) {
        edits.delete(key);
        state.rerender();
      }
    }
    return;
  }
  edit.phase = "editing";
  if (outcome === "conflict") {
    // Show what the reminder says now: the form follows the views again (asked for at once).
    edit.snapshot = null;
    edit.draft = {};
    edit.notice = s("edit.conflict");
    state.rerender();
    ctx.refreshViews?.();
    return;
  }
  edit.notice = updateErrorText(outcome.error, ctx);
  state.rerender();
  const gone = outcome.error?.code;
  if (gone === "schedule_not_found" || gone === "schedule_ended") ctx.refreshViews?.();
}

async function cancel(ctx, cancels, scheduleId) {
  const key = cancelKey(ctx, scheduleId);
  if (cancels.get(key) === "pending") return;
  cancels.set(key, "pending");
  cancels.rerender();
  let outcome;
  try {
    outcome = cancelOutcome(await ctx.runTool(DELETE_TOOL, { id: scheduleId }));
  } catch (error) {
    outcome = { error };
  }
  if (outcome === "gone") {
    // It stays "Cancelling…" until the views after the flush drop the row (pushed on the
    // stream; asked for too, in case the stream is down).
    ctx.refreshViews?.();
    return;
  }
  cancels.set(key, outcome);
  cancels.rerender();
}

/**
 * The panel's one summary line on a phone (`summary(ctx)`): "2 reminders · next in 9 min", the
 * time a live `<time data-dsh-relative>` of the soonest; "No pending reminders" when none.
 */
export function panelSummary(ctx) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const active = panelState(ctx.view).active;
  const line = doc.createElement("span");
  line.className = "schedule-panel-summary";
  if (active.length === 0) {
    line.appendChild(doc.createTextNode(s("panel.summaryNone")));
    return line;
  }
  const next = active.reduce((soonest, item) => (item.due < soonest.due ? item : soonest));
  const count = active.length;
  const words = count === 1 ? s("panel.summaryOne") : s("panel.summary", { count });
  line.appendChild(doc.createTextNode(`${words} `));
  const countdown = timeElement(doc, next.nextAt, ctx.time.when(next.due).text, ctx.time);
  countdown.setAttribute("data-dsh-relative", "");
  line.appendChild(countdown);
  return line;
}

/**
 * What goes with a deleted Session whose list row counts `count` pending reminders, for the
 * host's confirmation: "Its 2 pending reminders will be deleted too."
 */
export function deleteNote({ count, t }) {
  const s = scoped(t);
  return count === 1 ? s("panel.deleteNoteOne") : s("panel.deleteNote", { count });
}

/**
 * The panel's state on one page: a Map of Cancel states with `edits` (the open Edit forms, by
 * the same keys) and `rerender()`, which rebuilds the panel.
 */
export function createCancels(rerender) {
  const cancels = new Map();
  cancels.edits = new Map();
  cancels.rerender = rerender;
  return cancels;
}

/** Plugin entry point: registers the panel; returns the unregister function. */
export default function register(registry) {
  let latest = null;
  const cancels = createCancels(() => {
    if (latest !== null) latest();
  });
  const unregister = registry.registerPanel(VIEW_NAME, {
    title: (t) => t("schedule.panel.title"),
    summary: panelSummary,
    deleteNote,
    render(ctx) {
      latest = ctx.rerender ?? null;
      return renderPanel(ctx, cancels);
    },
  });
  return () => {
    latest = null;
    unregister();
  };
}
