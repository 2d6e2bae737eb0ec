"""The ``schedule.reminders`` Session view (issue 13 item 3): what the Reminders panel shows.

It is derived from the committed log alone: active reminders by next occurrence (what the
countdowns and Cancel buttons show), the latest deliveries newest first with their lateness,
and a reason when a delivery was more than a minute late.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_hookspecs import Event
from dsh_schedule import ScheduleLogError, format_instant, parse_instant
from dsh_schedule._fold import SCHEDULE_CHANGE
from dsh_schedule._panel import LATE_AFTER_MS, RECENT_LIMIT, VIEW_NAME, reminders_view
from dsh_schedule._plugin import SchedulePlugin

NOON = parse_instant("2026-08-05T12:00:00.000Z")
MINUTE = 60_000


def at(ms: int) -> str:
    return format_instant(ms)


def create(sid: str, prompt: str, due_ms: int, kind: str = "after") -> dict[str, Any]:
    record: dict[str, Any] = {"id": sid, "kind": kind, "prompt": prompt, "scheduledAt": at(due_ms)}
    if kind == "after":
        record["afterSeconds"] = 60
    elif kind == "every":
        record["everySeconds"] = 300
    return {"version": 1, "operation": "create", "schedule": record}


def change(operation: str, sid: str, accepted_ms: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"version": 1, "operation": operation, "id": sid}
    if accepted_ms is not None:
        data["acceptedAt"] = at(accepted_ms)
    return data


def log(*items: tuple[int, str, Any]) -> list[Event]:
    """Events from ``(time, type, data)``; a bare dict is a ``schedule/change``."""
    return [
        Event(seq=i, type=kind, time=time, data=data) for i, (time, kind, data) in enumerate(items)
    ]


def sc(time: int, data: dict[str, Any]) -> tuple[int, str, Any]:
    return (time, SCHEDULE_CHANGE, data)


def test_an_empty_log_has_no_badge_and_nothing_to_show() -> None:
    assert reminders_view([], 0) == {"badge": 0, "active": [], "recent": []}


def test_active_reminders_are_listed_soonest_first_and_the_badge_counts_them() -> None:
    events = log(
        sc(NOON, create("late", "Call mom", NOON + 30 * MINUTE, kind="at")),
        sc(NOON, create("soon", "Stretch", NOON + MINUTE)),
        sc(NOON, create("water", "Drink water", NOON + 5 * MINUTE, kind="every")),
        sc(NOON, create("gone", "Cancelled", NOON + 2 * MINUTE)),
        sc(NOON + 1, change("delete", "gone")),
    )
    view = reminders_view(events, 0)
    assert view["badge"] == 3
    assert view["active"] == [
        {
            "scheduleId": "soon",
            "prompt": "Stretch",
            "kind": "after",
            "nextAt": at(NOON + MINUTE),
            "afterSeconds": 60,  # the whole record: an edit sends it back as expected
        },
        {
            "scheduleId": "water",
            "prompt": "Drink water",
            "kind": "every",
            "nextAt": at(NOON + 5 * MINUTE),
            "everySeconds": 300,
        },
        {
            "scheduleId": "late",
            "prompt": "Call mom",
            "kind": "at",
            "nextAt": at(NOON + 30 * MINUTE),
        },
    ]
    assert view["recent"] == []  # a cancelled reminder was never delivered


def test_a_delivered_one_shot_leaves_the_active_list_for_the_recent_one_on_time_no_reason() -> None:
    due = NOON + MINUTE
    events = log(
        sc(NOON, create("s1", "Stretch", due)),
        sc(due + LATE_AFTER_MS, change("dispatch", "s1")),  # exactly a minute: not late yet
    )
    view = reminders_view(events, 0)
    assert view["badge"] == 0
    assert view["active"] == []
    assert view["recent"] == [
        {
            "scheduleId": "s1",
            "prompt": "Stretch",
            "occurrenceAt": at(due),
            "deliveredAt": at(due + LATE_AFTER_MS),
            "lateMs": LATE_AFTER_MS,
        }
    ]


def test_a_late_delivery_says_busy_when_a_turn_was_open_at_the_due_instant() -> None:
    due = NOON + MINUTE
    events = log(
        sc(NOON, create("s1", "Stretch", due)),
        (due - 1000, "turn/start", {}),
        (due + 3 * MINUTE, "turn/end", {}),
        sc(due + 3 * MINUTE + 1, change("dispatch", "s1")),
    )
    (item,) = reminders_view(events, 0)["recent"]
    assert item["lateMs"] == 3 * MINUTE + 1
    assert item["lateReason"] == "busy"


def test_a_late_delivery_says_offline_when_no_turn_was_open_at_the_due_instant() -> None:
    due = NOON + MINUTE
    events = log(
        (NOON, "turn/end", {}),  # an end without a start (the seed's turn) is ignored
        (NOON, "turn/start", {}),
        sc(NOON, create("s1", "Stretch", due)),
        (NOON + 1000, "turn/end", {}),  # that turn ended before the reminder fell due
        (NOON + 2000, "turn/end", {}),  # a second end closes nothing
        (due + 10 * MINUTE, "turn/start", {}),  # the host came back long after
        sc(due + 10 * MINUTE + 5, change("dispatch", "s1")),
    )
    (item,) = reminders_view(events, 0)["recent"]
    assert item["lateReason"] == "offline"


def test_a_turn_still_open_at_the_due_instant_counts_as_busy() -> None:
    due = NOON + MINUTE
    events = log(
        sc(NOON, create("s1", "Stretch", due)),
        (NOON + 1000, "turn/start", {}),  # never ended in this log
        sc(due + 2 * MINUTE, change("dispatch", "s1")),
    )
    assert reminders_view(events, 0)["recent"][0]["lateReason"] == "busy"


def test_a_recurring_reminder_stays_active_at_its_next_target_and_its_delivery_is_recent() -> None:
    first = NOON + 5 * MINUTE
    events = log(
        sc(NOON, create("water", "Drink water", first, kind="every")),
        # Offline through two occurrences: one delivery, for the latest (first + 5 min).
        sc(first + 7 * MINUTE, change("dispatch", "water", first + 7 * MINUTE)),
    )
    view = reminders_view(events, 0)
    assert view["badge"] == 1
    assert view["active"][0]["nextAt"] == at(first + 10 * MINUTE)
    (item,) = view["recent"]
    assert item["occurrenceAt"] == at(first + 5 * MINUTE)
    assert item["lateMs"] == 2 * MINUTE
    assert item["lateReason"] == "offline"


def test_only_the_latest_deliveries_are_recent_newest_first() -> None:
    items: list[tuple[int, str, Any]] = []
    for n in range(RECENT_LIMIT + 3):
        due = NOON + n * MINUTE
        items.append(sc(NOON, create(f"s{n}", f"Prompt {n}", due)))
        items.append(sc(due, change("dispatch", f"s{n}")))
    recent = reminders_view(log(*items), 0)["recent"]
    assert [item["scheduleId"] for item in recent] == [
        f"s{n}" for n in reversed(range(3, RECENT_LIMIT + 3))
    ]


def test_a_fork_does_not_show_the_reminders_its_parent_keeps() -> None:
    events = log(
        sc(NOON, create("parent", "Parent's", NOON + MINUTE)),
        (NOON, "session/end-seed", {}),
        sc(NOON + 1, create("child", "Child's", NOON + 2 * MINUTE)),
    )
    view = reminders_view(events, 2)
    assert [item["scheduleId"] for item in view["active"]] == ["child"]
    assert reminders_view(events, 0)["badge"] == 2  # the parent's own view has both


def test_a_stream_that_breaks_the_rules_raises_and_a_bad_seed_length_too() -> None:
    broken = log(sc(NOON, change("dispatch", "nobody")))
    with pytest.raises(ScheduleLogError, match=r"seq 0: dispatch targets inactive id"):
        reminders_view(broken, 0)
    with pytest.raises(ScheduleLogError, match="seedLength"):
        reminders_view([], 1)


def test_the_plugin_offers_the_view_under_its_name() -> None:
    events = log(sc(NOON, create("s1", "Stretch", NOON + MINUTE)))
    views = SchedulePlugin().dsh_session_views(events, 0, None)
    assert dict(views) == {VIEW_NAME: reminders_view(events, 0)}
    assert VIEW_NAME == "schedule.reminders"
