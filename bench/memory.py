"""Memory at rest: 10,000 and 100,000 evicted Sessions, each holding one reminder a day away.

Each size runs in its own child process (``bench/memory.py --child N``), so no heap is
inherited. The child opens one host on a SQLiteBackend in a temporary folder (WAL,
``synchronous=FULL``), real clock, idle eviction on (``evict_idle_seconds`` = 1) and the
Schedule plugin loaded with ``cold_delivery = true``; it settles and reads its baseline resident
set size (``VmRSS`` in /proc/self/status). Then it creates N Sessions, 500 at a time
concurrently, each with one ``schedule_create`` of ``after_seconds`` = 86,400 through the full
tool pipeline, and waits (bounded) until the host's idle eviction has made every one of them
cold. Then ``gc.collect()`` and the settle: ``VmRSS`` sampled every 0.5 s until three samples
in a row lie within 1% of each other (bounded: 60 samples), the last one is the figure. Nothing
is trimmed or released by hand: this is what the host process holds. Only after the reading does
the child check that the figure is not from an empty run: the backend lists N stored Sessions
and its wake index holds exactly one entry (the plugin's) for each.

The table gives, per size, the RSS after settling, the RSS minus the baseline, the peak RSS
(``VmHWM``), the Python objects the collector tracks, the create and eviction times.

Target: RSS at 100k Sessions <= 1.5x RSS at 10k Sessions.

Run: ``.venv/bin/python bench/memory.py`` (or ``make bench``). Prints a table, writes JSON.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dsh_host import LiveHost
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
from _common import LiveCount, publish, ratio, reminder_session, target

SIZES = tuple(int(n) for n in os.environ.get("MEMORY_SIZES", "10000,100000").split(","))
CHUNK = 500
DAY = 86_400
EVICT_IDLE = 1.0
EVICT_BOUND = 600.0  # seconds: the bound of the wait for every Session to be evicted
SAMPLE_EVERY = 0.5
SAMPLES = 60
STABLE = 3
TOLERANCE = 0.01
TARGET_RATIO = 1.5


def status_kib(field: str) -> int:
    """One ``kB`` field of /proc/self/status (``VmRSS``, ``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise KeyError(field)


async def settled_rss() -> tuple[int, int]:
    """``gc.collect()``, then VmRSS (KiB) once STABLE samples in a row agree within TOLERANCE;
    returns it and how many samples that took. Fails after SAMPLES samples."""
    gc.collect()
    samples: list[int] = []
    for _ in range(SAMPLES):
        await asyncio.sleep(SAMPLE_EVERY)  # pacing the samples, not waiting for an outcome
        samples.append(status_kib("VmRSS"))
        last = samples[-STABLE:]
        if len(last) == STABLE and max(last) - min(last) <= TOLERANCE * max(last):
            return last[-1], len(samples)
    raise RuntimeError(f"RSS did not settle: {samples}")


async def check_stored(backend: SQLiteBackend, count: int) -> dict[str, int]:
    """How many Sessions are stored and how many wake entries stand (and for how many)."""
    stored = len(await backend.list_sessions())
    wakes = await backend.due_wakes(time.time_ns() // 1_000_000 + 2 * DAY * 1000, count + 1)
    plugins = {plugin for _, plugin, _ in wakes}
    return {
        "stored_sessions": stored,
        "wake_entries": len(wakes),
        "sessions_with_a_wake": len({sid for sid, _, _ in wakes}),
        "wake_plugins": len(plugins),
        "schedule_wakes": sum(1 for _, plugin, _ in wakes if plugin == "schedule"),
    }


async def child(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-memory-") as tmp:
        backend = SQLiteBackend(Path(tmp) / "dsh")
        async with LiveHost(backend=backend, evict_idle_seconds=EVICT_IDLE) as host:
            host.load_plugin("schedule", {"cold_delivery": True})
            live = LiveCount(host)
            baseline, _ = await settled_rss()
            objects_before = len(gc.get_objects())
            started = time.perf_counter()
            for start in range(0, count, CHUNK):
                batch = range(start, min(count, start + CHUNK))
                await asyncio.gather(*(reminder_session(host, DAY, f"r {i}") for i in batch))
            create_seconds = time.perf_counter() - started
            await wait_until(lambda: live.now == 0, timeout=EVICT_BOUND)
            evicted_seconds = time.perf_counter() - started
            rss, samples = await settled_rss()
            objects = len(gc.get_objects())
            peak = status_kib("VmHWM")
            live_sessions = len(host.sessions.live())
            checked = await check_stored(backend, count)
    return {
        "sessions": count,
        "baseline_rss_kib": baseline,
        "rss_kib": rss,
        "rss_minus_baseline_kib": rss - baseline,
        "peak_rss_kib": peak,
        "settle_samples": samples,
        "gc_objects_before": objects_before,
        "gc_objects_after": objects,
        "peak_live": live.peak,
        "live_at_reading": live_sessions,
        "create_seconds": round(create_seconds, 2),
        "creates_per_second": round(count / create_seconds),
        "all_evicted_after_s": round(evicted_seconds, 2),
        **checked,
    }


def run_child(count: int) -> dict[str, Any]:
    """One size in a fresh interpreter; its figures are the last line it prints (JSON)."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(count)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def valid(size: dict[str, Any]) -> bool:
    n = size["sessions"]
    return bool(
        size["live_at_reading"] == 0
        and size["stored_sessions"] == n
        and size["wake_entries"] == n
        and size["sessions_with_a_wake"] == n
        and size["schedule_wakes"] == n
    )


def mib(kib: int) -> float:
    return round(kib / 1024, 1)


def main() -> dict[str, Any]:
    sizes = [run_child(count) for count in SIZES]
    for size in sizes:
        print(f"  {size['sessions']} Sessions: {json.dumps(size)}", flush=True)
    invalid = [size["sessions"] for size in sizes if not valid(size)]
    if invalid:
        raise RuntimeError(f"runs for {invalid} Sessions did not store one wake per Session")
    small, large = sizes[0], sizes[-1]
    growth = ratio(large["rss_kib"], small["rss_kib"])
    net_growth = ratio(large["rss_minus_baseline_kib"], small["rss_minus_baseline_kib"])
    met = growth is not None and growth <= TARGET_RATIO
    extra = large["sessions"] - small["sessions"]
    per_extra = round((large["rss_kib"] - small["rss_kib"]) * 1024 / extra) if extra else None
    label = f"{large['sessions'] // 1000}k / {small['sessions'] // 1000}k"
    rows = [
        [
            size["sessions"],
            mib(size["baseline_rss_kib"]),
            mib(size["rss_kib"]),
            mib(size["rss_minus_baseline_kib"]),
            mib(size["peak_rss_kib"]),
            size["gc_objects_after"] - size["gc_objects_before"],
            size["create_seconds"],
            size["creates_per_second"],
            size["all_evicted_after_s"],
            size["peak_live"],
        ]
        for size in sizes
    ]
    result = {
        "name": "memory",
        "title": (
            "Memory at rest: "
            + " and ".join(f"{n:,}" for n in SIZES)
            + " evicted Sessions, one reminder a day away each (SQLite, eviction on)"
        ),
        "params": {
            "sizes": list(SIZES),
            "after_seconds": DAY,
            "evict_idle_seconds": EVICT_IDLE,
            "chunk": CHUNK,
        },
        "sizes": sizes,
        "tables": [
            {
                "title": "resident memory of the host process after settling (MiB)",
                "header": [
                    "Sessions",
                    "baseline RSS",
                    "RSS",
                    "RSS - baseline",
                    "peak RSS",
                    "gc objects added",
                    "create s",
                    "creates/s",
                    "all evicted after s",
                    "peak live",
                ],
                "rows": rows,
            }
        ],
        "ratios": {
            "rss_large_over_small": growth,
            "rss_minus_baseline_large_over_small": net_growth,
            "peak_rss_large_over_small": ratio(large["peak_rss_kib"], small["peak_rss_kib"]),
        },
        "notes": [
            (
                f"RSS changed by {per_extra} bytes per extra cold Session from "
                f"{small['sessions']:,} to {large['sessions']:,} (RSS difference over the "
                "difference in Sessions; the gc objects column is what the collector tracks "
                "beyond the baseline at the reading)"
            ),
            (
                "every run stored all its Sessions, each with exactly one wake entry (the "
                "Schedule plugin's), and had no live Session at the reading"
            ),
            (
                "peak RSS (VmHWM) is the high-water mark while the Sessions were live; memory "
                "the allocator keeps after they went cold counts in RSS"
            ),
        ],
        "targets": [
            target(
                f"RSS {label} <= {TARGET_RATIO:g}",
                (
                    f"{mib(large['rss_kib'])} MiB / {mib(small['rss_kib'])} MiB = {growth} "
                    f"(minus baseline: {net_growth})"
                ),
                met,
                f"{growth} > {TARGET_RATIO:g}",
            )
        ],
        "met": met,
    }
    return publish(result)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _common.quiet_logs()
        print(json.dumps(asyncio.run(child(int(sys.argv[2])))), flush=True)
    else:
        main()
