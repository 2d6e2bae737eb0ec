"""``schedule_update``: refusals (before any flush, or in the queue), what an edit writes and
what it leaves alone (a text-only edit never re-anchors; the same rule changes nothing), the
user's ``expected`` record, the FIFO it shares with the due path, and an edited reminder firing
at its new time and never at its old one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_hookspecs import ToolCall, hookimpl
from dsh_host.testing import wait_until
from dsh_schedule import MESSAGES, SCHEDULE_CHANGE, parse_instant, parse_reminder_framing
from dsh_schedule._tools import UPDATE_DESCRIPTION, UPDATE_PARAMETERS

from .harness import START, make_harness, uncertain

START_MS = parse_instant(START)  # 2026-08-05T12:00:00.000Z
NEEDS = MESSAGES["update_needs_change"]
AT_MOST_ONE = MESSAGES["invalid_update_selector"]
BAD_ID = MESSAGES["invalid_update_id"]


def refusal(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


async def made(h: Any, agent: Any, **arguments: Any) -> dict[str, Any]:
    value = await h.call(agent, "schedule_create", {"prompt": "stand up", **arguments})
    assert "id" in value, value
    await h.settle(agent)
    return value


async def edit(h: Any, agent: Any, **arguments: Any) -> tuple[Any, int]:
    return await h.flushes(agent, "schedule_update", {"id": "schedule-1", **arguments})


def updates(h: Any, agent: Any) -> list[dict[str, Any]]:
    return [c for c in h.changes(agent) if c["operation"] == "update"]


def dispatches(h: Any, agent: Any) -> list[dict[str, Any]]:
    return [c for c in h.changes(agent) if c["operation"] == "dispatch"]


# ---------------------------------------------------------------------------------------------
# Refusals before the queue: no flush, nothing written.


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"id": ""}, refusal("invalid_rule", BAD_ID)),
        ({"id": " schedule-1", "prompt": "x"}, refusal("invalid_rule", BAD_ID)),
        ({"id": "schedule-1"}, refusal("invalid_selector", NEEDS)),
        (
            {"id": "schedule-1", "at": "2026-08-06T09:00:00Z", "every_seconds": 600},
            refusal("invalid_selector", AT_MOST_ONE),
        ),
        ({"id": "schedule-1", "after_seconds": 60}, refusal("invalid_selector", AT_MOST_ONE)),
        ({"id": "schedule-1", "prompt": "x", "note": 1}, refusal("invalid_selector", AT_MOST_ONE)),
        (
            {"id": "schedule-1", "prompt": "  "},
            refusal("invalid_prompt", MESSAGES["invalid_prompt"]),
        ),
        (
            {"id": "schedule-1", "prompt": "x" * 4001},
            refusal("prompt_too_long", MESSAGES["prompt_too_long"]),
        ),
        (
            {"id": "schedule-1", "title": ""},
            refusal("invalid_prompt", "title must be non-empty after trimming."),
        ),
        (
            {"id": "schedule-1", "every_seconds": 299},
            refusal("frequency_too_high", MESSAGES["frequency_too_high"]),
        ),
        (
            {"id": "schedule-1", "daily": {"time": "25:00:00", "time_zone": "UTC"}},
            refusal(
                "invalid_rule",
                "daily.time must use HH:mm:ss with optional 1-3 fractional digits, without leap "
                "seconds or 24:00.",
            ),
        ),
        (
            {"id": "schedule-1", "cron": {"expression": "0 9 * * *", "time_zone": "Moon/Base"}},
            refusal("invalid_time_zone", MESSAGES["invalid_time_zone"]),
        ),
    ],
)
async def test_a_bad_edit_is_refused_before_any_flush(
    h: Any, arguments: dict[str, Any], expected: dict[str, str]
) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=600)
    value, flushes = await h.flushes(agent, "schedule_update", arguments)
    assert value == expected
    assert flushes == 0
    assert updates(h, agent) == []


async def test_the_tool_words_an_id_of_the_wrong_type_itself(h: Any) -> None:
    agent = await h.agent()
    await h.settle(agent)
    for arguments in ({"prompt": "x"}, {"id": 5, "prompt": "x"}):
        call = ToolCall(call_id="c", name="schedule_update", arguments=arguments, agent=agent)
        assert await h.plugin.tools.update(call) == refusal("invalid_rule", BAD_ID)


async def test_an_edit_from_an_agent_without_an_owner_is_refused(h: Any) -> None:
    agent = await h.agent()
    child = h.host.agents.create_child(agent)
    call = ToolCall(
        call_id="c", name="schedule_update", arguments={"id": "x", "prompt": "y"}, agent=child
    )
    assert await h.plugin.tools.update(call) == refusal(
        "internal_error", MESSAGES["internal_error"]
    )


# ---------------------------------------------------------------------------------------------
# In the queue: what there is to edit.


async def test_an_unknown_or_finished_reminder_is_not_updated(h: Any) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=1)
    await made(h, agent, after_seconds=600)
    await h.call(agent, "schedule_delete", {"id": "schedule-2"})
    h.clock.advance(1)
    await wait_until(lambda: len(dispatches(h, agent)) == 1)
    await h.settle(agent)
    for schedule_id, code in (
        ("schedule-1", "schedule_ended"),  # delivered for good
        ("schedule-2", "schedule_ended"),  # deleted
        ("schedule-3", "schedule_not_found"),
    ):
        value, flushes = await h.flushes(
            agent, "schedule_update", {"id": schedule_id, "prompt": "x"}
        )
        assert value == {"id": schedule_id, "updated": False, "code": code}
        assert flushes == 1
    assert updates(h, agent) == []


async def test_a_text_only_edit_keeps_the_target(h: Any) -> None:
    agent = await h.agent()
    created = await made(h, agent, every_seconds=300)
    h.clock.advance(100)
    await h.settle(agent)
    value, flushes = await edit(h, agent, prompt=" drink water ", title=" Water ")
    assert flushes == 2
    assert value == {
        **created,
        "prompt": "drink water",
        "title": "Water",
        "scheduledAt": "2026-08-05T12:05:00.000Z",  # still on the creation anchor
    }
    assert updates(h, agent) == [
        {
            "version": 1,
            "operation": "update",
            "id": "schedule-1",
            "schedule": {
                "id": "schedule-1",
                "kind": "every",
                "prompt": "drink water",
                "everySeconds": 300,
                "scheduledAt": "2026-08-05T12:05:00.000Z",
                "title": "Water",
            },
        }
    ]
    assert await h.call(agent, "schedule_list", {}) == [value]


async def test_a_new_rule_is_computed_from_the_save_time_as_a_create_would(h: Any) -> None:
    agent = await h.agent()
    await made(h, agent, title="Standup", daily={"time": "09:00:00", "time_zone": "UTC"})
    h.clock.advance(30 * 60)  # 12:30
    await h.settle(agent)
    value, _ = await edit(h, agent, weekly={"time": "12:45", "time_zone": "UTC", "weekdays": [3]})
    assert value["code"] == "invalid_rule"
    value, flushes = await edit(
        h, agent, weekly={"time": "12:45:00", "time_zone": "UTC", "weekdays": [3]}
    )
    assert flushes == 2
    assert value == {
        "id": "schedule-1",
        "kind": "weekly",
        "prompt": "stand up",
        "title": "Standup",
        "time": "12:45:00.000",
        "timeZone": "UTC",
        "weekdays": [3],
        "scheduledAt": "2026-08-05T12:45:00.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    value, _ = await edit(h, agent, every_seconds=600)
    assert (value["kind"], value["everySeconds"]) == ("every", 600)
    assert value["scheduledAt"] == "2026-08-05T12:40:00.000Z"  # anchored at the save time
    value, _ = await edit(
        h, agent, at={"date": "2026-08-06", "time": "09:00:00", "time_zone": "UTC"}
    )
    assert (value["kind"], value["scheduledAt"]) == ("at", "2026-08-06T09:00:00.000Z")
    assert "everySeconds" not in value
    value, _ = await edit(h, agent, cron={"expression": "0 9 1 * *", "time_zone": "Europe/Paris"})
    assert (value["kind"], value["scheduledAt"]) == ("cron", "2026-09-01T07:00:00.000Z")


@pytest.mark.parametrize(
    ("created", "same"),
    [
        (
            {"daily": {"time": "09:00:00", "time_zone": "America/New_York"}},
            {"daily": {"time": "09:00:00.000", "time_zone": "US/Eastern"}},
        ),
        (
            {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": [5, 1]}},
            {"weekly": {"time": "09:00:00", "time_zone": "Etc/UTC", "weekdays": [1, 5]}},
        ),
        (
            {"cron": {"expression": "0,30 9 * * 1-5", "time_zone": "UTC"}},
            {"cron": {"expression": "*/30 9 * * 1,2,3,4,5", "time_zone": "UTC"}},
        ),
        ({"every_seconds": 600}, {"every_seconds": 600}),
        (
            {"at": "2026-08-06T09:00:00+02:00"},
            {"at": {"date": "2026-08-06", "time": "07:00:00", "time_zone": "UTC"}},
        ),
    ],
)
async def test_the_same_rule_again_changes_nothing(
    h: Any, created: dict[str, Any], same: dict[str, Any]
) -> None:
    agent = await h.agent()
    view = await made(h, agent, **created)
    h.clock.advance(45)  # a re-anchor would show
    await h.settle(agent)
    value, flushes = await edit(h, agent, **same)
    assert value == {**view, "updated": False}
    assert flushes == 1
    # A new title with the same rule is written, and still keeps the target.
    titled, flushes = await edit(h, agent, title="Named", **same)
    assert titled == {**view, "title": "Named"}
    assert flushes == 2
    assert len(updates(h, agent)) == 1


async def test_an_overdue_reminder_may_be_renamed_and_then_fires_with_its_new_text(
    h: Any,
) -> None:
    agent = await h.agent()
    await made(h, agent, at="2026-08-05T12:01:00Z")
    h.clock.suspend(120)  # the wall clock moved, the owner's segment timer has not fired
    value, _ = await edit(h, agent, at="2026-08-05T12:01:00Z", prompt="now")
    assert (value["prompt"], value["state"]) == ("now", "overdue")
    await wait_until(lambda: len(dispatches(h, agent)) == 1)  # the edit re-drove the owner
    (followup,) = h.followups(agent)
    assert parse_reminder_framing(followup["text"])[2] == "now"


async def test_an_edit_into_the_past_or_past_year_9999_is_refused_in_the_queue(h: Any) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=600)
    value, flushes = await edit(h, agent, at="2026-08-05T11:59:00Z")
    assert value == refusal("not_future", MESSAGES["not_future"])
    assert flushes == 1
    h.clock.set_wall(parse_instant("9999-12-31T10:00:00.000Z"))
    value, flushes = await edit(h, agent, daily={"time": "09:00:00", "time_zone": "UTC"})
    assert value == refusal(
        "time_out_of_range",
        "No future daily occurrence is representable as a four-digit-year UTC instant.",
    )
    assert flushes == 1
    assert updates(h, agent) == []


# ---------------------------------------------------------------------------------------------
# The user's expected record.


async def test_a_user_edit_of_what_it_showed_applies_and_a_changed_reminder_conflicts(
    h: Any,
) -> None:
    agent = await h.agent()
    view = await made(h, agent, title="Standup", every_seconds=300)
    shown = {key: value for key, value in view.items() if key not in ("state", "deliveryMode")}
    _, applied, _ = await agent.run_user_tool(
        "schedule_update", {"id": "schedule-1", "prompt": "sit down", "expected": view}
    )
    assert applied["prompt"] == "sit down"
    # The reminder changed since (here: the user's own edit): the old record conflicts.
    for expected in (shown, view, "schedule-1", None):
        _, value, _ = await agent.run_user_tool(
            "schedule_update", {"id": "schedule-1", "prompt": "again", "expected": expected}
        )
        assert value == {"id": "schedule-1", "updated": False, "code": "schedule_conflict"}
    # It fired meanwhile: a recurring reminder moved on, so the record shown is stale too.
    now_shown = {key: value for key, value in applied.items() if key != "state"}
    h.clock.advance(300)
    await wait_until(lambda: len(dispatches(h, agent)) == 1)
    await h.settle(agent)
    _, value, _ = await agent.run_user_tool(
        "schedule_update", {"id": "schedule-1", "title": "x", "expected": now_shown}
    )
    assert value["code"] == "schedule_conflict"
    assert len(updates(h, agent)) == 1
    assert "expected" not in UPDATE_PARAMETERS["properties"]  # the model never sends it


# ---------------------------------------------------------------------------------------------
# Checkpoints, failures and the FIFO.


async def test_an_unacknowledged_preflight_or_barrier_is_uncertain(h: Any) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=600)
    h.flush.once = ["false"]
    value, _ = await edit(h, agent, prompt="a")
    assert value == uncertain("update", "schedule-1")
    assert updates(h, agent) == []
    h.flush.once = ["ok", "raise"]
    value, _ = await edit(h, agent, prompt="b")
    assert value == uncertain("update", "schedule-1")
    assert [u["schedule"]["prompt"] for u in updates(h, agent)] == ["b"]  # in the live log


class RejectUpdates:
    @hookimpl
    def dsh_event_validate(self, session: Any, event: Any) -> None:
        if event.type == SCHEDULE_CHANGE and event.data.get("operation") == "update":
            raise RuntimeError("refused")


async def test_an_append_failure_or_a_corrupt_log_is_answered(h: Any) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=600)
    h.host.load_plugin("reject", factory=RejectUpdates)
    value, _ = await edit(h, agent, prompt="a")
    assert value == refusal("internal_error", MESSAGES["internal_error"])
    await h.host.unload_plugin("reject")
    await h.host.unload_plugin("schedule")
    agent.session.append(SCHEDULE_CHANGE, {"version": 1, "operation": "delete", "id": "nope"})
    h.host.load_plugin("schedule")
    other = await h.agent()
    await h.settle(other)
    call = ToolCall(
        call_id="c",
        name="schedule_update",
        arguments={"id": "schedule-1", "prompt": "a"},
        agent=agent,
    )
    h.plugin.owners[agent] = h.plugin.owners[other].__class__(agent, h.host, h.plugin.folds)
    value = await h.plugin.tools.update(call)
    assert value == refusal("corrupt_schedule_log", MESSAGES["corrupt_schedule_log"])


async def test_an_edit_waits_for_a_delivery_in_flight_and_then_finds_it_ended(h: Any) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=5)
    h.flush.mode = "gate"
    h.clock.advance(5)  # the owner takes the FIFO and waits in its preflight
    await wait_until(lambda: h.flush.count >= 1 and h.owner(agent).queue.locked())
    editing = asyncio.create_task(
        h.call(agent, "schedule_update", {"id": "schedule-1", "prompt": "x"})
    )
    for _ in range(20):
        await asyncio.sleep(0)
    assert not editing.done()
    h.flush.mode = "ok"
    h.flush.gate.set()
    assert await editing == {"id": "schedule-1", "updated": False, "code": "schedule_ended"}
    assert updates(h, agent) == []
    (followup,) = h.followups(agent)
    assert parse_reminder_framing(followup["text"])[2] == "stand up"


# ---------------------------------------------------------------------------------------------
# An edited reminder fires at its new time and never at its old one.


@pytest.mark.parametrize(("old", "new"), [(60, 180), (600, 30)])
async def test_an_edited_reminder_fires_at_its_new_time_only(h: Any, old: int, new: int) -> None:
    agent = await h.agent()
    await made(h, agent, daily={"time": f"12:{old // 60:02d}:{old % 60:02d}", "time_zone": "UTC"})
    value, _ = await edit(h, agent, at=f"2026-08-05T12:{new // 60:02d}:{new % 60:02d}Z")
    assert value["scheduledAt"] == f"2026-08-05T12:{new // 60:02d}:{new % 60:02d}.000Z"
    assert h.host.sessions.posted(agent.session)[("schedule", "schedule-1")].at_ms == (
        START_MS + new * 1000
    )
    for _ in range(12):  # twelve minutes, a segment at a time
        h.clock.advance(60)
        await h.settle(agent)
    (dispatch,) = dispatches(h, agent)
    assert dispatch == {"version": 1, "operation": "dispatch", "id": "schedule-1"}
    (followup,) = h.followups(agent)
    assert parse_reminder_framing(followup["text"])[1] == value["scheduledAt"]


def test_the_description_teaches_the_edit() -> None:
    for words in (
        "exact id",
        "at most one of at, every_seconds, daily, weekly or cron",
        "never at its old one",
        "updated: false",
        "schedule_ended",
    ):
        assert words in UPDATE_DESCRIPTION
    assert "Local times that do not exist in the zone are skipped" in UPDATE_DESCRIPTION
    assert UPDATE_PARAMETERS["required"] == ["id"]
    assert list(UPDATE_PARAMETERS["properties"]) == [
        "id",
        "prompt",
        "title",
        "at",
        "every_seconds",
        "daily",
        "weekly",
        "cron",
        "renotify_minutes",
    ]


async def test_the_wake_index_and_the_board_follow_an_edit() -> None:
    h = await make_harness(config={"cold_delivery": True})
    try:
        agent = await h.agent()
        await made(h, agent, after_seconds=600)
        assert h.host.sessions.wakes(agent.session) == {"schedule": START_MS + 600_000}
        value, _ = await edit(h, agent, at="2026-08-05T12:02:00Z", title="Soon")
        assert value["scheduledAt"] == "2026-08-05T12:02:00.000Z"
        assert h.host.sessions.wakes(agent.session) == {"schedule": START_MS + 120_000}
        row = h.host.sessions.posted(agent.session)[("schedule", "schedule-1")]
        assert (row.at_ms, row.data) == (START_MS + 120_000, {"text": "stand up", "title": "Soon"})
    finally:
        await h.host.close()
