// ui-schedule: the plugin's text-only DOM builders. Everything the Session supplies reaches the
// DOM through these as one text node: an element with text, a button with its focus key (the
// focus follows the host's rebuilds), and a `<time>` with its exact UTC instant as the tooltip.

import { instantMs } from "./schedule-words.js";

/** A text-only element: `content` always becomes one text node. */
export function textElement(doc, tag, content, className) {
  const element = doc.createElement(tag);
  if (className) element.className = className;
  element.appendChild(doc.createTextNode(String(content)));
  return element;
}

/** A text-only `<button type="button">` with its `data-focus-key` (the focus follows rebuilds). */
export function buttonElement(doc, text, className, focusKey) {
  const element = textElement(doc, "button", text, className);
  element.setAttribute("type", "button");
  element.setAttribute("data-focus-key", focusKey);
  return element;
}

/** A `<time>` for an ISO instant with its exact UTC instant as the tooltip. */
export function timeElement(doc, iso, text, time, className) {
  const element = textElement(doc, "time", text, className);
  element.setAttribute("datetime", iso);
  element.setAttribute("title", time.utc(instantMs(iso)));
  return element;
}

/** A helper module of the plugin: it registers nothing (the modules that import it do). */
export default function register() {}
