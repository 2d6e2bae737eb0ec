"""Fold scaling: ``schedule_list`` cost as the Session log grows, incremental beside full refold.

Sessions of 1k, 10k and 100k events each hold 100 active reminders (created through the real
tool pipeline) plus filler transcript events. Persistence is an in-memory backend whose flush
acknowledges at once, so what is measured is the fold, not storage. For each size the same
``schedule_list`` body runs with the plugin's incremental fold cache and with a cache that
refolds the whole owned stream on every call (the upstream behaviour).

Target: the incremental cost at 100k events stays within 1.5x of its cost at 1k events.

Run: ``.venv/bin/python bench/fold.py`` (or ``make bench``). Prints a table and writes JSON.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from dsh_hookspecs import Session, ToolCall
from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock
from dsh_schedule import IncrementalFold
from dsh_schedule._tools import ScheduleTools

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, print_table

SIZES = (1_000, 10_000, 100_000)
ACTIVE = 100
TARGET_RATIO = 1.5


class FullRefold:
    """A fold cache that refolds the whole owned stream on every call."""

    def of(self, session: Session) -> IncrementalFold:
        folded = IncrementalFold(session.header.owned_from)
        folded.apply(session.events)
        return folded


async def build(host: LiveHost, size: int) -> Any:
    agent = await host.create_session()
    for index in range(ACTIVE):
        value = await agent.execute_tool(
            "schedule_create", {"prompt": f"reminder {index}", "after_seconds": 86_400}
        )
        assert isinstance(value, dict) and "id" in value, value
    session = agent.session
    while len(session.events) < size:
        session.append("assistant/message", {"text": "filler " * 8})
    await host.sessions.flush(session)
    return agent


async def time_calls(tools: ScheduleTools, call: ToolCall, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        value = await tools.list(call)
        samples.append(time.perf_counter() - started)
        assert isinstance(value, list) and len(value) == ACTIVE, value
    return statistics.median(samples) * 1e6


async def measure() -> list[dict[str, Any]]:
    rows = []
    async with LiveHost(backend=MemoryBackend(), clock=ManualClock(), batch_delay=3600) as host:
        host.load_plugin("schedule")
        plugin = host.plugins.pm.get_plugin("schedule")
        for size in SIZES:
            agent = await build(host, size)
            owner = plugin.owners[agent]
            call = ToolCall(call_id="bench", name="schedule_list", arguments={}, agent=agent)
            incremental = plugin.tools
            await time_calls(incremental, call, 5)  # warm the fold cache
            inc_us = await time_calls(incremental, call, 300)
            saved = owner.folds
            owner.folds = FullRefold()  # type: ignore[assignment]
            full_us = await time_calls(plugin.tools, call, 30 if size >= 100_000 else 100)
            owner.folds = saved
            rows.append(
                {
                    "events": len(agent.session.events),
                    "active": ACTIVE,
                    "incremental_us": round(inc_us, 1),
                    "full_refold_us": round(full_us, 1),
                    "full_over_incremental": round(full_us / inc_us, 1),
                }
            )
            await agent.dispose()
    return rows


def main() -> dict[str, Any]:
    rows = asyncio.run(measure())
    growth = rows[-1]["incremental_us"] / rows[0]["incremental_us"]
    result = {
        "name": "fold",
        "title": "schedule_list cost by log length (100 active reminders)",
        "rows": rows,
        "ratios": {
            "incremental_100k_over_1k": round(growth, 2),
            "full_100k_over_1k": round(rows[-1]["full_refold_us"] / rows[0]["full_refold_us"], 1),
        },
        "target": f"incremental 100k / 1k <= {TARGET_RATIO}",
        "met": growth <= TARGET_RATIO,
    }
    print_table(
        result["title"],
        ["events", "incremental µs", "full refold µs", "full / incremental"],
        [
            [r["events"], r["incremental_us"], r["full_refold_us"], r["full_over_incremental"]]
            for r in rows
        ],
    )
    print(
        f"incremental 100k/1k = {growth:.2f} (target <= {TARGET_RATIO}: "
        f"{'met' if result['met'] else 'NOT met'})"
    )
    emit(result)
    return result


if __name__ == "__main__":
    main()
