// Window entries -> conversation nodes. Pure module.
//
// Node kinds:
//   {kind: "user", seq, text, source?}
//   {kind: "assistant", seq, text}
//   {kind: "tool-call", seq, callId, name, arguments}
//   {kind: "tool-result", seq, callId, name, value, isError}
//   {kind: "turn-error", seq, error}
//   {kind: "turn-cancelled", seq}      (a turn the user stopped: `turn/end` outcome "cancelled")
//   {kind: "seed-end", seq}             (where a copied log ends: a fork's divider, if at seedLength)
//   {kind: "presented-event", seq, time, eventType, view}   (upstream PresentedEventNode)
// Any event whose sidecar is a presented-event view (`{for: "event", view}`) becomes a
// presented node whatever its type; other events without a transcript meaning produce none.

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A domain error value: an object carrying a string `code`. */
export function isErrorValue(value) {
  return isPlainObject(value) && typeof value.code === "string";
}

/** True for a presented-event sidecar. */
export function isPresentedView(view) {
  return isPlainObject(view) && view.for === "event";
}

/** The node for one `{event, view}` entry, or null. */
export function nodeFor(entry) {
  if (!entry || !isPlainObject(entry.event)) return null;
  const { event, view } = entry;
  const { seq } = event;
  if (isPresentedView(view)) {
    return {
      kind: "presented-event",
      seq,
      time: event.time,
      eventType: event.type,
      view: view.view,
    };
  }
  const data = isPlainObject(event.data) ? event.data : {};
  switch (event.type) {
    case "user/message": {
      if (typeof data.text !== "string") return null;
      const node = { kind: "user", seq, text: data.text };
      if (data.source !== undefined && data.source !== null) node.source = data.source;
      return node;
    }
    case "assistant/message":
      if (typeof data.text !== "string") return null;
      return { kind: "assistant", seq, text: data.text };
    case "tool/call": {
      const node = {
        kind: "tool-call",
        seq,
        callId: data.callId,
        name: data.name,
        arguments: data.arguments,
      };
      if (data.source !== undefined && data.source !== null) node.source = data.source;
      return node;
    }
    case "tool/result":
      return {
        kind: "tool-result",
        seq,
        callId: data.callId,
        name: data.name,
        value: data.value,
        isError: isErrorValue(data.value),
      };
    case "session/end-seed":
      return { kind: "seed-end", seq };
    case "turn/end":
      if (data.outcome === "cancelled") return { kind: "turn-cancelled", seq };
      if (data.outcome !== "error") return null;
      return { kind: "turn-error", seq, error: data.error ?? null };
    default:
      return null;
  }
}

/** Nodes for a list of entries, in order (a replay, or the entries one change added). */
export function nodesFor(entries) {
  const nodes = [];
  for (const entry of entries ?? []) {
    const node = nodeFor(entry);
    if (node !== null) nodes.push(node);
  }
  return nodes;
}
