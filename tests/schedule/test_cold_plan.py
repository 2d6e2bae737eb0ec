"""The cold plan (``dsh_wake_due``) decides what the live owner decides: the same follow-up,
dispatches, notices, board rows and next wake, from what storage holds of a cold Session."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dsh_hookspecs import BoardEntry, DeliveryPlan, Event, Notice, StoredWake, owes_turn
from dsh_host import LiveHost, Notified, Opened
from dsh_host.notify import Message, Outcome
from dsh_host.notify._sender import Channels, Route
from dsh_host.persistence import MemoryBackend, StoredSession
from dsh_host.testing import ManualClock, wait_until
from dsh_schedule._cold import plan_wake

from .harness import Harness, make_harness, settle_quiet

PLUGIN = "schedule"


@pytest.fixture
async def memory() -> MemoryBackend:
    return MemoryBackend()


@pytest.fixture
async def h(memory: MemoryBackend) -> AsyncIterator[Harness]:
    # The live path delivers here (cold_plans=False), so that the plan is compared with it.
    harness = await make_harness(config={"cold_delivery": True}, backend=memory, cold_plans=False)
    try:
        yield harness
    finally:
        await harness.host.close()


def wake_of(stored: StoredSession, now_ms: int) -> StoredWake:
    """What the host hands the plugin at ``now_ms`` (a Session without a standing entry: as if
    one were due now)."""
    return StoredWake(
        session_id=stored.header.id,
        header=stored.header,
        events=stored.events,
        board={key: entry for (plugin, key), entry in stored.board.items() if plugin == PLUGIN},
        at_ms=stored.wakes.get(PLUGIN, now_ms),
        now_ms=now_ms,
    )


async def cold_session(h: Harness, memory: MemoryBackend, calls: list[dict[str, Any]]) -> str:
    """A Session whose root Agent ran ``calls`` (schedule_create arguments), then went cold."""
    agent = await h.agent()
    for arguments in calls:
        value = await h.call(agent, "schedule_create", arguments)
        assert isinstance(value, dict), value
        assert "id" in value, value
    await h.settle(agent)
    sid = agent.session.id
    await h.host.close_session(sid)
    return sid


def unseq(key: str) -> str:
    """A delivered row's key without the seq of its dispatch (the two paths lay the log out
    around a different ``session/end-seed``)."""
    return re.sub(r"@\d+$", "@<seq>", key)


def rows(board: dict[str, BoardEntry | None]) -> dict[str, BoardEntry | None]:
    return {unseq(key): entry for key, entry in board.items()}


async def until_a_turn_ended(
    h: Harness, memory: MemoryBackend, sid: str, before: StoredSession
) -> None:
    """Wait (bounded) until storage holds a ``turn/end`` after ``before``, then for the host to
    be quiet."""

    async def turned() -> bool:
        loaded = await memory.load(sid)
        return loaded is not None and any(
            e.type == "turn/end" for e in loaded.events[len(before.events) :]
        )

    await wait_until(turned)
    await settle_quiet(h.host)


async def live_delivery(
    h: Harness, memory: MemoryBackend, sid: str, before: StoredSession, due_ms: int
) -> tuple[list[Event], StoredSession, list[tuple[str, Notice | None]]]:
    """Let the host deliver the due reminder the old way (resume, live owner), and return the
    events the delivery appended (``session/end-seed`` and the turn left out), the store, and
    the notices the live owner filed in that Session (another one due meanwhile, a fork's
    parent, files its own)."""
    notified: list[tuple[str, Notice | None]] = []
    h.host.sessions.subscribe(
        lambda o: notified.append((o.key, o.notice)) if o.session.id == sid else None, Notified
    )
    h.clock.advance((due_ms - h.clock.now_ms()) / 1000)

    await until_a_turn_ended(h, memory, sid, before)
    await h.host.close_session(sid)
    after = await memory.load(sid)
    assert after is not None
    appended = [
        e
        for e in after.events[len(before.events) :]
        if e.type in {"agent/followup", "schedule/change"}
    ]
    return appended, after, notified


def plan_events(plan: DeliveryPlan) -> list[tuple[str, Any]]:
    laid: list[tuple[str, Any]] = []
    for followup in plan.followups:
        laid.append(("agent/followup", followup.text))
        laid.extend(followup.events)
    return laid


def live_events(events: list[Event]) -> list[tuple[str, Any]]:
    return [
        (e.type, e.data["text"] if e.type == "agent/followup" else e.data)  # type: ignore[index]
        for e in events
    ]


CASES = {
    "after": [{"prompt": "stretch", "after_seconds": 60}],
    "at-with-renotify": [
        {"prompt": "pay rent", "at": "2026-08-06T09:00:00Z", "renotify_minutes": 10}
    ],
    "every": [{"prompt": "drink water", "every_seconds": 3600}],
    "daily-berlin": [
        {"prompt": "stand up", "daily": {"time": "09:30:00", "time_zone": "Europe/Berlin"}}
    ],
    "weekly": [
        {
            "prompt": "review",
            "weekly": {"time": "08:00:00", "time_zone": "America/New_York", "weekdays": [1, 3, 5]},
        }
    ],
    "cron": [{"prompt": "rent", "cron": {"expression": "0 9 1 * *", "time_zone": "UTC"}}],
    "two-recurring-at-once": [
        {"prompt": "a", "every_seconds": 3600},
        {"prompt": "b", "every_seconds": 3600},
    ],
    "one-shot-then-another": [
        {"prompt": "first", "after_seconds": 60},
        {"prompt": "second", "after_seconds": 60},
    ],
}


@pytest.mark.parametrize("calls", list(CASES.values()), ids=list(CASES))
async def test_the_cold_plan_is_what_the_live_owner_does(
    h: Harness, memory: MemoryBackend, calls: list[dict[str, Any]]
) -> None:
    sid = await cold_session(h, memory, calls)
    before = await memory.load(sid)
    assert before is not None
    due_ms = before.wakes[PLUGIN]
    plan = plan_wake(wake_of(before, due_ms), PLUGIN)
    assert plan is not None
    appended, after, notified = await live_delivery(h, memory, sid, before, due_ms)
    # The live owner's first drive is the plan; a second due one-shot waits for its turn.
    firsts = [i for i, e in enumerate(appended) if e.type == "agent/followup"]
    first_drive = appended[: firsts[1]] if len(firsts) > 1 else appended
    assert plan_events(plan) == live_events(first_drive)
    assert len(plan.followups) == 1
    standing = {k: e for (p, k), e in before.board.items() if p == PLUGIN}
    planned = rows({k: e for k, e in {**standing, **plan.board}.items() if e is not None})
    if len(firsts) == 1:
        assert planned == rows({k: e for (p, k), e in after.board.items() if p == PLUGIN})
        assert plan.wake_at_ms == after.wakes.get(PLUGIN)
        assert list(plan.notices) == notified
        assert len(notified) == (4 if "renotify_minutes" in calls[0] else len(calls))
    else:  # the second one-shot stays pending, due now: the plan's wake says so
        assert planned["schedule-2"].kind == "pending"
        assert "schedule-1@<seq>" in planned
        assert plan.wake_at_ms == due_ms


async def test_nothing_due_only_corrects_the_wake(h: Harness, memory: MemoryBackend) -> None:
    sid = await cold_session(h, memory, [{"prompt": "later", "after_seconds": 600}])
    before = await memory.load(sid)
    assert before is not None
    plan = plan_wake(wake_of(before, before.wakes[PLUGIN] - 1), PLUGIN)
    assert plan == DeliveryPlan(wake_at_ms=before.wakes[PLUGIN])


async def due_stretch(h: Harness, memory: MemoryBackend) -> StoredSession:
    """What storage holds of a cold Session with one reminder, due in a minute."""
    sid = await cold_session(h, memory, [{"prompt": "stretch", "after_seconds": 60}])
    before = await memory.load(sid)
    assert before is not None
    return before


async def test_a_log_that_owes_a_turn_is_left_to_the_live_owner(
    h: Harness, memory: MemoryBackend
) -> None:
    before = await due_stretch(h, memory)
    n = len(before.events)
    owed = Event(seq=n, type="agent/followup", time=0, data={"messageId": "m1", "text": "x"})
    wake = wake_of(before, before.wakes[PLUGIN])
    assert (
        plan_wake(StoredWake(**{**_fields(wake), "events": [*before.events, owed]}), PLUGIN) is None
    )
    started = Event(seq=n + 1, type="turn/start", time=0, data={"messageId": "m1"})
    assert owes_turn([owed, started])  # the turn never ended
    ended = Event(seq=n + 2, type="turn/end", time=0, data={"outcome": "ok"})
    assert not owes_turn([owed, started, ended])


async def test_a_corrupt_owned_stream_is_left_to_the_live_owner(
    h: Harness, memory: MemoryBackend
) -> None:
    before = await due_stretch(h, memory)
    n = len(before.events)
    bad = Event(seq=n, type="schedule/change", time=0, data={"version": 1, "operation": "nope"})
    wake = wake_of(before, before.wakes[PLUGIN])
    assert (
        plan_wake(StoredWake(**{**_fields(wake), "events": [*before.events, bad]}), PLUGIN) is None
    )


async def test_the_plugin_answers_only_its_own_wakes(h: Harness, memory: MemoryBackend) -> None:
    sid = await cold_session(h, memory, [{"prompt": "stretch", "after_seconds": 60}])
    before = await memory.load(sid)
    assert before is not None
    wake = wake_of(before, before.wakes[PLUGIN])
    plugin = h.plugin
    assert plugin.dsh_wake_due(plugin="dsh.turns", wake=wake) is None
    assert plugin.dsh_wake_due(plugin=PLUGIN, wake=wake) == plan_wake(wake, PLUGIN)


def _fields(wake: StoredWake) -> dict[str, Any]:
    return {
        "session_id": wake.session_id,
        "header": wake.header,
        "events": wake.events,
        "board": wake.board,
        "at_ms": wake.at_ms,
        "now_ms": wake.now_ms,
    }


async def test_a_due_reminder_of_a_cold_session_is_stored_first_and_its_turn_runs_after(
    memory: MemoryBackend,
) -> None:
    h = await make_harness(config={"cold_delivery": True}, backend=memory)  # cold plans on
    try:
        sid = await cold_session(h, memory, [{"prompt": "stretch", "after_seconds": 60}])
        before = await memory.load(sid)
        assert before is not None
        opened: list[str] = []
        h.host.sessions.subscribe(lambda o: opened.append(o.session.id), Opened)
        h.clock.advance(60)

        await until_a_turn_ended(h, memory, sid, before)
        assert h.host.cold.stored == 1
        after = await memory.load(sid)
        assert after is not None
        new = after.events[len(before.events) :]
        # The plan's write: the follow-up and its dispatch, before the Session was made live.
        assert [e.type for e in new[:2]] == ["agent/followup", "schedule/change"]
        assert new[1].data["operation"] == "dispatch"  # type: ignore[index]
        assert sum(e.type == "schedule/change" for e in new) == 1  # dispatched once
        (start,) = [e for e in new if e.type == "turn/start"]
        assert start.data["messageId"] == new[0].data["messageId"]  # type: ignore[index]
        assert opened == [sid]  # made live once: for the turn the plan owed
        assert "dsh.turns" not in after.wakes
    finally:
        await h.host.close()


class _HeldPlanWrite(MemoryBackend):
    """Holds the first write that carries a follow-up (the plan's) until released."""

    def __init__(self) -> None:
        super().__init__()
        self.held = asyncio.Event()
        self.release = asyncio.Event()

    async def append(self, write: Any) -> None:
        if not self.held.is_set() and any(e.type == "agent/followup" for e in write.events):
            self.held.set()
            await self.release.wait()
        await super().append(write)


async def test_a_session_opened_while_its_plan_is_stored_dispatches_once() -> None:
    memory = _HeldPlanWrite()
    h = await make_harness(config={"cold_delivery": True}, backend=memory)
    try:
        sid = await cold_session(h, memory, [{"prompt": "stretch", "after_seconds": 60}])
        before = await memory.load(sid)
        assert before is not None
        h.clock.advance(60)
        await asyncio.wait_for(memory.held.wait(), 5)  # the plan's write is under way
        opening = asyncio.create_task(h.host.resume_session(sid))  # a person opens it
        await asyncio.sleep(0)
        assert not opening.done()  # it waits for the plan's write
        memory.release.set()
        agent = await asyncio.wait_for(opening, 5)
        # It loaded what the plan stored: the follow-up and its dispatch are in its log.
        assert [e.type for e in agent.session.events[len(before.events) :]][:2] == [
            "agent/followup",
            "schedule/change",
        ]
        await until_a_turn_ended(h, memory, sid, before)
        h.clock.advance(3600)
        await settle_quiet(h.host)
        await h.host.close_session(sid)
        after = await memory.load(sid)
        assert after is not None
        dispatches = [
            e
            for e in after.events
            if e.type == "schedule/change" and e.data["operation"] == "dispatch"  # type: ignore[index]
        ]
        assert len(dispatches) == 1
        assert sum(e.type == "turn/start" for e in after.events[len(before.events) :]) == 1
        assert h.host.cold.stored == 1
    finally:
        memory.release.set()
        await h.host.close()


class _OneChannel(Channels):
    """One scripted channel that records what it was asked to send."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Message] = []

    def ids(self) -> tuple[str, ...]:
        return ("hook",)

    def route(self, channel_id: str) -> Route | None:
        def sending(message: Message, *, timeout: float) -> Outcome:
            del timeout
            self.sent.append(message)
            return Outcome("delivered")

        return Route("hook", "hook", "Scripted", True, sending)


async def test_a_plans_notice_is_sent_at_once_not_at_the_next_poll(memory: MemoryBackend) -> None:
    channels = _OneChannel()
    clock = ManualClock()
    host = LiveHost(backend=memory, clock=clock, model="scripted", channels=channels)
    await host.start()
    try:
        host.load_plugin("schedule", {"cold_delivery": True})
        assert host.sender is not None
        host.sender.poll_seconds = 3600  # only being told can make it look before an hour
        agent = await host.create_session()
        value = await agent.execute_tool("schedule_create", {"prompt": "tea", "after_seconds": 60})
        assert isinstance(value, dict)
        assert "id" in value
        await host.close_session(agent.session.id)
        await wait_until(lambda: not host.wakeups.busy)
        clock.advance(60)
        await wait_until(lambda: len(channels.sent) == 1, timeout=5)
        assert host.cold.stored == 1
        assert channels.sent[0].title == "Reminder: tea"
    finally:
        await host.close()
