"""A tool the user runs from the page (issue 13 item 3): one more entry of the Agent's inbox.

It waits for the turn before it and goes before the message after it, never runs inside a
model's turn, is logged as any tool call (marked ``"source": {"kind": "user"}``), is closed as
interrupted when the process died before its result, and the model is told of it afterwards as
what the user did, not as a call of its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_hookspecs import AgentDisposedError, Event, EventRejectedError, Tool, hookimpl
from dsh_host import INTERRUPTED_RESULT, LiveHost
from dsh_host.core._inbox import interrupted_turn_closure
from dsh_host.models._openai_messages import transcript_messages
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import wait_until
from tests.schedule.harness import spin

USER = {"kind": "user"}


def counter_tool(calls: list[Any]) -> Tool:
    async def handler(call: Any) -> Any:
        calls.append((call.arguments, call.agent.phase))
        return {"count": len(calls)}

    schema = {"type": "object", "properties": {"by": {"type": "integer"}}}
    return Tool(name="count", description="counts", parameters=schema, handler=handler)


def kinds(agent) -> list[tuple[str, Any]]:
    return [(e.type, e.data.get("text") or e.data.get("name")) for e in agent.session.events]


async def test_a_user_tool_waits_for_the_turn_before_it_and_goes_before_the_message_after_it(
    gated_host,
):
    model = gated_host.test_model
    calls: list[Any] = []
    gated_host.tools.register(counter_tool(calls))
    agent = await gated_host.create_session()
    agent.send("first")
    running = asyncio.ensure_future(agent.run_user_tool("count", {"by": 2}))
    agent.send("after")
    await spin(30)
    assert calls == []  # the turn before it is still running
    assert not running.done()
    model.gate("first").set()
    model.gate("after").set()
    call_id, value, durable = await asyncio.wait_for(running, 5)
    await agent.when_idle()
    assert value == {"count": 1}
    assert durable is True
    assert calls == [({"by": 2}, "running")]  # the Agent is not idle while it runs
    assert kinds(agent) == [
        ("turn/start", None),
        ("user/message", "first"),
        ("assistant/message", "done: first"),
        ("turn/end", None),
        ("tool/call", "count"),
        ("tool/result", "count"),
        ("turn/start", None),
        ("user/message", "after"),
        ("assistant/message", "done: after"),
        ("turn/end", None),
    ]
    call = next(e for e in agent.session.events if e.type == "tool/call")
    assert call.data == {"callId": call_id, "name": "count", "arguments": {"by": 2}, "source": USER}
    result = next(e for e in agent.session.events if e.type == "tool/result")
    assert result.data == {"callId": call_id, "name": "count", "value": {"count": 1}}
    assert gated_host.sessions.durable_length(agent.session) == len(agent.session.events)


async def test_a_user_tool_on_an_idle_agent_runs_at_once_without_a_turn(gated_host):
    calls: list[Any] = []
    gated_host.tools.register(counter_tool(calls))
    agent = await gated_host.create_session()
    _, value, _ = await asyncio.wait_for(agent.run_user_tool("count", {}), 5)
    assert value == {"count": 1}
    assert [e.type for e in agent.session.events] == ["tool/call", "tool/result"]
    assert agent.phase == "idle"
    assert gated_host.test_model.started == []  # the model never saw it


async def test_a_user_tool_of_an_unknown_name_is_answered_like_the_model_would_be(gated_host):
    agent = await gated_host.create_session()
    _, value, _ = await agent.run_user_tool("nope", {})
    assert isinstance(value, dict)
    assert value["code"] == "unknown_tool"


async def test_a_queued_user_tool_is_refused_when_the_agent_is_disposed(gated_host):
    calls: list[Any] = []
    gated_host.tools.register(counter_tool(calls))
    agent = await gated_host.create_session()
    agent.send("blocks")
    queued = asyncio.ensure_future(agent.run_user_tool("count", {}))
    await spin(10)
    await gated_host.close_session(agent.session.id)
    with pytest.raises(AgentDisposedError):
        await asyncio.wait_for(queued, 5)
    assert calls == []
    with pytest.raises(AgentDisposedError):
        await agent.run_user_tool("count", {})


async def test_a_user_tool_cut_off_by_disposal_while_it_runs_is_refused(gated_host):
    started = asyncio.Event()

    async def handler(call: Any) -> Any:
        started.set()
        await asyncio.Event().wait()  # never returns on its own

    gated_host.tools.register(Tool(name="hang", description="", parameters={}, handler=handler))
    agent = await gated_host.create_session()
    running = asyncio.ensure_future(agent.run_user_tool("hang", {}))
    await asyncio.wait_for(started.wait(), 5)
    await gated_host.close_session(agent.session.id)
    with pytest.raises(AgentDisposedError):
        await asyncio.wait_for(running, 5)


async def test_a_user_tool_whose_call_a_plugin_refuses_raises_and_logs_nothing(gated_host):
    class NoToolCalls:
        @hookimpl
        def dsh_event_validate(self, session, event):
            if event.type == "tool/call":
                raise ValueError("no tool calls here")

    gated_host.tools.register(counter_tool([]))
    gated_host.load_plugin("strict", factory=NoToolCalls)
    agent = await gated_host.create_session()
    with pytest.raises(EventRejectedError):
        await agent.run_user_tool("count", {})
    assert list(agent.session.events) == []
    await wait_until(lambda: agent.phase == "idle")


def log_of(*items: tuple[str, Any]) -> list[Event]:
    return [Event(seq=i, type=kind, time=i, data=data) for i, (kind, data) in enumerate(items)]


def test_a_user_call_without_its_result_is_closed_as_interrupted_after_a_crash() -> None:
    owned = log_of(
        ("tool/call", {"callId": "u0", "name": "count", "arguments": {}, "source": USER}),
        ("tool/result", {"callId": "u0", "name": "count", "value": 1}),
        ("tool/call", {"callId": "u1", "name": "count", "arguments": {}, "source": USER}),
    )
    assert interrupted_turn_closure(owned) == [
        ("tool/result", {"callId": "u1", "name": "count", "value": INTERRUPTED_RESULT})
    ]
    assert interrupted_turn_closure(owned[:2]) is None
    open_turn = [
        *owned,
        Event(seq=3, type="turn/start", time=3, data={"messageId": "m"}),
        Event(seq=4, type="tool/call", time=4, data={"callId": "c", "name": "t", "arguments": {}}),
    ]
    closure = interrupted_turn_closure(open_turn)
    assert closure is not None
    assert [(kind, data.get("callId")) for kind, data in closure] == [  # type: ignore[union-attr]
        ("tool/result", "u1"),
        ("tool/result", "c"),
        ("turn/end", None),
    ]


async def test_resume_answers_a_user_call_the_process_died_in(clock):
    backend = MemoryBackend()
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.create_session()
        agent.session.append(
            "tool/call", {"callId": "u1", "name": "count", "arguments": {}, "source": USER}
        )
        assert await host.sessions.flush(agent.session) is True
        sid = agent.session.id
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.resume_session(sid)
        last = agent.session.events[-1]
        assert (last.type, last.data) == (
            "tool/result",
            {"callId": "u1", "name": "count", "value": INTERRUPTED_RESULT},
        )


def test_the_model_is_told_of_a_user_action_as_one_user_message_never_as_its_own_call() -> None:
    events = log_of(
        ("user/message", {"text": "remind me in 5 minutes to stretch"}),
        ("assistant/message", {"text": "Done."}),
        (
            "tool/call",
            {"callId": "u1", "name": "schedule_delete", "arguments": {"id": "s1"}, "source": USER},
        ),
        ("tool/result", {"callId": "u1", "name": "schedule_delete", "value": {"state": "deleted"}}),
        (
            "tool/call",
            {"callId": "u2", "name": "count", "arguments": {}, "source": USER},
        ),  # no result
    )
    assert transcript_messages(events) == [
        {"role": "user", "content": "remind me in 5 minutes to stretch"},
        {"role": "assistant", "content": "Done."},
        {
            "role": "user",
            "content": "[USER ACTION] On the page, the user ran the tool schedule_delete with "
            '{"id":"s1"}; its result: {"state":"deleted"}',
        },
    ]
