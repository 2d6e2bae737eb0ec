"""Your data moves with you: ``dsh export`` and ``dsh import`` rates and memory at 10,000 and
100,000 Sessions, and how long ``dsh serve``'s requests are held while ``dsh backup`` copies a
1 GiB store.

**The stores.** One real Session is made first: a LiveHost on its own SQLite folder with the
Schedule plugin (``cold_delivery = true``) and the scripted model, sent "remind me in 2 seconds
to stretch" (zone UTC); it ends once the reminder was delivered (its ``dispatch`` and the
follow-up turn). What storage holds for it (header, events, wake entries, board rows, name) is
replicated under new random Session ids through ``SQLiteBackend.append``, thousands awaited at
once (``bench/rest.py``'s build), into one store per size (``TRANSFER_SMALL`` and
``TRANSFER_SESSIONS``).

**Export and import.** Each run is a child process of its own, the command a person runs:
``dsh export --data <store> --output <file>``, then ``dsh import <file> --data <new folder>``
(the built-in overlay: every event goes through the Schedule plugin's validation). Its wall
time gives the rate (events per second, the events the store holds), its peak resident memory
is the child's ``ru_maxrss`` (``os.wait4``). The imported store must then hold exactly the
Sessions and events of the source (counted with SQLite). Peak memory must not grow with the
store: the target compares the largest size with the smallest.

**Backup under load.** The largest store is grown to ``TRANSFER_BACKUP_BYTES`` (default 1 GiB)
by copying its Sessions under new ids inside SQLite (``INSERT ... SELECT``; header ids rewritten
so every copy decodes), then served by a real ``dsh serve --model scripted``. An HTTP client
(``bench/herd.py``'s probe) creates one Session, subscribes to its event stream and, starting a
request at most every 100 ms, times ``POST /api/sessions/{id}/messages`` until that Session's
``turn/start`` frame arrives (then waits for ``turn/end``), and ``GET /api/sessions``. It runs
first without a backup for ``TRANSFER_BASELINE_S`` seconds, then during ``TRANSFER_BACKUPS``
backups made one after the other by a child process running what ``dsh backup --data <store>
--to <file>`` runs (``dsh_host.cli._backup.backup`` with its default step and pause; each copy is
deleted before the next). The ratio is the message's p99 during the backups over its p99
without. The backups' own figures (seconds, steps, the longest step) and the server's ``-wal``
size after the last one are reported.

Targets: peak RSS of export and of import at the largest size <= 1.5x at the smallest; a
message's p99 during the backup <= 100 ms (the interactive target of ``bench/herd.py``).

Knobs: ``TRANSFER_SESSIONS`` (the largest size, default 100000), ``TRANSFER_SMALL`` (default
10000), ``TRANSFER_BACKUP_BYTES`` (default 1073741824), ``TRANSFER_BACKUPS`` (default 3),
``TRANSFER_BASELINE_S`` (default 15), ``TRANSFER_DIR`` (keep the stores there; default a
temporary folder, removed), ``TRANSFER_DSH`` (the command that runs dsh, default this
checkout's ``python -m dsh_host``). A smoke run: ``TRANSFER_SESSIONS=2000 TRANSFER_SMALL=500
TRANSFER_BACKUP_BYTES=50000000 TRANSFER_BACKUPS=1 TRANSFER_BASELINE_S=3``.

Run: ``.venv/bin/python bench/transfer.py``. Prints tables, writes JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dsh_host import LiveHost
from dsh_host.persistence import SQLiteBackend, StoredSummary, session_page
from dsh_host.testing import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
import herd
import rest
from _common import latency_summary, publish, ratio, target

LARGE = int(os.environ.get("TRANSFER_SESSIONS", "100000"))
SMALL = int(os.environ.get("TRANSFER_SMALL", "10000"))
BACKUP_BYTES = int(os.environ.get("TRANSFER_BACKUP_BYTES", str(2**30)))
BACKUPS = int(os.environ.get("TRANSFER_BACKUPS", "3"))
BASELINE_S = float(os.environ.get("TRANSFER_BASELINE_S", "15"))
KEEP = os.environ.get("TRANSFER_DIR")
DSH = shlex.split(os.environ.get("TRANSFER_DSH", "")) or [sys.executable, "-m", "dsh_host"]
ROOT = Path(__file__).resolve().parents[1]
MESSAGE = "remind me in 2 seconds to stretch"
STORE = "dsh.sqlite3"
RSS_RATIO_TARGET = 1.5
INTERACTIVE_MS = herd.TARGET_INTERACTIVE_MS
#: What the backup child runs: ``dsh backup``'s own call, its report as one JSON line.
BACKUP_CHILD = (
    "import dataclasses, json, sys\n"
    "from pathlib import Path\n"
    "from dsh_host.cli._backup import backup\n"
    "print('start', flush=True)\n"
    "report = backup(Path(sys.argv[1]), Path(sys.argv[2]))\n"
    "print(json.dumps({k: str(v) if isinstance(v, Path) else v\n"
    "                  for k, v in dataclasses.asdict(report).items()}))\n"
)


class InvalidRunError(RuntimeError):
    """The run broke one of its own preconditions; nothing is reported."""


# -- the stores ----------------------------------------------------------------------------------


async def capture_template(folder: Path) -> rest.Template:
    """One real Session whose reminder was set and delivered, as storage holds it."""
    async with LiveHost(backend=SQLiteBackend(folder), model="scripted") as host:
        host.load_plugin("schedule", {"cold_delivery": True})
        agent = await host.create_session()
        agent.send(MESSAGE, time_zone="UTC")
        session = agent.session

        def delivered() -> bool:
            dispatched = [i for i, e in enumerate(session.events) if herd.is_dispatch(e)]
            return bool(dispatched) and any(
                e.type == "turn/end" for e in session.events[dispatched[0] :]
            )

        await wait_until(delivered, timeout=60)
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
    return rest.Template(stored.header, stored.events, stored.wakes, stored.board, summary.name)


def counts(folder: Path) -> tuple[int, int]:
    """Sessions and events a store holds (read-only)."""
    conn = sqlite3.connect(f"{(folder / STORE).as_uri()}?mode=ro", uri=True)
    try:
        sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()
    return int(sessions), int(events)


def grow(folder: Path, size: int) -> dict[str, Any]:
    """Copy the store's Sessions under new ids inside SQLite until it holds ``size`` bytes."""
    started = time.perf_counter()
    conn = sqlite3.connect(folder / STORE, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(
            "CREATE TEMP TABLE base AS SELECT id, created_at FROM sessions ORDER BY created_at"
        )
        rounds = 0
        while store_size(conn) < size:
            rounds += 1
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DROP TABLE IF EXISTS temp.ids")
            conn.execute(
                "CREATE TEMP TABLE ids AS SELECT id AS old, lower(hex(randomblob(16))) AS new, "
                "created_at FROM base"
            )
            shift = rounds * 10**7  # milliseconds: every round newer than the last
            conn.execute(
                "INSERT INTO sessions (id, header, created_at, length) "
                "SELECT ids.new, replace(s.header, ids.old, ids.new), s.created_at + ?, s.length "
                "FROM sessions s JOIN ids ON s.id = ids.old",
                (shift,),
            )
            conn.execute(
                "INSERT INTO events (session_id, seq, type, time, data) "
                "SELECT ids.new, e.seq, e.type, e.time, e.data "
                "FROM events e JOIN ids ON e.session_id = ids.old"
            )
            conn.execute(
                "INSERT INTO names (session_id, name) SELECT ids.new, n.name "
                "FROM names n JOIN ids ON n.session_id = ids.old"
            )
            conn.execute(
                "INSERT INTO board (session_id, plugin, key, kind, at_ms, data) "
                "SELECT ids.new, b.plugin, b.key, b.kind, b.at_ms, "
                "replace(b.data, ids.old, ids.new) FROM board b JOIN ids ON b.session_id = ids.old"
            )
            conn.execute(
                "INSERT INTO wakes (session_id, plugin, at_ms) SELECT ids.new, w.plugin, w.at_ms "
                "FROM wakes w JOIN ids ON w.session_id = ids.old"
            )
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    # Grown behind dsh's back: the next open checks it whole (no seal), and the position
    # record, now behind the store, is harmless.
    (folder / f"{STORE}.clean").unlink(missing_ok=True)
    sessions, events = counts(folder)
    return {
        "rounds": rounds,
        "seconds": round(time.perf_counter() - started, 1),
        "bytes": (folder / STORE).stat().st_size,
        "sessions": sessions,
        "events": events,
    }


def store_size(conn: sqlite3.Connection) -> int:
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int(pages) * int(page_size)


# -- export and import, each in a child process ---------------------------------------------------


def child(args: list[str], what: str) -> tuple[float, int]:
    """Run ``dsh ARGS`` to its end: seconds and peak RSS in KiB (the child's ``ru_maxrss``)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*DSH, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    errors = proc.stderr.read()  # a few lines at most; read to the end before waiting
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise InvalidRunError(f"{what} exited with {proc.returncode}: {errors.decode()[-2000:]}")
    return seconds, int(usage.ru_maxrss)


def transfer(base: Path, template: rest.Template, count: int) -> dict[str, Any]:
    source = base / f"n{count}"
    marker = source / "built.json"
    if marker.exists() and json.loads(marker.read_text()).get("sessions") == count:
        built = json.loads(marker.read_text())
        print(f"  reusing the store of {count} Sessions in {source}", flush=True)
    else:
        shutil.rmtree(source, ignore_errors=True)
        rest.check_disk(base, count * 3)  # the store, its export and the imported store
        print(f"  building {count} Sessions ...", flush=True)
        built = asyncio.run(rest.build(source, template, count))
        marker.write_text(json.dumps(built))
    sessions, events = counts(source)
    exported = base / f"n{count}.jsonl"
    exported.unlink(missing_ok=True)
    print(f"  dsh export of {sessions} Sessions, {events} events ...", flush=True)
    export_s, export_kib = child(
        ["export", "--data", str(source), "--output", str(exported)], "dsh export"
    )
    lines = sum(1 for _ in exported.open("rb"))
    if lines <= sessions:  # a header line, then at least one line per Session
        raise InvalidRunError(f"the export has {lines} lines for {sessions} Sessions")
    target_folder = base / f"n{count}-imported"
    shutil.rmtree(target_folder, ignore_errors=True)
    print("  dsh import ...", flush=True)
    import_s, import_kib = child(
        ["import", str(exported), "--data", str(target_folder)], "dsh import"
    )
    if counts(target_folder) != (sessions, events):
        raise InvalidRunError(
            f"the import holds {counts(target_folder)}, the source {(sessions, events)}"
        )
    result = {
        "sessions": sessions,
        "events": events,
        "store_bytes": rest.store_bytes(source),
        "export_bytes": exported.stat().st_size,
        "export_s": round(export_s, 2),
        "export_events_per_s": round(events / export_s),
        "export_peak_rss_kib": export_kib,
        "import_s": round(import_s, 2),
        "import_events_per_s": round(events / import_s),
        "import_peak_rss_kib": import_kib,
    }
    exported.unlink()
    shutil.rmtree(target_folder, ignore_errors=True)
    print(f"  {result}", flush=True)
    return result


# -- backup under load -------------------------------------------------------------------------


async def probe_for(probe: herd.Probe, done: asyncio.Event) -> tuple[list[float], list[float]]:
    """The probe's message and list samples from now until ``done``."""
    probe.message_s, probe.list_s = [], []
    await probe.run(time.time(), done)
    return probe.message_s, probe.list_s


async def one_backup(
    probe: herd.Probe, folder: Path, copy: Path
) -> tuple[dict[str, Any], list[float], list[float]]:
    """One backup by a child process while the probe samples (from the child's "start" line to
    its exit): its report and the samples."""
    await asyncio.to_thread(copy.unlink, missing_ok=True)
    done = asyncio.Event()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        BACKUP_CHILD,
        str(folder),
        str(copy),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    started = await asyncio.wait_for(proc.stdout.readline(), herd.SETTLE)
    if started.strip() != b"start":
        raise InvalidRunError(f"the backup child said {started!r}")

    async def finished() -> tuple[bytes, bytes]:
        try:
            return await proc.communicate()
        finally:
            done.set()

    (messages, lists), (out, err) = await asyncio.gather(probe_for(probe, done), finished())
    if proc.returncode != 0:
        raise InvalidRunError(f"the backup failed: {err.decode()[-2000:]}")
    await asyncio.to_thread(copy.unlink)
    return json.loads(out.decode().splitlines()[-1]), messages, lists


async def backups_under_load(folder: Path, base: Path) -> dict[str, Any]:
    log = base / "serve-backup.log"
    with rest.serving(folder, log) as server:
        boot_s = await asyncio.to_thread(server.wait_listening)
        probe = herd.Probe(server.url)
        try:
            await probe.setup()
            done = asyncio.Event()
            asyncio.get_running_loop().call_later(BASELINE_S, done.set)
            baseline_msg, baseline_list = await probe_for(probe, done)
            reports = []
            during_msg: list[float] = []
            during_list: list[float] = []
            for n in range(BACKUPS):
                copy = base / f"backup-{n}.sqlite3"
                report, messages, lists = await one_backup(probe, folder, copy)
                reports.append(report)
                during_msg += messages
                during_list += lists
            wal = folder / f"{STORE}-wal"
            wal_bytes = wal.stat().st_size if wal.exists() else 0
            errors = dict(probe.errors)
        finally:
            await probe.close()
        server.stop()
    return {
        "boot_s": round(boot_s, 1),
        "baseline": {
            "message_to_turn_start": latency_summary(baseline_msg),
            "list_sessions": latency_summary(baseline_list),
        },
        "during": {
            "message_to_turn_start": latency_summary(during_msg),
            "list_sessions": latency_summary(during_list),
        },
        "backups": reports,
        "wal_bytes_after": wal_bytes,
        "probe_errors": errors,
    }


# -- the run ---------------------------------------------------------------------------------------


def measure() -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        if KEEP:
            base = Path(KEEP)
            base.mkdir(parents=True, exist_ok=True)
        else:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dsh-bench-xfer-")))
        shutil.rmtree(base / "template", ignore_errors=True)
        template = asyncio.run(capture_template(base / "template"))
        shutil.rmtree(base / "template", ignore_errors=True)
        sizes = {count: transfer(base, template, count) for count in sorted({SMALL, LARGE})}
        largest = base / f"n{LARGE}"
        free = shutil.disk_usage(base).free
        if free < BACKUP_BYTES * 3:  # the store, one copy, the server's WAL
            raise InvalidRunError(f"{free / 2**30:.1f} GiB free under {base}")
        print(f"  growing the store of {LARGE} Sessions to {BACKUP_BYTES:,} bytes ...", flush=True)
        grown = grow(largest, BACKUP_BYTES)
        print(f"  grown: {grown}", flush=True)
        (largest / "built.json").unlink(missing_ok=True)  # no longer the store of LARGE
        print(f"  {BACKUPS} backups under load ...", flush=True)
        under_load = asyncio.run(backups_under_load(largest, base))
        return {
            "template": {
                "events": [event.type for event in template.events],
                "wakes": len(template.wakes),
                "board_rows": len(template.board),
            },
            "sizes": sizes,
            "grown": grown,
            "backup": under_load,
        }


def mib(kib: int) -> float:
    return round(kib / 1024, 1)


def main() -> dict[str, Any]:
    _common.quiet_logs()
    measured = measure()
    sizes = measured["sizes"]
    small, large = sizes[min(sizes)], sizes[max(sizes)]
    export_growth = ratio(large["export_peak_rss_kib"], small["export_peak_rss_kib"])
    import_growth = ratio(large["import_peak_rss_kib"], small["import_peak_rss_kib"])
    load = measured["backup"]
    p99_without = load["baseline"]["message_to_turn_start"]["p99_ms"]
    p99_during = load["during"]["message_to_turn_start"]["p99_ms"]
    held = ratio(p99_during, p99_without)
    list_held = ratio(
        load["during"]["list_sessions"]["p99_ms"], load["baseline"]["list_sessions"]["p99_ms"]
    )
    grown = measured["grown"]
    gib = grown["bytes"] / 2**30
    rows = [
        [
            f"{n:,}",
            f"{s['events']:,}",
            round(s["store_bytes"] / 2**20, 1),
            round(s["export_bytes"] / 2**20, 1),
            s["export_s"],
            f"{s['export_events_per_s']:,}",
            mib(s["export_peak_rss_kib"]),
            s["import_s"],
            f"{s['import_events_per_s']:,}",
            mib(s["import_peak_rss_kib"]),
        ]
        for n, s in sizes.items()
    ]
    probe_rows = [
        [phase, what, *(load[phase][key][stat] for stat in herd.STATS)]
        for phase in ("baseline", "during")
        for what, key in (
            ("POST message -> turn/start", "message_to_turn_start"),
            ("GET /api/sessions", "list_sessions"),
        )
    ]
    backup_rows = [
        [
            n + 1,
            round(r["seconds"], 2),
            r["steps"],
            round(r["longest_step"] * 1000, 1),
            round(r["size"] / 2**20),
        ]
        for n, r in enumerate(load["backups"])
    ]
    largest = f"{max(sizes):,}"
    result = {
        "name": "transfer",
        "title": f"Export and import at {', '.join(f'{n:,}' for n in sizes)} Sessions; "
        f"dsh serve during a backup of a {gib:.2f} GiB store",
        "params": {
            "sizes": list(sizes),
            "backup_bytes": BACKUP_BYTES,
            "backups": BACKUPS,
            "baseline_s": BASELINE_S,
            "message": MESSAGE,
            "dsh": DSH,
        },
        **measured,
        "tables": [
            {
                "title": "dsh export and dsh import (each its own child process)",
                "header": [
                    "Sessions",
                    "events",
                    "store MiB",
                    "export MiB",
                    "export s",
                    "export events/s",
                    "export peak RSS MiB",
                    "import s",
                    "import events/s",
                    "import peak RSS MiB",
                ],
                "rows": rows,
            },
            {
                "title": f"dsh serve's requests without and during backups of {gib:.2f} GiB, ms",
                "header": ["phase", "request", *herd.STATS],
                "rows": probe_rows,
            },
            {
                "title": "the backups (default step and pause)",
                "header": ["backup", "seconds", "steps", "longest step ms", "copy MiB"],
                "rows": backup_rows,
            },
        ],
        "ratios": {
            "export_peak_rss_largest_over_smallest": export_growth,
            "import_peak_rss_largest_over_smallest": import_growth,
            "message_p99_during_backup_over_without": held,
            "list_p99_during_backup_over_without": list_held,
        },
        "targets": [
            target(
                f"dsh export peak RSS at {largest} <= {RSS_RATIO_TARGET:g}x at {min(sizes):,}",
                f"{export_growth}x ({mib(large['export_peak_rss_kib'])} MiB / "
                f"{mib(small['export_peak_rss_kib'])} MiB)",
                export_growth is not None and export_growth <= RSS_RATIO_TARGET,
                f"{export_growth}x",
            ),
            target(
                f"dsh import peak RSS at {largest} <= {RSS_RATIO_TARGET:g}x at {min(sizes):,}",
                f"{import_growth}x ({mib(large['import_peak_rss_kib'])} MiB / "
                f"{mib(small['import_peak_rss_kib'])} MiB)",
                import_growth is not None and import_growth <= RSS_RATIO_TARGET,
                f"{import_growth}x",
            ),
            target(
                f"a message's p99 during a backup of {gib:.2f} GiB <= {INTERACTIVE_MS:g} ms",
                f"{p99_during} ms ({held}x the {p99_without} ms without)",
                p99_during <= INTERACTIVE_MS,
                f"{p99_during - INTERACTIVE_MS:.1f} ms over",
            ),
        ],
        "notes": [
            (
                f"the template Session stores {len(measured['template']['events'])} events "
                f"({', '.join(measured['template']['events'])}); wake entries: "
                f"{measured['template']['wakes']}, board rows: {measured['template']['board_rows']}"
            ),
            (
                f"the backup store: the {largest} Sessions copied {grown['rounds']} times inside "
                f"SQLite ({grown['sessions']:,} Sessions, {grown['events']:,} events, "
                f"{grown['seconds']} s); dsh serve checked it whole at boot "
                f"({load['boot_s']} s)"
            ),
            (
                f"the server's -wal after the last backup: {load['wal_bytes_after']:,} bytes "
                "(a held snapshot keeps checkpoints from recycling it until the backup ends)"
            ),
            f"probe errors: {load['probe_errors']}",
        ],
    }
    result["met"] = all(item["met"] for item in result["targets"])
    return publish(result)


if __name__ == "__main__":
    main()
