"""Agents: phases, maintenance claims, parked input, when_idle, follow-ups, disposal."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import AgentBusyError, AgentDisposedError, hookimpl
from dsh_host import INTERRUPTED_RESULT, LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from tests.schedule.harness import spin


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
    async with LiveHost(backend=MemoryBackend(), clock=clock, model="none") as host:
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
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
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
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
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


# -- seen at most once: a follow-up's turn waits for its durable record ------------------------


class DurabilityProbe:
    """A model that records, at the moment it is called, how much of the log was durable and
    where the turn's ``turn/start`` is."""

    name = "probe"

    def __init__(self, host: Callable[[], LiveHost]) -> None:
        #: The LiveHost whose persistence coordinator answers what is durable (read at call time).
        self.host = host
        self.calls: list[tuple[str, int, int]] = []

    async def run_turn(self, turn) -> None:
        session = turn.agent.session
        start = max(e.seq for e in session.events if e.type == "turn/start")
        durable = self.host().persistence.durable_length(session)
        self.calls.append((turn.message.text, durable, start))
        turn.say(f"done: {turn.message.text}")


class StorageControl:
    """Stalls and releases a :class:`FaultPlan`'s writes; released for good on exit, so a
    failing assertion never leaves the LiveHost's final flush hanging."""

    def __init__(self, plan) -> None:
        self.plan = plan

    def stall(self) -> None:
        self.plan.gate = asyncio.Event()

    def release(self) -> None:
        if self.plan.gate is not None:
            self.plan.gate.set()


@contextlib.asynccontextmanager
async def storage_control(plan):
    control = StorageControl(plan)
    try:
        yield control
    finally:
        control.release()


def followup_in_maintenance(agent, text: str) -> str:
    ids: list[str] = []

    def task() -> None:
        ids.append(agent.followup(text, plugin="p", with_events=(("test/cause", {}),)))

    return asyncio.get_running_loop().create_task(agent.run_maintenance(task)), ids


async def test_a_followup_turn_starts_only_after_its_record_is_durable(clock, backend):
    # Fails before this fix: the turn (and the model call) started at once, while the write
    # that makes the follow-up and its cause durable still hung.
    model = DurabilityProbe(lambda: host)
    async with (
        LiveHost(backend=backend, clock=clock, model=model) as host,
        storage_control(backend.plan) as storage,
    ):
        agent = await host.create_session()
        session = agent.session
        storage.stall()  # every write waits
        claim, ids = followup_in_maintenance(agent, "[reminder]")
        await claim
        await spin(30)
        assert "turn/start" not in types(agent)
        assert model.calls == []
        cause = next(e.seq for e in session.events if e.type == "test/cause")
        storage.release()
        await wait_until(lambda: model.calls)
        await agent.when_idle()
        ((text, durable, start),) = model.calls
        assert text == "[reminder]"
        assert start > cause
        # Both proofs held when the model was called: the cause and the turn/start itself.
        assert durable > start
        stored = await backend.inner.load(session.id)
        assert stored is not None
        assert stored.events[start].data == {"messageId": ids[0]}


async def test_client_input_is_not_gated(clock, backend):
    model = DurabilityProbe(lambda: host)
    async with (
        LiveHost(backend=backend, clock=clock, model=model) as host,
        storage_control(backend.plan) as storage,
    ):
        agent = await host.create_session()
        storage.stall()
        agent.send("hello")
        await wait_until(lambda: model.calls)
        assert model.calls[0][1] <= model.calls[0][2]  # ran while its turn/start was not durable
        storage.release()
        await agent.when_idle()


async def test_a_storage_stall_is_retried_with_backoff_and_logged_once(clock, backend):
    # Fails before this fix: nothing waited for storage, so nothing retried or logged.
    model = DurabilityProbe(lambda: host)
    async with LiveHost(backend=backend, clock=clock, model=model) as host:
        agent = await host.create_session()
        backend.plan.fail_appends = 1_000
        with capture_logs() as logs:
            claim, _ = followup_in_maintenance(agent, "[reminder]")
            await claim
            delays = []
            for _ in range(9):
                await wait_until(lambda: any(d >= 1.0 for d in clock.pending_delays()))
                delay = max(clock.pending_delays())
                delays.append(delay)
                calls = len(backend.plan.append_calls)
                clock.advance(delay)
                await wait_until(lambda calls=calls: len(backend.plan.append_calls) > calls)
            assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
            assert agent.phase == "running"
            assert model.calls == []
            backend.plan.fail_appends = 0
            await wait_until(lambda: any(d >= 1.0 for d in clock.pending_delays()))
            clock.advance(max(clock.pending_delays()))
            await wait_until(lambda: model.calls)
            await agent.when_idle()
        stalls = [e for e in logs if e["event"] == "agent.turn_waits_for_storage"]
        assert len(stalls) == 1
        assert stalls[0]["log_level"] == "warning"
        assert [e["event"] for e in logs].count("agent.turn_storage_recovered") == 1
        assert types(agent).count("turn/start") == 1


async def test_a_later_successful_flush_redrives_a_waiting_turn_at_once(clock, backend):
    model = DurabilityProbe(lambda: host)
    async with LiveHost(backend=backend, clock=clock, model=model) as host:
        agent = await host.create_session()
        backend.plan.fail_appends = 1
        claim, _ = followup_in_maintenance(agent, "[reminder]")
        await claim
        await wait_until(lambda: clock.pending_delays() and max(clock.pending_delays()) == 1.0)
        # Someone else's flush (a tool's barrier, an explicit POST .../flush) succeeds: the
        # waiting turn runs now, without the back-off timer firing.
        assert await host.sessions.flush(agent.session) is True
        await wait_until(lambda: model.calls)
        await agent.when_idle()


async def test_disposal_ends_a_turn_waiting_for_storage(clock, backend):
    model = DurabilityProbe(lambda: host)
    host = LiveHost(backend=backend, clock=clock, model=model)
    await host.start()
    agent = await host.create_session()
    backend.plan.fail_appends = 1_000
    claim, _ = followup_in_maintenance(agent, "[reminder]")
    await claim
    await wait_until(lambda: clock.pending_delays() and max(clock.pending_delays()) == 1.0)
    await agent.dispose()
    assert clock.pending_delays() == [] or max(clock.pending_delays()) < 1.0
    assert model.calls == []
    backend.plan.fail_appends = 0
    await host.close()


async def test_a_detached_session_stops_the_wait(clock, backend):
    model = DurabilityProbe(lambda: host)
    async with LiveHost(backend=backend, clock=clock, model=model) as host:
        agent = await host.create_session()
        backend.plan.fail_appends = 1_000
        claim, _ = followup_in_maintenance(agent, "[reminder]")
        await claim
        await wait_until(lambda: clock.pending_delays() and max(clock.pending_delays()) == 1.0)
        host.sessions.detach(agent.session)
        clock.advance(1.0)
        await wait_until(lambda: agent.phase == "idle")
        assert model.calls == []
        backend.plan.fail_appends = 0


# -- interrupted turns --------------------------------------------------------------------------


async def crashed_mid_turn(clock) -> tuple[MemoryBackend, str]:
    """A stored Session whose last turn has a durable turn/start and no turn/end, one tool call
    answered and one not (as a SIGKILL mid-turn leaves it)."""
    backend = MemoryBackend()
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.create_session()
        session = agent.session
        session.append("turn/start", {"messageId": "m1"})
        session.append("user/message", {"text": "do two things"})
        session.append("tool/call", {"callId": "c1", "name": "slow", "arguments": {}})
        session.append("tool/call", {"callId": "c2", "name": "fast", "arguments": {}})
        session.append("tool/result", {"callId": "c2", "name": "fast", "value": 1})
        assert await host.sessions.flush(session) is True
        sid = session.id
    return backend, sid


async def test_resume_closes_an_interrupted_turn_before_new_input(clock):
    # Fails before this fix: nothing closed the turn, so every later boundary stayed inside an
    # open turn (the Session was un-forkable) and c1 stayed an orphan call.
    backend, sid = await crashed_mid_turn(clock)
    faulty = FaultInjectingBackend(backend)
    model = DurabilityProbe(lambda: host)
    with capture_logs() as logs:
        async with (
            LiveHost(backend=faulty, clock=clock, model=model) as host,
            storage_control(faulty.plan) as storage,
        ):
            storage.stall()
            agent = await host.resume_session(sid)
            events = agent.session.events
            closure = [(e.type, e.data) for e in events if e.seq >= len(events) - 2]
            assert closure == [
                ("tool/result", {"callId": "c1", "name": "slow", "value": INTERRUPTED_RESULT}),
                ("turn/end", {"outcome": "error", "error": "interrupted"}),
            ]
            # New input waits until the closure is durable.
            agent.send("next")
            await spin(30)
            assert model.calls == []
            storage.release()
            await wait_until(lambda: model.calls)
            await agent.when_idle()
            assert model.calls[0][1] >= closure_end(events)
            child = await host.fork_session(sid)  # the whole log forks again
            assert child.session.header.seed_length == len(agent.session.events)
    closed = [e for e in logs if e["event"] == "agent.interrupted_turn_closed"]
    assert len(closed) == 1
    assert closed[0]["orphan_tool_calls"] == 1


def closure_end(events) -> int:
    return 1 + max(
        e.seq for e in events if e.type == "turn/end" and e.data.get("error") == "interrupted"
    )


async def test_a_cold_session_cut_off_mid_turn_forks_whole(clock):
    backend, sid = await crashed_mid_turn(clock)
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        child = await host.fork_session(sid)
        parent = host.sessions.get(sid)
        assert parent is not None
        assert parent.events[-1].data == {"outcome": "error", "error": "interrupted"}
        assert child.session.header.seed_length == len(parent.events)
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.resume_session(sid)
        # Closed once: a second resume finds nothing open.
        ends = [e for e in agent.session.events if e.type == "turn/end"]
        assert len(ends) == 1


async def test_a_turn_that_ended_is_left_alone_on_resume(clock):
    backend = MemoryBackend()
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.create_session()
        agent.send("list reminders")
        await agent.when_idle()
        sid = agent.session.id
        before = len(agent.session.events)
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        agent = await host.resume_session(sid)
        assert [e.type for e in agent.session.events[before:]] == ["session/end-seed"]


async def test_an_idle_callback_may_start_the_next_turn_at_once(gated_host):
    # The driver frees its slot before the idle callbacks run: a callback that queues input
    # starts the next driver right away, and that input is not left parked in the inbox.
    model = gated_host.test_model
    agent = await gated_host.create_session()
    model.gate("first").set()
    model.gate("second").set()
    phases: list[str] = []

    def queue_once() -> None:
        if not phases:
            agent.send("second")
            phases.append(agent.phase)

    agent.on_idle(queue_once)
    agent.send("first")
    await wait_until(lambda: model.started == ["first", "second"] and agent.phase == "idle")
    assert phases == ["running"]
    assert agent.inbox == ()
    texts = [e.data["text"] for e in agent.session.events if e.type == "user/message"]
    assert texts == ["first", "second"]
