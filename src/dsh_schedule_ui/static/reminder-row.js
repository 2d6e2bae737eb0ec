// ui-schedule: the reminder card for presented `schedule/change` dispatches (its renderer, the
// plugin's entry for that event type). The reminder's text is the largest thing on it, beside a
// bell; the due time reads as people read times and a delivery more than a minute late carries
// a badge with its reason when known. The card is marked `data-notify` so the host can raise a
// notification when it arrives in a hidden tab, and offers the host to fold into it
// (`data-fold-key`: one reminder, `data-fold-at`: this occurrence; `data-fold-slot`): the
// follow-up line, the assistant's echo and repeated deliveries. A reminder with a title shows it
// as the largest thing, its text below; one that repeats on a calendar rule says the rule
// ("Every Monday at 10:00") above which occurrence this was ("Due today 10:00", the dispatch's
// `occurrenceAt`), when the view carries the rule.
//
// Each card is one delivered occurrence (its reminder's id and `occurrenceAt`, the instant the
// dispatch delivered, as the Schedule plugin keys it). This module owns the card's model and its
// DOM; it shows the occurrence's Done and Snooze ▾ (occurrence-controls.js), what became of it
// from the Session's events (occurrence.js: an ack of it, a reminder created with `snoozedFrom`
// it, so a Done from the panel, a notification or another tab shows here too), and where the
// reminder was sent outside the page ("Sent to ntfy") from the Session's notices, read by the
// page's NoticeWatch (sent-notices.js). Everything the Session supplies reaches the DOM only as
// text nodes.

import { textElement, timeElement } from "./schedule-dom.js";
import {
  instantMs,
  latenessText,
  reminderName,
  ruleOf,
  ruleWords,
  scoped,
} from "./schedule-words.js";
import { EVENT_TYPE, occurrenceKey, occurrenceState } from "./occurrence.js";
import { occurrenceControls } from "./occurrence-controls.js";
import { NoticeWatch, noticeLines } from "./sent-notices.js";

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
