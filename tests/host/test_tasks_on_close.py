"""Closing the host leaves no task running and no "Task was destroyed" / "never retrieved" report.

A real LiveHost with the Schedule plugin (real clock) holds, at close: a Session with a pending
reminder, a Session whose turn is running, and a message queued behind it.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import Any

from dsh_host import LiveAgent, LiveHost, LiveTurn
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import wait_until


class HoldingModel:
    """``remind ...`` creates a reminder an hour away; any other message holds its turn open
    until the turn is cancelled (the host's close does that)."""

    name = "holding"

    def __init__(self) -> None:
        self.started: list[str] = []

    async def run_turn(self, turn: LiveTurn) -> None:
        text = turn.message.text
        self.started.append(text)
        if text.startswith("remind"):
            value = await turn.call_tool(
                "schedule_create", {"prompt": "stretch", "after_seconds": 3600}
            )
            turn.say(f"created: {value}")
            return
        await asyncio.Event().wait()


def tool_results(agent: LiveAgent) -> list[Any]:
    return [e.data for e in agent.session.events if e.type == "tool/result"]


async def scenario(model: HoldingModel) -> None:
    """Open the host, reach the three states, close it and check that no task is left."""
    host = LiveHost(backend=MemoryBackend(), model=model)
    await host.start()
    host.load_plugin("schedule")

    reminding = await host.create_session()
    reminding.send("remind me in an hour to stretch")
    await wait_until(lambda: reminding.phase == "idle" and tool_results(reminding))
    (result,) = tool_results(reminding)
    assert result["value"]["id"] == "schedule-1", result  # pending, an hour away

    busy = await host.create_session()
    busy.send("hold this turn")
    busy.send("queued behind it")
    await wait_until(lambda: model.started[-1:] == ["hold this turn"])
    assert busy.phase == "running"
    assert [m.text for m in busy.inbox] == ["queued behind it"]
    assert asyncio.all_tasks() - {asyncio.current_task()}, "the scenario holds tasks"

    await host.close()

    assert asyncio.all_tasks() == {asyncio.current_task()}
    assert busy.disposed
    assert reminding.disposed


async def test_closing_the_host_leaves_no_task_and_no_unretrieved_outcome():
    loop = asyncio.get_running_loop()
    reports: list[dict[str, Any]] = []
    previous_handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    model = HoldingModel()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await scenario(model)
            # Everything the scenario made is garbage now: a pending task or an unretrieved
            # exception among it would be reported to the loop's handler (or warned) here.
            gc.collect()
        assert [str(w.message) for w in caught] == []
    finally:
        loop.set_exception_handler(previous_handler)
    assert reports == []
    assert model.started == ["remind me in an hour to stretch", "hold this turn"]
