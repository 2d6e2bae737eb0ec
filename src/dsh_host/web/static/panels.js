// dsh browser client: the panels plugins register over a Session's views (e.g. the Schedule's
// "Reminders"). Each registered panel whose view the open Session has is one
// `<section role="region">` with its heading, rebuilt on every views update and locale switch.
// A panel runs an Agent tool as the user's action through `runTool`; `rerender` rebuilds the
// panels and `refreshViews` fetches the Session's views again (for when the event stream cannot
// push them): the app passes those in, so this module only renders.
//
// On a phone (the narrow layout in app.css) a panel collapses to one summary line, a button
// with the panel's `summary(ctx)` ("2 reminders · next in 9 min"; its title when it has none)
// that opens it on tap; the panels a person opened stay open across rebuilds (this module owns
// that set). On a wide screen the summary line is not shown and the panel is always open.
//
// Focus survives a rebuild through `data-focus-key`: the element with the same key is focused
// again. When it is gone (a Cancel removed its row), the next keyed element after it in the same
// panel is focused, else the panel's heading; while it is disabled (a Cancel in flight), the
// heading holds the focus and the key is remembered for the next rebuild. Focus never leaves the
// panel because the panel changed.

import { el, els, isNearBottom, scrollToBottom } from "./dom.js";
import { describeError } from "./errors.js";
import { getLocale, t } from "./i18n.js";
import { createTime } from "./time.js";

/** The view names of the panels a person opened on a phone. */
const expanded = new Set();

/** A focus the heading holds for a keyed element that could not take it: `{panel, key, after}`. */
let held = null;

function keysOf(section) {
  return [...section.querySelectorAll("[data-focus-key]")].map((node) =>
    node.getAttribute("data-focus-key"),
  );
}

/**
 * Where the focus is in the panels before a rebuild: `{panel, key, after, summary}` (`key`: its
 * `data-focus-key`, null for an unkeyed element; `after`: the keys that follow it in its panel;
 * `summary`: it is the panel's summary line), or null when the focus is elsewhere.
 */
function focusBefore() {
  const active = document.activeElement;
  if (!active || !els.panels.contains(active)) {
    held = null;
    return null;
  }
  const section = active.closest("section[data-panel]");
  const panel = section?.getAttribute("data-panel") ?? null;
  const key = active.closest("[data-focus-key]")?.getAttribute("data-focus-key") ?? null;
  if (key === null) {
    // The heading holds the focus for a key that could not take it: keep waiting for it.
    if (held !== null && held.panel === panel && active.matches("h2")) return held;
    held = null;
    return { panel, key: null, after: [], summary: active.matches(".panel-summary") };
  }
  const keys = section === null ? [key] : keysOf(section);
  return { panel, key, after: keys.slice(keys.indexOf(key) + 1), summary: false };
}

function focusable(node) {
  const target = node?.matches("button, input, a, summary") ? node : node?.querySelector("button");
  return target && !target.disabled ? target : null;
}

/** Put the focus back after a rebuild (see the module comment). */
function restoreFocus(before) {
  held = null;
  if (before === null) return;
  const section = [...els.panels.querySelectorAll("section[data-panel]")].find(
    (node) => node.getAttribute("data-panel") === before.panel,
  );
  if (section === undefined) return;
  const byKey = (key) =>
    [...section.querySelectorAll("[data-focus-key]")].find(
      (node) => node.getAttribute("data-focus-key") === key,
    ) ?? null;
  const heading = section.querySelector("h2");
  if (before.key === null) {
    // The summary line again, else (the heading, an unkeyed control) the heading.
    (before.summary ? section.querySelector(".panel-summary") : heading)?.focus();
    return;
  }
  const again = byKey(before.key);
  if (again !== null) {
    const target = focusable(again);
    if (target !== null) {
      target.focus();
      return;
    }
    held = before; // disabled for now: the heading holds the focus until it is enabled or gone
    heading?.focus();
    return;
  }
  for (const key of before.after) {
    const target = focusable(byKey(key));
    if (target !== null) {
      target.focus();
      return;
    }
  }
  heading?.focus();
}

function summaryLine(panel, ctx, title) {
  let summary = null;
  try {
    summary = typeof panel.summary === "function" ? panel.summary(ctx) : null;
  } catch (error) {
    console.warn("dsh: a panel summary failed", error);
  }
  const button = el("button", "panel-summary");
  button.type = "button";
  button.setAttribute("data-testid", "panel-summary");
  if (summary !== null && typeof summary === "object" && typeof summary.nodeType === "number") {
    button.appendChild(summary);
  } else {
    button.textContent = typeof summary === "string" && summary !== "" ? summary : title;
  }
  return button;
}

/**
 * Render the panels of `registry` for the open Session: `session` is `{id, views, runTool(name,
 * args), refreshViews()}` (`views`: the latest `{views, throughSeq}` payload or null), or null
 * when none is open; `rerender()` renders them again.
 */
export function renderPanels({ registry, session, rerender }) {
  const views = session?.views?.views ?? null;
  const before = focusBefore();
  const sections = [];
  if (views !== null && typeof views === "object") {
    const locale = getLocale();
    const translate = (k, params) => t(k, params, locale);
    for (const [viewName, panel] of registry.panels()) {
      if (!Object.hasOwn(views, viewName)) continue;
      const section = el("section", "panel");
      section.setAttribute("role", "region");
      section.setAttribute("data-panel", viewName);
      const slug = viewName.replace(/[^A-Za-z0-9_-]/g, "-");
      const headingId = `panel-${slug}`;
      section.setAttribute("aria-labelledby", headingId);
      const title = panel.title(translate);
      const heading = el("h2", "", title);
      heading.id = headingId;
      heading.setAttribute("tabindex", "-1"); // where the focus goes when its control is gone
      const ctx = {
        view: views[viewName],
        sessionId: session.id,
        locale,
        t: translate,
        time: createTime({ locale }),
        document,
        errorText: (error) => describeError(error, locale).text,
        runTool: session.runTool,
        rerender,
        refreshViews: session.refreshViews,
      };
      const summary = summaryLine(panel, ctx, title);
      const open = expanded.has(viewName);
      const bodyId = `panel-body-${slug}`;
      summary.setAttribute("aria-expanded", open ? "true" : "false");
      summary.setAttribute("aria-controls", bodyId);
      summary.addEventListener("click", () => {
        if (expanded.has(viewName)) expanded.delete(viewName);
        else expanded.add(viewName);
        rerender();
      });
      section.classList.toggle("is-collapsed", !open);
      const content = el("div", "panel-body");
      content.id = bodyId;
      content.appendChild(heading);
      try {
        const body = panel.render(ctx);
        if (body) content.appendChild(body);
      } catch (error) {
        console.warn(`dsh: panel ${viewName} failed`, error);
        continue;
      }
      section.appendChild(summary);
      section.appendChild(content);
      sections.push(section);
    }
  }
  // A panel that grows (above the transcript on a phone) must not push the latest message out
  // of view: a transcript read to the bottom stays at the bottom.
  const atBottom = isNearBottom(els.scroll);
  els.panels.replaceChildren(...sections);
  els.panels.hidden = sections.length === 0;
  els.conversation.classList.toggle("has-panels", sections.length > 0);
  if (atBottom) scrollToBottom(els.scroll);
  restoreFocus(before);
}
