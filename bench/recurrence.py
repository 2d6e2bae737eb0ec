"""Calendar rules on the delivery path: the cost of a next occurrence, and the dispatch
lateness of a due ``daily`` reminder beside an ``after_seconds`` one.

Part 1, cost. For each rule shape (``daily``, ``weekly``, and cron shapes from a weekday
morning to every quarter hour and a rule a daylight-saving gap skips), in America/New_York:
the time of one ``next_after`` (the first occurrence after an instant: what creation and every
delivery compute) and of one ``latest_due`` (the occurrence a late decision delivers), each
the median of 5 passes over 2,000 chained computations (every call starts where the previous
one ended, so the walk crosses real transitions). An ``every_seconds`` record's arithmetic
(``resolve_every_occurrence``) is the baseline. Target: every shape's next occurrence costs
at most 200 µs (a dispatch's own durable write costs milliseconds).

Part 2, lateness. One host on SQLiteBackend (WAL, ``synchronous=FULL``), 50 idle root Agents:
25 create, through the full tool pipeline, 10 ``after_seconds`` reminders each, and the other 25
create 10 ``daily`` reminders each in UTC whose ``time`` (with milliseconds) names the same due
instants as their partner's, so both kinds share one ~10 s window and the same storage batches.
Lateness of one reminder = the wall-clock moment a flush first covers its dispatch minus its
``scheduledAt``. 3 rounds; the headline is each
statistic's median across rounds. Target: daily p50 and p99 at most 1.2x after's.

Run: ``.venv/bin/python bench/recurrence.py`` (or ``make bench``). Prints a table, writes JSON.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh_hookspecs import load_time_zone
from dsh_host import Flushed, LiveHost
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import wait_until
from dsh_schedule import parse_instant
from dsh_schedule._calendar import cron_wall, latest_due, next_after, weekly_wall
from dsh_schedule._codec import EveryRecord
from dsh_schedule._every import resolve_every_occurrence
from dsh_schedule._instants import format_instant

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common
from _common import latency_summary, publish, ratio, target

ZONE = "America/New_York"
CHAIN = 2_000
PASSES = 5
COST_BUDGET_US = 200.0
START_MS = 1_772_323_200_000  # 2026-03-01T00:00:00Z: the chains cross March's gap

SHAPES: list[tuple[str, Callable[[], Any]]] = [
    ("daily 09:00", lambda: weekly_wall(9 * 3_600_000, None)),
    ("weekly Mon-Fri 09:00", lambda: weekly_wall(9 * 3_600_000, frozenset(range(1, 6)))),
    ("weekly Sun 02:30 (gap)", lambda: weekly_wall(9_000_000, frozenset({7}))),
    ("cron 0 9 * * 1-5", lambda: cron_wall("0 9 * * 1-5")),
    ("cron */15 * * * *", lambda: cron_wall("*/15 * * * *")),
    ("cron 0 9 1 * *", lambda: cron_wall("0 9 1 * *")),
    ("cron 30 2 * 3 0 (gap)", lambda: cron_wall("30 2 * 3 0")),
]

AGENTS = 50
PER_KIND = 10
LEAD = 4
ROUNDS = 3
DEADLINE = 60.0
KEYS = ("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms")


def _median_us(run: Callable[[], int]) -> float:
    """Median over passes of one pass's seconds per computation, in microseconds."""
    per_call = []
    for _ in range(PASSES):
        began = time.perf_counter()
        calls = run()
        per_call.append((time.perf_counter() - began) / calls)
    return round(statistics.median(per_call) * 1e6, 2)


def cost() -> dict[str, Any]:
    zone = load_time_zone(ZONE)
    rows: dict[str, dict[str, float]] = {}
    for label, make in SHAPES:
        wall = make()

        def forward(wall: Any = wall) -> int:
            at = START_MS
            for _ in range(CHAIN):
                found = next_after(wall, zone, at)
                assert found is not None
                at = found
            return CHAIN

        def backward(wall: Any = wall) -> int:
            # A decision an hour after each occurrence delivers that occurrence.
            at = START_MS
            for _ in range(CHAIN // 4):
                found = next_after(wall, zone, at)
                assert found is not None
                assert latest_due(wall, zone, found, found + 3_600_000) >= found
                at = found
            return CHAIN // 4

        rows[label] = {"next_us": _median_us(forward), "next_plus_latest_us": _median_us(backward)}
    record = EveryRecord(
        id="schedule-1",
        kind="every",
        prompt="p",
        every_seconds=300,
        scheduled_at=format_instant(START_MS),
    )

    def every() -> int:
        for index in range(CHAIN):
            resolve_every_occurrence(record, START_MS + index * 1000)
        return CHAIN

    return {"shapes": rows, "every_us": _median_us(every)}


class Acks:
    """When a flush first covers each expected dispatch (by kind)."""

    def __init__(self) -> None:
        self.expected: dict[tuple[str, str], tuple[str, int]] = {}
        self.acked: dict[tuple[str, str], float] = {}
        self._scanned: dict[str, int] = {}

    def __call__(self, flushed: Flushed) -> None:
        now = time.time()
        session, through = flushed.session, flushed.through_seq
        start = self._scanned.get(session.id, 0)
        for seq in range(start, through):
            event = session.events[seq]
            data = event.data
            if (
                event.type == "schedule/change"
                and isinstance(data, dict)
                and data.get("operation") == "dispatch"
            ):
                key = (session.id, str(data["id"]))
                if key in self.expected and key not in self.acked:
                    self.acked[key] = now
        self._scanned[session.id] = max(start, through)

    def done(self) -> bool:
        return len(self.acked) >= len(self.expected)


async def _create(agent: Any, acks: Acks, kind: str, arguments: dict[str, Any]) -> int:
    value = await agent.execute_tool("schedule_create", arguments)
    assert isinstance(value, dict) and "id" in value, value
    due = parse_instant(value["scheduledAt"])
    acks.expected[(agent.session.id, value["id"])] = (kind, due)
    return due


def _utc_time(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%H:%M:%S.%f")[:-3]


async def one_round(data: Path) -> dict[str, Any]:
    async with LiveHost(backend=SQLiteBackend(data)) as host:
        host.load_plugin("schedule")
        agents = [await host.create_session() for _ in range(AGENTS)]
        acks = Acks()
        host.sessions.subscribe(acks, Flushed)

        half = AGENTS // 2

        async def after_side(index: int, agent: Any) -> list[int]:
            return [
                await _create(
                    agent,
                    acks,
                    "after",
                    {"prompt": f"after {index}/{slot}", "after_seconds": LEAD + slot},
                )
                for slot in range(PER_KIND)
            ]

        async def daily_side(index: int, agent: Any, dues: list[int]) -> None:
            for slot, due in enumerate(dues):
                daily = {"time": _utc_time(due), "time_zone": "UTC"}
                same = await _create(
                    agent, acks, "daily", {"prompt": f"daily {index}/{slot}", "daily": daily}
                )
                assert same == due, (same, due)

        # Agent i sets after_seconds reminders; agent i + half sets daily ones due at the very
        # same instants: the two kinds share the window and the storage batches, each on its
        # own Agent (on one Agent the one-shot's turn would go first by design).
        dues = await asyncio.gather(*(after_side(i, a) for i, a in enumerate(agents[:half])))
        await asyncio.gather(*(daily_side(i, a, dues[i]) for i, a in enumerate(agents[half:])))
        last = max(due for _, due in acks.expected.values()) / 1000
        try:
            await _common_wait(acks.done, last + DEADLINE)
            complete = True
        except TimeoutError:
            complete = False
        await asyncio.gather(*(a.when_idle() for a in agents))
        late: dict[str, list[float]] = {"after": [], "daily": []}
        for key, at in acks.acked.items():
            kind, due = acks.expected[key]
            late[kind].append(at - due / 1000)
        return {
            "complete": complete,
            "acknowledged": len(acks.acked),
            "expected": len(acks.expected),
            "after": latency_summary(late["after"]),
            "daily": latency_summary(late["daily"]),
        }


async def _common_wait(predicate: Callable[[], bool], deadline: float) -> None:
    await wait_until(predicate, timeout=max(0.0, deadline - time.time()))


async def lateness() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-recurrence-") as tmp:
        return [await one_round(Path(tmp) / f"round-{index}") for index in range(ROUNDS)]


def main() -> dict[str, Any]:
    _common.quiet_logs()
    costs = cost()
    rounds = asyncio.run(lateness())
    median = {
        kind: {k: round(statistics.median(r[kind][k] for r in rounds), 2) for k in KEYS}
        for kind in ("after", "daily")
    }
    p50 = ratio(median["daily"]["p50_ms"], median["after"]["p50_ms"])
    p99 = ratio(median["daily"]["p99_ms"], median["after"]["p99_ms"])
    worst = max(row["next_us"] for row in costs["shapes"].values())
    complete = all(r["complete"] for r in rounds)
    result = {
        "name": "recurrence",
        "title": (
            f"Calendar rules: next-occurrence cost in {ZONE}; dispatch lateness of daily beside "
            f"after_seconds ({AGENTS // 2} + {AGENTS // 2} Agents x {PER_KIND}, {ROUNDS} rounds)"
        ),
        "params": {"zone": ZONE, "chain": CHAIN, "passes": PASSES, "agents": AGENTS},
        "cost": costs,
        "rounds": rounds,
        "median_round": median,
        "tables": [
            {
                "title": "cost of one computation (median of passes), microseconds",
                "header": ["rule", "next occurrence µs", "next + latest due µs"],
                "rows": [
                    [label, row["next_us"], row["next_plus_latest_us"]]
                    for label, row in costs["shapes"].items()
                ]
                + [["every_seconds arithmetic (baseline)", costs["every_us"], ""]],
            },
            {
                "title": "lateness from the due instant to the durable dispatch (median round)",
                "header": ["", "after_seconds", "daily", "daily / after"],
                "rows": [
                    [
                        k.removesuffix("_ms") + " ms",
                        median["after"][k],
                        median["daily"][k],
                        ratio(median["daily"][k], median["after"][k]),
                    ]
                    for k in KEYS
                ],
            },
        ],
        "ratios": {
            "daily_over_after_p50": p50,
            "daily_over_after_p99": p99,
            "worst_next_over_every": ratio(worst, costs["every_us"]),
        },
        "targets": [
            target(
                f"next occurrence <= {COST_BUDGET_US:.0f} µs for every shape",
                f"worst {worst} µs",
                worst <= COST_BUDGET_US,
                f"{worst} µs",
            ),
            target(
                "daily lateness p50 and p99 <= 1.2x after_seconds's",
                f"p50 {p50}x, p99 {p99}x" + ("" if complete else " (a round did not complete)"),
                complete and p50 is not None and p99 is not None and max(p50, p99) <= 1.2,
                f"p50 {p50}x, p99 {p99}x",
            ),
        ],
    }
    return publish(result)


if __name__ == "__main__":
    main()
