// dsh browser client: the panels plugins register over a Session's views (e.g. the Schedule's
// "Reminders"). Each registered panel whose view the open Session has is one
// `<section role="region">` with its heading, rebuilt on every views update and locale switch;
// focus inside survives the rebuild through `data-focus-key`. A panel runs an Agent tool as the
// user's action through `runTool`; `rerender` rebuilds the panels and `refreshViews` fetches
// the Session's views again (for when the event stream cannot push them): the app passes those
// in, so this module only renders.

import { el, els, isNearBottom, scrollToBottom } from "./dom.js";
import { describeError } from "./errors.js";
import { getLocale, t } from "./i18n.js";
import { createTime } from "./time.js";

function focusKey() {
  const active = document.activeElement;
  if (!active || !els.panels.contains(active)) return null;
  return active.closest("[data-focus-key]")?.getAttribute("data-focus-key") ?? null;
}

/**
 * Render the panels of `registry` for the open Session: `session` is `{id, views, runTool(name,
 * args), refreshViews()}` (`views`: the latest `{views, throughSeq}` payload or null), or null
 * when none is open; `rerender()` renders them again.
 */
export function renderPanels({ registry, session, rerender }) {
  const views = session?.views?.views ?? null;
  const key = focusKey();
  const sections = [];
  if (views !== null && typeof views === "object") {
    const locale = getLocale();
    const translate = (k, params) => t(k, params, locale);
    for (const [viewName, panel] of registry.panels()) {
      if (!Object.hasOwn(views, viewName)) continue;
      const section = el("section", "panel");
      section.setAttribute("role", "region");
      section.setAttribute("data-panel", viewName);
      const headingId = `panel-${viewName.replace(/[^A-Za-z0-9_-]/g, "-")}`;
      section.setAttribute("aria-labelledby", headingId);
      const heading = el("h2", "", panel.title(translate));
      heading.id = headingId;
      section.appendChild(heading);
      try {
        const body = panel.render({
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
        });
        if (body) section.appendChild(body);
      } catch (error) {
        console.warn(`dsh: panel ${viewName} failed`, error);
        continue;
      }
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
  if (key !== null) {
    const again = [...els.panels.querySelectorAll("[data-focus-key]")].find(
      (node) => node.getAttribute("data-focus-key") === key,
    );
    (again?.matches("button, input, a") ? again : again?.querySelector("button"))?.focus();
  }
}
