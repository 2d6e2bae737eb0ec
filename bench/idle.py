"""Idle cost: 10,000 live root Agents, each holding one reminder a day away.

Three measurements, each on its own host (persistence is the in-memory backend: idle owners
never touch storage, which the counts below check):

1. Wakeups, on a ManualClock: every timer the host arms goes through a counting wrapper of the
   clock's ``call_later``. After the creates settle, the clock advances 5 simulated minutes,
   one at a time; per minute we count owner timer callbacks (``ScheduleOwner._on_timer``),
   any other timer callback, flushes, Session appends, storage writes and asyncio tasks created.
   Target: at most one wakeup per owner per segment (``max_segment_seconds`` = 60), nothing else.
2. Memory, on the real clock: tracemalloc traces the creation of the 10,000 Agents with the
   plugin loaded; snapshot; unload the plugin (which disposes every owner: timer, tools, idle
   callback, fold cache) and clear ``parse_instant``'s bounded cache; snapshot again. The
   difference, divided by 10,000, is what the owners hold: the owner object and its FIFO lock,
   its asyncio TimerHandle, the Session's incremental fold (with the parsed record), the three
   tool registrations, the cleanup closure and the plugin's per-Agent map entries. Session logs
   are not included (they belong to the Session and stay). Target: <= 2 KiB per owner.
3. CPU while idle, on the real clock and loop: process CPU time (``time.process_time`` and
   ``os.times``) over 60 s of real time with the plugin loaded (every owner wakes once in that
   interval), then over 20 s after unloading it, both per minute. The counting wrapper stays on
   (one extra Python call per timer callback).

Run: ``.venv/bin/python bench/idle.py`` (or ``make bench``). Prints tables, writes JSON.
"""

from __future__ import annotations

import asyncio
import gc
import linecache
import os
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh_host import Appended, LiveHost, SystemClock
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until
from dsh_schedule import parse_instant
from dsh_schedule._runtime import ScheduleOwner

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
from _common import publish, ratio, target

AGENTS = 10_000
DAY = 86_400
SEGMENT = 60.0
MINUTES = 5
IDLE_SECONDS = float(os.environ.get("IDLE_S", "60"))
BASELINE_SECONDS = float(os.environ.get("BASE_S", "20"))
CHUNK = 500
TARGET_BYTES = 2048
TOP_LINES = 14
SETTLE = 30.0  # seconds: the bound of every wait for the host to settle


class RealClock(SystemClock):
    """The real clock, as a class whose instances take attributes (so call_later can be
    wrapped for counting; SystemClock itself has empty __slots__)."""


def is_owner_timer(callback: Callable[[], None]) -> bool:
    return getattr(callback, "__func__", None) is ScheduleOwner._on_timer  # noqa: SLF001


class Counts:
    """Counters a benchmark can switch on and off."""

    def __init__(self) -> None:
        self.on = False
        self.counts: Counter[str] = Counter()

    def bump(self, key: str) -> None:
        if self.on:
            self.counts[key] += 1

    def take(self) -> Counter[str]:
        taken, self.counts = self.counts, Counter()
        return taken


def instrument(host: LiveHost, counts: Counts) -> None:
    """Count timer callbacks by kind, flushes, Session appends and storage writes."""
    clock = host.clock
    arm = clock.call_later

    def call_later(delay: float, callback: Callable[[], None]) -> Any:
        kind = "owner_wakeups" if is_owner_timer(callback) else "other_timers"

        def fire() -> None:
            counts.bump(kind)
            callback()

        return arm(delay, fire)

    clock.call_later = call_later  # type: ignore[method-assign]
    flush = host.sessions.flush

    async def counted_flush(session: Any) -> bool:
        counts.bump("flushes")
        return await flush(session)

    host.sessions.flush = counted_flush  # type: ignore[method-assign]
    host.sessions.subscribe(lambda _appended: counts.bump("session_appends"), Appended)
    append = host.backend.append

    async def counted_append(*args: Any, **kwargs: Any) -> None:
        counts.bump("storage_writes")
        await append(*args, **kwargs)

    host.backend.append = counted_append  # type: ignore[method-assign]
    loop = asyncio.get_running_loop()

    def task_factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        counts.bump("tasks_created")
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(task_factory)  # type: ignore[arg-type]


async def populate(host: LiveHost, count: int) -> list[Any]:
    """``count`` root Agents, each with one reminder a day away (full tool pipeline)."""

    async def one(index: int) -> Any:
        agent = await host.create_session()
        value = await agent.execute_tool(
            "schedule_create", {"prompt": f"reminder {index}", "after_seconds": DAY}
        )
        assert isinstance(value, dict) and "id" in value, value
        return agent

    agents: list[Any] = []
    for start in range(0, count, CHUNK):
        agents += await asyncio.gather(*(one(i) for i in range(start, min(count, start + CHUNK))))
    return agents


async def settle(clock: ManualClock | None = None) -> None:
    """Run until no other task is pending (and, on a ManualClock, short timers have fired)."""
    current = asyncio.current_task()

    def idle() -> bool:
        return not [t for t in asyncio.all_tasks() if t is not current and not t.done()]

    if clock is None:
        await wait_until(idle, timeout=SETTLE)
        return
    # On the ManualClock this drives rather than waits: each step moves simulated time past the
    # coordinator's write-behind window (5 ms) so that its timers fire; 100 steps bound it.
    for _ in range(100):
        clock.advance(0.05)
        await asyncio.sleep(0)
        if idle():
            return
    raise AssertionError("the host did not settle")


def timers_dropped() -> bool:
    """The running loop holds no cancelled timer handle any more (asyncio drops them from its
    heap on a later pass; tracemalloc would count them as still held)."""
    scheduled = asyncio.get_running_loop()._scheduled  # type: ignore[attr-defined]  # noqa: SLF001
    return not any(handle.cancelled() for handle in scheduled)


async def wakeups() -> dict[str, Any]:
    clock = ManualClock()
    counts = Counts()
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        instrument(host, counts)
        host.load_plugin("schedule")
        await populate(host, AGENTS)
        await settle(clock)
        pending = list(clock.pending_delays())
        per_minute = []
        cpu_per_wakeup = []
        for _ in range(MINUTES):
            counts.take()
            counts.on = True
            started = time.process_time()
            clock.advance(SEGMENT)
            spent = time.process_time() - started
            for _ in range(3):
                await asyncio.sleep(0)
            counts.on = False
            minute = counts.take()
            per_minute.append(dict(minute))
            if minute["owner_wakeups"]:
                cpu_per_wakeup.append(spent / minute["owner_wakeups"])
        await settle(clock)
        owners = len(host.plugins.pm.get_plugin("schedule").owners)
    keys = (
        "owner_wakeups",
        "other_timers",
        "flushes",
        "session_appends",
        "storage_writes",
        "tasks_created",
    )
    totals = {key: sum(m.get(key, 0) for m in per_minute) for key in keys}
    return {
        "owners": owners,
        "armed_timers_before": len(pending),
        "max_armed_delay_s": round(max(pending), 3) if pending else None,
        "minutes": MINUTES,
        "per_minute": [{key: m.get(key, 0) for key in keys} for m in per_minute],
        "totals": totals,
        "wakeups_per_owner_per_segment": round(totals["owner_wakeups"] / owners / MINUTES, 4),
        "cpu_us_per_wakeup": round(sorted(cpu_per_wakeup)[len(cpu_per_wakeup) // 2] * 1e6, 2),
    }


async def memory() -> dict[str, Any]:
    async with LiveHost(backend=MemoryBackend()) as host:
        host.load_plugin("schedule")
        gc.collect()
        tracemalloc.start(1)
        try:
            agents = await populate(host, AGENTS)
            await settle()
            gc.collect()
            with_plugin = tracemalloc.take_snapshot()
            traced_with = tracemalloc.get_traced_memory()[0]
            await host.unload_plugin("schedule")
            parse_instant.cache_clear()
            await settle()
            await wait_until(timers_dropped, timeout=SETTLE)
            gc.collect()
            without = tracemalloc.take_snapshot()
            traced_without = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert all(not a.disposed for a in agents)
        by_line = with_plugin.compare_to(without, "lineno")
    total = traced_with - traced_without
    by_file: dict[str, int] = {}
    lines = []
    for stat in by_line:
        frame = stat.traceback[0]
        name = _short(frame.filename)
        by_file[name] = by_file.get(name, 0) + stat.size_diff
        source = linecache.getline(frame.filename, frame.lineno).strip()
        lines.append(
            {
                "where": f"{name}:{frame.lineno}",
                "code": source[:70],
                "bytes_per_owner": round(stat.size_diff / AGENTS, 1),
                "objects_per_owner": round(stat.count_diff / AGENTS, 2),
            }
        )
    lines.sort(key=lambda line: -line["bytes_per_owner"])
    top = sorted(by_file.items(), key=lambda item: -item[1])
    return {
        "agents": AGENTS,
        "traced_bytes_with_plugin": traced_with,
        "traced_bytes_after_unload": traced_without,
        "bytes_per_owner": round(total / AGENTS, 1),
        "by_file_per_owner": {name: round(size / AGENTS, 1) for name, size in top if size},
        "top_lines": lines[:TOP_LINES],
        "other_lines_bytes_per_owner": round(
            sum(line["bytes_per_owner"] for line in lines[TOP_LINES:]), 1
        ),
    }


def _short(filename: str) -> str:
    for marker in ("/src/", "/lib/python3", "site-packages/"):
        if marker in filename:
            tail = filename.split(marker, 1)[1]
            return tail.split("/", 1)[1] if marker == "/lib/python3" else tail
    return filename


async def cpu() -> dict[str, Any]:
    counts = Counts()
    async with LiveHost(backend=MemoryBackend(), clock=RealClock()) as host:
        instrument(host, counts)
        host.load_plugin("schedule")
        started = time.perf_counter()
        await populate(host, AGENTS)
        created_in = time.perf_counter() - started
        await settle()
        gc.collect()
        with_plugin = await _idle_cpu(counts, IDLE_SECONDS)
        await host.unload_plugin("schedule")
        await settle()
        gc.collect()
        without = await _idle_cpu(counts, BASELINE_SECONDS)
    plugin_cpu = with_plugin["cpu_ms_per_minute"] - without["cpu_ms_per_minute"]
    return {
        "agents": AGENTS,
        "created_in_s": round(created_in, 2),
        "with_plugin": with_plugin,
        "without_plugin": without,
        "plugin_cpu_ms_per_minute": round(plugin_cpu, 2),
        "plugin_cpu_us_per_owner_per_minute": round(plugin_cpu * 1000 / AGENTS, 3),
        "plugin_cpu_share_of_one_core": round(plugin_cpu / 60_000, 6),
    }


async def _idle_cpu(counts: Counts, seconds: float) -> dict[str, Any]:
    counts.take()
    counts.on = True
    times, cpu, wall = os.times(), time.process_time(), time.perf_counter()
    await asyncio.sleep(seconds)
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    after = os.times()
    counts.on = False
    seen = counts.take()
    scale = 60 / wall
    return {
        "seconds": round(wall, 2),
        "cpu_ms_per_minute": round(cpu * 1000 * scale, 2),
        "user_ms_per_minute": round((after.user - times.user) * 1000 * scale, 2),
        "system_ms_per_minute": round((after.system - times.system) * 1000 * scale, 2),
        "owner_wakeups_per_minute": round(seen["owner_wakeups"] * scale, 1),
        "other_timers_per_minute": round(seen["other_timers"] * scale, 1),
        "flushes": seen["flushes"],
        "session_appends": seen["session_appends"],
        "storage_writes": seen["storage_writes"],
        "tasks_created": seen["tasks_created"],
    }


async def measure() -> dict[str, Any]:
    return {"wakeups": await wakeups(), "memory": await memory(), "cpu": await cpu()}


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{value} {key.replace('_', ' ')}" for key, value in counts.items())


def main() -> dict[str, Any]:
    _common.quiet_logs()
    measured = asyncio.run(measure())
    wake, mem, use = measured["wakeups"], measured["memory"], measured["cpu"]
    per_segment = wake["wakeups_per_owner_per_segment"]
    others = {k: v for k, v in wake["totals"].items() if k != "owner_wakeups"}
    real_others = {
        k: use["with_plugin"][k]
        for k in ("flushes", "session_appends", "storage_writes", "tasks_created")
    }
    nothing_else = not any(others.values()) and not any(real_others.values())
    wake_ok = per_segment <= 1.0
    mem_ok = mem["bytes_per_owner"] <= TARGET_BYTES
    wake_rows = [[index + 1, *minute.values()] for index, minute in enumerate(wake["per_minute"])]
    mem_rows = [
        [line["where"], f"`{line['code']}`", line["bytes_per_owner"], line["objects_per_owner"]]
        for line in mem["top_lines"]
    ]
    mem_rows.append(["(all other lines)", "", mem["other_lines_bytes_per_owner"], ""])
    mem_rows.append(["total: traced with plugin - after unload", "", mem["bytes_per_owner"], ""])
    cpu_rows = [
        [label, side["seconds"], side["cpu_ms_per_minute"], side["user_ms_per_minute"],
         side["system_ms_per_minute"], side["owner_wakeups_per_minute"],
         side["other_timers_per_minute"], side["tasks_created"], side["flushes"]]
        for label, side in (("plugin loaded", use["with_plugin"]),
                            ("plugin unloaded", use["without_plugin"]))
    ]  # fmt: skip
    result = {
        "name": "idle",
        "title": f"Idle cost: {AGENTS} live root Agents, one reminder a day away each",
        "params": {
            "agents": AGENTS,
            "after_seconds": DAY,
            "max_segment_seconds": SEGMENT,
            "simulated_minutes": MINUTES,
            "idle_seconds": IDLE_SECONDS,
            "baseline_seconds": BASELINE_SECONDS,
        },
        **measured,
        "tables": [
            {
                "title": (
                    f"wakeups per simulated minute (ManualClock, {wake['owners']} owners, "
                    f"segment {SEGMENT:g} s)"
                ),
                "header": ["minute", *wake["per_minute"][0].keys()],
                "rows": wake_rows,
            },
            {
                "title": "memory the owners hold (tracemalloc; per owner, by allocating line)",
                "header": ["allocated at", "code", "bytes / owner", "objects / owner"],
                "rows": mem_rows,
            },
            {
                "title": "CPU while idle (real clock and loop, per minute)",
                "header": [
                    "",
                    "measured s",
                    "CPU ms/min",
                    "user ms/min",
                    "system ms/min",
                    "owner wakeups/min",
                    "other timers/min",
                    "tasks",
                    "flushes",
                ],
                "rows": cpu_rows,
            },
        ],
        "ratios": {
            "wakeups_per_owner_per_segment": per_segment,
            "bytes_per_owner_over_budget": ratio(mem["bytes_per_owner"], TARGET_BYTES),
            "plugin_cpu_share_of_one_core": use["plugin_cpu_share_of_one_core"],
        },
        "notes": [
            (
                f"one owner wakeup costs {wake['cpu_us_per_wakeup']} µs of CPU (ManualClock, "
                "median minute); on the real loop the plugin's idle CPU is "
                f"{use['plugin_cpu_ms_per_minute']} ms per minute for {AGENTS} owners "
                f"({use['plugin_cpu_us_per_owner_per_minute']} µs per owner per minute)"
            ),
            f"the {AGENTS} Agents were created in {use['created_in_s']} s on the real clock",
        ],
        "targets": [
            target(
                "memory <= 2 KiB per owner",
                f"{mem['bytes_per_owner']} B",
                mem_ok,
                f"{mem['bytes_per_owner'] - TARGET_BYTES:.0f} B over",
            ),
            target(
                "<= 1 wakeup per owner per segment",
                f"{per_segment} (ManualClock), "
                f"{round(use['with_plugin']['owner_wakeups_per_minute'] / AGENTS, 3)} "
                "per owner per real minute",
                wake_ok,
                f"{per_segment - 1:.3f} extra wakeups per owner per segment",
            ),
            target(
                "nothing else while idle (no other timers, flushes, appends, writes, tasks)",
                f"{MINUTES} simulated minutes: {_counts(others)}; "
                f"{use['with_plugin']['seconds']} real s: {_counts(real_others)}",
                nothing_else,
                "other activity while idle",
            ),
        ],
        "met": wake_ok and mem_ok and nothing_else,
    }
    return publish(result)


if __name__ == "__main__":
    main()
