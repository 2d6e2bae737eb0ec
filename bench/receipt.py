"""Receipt cost: presenting one dispatch at the end of the log, as the log grows.

A live Session of 1k and of 100k events on the real host and Schedule plugin: one reminder
created first, then transcript filler with a create and a delete of another reminder every 20
events (so the log is full of ``schedule/change`` events to walk past). Each measured step
appends a new create and its dispatch at the end (straight to the Session, as the owner's due
path would, outside the clock) and presents that dispatch through the host's
``dsh_event_present`` facade: what the Web host does for each flush, against the plugin's warm
receipt index (the first receipt of a log builds it). Beside it: a one-off ``present_dispatch``
of a dispatch of the first reminder at the end (no kept index: about what every presentation
of such a dispatch cost before the index, whose walk decoded each change back to the create).
The two sizes are sampled in turns (1k, 100k, 1k, ...), so the ratio compares them side by side.

Target: presenting one receipt at 100k events costs at most 1.5x what it costs at 1k events.

Run: ``.venv/bin/python bench/receipt.py`` (or ``make bench``). Prints a table and writes JSON.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from dsh_hookspecs import JSONValue
from dsh_host import LiveHost, LiveSession
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock
from dsh_schedule import (
    SCHEDULE_CHANGE,
    AfterRecord,
    Create,
    Delete,
    Dispatch,
    encode_change,
    format_instant,
    present_dispatch,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import publish, target

SIZES = (1_000, 100_000)
REPEAT = 2_000
ONE_OFF_REPEAT = {1_000: 200, 100_000: 5}
CHURN_EVERY = 20
TARGET_RATIO = 1.5


def create(number: int) -> JSONValue:
    record = AfterRecord(
        id=f"schedule-{number}",
        kind="after",
        prompt=f"reminder {number}",
        after_seconds=86_400,
        scheduled_at=format_instant(1_785_931_200_000 + number),
    )
    return encode_change(Create(record=record))


def build(session: LiveSession, size: int) -> int:
    """Fill ``session`` to ``size`` events; the next free reminder number."""
    session.append(SCHEDULE_CHANGE, create(1))
    number = 2
    while len(session.events) < size:
        if len(session.events) % CHURN_EVERY == 0:
            session.append(SCHEDULE_CHANGE, create(number))
            session.append(SCHEDULE_CHANGE, encode_change(Delete(id=f"schedule-{number}")))
            number += 1
        else:
            session.append("assistant/message", {"text": "filler " * 8})
    return number


def one_receipt(host: LiveHost, session: LiveSession, number: int) -> float:
    """Append a create and its dispatch; the seconds that presenting the dispatch took."""
    session.append(SCHEDULE_CHANGE, create(number))
    event = session.append(SCHEDULE_CHANGE, encode_change(Dispatch(id=f"schedule-{number}")))
    started = time.perf_counter()
    view = host.plugins.event_present(session.events, event.seq, 0, session)
    elapsed = time.perf_counter() - started
    assert isinstance(view, dict) and view["scheduleId"] == f"schedule-{number}", view
    return elapsed


def one_off(session: LiveSession, repeat: int) -> float:
    """Median seconds of a one-off present_dispatch of schedule-1's dispatch at the end."""
    event = session.append(SCHEDULE_CHANGE, encode_change(Dispatch(id="schedule-1")))
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        view = present_dispatch(session.events, event.seq, 0)
        samples.append(time.perf_counter() - started)
        assert view is not None and view["scheduleId"] == "schedule-1", view
    return statistics.median(samples)


async def measure() -> list[dict[str, Any]]:
    rows = []
    async with LiveHost(backend=MemoryBackend(), clock=ManualClock(), batch_delay=3600) as host:
        host.load_plugin("schedule")
        for sizes in ((SIZES[0],), SIZES):  # the first round only warms the interpreter up
            logs = []
            for size in sizes:
                agent = await host.create_session()
                number = build(agent.session, size)
                await host.sessions.flush(agent.session)
                one_off_us = one_off(agent.session, ONE_OFF_REPEAT[size]) * 1e6
                first = one_receipt(host, agent.session, number)  # indexes the whole log
                logs.append((size, agent, number + 1, first, one_off_us))
            # Side by side: the sizes take turns, so load on the machine hits both alike.
            samples: list[list[float]] = [[] for _ in logs]
            for i in range(REPEAT):
                for k, (_, agent, number, _, _) in enumerate(logs):
                    samples[k].append(one_receipt(host, agent.session, number + i))
            rows = [
                {
                    "events": size,
                    "first_ms": round(first * 1000, 2),
                    "receipt_us": round(statistics.median(taken) * 1e6, 2),
                    "one_off_us": round(one_off_us, 1),
                }
                for (size, _, _, first, one_off_us), taken in zip(logs, samples, strict=True)
            ]
            for _, agent, _, _, _ in logs:
                await agent.dispose()
    return rows


def main() -> dict[str, Any]:
    rows = asyncio.run(measure())
    small, large = rows[0], rows[-1]
    growth = round(large["receipt_us"] / small["receipt_us"], 2)
    met = growth <= TARGET_RATIO
    result = {
        "name": "receipt",
        "title": "Presenting one dispatch receipt by log length (warm index, real host)",
        "params": {"sizes": list(SIZES), "repeat": REPEAT, "churn_every": CHURN_EVERY},
        "rows": rows,
        "tables": [
            {
                "title": "median cost of one receipt",
                "header": [
                    "events",
                    "receipt µs (warm index)",
                    "first receipt ms (indexes the log)",
                    "one-off present_dispatch µs",
                ],
                "rows": [
                    [r["events"], r["receipt_us"], r["first_ms"], r["one_off_us"]] for r in rows
                ],
            }
        ],
        "ratios": {
            "receipt_100k_over_1k": growth,
            "one_off_100k_over_1k": round(large["one_off_us"] / small["one_off_us"], 1),
        },
        "targets": [
            target(
                f"receipt 100k / 1k <= {TARGET_RATIO}",
                f"receipt 100k / 1k = {growth}",
                met,
                f"{growth} > {TARGET_RATIO}",
            )
        ],
        "met": met,
    }
    return publish(result)


if __name__ == "__main__":
    main()
