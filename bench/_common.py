"""Helpers shared by the benchmark scripts: table printing, JSON results, machine facts,
percentiles, quiet logs, and the APScheduler baseline (engine with the same SQLite settings
as ours, and the job every baseline job runs)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import os
import platform
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dsh_host import Detached, Opened

RESULTS = Path(__file__).resolve().parent / "results"


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [header, *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for index, row in enumerate(cells):
        print("  " + "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            print("  " + "  ".join("-" * width for width in widths))


def emit(result: dict[str, Any]) -> Path:
    """Write ``results/<name>.json``, stamped with the run id (set by run.py) and the time."""
    RESULTS.mkdir(exist_ok=True)
    result.setdefault("run", os.environ.get("DSH_BENCH_RUN"))
    result.setdefault("finished_at", dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    path = RESULTS / f"{result['name']}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return path


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
    }


# -- numbers -------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """min / p50 / p90 / p99 / max / mean of ``seconds``, in milliseconds rounded to 0.01."""
    ms = [s * 1000 for s in seconds]
    if not ms:  # every key, so a report of an empty sample (all runs missed) still renders
        keys = ("min_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms")
        return {"n": 0, **dict.fromkeys(keys, math.nan)}
    return {
        "n": len(ms),
        "min_ms": round(min(ms), 2),
        "p50_ms": round(percentile(ms, 50), 2),
        "p90_ms": round(percentile(ms, 90), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "max_ms": round(max(ms), 2),
        "mean_ms": round(sum(ms) / len(ms), 2),
    }


def rate_figures(latencies: Sequence[float], elapsed: float, cpu: float) -> dict[str, Any]:
    """The figures of one measured batch of creates: how many, in how many seconds, the rate,
    the latency summary and the process CPU time per create."""
    count = len(latencies)
    return {
        "creates": count,
        "seconds": round(elapsed, 3),
        "per_second": round(count / elapsed),
        "latency": latency_summary(latencies),
        "cpu_us_per_create": round(cpu / count * 1e6),
    }


async def drain_loop(timeout: float = 30.0) -> None:
    """Bounded wait until every callback already queued on the running loop has run (e.g. the
    wakeups APScheduler queues with ``call_soon_threadsafe`` on each ``add_job``): the loop runs
    its ready queue in order, so a marker queued now runs after all of them."""
    from dsh_host.testing import wait_until

    ran: list[bool] = []
    asyncio.get_running_loop().call_soon(ran.append, True)
    await wait_until(lambda: ran, timeout=timeout)


def ratio(numerator: float, denominator: float, digits: int = 2) -> float | None:
    if denominator == 0 or math.isnan(numerator) or math.isnan(denominator):
        return None
    return round(numerator / denominator, digits)


def target(text: str, measured: str, met: bool, gap: str = "") -> dict[str, Any]:
    """One checked target: what was asked, what was measured, and the gap when missed."""
    return {"target": text, "measured": measured, "met": bool(met), "gap": "" if met else gap}


def report(result: dict[str, Any]) -> None:
    """Print every table and target of a result (the console half of a benchmark)."""
    for table in result.get("tables", []):
        print_table(table["title"], table["header"], table["rows"])
    for name, value in result.get("ratios", {}).items():
        print(f"  ratio {name} = {value}")
    for item in result.get("targets", []):
        verdict = "met" if item["met"] else f"NOT met ({item['gap']})"
        print(f"  target: {item['target']}: {item['measured']} -> {verdict}")


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
    return "\n".join(lines)


def quiet_logs() -> None:
    """Host logs at warning level (as ``dsh sessions`` does): per-event info lines would cost
    both sides time; APScheduler's stdlib logging stays at its default (warning) too."""
    from dsh_host import _logging

    _logging.configure(json=True, level="warning")


# -- the APScheduler baseline ------------------------------------------------------------------

#: The SQLAlchemy engine the baseline jobs commit through (set by :func:`aps_engine`).
APS_ENGINE: Any = None
#: The ``fired`` table the baseline jobs insert into.
APS_FIRED: Any = None
#: job number -> time.time() right after the job's own COMMIT returned.
APS_DONE: dict[int, float] = {}
APS_LOCK = threading.Lock()


def aps_engine(path: Path) -> Any:
    """A SQLAlchemy engine on ``path`` with WAL and ``synchronous=FULL`` on every connection
    (the same settings as our SQLiteBackend), plus the ``fired`` table the jobs write."""
    global APS_ENGINE, APS_FIRED
    import sqlalchemy as sa

    engine = sa.create_engine(f"sqlite:///{path}")

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.close()

    metadata = sa.MetaData()
    fired = sa.Table(
        "fired",
        metadata,
        sa.Column("job", sa.Integer, primary_key=True),
        sa.Column("at", sa.Float, nullable=False),
    )
    metadata.create_all(engine)
    with engine.connect() as conn:
        mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
        sync = conn.exec_driver_sql("PRAGMA synchronous").scalar()
    assert str(mode).lower() == "wal" and sync == 2, (mode, sync)  # 2 = FULL
    APS_ENGINE, APS_FIRED = engine, fired
    APS_DONE.clear()
    return engine


def aps_job(job_no: int) -> None:
    """A baseline job: insert and commit one row, then note when the commit returned."""
    with APS_ENGINE.begin() as conn:
        conn.execute(APS_FIRED.insert().values(job=job_no, at=time.time()))
    done = time.time()
    with APS_LOCK:
        APS_DONE[job_no] = done


def aps_scheduler(engine: Any) -> Any:
    """An AsyncIOScheduler (not started) whose one job store is SQLAlchemy on ``engine``.

    Jobs are never dropped for lateness (``misfire_grace_time=None``), so a late job shows up
    as lateness instead of silently disappearing.
    """
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    return AsyncIOScheduler(
        jobstores={"default": SQLAlchemyJobStore(engine=engine)},
        job_defaults={"misfire_grace_time": None, "coalesce": False},
        timezone=dt.UTC,
    )


def utc(epoch_seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch_seconds, dt.UTC)


def publish(result: dict[str, Any]) -> dict[str, Any]:
    """Print a benchmark's tables, targets and notes, write its JSON, and return it."""
    print(f"\n{result['title']}")
    report(result)
    for note in result.get("notes", ()):
        print(f"  note: {note}")
    emit(result)
    return result


# -- the machine's CPUs --------------------------------------------------------------------------


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat; (0, 0) without it."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return (0, 0)
    ticks = [int(value) for value in fields[1:]]
    idle = sum(ticks[3:5])  # idle + iowait
    return (sum(ticks) - idle, sum(ticks))


def busy_share(before: tuple[int, int]) -> float:
    """The share (0-1) of all CPUs' time spent busy since ``before`` (:func:`cpu_jiffies`)."""
    busy, total = cpu_jiffies()
    elapsed = total - before[1]
    return round((busy - before[0]) / elapsed, 3) if elapsed > 0 else math.nan


# -- cold Sessions (cold.py, memory.py) --------------------------------------------------------


async def reminder_session(host: Any, after_seconds: int, prompt: str) -> tuple[str, str, int]:
    """A new Session whose root Agent creates one reminder through the full tool pipeline:
    ``(session id, reminder id, scheduledAt in epoch ms)``."""
    from dsh_schedule import parse_instant

    agent = await host.create_session()
    value = await agent.execute_tool(
        "schedule_create", {"prompt": prompt, "after_seconds": after_seconds}
    )
    assert isinstance(value, dict) and "id" in value, value
    return agent.session.id, str(value["id"]), parse_instant(value["scheduledAt"])


class LiveCount:
    """How many Sessions are live on a host now, and the most since :attr:`peak` was set
    (Opened and Detached subscriptions: no scan of the live set)."""

    def __init__(self, host: Any) -> None:
        self.now = len(host.sessions.live())
        self.peak = self.now
        host.sessions.subscribe(self._observe, (Opened, Detached))

    def _observe(self, observation: Opened | Detached) -> None:
        if isinstance(observation, Opened):
            self.now += 1
            self.peak = max(self.peak, self.now)
        else:
            self.now -= 1
