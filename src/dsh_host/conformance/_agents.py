"""The Agent phases (docs/design.md section 4, :class:`dsh_hookspecs.Agent`).

``run_maintenance`` claims an idle Agent or fails at once; waking input that arrives during
maintenance is parked and starts only after the phase is released; ``when_idle`` resolves when
the Agent is next fully idle, following replacement work; ``followup`` records the message in
the log at once (with its companion events, all or nothing) and opens its own later turn, never
steering the current one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

import pytest

from dsh_hookspecs import Agent, AgentBusyError, EventRejectedError, JSONValue

from ._host import PLUGIN, REFUSED_TYPE, HostSuite, Rig

__all__ = ["AgentPhaseContract"]


def phase_of(agent: Agent) -> str:
    """The phase now (a call, so that a type checker does not keep an earlier narrowing)."""
    return agent.phase


class AgentPhaseContract(HostSuite):
    """Phases, maintenance claims, parked input, ``when_idle`` and follow-ups."""

    async def test_a_new_agent_is_idle_and_when_idle_returns_at_once(self, rig: Rig) -> None:
        agent = await rig.new_agent()
        assert agent.phase == "idle"
        await rig.idle(agent)
        assert rig.turns.started == []

    async def test_maintenance_is_refused_while_a_turn_runs_and_claimed_once_idle(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        rig.host.send(agent, "long turn")
        await rig.until(lambda: rig.turns.started == ["long turn"])
        assert agent.phase == "running"
        ran: list[str] = []
        with pytest.raises(AgentBusyError):
            await agent.run_maintenance(lambda: ran.append("task"))
        assert ran == []
        rig.turns.open("long turn")
        await rig.idle(agent)
        assert await agent.run_maintenance(lambda: "claimed") == "claimed"
        assert phase_of(agent) == "idle"

    async def test_a_claim_inside_maintenance_is_refused_and_a_failing_task_releases_the_phase(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        seen: list[str] = []

        async def task() -> None:
            seen.append(agent.phase)
            try:
                await agent.run_maintenance(lambda: None)
            except AgentBusyError:
                seen.append("refused")
            raise LookupError("task failed (conformance)")

        # Cast: mypy cannot solve ``T | Awaitable[T]`` for a coroutine function.
        with pytest.raises(LookupError, match="task failed"):
            await agent.run_maintenance(cast("Callable[[], None]", task))
        assert seen == ["maintenance", "refused"]
        assert agent.phase == "idle"

    async def test_waking_input_is_parked_during_maintenance_and_runs_after_release(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        rig.turns.open("sent during maintenance")
        rig.turns.open("queued during maintenance")
        during: list[object] = []

        def task() -> str:
            rig.host.send(agent, "sent during maintenance")
            agent.followup("queued during maintenance", plugin=PLUGIN)
            during.extend([agent.phase, list(rig.turns.started)])
            return "ok"

        assert await agent.run_maintenance(task) == "ok"
        assert during == ["maintenance", []]
        await rig.until(lambda: len(rig.turns.started) == 2)
        await rig.idle(agent)
        assert rig.turns.started == ["sent during maintenance", "queued during maintenance"]

    async def test_when_idle_follows_replacement_work(self, rig: Rig) -> None:
        agent = await rig.new_agent()
        rig.host.send(agent, "first")
        await rig.until(lambda: rig.turns.started == ["first"])
        idle = asyncio.ensure_future(agent.when_idle())
        rig.host.send(agent, "second")  # queued before the first turn ends
        rig.turns.open("first")
        await rig.until(lambda: rig.turns.started == ["first", "second"])
        assert not idle.done()  # the second turn is still running
        rig.turns.open("second")
        await rig.until(idle.done)
        assert idle.exception() is None
        assert agent.phase == "idle"

    async def test_a_followup_is_logged_at_once_and_opens_its_own_turn_after_the_current(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        session = agent.session
        rig.host.send(agent, "current")
        await rig.until(lambda: rig.turns.started == ["current"])
        message_id = agent.followup("[conformance follow-up]", plugin=PLUGIN)
        [record] = [e for e in session.events if e.type == "agent/followup"]
        assert record.data == {
            "messageId": message_id,
            "text": "[conformance follow-up]",
            "source": {"kind": "plugin", "plugin": PLUGIN},
        }
        assert rig.turns.started == ["current"]  # it never steers the running turn
        rig.turns.open("current")
        rig.turns.open("[conformance follow-up]")
        await rig.until(lambda: len(rig.turns.started) == 2)
        await rig.idle(agent)
        assert rig.turns.started == ["current", "[conformance follow-up]"]

    async def test_a_plugin_followup_with_its_events_runs_as_exactly_one_turn_after_idle(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        session = agent.session
        text = "[conformance reminder]"
        rig.turns.open(text)
        queued: list[str] = []

        def on_idle() -> None:
            if not queued:  # the plugin reacts to the first idle transition only
                events: list[tuple[str, JSONValue]] = [
                    ("conformance/cause", {"n": 1}),
                    ("conformance/cause", {"n": 2}),
                ]
                queued.append(agent.followup(text, plugin=PLUGIN, with_events=events))

        unsubscribe = agent.on_idle(on_idle)
        rig.host.send(agent, "wake up")
        rig.turns.open("wake up")
        await rig.until(lambda: rig.turns.started == ["wake up", text])
        await rig.idle(agent)
        unsubscribe()
        unsubscribe()  # idempotent
        types = [e.type for e in session.events]
        start = types.index("agent/followup")
        assert types[start : start + 3] == ["agent/followup", *["conformance/cause"] * 2]
        record = session.events[start].data
        assert isinstance(record, dict)
        assert record["messageId"] == queued[0]
        assert rig.turns.started == ["wake up", text]

    async def test_a_refused_companion_event_appends_nothing_and_queues_nothing(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        session = agent.session
        before = len(session.events)
        with pytest.raises(EventRejectedError) as refused:
            agent.followup(
                "[never queued]",
                plugin=PLUGIN,
                with_events=(("conformance/cause", {}), (REFUSED_TYPE, {})),
            )
        assert refused.value.plugin == PLUGIN
        assert len(session.events) == before
        rig.host.send(agent, "after")
        rig.turns.open("after")
        await rig.until(lambda: rig.turns.started == ["after"])
        await rig.idle(agent)
        assert rig.turns.started == ["after"]
