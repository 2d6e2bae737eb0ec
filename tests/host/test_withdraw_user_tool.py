"""Withdrawing a user's tool call its caller stopped waiting for (issue 23 item 6).

A call still queued is taken out of the inbox: it never runs, nothing of it is logged and
awaiting it raises ``CancelledError``. One that started, finished or never was is left alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Tool, hookimpl
from dsh_host import LiveHost
from dsh_host.testing import FaultInjectingBackend, wait_until
from tests.host.test_agent import crashed_mid_turn, storage_control
from tests.host.test_user_tools import counter_tool
from tests.schedule.harness import spin


def tool_events(agent: Any) -> list[Any]:
    return [e for e in agent.session.events if e.type.startswith("tool/")]


async def test_a_queued_call_withdrawn_never_runs_and_leaves_nothing_in_the_log(gated_host):
    calls: list[Any] = []
    gated_host.tools.register(counter_tool(calls))
    agent = await gated_host.create_session()
    agent.send("first")
    queued = agent.run_user_tool("count", {"by": 1})
    running = asyncio.ensure_future(queued)
    kept = asyncio.ensure_future(agent.run_user_tool("count", {"by": 2}))
    await spin(10)
    with capture_logs() as logs:
        assert agent.withdraw_user_tool(queued.call_id) is True
    assert [e["event"] for e in logs] == ["agent.user_tool_withdrawn"]
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 5)
    assert agent.withdraw_user_tool(queued.call_id) is False  # once only
    gated_host.test_model.gate("first").set()
    call_id, value, _ = await asyncio.wait_for(kept, 5)
    await agent.when_idle()
    assert calls == [({"by": 2}, "running")]  # the withdrawn call never ran, the next one did
    assert value == {"count": 1}
    assert [(e.type, e.data["callId"]) for e in tool_events(agent)] == [
        ("tool/call", call_id),
        ("tool/result", call_id),
    ]
    assert queued.call_id != call_id


async def test_a_started_call_is_not_withdrawn_and_finishes(gated_host):
    started = asyncio.Event()
    release = asyncio.Event()

    async def handler(call: Any) -> Any:
        started.set()
        await release.wait()
        return "done"

    gated_host.tools.register(Tool(name="held", description="", parameters={}, handler=handler))
    agent = await gated_host.create_session()
    queued = agent.run_user_tool("held", {})
    running = asyncio.ensure_future(queued)
    await asyncio.wait_for(started.wait(), 5)
    assert agent.withdraw_user_tool(queued.call_id) is False
    release.set()
    call_id, value, durable = await asyncio.wait_for(running, 5)
    assert (call_id, value, durable) == (queued.call_id, "done", True)
    assert agent.withdraw_user_tool(queued.call_id) is False  # finished: nothing changes
    assert [e.type for e in tool_events(agent)] == ["tool/call", "tool/result"]


async def test_only_a_queued_user_call_can_be_withdrawn(gated_host):
    agent = await gated_host.create_session()
    agent.send("first")
    waiting = agent.send("second")  # a message, not a user's call
    assert agent.withdraw_user_tool(waiting) is False
    assert agent.withdraw_user_tool("no-such-call") is False
    assert [m.message_id for m in agent.inbox][-1] == waiting
    gated_host.test_model.gate("first").set()
    gated_host.test_model.gate("second").set()
    await wait_until(lambda: agent.phase == "idle")
    assert gated_host.test_model.started == ["first", "second"]


async def test_a_head_withdrawn_while_the_driver_waits_for_storage_is_skipped(clock):
    # The driver holds the head back until an interrupted turn's closure is durable; the head
    # is withdrawn meanwhile: the driver goes on with the next call, once, and does not spin.
    backend, sid = await crashed_mid_turn(clock)
    faulty = FaultInjectingBackend(backend)
    calls: list[Any] = []
    async with (
        LiveHost(backend=faulty, clock=clock, model="scripted") as host,
        storage_control(faulty.plan) as storage,
    ):
        host.tools.register(counter_tool(calls))
        storage.stall()
        agent = await host.resume_session(sid)
        first = agent.run_user_tool("count", {"by": 1})
        second = asyncio.ensure_future(agent.run_user_tool("count", {"by": 2}))
        await wait_until(lambda: agent.waiting_for_storage or faulty.plan.append_calls)
        appends = len(faulty.plan.append_calls)
        assert agent.withdraw_user_tool(first.call_id) is True
        await spin(30)
        assert len(faulty.plan.append_calls) == appends  # no spinning flush loop meanwhile
        storage.release()
        _, value, durable = await asyncio.wait_for(second, 5)
        await agent.when_idle()
        assert (value, durable) == ({"count": 1}, True)
        assert calls == [({"by": 2}, "running")]
        assert [e.data["arguments"] for e in agent.session.events if e.type == "tool/call"] == [
            {},  # the interrupted turn's own calls
            {},
            {"by": 2},
        ]


class TurnStarts:
    """Records how much of the log was durable when each ``turn/start`` was appended."""

    def __init__(self, host: LiveHost) -> None:
        self.host = host
        self.durable: list[int] = []

    @hookimpl
    def dsh_event_validate(self, session: Any, event: Any) -> None:
        if event.type == "turn/start":
            self.durable.append(self.host.persistence.durable_length(session))


async def test_the_next_head_after_a_withdrawal_still_waits_for_its_own_proof(clock):
    # Fails without the driver's re-check: once the withdrawn head's proof came, the follow-up
    # behind it started its turn before its own record was durable.
    backend, sid = await crashed_mid_turn(clock)
    faulty = FaultInjectingBackend(backend)
    async with (
        LiveHost(backend=faulty, clock=clock, model="scripted") as host,
        storage_control(faulty.plan) as storage,
    ):
        starts = TurnStarts(host)
        host.load_plugin("turn-starts", factory=lambda: starts)
        host.tools.register(counter_tool([]))
        storage.stall()
        agent = await host.resume_session(sid)
        first = agent.run_user_tool("count", {})
        await wait_until(lambda: faulty.plan.append_calls)
        await spin(10)
        agent.followup("[reminder]", plugin="p")
        needed = len(agent.session.events)  # the follow-up's record, appended after the stall
        assert agent.withdraw_user_tool(first.call_id) is True
        storage.release()
        await wait_until(lambda: starts.durable)
        await agent.when_idle()
        assert starts.durable[0] >= needed
        assert not [e for e in agent.session.events if e.type == "tool/call" and e.seq > needed]
