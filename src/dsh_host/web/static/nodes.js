// dsh browser client: the markup of one transcript node. Messages are bubbles; a plugin's
// follow-up is a collapsed system line; a tool call and its result are one summary row whose
// JSON opens on demand (a plugin may offer one action on it, e.g. Undo after a cancel, for a few
// seconds); a fork's seed ends with a divider. Every string that comes from a
// Session reaches the DOM through textContent only. What a node needs to know beyond itself
// (the renderer registry, a result's call, a fork's parent) comes in its `ctx`.

import { el } from "./dom.js";
import { describeError, errorMessage } from "./errors.js";
import { getLocale, t } from "./i18n.js";
import { prettyJson } from "./json.js";
import { createTime } from "./time.js";
import { isErrorValue } from "./transcript.js";

/** The time formatter for the page's locale (the browser's zone). */
export function pageTime() {
  return createTime({ locale: getLocale() });
}

function jsonBlock(label, value) {
  const block = el("div", "json-block");
  block.appendChild(el("div", "json-label", label));
  block.appendChild(el("pre", "json", prettyJson(value)));
  return block;
}

function isUserSourced(source) {
  return source !== null && typeof source === "object" && source.kind === "user";
}

/** What a plugin's tool summary and tool action receive about one tool row. */
function toolInput(ctx, { name, args, value, isError, pending, source }) {
  const locale = getLocale();
  return {
    name,
    arguments: args,
    value,
    isError,
    pending,
    source,
    locale,
    t: (key, params) => t(key, params, locale),
    time: pageTime(),
    errorText: (error) => describeError(error, locale).text,
    findEvent: (predicate) => ctx.findEvent?.(predicate) ?? null,
  };
}

/** The one-line text of a tool row: the plugin's summary, else "NAME · done / failed: CODE". */
function toolSummaryText(registry, input) {
  const { name, isError, pending, source, value } = input;
  let text = registry.toolSummary(input);
  if (text === null) {
    if (pending) text = t("tool.running", { name });
    else if (isError) text = t("tool.failed", { name, reason: describeError(value).text });
    else text = t("tool.done", { name });
  }
  return isUserSourced(source) ? `${t("tool.byUser")} · ${text}` : text;
}

/**
 * A tool row: `call` (a tool-call node, or null when its page is not loaded) and `result` (a
 * tool-result node, or null while the call runs).
 */
function renderToolRow(wrapper, call, result, ctx) {
  const { registry } = ctx;
  const name = String(result?.name ?? call?.name ?? "");
  const isError = result?.isError === true;
  if (isError) wrapper.classList.add("is-error");
  const callId = result?.callId ?? call?.callId;
  if (callId !== undefined) wrapper.setAttribute("data-call-id", String(callId));
  wrapper.setAttribute("data-tool", name);
  const input = toolInput(ctx, {
    name,
    args: call?.arguments,
    value: result?.value,
    isError,
    pending: result === null,
    source: call?.source,
  });
  const details = el("details", "tool");
  const summary = el("summary", "tool-summary");
  summary.appendChild(el("span", "tool-icon", isError ? "!" : result ? "✓" : "…"));
  summary.appendChild(
    el(
      "span",
      "tool-text",
      toolSummaryText(registry, input),
    ),
  );
  details.appendChild(summary);
  if (call !== null) details.appendChild(jsonBlock(t("tool.arguments"), call.arguments));
  if (result !== null) details.appendChild(jsonBlock(t("tool.value"), result.value));
  if (callId !== undefined) details.appendChild(el("div", "tool-call-id", String(callId)));
  wrapper.appendChild(details);
  if (result !== null && callId !== undefined) {
    const action = toolActionElement(ctx, String(callId), { ...input, resultTime: result.time });
    if (action !== null) wrapper.appendChild(action);
  }
}

/** Each offered action's state by call id: "pending", "done" or `{error}`; kept across rebuilds. */
const actions = new Map();

/**
 * A plugin's action on a finished tool row (registry.toolAction; e.g. Undo after a cancel): a
 * button until `offer.until`, which runs `offer.tool` with `offer.arguments` as the user's action
 * through `ctx.runTool`; then a note saying it was done or why not. Null when nothing is offered.
 */
function toolActionElement(ctx, callId, input) {
  const state = actions.get(callId);
  if (state === "done") return el("span", "tool-action-note", t("tool.undone"));
  if (state !== undefined && state !== "pending") {
    const reason = input.errorText(state.error);
    return el("span", "tool-action-note is-error", t("tool.undoFailed", { reason }));
  }
  if (typeof ctx.runTool !== "function") return null;
  const offer = ctx.registry.toolAction({ ...input, now: Date.now() });
  if (offer === null || (state === undefined && Date.now() >= offer.until)) return null;
  const button = el("button", "tool-action", state === "pending" ? t("tool.undoing") : offer.label);
  button.type = "button";
  button.disabled = state === "pending";
  button.setAttribute("data-tool-action", callId);
  if (offer.description) button.setAttribute("aria-label", offer.description);
  const expire = globalThis.setTimeout(() => {
    if (actions.get(callId) === undefined) button.remove();
  }, Math.max(0, offer.until - Date.now()));
  button.addEventListener("click", async () => {
    if (actions.has(callId)) return;
    globalThis.clearTimeout(expire);
    actions.set(callId, "pending");
    button.disabled = true;
    button.textContent = t("tool.undoing");
    let outcome;
    try {
      const value = await ctx.runTool(offer.tool, offer.arguments);
      outcome = isErrorValue(value) ? { error: value } : "done";
    } catch (error) {
      outcome = { error };
    }
    actions.set(callId, outcome);
    const note = toolActionElement(ctx, callId, input);
    if (button.parentNode) button.replaceWith(note);
  });
  return button;
}

function renderFollowup(wrapper, node, registry) {
  const locale = getLocale();
  const plugin = String(node.source.plugin);
  const text =
    registry.followupSummary({
      text: node.text,
      source: node.source,
      locale,
      t: (key, params) => t(key, params, locale),
    }) ?? t("followup.generic", { plugin });
  const details = el("details", "followup");
  details.appendChild(el("summary", "followup-summary", text));
  details.appendChild(el("pre", "followup-text", node.text));
  wrapper.appendChild(details);
}

/** True for a user/message a plugin queued (a follow-up), not one the user typed. */
export function isFollowup(node) {
  const source = node?.source;
  return (
    node?.kind === "user" &&
    source !== null &&
    typeof source === "object" &&
    typeof source.plugin === "string"
  );
}

/**
 * What a presented event's renderer gets besides its node (registry.render): the Session's id,
 * `runTool(name, args)` (the user's action on it), `findEvent(predicate)` (the latest loaded
 * event that matches), `errorText(error)` (plain words) and `notices()` (the Session's notices).
 */
function presentedContext(ctx) {
  const locale = getLocale();
  return {
    locale,
    document,
    time: pageTime(),
    sessionId: ctx.sessionId,
    runTool: ctx.runTool,
    findEvent: (predicate) => ctx.findEvent?.(predicate) ?? null,
    errorText: (error) => describeError(error, locale).text,
    notices: ctx.notices,
  };
}

/**
 * The element for `node`. `ctx.registry` holds the plugins' renderers and summaries,
 * `ctx.callFor(callId)` finds a result's call node, `ctx.findEvent(predicate)` the latest event
 * of the Session's window that matches, `ctx.runTool(name, args)` runs a tool as the user's
 * action (for a tool row's offered action), `ctx.isForkBoundary(seq)` says whether a
 * seed ends there because this Session is a fork, and `ctx.parentName()` names the Session it
 * came from.
 */
export function renderNode(node, ctx) {
  const { registry } = ctx;
  const wrapper = el("div", `node node-${node.kind}`);
  wrapper.setAttribute("data-seq", String(node.seq));
  wrapper.setAttribute("data-kind", node.kind);
  switch (node.kind) {
    case "user": {
      if (isFollowup(node)) {
        wrapper.className = "node node-followup";
        wrapper.setAttribute("data-kind", "followup");
        renderFollowup(wrapper, node, registry);
        break;
      }
      wrapper.appendChild(el("div", "node-label", t("node.user")));
      wrapper.appendChild(el("div", "bubble", node.text));
      break;
    }
    case "assistant":
      wrapper.appendChild(el("div", "node-label", t("node.assistant")));
      wrapper.appendChild(el("div", "text", node.text));
      break;
    case "tool-call":
      wrapper.classList.add("node-tool");
      renderToolRow(wrapper, node, null, ctx);
      break;
    case "tool-result":
      wrapper.classList.add("node-tool");
      renderToolRow(wrapper, ctx.callFor(node.callId), node, ctx);
      break;
    case "seed-end": {
      // Every resume ends its copied log too: only a fork's boundary gets the divider.
      if (!ctx.isForkBoundary(node.seq)) {
        wrapper.hidden = true;
        break;
      }
      wrapper.classList.add("fork-divider");
      wrapper.setAttribute("role", "separator");
      const name = ctx.parentName();
      wrapper.appendChild(
        el(
          "span",
          "fork-divider-text",
          name === null ? t("fork.dividerUnknown") : t("fork.divider", { name }),
        ),
      );
      break;
    }
    case "turn-error":
      wrapper.appendChild(
        el(
          "div",
          "turn-error-text",
          node.error === null || node.error === undefined
            ? t("node.turnErrorUnknown")
            : t("node.turnError", { error: errorMessage(node.error) }),
        ),
      );
      break;
    case "turn-cancelled":
      // The user's own Stop: one quiet line, not an error.
      wrapper.appendChild(el("div", "turn-cancelled-text", t("node.turnCancelled")));
      break;
    case "presented-event":
      wrapper.setAttribute("data-event-type", String(node.eventType));
      wrapper.appendChild(registry.render(node, presentedContext(ctx)));
      break;
    default:
      wrapper.appendChild(el("pre", "json", prettyJson(node)));
  }
  return wrapper;
}
