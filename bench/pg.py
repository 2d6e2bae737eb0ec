"""PostgreSQL create throughput: ours beside APScheduler 3 on the same server, and two hosts
beside one.

One throwaway PostgreSQL cluster (tests/pg.py: Debian's server on 127.0.0.1, its data in a
temporary folder, default settings) serves the whole run; every side of every round gets a
fresh database on it. ``synchronous_commit`` is left on (the default, checked at start) and so
is ``fsync``: a commit is acknowledged after its WAL record is flushed to disk.

Ours: 100 live Sessions on one PostgresBackend (appends committed in groups, one transaction
for the flushes waiting at once). All 100 root Agents at once each run 20 ``schedule_create``
calls one after the other through the full tool pipeline (``tool/call`` record, schema check,
the Agent's schedule FIFO, preflight flush, create append, barrier flush, ``tool/result``
record). A create counts when its tool call returned the record view, i.e. after its barrier
flush was committed. The host holds a lease on every Session it created (issue 11 item 5).

APScheduler: a running ``AsyncIOScheduler`` with a ``SQLAlchemyJobStore`` on its own fresh
database of the same server (``postgresql+psycopg``, SQLAlchemy's default pool),
``add_job(..., "date")`` a day ahead; a job counts when ``add_job`` returned (its INSERT is
committed). ``add_job`` is synchronous, so it is measured both ways a user could call it from
100 concurrent asyncio tasks: directly on the event loop (yielding between calls), and through
``asyncio.to_thread``. The APScheduler ratio uses the faster of the two.

Two hosts against one: the same workload (100 Sessions x 20 creates) run by one OS process
(one LiveHost, one PostgresBackend) and split across two OS processes (each its own LiveHost and
PostgresBackend on one shared fresh database, each owning 50 Sessions it created itself, so
their leases never contend). Every process sets up and warms up, says it is ready, and waits
for one "go" line the parent writes to all of them at once; each reports its count and its
start and end on the system-wide monotonic clock. The rate is all creates over (last end -
first start). Both of these sides run in child processes, so neither pays for the other's
process boundary.

The server, the hosts and APScheduler share one machine: with few CPUs, two hosts plus the
server compete for the same cores and the two-host figure measures that contention as much
as the database. The table gives the CPU count and how busy all CPUs were during each side
(from /proc/stat); the workload is the same whatever the machine.

Every side runs 5 rounds, one per side, rotating the order so that each side runs once in every
position; the median round is reported beside every round's rate; warm-ups (2 creates per
Session) are excluded.
Targets: ours >= 3x APScheduler; two hosts >= 1.6x one host.

Run: ``.venv/bin/python bench/pg.py`` (or ``make bench``). Prints a table, writes JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg

from dsh_host import LiveHost
from dsh_host.persistence import PostgresBackend
from dsh_host.testing import wait_until

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common
from _common import publish, rate_figures, ratio, target
from throughput import apscheduler_on, creates, median_round, settled

SESSIONS = 100
PER_SESSION = 20
WARMUP_PER_SESSION = 2
HOSTS = 2
DAY = 86_400
TARGET_APS = 3.0
TARGET_HOSTS = 1.6
ROUNDS = 5  # one per side: with the rotation, every side runs once in every position
SETTLE = 60.0  # seconds: the bound of every wait for a host, a child or the scheduler
READY, GO = "ready", "go"


async def host_run(
    url: str, sessions: int, per_session: int, go: Callable[[], Awaitable[None]]
) -> dict[str, Any]:
    """One LiveHost on ``url`` creates ``sessions`` Sessions, warms up, awaits ``go``, then runs
    ``per_session`` creates in every Session at once; its figures and monotonic start/end."""
    backend = PostgresBackend(url)
    async with LiveHost(backend=backend) as host:
        host.load_plugin("schedule")
        agents = [await host.create_session() for _ in range(sessions)]
        latencies: list[float] = []
        await asyncio.gather(*(creates(a, WARMUP_PER_SESSION) for a in agents))
        await wait_until(lambda: settled(host, agents), timeout=SETTLE)  # post-create drives
        await go()
        commits, appends = backend.commits, backend.appends
        cpu, ticks = time.process_time(), _common.cpu_jiffies()
        started = time.monotonic()
        await asyncio.gather(*(creates(a, per_session, latencies) for a in agents))
        ended = time.monotonic()
        cpu, busy = time.process_time() - cpu, _common.busy_share(ticks)
        commits, appends = backend.commits - commits, backend.appends - appends
    return {
        **rate_figures(latencies, ended - started, cpu),
        "started": started,
        "ended": ended,
        "machine_cpu_busy": busy,
        "commits": commits,
        "appends": appends,
        "appends_per_commit": ratio(appends, commits),
    }


async def apscheduler(url: str, mode: str) -> dict[str, Any]:
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    return await apscheduler_on(engine, mode)  # the same workload as bench/throughput.py's


# -- host processes ------------------------------------------------------------------------------


async def child(url: str, sessions: int) -> None:
    """A child process: one LiveHost's run; ``ready`` then its figures as JSON lines on stdout."""

    async def go() -> None:
        print(READY, flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        assert line.strip() == GO, line

    figures = await host_run(url, sessions, PER_SESSION, go)
    print(json.dumps(figures), flush=True)


async def hosts(url: str, count: int) -> dict[str, Any]:
    """``count`` host processes on ``url`` share the workload, started together."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    share = SESSIONS // count
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--child",
            url,
            str(share),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        for _ in range(count)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), SETTLE)
            assert line.decode().strip() == READY, line
        for proc in procs:  # the barrier: every child is waiting on this line
            assert proc.stdin is not None
            proc.stdin.write(f"{GO}\n".encode())
        await asyncio.gather(*(proc.stdin.drain() for proc in procs if proc.stdin))
        runs = []
        for proc in procs:
            out, _ = await asyncio.wait_for(proc.communicate(), SETTLE)
            assert proc.returncode == 0, proc.returncode
            runs.append(json.loads(out))
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    creates = sum(run["creates"] for run in runs)
    assert creates == SESSIONS * PER_SESSION, creates
    elapsed = max(run["ended"] for run in runs) - min(run["started"] for run in runs)
    return {
        "creates": creates,
        "seconds": round(elapsed, 3),
        "per_second": round(creates / elapsed),
        "start_spread_ms": round(
            (max(r["started"] for r in runs) - min(r["started"] for r in runs)) * 1000, 2
        ),
        "latency_p50_ms": [run["latency"]["p50_ms"] for run in runs],
        "latency_p99_ms": [run["latency"]["p99_ms"] for run in runs],
        "cpu_us_per_create": [run["cpu_us_per_create"] for run in runs],
        "machine_cpu_busy": max(run["machine_cpu_busy"] for run in runs),
        "processes": runs,
    }


# -- the run -----------------------------------------------------------------------------------

SIDES = ("ours", "aps_loop", "aps_thread", "one_host", "two_hosts")
LABELS = {
    "ours": "dsh-schedule (schedule_create, both barriers)",
    "aps_loop": "APScheduler add_job on the loop",
    "aps_thread": "APScheduler add_job via asyncio.to_thread",
    "one_host": "dsh-schedule, 1 host process x 100 Sessions",
    "two_hosts": "dsh-schedule, 2 host processes x 50 Sessions",
}


def server_facts(url: str) -> dict[str, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        facts = {
            name: str(conn.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
            for name in ("server_version", "synchronous_commit", "fsync", "wal_sync_method")
        }
    assert facts["synchronous_commit"] == "on" and facts["fsync"] == "on", facts
    return facts


async def side(name: str, url: str) -> dict[str, Any]:
    async def now() -> None:
        return None

    if name == "ours":
        return await host_run(url, SESSIONS, PER_SESSION, now)
    if name.startswith("aps_"):
        return await apscheduler(url, name.removeprefix("aps_"))
    return await hosts(url, 1 if name == "one_host" else HOSTS)


async def measure(cluster: Any) -> dict[str, list[dict[str, Any]]]:
    """ROUNDS rounds; each runs every side once (rotating which goes first) on a fresh
    database, so a busy machine hurts every side alike."""
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in SIDES}
    for index in range(ROUNDS):
        shift = index % len(SIDES)
        for name in SIDES[shift:] + SIDES[:shift]:
            rounds[name].append(await side(name, cluster.new_database()))
    return rounds


def _cell(value: Any) -> str:
    """A figure, or one figure per host process joined by " / "."""
    return " / ".join(map(str, value)) if isinstance(value, list) else str(value)


def _cpu_note(one: dict[str, Any], two: dict[str, Any], cpus: int | None) -> str:
    """How busy the machine was in the median one-host and two-host rounds, and what a
    saturated machine means for the two-host ratio."""
    shares = [round(side["machine_cpu_busy"] * 100) for side in (one, two)]
    text = f"all {cpus} CPUs were {shares[0]}% busy with one host, {shares[1]}% with two"
    if shares[1] >= 90:
        return text + ": the two hosts and the server were CPU-bound on this machine"
    return text


def main() -> dict[str, Any]:
    _common.quiet_logs()
    sys.path.insert(0, str(HERE.parent))
    from tests.pg import Cluster

    cluster = Cluster()
    try:
        server = server_facts(cluster.url())
        rounds = asyncio.run(measure(cluster))
    finally:
        cluster.stop()
    median = {name: median_round(rounds[name]) for name in SIDES}
    mine = median["ours"]
    best_side = max(("aps_loop", "aps_thread"), key=lambda name: median[name]["per_second"])
    best = median[best_side]["per_second"]
    speedup = ratio(mine["per_second"], best)
    aps_met = speedup is not None and speedup >= TARGET_APS
    one, two = median["one_host"]["per_second"], median["two_hosts"]["per_second"]
    scale = ratio(two, one)
    hosts_met = scale is not None and scale >= TARGET_HOSTS
    cpus = os.cpu_count()

    def row(name: str) -> list[Any]:
        chosen = median[name]
        lat = chosen.get("latency", {})
        return [
            LABELS[name],
            chosen["per_second"],
            " / ".join(str(r["per_second"]) for r in rounds[name]),
            _cell(lat.get("p50_ms", chosen.get("latency_p50_ms"))),
            _cell(lat.get("p99_ms", chosen.get("latency_p99_ms"))),
            _cell(chosen["cpu_us_per_create"]),
            f"{round(chosen['machine_cpu_busy'] * 100)}%",
        ]

    result = {
        "name": "pg",
        "title": (
            f"PostgreSQL create throughput: {SESSIONS} concurrent Sessions x {PER_SESSION} "
            f"creates, synchronous_commit=on, one host and two (median of {ROUNDS} rounds)"
        ),
        "params": {
            "sessions": SESSIONS,
            "per_session": PER_SESSION,
            "hosts": HOSTS,
            "after_seconds": DAY,
            "rounds": ROUNDS,
            "cpus": cpus,
        },
        "server": server,
        "median": median,
        "rounds": rounds,
        "tables": [
            {
                "title": "acknowledged creates per second (median round; every round listed)",
                "header": [
                    "",
                    "creates/s",
                    "rounds creates/s",
                    "p50 ms",
                    "p99 ms",
                    "CPU µs/create",
                    f"all {cpus} CPUs busy",
                ],
                "rows": [row(name) for name in SIDES],
            }
        ],
        "ratios": {"ours_over_best_apscheduler": speedup, "two_hosts_over_one": scale},
        "notes": [
            (
                f"PostgreSQL {server['server_version']} on 127.0.0.1, synchronous_commit="
                f"{server['synchronous_commit']}, fsync={server['fsync']}, wal_sync_method="
                f"{server['wal_sync_method']}; {cpus} CPUs shared by the server and the clients"
            ),
            (
                f"ours (median round): {mine['commits']} PostgreSQL commits carried "
                f"{mine['appends']} Session appends ({mine['appends_per_commit']} per commit)"
            ),
            (
                "host processes: per-process p50/p99 ms and CPU µs/create are listed one per "
                "process; the processes started within "
                f"{median['two_hosts']['start_spread_ms']} ms of each other (median round)"
            ),
            _cpu_note(median["one_host"], median["two_hosts"], cpus),
            (
                "CPU µs/create is the client process's CPU time (all threads) over its creates; "
                "the server's CPU is not in it but is in the all-CPUs-busy share (/proc/stat)"
            ),
        ],
        "targets": [
            target(
                f"ours >= {TARGET_APS:g}x APScheduler on PostgreSQL",
                f"{mine['per_second']}/s vs {best}/s ({LABELS[best_side]}) = {speedup}x",
                aps_met,
                f"{speedup}x, {TARGET_APS - (speedup or 0):.2f}x short",
            ),
            target(
                f"two hosts >= {TARGET_HOSTS:g}x one host on one PostgreSQL database",
                f"{two}/s vs {one}/s = {scale}x on {cpus} CPUs",
                hosts_met,
                f"{scale}x, {TARGET_HOSTS - (scale or 0):.2f}x short",
            ),
        ],
        "met": aps_met and hosts_met,
    }
    return publish(result)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _common.quiet_logs()
        asyncio.run(child(sys.argv[2], int(sys.argv[3])))
    else:
        main()
