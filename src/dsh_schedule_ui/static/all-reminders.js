// ui-schedule: the Schedule's boards, host-wide lists over the rows the Schedule plugin posts for
// every Session. "All reminders" (`schedule.pending`): every pending reminder on the host,
// soonest first, each with its text (cut after two lines; its time always shows), when it is
// due as people read times ("today 17:00 · in 3 h"), "every 30 min" for a repeating one or its
// rule in words for a calendar one ("Every weekday at 09:00"; a row shows its title when it has
// one), and
// Cancel, the same user action the Reminders panel runs (`schedule_delete` on the row's
// Session); its first rows are the start page's "Coming up". `schedule.delivered`: what was
// delivered while the person was away ("While you were away: 3 reminders"), each with what
// became of it ("Done ✓", "Snoozed until 18:10", from the row's `done` / `snoozedUntil`) and,
// when the host gives a row `runTool`, Done and Snooze ▾ (the reminder card's controls). The
// host adds each row's Session link. Everything the Session supplies reaches the DOM only as
// text nodes.

import { itemState, occurrenceKey } from "./occurrence.js";
import { occurrenceControls } from "./occurrence-controls.js";
import { cancelOutcome, DELETE_TOOL } from "./panel-state.js";
import { textElement } from "./schedule-dom.js";
import { instantMs, ruleOf, ruleWords, scoped } from "./schedule-words.js";

export const PLUGIN = "schedule";
export const PENDING_BOARD = "schedule.pending";
export const DELIVERED_BOARD = "schedule.delivered";
/** Rows the start page's "Coming up" shows. */
export const COMING_UP = 5;

/**
 * A board row's reminder: `{text, everySeconds?, rule?}` from its data (`text`: its `title`
 * when it has one, else its `text`; `rule`: a calendar reminder's `rule`, `{kind, time,
 * timeZone, weekdays?}` or `{kind, expression, timeZone}`; malformed parts dropped).
 */
export function rowReminder(row) {
  const data = row?.data;
  const ok = data !== null && typeof data === "object";
  let text = ok && typeof data.text === "string" ? data.text : "";
  if (ok && typeof data.title === "string" && data.title !== "") text = data.title;
  const every = ok ? data.everySeconds : undefined;
  const out = { text };
  if (Number.isSafeInteger(every) && every > 0) out.everySeconds = every;
  const rule = ok ? ruleOf(data.rule) : null;
  if (rule !== null && ["daily", "weekly", "cron"].includes(rule.kind)) out.rule = rule;
  return out;
}

function timeNode(doc, ms, text, time, relative) {
  const node = textElement(doc, "time", text);
  node.setAttribute("datetime", new Date(ms).toISOString());
  node.setAttribute("title", time.utc(ms));
  if (relative) node.setAttribute("data-dsh-relative", "always");
  return node;
}

/**
 * The delivered occurrence a row stands for (`{scheduleId, occurrenceAt}` from its data's `id`
 * and `occurrenceAt`), or null.
 */
export function rowOccurrence(row) {
  const data = row?.data;
  if (data === null || typeof data !== "object") return null;
  const { id, occurrenceAt } = data;
  if (typeof id !== "string" || id === "" || instantMs(occurrenceAt) === null) return null;
  return { scheduleId: id, occurrenceAt };
}

/**
 * One row's reminder (`ctx`: `{row, t, time, document, runTool?}` as the host hands it): its
 * text, then its time, absolute and relative (both kept current by the host), and how often it
 * repeats; a delivered one then says what became of it, with Done and Snooze ▾ when the host
 * gives `runTool` (the user's action on the row's Session).
 */
export function renderRow(ctx) {
  const { row, t, time, document: doc } = ctx;
  const s = scoped(t);
  const { text, everySeconds, rule } = rowReminder(row);
  const body = doc.createElement("div");
  body.className = "schedule-board-item";
  body.appendChild(textElement(doc, "span", text, "schedule-board-text"));
  const when = doc.createElement("span");
  when.className = "schedule-board-when";
  when.appendChild(timeNode(doc, row.atMs, time.absolute(row.atMs), time, false));
  when.appendChild(doc.createTextNode(" · "));
  when.appendChild(timeNode(doc, row.atMs, time.relative(row.atMs), time, true));
  if (everySeconds !== undefined) {
    const every = s("panel.every", { every: time.duration(everySeconds * 1000) });
    when.appendChild(textElement(doc, "span", ` · ${every}`, "schedule-board-every"));
  }
  const words = rule === undefined ? null : ruleWords(rule, t, time.timeZone);
  if (words !== null) {
    when.appendChild(textElement(doc, "span", ` · ${words}`, "schedule-board-rule"));
  }
  body.appendChild(when);
  const occurrence = row.kind === "delivered" ? rowOccurrence(row) : null;
  if (occurrence !== null) {
    const controls = occurrenceControls({
      document: doc,
      t,
      time,
      place: "board",
      key: occurrenceKey(row.sessionId, occurrence.scheduleId, occurrence.occurrenceAt),
      ...occurrence,
      name: text,
      state: () => itemState(row.data),
      runTool: ctx.runTool,
      errorText: ctx.errorText,
    });
    controls.classList.add("schedule-board-occurrence");
    body.appendChild(controls);
  }
  return body;
}

/** Cancel on a pending row: `schedule_delete` of its reminder, as the user's action. */
export function cancelAction({ row, t }) {
  const s = scoped(t);
  return {
    label: s("panel.cancel"),
    busyLabel: s("panel.cancelling"),
    description: s("panel.cancelLabel", { prompt: rowReminder(row).text }),
    tool: DELETE_TOOL,
    arguments: { id: row.key },
  };
}

/** What a Cancel's value means to the board: the row goes ("done"), or `{error}`. */
export function cancelDone(value) {
  const outcome = cancelOutcome(value);
  return outcome === "gone" ? "done" : outcome;
}

/** Plugin entry point: registers both boards; returns the unregister function. */
export default function register(registry) {
  const drops = [
    registry.registerBoard(PENDING_BOARD, {
      plugin: PLUGIN,
      kind: "pending",
      title: (t) => t("schedule.board.title"),
      empty: (t) => t("schedule.board.empty"),
      home: { title: (t) => t("schedule.board.comingUp"), limit: COMING_UP },
      row: renderRow,
      action: cancelAction,
      outcome: cancelDone,
      failed: ({ reason, t }) => t("schedule.panel.cancelFailed", { reason }),
    }),
    registry.registerBoard(DELIVERED_BOARD, {
      plugin: PLUGIN,
      kind: "delivered",
      away: {
        title: ({ count, t }) =>
          count === 1 ? t("schedule.board.awayOne") : t("schedule.board.away", { count }),
      },
      row: renderRow,
    }),
  ];
  return () => {
    for (const drop of drops) drop();
  };
}
