"""The invariant companion: candidates refused before append; corrupt streams reported."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import EventRejectedError


def change(operation, **fields):
    return {"version": 1, "operation": operation, **fields}


def record(schedule_id="schedule-1"):
    return {
        "id": schedule_id,
        "kind": "after",
        "prompt": "p",
        "afterSeconds": 5,
        "scheduledAt": "2026-08-05T12:00:05.000Z",
    }


async def test_valid_candidates_are_accepted_and_invalid_transitions_refused_before_append(h):
    agent = await h.agent()
    session = agent.session
    session.append("schedule/change", change("create", schedule=record()))
    before = len(session.events)
    bad = [
        change("dispatch", id="schedule-2"),  # inactive id
        change("create", schedule=record()),  # reused id
        change("create", schedule={**record("schedule-3"), "extra": 1}),  # malformed
        {"version": 2, "operation": "delete", "id": "schedule-1"},  # unknown version
        None,
    ]
    for data in bad:
        with pytest.raises(EventRejectedError) as info:
            session.append("schedule/change", data)
        assert info.value.plugin == "schedule"
    assert len(session.events) == before
    session.append("schedule/change", change("dispatch", id="schedule-1"))
    with pytest.raises(EventRejectedError, match="targets inactive id"):
        session.append("schedule/change", change("dispatch", id="schedule-1"))
    session.append("other/type", {"unrelated": True})  # other types pass untouched


async def test_a_malformed_existing_stream_is_reported_when_the_session_opens(h):
    agent = await h.agent()
    sid = agent.session.id
    await h.host.unload_plugin("schedule")  # write a corrupt stream without the companion
    agent.session.append("schedule/change", change("delete", id="nope"))
    await h.host.close_session(sid)
    h.host.load_plugin("schedule")
    with capture_logs() as logs:
        await h.host.resume_session(sid)
    invalid = [e for e in logs if e["event"] == "session.invalid"]
    assert invalid[0]["plugin"] == "schedule"
    assert invalid[0]["reason"] == "resumed"
    assert "targets inactive id" in invalid[0]["error"]


async def test_inherited_events_before_the_fork_boundary_are_ignored(h):
    parent = await h.agent()
    await h.host.unload_plugin("schedule")
    parent.session.append("schedule/change", {"junk": "in the parent's stream"})
    h.host.load_plugin("schedule")
    with capture_logs() as logs:
        child = await h.host.fork_session(parent.session.id)
    assert not [e for e in logs if e["event"] == "session.invalid"]
    created = await child.execute_tool("schedule_create", {"prompt": "c", "after_seconds": 9})
    assert created["id"] == "schedule-1"


def every_record(schedule_id="schedule-1"):
    return {
        "id": schedule_id,
        "kind": "every",
        "prompt": "p",
        "everySeconds": 300,
        "scheduledAt": "2026-08-05T12:05:00.000Z",
    }


async def test_an_every_dispatch_needs_a_decision_time_and_advances_the_live_stream(h):
    agent = await h.agent()
    session = agent.session
    session.append("schedule/change", change("create", schedule=every_record()))
    before = len(session.events)
    bad = [
        (change("dispatch", id="schedule-1"), "every dispatch must contain acceptedAt"),
        (
            change("dispatch", id="schedule-1", acceptedAt="2026-08-05T12:04:59.999Z"),
            "every dispatch cannot precede the active scheduledAt",
        ),
        (
            change("dispatch", id="schedule-1", acceptedAt="2026-08-05T12:17:34Z"),
            "acceptedAt",
        ),
    ]
    for data, message in bad:
        with pytest.raises(EventRejectedError, match=message) as info:
            session.append("schedule/change", data)
        assert info.value.plugin == "schedule"
    assert len(session.events) == before
    session.append(
        "schedule/change",
        change("dispatch", id="schedule-1", acceptedAt="2026-08-05T12:17:34.000Z"),
    )
    (active,) = h.plugin.folds.of(session).active
    assert active.scheduled_at == "2026-08-05T12:20:00.000Z"
    # The advanced record now refuses a decision time before its new target.
    with pytest.raises(EventRejectedError, match="cannot precede"):
        session.append(
            "schedule/change",
            change("dispatch", id="schedule-1", acceptedAt="2026-08-05T12:19:00.000Z"),
        )


async def test_a_one_shot_dispatch_must_not_carry_a_decision_time(h):
    agent = await h.agent()
    session = agent.session
    at = {
        "id": "schedule-1",
        "kind": "at",
        "prompt": "p",
        "scheduledAt": "2026-08-05T12:00:05.000Z",
    }
    session.append("schedule/change", change("create", schedule=at))
    with pytest.raises(EventRejectedError, match="one-shot dispatch must not contain acceptedAt"):
        session.append(
            "schedule/change",
            change("dispatch", id="schedule-1", acceptedAt="2026-08-05T12:00:05.000Z"),
        )
    session.append("schedule/change", change("dispatch", id="schedule-1"))
    assert h.plugin.folds.of(session).active == ()


def weekly_record(schedule_id="schedule-1"):
    return {
        "id": schedule_id,
        "kind": "weekly",
        "prompt": "p",
        "time": "12:05:00.000",
        "timeZone": "UTC",
        "weekdays": [3],
        "scheduledAt": "2026-08-05T12:05:00.000Z",
    }


async def test_a_calendar_dispatch_or_update_is_checked_before_append(h):
    agent = await h.agent()
    session = agent.session
    session.append("schedule/change", change("create", schedule=weekly_record()))
    before = len(session.events)
    accepted = "2026-08-05T12:06:00.000Z"
    bad = [
        (
            change("dispatch", id="schedule-1", acceptedAt=accepted),
            "weekly dispatch must contain occurrenceAt and nextAt",
        ),
        (
            change(
                "dispatch",
                id="schedule-1",
                acceptedAt=accepted,
                occurrenceAt="2026-08-05T12:06:00.001Z",
                nextAt="2026-08-12T12:05:00.000Z",
            ),
            "occurrenceAt must lie from the active scheduledAt through acceptedAt",
        ),
        (
            change(
                "dispatch",
                id="schedule-1",
                acceptedAt=accepted,
                occurrenceAt="2026-08-05T12:05:00.000Z",
                nextAt=accepted,
            ),
            "weekly nextAt must come after acceptedAt",
        ),
        (
            change("update", id="schedule-1", schedule=weekly_record("schedule-2")),
            "update of id 'schedule-1' holds a record of id 'schedule-2'",
        ),
        (
            change("update", id="schedule-2", schedule=weekly_record("schedule-2")),
            "update targets inactive id 'schedule-2'",
        ),
    ]
    for data, message in bad:
        with pytest.raises(EventRejectedError, match=message) as info:
            session.append("schedule/change", data)
        assert info.value.plugin == "schedule"
    assert len(session.events) == before
    session.append(
        "schedule/change",
        change(
            "dispatch",
            id="schedule-1",
            acceptedAt=accepted,
            occurrenceAt="2026-08-05T12:05:00.000Z",
            nextAt="2026-08-12T12:05:00.000Z",
        ),
    )
    (active,) = h.plugin.folds.of(session).active
    assert active.scheduled_at == "2026-08-12T12:05:00.000Z"
    renamed = {**weekly_record(), "prompt": "q", "scheduledAt": "2026-08-12T12:05:00.000Z"}
    session.append("schedule/change", change("update", id="schedule-1", schedule=renamed))
    (active,) = h.plugin.folds.of(session).active
    assert active.prompt == "q"
