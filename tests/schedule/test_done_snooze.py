"""Done and Snooze of one delivered occurrence: ``schedule_ack`` and ``schedule_snooze``, the
``ack`` change and the ``snoozedFrom`` link in the log, the fold's per-occurrence state and the
delivered board rows that show it. Refusals first: bad arguments, an occurrence this Session did
not deliver (a fork's parent's included), storage that does not acknowledge."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_hookspecs import BoardEntry, Event, ToolCall, hookimpl
from dsh_host.testing import wait_until
from dsh_schedule import (
    MESSAGES,
    SCHEDULE_CHANGE,
    Ack,
    AtRecord,
    Create,
    ScheduleLogError,
    SnoozedFrom,
    decode_change,
    encode_change,
    fold,
    format_instant,
    parse_instant,
    present_dispatch,
)
from dsh_schedule._at import NOT_FUTURE
from dsh_schedule._fold import IncrementalFold
from dsh_schedule._panel import reminders_view

from .harness import START, Harness, make_harness, settle_quiet, uncertain
from .test_board import delivered, dispatch_events, record_posts, rows

START_MS = parse_instant(START)
#: The occurrence a reminder made at START with after_seconds=60 delivers.
AT_60 = format_instant(START_MS + 60_000)


def refusal(code: str, message_key: str | None = None) -> dict[str, Any]:
    return {"code": code, "message": MESSAGES[message_key or code]}


NOT_FOUND = refusal("not_found")


async def made(h: Harness, agent: Any, prompt: str = "drink water", **selector: Any) -> str:
    value = await h.call(agent, "schedule_create", {"prompt": prompt, **selector})
    assert isinstance(value, dict)
    assert "id" in value, value
    return str(value["id"])


async def deliveries(h: Harness, agent: Any, count: int) -> None:
    """Bounded wait for ``count`` dispatches in all, and for everything they started to end."""
    await wait_until(lambda: len(h.dispatches(agent)) >= count, timeout=10)
    await settle_quiet(h.host, timeout=10)


async def delivered_one(h: Harness, agent: Any, prompt: str = "drink water", **extra: Any) -> str:
    """A one-shot reminder made now for 60 s later, and delivered (its occurrence: AT_60)."""
    schedule_id = await made(h, agent, prompt, after_seconds=60, **extra)
    before = len(h.dispatches(agent))
    h.clock.advance(60)
    await deliveries(h, agent, before + 1)
    return schedule_id


def operations(h: Harness, agent: Any) -> list[str]:
    return [change["operation"] for change in h.changes(agent)]


# ---------------------------------------------------------------------------------------------
# Refused before anything


@pytest.mark.parametrize(
    ("arguments", "code", "message_key"),
    [
        ({"id": "", "occurrence_at": AT_60}, "invalid_rule", "invalid_ack_id"),
        ({"id": " schedule-1", "occurrence_at": AT_60}, "invalid_rule", "invalid_ack_id"),
        ({"id": "schedule-1", "occurrence_at": "yesterday"}, "invalid_rule", "invalid_occurrence"),
        # No offset: which instant it names is not known.
        (
            {"id": "schedule-1", "occurrence_at": "2026-08-05T12:01:00"},
            "invalid_rule",
            "invalid_occurrence",
        ),
        (
            {"id": "schedule-1", "occurrence_at": "2026-02-30T12:01:00Z"},
            "invalid_rule",
            "invalid_occurrence",
        ),
        # Its offset moves it before year 0001.
        (
            {"id": "schedule-1", "occurrence_at": "0001-01-01T00:00:00+01:00"},
            "invalid_rule",
            "invalid_occurrence",
        ),
    ],
)
async def test_a_bad_ack_is_refused_before_any_flush(
    h: Harness, arguments: dict[str, Any], code: str, message_key: str
) -> None:
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_ack", arguments)
    assert value == refusal(code, message_key)
    assert flushes == 0
    assert h.changes(agent) == []


@pytest.mark.parametrize(
    ("arguments", "code", "message_key"),
    [
        ({"id": "", "occurrence_at": AT_60, "minutes": 5}, "invalid_rule", "invalid_snooze_id"),
        (
            {"id": "schedule-1 ", "occurrence_at": AT_60, "minutes": 5},
            "invalid_rule",
            "invalid_snooze_id",
        ),
        (
            {"id": "schedule-1", "occurrence_at": "soon", "minutes": 5},
            "invalid_rule",
            "invalid_occurrence",
        ),
        (
            {"id": "schedule-1", "occurrence_at": AT_60},
            "invalid_selector",
            "invalid_snooze_selector",
        ),
        (
            {
                "id": "schedule-1",
                "occurrence_at": AT_60,
                "minutes": 5,
                "until": "2026-08-06T09:00:00Z",
            },
            "invalid_selector",
            "invalid_snooze_selector",
        ),
        *(
            (
                {"id": "schedule-1", "occurrence_at": AT_60, "minutes": minutes},
                "invalid_rule",
                "invalid_snooze_minutes",
            )
            for minutes in (0, -5, 10_081, 1.5, 2.0, 2**53)
        ),
        *(
            (
                {"id": "schedule-1", "occurrence_at": AT_60, "until": until},
                "invalid_rule",
                "invalid_until",
            )
            for until in ("in an hour", "2026-08-06T09:00:00", "2026-08-06T25:00:00Z")
        ),
    ],
)
async def test_a_bad_snooze_is_refused_before_any_flush(
    h: Harness, arguments: dict[str, Any], code: str, message_key: str
) -> None:
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_snooze", arguments)
    assert value == refusal(code, message_key)
    assert flushes == 0
    assert h.changes(agent) == []


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("schedule_ack", {"id": "schedule-1"}),
        ("schedule_ack", {"id": 1, "occurrence_at": AT_60}),
        ("schedule_ack", {"id": "schedule-1", "occurrence_at": AT_60, "note": "x"}),
        ("schedule_snooze", {"id": "schedule-1", "occurrence_at": AT_60, "minutes": "5"}),
        ("schedule_snooze", {"id": "schedule-1", "occurrence_at": AT_60, "until": 5}),
        ("schedule_snooze", {"occurrence_at": AT_60, "minutes": 5}),
        ("schedule_create", {"prompt": "p", "after_seconds": 9, "renotify_minutes": "5"}),
    ],
)
async def test_argument_type_violations_are_the_registrys(
    h: Harness, name: str, arguments: dict[str, Any]
) -> None:
    agent = await h.agent()
    value, flushes = await h.flushes(agent, name, arguments)
    assert isinstance(value, dict)
    assert value["code"] == "invalid_arguments"
    assert flushes == 0


@pytest.mark.parametrize("renotify", [0, 4, 1441, 5.5, 10.0])
async def test_renotify_minutes_out_of_range_are_refused_before_any_flush(
    h: Harness, renotify: object
) -> None:
    agent = await h.agent()
    await made(h, agent, after_seconds=600)
    expected = refusal("invalid_rule", "invalid_renotify")
    create = {"prompt": "p", "after_seconds": 9, "renotify_minutes": renotify}
    assert await h.flushes(agent, "schedule_create", create) == (expected, 0)
    update = {"id": "schedule-1", "renotify_minutes": renotify}
    assert await h.flushes(agent, "schedule_update", update) == (expected, 0)
    assert operations(h, agent) == ["create"]


async def test_direct_calls_with_values_no_schema_admits_are_refused_too(h: Harness) -> None:
    agent = await h.agent()
    await h.settle(agent)
    tools = h.plugin.tools
    for handler, arguments, key in (
        (tools.ack, {"id": 7, "occurrence_at": AT_60}, "invalid_ack_id"),
        (tools.ack, {"id": "schedule-1", "occurrence_at": 7}, "invalid_occurrence"),
        (tools.snooze, {"id": None, "occurrence_at": AT_60, "minutes": 5}, "invalid_snooze_id"),
        (tools.snooze, {"id": "schedule-1", "occurrence_at": AT_60, "until": 5}, "invalid_until"),
    ):
        call = ToolCall(call_id="c", name="x", arguments=arguments, agent=agent)
        value = await handler(call)
        assert value == refusal("invalid_rule", key)
    assert h.changes(agent) == []


# ---------------------------------------------------------------------------------------------
# Refused in the queue: nothing this Session delivered there


async def test_an_occurrence_this_session_did_not_deliver_is_not_found(h: Harness) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent)
    repeating = await made(h, agent, "stretch", every_seconds=300)
    before = h.changes(agent)
    for arguments in (
        {"id": "schedule-9", "occurrence_at": AT_60},  # never made
        # Made, not delivered yet: its next occurrence is no delivered one.
        {"id": repeating, "occurrence_at": format_instant(START_MS + 360_000)},
        {"id": one, "occurrence_at": format_instant(START_MS + 61_000)},  # another instant
    ):
        for name, extra in (("schedule_ack", {}), ("schedule_snooze", {"minutes": 10})):
            value, flushes = await h.flushes(agent, name, {**arguments, **extra})
            assert value == NOT_FOUND, (name, arguments)
            assert flushes == 1  # the preflight: decided from a confirmed fold
    assert h.changes(agent) == before


async def test_a_fork_cannot_ack_or_snooze_its_parents_deliveries(h: Harness) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent)
    child = await h.host.fork_session(agent.session.id)
    await settle_quiet(h.host)
    owned = len(child.session.events)
    ack = {"id": one, "occurrence_at": AT_60}
    assert await h.call(child, "schedule_ack", ack) == NOT_FOUND
    assert await h.call(child, "schedule_snooze", {**ack, "minutes": 5}) == NOT_FOUND
    assert [e.type for e in child.session.events[owned:] if e.type == SCHEDULE_CHANGE] == []
    # The parent's own occurrence is still its own to mark done.
    assert await h.call(agent, "schedule_ack", ack) == {
        "done": True,
        "id": one,
        "occurrenceAt": AT_60,
    }


async def test_unacknowledged_storage_is_uncertain_and_a_retry_finds_the_truth(
    h: Harness,
) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent, "first")
    two = await delivered_one(h, agent, "second")
    at_two = format_instant(START_MS + 120_000)
    # A preflight that is not acknowledged decides nothing.
    h.flush.once = ["false"]
    ack = {"id": one, "occurrence_at": AT_60}
    assert await h.call(agent, "schedule_ack", ack) == uncertain("ack", one)
    h.flush.once = ["raise"]
    snooze = {"id": two, "occurrence_at": at_two, "minutes": 5}
    assert await h.call(agent, "schedule_snooze", snooze) == uncertain("snooze", two)
    assert "ack" not in operations(h, agent)
    count = len(h.changes(agent))
    # A barrier that fails: the change is in the live log, but not known to be stored.
    h.flush.once = ["ok", "raise"]
    assert await h.call(agent, "schedule_ack", ack) == uncertain("ack", one)
    h.flush.once = ["ok", "false"]
    assert await h.call(agent, "schedule_snooze", snooze) == uncertain("snooze", "schedule-3")
    assert operations(h, agent)[count:] == ["ack", "create"]
    # Asking again answers what the log holds, and writes nothing more.
    value, flushes = await h.flushes(agent, "schedule_ack", ack)
    assert value == {"done": True, "id": one, "occurrenceAt": AT_60}
    assert flushes == 1
    value, flushes = await h.flushes(agent, "schedule_snooze", snooze)
    assert value == {
        "code": "already_snoozed",
        "message": "That occurrence is already snoozed by reminder schedule-3.",
        "snoozeId": "schedule-3",
    }
    assert flushes == 1
    assert len(h.changes(agent)) == count + 2


class RejectChanges:
    """A plugin whose validator refuses every schedule/change append (an append failure)."""

    @hookimpl
    def dsh_event_validate(self, session: Any, event: Any) -> None:
        if event.type == SCHEDULE_CHANGE:
            raise RuntimeError("storage policy refuses this event")


async def test_append_failures_and_agents_without_an_owner_are_internal_errors(
    h: Harness,
) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent)
    ack = {"id": one, "occurrence_at": AT_60}
    h.host.load_plugin("reject", factory=RejectChanges)
    internal = refusal("internal_error")
    assert await h.call(agent, "schedule_ack", ack) == internal
    assert await h.call(agent, "schedule_snooze", {**ack, "minutes": 5}) == internal
    await h.host.unload_plugin("reject")
    child = h.host.agents.create_child(agent)  # children never get an owner
    tools = h.plugin.tools
    for handler, arguments in ((tools.ack, ack), (tools.snooze, {**ack, "minutes": 5})):
        call = ToolCall(call_id="c", name="x", arguments=arguments, agent=child)
        assert await handler(call) == internal
    assert "ack" not in operations(h, agent)
    assert operations(h, agent).count("create") == 1


async def test_a_corrupt_log_is_answered_as_such(h: Harness) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent)
    await h.host.unload_plugin("schedule")  # write a corrupt stream without the companion
    agent.session.append(SCHEDULE_CHANGE, {"version": 1, "operation": "delete", "id": "nope"})
    h.host.load_plugin("schedule")
    other = await h.agent()
    await h.settle(other)
    h.plugin.owners[agent] = h.plugin.owners[other].__class__(agent, h.host, h.plugin.folds)
    corrupt = refusal("corrupt_schedule_log")
    for handler, arguments in (
        (h.plugin.tools.ack, {"id": one, "occurrence_at": AT_60}),
        (h.plugin.tools.snooze, {"id": one, "occurrence_at": AT_60, "minutes": 5}),
    ):
        call = ToolCall(call_id="c", name="x", arguments=arguments, agent=agent)
        assert await handler(call) == corrupt


# ---------------------------------------------------------------------------------------------
# Done


async def test_done_marks_one_occurrence_and_answers_the_same_again(h: Harness) -> None:
    agent = await h.agent()
    session = agent.session
    every = await made(h, agent, "stretch", every_seconds=300)
    h.clock.advance(300)
    await deliveries(h, agent, 1)
    (dispatch,) = dispatch_events(session)
    occurrence = START_MS + 300_000
    posts = record_posts(h.host)
    # Any offset names the instant; the answer and the log hold the canonical one.
    value, flushes = await h.flushes(
        agent, "schedule_ack", {"id": every, "occurrence_at": "2026-08-05T14:05:00+02:00"}
    )
    assert value == {"done": True, "id": every, "occurrenceAt": format_instant(occurrence)}
    assert flushes == 2
    assert h.changes(agent)[-1] == {
        "version": 1,
        "operation": "ack",
        "id": every,
        "occurrenceAt": format_instant(occurrence),
    }
    # The delivered row shows it; the repeating reminder keeps its schedule and its row.
    row = delivered(dispatch, "stretch", occurrence, done=True)
    assert posts == [(session.id, f"{every}@{dispatch.seq}", row)]
    listed = await h.call(agent, "schedule_list", {})
    assert [(v["id"], v["scheduledAt"]) for v in listed] == [
        (every, format_instant(START_MS + 600_000))
    ]
    # Done again: the same answer, one flush, nothing written.
    again = {"id": every, "occurrence_at": format_instant(occurrence)}
    assert await h.flushes(agent, "schedule_ack", again) == (value, 1)
    assert operations(h, agent) == ["create", "dispatch", "ack"]
    # Done is not snoozed.
    value, flushes = await h.flushes(agent, "schedule_snooze", {**again, "minutes": 5})
    assert (value, flushes) == (refusal("already_done"), 1)
    # The Reminders panel shows it too.
    (recent,) = reminders_view(session.events, 0)["recent"]  # type: ignore[misc]
    assert recent["done"] is True  # type: ignore[index]
    assert "snoozedUntil" not in recent  # type: ignore[operator]


async def test_done_of_one_occurrence_leaves_the_others(h: Harness) -> None:
    agent = await h.agent()
    session = agent.session
    every = await made(h, agent, "stretch", every_seconds=300)
    h.clock.advance(300)
    await deliveries(h, agent, 1)
    h.clock.advance(300)
    await deliveries(h, agent, 2)
    first, second = dispatch_events(session)
    value = await h.call(
        agent, "schedule_ack", {"id": every, "occurrence_at": format_instant(START_MS + 600_000)}
    )
    assert value["done"] is True  # type: ignore[index]
    assert {key: entry for key, entry in rows(h.host, session).items() if "@" in key} == {
        f"{every}@{first.seq}": delivered(first, "stretch", START_MS + 300_000),
        f"{every}@{second.seq}": delivered(second, "stretch", START_MS + 600_000, done=True),
    }


# ---------------------------------------------------------------------------------------------
# Snooze


async def test_snooze_makes_a_linked_one_time_reminder_and_leaves_the_repeating_one(
    h: Harness,
) -> None:
    agent = await h.agent()
    session = agent.session
    value = await h.call(
        agent, "schedule_create", {"prompt": "stretch", "title": "Stretch", "every_seconds": 300}
    )
    every = value["id"]  # type: ignore[index]
    h.clock.advance(300)
    await deliveries(h, agent, 1)
    (dispatch,) = dispatch_events(session)
    occurrence = format_instant(START_MS + 300_000)
    h.clock.advance(20)
    await settle_quiet(h.host)
    now = h.clock.now_ms()
    posts = record_posts(h.host)
    snooze = {"id": every, "occurrence_at": occurrence, "minutes": 10}
    value, flushes = await h.flushes(agent, "schedule_snooze", snooze)
    linked = {"id": every, "occurrenceAt": occurrence}
    assert value == {
        "id": "schedule-2",
        "kind": "at",
        "prompt": "stretch",
        "title": "Stretch",
        "snoozedFrom": linked,
        "scheduledAt": format_instant(now + 600_000),
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    assert flushes == 2
    assert h.changes(agent)[-1] == {
        "version": 1,
        "operation": "create",
        "schedule": {
            "id": "schedule-2",
            "kind": "at",
            "prompt": "stretch",
            "scheduledAt": format_instant(now + 600_000),
            "title": "Stretch",
            "snoozedFrom": linked,
        },
    }
    # The parent is unchanged; the snooze is a reminder of its own, listed with its link.
    listed = await h.call(agent, "schedule_list", {})
    assert [(v["id"], v["scheduledAt"], v.get("snoozedFrom")) for v in listed] == [
        (every, format_instant(START_MS + 600_000), None),
        ("schedule-2", format_instant(now + 600_000), linked),
    ]
    until = format_instant(now + 600_000)
    delivered_row = delivered(
        dispatch, "stretch", START_MS + 300_000, title="Stretch", snoozedUntil=until
    )
    assert sorted(posts, key=lambda post: post[1]) == [
        (session.id, f"{every}@{dispatch.seq}", delivered_row),
        (
            session.id,
            "schedule-2",
            BoardEntry(
                kind="pending", at_ms=now + 600_000, data={"text": "stretch", "title": "Stretch"}
            ),
        ),
    ]
    # One snooze per occurrence; Done still applies to it.
    assert await h.flushes(agent, "schedule_snooze", {**snooze, "minutes": 30}) == (
        {
            "code": "already_snoozed",
            "message": "That occurrence is already snoozed by reminder schedule-2.",
            "snoozeId": "schedule-2",
        },
        1,
    )
    ack = {"id": every, "occurrence_at": occurrence}
    assert (await h.call(agent, "schedule_ack", ack))["done"] is True  # type: ignore[index]
    key = f"{every}@{dispatch.seq}"
    assert rows(h.host, session)[key].data == {
        **delivered_row.data,  # type: ignore[dict-item]
        "done": True,
    }
    # The snooze is delivered as a normal one-time reminder, and can itself be done.
    h.clock.advance(600)
    await wait_until(lambda: "schedule-2" in h.dispatches(agent), timeout=10)
    await settle_quiet(h.host)
    own = {"id": "schedule-2", "occurrence_at": until}
    assert await h.call(agent, "schedule_ack", own) == {
        "done": True,
        "id": "schedule-2",
        "occurrenceAt": until,
    }
    view = reminders_view(session.events, 0)
    recent = {(item["scheduleId"], item["occurrenceAt"]): item for item in view["recent"]}  # type: ignore[index, union-attr]
    assert recent[every, occurrence]["snoozedUntil"] == until
    assert recent[every, occurrence]["done"] is True
    assert recent["schedule-2", until]["done"] is True


async def test_a_snooze_can_be_snoozed_and_then_it_is_not_found_elsewhere(h: Harness) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent, "call mom")
    value = await h.call(
        agent, "schedule_snooze", {"id": one, "occurrence_at": AT_60, "minutes": 1}
    )
    snooze_at = value["scheduledAt"]  # type: ignore[index]
    h.clock.advance(60)
    await deliveries(h, agent, 2)
    value = await h.call(
        agent, "schedule_snooze", {"id": "schedule-2", "occurrence_at": snooze_at, "minutes": 5}
    )
    assert value["snoozedFrom"] == {"id": "schedule-2", "occurrenceAt": snooze_at}  # type: ignore[index]
    assert value["prompt"] == "call mom"  # type: ignore[index]


async def test_snooze_until_an_instant_and_its_refusals_in_the_queue(h: Harness) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent, "call mom")
    base = {"id": one, "occurrence_at": AT_60}
    now = format_instant(h.clock.now_ms())
    not_future = {"code": "not_future", "message": NOT_FUTURE}
    for until in ("2026-08-05T11:00:00Z", now):
        value, flushes = await h.flushes(agent, "schedule_snooze", {**base, "until": until})
        assert (value, flushes) == (not_future, 1)
    value = await h.call(agent, "schedule_snooze", {**base, "until": "2026-08-05T15:00:00+02:00"})
    assert value["scheduledAt"] == "2026-08-05T13:00:00.000Z"  # type: ignore[index]
    assert "title" not in value  # type: ignore[operator]


async def test_snooze_counts_against_the_active_limit() -> None:
    h = await make_harness(config={"max_active": 1})
    try:
        agent = await h.agent()
        one = await delivered_one(h, agent)
        await made(h, agent, "holds the only place", after_seconds=3600)
        value, flushes = await h.flushes(
            agent, "schedule_snooze", {"id": one, "occurrence_at": AT_60, "minutes": 5}
        )
        assert value == {
            "code": "too_many_active",
            "message": "This session already holds 1 active reminders; delete one first.",
        }
        assert flushes == 1
    finally:
        await h.host.close()


async def test_a_snooze_past_year_9999_is_out_of_range(h: Harness) -> None:
    agent = await h.agent()
    at = "9999-12-31T23:50:00Z"
    await made(h, agent, "the last one", at=at)
    h.clock.set_wall(parse_instant("9999-12-31T23:49:00.000Z"))
    h.clock.advance(60)  # the owner's segment ends: it reads the wall clock again
    await deliveries(h, agent, 1)
    value = await h.call(
        agent,
        "schedule_snooze",
        {"id": "schedule-1", "occurrence_at": at, "minutes": 10_080},
    )
    assert value == refusal("time_out_of_range")


# ---------------------------------------------------------------------------------------------
# renotify_minutes on the record


async def test_renotify_minutes_is_kept_listed_and_edited(h: Harness) -> None:
    agent = await h.agent()
    value = await h.call(
        agent,
        "schedule_create",
        {"prompt": "pills", "after_seconds": 600, "renotify_minutes": 15},
    )
    assert value == {
        "id": "schedule-1",
        "kind": "after",
        "prompt": "pills",
        "afterSeconds": 600,
        "renotifyMinutes": 15,
        "scheduledAt": format_instant(START_MS + 600_000),
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    assert h.changes(agent)[0]["schedule"]["renotifyMinutes"] == 15
    assert await h.call(agent, "schedule_list", {}) == [value]
    # Changed alone, then kept through a text edit and a new time.
    edited = await h.call(agent, "schedule_update", {"id": "schedule-1", "renotify_minutes": 60})
    assert edited["renotifyMinutes"] == 60  # type: ignore[index]
    edited = await h.call(agent, "schedule_update", {"id": "schedule-1", "prompt": "two pills"})
    assert edited["renotifyMinutes"] == 60  # type: ignore[index]
    moved = await h.call(agent, "schedule_update", {"id": "schedule-1", "every_seconds": 3600})
    assert (moved["kind"], moved["renotifyMinutes"]) == ("every", 60)  # type: ignore[index]
    view = reminders_view(agent.session.events, 0)
    (item,) = view["active"]  # type: ignore[misc]
    assert item["renotifyMinutes"] == 60  # type: ignore[index]


async def test_an_edit_keeps_a_snooze_linked_while_it_stays_one_time(h: Harness) -> None:
    agent = await h.agent()
    one = await delivered_one(h, agent, "call mom")
    await h.call(agent, "schedule_snooze", {"id": one, "occurrence_at": AT_60, "minutes": 5})
    linked = {"id": one, "occurrenceAt": AT_60}
    moved = await h.call(
        agent, "schedule_update", {"id": "schedule-2", "at": "2026-08-05T18:00:00Z"}
    )
    assert moved["snoozedFrom"] == linked  # type: ignore[index]
    view = reminders_view(agent.session.events, 0)
    (item,) = view["active"]  # type: ignore[misc]
    assert item["snoozedFrom"] == linked  # type: ignore[index]
    # The panel's record names it with or without the link; another link is a conflict.
    shown = {
        "id": "schedule-2",
        "kind": "at",
        "prompt": "call mom",
        "scheduledAt": "2026-08-05T18:00:00.000Z",
    }

    async def user_edit(prompt: str, expected: dict[str, Any]) -> Any:
        arguments = {"id": "schedule-2", "prompt": prompt, "expected": expected}
        _, value, _ = await agent.run_user_tool("schedule_update", arguments)
        return value

    assert (await user_edit("one", shown))["prompt"] == "one"
    linked_view = {**shown, "prompt": "one", "snoozedFrom": linked}
    assert (await user_edit("two", linked_view))["prompt"] == "two"
    other_link = {**shown, "prompt": "two", "snoozedFrom": {"id": one, "occurrenceAt": START}}
    assert (await user_edit("three", other_link))["code"] == "schedule_conflict"
    # Another kind is no snooze any more.
    every = await h.call(agent, "schedule_update", {"id": "schedule-2", "every_seconds": 3600})
    assert "snoozedFrom" not in every  # type: ignore[operator]


# ---------------------------------------------------------------------------------------------
# The log: codec and fold rules


def event(seq: int, data: dict[str, Any], time: int = START_MS) -> Event:
    return Event(seq=seq, type=SCHEDULE_CHANGE, time=time, data=data)


def every_record(schedule_id: str = "r", at: str = "2026-08-05T12:05:00.000Z") -> dict[str, Any]:
    return {
        "id": schedule_id,
        "kind": "every",
        "prompt": "p",
        "everySeconds": 300,
        "scheduledAt": at,
    }


def snooze_record(schedule_id: str, of: str, at: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": schedule_id,
        "kind": "at",
        "prompt": "p",
        "scheduledAt": at,
        "snoozedFrom": {"id": of, "occurrenceAt": at_5},
        **extra,
    }


at_5 = "2026-08-05T12:05:00.000Z"
CREATE = {"version": 1, "operation": "create", "schedule": every_record()}
DISPATCH = {"version": 1, "operation": "dispatch", "id": "r", "acceptedAt": at_5}
ACK = {"version": 1, "operation": "ack", "id": "r", "occurrenceAt": at_5}


def snooze(schedule_id: str = "s", **extra: Any) -> dict[str, Any]:
    record = snooze_record(schedule_id, "r", "2026-08-05T13:00:00.000Z", **extra)
    return {"version": 1, "operation": "create", "schedule": record}


def test_the_wire_shapes_round_trip_and_old_records_still_decode() -> None:
    ack = decode_change(ACK)
    assert ack == Ack(id="r", occurrence_at=at_5)
    assert encode_change(ack) == ACK
    made = decode_change(snooze(renotifyMinutes=5))
    assert made == Create(
        record=AtRecord(
            id="s",
            kind="at",
            prompt="p",
            scheduled_at="2026-08-05T13:00:00.000Z",
            renotify_minutes=5,
            snoozed_from=SnoozedFrom(id="r", occurrence_at=at_5),
        )
    )
    assert encode_change(made) == snooze(renotifyMinutes=5)
    plain = {"id": "a", "kind": "at", "prompt": "p", "scheduledAt": at_5}
    assert decode_change({"version": 1, "operation": "create", "schedule": plain}) == Create(
        record=AtRecord(id="a", kind="at", prompt="p", scheduled_at=at_5)
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"version": 1, "operation": "ack", "id": "r"}, "missing key @ $.occurrenceAt"),
        (
            {**ACK, "occurrenceAt": "2026-08-05T12:05:00Z"},
            (
                "occurrenceAt '2026-08-05T12:05:00Z' is not a YYYY-MM-DDTHH:MM:SS.sssZ instant "
                "@ $.occurrenceAt"
            ),
        ),
        ({**ACK, "acceptedAt": at_5}, "extra keys ['acceptedAt'] @ $"),
        ({**ACK, "id": " r"}, "id ' r' must be non-empty without surrounding whitespace @ $.id"),
        (
            {**CREATE, "schedule": {**every_record(), "renotifyMinutes": 4}},
            "renotifyMinutes 4 is not an integer from 5 to 1440 @ $.schedule.renotifyMinutes",
        ),
        (
            {**CREATE, "schedule": {**every_record(), "renotifyMinutes": 5.0}},
            "expected an integer, got number @ $.schedule.renotifyMinutes",
        ),
        (
            {**CREATE, "schedule": {**every_record(), "snoozedFrom": {}}},
            "every schedule must contain exactly id, kind, prompt, everySeconds, and scheduledAt",
        ),
        (
            {**snooze(), "schedule": {**snooze()["schedule"], "snoozedFrom": None}},
            "expected an object, got null @ $.schedule.snoozedFrom",
        ),
        (
            {**snooze(), "schedule": {**snooze()["schedule"], "snoozedFrom": {"id": "r"}}},
            "missing key @ $.schedule.snoozedFrom.occurrenceAt",
        ),
        (
            {
                **snooze(),
                "schedule": {
                    **snooze()["schedule"],
                    "snoozedFrom": {"id": "r", "occurrenceAt": at_5, "seq": 3},
                },
            },
            "extra keys ['seq'] @ $.schedule.snoozedFrom",
        ),
    ],
)
def test_malformed_acks_and_records_are_corrupt(data: dict[str, Any], problem: str) -> None:
    with pytest.raises(ScheduleLogError) as caught:
        decode_change(data)
    assert problem in str(caught.value)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ([CREATE, ACK], "ack targets an occurrence that was not delivered (id 'r')"),
        ([CREATE, DISPATCH, ACK, ACK], "ack targets an occurrence already done (id 'r')"),
        (
            [CREATE, DISPATCH, {**ACK, "occurrenceAt": "2026-08-05T12:10:00.000Z"}],
            "ack targets an occurrence that was not delivered (id 'r')",
        ),
        ([CREATE, snooze()], "snooze targets an occurrence that was not delivered (id 'r')"),
        ([CREATE, DISPATCH, ACK, snooze()], "snooze targets an occurrence already done (id 'r')"),
        (
            [CREATE, DISPATCH, snooze("s"), snooze("t")],
            "snooze targets an occurrence already snoozed (id 'r')",
        ),
        (
            [
                CREATE,
                DISPATCH,
                {
                    "version": 1,
                    "operation": "create",
                    "schedule": {"id": "s", "kind": "at", "prompt": "p", "scheduledAt": at_5},
                },
                {"version": 1, "operation": "update", "id": "s", "schedule": snooze()["schedule"]},
            ],
            "update of id 's' cannot add or change snoozedFrom",
        ),
        (
            [
                CREATE,
                DISPATCH,
                snooze(),
                {
                    "version": 1,
                    "operation": "update",
                    "id": "s",
                    "schedule": {
                        **snooze()["schedule"],
                        "snoozedFrom": {"id": "r", "occurrenceAt": START},
                    },
                },
            ],
            "update of id 's' cannot add or change snoozedFrom",
        ),
    ],
)
def test_the_fold_refuses_what_no_occurrence_admits(
    changes: list[dict[str, Any]], problem: str
) -> None:
    events = [event(seq, data) for seq, data in enumerate(changes)]
    with pytest.raises(ScheduleLogError) as caught:
        fold(events, 0)
    assert str(caught.value) == f"schedule/change at seq {len(changes) - 1}: {problem}"
    # The live companion refuses the same candidate before it enters the log.
    folded = IncrementalFold(0)
    folded.apply(events[:-1])
    with pytest.raises(ScheduleLogError):
        folded.check(events[-1])


def test_the_fold_keeps_each_occurrences_state_and_a_snooze_link_may_be_dropped() -> None:
    update_every = {
        "version": 1,
        "operation": "update",
        "id": "s",
        "schedule": {**every_record("s", "2026-08-05T13:00:00.000Z")},
    }
    changes = [CREATE, DISPATCH, snooze(), update_every, ACK]
    events = [event(seq, data) for seq, data in enumerate(changes)]
    folded = IncrementalFold(0)
    assert folded.delivery("r", at_5) is None
    folded.apply(events)
    delivery = folded.delivery("r", at_5)
    assert delivery is not None
    assert (delivery.done, delivery.snooze, delivery.until) == (
        True,
        "s",
        "2026-08-05T13:00:00.000Z",
    )
    assert delivery.record.scheduled_at == at_5  # the record as it delivered
    assert [r.id for r in fold(events, 0).active] == ["r", "s"]
    # Acks never end an id nor make a receipt fail.
    assert present_dispatch(events, 1, 0)["occurrenceAt"] == at_5  # type: ignore[index]


def test_the_same_occurrence_delivered_again_keeps_its_state() -> None:
    back = {"version": 1, "operation": "update", "id": "r", "schedule": every_record()}
    changes = [CREATE, DISPATCH, ACK, back, DISPATCH]
    events = [event(seq, data) for seq, data in enumerate(changes)]
    folded = IncrementalFold(0)
    folded.apply(events)
    delivery = folded.delivery("r", at_5)
    assert delivery is not None
    assert delivery.done
    with pytest.raises(ScheduleLogError, match="already done"):
        folded.check(event(5, ACK))
    # A receipt past an ack pairs with its create as ever.
    assert present_dispatch(events, 4, 0)["occurrenceAt"] == at_5  # type: ignore[index]
