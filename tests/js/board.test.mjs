// board.js: the host's boards (lists over the rows plugins post across Sessions). A whole board
// soonest first and paged with the server's cursor, an empty sentence, a failure with Retry; each
// row's Session as a link ("Untitled session" when unnamed); a row's action as the user's action,
// the row going once it is done and the keyboard moving to the next row; the start page's first
// rows and what arrived while the person was away (counted from the last-seen instant; nothing on
// a first visit). Session text is text, never markup. The host knows no plugin's words: the test
// board here is a made-up "notes" one.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Boards } from "../../src/dsh_host/web/static/board.js";
import {
  AWAY_SHOWN,
  boardApi,
  LAST_SEEN_KEY,
  markSeen,
  MAX_LIMIT,
  PAGE_SIZE,
  readLastSeen,
  rowsSince,
} from "../../src/dsh_host/web/static/board-data.js";
import { setLocale } from "../../src/dsh_host/web/static/i18n.js";
import { RendererRegistry } from "../../src/dsh_host/web/static/registry.js";
import { deferred, settle } from "./async-helpers.mjs";
import { FakeElement, fakeDocument } from "./fake-dom.mjs";

const SECRET = '<img src=x onerror="alert(1)">';

/** A document whose focus the fake elements track (FakeElement.focus reads the global one). */
const doc = { ...fakeDocument, activeElement: null };
globalThis.document = doc;

const row = (session, key, atMs, text, sessionName = `name of ${session}`) => ({
  sessionId: session,
  sessionName,
  key,
  kind: "open",
  atMs,
  data: { text },
});

/** A made-up plugin's board: the host must not need any plugin's words. */
function notesBoard(extra = {}) {
  return {
    plugin: "notes",
    kind: "open",
    title: () => "Every note",
    empty: () => "No notes anywhere.",
    home: { title: () => "Next notes", limit: 2 },
    row: ({ row: r, document: d }) => {
      const span = d.createElement("span");
      span.className = "note-text";
      span.appendChild(d.createTextNode(r.data.text));
      return span;
    },
    action: ({ row: r }) => ({
      label: "Drop",
      busyLabel: "Dropping…",
      description: `Drop ${r.data.text}`,
      tool: "notes_drop",
      arguments: { id: r.key },
    }),
    ...extra,
  };
}

/** An http stand-in: `pages` by cursor (null = the first), `counts` by kind. */
function scriptedHttp({ pages = {}, counts = {}, fail = null } = {}) {
  const calls = [];
  return {
    calls,
    async page(query) {
      calls.push({ op: "page", ...query });
      if (fail !== null) throw fail;
      const page = pages[query.after ?? "first"];
      if (page === undefined) throw new Error(`no page after ${query.after}`);
      return typeof page === "function" ? page(query) : page;
    },
    async count(query) {
      calls.push({ op: "count", ...query });
      return counts[query.kind] ?? 0;
    },
  };
}

function setup({ http, spec = notesBoard(), away = null, tools } = {}) {
  const registry = new RendererRegistry({ document: doc });
  registry.registerBoard("notes.open", spec);
  if (away !== null) registry.registerBoard("notes.done", away);
  const opened = [];
  const boardsOpened = [];
  const ran = [];
  const changes = [];
  const boards = new Boards({
    registry,
    http,
    runTool: async (sessionId, name, args) => {
      ran.push([sessionId, name, args]);
      return tools ? tools(sessionId, name, args) : { ok: true };
    },
    openSession: (id) => opened.push(id),
    openBoard: (name) => boardsOpened.push(name),
    onChange: () => changes.push(1),
    document: doc,
    warn: () => {},
  });
  const heading = new FakeElement("h2");
  const body = new FakeElement("div");
  const home = new FakeElement("div");
  const render = () => boards.renderView({ heading, body });
  return { registry, boards, heading, body, home, render, opened, boardsOpened, ran, changes };
}

const rowsOf = (root) => root.querySelectorAll("li.board-row");
const byClass = (root, name) => [...root.descendants()].find((e) => e.classList.contains(name));

describe("a whole board", () => {
  test("loads, shows the rows in the server's order (soonest first) and pages with the cursor", async () => {
    setLocale("en");
    const first = [row("s1", "a", 1_000, "first"), row("s2", "b", 2_000, SECRET, null)];
    const second = [row("s1", "c", 3_000, "third")];
    const http = scriptedHttp({ pages: { first: { rows: first, next: "CUR1" }, CUR1: { rows: second, next: null } } });
    const ui = setup({ http });
    const opening = ui.boards.openView("notes.open");
    ui.render();
    assert.equal(ui.heading.textContent, "Every note");
    assert.equal(ui.body.textContent, "Loading…");
    await opening;
    ui.render();
    assert.deepEqual(http.calls, [{ op: "page", plugin: "notes", kind: "open", limit: PAGE_SIZE }]);
    const rows = rowsOf(ui.body);
    assert.deepEqual(rows.map((r) => r.getAttribute("data-row-key")), ["s1/a", "s2/b"]);
    // Session text is one text node; an unnamed Session is "Untitled session", never its id.
    const text = byClass(rows[1], "note-text");
    assert.equal(text.textContent, SECRET);
    assert.equal(text.childNodes.length, 1);
    assert.equal(text.childNodes[0].nodeType, 3);
    assert.equal(rows[1].querySelectorAll("img").length, 0);
    const links = rows.map((r) => r.querySelector("a"));
    assert.deepEqual(links.map((a) => a.textContent), ["name of s1", "Untitled session"]);
    assert.equal(links[0].getAttribute("href"), "?session=s1");
    // Show more reads the next page after the server's cursor; the keyboard goes to its first row.
    const more = ui.body.querySelector('[data-testid="board-more"]');
    assert.equal(more.textContent, "Show more");
    more.focus();
    const loading = ui.boards.more();
    ui.render();
    assert.equal(ui.body.querySelector('[data-testid="board-more"]').textContent, "Loading more…");
    await loading;
    ui.render();
    assert.deepEqual(http.calls.at(-1), { op: "page", plugin: "notes", kind: "open", limit: PAGE_SIZE, after: "CUR1" });
    assert.deepEqual(rowsOf(ui.body).map((r) => r.getAttribute("data-row-key")), ["s1/a", "s2/b", "s1/c"]);
    assert.equal(ui.body.querySelector('[data-testid="board-more"]'), null, "the last page");
    assert.equal(doc.activeElement.getAttribute("data-focus-key"), "link:s1/c");
  });

  test("a link opens its Session (a modified click is left to the browser)", async () => {
    const http = scriptedHttp({ pages: { first: { rows: [row("s9", "k", 5, "x")], next: null } } });
    const ui = setup({ http });
    await ui.boards.openView("notes.open");
    ui.render();
    const link = ui.body.querySelector("a");
    let prevented = 0;
    link.dispatch("click", { ctrlKey: true, preventDefault: () => (prevented += 1) });
    assert.deepEqual(ui.opened, []);
    link.dispatch("click", { button: 0, preventDefault: () => (prevented += 1) });
    assert.deepEqual(ui.opened, ["s9"]);
    assert.equal(prevented, 1);
  });

  test("no rows: the board's own sentence; a failure: plain words and Retry", async () => {
    setLocale("zh");
    const empty = setup({ http: scriptedHttp({ pages: { first: { rows: [], next: null } } }) });
    await empty.boards.openView("notes.open");
    empty.render();
    assert.equal(empty.body.textContent, "No notes anywhere.");
    const generic = setup({
      http: scriptedHttp({ pages: { first: { rows: [], next: null } } }),
      spec: notesBoard({ empty: undefined }),
    });
    await generic.boards.openView("notes.open");
    generic.render();
    assert.equal(generic.body.textContent, "这里还没有内容。");

    const failure = Object.assign(new Error("x"), { code: "storage_unavailable", status: 503 });
    const http = scriptedHttp({ fail: failure });
    const broken = setup({ http });
    await broken.boards.openView("notes.open");
    broken.render();
    const problem = broken.body.querySelector("p");
    assert.equal(problem.getAttribute("role"), "alert");
    assert.match(problem.textContent, /^无法加载这个列表：存储暂时没有响应/);
    assert.match(problem.textContent, /\(storage_unavailable\)/);
    const retry = problem.querySelector("button");
    assert.equal(retry.textContent, "重试");
    retry.click();
    await settle();
    assert.equal(http.calls.length, 2);
    setLocale("en");
  });

  test("the periodic refresh reads as many rows again and keeps the rows on a failure", async () => {
    let answer = { rows: [row("s1", "a", 1, "one")], next: null };
    const http = scriptedHttp({ pages: { first: () => answer } });
    const ui = setup({ http });
    await ui.boards.openView("notes.open");
    answer = { rows: [row("s1", "b", 2, "two")], next: null };
    await ui.boards.refreshView();
    ui.render();
    assert.deepEqual(rowsOf(ui.body).map((r) => r.textContent.slice(0, 3)), ["two"]);
    answer = null; // the next read throws
    http.page = async () => {
      throw new Error("down");
    };
    await ui.boards.refreshView();
    ui.render();
    assert.equal(rowsOf(ui.body).length, 1, "what it showed stays");
    ui.boards.view.rows = Array.from({ length: MAX_LIMIT + 1 }, (_, i) => row("s", `k${i}`, i, "n"));
    let reads = 0;
    http.page = async () => {
      reads += 1;
      return { rows: [], next: null };
    };
    await ui.boards.refreshView();
    assert.equal(reads, 0, "more than one read's worth of pages is left as it is");
  });
});

describe("a row's action", () => {
  test("runs as the user's action on the row's Session; done, the row goes and the keyboard moves on", async () => {
    const rows = [row("s1", "a", 1, "alpha"), row("s2", "b", 2, "beta")];
    const answer = deferred();
    const ui = setup({
      http: scriptedHttp({ pages: { first: { rows, next: null } } }),
      tools: () => answer.promise,
    });
    await ui.boards.openView("notes.open");
    ui.render();
    const action = () => ui.body.querySelector('[data-testid="board-action"]');
    assert.equal(action().textContent, "Drop");
    assert.equal(action().getAttribute("aria-label"), "Drop alpha");
    action().focus();
    action().click();
    ui.render();
    assert.deepEqual(ui.ran, [["s1", "notes_drop", { id: "a" }]]);
    // Busy: it keeps the focus and says so, and a second click runs nothing.
    assert.equal(action().textContent, "Dropping…");
    assert.equal(action().getAttribute("aria-disabled"), "true");
    assert.equal(doc.activeElement, action());
    action().click();
    assert.equal(ui.ran.length, 1);
    answer.resolve({ ok: true });
    await settle();
    ui.render();
    assert.deepEqual(rowsOf(ui.body).map((r) => r.getAttribute("data-row-key")), ["s2/b"]);
    assert.equal(doc.activeElement.getAttribute("data-focus-key"), "action:s2/b");
  });

  test("a refusal stays on its row as text, in the board's words or the host's", async () => {
    const rows = [row("s1", "a", 1, "alpha")];
    const refusal = { code: "schedule_not_found" };
    const worded = setup({
      http: scriptedHttp({ pages: { first: { rows, next: null } } }),
      spec: notesBoard({ failed: ({ reason }) => `Not dropped: ${reason}` }),
      tools: () => ({ code: "tool_failed" }),
    });
    await worded.boards.openView("notes.open");
    worded.render();
    worded.body.querySelector('[data-testid="board-action"]').click();
    await settle();
    worded.render();
    const line = byClass(worded.body, "board-row-error");
    assert.equal(line.textContent, "Not dropped: The tool failed.");
    assert.equal(line.getAttribute("role"), "alert");
    assert.equal(rowsOf(worded.body).length, 1);

    const plain = setup({
      http: scriptedHttp({ pages: { first: { rows, next: null } } }),
      spec: notesBoard({ outcome: (value) => (value.code === "schedule_not_found" ? { error: value } : "done") }),
      tools: () => refusal,
    });
    await plain.boards.openView("notes.open");
    plain.render();
    plain.body.querySelector('[data-testid="board-action"]').click();
    await settle();
    plain.render();
    assert.equal(byClass(plain.body, "board-row-error").textContent, "That did not work: That reminder no longer exists.");

    const thrown = setup({
      http: scriptedHttp({ pages: { first: { rows, next: null } } }),
      tools: () => {
        throw Object.assign(new Error("x"), { code: "network" });
      },
    });
    await thrown.boards.openView("notes.open");
    thrown.render();
    thrown.body.querySelector('[data-testid="board-action"]').click();
    await settle();
    thrown.render();
    assert.match(byClass(thrown.body, "board-row-error").textContent, /cannot be reached/);
  });

  test("a malformed offer or a throwing row renderer degrades, never breaks the list", async () => {
    const ui = setup({
      http: scriptedHttp({ pages: { first: { rows: [row("s1", "a", 1, "x")], next: null } } }),
      spec: notesBoard({
        action: () => ({ label: "", tool: "t", arguments: {} }),
        row: () => {
          throw new Error("boom");
        },
      }),
    });
    await ui.boards.openView("notes.open");
    ui.render();
    const [only] = rowsOf(ui.body);
    assert.equal(byClass(only, "board-row-fallback").textContent, "a");
    assert.equal(only.querySelector("button"), null);
  });
});

describe("the start page", () => {
  const doneBoard = () => ({
    plugin: "notes",
    kind: "done",
    away: { title: ({ count }) => `While you were out: ${count}` },
    row: ({ row: r, document: d }) => {
      const span = d.createElement("span");
      span.appendChild(d.createTextNode(r.data.text));
      return span;
    },
  });

  test("the first rows of a home board, with the way to the whole board", async () => {
    const rows = [row("s1", "a", 1, "one"), row("s2", "b", 2, "two")];
    const http = scriptedHttp({ pages: { first: { rows, next: "C" } } });
    const ui = setup({ http });
    await ui.boards.loadHome(null);
    ui.boards.renderHome(ui.home);
    assert.deepEqual(http.calls, [{ op: "page", plugin: "notes", kind: "open", limit: 2 }]);
    assert.equal(ui.home.hidden, false);
    const section = ui.home.querySelector('[data-testid="home-upcoming"]');
    assert.equal(section.querySelector("h2").textContent, "Next notes");
    assert.equal(rowsOf(section).length, 2);
    const all = section.querySelector('[data-testid="home-all"]');
    assert.equal(all.textContent, "Every note");
    all.click();
    assert.deepEqual(ui.boardsOpened, ["notes.open"]);
    // Nothing coming up: the section goes; nothing at all: the container hides.
    http.page = async () => ({ rows: [], next: null });
    await ui.boards.refreshHome();
    ui.boards.renderHome(ui.home);
    assert.equal(ui.home.hidden, true);
  });

  test("a first visit says nothing about being away", async () => {
    const http = scriptedHttp({ pages: { first: { rows: [], next: null } }, counts: { done: 4 } });
    const ui = setup({ http, away: doneBoard() });
    await ui.boards.loadHome(null);
    ui.boards.renderHome(ui.home);
    assert.deepEqual(http.calls.map((c) => `${c.op} ${c.kind}`), ["page open"]);
    assert.equal(ui.home.querySelector('[data-testid="home-away"]'), null);
  });

  test("what arrived after the last-seen instant: counted, listed newest first, linked", async () => {
    const since = 10_000;
    const done = [
      row("s1", "old", 9_000, "before"),
      row("s1", "x", 11_000, "first after"),
      row("s2", "y", 12_000, "second after", null),
    ];
    const pages = {
      first: (query) => (query.kind === "done" ? { rows: done.slice(0, 2), next: "D" } : { rows: [], next: null }),
      D: { rows: done.slice(2), next: null },
    };
    const http = scriptedHttp({ pages, counts: { done: 2 } });
    const ui = setup({ http, away: doneBoard() });
    await ui.boards.loadHome(since);
    ui.boards.renderHome(ui.home);
    assert.deepEqual(http.calls.find((c) => c.op === "count"), {
      op: "count",
      plugin: "notes",
      kind: "done",
      afterMs: since,
    });
    const away = ui.home.querySelector('[data-testid="home-away"]');
    assert.equal(away.querySelector("h2").textContent, "While you were out: 2");
    const rows = rowsOf(away);
    assert.deepEqual(rows.map((r) => r.getAttribute("data-row-key")), ["s2/y", "s1/x"]);
    assert.deepEqual(rows.map((r) => r.querySelector("a").textContent), ["Untitled session", "name of s1"]);
    // The away section comes first; it stays through the periodic refresh.
    await ui.boards.refreshHome();
    ui.boards.renderHome(ui.home);
    assert.equal(ui.home.children[0].getAttribute("data-testid"), "home-away");
    // A deleted Session's rows go from every list, and the count with them.
    ui.boards.forgetSession("s2");
    ui.boards.renderHome(ui.home);
    assert.equal(ui.home.querySelector('[data-testid="home-away"]').querySelector("h2").textContent, "While you were out: 1");
  });

  test("more arrivals than it lists: the rest are counted", async () => {
    const many = Array.from({ length: AWAY_SHOWN + 3 }, (_, i) => row("s1", `k${i}`, 100 + i, `n${i}`));
    const http = scriptedHttp({
      pages: { first: (q) => (q.kind === "done" ? { rows: many, next: null } : { rows: [], next: null }) },
      counts: { done: many.length },
    });
    const ui = setup({ http, away: doneBoard() });
    await ui.boards.loadHome(1);
    ui.boards.renderHome(ui.home);
    const away = ui.home.querySelector('[data-testid="home-away"]');
    assert.equal(rowsOf(away).length, AWAY_SHOWN);
    assert.equal(rowsOf(away)[0].getAttribute("data-row-key"), `s1/k${AWAY_SHOWN + 2}`);
    assert.equal(byClass(away, "home-more").textContent, "… and 3 more");
  });
});

describe("the API and the last-seen instant", () => {
  test("boardApi builds the documented queries and drops malformed rows", async () => {
    const asked = [];
    const http = boardApi(async (method, path) => {
      asked.push([method, path]);
      if (path.startsWith("/api/board/count")) return { count: 3 };
      return {
        rows: [
          { sessionId: "s1", sessionName: null, key: "k", kind: "pending", atMs: 5, data: { text: "t" } },
          { sessionId: "", key: "k", atMs: 5 },
          { sessionId: "s2", key: "k", atMs: "soon" },
          null,
        ],
        next: "N",
      };
    });
    const page = await http.page({ plugin: "schedule", kind: "pending", limit: 7, after: "C" });
    assert.deepEqual(page, {
      rows: [{ sessionId: "s1", sessionName: null, key: "k", kind: "pending", atMs: 5, data: { text: "t" } }],
      next: "N",
    });
    assert.equal(await http.count({ plugin: "schedule", kind: "delivered", afterMs: 123 }), 3);
    await http.page({ plugin: "schedule", kind: "delivered", limit: 7, since: 99 });
    assert.deepEqual(asked, [
      ["GET", "/api/board?plugin=schedule&kind=pending&limit=7&after=C"],
      ["GET", "/api/board/count?plugin=schedule&kind=delivered&after=123"],
      ["GET", "/api/board?plugin=schedule&kind=delivered&limit=7&since=99"],
    ]);
  });

  test("rowsSince reads a bounded number of pages", async () => {
    let reads = 0;
    const asked = [];
    const endless = {
      page: async (query) => {
        asked.push(query);
        reads += 1;
        return { rows: [row("s", `k${reads}`, 100 + reads, "n")], next: `after${reads}` };
      },
    };
    const found = await rowsSince(endless, { plugin: "p", kind: "k" }, 7, { maxPages: 3 });
    assert.equal(reads, 3);
    // The server starts at the first row after the instant; later pages follow the cursor.
    assert.deepEqual(asked.map((q) => [q.since ?? null, q.after ?? null]), [
      [7, null],
      [null, "after1"],
      [null, "after2"],
    ]);
    assert.equal(found.complete, false);
    assert.deepEqual(found.rows.map((r) => r.key), ["k3", "k2", "k1"]);
  });

  test("the last-seen instant: read back, absent on a first visit, junk ignored", () => {
    const map = new Map();
    const store = { getItem: (k) => map.get(k) ?? null, setItem: (k, v) => map.set(k, v) };
    assert.equal(readLastSeen(store), null);
    markSeen(1_234.9, store);
    assert.equal(map.get(LAST_SEEN_KEY), "1234");
    assert.equal(readLastSeen(store), 1234);
    map.set(LAST_SEEN_KEY, "yesterday");
    assert.equal(readLastSeen(store), null);
    const broken = {
      getItem: () => {
        throw new Error("denied");
      },
      setItem: () => {
        throw new Error("denied");
      },
    };
    assert.equal(readLastSeen(broken), null);
    markSeen(1, broken); // not remembered, no throw
  });
});

describe("registering a board", () => {
  test("refuses a malformed one and lists them in order", () => {
    const registry = new RendererRegistry({ document: doc });
    assert.throws(() => registry.registerBoard("x", { plugin: "p", kind: "k" }), /row\(ctx\)/);
    assert.throws(() => registry.registerBoard("x", { kind: "k", row() {} }), /plugin/);
    assert.throws(() => registry.registerBoard("x", { plugin: "p", kind: "", row() {} }), /kind/);
    assert.throws(() => registry.registerBoard("x", { plugin: "p", kind: "k", row() {}, title: "T" }), /title/);
    assert.throws(() => registry.registerBoard("x", { plugin: "p", kind: "k", row() {}, home: {} }), /home/);
    assert.throws(() => registry.registerBoard("x", { plugin: "p", kind: "k", row() {}, away: {} }), /away/);
    let notified = 0;
    registry.onPanelsChange(() => (notified += 1));
    const drop = registry.registerBoard("b", { plugin: "p", kind: "k", row() {} });
    registry.registerBoard("a", { plugin: "p", kind: "j", row() {} });
    assert.deepEqual(registry.boards().map(([name]) => name), ["b", "a"]);
    assert.throws(() => registry.registerBoard("a", { plugin: "p", kind: "j", row() {} }), /already/);
    drop();
    assert.equal(registry.board("b"), null);
    assert.equal(notified, 3);
  });

  test("a panel's deleteNote: a function when given; a failing or empty one gives way", () => {
    const warnings = [];
    const registry = new RendererRegistry({ document: doc, warn: (...args) => warnings.push(args) });
    const panel = (deleteNote) => ({ title: () => "P", render: () => null, deleteNote });
    assert.throws(() => registry.registerPanel("x.bad", panel("words")), /deleteNote/);
    registry.registerPanel("x.words", panel(({ count }) => `${count} things go too.`));
    registry.registerPanel("x.empty", panel(() => ""));
    registry.registerPanel("x.boom", panel(() => {
      throw new Error("boom");
    }));
    registry.registerPanel("x.none", { title: () => "P", render: () => null });
    const tr = (key) => key;
    assert.equal(registry.deleteNote("x.words", 2, tr), "2 things go too.");
    assert.equal(registry.deleteNote("x.empty", 2, tr), null);
    assert.equal(registry.deleteNote("x.boom", 2, tr), null);
    assert.equal(registry.deleteNote("x.none", 2, tr), null);
    assert.equal(registry.deleteNote("x.missing", 2, tr), null);
    assert.equal(warnings.length, 1);
  });
});
