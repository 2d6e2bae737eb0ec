// dsh browser client: the assistant text a turn streams (ephemeral `event: stream` frames) and
// the zone a message is sent with. Pure module (no DOM); runs under Node as well.
//
// A stream frame is `{"stream": {"type": "assistant/stream", "messageId", "text"}}`: one piece
// of the assistant message in progress. The pieces of one message accumulate into one draft;
// the durable `assistant/message` replaces it, and `turn/start` / `turn/end` end it (a turn
// that failed has no message: its draft is dropped). The server sends a subscriber a
// message's pieces only from its first piece on, and never again after a reconnect, so a
// draft is always the message's beginning: a reconnect drops it (the finished message comes
// with the history and the stream).

/** Durable event types that end the message in progress. */
export const DRAFT_ENDS = Object.freeze(["assistant/message", "turn/start", "turn/end"]);

function isPiece(payload) {
  return (
    payload !== null &&
    typeof payload === "object" &&
    payload.type === "assistant/stream" &&
    typeof payload.messageId === "string" &&
    typeof payload.text === "string"
  );
}

export class StreamingDraft {
  constructor() {
    /** `{messageId, text}` of the message in progress, or null. */
    this.current = null;
  }

  /** One stream payload; returns true when the draft changed. Malformed payloads are ignored. */
  piece(payload) {
    if (!isPiece(payload) || payload.text === "") return false;
    const current = this.current;
    if (current !== null && current.messageId === payload.messageId) {
      current.text += payload.text;
    } else {
      this.current = { messageId: payload.messageId, text: payload.text };
    }
    return true;
  }

  /** A durable event arrived; returns true when it ended (removed) the draft. */
  event(event) {
    if (this.current === null || !event || !DRAFT_ENDS.includes(event.type)) return false;
    this.current = null;
    return true;
  }

  /** Drop the draft (a reconnect, another Session); returns true when there was one. */
  clear() {
    const had = this.current !== null;
    this.current = null;
    return had;
  }
}

/** The browser's IANA zone (`Intl`), or null when it has none to tell. */
export function browserTimeZone(intl = globalThis.Intl) {
  try {
    const zone = intl.DateTimeFormat().resolvedOptions().timeZone;
    return typeof zone === "string" && zone !== "" ? zone : null;
  } catch {
    return null;
  }
}

/** The body of `POST .../messages`: `timeZone` only when there is one. */
export function messageBody(text, timeZone) {
  return timeZone ? { text, timeZone } : { text };
}

/**
 * Send `text` with `timeZone` through `post(body)`. A host that does not know the browser's
 * zone answers `invalid_time_zone` and changes nothing, so the message is sent once more
 * without it (that turn then reads UTC) instead of failing.
 */
export async function sendWithZone(post, text, timeZone) {
  try {
    return await post(messageBody(text, timeZone));
  } catch (error) {
    if (!timeZone || error?.code !== "invalid_time_zone") throw error;
    return post(messageBody(text, null));
  }
}
