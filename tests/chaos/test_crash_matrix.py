"""The crash matrix (issue "Reliability harness", part 1): see :mod:`tests.chaos.harness`.

``make test`` runs the quick version (13 kills over two lanes of 20 Sessions); ``make chaos``
sets ``DSH_CHAOS_KILLS=200`` (four lanes) and renders ``docs/reliability.md`` from the figures.
``DSH_CHAOS_SEED`` fixes the kill plan and the workload's random choices (the seed is in every
failure message); the timing of a run, and so where exactly an external kill lands, still varies.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from .control import STALL_POINTS
from .figures import record
from .harness import (
    CATEGORIES,
    EXTERNAL,
    QUICK_ORDER,
    SESSIONS,
    STALL_MS,
    Lane,
    Plan,
    install_plugin,
    plans,
)

pytestmark = [pytest.mark.chaos, pytest.mark.slow]


async def test_crash_matrix(tmp_path: Path) -> None:
    kills = int(os.environ.get("DSH_CHAOS_KILLS", str(len(QUICK_ORDER))))
    lane_count = int(os.environ.get("DSH_CHAOS_LANES", "2" if kills <= 20 else "4"))
    seed = int(os.environ.get("DSH_CHAOS_SEED", str(random.randrange(2**32))))
    rng = random.Random(seed)
    plugin_path = install_plugin(tmp_path / "plugin")
    lanes = [
        Lane(index, tmp_path / f"lane{index}", plugin_path, random.Random(rng.random()))
        for index in range(lane_count)
    ]
    if kills <= 20:
        for lane in lanes:
            lane.long_range = (4, 6)  # keeps the final wait of the quick run short
    schedule: list[list[Plan]] = [[] for _ in lanes]
    for index, plan in enumerate(plans(kills, rng)):
        schedule[index % lane_count].append(plan)

    async def run(lane: Lane, lane_plans: list[Plan]) -> None:
        try:
            for plan in lane_plans:
                await lane.run_boot(plan)
            await lane.run_boot(None, final=True)
        finally:
            lane.reap()

    started = time.monotonic()
    outcomes = await asyncio.gather(
        *(run(lane, lane_plans) for lane, lane_plans in zip(lanes, schedule, strict=True)),
        return_exceptions=True,  # every lane ends (and stops its server) before a failure shows
    )
    elapsed = time.monotonic() - started
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome

    violations = [v for lane in lanes for v in lane.violations]
    all_kills = [kill for lane in lanes for kill in lane.kills]
    totals: Counter[str] = Counter()
    for lane in lanes:
        totals.update(lane.figures)
    by_point = Counter(kill["point"] for kill in all_kills)
    external = [
        kill for kill in all_kills if kill["point"].startswith(EXTERNAL) or "(not" in kill["point"]
    ]
    categories = Counter(category for category, _ in violations)
    record(
        "crash",
        "matrix",
        {
            "seed": seed,
            "lanes": lane_count,
            "sessions": SESSIONS * lane_count,
            "kills": len(all_kills),
            "boots": sum(lane.boot for lane in lanes),
            "kills by point": dict(sorted(by_point.items())),
            "early kills (armed before the resumes)": sum(1 for k in all_kills if k["early"]),
            "external kills": len(external),
            "external kills inside a SQLite write batch": sum(1 for k in external if k["in_txn"]),
            "external kills inside a group commit (batch > 1)": sum(
                1 for k in external if k["in_txn"] and k["batch_len"] > 1
            ),
            "external kills with a due path open": sum(1 for k in external if k["due_open"]),
            "interrupted reminder turns (turn/start durable, no turn/end)": sum(
                lane.interrupted_turns() for lane in lanes
            ),
            "stall kills (storage writer held, killed at the end of the stall)": sum(
                1 for k in all_kills if k["point"] in STALL_POINTS and k["stalled"]
            ),
            "stall (ms)": STALL_MS,
            "counters": dict(sorted(totals.items())),
            "lost": categories["lost"],
            "duplicated": categories["duplicated"],
            "corrupted": categories["corrupted"],
            "other violations": categories["other"],
            "violations": [message for _, message in violations][:50],
            "kill log (first 40)": [
                {"lane": lane.index, **kill} for lane in lanes for kill in lane.kills
            ][:40],
            "long creates (after_seconds)": "{}-{}".format(*lanes[0].long_range),
            "seconds": round(elapsed, 1),
        },
    )
    assert len(all_kills) == kills
    assert set(categories) <= set(CATEGORIES)
    assert violations == [], f"seed {seed}: {violations[:20]}"
    # Every lane reached its final check, and the workload really ran.
    assert totals["checks final"] == lane_count
    assert totals["creates confirmed"] > 0
    assert totals["stored dispatches"] > 0
    assert totals["receipts verified (stream)"] > 0
    # The user-visible audit saw the reminders it counts.
    assert totals["user-visible reminder turns"] > 0
    assert totals["user-visible reminder replies"] > 0
    assert totals["user-visible reminder cards"] > 0
