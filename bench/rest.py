"""A million at rest: boot, memory and listing of a SQLite store of 1,000,000 cold Sessions, each
with one pending reminder, beside the same of 10,000.

**The stores.** One real Session is made first: a LiveHost on its own SQLite folder with the
Schedule plugin (``cold_delivery = true``) and the scripted model, sent "remind me tomorrow
morning to water the plants" (zone UTC); its turn ends with one ``at`` reminder. What storage
then holds for it (header, events, its wake entry, its board row, its stored name) is read back
and replicated under new random Session ids (``uuid4().hex``, as the host makes them), with
creation times one millisecond apart, straight through the backend's own API:
``SQLiteBackend.append(Write(id, 0, events, header, wakes, board=..., name=...))``, thousands
of appends awaited at once so that the group-committing writer stores each batch in one
transaction (WAL, ``synchronous=FULL``). No HTTP and no Agent is involved. The build rate is
Sessions stored per second; the bytes per pending reminder are the database file plus its WAL
after the build closed the store, divided by the number of Sessions (one reminder each).

**At rest.** For each store a real ``dsh serve --data <folder> --port 0 --model scripted`` is
started (the built-in overlay: the Schedule plugin with cold delivery, the browser view) and
timed from the process start to its ``listening on`` line. Its resident memory (``VmRSS`` of
the child) is sampled every 0.25 s until eight samples in a row lie within 1 % (or 30 s pass):
that is the RSS at rest. Then, beside the running server, ``dsh sessions --data <folder>``
(default ``--limit``: 50 rows and one line saying how many more; the read-only path) and
``GET /api/sessions`` (the first page, then the page after its cursor) are timed. After a
clean stop, ``dsh sessions`` is timed again (it then opens the store itself). Boot after a
crash is also measured (the server is killed with SIGKILL and started again): then the store is
checked whole at open (``PRAGMA quick_check`` and the count the position record is compared
with), which is why it is slower; it is reported, not a target.

**The index.** The SQL the backend runs for the earliest wake entry, the due entries, a page of
the Session list and the count is captured (SQLite's trace callback, on the backend opened in
this process after the server stopped) and put through ``EXPLAIN QUERY PLAN``: none may
``SCAN`` the wakes or the sessions table (a covering index search, or the sessions index
walked in order, is what is wanted; ``count(*)`` is the one statement that walks an index
whole).

Targets (at the largest size): boot to ``listening`` <= 3 s; RSS at rest <= 1.5x the smallest
store's; the wake queries and the list page use an index; ``dsh sessions`` and
``GET /api/sessions`` answer one page.

Knobs: ``REST_SIZES`` (default ``10000,1000000``; a smoke run: ``REST_SIZES=1000,20000``),
``REST_DIR`` (keep the built stores there and reuse them on the next run; default: a temporary
folder, removed). The free disk space is checked before a build (about 3 KiB per Session).

Run: ``.venv/bin/python bench/rest.py``. Prints tables, writes JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from dsh_hookspecs import BoardEntry, Event, SessionHeader
from dsh_host import LiveHost
from dsh_host.persistence import SQLiteBackend, StoredSummary, session_page
from dsh_host.testing import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
from _common import publish, target

from dsh_host.persistence import Write

SIZES = [int(n) for n in os.environ.get("REST_SIZES", "10000,1000000").split(",") if n.strip()]
KEEP = os.environ.get("REST_DIR")
#: Appends awaited at once while building (the writer commits what is queued in one batch).
BATCH = 5000
#: The message the template Session is sent (an ``at`` reminder, hours away at any time).
MESSAGE = "remind me tomorrow morning to water the plants"
BOOT_TARGET_S = 3.0
RSS_RATIO_TARGET = 1.5
#: Rows one page of the list holds by default (``dsh sessions`` and ``GET /api/sessions``).
PAGE = 50
#: Bytes per Session the disk check assumes (measured ~2.5 KiB; a margin on top).
BYTES_PER_SESSION = 4096
DSH = [sys.executable, "-m", "dsh_host"]
ROOT = Path(__file__).resolve().parents[1]
LISTENING = re.compile(r"listening on (http://[\d.]+:\d+)")
#: A cursor deep in the list (the page query after it is the one every later page runs).
CURSOR = (2**40, "f" * 32)
MORE = re.compile(r"^\u2026 and ([\d,]+) more; use --limit or --all$")


class InvalidRunError(RuntimeError):
    """The run broke one of its own preconditions; nothing is reported."""


@dataclasses.dataclass(frozen=True)
class Template:
    """What storage holds for one real Session with one ``at`` reminder."""

    header: SessionHeader
    events: tuple[Event, ...]
    wakes: dict[str, int]
    board: dict[tuple[str, str], BoardEntry]
    name: str | None

    @property
    def at_ms(self) -> int:
        return min(self.wakes.values())


# -- the stores ----------------------------------------------------------------------------------


async def capture_template(folder: Path) -> Template:
    """One real Session, made by a person's message through the scripted model, as stored."""
    async with LiveHost(backend=SQLiteBackend(folder), model="scripted") as host:
        host.load_plugin("schedule", {"cold_delivery": True})
        agent = await host.create_session()
        agent.send(MESSAGE, time_zone="UTC")
        session = agent.session

        def ended() -> bool:
            return any(event.type == "turn/end" for event in session.events)

        await wait_until(ended, timeout=30)
        await agent.when_idle()
        if await host.sessions.flush(session) is not True:
            raise InvalidRunError("the template Session's flush was not acknowledged")
        sid = session.id
    backend = SQLiteBackend(folder)
    await backend.open()
    try:
        stored = await backend.load(sid)
        (summary,) = await session_page(backend, limit=2)
    finally:
        await backend.close()
    if stored is None or not isinstance(summary, StoredSummary):
        raise InvalidRunError("the template Session is not stored")
    creates = [
        event.data
        for event in stored.events
        if event.type == "schedule/change"
        and isinstance(event.data, dict)
        and event.data.get("operation") == "create"
    ]
    kinds = [c["schedule"]["kind"] for c in creates if isinstance(c.get("schedule"), dict)]  # type: ignore[index]
    if kinds != ["at"] or list(stored.wakes) != ["schedule"] or len(stored.board) != 1:
        raise InvalidRunError(
            f"the template is not one `at` reminder: creates {kinds}, wakes {stored.wakes}, "
            f"board {stored.board}"
        )
    if min(stored.wakes.values()) <= time.time() * 1000 + 3600_000:
        raise InvalidRunError("the template's reminder is due within the hour")
    return Template(stored.header, stored.events, stored.wakes, stored.board, summary.name)


def store_bytes(folder: Path) -> int:
    """The database file and its WAL (when there is one)."""
    return sum(
        path.stat().st_size
        for path in (folder / "dsh.sqlite3", folder / "dsh.sqlite3-wal")
        if path.exists()
    )


async def build(folder: Path, template: Template, count: int) -> dict[str, Any]:
    """``count`` copies of the template under new ids, through ``backend.append`` in batches."""
    backend = SQLiteBackend(folder)
    await backend.open()
    base = template.header.created_at - count  # the newest copy is the template's instant
    started = time.perf_counter()
    try:
        for start in range(0, count, BATCH):
            appends = []
            for index in range(start, min(count, start + BATCH)):
                sid = uuid.uuid4().hex
                header = dataclasses.replace(template.header, id=sid, created_at=base + index)
                appends.append(
                    backend.append(
                        Write(
                            sid,
                            0,
                            template.events,
                            header,
                            template.wakes,
                            board=template.board,
                            name=template.name,
                        ),
                    )
                )
            await asyncio.gather(*appends)
        seconds = time.perf_counter() - started
        commits = backend.commits
    finally:
        await backend.close()
    size = store_bytes(folder)
    return {
        "sessions": count,
        "build_s": round(seconds, 1),
        "sessions_per_s": round(count / seconds),
        "commits": commits,
        "store_bytes": size,
        "bytes_per_reminder": round(size / count),
    }


def check_disk(under: Path, count: int) -> None:
    free = shutil.disk_usage(under).free
    needed = count * BYTES_PER_SESSION * 2  # the store, and room for its WAL while building
    if free < needed:
        raise InvalidRunError(
            f"{free / 2**30:.1f} GiB free under {under}, {needed / 2**30:.1f} GiB wanted "
            f"for {count} Sessions"
        )


# -- the server at rest ----------------------------------------------------------------------------


class Server:
    """A real ``dsh serve`` on ``folder``; stdout read line by line, stderr to a file."""

    def __init__(self, folder: Path, log: Path) -> None:
        self.log = log.open("a")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                *DSH,
                "serve",
                "--data",
                str(folder),
                "--port",
                "0",
                "--model",
                "scripted",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self.url = ""

    def wait_listening(self, timeout: float = 600.0) -> float:
        """Seconds from the process start to its ``listening on`` line."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        for line in self.proc.stdout:
            match = LISTENING.search(line)
            if match:
                self.url = match.group(1)
                return time.perf_counter() - self.started
            if time.monotonic() > deadline:
                break
        raise InvalidRunError(
            f"dsh serve did not listen (exit {self.proc.poll()}); see {self.log.name}"
        )

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise InvalidRunError("no VmRSS for the server")

    def settled_rss_kib(self, every: float = 0.25, run: int = 8, limit: float = 30.0) -> int:
        """VmRSS once ``run`` samples in a row lie within 1 % of each other (or at ``limit``)."""
        samples: list[int] = []
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            samples.append(self.rss_kib())
            last = samples[-run:]
            if len(last) == run and max(last) <= min(last) * 1.01:
                break
            time.sleep(every)
        return samples[-1]

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(timeout=120) != 0:
            raise InvalidRunError(f"dsh serve stopped with {self.proc.returncode}")
        self.log.close()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=60)
        self.log.close()


@contextlib.contextmanager
def serving(folder: Path, log: Path) -> Iterator[Server]:
    server = Server(folder, log)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.kill()


def sessions_cli(folder: Path, count: int) -> float:
    """Seconds ``dsh sessions --data <folder>`` takes; it must print one page and the rest."""
    started = time.perf_counter()
    done = subprocess.run(
        [*DSH, "sessions", "--data", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    seconds = time.perf_counter() - started
    lines = done.stdout.splitlines()
    shown = min(count, PAGE)
    more = MORE.fullmatch(lines[-1]) if lines else None
    expected_more = count - shown
    if done.returncode != 0 or len(lines) != shown + (1 if expected_more else 0):
        raise InvalidRunError(f"dsh sessions printed {len(lines)} lines: {done.stderr[-2000:]}")
    if expected_more and (more is None or int(more.group(1).replace(",", "")) != expected_more):
        raise InvalidRunError(f"dsh sessions ended with {lines[-1]!r}")
    return seconds


def api_pages(url: str, count: int) -> tuple[float, float]:
    """Seconds of the first ``GET /api/sessions`` page and of the page after its cursor."""
    with httpx.Client(base_url=url, timeout=120) as client:
        started = time.perf_counter()
        first = client.get("/api/sessions")
        first_s = time.perf_counter() - started
        body = first.json()
        if first.status_code != 200 or len(body["sessions"]) != min(count, PAGE):
            raise InvalidRunError(
                f"GET /api/sessions answered {first.status_code}: {first.text[:500]}"
            )
        if (body["next"] is None) != (count <= PAGE):
            raise InvalidRunError(f"GET /api/sessions next is {body['next']!r}")
        started = time.perf_counter()
        second = client.get("/api/sessions", params={"after": body["next"]})
        second_s = time.perf_counter() - started
        if second.status_code != 200 or not second.json()["sessions"]:
            raise InvalidRunError(f"the second page answered {second.status_code}")
    return first_s, second_s


# -- the index -------------------------------------------------------------------------------------


async def query_plans(folder: Path) -> list[dict[str, Any]]:
    """The plans of the statements the backend runs for the wake index and the list."""
    backend = SQLiteBackend(folder)
    await backend.open()
    traced: dict[str, list[str]] = {}
    current: list[str] = []
    try:
        # Reads run on the backend's read thread and connection: trace that one.
        conn = await backend._read(backend._connection)  # noqa: SLF001 - a benchmark looks inside
        await backend._read(lambda: conn.set_trace_callback(current.append))  # noqa: SLF001
        for what, call in (
            ("earliest wake", backend.earliest_wake),
            ("due wakes", lambda: backend.due_wakes(int(time.time() * 1000), 1024)),
            ("list page", lambda: backend.list_page(limit=PAGE + 1)),
            (
                "list page after a cursor",
                lambda: backend.list_page(after=CURSOR, limit=PAGE + 1),
            ),
            ("count sessions", backend.count_sessions),
        ):
            current.clear()
            await call()
            traced[what] = [sql for sql in current if sql.lstrip().upper().startswith("SELECT")]
        await backend._read(lambda: conn.set_trace_callback(None))  # noqa: SLF001
    finally:
        await backend.close()
    plans = []
    reader = sqlite3.connect(f"{(folder / 'dsh.sqlite3').as_uri()}?mode=ro", uri=True)
    try:
        for what, statements in traced.items():
            for sql in statements:
                rows = reader.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
                detail = [str(row[-1]) for row in rows]
                scans = [d for d in detail if d.startswith("SCAN") and "USING" not in d]
                walks_whole = what == "count sessions"
                plans.append(
                    {
                        "query": what,
                        "sql": " ".join(sql.split()),
                        "plan": detail,
                        "indexed": not scans and (walks_whole or any("INDEX" in d for d in detail)),
                    }
                )
    finally:
        reader.close()
    return plans


# -- one size ------------------------------------------------------------------------------------


async def one_size(base: Path, template: Template, count: int) -> dict[str, Any]:
    folder = base / f"n{count}"
    marker = folder / "built.json"
    if marker.exists() and json.loads(marker.read_text()).get("sessions") == count:
        built = json.loads(marker.read_text())
        print(f"  reusing the store of {count} Sessions in {folder}", flush=True)
    else:
        shutil.rmtree(folder, ignore_errors=True)
        check_disk(base, count)
        print(f"  building {count} Sessions ...", flush=True)
        built = await build(folder, template, count)
        marker.write_text(json.dumps(built))
        print(f"  built: {built}", flush=True)
    log = base / f"serve-n{count}.log"
    with serving(folder, log) as server:
        boot_s = server.wait_listening()
        rss = server.settled_rss_kib()
        cli_live_s = sessions_cli(folder, count)
        first_s, second_s = api_pages(server.url, count)
        server.stop()
    cli_closed_s = sessions_cli(folder, count)
    with serving(folder, log) as server:
        again_s = server.wait_listening()
        server.kill()  # a crash: the next open checks the store whole
    with serving(folder, log) as server:
        crashed_s = server.wait_listening()
        crashed_rss = server.settled_rss_kib()
        server.stop()
    plans = await query_plans(folder)
    return {
        **built,
        "boot_s": round(boot_s, 2),
        "boot_again_s": round(again_s, 2),
        "boot_after_crash_s": round(crashed_s, 2),
        "rss_kib": rss,
        "rss_after_crash_boot_kib": crashed_rss,
        "sessions_cli_beside_server_s": round(cli_live_s, 3),
        "sessions_cli_alone_s": round(cli_closed_s, 3),
        "api_first_page_ms": round(first_s * 1000, 1),
        "api_next_page_ms": round(second_s * 1000, 1),
        "plans": plans,
    }


async def measure() -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        if KEEP:
            base = Path(KEEP)
            await asyncio.to_thread(base.mkdir, parents=True, exist_ok=True)
        else:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dsh-bench-rest-")))
        template = await capture_template(base / "template")
        shutil.rmtree(base / "template", ignore_errors=True)
        sizes = {}
        for count in SIZES:
            sizes[count] = await one_size(base, template, count)
            if not KEEP:
                shutil.rmtree(base / f"n{count}", ignore_errors=True)
        return {
            "template": {
                "events": [event.type for event in template.events],
                "event_bytes": sum(len(json.dumps(e.data)) for e in template.events),
                "board_rows": len(template.board),
                "name": template.name,
            },
            "sizes": sizes,
        }


def main() -> dict[str, Any]:
    _common.quiet_logs()
    measured = asyncio.run(measure())
    sizes = measured["sizes"]
    small, large = sizes[min(sizes)], sizes[max(sizes)]
    rss_ratio = _common.ratio(large["rss_kib"], small["rss_kib"])
    traced = [plan for size in sizes.values() for plan in size["plans"]]
    queries = {plan["query"] for plan in traced}
    # Every statement was seen (none may go untraced) and each searches an index.
    indexed = len(queries) == 5 and all(plan["indexed"] for plan in traced)
    paged = all(size["sessions"] > PAGE for size in sizes.values())
    rows = [
        [
            f"{n:,}",
            s["sessions_per_s"],
            s["bytes_per_reminder"],
            round(s["store_bytes"] / 2**20, 1),
            s["boot_s"],
            s["boot_after_crash_s"],
            round(s["rss_kib"] / 1024, 1),
            s["sessions_cli_beside_server_s"],
            s["sessions_cli_alone_s"],
            s["api_first_page_ms"],
            s["api_next_page_ms"],
        ]
        for n, s in sizes.items()
    ]
    plan_rows = [
        [f"{n:,}", plan["query"], " / ".join(plan["plan"]), "yes" if plan["indexed"] else "NO"]
        for n, s in sizes.items()
        for plan in s["plans"]
    ]
    largest = f"{max(sizes):,}"
    result = {
        "name": "rest",
        "title": f"At rest: {', '.join(f'{n:,}' for n in sizes)} cold Sessions with one pending "
        "reminder each (SQLite)",
        "params": {"sizes": list(sizes), "batch": BATCH, "message": MESSAGE},
        **measured,
        "tables": [
            {
                "title": "build, boot, memory and listing",
                "header": [
                    "Sessions",
                    "build Sessions/s",
                    "bytes per reminder",
                    "store MiB",
                    "boot s",
                    "boot after crash s",
                    "RSS at rest MiB",
                    "dsh sessions s (beside server)",
                    "dsh sessions s (alone)",
                    "GET /api/sessions ms",
                    "next page ms",
                ],
                "rows": rows,
            },
            {
                "title": "EXPLAIN QUERY PLAN of the backend's statements",
                "header": ["Sessions", "query", "plan", "index"],
                "rows": plan_rows,
            },
        ],
        "ratios": {"rss_largest_over_smallest": rss_ratio},
        "targets": [
            target(
                f"boot to listening at {largest} <= {BOOT_TARGET_S:g} s",
                f"{large['boot_s']} s",
                large["boot_s"] <= BOOT_TARGET_S,
                f"{large['boot_s'] - BOOT_TARGET_S:.2f} s over",
            ),
            target(
                f"RSS at rest at {largest} <= {RSS_RATIO_TARGET:g}x at {min(sizes):,}",
                f"{rss_ratio}x ({large['rss_kib'] / 1024:.1f} MiB / "
                f"{small['rss_kib'] / 1024:.1f} MiB)",
                rss_ratio is not None and rss_ratio <= RSS_RATIO_TARGET,
                f"{rss_ratio}x",
            ),
            target(
                "earliest wake, due wakes and list pages found through an index",
                "every plan searches an index" if indexed else "a plan scans a table",
                indexed,
                "see the plan table",
            ),
            target(
                "dsh sessions and GET /api/sessions answer one page",
                f"{PAGE} rows and how many more (dsh sessions "
                f"{large['sessions_cli_beside_server_s']} s, GET {large['api_first_page_ms']} ms "
                f"at {largest})",
                paged,
                "a store no larger than a page",
            ),
        ],
        "notes": [
            (
                "the template Session (a person's message through the scripted model) stores "
                f"{len(measured['template']['events'])} events "
                f"({measured['template']['event_bytes']} bytes of event data), one wake entry, "
                f"{measured['template']['board_rows']} board row and its name"
            ),
            (
                "boot after a crash checks the store whole (quick_check and the count of "
                "Sessions and events); a clean stop seals the store so that the next boot "
                "skips both"
            ),
        ],
    }
    result["met"] = all(item["met"] for item in result["targets"])
    return publish(result)


if __name__ == "__main__":
    main()
