// dsh browser client, pure core: the boards' data. The routes of `GET /api/board` and its count
// over the `api(method, path)` it is given (rows normalized, bad ones dropped), the rows of a
// board that arrived after an instant, a row's key across boards, and the last instant the page
// was seen, kept in localStorage. No DOM; the network only through the function it is handed.

/** Rows per page of the whole board (the API allows 1..200). */
export const PAGE_SIZE = 50;
export const MAX_LIMIT = 200;
/** Rows a board's start-page section shows when it names no limit. */
export const HOME_LIMIT = 5;
/** Pages read (of MAX_LIMIT rows) to find the rows that arrived while the person was away. */
export const AWAY_PAGES = 10;
/** Rows the away section lists (newest first); the rest are counted. */
export const AWAY_SHOWN = 10;
/** localStorage key of the last instant (epoch ms) the page was seen. */
export const LAST_SEEN_KEY = "dsh.lastSeen";

function storage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** The last instant the page was seen (epoch ms), or null on a first visit. */
export function readLastSeen(store = storage()) {
  let raw = null;
  try {
    raw = store?.getItem(LAST_SEEN_KEY) ?? null;
  } catch {
    raw = null;
  }
  const ms = raw === null ? NaN : Number(raw);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : null;
}

/** Remember `now` as the last instant the page was seen. */
export function markSeen(now = Date.now(), store = storage()) {
  try {
    store?.setItem(LAST_SEEN_KEY, String(Math.floor(now)));
  } catch {
    // not remembered: the next visit shows nothing about being away
  }
}

// ------------------------------------------------------------------ the API

function normalizeRow(raw) {
  if (raw === null || typeof raw !== "object") return null;
  const { sessionId, sessionName, key, kind, atMs, data } = raw;
  if (typeof sessionId !== "string" || sessionId === "") return null;
  if (typeof key !== "string" || key === "") return null;
  if (typeof atMs !== "number" || !Number.isFinite(atMs)) return null;
  return {
    sessionId,
    sessionName: typeof sessionName === "string" && sessionName !== "" ? sessionName : null,
    key,
    kind: typeof kind === "string" ? kind : "",
    atMs,
    data: data ?? null,
  };
}

/** The board routes over `api(method, path)` (api.js): pages of rows and counts. */
export function boardApi(api) {
  return {
    /** `{rows, next}`: the rows after the cursor `after` (soonest first); `next` or null. */
    async page({ plugin, kind, limit = PAGE_SIZE, after = null, since = null }) {
      const query = new URLSearchParams({ plugin, kind, limit: String(limit) });
      if (after !== null) query.set("after", after);
      else if (since !== null) query.set("since", String(since));
      const payload = await api("GET", `/api/board?${query}`);
      const rows = Array.isArray(payload?.rows) ? payload.rows.map(normalizeRow) : [];
      const next = typeof payload?.next === "string" && payload.next !== "" ? payload.next : null;
      return { rows: rows.filter((row) => row !== null), next };
    },
    /** How many rows of that plugin and kind are later than `afterMs`. */
    async count({ plugin, kind, afterMs }) {
      const query = new URLSearchParams({ plugin, kind, after: String(afterMs) });
      const payload = await api("GET", `/api/board/count?${query}`);
      const count = payload?.count;
      return Number.isSafeInteger(count) && count > 0 ? count : 0;
    },
  };
}

/**
 * The rows of a board later than `sinceMs`, newest first, at most `shown` of them, reading at
 * most `maxPages` pages: `{rows, complete}` (`complete`: every page was read).
 */
export async function rowsSince(http, { plugin, kind }, sinceMs, { shown = AWAY_SHOWN, maxPages = AWAY_PAGES } = {}) {
  const found = [];
  let after = null;
  for (let page = 0; page < maxPages; page += 1) {
    // The first page starts at the first row after `sinceMs`; the next ones follow its cursor.
    const { rows, next } = await http.page(
      after === null
        ? { plugin, kind, limit: MAX_LIMIT, since: sinceMs }
        : { plugin, kind, limit: MAX_LIMIT, after },
    );
    for (const row of rows) if (row.atMs > sinceMs) found.push(row);
    if (next === null) return { rows: found.reverse().slice(0, shown), complete: true };
    after = next;
  }
  return { rows: found.reverse().slice(0, shown), complete: false };
}

/** A row's key across boards: its Session and its key there. */
export function rowKey(row) {
  return `${row.sessionId}/${row.key}`;
}
