"""Calendar records, titles, calendar dispatches and updates in the log: decoding, the fold's
transition rules, the Reminders panel view and the board rows."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from dsh_hookspecs import BoardEntry, Event
from dsh_schedule import (
    SCHEDULE_CHANGE,
    AfterRecord,
    AtRecord,
    Create,
    CronRecord,
    DailyRecord,
    Dispatch,
    EveryRecord,
    ScheduleLogError,
    Update,
    WeeklyRecord,
    decode_change,
    encode_change,
    fold,
)
from dsh_schedule._board import delivered_entry, pending_entry
from dsh_schedule._panel import reminders_view

NEXT_AT = "2026-08-06T07:00:00.000Z"
AT = "2026-08-05T07:00:00.000Z"


def daily_data(schedule_id: str = "schedule-1", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": schedule_id,
        "kind": "daily",
        "prompt": "Stand up",
        "time": "09:00:00.000",
        "timeZone": "Europe/Paris",
        "scheduledAt": AT,
    }
    data.update(overrides)
    return data


def weekly_data(schedule_id: str = "schedule-1", **overrides: Any) -> dict[str, Any]:
    data = daily_data(schedule_id, kind="weekly")
    scheduled_at = data.pop("scheduledAt")
    data.update(weekdays=[1, 2, 3, 4, 5], scheduledAt=scheduled_at)
    data.update(overrides)
    return data


def cron_data(schedule_id: str = "schedule-1", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": schedule_id,
        "kind": "cron",
        "prompt": "Pay rent",
        "expression": "0 9 1 * *",
        "timeZone": "UTC",
        "scheduledAt": AT,
    }
    data.update(overrides)
    return data


def every_data(schedule_id: str = "schedule-1") -> dict[str, Any]:
    return {
        "id": schedule_id,
        "kind": "every",
        "prompt": "p",
        "everySeconds": 300,
        "scheduledAt": AT,
    }


#: The records ``daily_data()``, ``weekly_data()`` and ``cron_data()`` decode to; a case that
#: expects another record spells its difference with ``attrs.evolve``.
DAILY = DailyRecord(
    id="schedule-1",
    kind="daily",
    prompt="Stand up",
    time="09:00:00.000",
    time_zone="Europe/Paris",
    scheduled_at=AT,
)
WEEKLY = WeeklyRecord(
    id="schedule-1",
    kind="weekly",
    prompt="Stand up",
    time="09:00:00.000",
    time_zone="Europe/Paris",
    weekdays=(1, 2, 3, 4, 5),
    scheduled_at=AT,
)
CRON = CronRecord(
    id="schedule-1",
    kind="cron",
    prompt="Pay rent",
    expression="0 9 1 * *",
    time_zone="UTC",
    scheduled_at=AT,
)


def create(record: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "operation": "create", "schedule": record}


def update(schedule_id: str, record: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "operation": "update", "id": schedule_id, "schedule": record}


def calendar_dispatch(
    schedule_id: str = "schedule-1",
    accepted_at: Any = AT,
    occurrence_at: Any = AT,
    next_at: Any = NEXT_AT,
) -> dict[str, Any]:
    return {
        "version": 1,
        "operation": "dispatch",
        "id": schedule_id,
        "acceptedAt": accepted_at,
        "occurrenceAt": occurrence_at,
        "nextAt": next_at,
    }


def log(*payloads: Any) -> list[Event]:
    return [
        Event(seq=seq, type=SCHEDULE_CHANGE, time=1_000 + seq, data=payload)
        for seq, payload in enumerate(payloads)
    ]


# ---------------------------------------------------------------------------------------------
# Decoding: failure paths first.

MALFORMED: dict[str, tuple[Any, str]] = {
    "daily with an extra key": (
        create(daily_data(extra=1)),
        (
            "daily schedule must contain exactly id, kind, prompt, time, timeZone, and "
            "scheduledAt, got keys"
        ),
    ),
    "daily without timeZone": (
        create({k: v for k, v in daily_data().items() if k != "timeZone"}),
        "daily schedule must contain exactly",
    ),
    "weekly without weekdays read as daily": (
        create({k: v for k, v in weekly_data().items() if k != "weekdays"}),
        (
            "weekly schedule must contain exactly id, kind, prompt, time, timeZone, weekdays, and "
            "scheduledAt"
        ),
    ),
    "cron with time too": (
        create(cron_data(time="09:00:00.000")),
        (
            "cron schedule must contain exactly id, kind, prompt, expression, timeZone, and "
            "scheduledAt"
        ),
    ),
    "weekdays on a daily": (create(daily_data(weekdays=[1])), "kind 'daily' is not 'weekly'"),
    "daily relabelled at": (create(daily_data(kind="at")), "at schedule must contain exactly"),
    "time without millis": (create(daily_data(time="09:00:00")), "time '09:00:00' is not an"),
    "time 24:00": (create(daily_data(time="24:00:00.000")), "time '24:00:00.000' is not an"),
    "time with a leap second": (create(daily_data(time="23:59:60.000")), "HH:mm:ss.SSS"),
    "time minute 60": (create(daily_data(time="09:60:00.000")), "HH:mm:ss.SSS"),
    "time a number": (create(daily_data(time=900)), "expected a string, got number @"),
    "zone lower case": (create(daily_data(timeZone="utc")), "timeZone 'utc' is not UTC or"),
    "zone an offset": (create(daily_data(timeZone="+08:00")), "is not UTC or an Area/Location"),
    "zone empty": (create(daily_data(timeZone="")), "is not UTC or an Area/Location"),
    "weekdays empty": (create(weekly_data(weekdays=[])), "weekdays [] is not a non-empty"),
    "weekdays unsorted": (create(weekly_data(weekdays=[2, 1])), "ascending array"),
    "weekdays repeated": (create(weekly_data(weekdays=[1, 1])), "ascending array"),
    "weekday 0": (create(weekly_data(weekdays=[0, 1])), "ISO weekdays 1-7"),
    "weekday 8": (create(weekly_data(weekdays=[8])), "ISO weekdays 1-7"),
    "weekday true": (create(weekly_data(weekdays=[True])), "ISO weekdays 1-7"),
    "weekday 1.0": (create(weekly_data(weekdays=[1.0])), "ISO weekdays 1-7"),
    "weekdays an object": (create(weekly_data(weekdays={"1": 1})), "expected an array, got obj"),
    "expression not canonical": (
        create(cron_data(expression="0 9 1 * 1-7")),
        "expression '0 9 1 * 1-7' is not a canonical cron expression @ $.schedule.expression",
    ),
    "expression invalid": (create(cron_data(expression="@daily")), "not a canonical cron"),
    "expression a list": (create(cron_data(expression=["0"])), "expected a string, got array"),
    "title empty": (create(daily_data(title="")), "title must be 1 to 120 characters and"),
    "title padded": (create(daily_data(title=" Stand up")), "already trimmed @ $.schedule.title"),
    "title too long": (create(daily_data(title="x" * 121)), "title must be 1 to 120"),
    "title null": (
        create(daily_data(title=None)),
        "expected a string, got null @ $.schedule.title",
    ),
    "title on an after record": (
        create(
            {
                "id": "a",
                "kind": "after",
                "prompt": "p",
                "afterSeconds": 5,
                "scheduledAt": AT,
                "title": 5,
            }
        ),
        "expected a string, got number @ $.schedule.title",
    ),
    "calendar dispatch without nextAt": (
        {k: v for k, v in calendar_dispatch().items() if k != "nextAt"},
        "missing key @ $.nextAt",
    ),
    "calendar dispatch without occurrenceAt": (
        {k: v for k, v in calendar_dispatch().items() if k != "occurrenceAt"},
        "missing key @ $.occurrenceAt",
    ),
    "calendar dispatch without acceptedAt": (
        {k: v for k, v in calendar_dispatch().items() if k != "acceptedAt"},
        "missing key @ $.acceptedAt",
    ),
    "calendar dispatch with an extra key": (
        {**calendar_dispatch(), "extra": 1},
        "extra keys ['extra'] @ $",
    ),
    "nextAt not canonical": (
        calendar_dispatch(next_at="2026-08-06T07:00:00Z"),
        "nextAt '2026-08-06T07:00:00Z' is not a YYYY-MM-DDTHH:MM:SS.sssZ instant @ $.nextAt",
    ),
    "nextAt false": (calendar_dispatch(next_at=False), "expected a string, got boolean @ $.next"),
    "occurrenceAt null": (
        calendar_dispatch(occurrence_at=None),
        "expected a string, got null @ $.occurrenceAt",
    ),
    "update without schedule": (
        {"version": 1, "operation": "update", "id": "schedule-1"},
        "missing key @ $.schedule",
    ),
    "update without id": (
        {"version": 1, "operation": "update", "schedule": daily_data()},
        "missing key @ $.id",
    ),
    "update of a padded id": (update(" x", daily_data()), "must be non-empty without surrounding"),
}


@pytest.mark.parametrize(("data", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_calendar_shapes_are_decoded_strictly(data: Any, message: str) -> None:
    with pytest.raises(ScheduleLogError, match=r"^schedule/change at seq 4: ") as caught:
        decode_change(data, seq=4)
    assert message in str(caught.value)


def test_a_calendar_dispatch_object_is_consistent_or_refused() -> None:
    with pytest.raises(ValueError, match="nextAt belongs to a calendar dispatch"):
        Dispatch(id="a", accepted_at=AT, next_at=NEXT_AT)
    with pytest.raises(ValueError, match="a calendar dispatch has acceptedAt"):
        Dispatch(id="a", occurrence_at=AT)
    assert Dispatch(id="a", accepted_at=AT, occurrence_at=AT).calendar
    assert not Dispatch(id="a", accepted_at=AT).calendar


ROUND_TRIPS: dict[str, tuple[dict[str, Any], Any]] = {
    "daily with a title": (
        create(daily_data(title="Standup")),
        Create(record=attrs.evolve(DAILY, title="Standup")),
    ),
    "weekly on Sundays": (
        create(weekly_data(weekdays=[7])),
        Create(record=attrs.evolve(WEEKLY, weekdays=(7,))),
    ),
    "cron in New York": (
        create(cron_data(expression="*/15 9-17 * * 1-5", timeZone="America/New_York")),
        Create(
            record=attrs.evolve(CRON, expression="*/15 9-17 * * 1-5", time_zone="America/New_York")
        ),
    ),
    "last calendar dispatch": (
        calendar_dispatch(next_at=None),
        Dispatch(id="schedule-1", accepted_at=AT, occurrence_at=AT, next_at=None),
    ),
    "update of a cron with a title": (
        update("schedule-1", {**cron_data(), "title": "Rent"}),
        Update(id="schedule-1", record=attrs.evolve(CRON, title="Rent")),
    ),
    "at with a 120-character title": (
        create({"id": "a", "kind": "at", "prompt": "p", "scheduledAt": AT, "title": "x" * 120}),
        Create(record=AtRecord(id="a", kind="at", prompt="p", scheduled_at=AT, title="x" * 120)),
    ),
}


@pytest.mark.parametrize(("data", "expected"), ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_calendar_shapes_round_trip_in_wire_order(data: dict[str, Any], expected: Any) -> None:
    change = decode_change(data)
    assert change == expected
    encoded = encode_change(change)
    assert encoded == data
    assert json.dumps(encoded) == json.dumps(data)  # the very key order
    assert decode_change(json.loads(json.dumps(encoded))) == change


def test_a_title_is_the_last_key_of_a_record_and_absent_without_one() -> None:
    record = EveryRecord(
        id="e", kind="every", prompt="p", every_seconds=60, scheduled_at=AT, title="Water"
    )
    assert list(encode_change(Create(record=record))["schedule"]) == [
        "id",
        "kind",
        "prompt",
        "everySeconds",
        "scheduledAt",
        "title",
    ]
    plain = AfterRecord(id="a", kind="after", prompt="p", after_seconds=5, scheduled_at=AT)
    assert "title" not in encode_change(Create(record=plain))["schedule"]


# ---------------------------------------------------------------------------------------------
# The fold.


CORRUPTIONS: dict[str, tuple[list[Any], str]] = {
    "daily dispatch without acceptedAt": (
        [create(daily_data()), {"version": 1, "operation": "dispatch", "id": "schedule-1"}],
        "daily dispatch must contain acceptedAt (id 'schedule-1')",
    ),
    "daily dispatch with acceptedAt only": (
        [
            create(daily_data()),
            {"version": 1, "operation": "dispatch", "id": "schedule-1", "acceptedAt": AT},
        ],
        "daily dispatch must contain occurrenceAt and nextAt (id 'schedule-1')",
    ),
    "daily dispatch before scheduledAt": (
        [create(daily_data()), calendar_dispatch(accepted_at="2026-08-05T06:59:59.999Z")],
        "daily dispatch cannot precede the active scheduledAt",
    ),
    "cron occurrence before scheduledAt": (
        [create(cron_data()), calendar_dispatch(occurrence_at="2026-08-05T06:59:59.999Z")],
        "cron occurrenceAt must lie from the active scheduledAt through acceptedAt",
    ),
    "weekly occurrence after acceptedAt": (
        [
            create(weekly_data()),
            calendar_dispatch(accepted_at=AT, occurrence_at="2026-08-05T07:00:00.001Z"),
        ],
        "weekly occurrenceAt must lie from the active scheduledAt through acceptedAt",
    ),
    "daily nextAt not after acceptedAt": (
        [create(daily_data()), calendar_dispatch(next_at=AT)],
        "daily nextAt must come after acceptedAt (id 'schedule-1')",
    ),
    "calendar dispatch of an every": (
        [create(every_data()), calendar_dispatch()],
        "every dispatch must not contain occurrenceAt or nextAt (id 'schedule-1')",
    ),
    "calendar dispatch of an at": (
        [
            create({"id": "schedule-1", "kind": "at", "prompt": "p", "scheduledAt": AT}),
            calendar_dispatch(),
        ],
        "one-shot dispatch must not contain acceptedAt (id 'schedule-1')",
    ),
    "update holding another id": (
        [create(daily_data()), update("schedule-1", daily_data("schedule-2"))],
        "update of id 'schedule-1' holds a record of id 'schedule-2'",
    ),
    "update of a never created id": (
        [update("schedule-1", daily_data())],
        "update targets inactive id 'schedule-1'",
    ),
    "update of an ended id": (
        [
            create(daily_data()),
            calendar_dispatch(next_at=None),
            update("schedule-1", daily_data()),
        ],
        "update targets inactive id 'schedule-1'",
    ),
}


@pytest.mark.parametrize(("payloads", "problem"), CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_calendar_transitions_that_corrupt_the_stream(payloads: list[Any], problem: str) -> None:
    with pytest.raises(ScheduleLogError, match=rf"at seq {len(payloads) - 1}: ") as caught:
        fold(log(*payloads), 0)
    assert problem in str(caught.value)


def test_a_calendar_dispatch_moves_the_record_to_its_frozen_next_target_or_ends_it() -> None:
    moved = fold(log(create(daily_data()), calendar_dispatch(accepted_at=NEXT_AT, next_at=None)), 0)
    assert moved.active == ()
    later = "2026-08-07T07:00:00.000Z"
    events = log(
        create(daily_data()),
        create(cron_data("schedule-2")),
        # Decided a day late: the occurrence delivered is the latest, the target the next one.
        calendar_dispatch(
            accepted_at="2026-08-06T08:00:00.000Z", occurrence_at=NEXT_AT, next_at=later
        ),
    )
    assert fold(events, 0).active == (
        attrs.evolve(DAILY, scheduled_at=later),
        attrs.evolve(CRON, id="schedule-2"),
    )


def test_an_update_replaces_the_record_in_its_create_order_place() -> None:
    events = log(
        create(daily_data()),
        create(cron_data("schedule-2")),
        update(
            "schedule-1", {"id": "schedule-1", "kind": "at", "prompt": "Once", "scheduledAt": AT}
        ),
    )
    result = fold(events, 0)
    assert [record.id for record in result.active] == ["schedule-1", "schedule-2"]
    assert result.active[0] == AtRecord(id="schedule-1", kind="at", prompt="Once", scheduled_at=AT)
    assert result.created_count == 2


# ---------------------------------------------------------------------------------------------
# The panel and the board.


def test_the_panel_shows_rules_titles_and_what_each_delivery_read() -> None:
    events = log(
        create(daily_data(title="Standup")),
        create(weekly_data("schedule-2", title="Weekdays")),
        create(cron_data("schedule-3")),
        calendar_dispatch(accepted_at=AT, occurrence_at=AT, next_at=NEXT_AT),
        update("schedule-1", daily_data(prompt="Sit down", scheduledAt=NEXT_AT)),
    )
    view = reminders_view(events, 0)
    assert view["active"] == [
        {
            "scheduleId": "schedule-2",
            "prompt": "Stand up",
            "kind": "weekly",
            "nextAt": AT,
            "title": "Weekdays",
            "time": "09:00:00.000",
            "timeZone": "Europe/Paris",
            "weekdays": [1, 2, 3, 4, 5],
        },
        {
            "scheduleId": "schedule-3",
            "prompt": "Pay rent",
            "kind": "cron",
            "nextAt": AT,
            "expression": "0 9 1 * *",
            "timeZone": "UTC",
        },
        {
            "scheduleId": "schedule-1",
            "prompt": "Sit down",
            "kind": "daily",
            "nextAt": NEXT_AT,
            "time": "09:00:00.000",
            "timeZone": "Europe/Paris",
        },
    ]
    # The delivery keeps what the reminder said then (the edit since dropped the title).
    assert view["recent"] == [
        {
            "scheduleId": "schedule-1",
            "prompt": "Stand up",
            "occurrenceAt": AT,
            "deliveredAt": "1970-01-01T00:00:01.003Z",
            "lateMs": 0,
            "title": "Standup",
        }
    ]


def test_board_rows_carry_the_title_and_the_rule_words_input() -> None:
    weekly = decode_change(create(weekly_data(title="Standup")))
    assert isinstance(weekly, Create)
    assert pending_entry(weekly.record) == BoardEntry(
        kind="pending",
        at_ms=1_785_913_200_000,
        data={
            "text": "Stand up",
            "title": "Standup",
            "rule": {
                "kind": "weekly",
                "time": "09:00:00.000",
                "timeZone": "Europe/Paris",
                "weekdays": [1, 2, 3, 4, 5],
            },
        },
    )
    cron = decode_change(create(cron_data()))
    assert isinstance(cron, Create)
    assert pending_entry(cron.record).data == {
        "text": "Pay rent",
        "rule": {"kind": "cron", "expression": "0 9 1 * *", "timeZone": "UTC"},
    }
    assert pending_entry(DAILY).data == {
        "text": "Stand up",
        "rule": {"kind": "daily", "time": "09:00:00.000", "timeZone": "Europe/Paris"},
    }
    event = Event(seq=9, type=SCHEDULE_CHANGE, time=1_785_913_260_000, data={})
    occurrence_at = weekly.record.scheduled_at
    assert delivered_entry(weekly.record, event, occurrence_at) == BoardEntry(
        kind="delivered",
        at_ms=1_785_913_260_000,
        data={
            "text": "Stand up",
            "title": "Standup",
            "id": weekly.record.id,
            "occurrenceAt": occurrence_at,
        },
    )
