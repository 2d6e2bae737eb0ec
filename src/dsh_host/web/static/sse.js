// Server-Sent Events over fetch(): EventSource cannot send an Authorization header, so the
// stream is read and parsed here. Pure module (no DOM); runs under Node as well.

/**
 * Incremental text/event-stream parser (WHATWG "event stream interpretation").
 * feed(chunk) accepts strings or Uint8Array chunks split anywhere (inside a line, inside a
 * CRLF pair, inside a multi-byte UTF-8 character) and returns the frames completed by it:
 * `{id, event, data}` where `id` is the last event id seen so far ("" if none), `event`
 * defaults to "message" and `data` joins multiple `data:` lines with "\n".
 */
export class SSEParser {
  constructor({ onComment } = {}) {
    this.onComment = typeof onComment === "function" ? onComment : null;
    this.lastEventId = "";
    this.retry = null;
    this.comments = 0;
    this._line = "";
    this._skipLF = false;
    this._data = [];
    this._event = "";
    this._id = "";
    this._decoder = null;
    this._started = false;
  }

  feed(chunk) {
    let text;
    if (typeof chunk === "string") {
      text = chunk;
    } else {
      if (this._decoder === null) this._decoder = new TextDecoder("utf-8");
      text = this._decoder.decode(chunk, { stream: true });
    }
    const frames = [];
    if (text.length === 0) return frames;
    if (!this._started) {
      this._started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let start = 0;
    if (this._skipLF && text.length > 0) {
      if (text.charCodeAt(0) === 10) start = 1;
      this._skipLF = false;
    }
    for (let i = start; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code !== 10 && code !== 13) continue;
      const line = this._line + text.slice(start, i);
      this._line = "";
      this._processLine(line, frames);
      if (code === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i += 1;
        } else {
          this._skipLF = true; // a CRLF may be split across chunks
        }
      }
      start = i + 1;
    }
    this._line += text.slice(start);
    return frames;
  }

  _processLine(line, frames) {
    if (line === "") {
      this._dispatch(frames);
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' */) {
      this.comments += 1;
      if (this.onComment) this.onComment(line.slice(1));
      return;
    }
    const colon = line.indexOf(":");
    let field = line;
    let value = "";
    if (colon !== -1) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case "data":
        this._data.push(value);
        break;
      case "event":
        this._event = value;
        break;
      case "id":
        if (!value.includes("\u0000")) this._id = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  _dispatch(frames) {
    this.lastEventId = this._id;
    if (this._data.length === 0) {
      this._event = "";
      return;
    }
    frames.push({
      id: this.lastEventId,
      event: this._event === "" ? "message" : this._event,
      data: this._data.join("\n"),
    });
    this._data = [];
    this._event = "";
  }
}

/** Keep the larger of two numeric ids (a late view re-sends an older seq); else the newer. */
export function newerEventId(current, incoming) {
  if (incoming === "" || incoming === null || incoming === undefined) return current;
  const numeric = /^[0-9]+$/;
  if (current !== null && current !== undefined && numeric.test(current) && numeric.test(incoming)) {
    return Number(incoming) >= Number(current) ? incoming : current;
  }
  return incoming;
}

const STALE = Symbol("stale");

export class SSEHttpError extends Error {
  constructor(status, message) {
    super(message ?? `event stream answered HTTP ${status}`);
    this.name = "SSEHttpError";
    this.status = status;
    // Retrying cannot fix authentication or an unknown Session.
    this.fatal = status === 401 || status === 403 || status === 404 || status === 410;
  }
}

/**
 * Read `url` as an event stream with fetch(), reconnecting with exponential backoff and
 * sending `Last-Event-ID` once an id is known. Returns `{close(), reconnectNow(),
 * lastEventId, connected}`. Nothing is delivered after close() (or `signal` aborting), and a
 * superseded stream never delivers once a newer connection attempt started.
 *
 * onOpen({reconnect, lastEventId, status}) runs when a response is accepted (`lastEventId`: the
 * one this request sent, or null); onFrame(frame) per parsed frame; onError(error, {fatal,
 * attempt}) on each failure (fatal ones stop).
 *
 * resumeId(lastEventId) (optional) picks the `Last-Event-ID` each request sends from the largest
 * id seen (null before any): that id, an earlier one (the server then replays from there), or
 * null for none. Without it (or when it throws) the largest id is sent. The largest id seen
 * never moves back.
 */
export function connectEvents({
  url,
  headers,
  lastEventId = null,
  onFrame,
  onOpen,
  onError,
  signal,
  fetchImpl,
  resumeId,
  initialDelayMs = 500,
  maxDelayMs = 15000,
  sleep,
  random = Math.random,
} = {}) {
  const doFetch = fetchImpl ?? globalThis.fetch?.bind(globalThis);
  if (typeof doFetch !== "function") throw new TypeError("no fetch implementation");
  let closed = false;
  let connected = false;
  let generation = 0;
  let controller = null;
  let reader = null;
  let interrupt = null;
  let wake = null;
  let kicked = false;
  let everOpened = false;
  let retryBase = initialDelayMs;
  let current = lastEventId === null || lastEventId === undefined ? null : String(lastEventId);

  const stopped = () => closed || Boolean(signal && signal.aborted);

  // Abort the request, cancel the body and release any await on them, even if the fetch
  // implementation or the stream ignores the abort.
  const cancelIO = () => {
    if (controller) controller.abort();
    if (reader) reader.cancel().catch(() => {});
    if (interrupt) interrupt();
  };

  function close() {
    if (closed) return;
    closed = true;
    generation += 1;
    connected = false;
    cancelIO();
    if (wake) wake();
    if (signal) signal.removeEventListener("abort", close);
  }

  function reconnectNow() {
    if (stopped()) return;
    kicked = true;
    generation += 1;
    cancelIO();
    if (wake) wake();
  }

  const pause = (ms) => {
    if (typeof sleep === "function") return Promise.resolve(sleep(ms));
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      wake = done;
    });
  };

  const report = (error, fatal, attempt) => {
    if (!onError) return;
    try {
      onError(error, { fatal, attempt });
    } catch (callbackError) {
      globalThis.console?.error?.("connectEvents onError failed", callbackError);
    }
  };

  // A callback failure is the caller's bug; it must not tear down the stream.
  const safely = (callback, argument) => {
    if (typeof callback !== "function") return;
    try {
      callback(argument);
    } catch (error) {
      globalThis.console?.error?.("connectEvents callback failed", error);
    }
  };

  // The Last-Event-ID this request sends: the caller's choice, else the largest id seen.
  const sendId = () => {
    if (typeof resumeId !== "function") return current;
    try {
      const chosen = resumeId(current);
      return chosen === null || chosen === undefined ? null : String(chosen);
    } catch (error) {
      globalThis.console?.error?.("connectEvents resumeId failed", error);
      return current;
    }
  };

  // One connection attempt; resolves "opened" (a response that delivered data, which resets
  // the backoff) | "failed" | "fatal" | "stale" (superseded or closed).
  async function attemptOnce(gen, attempt) {
    const live = () => !stopped() && gen === generation;
    const ctl = new AbortController();
    controller = ctl;
    const interrupted = new Promise((resolve) => {
      interrupt = () => resolve(STALE);
    });
    const guard = (promise) => Promise.race([promise, interrupted]);
    let opened = false;
    let received = false;
    try {
      const extra = typeof headers === "function" ? headers() : headers;
      const requestHeaders = { Accept: "text/event-stream", "Cache-Control": "no-cache" };
      for (const [key, value] of Object.entries(extra ?? {})) requestHeaders[key] = value;
      const sent = sendId();
      if (sent !== null) requestHeaders["Last-Event-ID"] = sent;
      const response = await guard(
        doFetch(url, {
          method: "GET",
          headers: requestHeaders,
          signal: ctl.signal,
          cache: "no-store",
        }),
      );
      if (response === STALE || !live()) {
        response?.body?.cancel?.().catch?.(() => {});
        return "stale";
      }
      if (!response.ok) throw new SSEHttpError(response.status);
      const type = (response.headers?.get?.("content-type") ?? "").toLowerCase();
      if (!type.includes("text/event-stream")) {
        throw new Error(`event stream has content-type ${JSON.stringify(type)}`);
      }
      if (!response.body) throw new Error("event stream has no body");
      const streamReader = response.body.getReader();
      reader = streamReader;
      opened = true;
      connected = true;
      const reconnect = everOpened;
      everOpened = true;
      safely(onOpen, { reconnect, lastEventId: sent, status: response.status });
      if (!live()) {
        streamReader.cancel().catch(() => {});
        return "stale";
      }
      const parser = new SSEParser();
      for (;;) {
        const chunk = await guard(streamReader.read());
        if (chunk === STALE || !live()) {
          streamReader.cancel().catch(() => {});
          return "stale";
        }
        const { value, done } = chunk;
        if (done) break;
        if (value && value.length > 0) received = true;
        const frames = parser.feed(value);
        if (parser.retry !== null) retryBase = parser.retry;
        for (const frame of frames) {
          if (!live()) return "stale";
          if (frame.id !== "") current = newerEventId(current, frame.id);
          safely(onFrame, frame);
        }
      }
      report(new Error("event stream ended"), false, attempt);
      return received ? "opened" : "failed";
    } catch (error) {
      if (!live()) return "stale";
      const fatal = Boolean(error && error.fatal);
      report(error, fatal, attempt);
      if (fatal) return "fatal";
      return opened && received ? "opened" : "failed";
    } finally {
      if (gen === generation) connected = false;
      if (controller === ctl) {
        controller = null;
        interrupt = null;
        reader = null;
      }
    }
  }

  async function run() {
    let attempt = 0;
    let failures = 0;
    while (!stopped()) {
      generation += 1;
      const gen = generation;
      const outcome = await attemptOnce(gen, attempt);
      if (stopped()) break;
      attempt += 1;
      if (outcome === "fatal") {
        closed = true;
        break;
      }
      if (kicked) {
        kicked = false;
        failures = 0;
        continue;
      }
      failures = outcome === "opened" ? 0 : failures + 1;
      const exponential = retryBase * 2 ** Math.min(failures, 16);
      const delay = Math.min(maxDelayMs, exponential) * (0.5 + random() / 2);
      await pause(delay);
      if (kicked) kicked = false;
    }
  }

  if (signal) {
    if (signal.aborted) closed = true;
    else signal.addEventListener("abort", close, { once: true });
  }
  const done = closed ? Promise.resolve() : run();

  return {
    close,
    reconnectNow,
    done,
    get lastEventId() {
      return current;
    },
    get connected() {
      return connected && !stopped();
    },
  };
}
