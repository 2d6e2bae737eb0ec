"""The audit of :mod:`tests.reliability.support` counts what it claims to: every way a log can
lose, duplicate or corrupt a reminder is built on purpose and must be counted (the fault and
crash-window tests assert these counts are zero, so the audit must be able to say otherwise)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_hookspecs import Event
from dsh_schedule import AfterRecord, Create, Delete, Dispatch, encode_change, reminder_framing

from .support import CLEAN, audit_events, dispatch_ids

pytestmark = pytest.mark.chaos

SOURCE = {"kind": "plugin", "plugin": "schedule"}
RECORD = AfterRecord(
    id="schedule-1",
    kind="after",
    prompt="stretch",
    after_seconds=5,
    scheduled_at="2026-08-05T12:00:05.000Z",
)
DUE_MS = 1_785_931_205_000
VIEW = {"id": "schedule-1", "prompt": "stretch", "state": "scheduled"}

Step = tuple[str, Any]


def created(schedule_id: str = "schedule-1", *, in_log: bool = True) -> list[Step]:
    """A ``schedule_create`` call answered with a success view (its create in the log)."""
    call = {"callId": schedule_id, "name": "schedule_create", "arguments": {"prompt": "stretch"}}
    result = {
        "callId": schedule_id,
        "name": "schedule_create",
        "value": {**VIEW, "id": schedule_id},
    }
    change = ("schedule/change", encode_change(Create(record=RECORD)))
    return [("tool/call", call), *([change] if in_log else []), ("tool/result", result)]


def followup(message_id: str = "m1") -> Step:
    data = {"messageId": message_id, "text": reminder_framing(RECORD), "source": SOURCE}
    return "agent/followup", data


def dispatch() -> Step:
    return "schedule/change", encode_change(Dispatch(id="schedule-1"))


def turn(message_id: str = "m1") -> list[Step]:
    return [
        ("turn/start", {"messageId": message_id}),
        ("user/message", {"text": reminder_framing(RECORD), "source": SOURCE}),
        ("turn/end", {"outcome": "ok"}),
    ]


def log(*steps: Step | list[Step]) -> list[Event]:
    flat: list[Step] = []
    for step in steps:
        flat.extend(step if isinstance(step, list) else [step])
    return [Event(seq=i, type=kind, time=0, data=data) for i, (kind, data) in enumerate(flat)]


def delivered() -> list[Step]:
    return [*created(), followup(), dispatch(), *turn()]


def counts(lost: int = 0, duplicated: int = 0, corrupted: int = 0) -> dict[str, int]:
    return {"lost": lost, "duplicated": duplicated, "corrupted": corrupted}


def test_a_delivered_reminder_is_clean() -> None:
    events = log(delivered())
    assert audit_events(events, 0, ["schedule-1"]) == CLEAN
    assert dispatch_ids(events) == ["schedule-1"]


CASES = {
    # duplicated
    "a second follow-up and dispatch": (
        log(delivered(), followup("m2"), dispatch(), turn("m2")),
        [],
        counts(duplicated=1, corrupted=1),  # the second dispatch does not fold either
    ),
    "a dispatch repeated without its follow-up": (
        log(delivered(), dispatch()),
        [],
        counts(duplicated=1, corrupted=2),
    ),
    "a delete after the dispatch": (
        log(delivered(), ("schedule/change", encode_change(Delete(id="schedule-1")))),
        [],
        counts(duplicated=1, corrupted=1),
    ),
    "the reminder turn run twice": (log(delivered(), turn()), [], counts(duplicated=1)),
    # lost
    "a confirmed create never dispatched nor deleted": (log(created()), [], counts(lost=1)),
    "a confirmed create missing from the log": (
        log(created(in_log=False)),
        [],
        counts(lost=1),
    ),
    "an expected dispatch missing": (
        log(delivered()),
        ["schedule-1", "schedule-2"],
        counts(lost=1),
    ),
    "a dispatch whose turn never started": (
        log(created(), followup(), dispatch()),
        [],
        counts(lost=1),
    ),
    # corrupted
    "a change that does not decode": (
        log(delivered(), ("schedule/change", {"version": 1, "operation": "bogus"})),
        [],
        counts(corrupted=1),
    ),
    "a follow-up without its dispatch": (
        log(created(), followup(), turn(), dispatch()),
        [],
        counts(corrupted=2),  # the follow-up has no dispatch after it, the dispatch none before
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_broken_log_is_counted(case: str) -> None:
    events, dispatched, expected = CASES[case]
    found = audit_events(events, 0, dispatched)
    assert found == expected
    assert found != CLEAN


def test_a_create_not_due_yet_is_pending_not_lost() -> None:
    events = log(created())
    assert audit_events(events, 0, now_ms=DUE_MS - 1) == CLEAN
    assert audit_events(events, 0, now_ms=DUE_MS) == counts(lost=1)
    assert audit_events(events, 0) == counts(lost=1)  # no clock: everything must have ended


def test_only_the_owned_part_is_audited() -> None:
    inherited = log(created())  # a fork's seed: its parent's business
    assert audit_events(inherited, len(inherited)) == CLEAN
    assert audit_events(inherited, 0) == counts(lost=1)
