"""``daily``, ``weekly`` and ``cron`` through the real tools and the live owner: every refusal
(before any flush, or after the preflight when the clock decides), the records and views, the
title, the configured ``every_seconds`` floor, and the due path (the latest due occurrence, the
next target frozen in the dispatch, one-shots first, one batch with every records, the wake
index and the board following the next target, replay without any zone)."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import InvalidTimeZoneError, ToolCall
from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend, SQLiteBackend
from dsh_host.testing import ManualClock, wait_until
from dsh_schedule import (
    MAX_INSTANT_MS,
    MESSAGES,
    SCHEDULE_CHANGE,
    ConfigError,
    SchedulePlugin,
    fold,
    format_instant,
    parse_batch_framing,
    parse_instant,
    parse_reminder_framing,
)
from dsh_schedule import _rules as rules
from dsh_schedule._tools import CREATE_DESCRIPTION, CREATE_PARAMETERS, LIST_DESCRIPTION

from .harness import START, make_harness

START_MS = parse_instant(START)  # 2026-08-05T12:00:00.000Z, a Wednesday
DST = (
    "Local times that do not exist in the zone are skipped; repeated local times fire once, at "
    "the earlier instant. After downtime, a recurring reminder delivers only its latest missed "
    "occurrence."
)


def refusal(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


DAILY_SHAPE = (
    "daily must contain exactly time and time_zone, with time HH:mm:ss and optional 1-3 "
    "fractional digits."
)
WEEKLY_SHAPE = (
    "weekly must contain exactly time, time_zone, and weekdays, with time HH:mm:ss and optional "
    "1-3 fractional digits."
)
CRON_SHAPE = (
    "cron must contain exactly expression and time_zone, with a five-field cron expression."
)
TIME = (
    "{}.time must use HH:mm:ss with optional 1-3 fractional digits, without leap seconds or 24:00."
)
WEEKDAYS = "weekly.weekdays must be a non-empty array of ISO weekday numbers."
WEEKDAY = "Each weekly.weekdays entry must be an integer from 1 (Monday) through 7 (Sunday)."
ZONE = "time_zone must be UTC or a valid IANA Area/Location name."


def dispatches(h: Any, agent: Any) -> list[dict[str, Any]]:
    return [c for c in h.changes(agent) if c["operation"] == "dispatch"]


async def created(h: Any, agent: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    value = await h.call(agent, "schedule_create", {"prompt": "p", **arguments})
    assert isinstance(value, dict)
    assert "id" in value, value
    await h.settle(agent)
    return value


# ---------------------------------------------------------------------------------------------
# Refusals before the queue: no flush, nothing appended.

REFUSED_BEFORE_THE_QUEUE = [
    ({"daily": {"time": "09:00:00"}}, "invalid_arguments", None),
    ({"daily": {"time": "09:00:00", "time_zone": "UTC", "x": 1}}, "invalid_arguments", None),
    ({"daily": "09:00"}, "invalid_arguments", None),
    ({"daily": {"time": "9:00:00", "time_zone": "UTC"}}, "invalid_rule", TIME.format("daily")),
    ({"daily": {"time": "09:00", "time_zone": "UTC"}}, "invalid_rule", TIME.format("daily")),
    ({"daily": {"time": "24:00:00", "time_zone": "UTC"}}, "invalid_rule", TIME.format("daily")),
    ({"daily": {"time": "23:59:60", "time_zone": "UTC"}}, "invalid_rule", TIME.format("daily")),
    ({"daily": {"time": "12:60:00", "time_zone": "UTC"}}, "invalid_rule", TIME.format("daily")),
    (
        {"daily": {"time": "12:00:00.1234", "time_zone": "UTC"}},
        "invalid_rule",
        TIME.format("daily"),
    ),
    ({"daily": {"time": "12:00:00Z", "time_zone": "UTC"}}, "invalid_rule", TIME.format("daily")),
    ({"daily": {"time": "09:00:00", "time_zone": "utc"}}, "invalid_time_zone", ZONE),
    ({"daily": {"time": "09:00:00", "time_zone": "EST"}}, "invalid_time_zone", ZONE),
    ({"daily": {"time": "09:00:00", "time_zone": "Mars/Base"}}, "invalid_time_zone", ZONE),
    (
        {"weekly": {"time": "25:00:00", "time_zone": "UTC", "weekdays": [1]}},
        "invalid_rule",
        TIME.format("weekly"),
    ),
    (
        {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": []}},
        "invalid_rule",
        WEEKDAYS,
    ),
    (
        {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": [0]}},
        "invalid_rule",
        WEEKDAY,
    ),
    (
        {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": [8]}},
        "invalid_rule",
        WEEKDAY,
    ),
    (
        {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": [1, 3, 1]}},
        "invalid_rule",
        "weekly.weekdays must not repeat weekday 1.",
    ),
    (
        {"weekly": {"time": "09:00:00", "time_zone": "Nowhere/Land", "weekdays": [1]}},
        "invalid_time_zone",
        ZONE,
    ),
    ({"weekly": {"time": "09:00:00", "time_zone": "UTC"}}, "invalid_arguments", None),
    ({"cron": {"expression": "0 9 * *", "time_zone": "UTC"}}, "invalid_rule", None),
    (
        {"cron": {"expression": "0 9 * * MON", "time_zone": "UTC"}},
        "invalid_rule",
        (
            'cron.expression day-of-week field element "MON" must be *, a value, a-b, */n, a-b/n, '
            "or a comma-separated list of those."
        ),
    ),
    (
        {"cron": {"expression": "0 24 * * *", "time_zone": "UTC"}},
        "invalid_rule",
        "cron.expression hour field value 24 is outside 0-23.",
    ),
    ({"cron": {"expression": "0 9 * * *", "time_zone": "+08:00"}}, "invalid_time_zone", ZONE),
    (
        {
            "daily": {"time": "09:00:00", "time_zone": "UTC"},
            "cron": {"expression": "* * * * *", "time_zone": "UTC"},
        },
        "invalid_selector",
        MESSAGES["invalid_selector"],
    ),
    (
        {"daily": {"time": "09:00:00", "time_zone": "UTC"}, "title": "  "},
        "invalid_prompt",
        "title must be non-empty after trimming.",
    ),
    (
        {"after_seconds": 60, "title": "x" * 121},
        "invalid_prompt",
        "title must be at most 120 characters.",
    ),
    ({"every_seconds": 60, "title": 5}, "invalid_arguments", None),
]


@pytest.mark.parametrize(("arguments", "code", "message"), REFUSED_BEFORE_THE_QUEUE)
async def test_a_bad_calendar_selector_or_title_is_refused_before_any_flush(
    h: Any, arguments: dict[str, Any], code: str, message: str | None
) -> None:
    agent = await h.agent()
    value, flushes = await h.flushes(agent, "schedule_create", {"prompt": "p", **arguments})
    assert value["code"] == code, value
    if code == "invalid_rule" and message is None:
        assert value["message"].startswith("cron.expression must contain exactly five")
    elif message is not None:
        assert value == refusal(code, message)
    assert flushes == 0
    assert h.changes(agent) == []


@pytest.mark.parametrize(
    ("name", "argument", "code", "message"),
    [
        # What the registry's schema already refuses, the tool refuses in its own words too.
        ("daily", "09:00:00", "invalid_rule", DAILY_SHAPE),
        ("daily", {"time": "09:00:00"}, "invalid_rule", DAILY_SHAPE),
        ("weekly", {"time": "09:00:00", "time_zone": "UTC"}, "invalid_rule", WEEKLY_SHAPE),
        ("cron", {"expression": "0 9 * * *", "zone": "UTC"}, "invalid_rule", CRON_SHAPE),
        ("daily", {"time": 9, "time_zone": "UTC"}, "invalid_rule", TIME.format("daily")),
        (
            "weekly",
            {"time": "09:00:00", "time_zone": "UTC", "weekdays": "1-5"},
            "invalid_rule",
            WEEKDAYS,
        ),
        (
            "weekly",
            {"time": "09:00:00", "time_zone": "UTC", "weekdays": [True]},
            "invalid_rule",
            WEEKDAY,
        ),
        (
            "weekly",
            {"time": "09:00:00", "time_zone": "UTC", "weekdays": [1.0]},
            "invalid_rule",
            WEEKDAY,
        ),
        ("daily", {"time": "09:00:00", "time_zone": 0}, "invalid_time_zone", None),
        (
            "cron",
            {"expression": 5, "time_zone": "UTC"},
            "invalid_rule",
            "cron.expression must be a non-empty trimmed string.",
        ),
    ],
)
async def test_the_tool_words_every_shape_problem_itself(
    h: Any, name: str, argument: object, code: str, message: str | None
) -> None:
    agent = await h.agent()
    await h.settle(agent)
    call = ToolCall(
        call_id="c",
        name="schedule_create",
        arguments={"prompt": "p", name: argument},
        agent=agent,
    )
    value = await h.plugin.tools.create(call)
    expected = "time_zone must be a string." if message is None else message
    assert value == refusal(code, expected)
    assert h.changes(agent) == []


async def test_a_title_given_as_null_by_a_direct_call_is_no_title(h: Any) -> None:
    agent = await h.agent()
    await h.settle(agent)
    call = ToolCall(
        call_id="c",
        name="schedule_create",
        arguments={"prompt": "p", "title": None, "after_seconds": 60},
        agent=agent,
    )
    value = await h.plugin.tools.create(call)
    assert isinstance(value, dict)
    assert "title" not in value


# ---------------------------------------------------------------------------------------------
# Refusals the creation sample decides: after the preflight, one flush, nothing appended.


@pytest.mark.parametrize(
    ("arguments", "wall", "message"),
    [
        (
            {"cron": {"expression": "0 0 30 2 *", "time_zone": "UTC"}},
            START_MS,
            "No future cron occurrence is representable as a four-digit-year UTC instant.",
        ),
        (
            {"daily": {"time": "09:00:00", "time_zone": "UTC"}},
            parse_instant("9999-12-31T10:00:00.000Z"),
            "No future daily occurrence is representable as a four-digit-year UTC instant.",
        ),
        (
            {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": [1]}},
            parse_instant("9999-12-27T10:00:00.000Z"),  # a Monday; the next is in year 10000
            "No future weekly occurrence is representable as a four-digit-year UTC instant.",
        ),
        (
            {"daily": {"time": "09:00:00", "time_zone": "UTC"}},
            MAX_INSTANT_MS + 60_000,
            "No future daily occurrence is representable as a four-digit-year UTC instant.",
        ),
    ],
)
async def test_no_representable_future_occurrence_is_out_of_range_after_the_preflight(
    h: Any, arguments: dict[str, Any], wall: int, message: str
) -> None:
    agent = await h.agent()
    h.clock.set_wall(wall)
    value, flushes = await h.flushes(agent, "schedule_create", {"prompt": "p", **arguments})
    assert value == refusal("time_out_of_range", message)
    assert flushes == 1
    assert h.changes(agent) == []


# ---------------------------------------------------------------------------------------------
# Creates and views.


async def test_each_calendar_kind_is_stored_and_listed_with_its_rule_and_first_target(
    h: Any,
) -> None:
    agent = await h.agent()
    daily, flushes = await h.flushes(
        agent,
        "schedule_create",
        {
            "prompt": " Stand up ",
            "title": "  Standup ",
            "daily": {"time": "12:00:00", "time_zone": "Europe/Paris"},
        },
    )
    assert flushes == 2
    # 12:00 in Paris (UTC+2 in August) already passed at 12:00Z: tomorrow's.
    assert daily == {
        "id": "schedule-1",
        "kind": "daily",
        "prompt": "Stand up",
        "title": "Standup",
        "time": "12:00:00.000",
        "timeZone": "Europe/Paris",
        "scheduledAt": "2026-08-06T10:00:00.000Z",
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    weekly = await created(
        h,
        agent,
        {"weekly": {"time": "08:30:00.5", "time_zone": "US/Eastern", "weekdays": [5, 1, 7]}},
    )
    assert weekly == {
        "id": "schedule-2",
        "kind": "weekly",
        "prompt": "p",
        "time": "08:30:00.500",
        "timeZone": "US/Eastern",  # an alias is kept as given
        "weekdays": [1, 5, 7],
        "scheduledAt": "2026-08-07T12:30:00.500Z",  # Friday 08:30 EDT
        "state": "scheduled",
        "deliveryMode": "session-local",
    }
    cron = await created(h, agent, {"cron": {"expression": "0,30 9 1 1-12 7", "time_zone": "UTC"}})
    assert cron["expression"] == "*/30 9 1 * 0"  # the canonical spelling
    assert cron["scheduledAt"] == "2026-08-09T09:00:00.000Z"  # the 1st or a Sunday: Sunday
    listed = await h.call(agent, "schedule_list", {})
    assert listed == [daily, weekly, cron]
    creates = [c["schedule"] for c in h.changes(agent)]
    assert creates[0] == {
        "id": "schedule-1",
        "kind": "daily",
        "prompt": "Stand up",
        "time": "12:00:00.000",
        "timeZone": "Europe/Paris",
        "scheduledAt": "2026-08-06T10:00:00.000Z",
        "title": "Standup",
    }
    assert creates[1]["weekdays"] == [1, 5, 7]


async def test_every_kind_takes_a_title(h: Any) -> None:
    agent = await h.agent()
    for selector in (
        {"after_seconds": 60},
        {"at": "2026-08-06T09:00:00Z"},
        {"every_seconds": 600},
    ):
        value = await created(h, agent, {**selector, "title": "Named"})
        assert value["title"] == "Named"
    assert [c["schedule"]["title"] for c in h.changes(agent)] == ["Named"] * 3


def test_the_descriptions_teach_the_selectors_and_the_daylight_saving_rules() -> None:
    assert DST in CREATE_DESCRIPTION
    for words in ("daily {time", "weekdays", "1=Monday", "cron {expression", "'0 9 1 * *'"):
        assert words in CREATE_DESCRIPTION
    assert "title" in CREATE_DESCRIPTION
    assert "daily, weekly or cron" in LIST_DESCRIPTION
    properties = CREATE_PARAMETERS["properties"]
    assert properties["daily"]["required"] == ["time", "time_zone"]
    assert properties["weekly"]["required"] == ["time", "time_zone", "weekdays"]
    assert properties["cron"]["required"] == ["expression", "time_zone"]
    assert properties["title"]["type"] == "string"


# ---------------------------------------------------------------------------------------------
# Config: the every_seconds floor.


async def test_a_configured_every_floor_is_enforced_and_quoted() -> None:
    h = await make_harness(config={"min_every_seconds": 60})
    try:
        agent = await h.agent()
        value = await h.call(agent, "schedule_create", {"prompt": "p", "every_seconds": 59})
        assert value == refusal("frequency_too_high", "every_seconds must be at least 60.")
        made = await created(h, agent, {"every_seconds": 60})
        assert made["everySeconds"] == 60
        tool = agent.tools.get("schedule_create")
        assert "at least 60 seconds" in tool.description
        assert "at least 60." in tool.parameters["properties"]["every_seconds"]["description"]
        # The default stays 300 for a host that does not say.
        other = await make_harness()
        try:
            plain = await other.agent()
            low = await other.call(plain, "schedule_create", {"prompt": "p", "every_seconds": 60})
            assert low == refusal("frequency_too_high", MESSAGES["frequency_too_high"])
            assert "at least 300 seconds" in plain.tools.get("schedule_create").description
        finally:
            await other.host.close()
    finally:
        await h.host.close()


@pytest.mark.parametrize("bad", [59, 0, 300.0, True, "300", 2**53])
def test_a_bad_every_floor_stops_the_start(bad: object) -> None:
    plugin = SchedulePlugin()
    with pytest.raises(ConfigError, match="min_every_seconds must be an integer of at least 60"):
        plugin.dsh_plugin_start(host=None, config={"min_every_seconds": bad})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The due path.


async def test_a_daily_reminder_fires_at_its_latest_due_occurrence_and_freezes_the_next(
    h: Any,
) -> None:
    agent = await h.agent()
    await created(h, agent, {"prompt": "water", "daily": {"time": "12:05:00", "time_zone": "UTC"}})
    h.clock.suspend(3 * 86_400)  # three days pass unseen: the 12:05s of the 5th to 7th are missed
    h.clock.advance(60)
    await wait_until(lambda: len(dispatches(h, agent)) == 1)
    await h.settle(agent)
    assert dispatches(h, agent) == [
        {
            "version": 1,
            "operation": "dispatch",
            "id": "schedule-1",
            "acceptedAt": "2026-08-08T12:01:00.000Z",
            "occurrenceAt": "2026-08-07T12:05:00.000Z",
            "nextAt": "2026-08-08T12:05:00.000Z",
        }
    ]
    (followup,) = h.followups(agent)
    assert parse_batch_framing(followup["text"]) == (
        ("schedule-1", "2026-08-07T12:05:00.000Z", "water"),
    )
    (listed,) = await h.call(agent, "schedule_list", {})
    assert listed["scheduledAt"] == "2026-08-08T12:05:00.000Z"
    assert h.host.sessions.posted(agent.session)[("schedule", "schedule-1")].at_ms == (
        parse_instant("2026-08-08T12:05:00.000Z")
    )
    events = agent.session.events
    seq = next(e.seq for e in events if e.type == SCHEDULE_CHANGE and "nextAt" in e.data)
    assert h.plugin.dsh_event_present(events, seq, 0, agent.session) == {
        "scheduleId": "schedule-1",
        "prompt": "water",
        "occurrenceAt": "2026-08-07T12:05:00.000Z",
        "deliveryMode": "session-local",
    }
    h.clock.advance(4 * 60)
    await wait_until(lambda: len(dispatches(h, agent)) == 2)
    assert dispatches(h, agent)[1]["occurrenceAt"] == "2026-08-08T12:05:00.000Z"


async def test_a_daily_reminder_skips_the_spring_forward_gap(h: Any) -> None:
    agent = await h.agent()
    h.clock.set_wall(parse_instant("2026-03-07T00:00:00.000Z"))
    made = await created(h, agent, {"daily": {"time": "02:30:00", "time_zone": "America/New_York"}})
    assert made["scheduledAt"] == "2026-03-07T07:30:00.000Z"
    h.clock.suspend(8 * 3600)
    h.clock.advance(60)
    await wait_until(lambda: len(dispatches(h, agent)) == 1)
    # 02:30 does not exist on 2026-03-08 in New York: the next occurrence is on the 9th.
    assert dispatches(h, agent)[0]["nextAt"] == "2026-03-09T06:30:00.000Z"


async def test_one_shots_go_first_then_every_and_calendar_records_share_one_batch(
    h: Any,
) -> None:
    agent = await h.agent()
    await created(
        h, agent, {"prompt": "tick", "cron": {"expression": "*/5 * * * *", "time_zone": "UTC"}}
    )
    await created(h, agent, {"prompt": "drink", "every_seconds": 300})
    await created(h, agent, {"prompt": "once", "after_seconds": 300})
    await created(
        h,
        agent,
        {"prompt": "weekday", "weekly": {"time": "12:05:00", "time_zone": "UTC", "weekdays": [3]}},
    )
    h.clock.suspend(340)  # 12:05:40, and one segment later 12:06:40: all four are due
    h.clock.advance(60)
    await wait_until(lambda: len(dispatches(h, agent)) == 4)
    await h.settle(agent)
    first, batch = (f["text"] for f in h.followups(agent))
    assert parse_reminder_framing(first) == ("schedule-3", "2026-08-05T12:05:00.000Z", "once")
    accepted = dispatches(h, agent)[1]["acceptedAt"]
    # Sorted by target, then create order; each at its latest occurrence.
    assert parse_batch_framing(batch) == (
        ("schedule-1", "2026-08-05T12:05:00.000Z", "tick"),
        ("schedule-2", "2026-08-05T12:05:00.000Z", "drink"),
        ("schedule-4", "2026-08-05T12:05:00.000Z", "weekday"),
    )
    assert dispatches(h, agent)[1:] == [
        {
            "version": 1,
            "operation": "dispatch",
            "id": "schedule-1",
            "acceptedAt": accepted,
            "occurrenceAt": "2026-08-05T12:05:00.000Z",
            "nextAt": "2026-08-05T12:10:00.000Z",
        },
        {"version": 1, "operation": "dispatch", "id": "schedule-2", "acceptedAt": accepted},
        {
            "version": 1,
            "operation": "dispatch",
            "id": "schedule-4",
            "acceptedAt": accepted,
            "occurrenceAt": "2026-08-05T12:05:00.000Z",
            "nextAt": "2026-08-12T12:05:00.000Z",
        },
    ]


async def test_a_record_without_a_next_occurrence_ends_after_its_last_delivery(h: Any) -> None:
    agent = await h.agent()
    h.clock.set_wall(parse_instant("9999-12-31T08:00:00.000Z"))
    await created(h, agent, {"daily": {"time": "09:00:00", "time_zone": "UTC"}})
    h.clock.advance(3600)
    await wait_until(lambda: len(dispatches(h, agent)) == 1)
    assert dispatches(h, agent)[0]["nextAt"] is None
    await h.settle(agent)
    assert await h.call(agent, "schedule_list", {}) == []
    assert h.host.sessions.posted(agent.session).get(("schedule", "schedule-1")) is None


async def test_a_zone_no_longer_in_tzdata_delivers_the_committed_target_and_ends(
    h: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await h.agent()
    await created(h, agent, {"prompt": "p", "daily": {"time": "12:05:00", "time_zone": "UTC"}})

    def missing(name: str) -> Any:
        raise InvalidTimeZoneError(ZONE)

    monkeypatch.setattr(rules, "load_time_zone", missing)
    with capture_logs() as logs:
        h.clock.advance(6 * 60)
        await wait_until(lambda: len(dispatches(h, agent)) == 1)
        await h.settle(agent)
    assert any(entry["event"] == "owner.zone_missing" for entry in logs)
    (dispatch,) = dispatches(h, agent)
    assert (dispatch["occurrenceAt"], dispatch["nextAt"]) == ("2026-08-05T12:05:00.000Z", None)
    assert not h.owner(agent).faulted


async def test_a_decision_outside_the_instant_range_dispatches_no_calendar_record(h: Any) -> None:
    agent = await h.agent()
    agent.session.append(
        SCHEDULE_CHANGE,
        {
            "version": 1,
            "operation": "create",
            "schedule": {
                "id": "schedule-1",
                "kind": "daily",
                "prompt": "p",
                "time": "23:55:00.000",
                "timeZone": "UTC",
                "scheduledAt": "9999-12-31T23:55:00.000Z",
            },
        },
    )
    h.clock.set_wall(MAX_INSTANT_MS + 60_000)
    with capture_logs() as logs:
        await h.call(agent, "schedule_list", {})
        await h.settle(agent)
    assert any(entry["event"] == "owner.decision_failed" for entry in logs)
    assert dispatches(h, agent) == []
    assert not h.owner(agent).faulted


async def test_the_wake_index_follows_the_frozen_next_target() -> None:
    clock = ManualClock(START_MS)
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        host.load_plugin("schedule", {"cold_delivery": True})
        agent = await host.create_session()
        made = await agent.execute_tool(
            "schedule_create",
            {"prompt": "p", "cron": {"expression": "0 * * * *", "time_zone": "Asia/Kolkata"}},
        )
        assert isinstance(made, dict)
        first = parse_instant("2026-08-05T12:30:00.000Z")  # 18:00 IST
        assert made["scheduledAt"] == format_instant(first)
        await wait_until(lambda: agent.phase == "idle")
        assert host.sessions.wakes(agent.session) == {"schedule": first}
        clock.advance(31 * 60)
        await wait_until(
            lambda: host.sessions.wakes(agent.session) == {"schedule": first + 3_600_000}
        )


async def test_replay_after_a_restart_never_consults_a_zone(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock(START_MS)
    host = LiveHost(backend=SQLiteBackend(tmp_path), clock=clock)
    await host.start()
    host.load_plugin("schedule")
    agent = await host.create_session()
    await agent.execute_tool(
        "schedule_create",
        {
            "prompt": "p",
            "weekly": {"time": "12:10:00", "time_zone": "Europe/Berlin", "weekdays": [3]},
        },
    )
    await agent.execute_tool(
        "schedule_create",
        {"prompt": "q", "cron": {"expression": "*/10 * * * *", "time_zone": "Pacific/Apia"}},
    )
    clock.advance(11 * 60)  # 12:11: the cron record fires; the weekly one waits a week
    await wait_until(lambda: any("nextAt" in c for c in [e.data for e in agent.session.events]))
    await wait_until(lambda: agent.phase == "idle")
    session_id = agent.session.id
    await host.close()

    def no_zones(name: str) -> Any:
        raise AssertionError(f"replay consulted the zone {name}")

    monkeypatch.setattr(rules, "load_time_zone", no_zones)
    clock = ManualClock(START_MS + 12 * 60_000)
    host = LiveHost(backend=SQLiteBackend(tmp_path), clock=clock)
    await host.start()
    try:
        host.load_plugin("schedule")
        resumed = await host.resume_session(session_id)
        active = fold(resumed.session.events, 0).active
        assert [(record.id, record.scheduled_at) for record in active] == [
            ("schedule-1", "2026-08-12T10:10:00.000Z"),
            ("schedule-2", "2026-08-05T12:20:00.000Z"),
        ]
        listed = await resumed.execute_tool("schedule_list", {})
        assert [view["scheduledAt"] for view in listed] == [  # type: ignore[union-attr, index]
            "2026-08-12T10:10:00.000Z",
            "2026-08-05T12:20:00.000Z",
        ]
    finally:
        await host.close()


def test_zone_equivalence_reads_the_zone_data() -> None:
    assert rules.same_zone("UTC", "UTC")
    assert rules.same_zone("US/Eastern", "America/New_York")
    assert rules.same_zone("Etc/UTC", "UTC")
    assert not rules.same_zone("Europe/Paris", "Europe/Berlin")
    with pytest.raises(InvalidTimeZoneError):
        rules.same_zone("UTC", "Mars/Base")
