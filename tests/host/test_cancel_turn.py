"""Stopping a running turn (issue 23 item 2): ``LiveAgent.cancel_turn``.

The model turn that is running ends ``turn/end {"outcome": "cancelled"}`` with no half message;
a tool call in progress is not interrupted (its ``tool/result`` is recorded first); the driver
then goes straight on with the inbox. Nothing changes when no model turn runs, and disposal
still ends a turn as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import JSONValue, Tool, ToolCall
from dsh_host import LiveHost, LiveTurn
from dsh_host.models._openai_messages import STOPPED_NOTE, transcript_messages
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock, wait_until
from tests.schedule.harness import spin

CANCELLED = {"outcome": "cancelled"}
DISPOSED = {"outcome": "error", "error": "turn cancelled"}

Step = Callable[[LiveTurn], Awaitable[None]]


class ScriptModel:
    """Runs the step registered for a turn's text; records how far each turn got."""

    name = "script"

    def __init__(self) -> None:
        self.steps: dict[str, Step] = {}
        self.reached: list[str] = []

    async def run_turn(self, turn: LiveTurn) -> None:
        await self.steps[turn.message.text](turn)


class HeldTool:
    """A tool whose call waits until the test releases it (and notes that it finished)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.finished = False

    async def handler(self, call: ToolCall) -> JSONValue:
        del call
        self.started.set()
        await self.release.wait()
        self.finished = True
        return {"done": True}

    def tool(self) -> Tool:
        return Tool(name="held", description="waits", parameters={}, handler=self.handler)


@pytest.fixture
async def script_host(clock: ManualClock) -> AsyncIterator[LiveHost]:
    model = ScriptModel()
    async with LiveHost(backend=MemoryBackend(), clock=clock, model=model) as host:
        host.test_model = model  # type: ignore[attr-defined]
        yield host


def model_of(host: LiveHost) -> ScriptModel:
    model = host.test_model  # type: ignore[attr-defined]
    assert isinstance(model, ScriptModel)
    return model


def log(agent) -> list[tuple[str, JSONValue]]:
    return [(e.type, e.data) for e in agent.session.events]


def waits_forever(model: ScriptModel, text: str) -> asyncio.Event:
    """A step that streams, then awaits an event nobody sets, then would say ``text``."""
    entered = asyncio.Event()

    async def step(turn: LiveTurn) -> None:
        turn.stream("half a ")
        entered.set()
        await asyncio.Event().wait()
        model.reached.append(f"after wait: {text}")
        turn.say(text)

    model.steps[text] = step
    return entered


# -- nothing to stop ----------------------------------------------------------------------------


async def test_cancel_with_no_running_turn_answers_false_and_changes_nothing(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    before = log(agent)
    assert agent.cancel_turn() is False  # idle
    assert log(agent) == before

    async def maintenance() -> bool:
        return agent.cancel_turn()

    assert await agent.run_maintenance(maintenance) is False  # maintenance is not a turn
    assert log(agent) == before

    # A user action is not a model turn either: it is not interrupted.
    held = HeldTool()
    agent.tools.register(held.tool())
    action = asyncio.ensure_future(agent.run_user_tool("held", {}))
    await asyncio.wait_for(held.started.wait(), 5)
    assert agent.cancel_turn() is False
    held.release.set()
    _, value, _ = await asyncio.wait_for(action, 5)
    assert value == {"done": True}
    assert [kind for kind, _ in log(agent)[len(before) :]] == ["tool/call", "tool/result"]

    # Nor is a turn that has ended.
    model.steps["quick"] = lambda turn: asyncio.sleep(0)
    agent.send("quick")
    await agent.when_idle()
    assert agent.cancel_turn() is False
    assert log(agent)[-1] == ("turn/end", {"outcome": "ok"})


# -- stopping ------------------------------------------------------------------------------------


async def test_cancel_while_the_model_is_awaiting_ends_the_turn_cancelled(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    entered = waits_forever(model, "slow answer")
    agent.send("slow answer")
    await asyncio.wait_for(entered.wait(), 5)
    with capture_logs() as logs:
        assert agent.cancel_turn() is True
        assert agent.cancel_turn() is True  # asked again while pending: harmless
        await asyncio.wait_for(agent.when_idle(), 5)
    assert model.reached == []
    # No half message: the streamed text was ephemeral, and nothing was said.
    assert [kind for kind, _ in log(agent)] == ["turn/start", "user/message", "turn/end"]
    assert log(agent)[-1] == ("turn/end", CANCELLED)
    assert agent.phase == "idle"
    assert agent.cancel_turn() is False
    # The turn/end was flushed like any other turn's.
    stored = await script_host.inspect(agent.session.id)
    assert stored is not None
    assert len(stored.events) == 3
    assert [e["event"] for e in logs if e["event"].startswith("agent.turn_cancel")] == [
        "agent.turn_cancel_requested",
        "agent.turn_cancelled",
    ]


async def test_cancel_during_a_tool_call_waits_for_its_result_then_ends_the_turn(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    held = HeldTool()
    agent.tools.register(held.tool())

    async def step(turn: LiveTurn) -> None:
        value = await turn.call_tool("held", {}, call_id="c1")
        model.reached.append("after the tool")
        turn.say(f"the tool said {value}")  # a stopped turn says nothing more
        await turn.call_tool("held", {}, call_id="c2")

    model.steps["use the tool"] = step
    agent.send("use the tool")
    await asyncio.wait_for(held.started.wait(), 5)
    assert agent.cancel_turn() is True
    await spin()
    # The tool call is not interrupted: the turn is still open, the tool still running.
    assert agent.phase == "running"
    assert log(agent)[-1][0] == "tool/call"
    assert not held.finished
    held.release.set()
    await asyncio.wait_for(agent.when_idle(), 5)
    assert held.finished
    assert log(agent)[2:] == [
        ("tool/call", {"callId": "c1", "name": "held", "arguments": {}}),
        ("tool/result", {"callId": "c1", "name": "held", "value": {"done": True}}),
        ("turn/end", CANCELLED),
    ]


async def test_a_stopped_adapter_that_swallows_the_cancellation_adds_nothing(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    entered = asyncio.Event()
    refused: list[BaseException] = []

    async def stubborn(turn: LiveTurn) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            turn.stream("more text")
            turn.say("a late message")
            try:
                await turn.call_tool("anything", {})
            except asyncio.CancelledError as exc:
                refused.append(exc)

    model.steps["stubborn"] = stubborn
    agent.send("stubborn")
    await asyncio.wait_for(entered.wait(), 5)
    assert agent.cancel_turn() is True
    await asyncio.wait_for(agent.when_idle(), 5)
    assert len(refused) == 1
    assert [kind for kind, _ in log(agent)] == ["turn/start", "user/message", "turn/end"]
    assert log(agent)[-1] == ("turn/end", CANCELLED)


async def test_after_a_cancel_a_queued_user_action_and_a_followup_run_at_once(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    entered = waits_forever(model, "slow answer")
    answered: list[str] = []

    async def followup(turn: LiveTurn) -> None:
        answered.append(turn.message.text)
        turn.say("reminded")

    model.steps["[reminder]"] = followup

    async def quick(call: ToolCall) -> JSONValue:
        return {"ok": True}

    agent.tools.register(Tool(name="quick", description="", parameters={}, handler=quick))
    idle: list[str] = []
    agent.on_idle(lambda: idle.append(agent.phase))
    agent.send("slow answer")
    await asyncio.wait_for(entered.wait(), 5)
    action = asyncio.ensure_future(agent.run_user_tool("quick", {}))
    message_id = agent.followup("[reminder]", plugin="schedule")
    await spin()
    # Both wait behind the running turn.
    assert not action.done()
    assert answered == []

    assert agent.cancel_turn() is True
    _, value, durable = await asyncio.wait_for(action, 5)
    assert value == {"ok": True}
    assert durable is True
    await wait_until(lambda: answered == ["[reminder]"] and agent.phase == "idle")
    assert idle == ["idle"]  # the idle callbacks fire as after any turn
    kinds = [kind for kind, _ in log(agent)]
    first_end = kinds.index("turn/end")
    assert log(agent)[first_end] == ("turn/end", CANCELLED)
    assert kinds[first_end + 1 :] == [
        "tool/call",
        "tool/result",
        "turn/start",
        "user/message",
        "assistant/message",
        "turn/end",
    ]
    starts = [data for kind, data in log(agent) if kind == "turn/start"]
    assert starts[-1] == {"messageId": message_id}
    assert log(agent)[-1] == ("turn/end", {"outcome": "ok"})


# -- disposal keeps today's behaviour ------------------------------------------------------------


async def test_disposal_during_a_turn_still_ends_it_as_before(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    entered = waits_forever(model, "slow answer")
    agent.send("slow answer")
    await asyncio.wait_for(entered.wait(), 5)
    await agent.dispose()
    assert log(agent)[-1] == ("turn/end", DISPOSED)
    assert agent.cancel_turn() is False


async def test_disposal_while_a_stop_waits_for_a_tool_ends_the_turn_as_before(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    held = HeldTool()
    agent.tools.register(held.tool())

    async def step(turn: LiveTurn) -> None:
        await turn.call_tool("held", {}, call_id="c1")

    model.steps["use the tool"] = step
    agent.send("use the tool")
    await asyncio.wait_for(held.started.wait(), 5)
    assert agent.cancel_turn() is True
    await agent.dispose()  # disposal cancels the driver, the tool call with it
    assert not held.finished
    assert log(agent)[-1] == ("turn/end", DISPOSED)


# -- what the model is told ----------------------------------------------------------------------


async def test_the_model_is_told_the_user_stopped_a_reply_and_not_of_a_failure(script_host):
    model = model_of(script_host)
    agent = await script_host.create_session()
    held = HeldTool()
    agent.tools.register(held.tool())

    async def step(turn: LiveTurn) -> None:
        await turn.call_tool("held", {}, call_id="c1")

    async def fails(turn: LiveTurn) -> None:
        raise RuntimeError("the model is down")

    model.steps["use the tool"] = step
    model.steps["fail"] = fails
    agent.send("use the tool")
    await asyncio.wait_for(held.started.wait(), 5)
    assert agent.cancel_turn() is True
    held.release.set()
    await asyncio.wait_for(agent.when_idle(), 5)
    agent.send("fail")
    await asyncio.wait_for(agent.when_idle(), 5)
    assert log(agent)[-1] == ("turn/end", {"outcome": "error", "error": "the model is down"})

    messages = transcript_messages(agent.session.events)
    assert messages == [
        {"role": "user", "content": "use the tool"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "held", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"done":true}'},
        {"role": "user", "content": STOPPED_NOTE},
        {"role": "user", "content": "fail"},  # a failed turn's end is not the model's business
    ]
    assert STOPPED_NOTE.startswith("[USER ACTION] ")
    assert "stopped" in STOPPED_NOTE
