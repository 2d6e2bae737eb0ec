// ui-schedule: the Reminders panel over the `schedule.reminders` Session view. Pending reminders
// soonest first, each with a live countdown (`<time data-dsh-relative>`, refreshed by the host)
// and a Cancel button that runs `schedule_delete` as the user's action; then the latest
// deliveries with their lateness. On a phone the host shows its one summary line ("2 reminders
// · next in 9 min", `panelSummary`) until tapped. The view comes from the committed log, so the
// panel only changes when a flush made the change durable: it and the transcript agree. A Cancel
// in flight or one that failed keeps its state across the host's rebuilds of the panel. It also
// words the pending reminders that go with a deleted Session (`deleteNote`).
// Everything the Session supplies reaches the DOM only as text nodes.

import { instantMs, latenessText, scoped, textElement, timeElement } from "./schedule-words.js";

export const VIEW_NAME = "schedule.reminders";
export const DELETE_TOOL = "schedule_delete";

function nonEmptyString(value) {
  return typeof value === "string" && value !== "";
}

function activeItem(item) {
  if (item === null || typeof item !== "object") return null;
  const { scheduleId, prompt, kind, nextAt, everySeconds } = item;
  if (!nonEmptyString(scheduleId) || typeof prompt !== "string") return null;
  const due = instantMs(nextAt);
  if (due === null) return null;
  const out = { scheduleId, prompt, kind: typeof kind === "string" ? kind : "after", nextAt, due };
  if (typeof everySeconds === "number" && everySeconds > 0) out.everySeconds = everySeconds;
  return out;
}

function recentItem(item) {
  if (item === null || typeof item !== "object") return null;
  const { scheduleId, prompt, occurrenceAt, deliveredAt, lateMs, lateReason } = item;
  if (!nonEmptyString(scheduleId) || typeof prompt !== "string") return null;
  if (instantMs(occurrenceAt) === null || instantMs(deliveredAt) === null) return null;
  return {
    scheduleId,
    prompt,
    occurrenceAt,
    deliveredAt,
    lateMs: typeof lateMs === "number" && Number.isFinite(lateMs) ? lateMs : 0,
    lateReason: lateReason === "busy" || lateReason === "offline" ? lateReason : null,
  };
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

/** What a Cancel's answer means: `"gone"` (deleted, or already gone) or `{error}` to show. */
export function cancelOutcome(value) {
  if (value !== null && typeof value === "object") {
    if (value.deleted === true || value.code === "schedule_not_found") return "gone";
    if (typeof value.code === "string") return { error: value };
  }
  return { error: { code: "unknown" } };
}

/**
 * The panel's `render(ctx)`: `ctx` is `{view, sessionId, t, time, document, errorText, runTool,
 * refreshViews}` as the host hands it. `cancels` keeps each Cancel's state by Session and id
 * (`"pending"` or `{error}`) across rebuilds (see `createCancels`); a state whose reminder left
 * the view is forgotten.
 */
export function renderPanel(ctx, cancels) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const { active, recent } = panelState(ctx.view);
  const shown = new Set(active.map((item) => cancelKey(ctx, item.scheduleId)));
  const prefix = cancelKey(ctx, "");
  for (const key of [...cancels.keys()]) {
    if (key.startsWith(prefix) && !shown.has(key)) cancels.delete(key);
  }
  const body = doc.createElement("div");
  body.className = "schedule-panel";

  const pending = active.map((item) => activeRow(ctx, cancels, item));
  appendList(doc, body, [s("panel.active"), s("panel.none")], "schedule-panel-list", pending);
  const delivered = recent.map((item) => recentRow(ctx, item));
  const recentClass = "schedule-panel-list schedule-panel-recent";
  appendList(doc, body, [s("panel.recent"), s("panel.noneRecent")], recentClass, delivered);
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

function activeRow(ctx, cancels, item) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const row = doc.createElement("li");
  row.className = "schedule-panel-item";
  row.setAttribute("data-schedule-id", item.scheduleId);
  row.appendChild(textElement(doc, "span", item.prompt, "schedule-panel-prompt"));

  const when = doc.createElement("span");
  when.className = "schedule-panel-when";
  const countdown = timeElement(doc, item.nextAt, ctx.time.when(item.due).text, ctx.time);
  countdown.setAttribute("data-dsh-relative", "");
  when.appendChild(countdown);
  if (item.everySeconds !== undefined) {
    const every = s("panel.every", { every: ctx.time.duration(item.everySeconds * 1000) });
    when.appendChild(textElement(doc, "span", ` · ${every}`, "schedule-panel-every"));
  }
  row.appendChild(when);

  const key = cancelKey(ctx, item.scheduleId);
  const state = cancels.get(key);
  const button = textElement(
    doc,
    "button",
    state === "pending" ? s("panel.cancelling") : s("panel.cancel"),
    "schedule-panel-cancel",
  );
  button.setAttribute("type", "button");
  button.setAttribute("aria-label", s("panel.cancelLabel", { prompt: item.prompt }));
  button.setAttribute("data-focus-key", `cancel:${item.scheduleId}`);
  button.disabled = state === "pending";
  button.addEventListener("click", () => cancel(ctx, cancels, item.scheduleId));
  row.appendChild(button);

  if (state !== undefined && state !== "pending") {
    const problem = textElement(
      doc,
      "p",
      s("panel.cancelFailed", { reason: ctx.errorText(state.error) }),
      "schedule-panel-error",
    );
    problem.setAttribute("role", "alert");
    row.appendChild(problem);
  }
  return row;
}

function recentRow(ctx, item) {
  const doc = ctx.document;
  const s = scoped(ctx.t);
  const row = doc.createElement("li");
  row.className = "schedule-panel-item";
  row.appendChild(textElement(doc, "span", item.prompt, "schedule-panel-prompt"));
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
  row.appendChild(when);
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

/** The Cancel states of one page: a Map with `rerender()`, which rebuilds the panel. */
export function createCancels(rerender) {
  const cancels = new Map();
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
