"""The crash harness detects what it claims to: each invariant is broken on purpose in a real
SQLite store (written through the real backend) and the lane's checks must report it."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_hookspecs import Event, SessionHeader
from dsh_host.persistence import SQLiteBackend
from dsh_schedule import AfterRecord, Create, Dispatch, encode_change, reminder_framing

from .harness import Lane, Receipt, Success, install_plugin

pytestmark = pytest.mark.chaos

SESSION = "s" * 32
SOURCE = {"kind": "plugin", "plugin": "schedule"}
RECORD = AfterRecord(
    id="schedule-1",
    kind="after",
    prompt="stretch",
    after_seconds=5,
    scheduled_at="2026-08-05T12:00:05.000Z",
)
VIEW = {
    "for": "event",
    "view": {
        "scheduleId": "schedule-1",
        "prompt": "stretch",
        "occurrenceAt": "2026-08-05T12:00:05.000Z",
        "deliveryMode": "session-local",
    },
}


def create() -> tuple[str, Any]:
    return "schedule/change", encode_change(Create(record=RECORD))


def followup(message_id: str = "m1") -> tuple[str, Any]:
    return "agent/followup", {
        "messageId": message_id,
        "text": reminder_framing(RECORD),
        "source": SOURCE,
    }


def dispatch() -> tuple[str, Any]:
    return "schedule/change", encode_change(Dispatch(id="schedule-1"))


def turn(message_id: str = "m1") -> tuple[str, Any]:
    return "turn/start", {"messageId": message_id}


GOOD = [create(), followup(), dispatch(), turn(), ("turn/end", {"outcome": "ok"})]


async def store(folder: Path, entries: list[tuple[str, Any]]) -> list[Event]:
    events = [
        Event(seq=seq, type=etype, time=1_785_931_200_000 + seq, data=data)
        for seq, (etype, data) in enumerate(entries)
    ]
    backend = SQLiteBackend(folder)
    await backend.open()
    try:
        header = SessionHeader(version=1, id=SESSION, created_at=1_785_931_200_000)
        await backend.append(SESSION, 0, events, header)
    finally:
        await backend.close()
    return events


def lane(tmp_path: Path) -> Lane:
    return Lane(0, tmp_path / "lane", install_plugin(tmp_path / "plugin"), random.Random(0))


def categories(checked: Lane) -> list[str]:
    return sorted({category for category, _ in checked.violations})


async def test_a_sound_log_passes_every_check(tmp_path: Path) -> None:
    checked = lane(tmp_path)
    events = await store(checked.data, GOOD)
    checked.successes[(SESSION, "schedule-1")] = Success(
        1,
        SESSION,
        "schedule-1",
        {"prompt": "stretch", "scheduledAt": RECORD.scheduled_at, "afterSeconds": 5},
    )
    checked.receipts.append(Receipt(1, SESSION, events[2].to_json(), VIEW, "stream"))
    checked.check("final")
    assert checked.violations == []
    assert checked.pending_work(2**62, strict=True) == []


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([create(), followup()], ["corrupted"]),  # a durable follow-up without its dispatch
        ([create(), ("user/message", {"text": "x"}), dispatch()], ["corrupted"]),
        ([dispatch()], ["corrupted"]),  # a dispatch without its create (does not fold either)
        ([*GOOD, followup("m2"), dispatch()], ["corrupted", "duplicated"]),  # delivered twice
        ([*GOOD, turn()], ["duplicated"]),  # the same follow-up's turn ran twice
        ([create(), ("schedule/change", {"version": 1, "operation": "create"})], ["corrupted"]),
    ],
)
async def test_each_broken_invariant_is_reported(
    tmp_path: Path, entries: list[tuple[str, Any]], expected: list[str]
) -> None:
    checked = lane(tmp_path)
    await store(checked.data, entries)
    checked.check("post-crash")
    assert categories(checked) == expected


@pytest.mark.parametrize(
    "lose",
    [
        lambda lane, events: lane.successes.__setitem__(
            (SESSION, "schedule-2"), Success(1, SESSION, "schedule-2", {})
        ),
        lambda lane, events: lane.receipts.append(
            Receipt(1, SESSION, {**events[2].to_json(), "seq": 99}, VIEW, "stream")
        ),
        lambda lane, events: lane.receipts.append(
            Receipt(1, SESSION, events[0].to_json(), VIEW, "history")
        ),
    ],
    ids=["confirmed create missing", "receipt beyond the log", "receipt of a non-dispatch"],
)
async def test_what_the_client_saw_must_be_on_disk(
    tmp_path: Path, lose: Callable[[Lane, list[Event]], None]
) -> None:
    checked = lane(tmp_path)
    events = await store(checked.data, GOOD)
    lose(checked, events)
    checked.check("post-crash")
    assert categories(checked) == ["lost"]


async def test_a_changed_stored_prefix_and_unfinished_work_are_reported(tmp_path: Path) -> None:
    checked = lane(tmp_path)
    await store(checked.data, [create()])
    checked.check("post-crash")
    assert checked.violations == []
    assert [line.split(": ", 1)[1] for line in checked.pending_work(2**62, strict=True)] == [
        "schedule-1 due 2026-08-05T12:00:05.000Z not ended"
    ]
    for name in ("dsh.sqlite3", "dsh.sqlite3-wal", "dsh.sqlite3-shm"):
        (checked.data / name).unlink(missing_ok=True)
    await store(checked.data, [("user/message", {"text": "another history"})])
    checked.check("post-crash")
    assert categories(checked) == ["lost"]
