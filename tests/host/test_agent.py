"""Agents: phases, maintenance claims, parked input, when_idle, follow-ups, disposal."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import AgentBusyError, AgentDisposedError, hookimpl
from dsh_host import Host
from dsh_host.persistence._memory import MemoryBackend
from dsh_host.testing import ManualClock, wait_until
from tests.schedule.harness import spin

from .models import GatedModel


@pytest.fixture
async def gated_host(clock):
    model = GatedModel()
    async with Host(backend=MemoryBackend(), clock=clock, model=model) as host:
        host.test_model = model  # type: ignore[attr-defined]
        yield host


def types(agent):
    return [e.type for e in agent.session.events]


async def test_maintenance_claim_is_refused_while_a_turn_runs(gated_host):
    model = gated_host.test_model
    agent = await gated_host.create_session()
    agent.send("long turn")
    assert agent.phase == "running"
    ran = []
    with pytest.raises(AgentBusyError):
        await agent.run_maintenance(lambda: ran.append("task"))
    assert ran == []
    model.gate("long turn").set()
    await agent.when_idle()
    assert agent.phase == "idle"
    assert await agent.run_maintenance(lambda: "claimed") == "claimed"


async def test_a_second_maintenance_claim_is_refused_and_the_phase_is_released(gated_host):
    agent = await gated_host.create_session()
    inner: list[BaseException] = []

    async def task():
        assert agent.phase == "maintenance"
        try:
            await agent.run_maintenance(lambda: None)
        except AgentBusyError as exc:
            inner.append(exc)
        raise ValueError("task failed")

    with pytest.raises(ValueError, match="task failed"):
        await agent.run_maintenance(task)
    assert len(inner) == 1
    assert agent.phase == "idle"


async def test_waking_input_is_parked_during_maintenance(gated_host):
    model = gated_host.test_model
    agent = await gated_host.create_session()
    model.gate("queued during maintenance").set()

    def task():
        agent.send("queued during maintenance")
        message_id = agent.followup("follow-up during maintenance", plugin="p")
        agent.session.append("test/marker", {"after": message_id})
        assert agent.phase == "maintenance"
        assert model.started == []
        return "ok"

    assert await agent.run_maintenance(task) == "ok"
    # Released: the parked input starts only now, after the marker reached the log.
    assert agent.phase == "running"
    model.gate("follow-up during maintenance").set()
    await agent.when_idle()
    log = types(agent)
    assert log.index("test/marker") < log.index("turn/start")
    assert model.started == ["queued during maintenance", "follow-up during maintenance"]


async def test_when_idle_follows_replacement_work(gated_host):
    model = gated_host.test_model
    agent = await gated_host.create_session()
    agent.send("first")
    waiter = asyncio.create_task(agent.when_idle())
    await wait_until(lambda: model.started == ["first"])
    agent.send("second")  # replacement work queued before the first turn ends
    model.gate("first").set()
    await wait_until(lambda: model.started == ["first", "second"])
    await spin()
    assert not waiter.done()
    model.gate("second").set()
    await asyncio.wait_for(waiter, 5)
    assert agent.phase == "idle"


async def test_when_idle_waits_through_a_driver_started_by_maintenance_release(gated_host):
    model = gated_host.test_model
    agent = await gated_host.create_session()
    release = asyncio.Event()
    waiters = []

    async def task():
        waiters.append(asyncio.create_task(agent.when_idle()))
        agent.send("parked")
        await release.wait()

    maintenance = asyncio.create_task(agent.run_maintenance(task))
    await wait_until(lambda: len(waiters) == 1)
    release.set()
    await maintenance
    assert agent.phase == "running"
    await spin()
    assert not waiters[0].done()
    model.gate("parked").set()
    await asyncio.wait_for(waiters[0], 5)


async def test_when_idle_on_an_idle_agent_returns_at_once(gated_host):
    agent = await gated_host.create_session()
    await asyncio.wait_for(agent.when_idle(), 1)


async def test_followup_opens_its_own_later_turn_and_never_steers(gated_host):
    model = gated_host.test_model
    agent = await gated_host.create_session()
    agent.send("current")
    await wait_until(lambda: model.started == ["current"])
    message_id = agent.followup("[reminder]", plugin="schedule")
    events = agent.session.events
    followup = [e for e in events if e.type == "agent/followup"]
    assert followup[0].data == {
        "messageId": message_id,
        "text": "[reminder]",
        "source": {"kind": "plugin", "plugin": "schedule"},
    }
    model.gate("current").set()
    model.gate("[reminder]").set()
    await wait_until(lambda: agent.phase == "idle" and model.started == ["current", "[reminder]"])
    log = types(agent)
    assert log.count("turn/start") == 2
    second_start = [e for e in agent.session.events if e.type == "turn/start"][1]
    assert second_start.data == {"messageId": message_id}
    # The follow-up's turn starts only after the current turn ended.
    ends = [i for i, t in enumerate(log) if t == "turn/end"]
    assert ends[0] < second_start.seq
    user = [e for e in agent.session.events if e.type == "user/message"][1]
    assert user.data == {"text": "[reminder]", "source": {"kind": "plugin", "plugin": "schedule"}}


async def test_turns_record_the_transcript_and_flush_after_turn_end(gated_host):
    model = gated_host.test_model
    agent = await gated_host.create_session()
    model.gate("hello").set()
    agent.send("hello")
    await agent.when_idle()
    assert types(agent) == ["turn/start", "user/message", "assistant/message", "turn/end"]
    stored = await gated_host.inspect(agent.session.id)
    assert stored is not None
    assert len(stored.events) == 4
    assert agent.session.events[-1].data == {"outcome": "ok"}


async def test_none_model_fails_every_turn_visibly(clock):
    async with Host(backend=MemoryBackend(), clock=clock, model="none") as host:
        agent = await host.create_session()
        agent.send("hello")
        await agent.when_idle()
        end = agent.session.events[-1]
        assert end.type == "turn/end"
        assert end.data["outcome"] == "error"
        assert "no model is configured" in end.data["error"]


class Recorder:
    def __init__(self, name, calls, *, fail=False, is_async=False):
        self.name, self.calls, self.fail, self.is_async = name, calls, fail, is_async

    @hookimpl
    def dsh_agent_published(self, agent):
        def close():
            self.calls.append(self.name)
            if self.fail:
                raise RuntimeError(f"{self.name} teardown bug")

        async def aclose():
            await asyncio.sleep(0)
            close()

        return aclose if self.is_async else close


async def test_disposal_closes_plugin_disposables_in_reverse_order_contained(gated_host):
    calls: list[str] = []
    gated_host.load_plugin("a", factory=lambda: Recorder("a", calls))
    gated_host.load_plugin("b", factory=lambda: Recorder("b", calls, fail=True, is_async=True))
    gated_host.load_plugin("c", factory=lambda: Recorder("c", calls, is_async=True))
    agent = await gated_host.create_session()
    agent.send("in flight")
    with capture_logs() as logs:
        await agent.dispose()
    # pluggy calls the last registered plugin first; disposal runs in reverse of that.
    assert calls == ["a", "b", "c"]
    assert [e["plugin"] for e in logs if e["event"] == "plugin.dispose_failed"] == ["b"]
    assert agent.disposed
    assert gated_host.agents.get(agent.id) is None
    assert agent.session.events[-1].data == {"outcome": "error", "error": "turn cancelled"}
    with pytest.raises(AgentDisposedError):
        agent.send("late")
    with pytest.raises(AgentDisposedError):
        await agent.run_maintenance(lambda: None)
    await agent.dispose()  # idempotent
    assert calls == ["a", "b", "c"]


async def test_resume_requeues_followups_whose_turn_never_started(clock):
    backend = MemoryBackend()
    async with Host(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.create_session()
        session = agent.session

        def task():
            agent.followup("[pending one]", plugin="p")

        await agent.run_maintenance(task)
        await agent.when_idle()
        consumed = sum(1 for e in session.events if e.type == "turn/start")
        assert consumed == 1
        # Simulate a crash between a durable follow-up and its turn: write one by hand.
        session.append(
            "agent/followup",
            {"messageId": "m-crash", "text": "[pending two]", "source": {"kind": "plugin"}},
        )
        assert await host.sessions.flush(session) is True
        sid = session.id
    async with Host(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.resume_session(sid)
        await wait_until(lambda: agent.phase == "idle")
        starts = [e.data["messageId"] for e in agent.session.events if e.type == "turn/start"]
        assert starts[-1] == "m-crash"
        assert len(starts) == 2


async def test_child_agents_have_their_own_subagent_session(host):
    root = await host.create_session(cwd="/w")
    child = host.agents.create_child(root)
    assert child.parent is root
    assert child.session.header.origin == "subagent"
    assert child.session.header.delegation_depth == 1
    assert host.agents.roots() == (root,)
    assert set(host.agents.all()) == {root, child}


async def test_manual_clock_is_used_for_event_time(host):
    clock: ManualClock = host.clock  # type: ignore[assignment]
    agent = await host.create_session()
    event = agent.session.append("x/y", {})
    assert event.time == clock.now_ms()
