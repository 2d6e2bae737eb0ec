// Window entries -> conversation nodes. Pure module.
//
// Node kinds:
//   {kind: "user", seq, text, source?}
//   {kind: "assistant", seq, text}
//   {kind: "tool-call", seq, callId, name, arguments}
//   {kind: "tool-result", seq, time, callId, name, value, isError}
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
        time: event.time,
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

/**
 * How deliveries fold, from the transcript's visible rows in order: `rows` are `{seq, kind,
 * foldKey?, day?}` (kind "card" for a presented node whose renderer offers to fold, with its
 * `foldKey` (one recurring reminder) and the local `day` of its occurrence; "followup", "assistant"
 * or anything else). A card takes the follow-up row right after it and the assistant's message
 * right after that follow-up (its echo or answer). Cards of one `foldKey` on one `day` with
 * nothing else shown between them collapse into the last one. Returns `{cards: Map(cardSeq ->
 * {followup, echo, repeats})}` (`followup`/`echo`: a seq or null; `repeats`: the seqs of the
 * group's cards, oldest first, itself last) and `folded`, the Set of seqs shown inside a card.
 */
export function foldPlan(rows) {
  const cards = new Map();
  const folded = new Set();
  let run = null; // the last card, while nothing else was shown after it
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i];
    if (row.kind !== "card") {
      run = null;
      continue;
    }
    const fold = { followup: null, echo: null, repeats: [row.seq] };
    if (rows[i + 1]?.kind === "followup") {
      fold.followup = rows[i + 1].seq;
      i += 1;
      if (rows[i + 1]?.kind === "assistant") {
        fold.echo = rows[i + 1].seq;
        i += 1;
      }
    }
    if (fold.followup !== null) folded.add(fold.followup);
    if (fold.echo !== null) folded.add(fold.echo);
    if (run !== null && run.foldKey === row.foldKey && run.day === row.day) {
      fold.repeats = [...cards.get(run.seq).repeats, row.seq];
      cards.delete(run.seq);
      folded.add(run.seq);
    }
    cards.set(row.seq, fold);
    run = row.foldKey === undefined || row.foldKey === null ? null : row;
  }
  return { cards, folded };
}
