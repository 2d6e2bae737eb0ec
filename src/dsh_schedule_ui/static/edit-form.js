// ui-schedule: the Reminders panel's Edit form, a small form over one pending reminder. This
// module owns its DOM (the text, the title, the timing its rule allows, the days of a weekly
// rule), what it keeps across the host's rebuilds of the panel (what was typed, a save in
// flight, its notice: in the panel's state, panel-state.js), the focus as it opens and closes,
// and Save, which runs `schedule_update` as the user's action through the `runTool` it is given
// with `expected` = the record the form showed. Text reaches the DOM only as text nodes.

import { buttonElement, textElement } from "./schedule-dom.js";
import { reminderName, scoped } from "./schedule-words.js";
import {
  cancelKey,
  editShape,
  editsOf,
  formProblem,
  formValues,
  TITLE_MAX_CHARS,
  UPDATE_TOOL,
  updateArguments,
  updateErrorText,
  updateOutcome,
} from "./panel-state.js";

/** A labelled input: `<label><span>Label</span><input></label>`. */
function field(doc, label, input, className = "schedule-edit-field") {
  const wrap = doc.createElement("label");
  wrap.className = className;
  wrap.appendChild(textElement(doc, "span", label, "schedule-edit-label"));
  wrap.appendChild(input);
  return wrap;
}

export function editForm(ctx, state, live, edit) {
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
  const close = buttonElement(doc, s("edit.close"), "schedule-edit-close", `edit-close:${id}`);
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

export function openEdit(ctx, state, scheduleId) {
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

/** A helper module of the plugin: it registers nothing (the modules that import it do). */
export default function register() {}
