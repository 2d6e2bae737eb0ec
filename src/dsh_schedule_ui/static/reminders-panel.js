// ui-schedule: the Reminders panel over the `schedule.reminders` Session view (the plugin's
// entry for that panel). Pending reminders soonest first, each by its title (else its text), its
// rule in words for a calendar reminder ("Every weekday at 09:00", "每周一 10:00") and a live
// countdown (`<time data-dsh-relative>`, refreshed by the host) to its next occurrence; Edit
// (edit-form.js: a small form that runs `schedule_update` as the user's action); and Cancel,
// which runs `schedule_delete`. Then the latest deliveries with their lateness, each with Done
// and Snooze ▾ (the reminder card's controls, occurrence-controls.js) until the view says it was
// done ("Done ✓") or snoozed ("Snoozed until 18:10"). On a phone the host shows its one summary
// line ("2 reminders · next in 9 min", `panelSummary`) until tapped. The view comes from the
// committed log, so the panel only changes when a flush made the change durable: it and the
// transcript agree. This module owns the panel's DOM and its Cancel; what the view says and the
// state kept across the host's rebuilds (a Cancel in flight or one that failed, an open Edit
// form) are plain data in panel-state.js. It also words the pending reminders that go with a
// deleted Session (`deleteNote`). Everything the Session supplies reaches the DOM only as text
// nodes.

import { buttonElement, textElement, timeElement } from "./schedule-dom.js";
import {
  instantMs,
  latenessText,
  reminderName,
  ruleOf,
  ruleWords,
  scoped,
} from "./schedule-words.js";
import { itemState, occurrenceKey } from "./occurrence.js";
import { occurrenceControls } from "./occurrence-controls.js";
import { editForm, openEdit } from "./edit-form.js";
import {
  cancelKey,
  cancelOutcome,
  createCancels,
  DELETE_TOOL,
  editsOf,
  panelState,
  recordOf,
  sameRecord,
  VIEW_NAME,
} from "./panel-state.js";

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
    const open = buttonElement(doc, s("edit.open"), "schedule-panel-edit", `edit:${item.scheduleId}`);
    open.setAttribute("aria-label", s("edit.openLabel", { prompt: name }));
    open.disabled = cancelState === "pending";
    open.addEventListener("click", () => openEdit(ctx, state, item.scheduleId));
    actions.appendChild(open);
  }
  const cancelButton = buttonElement(
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
