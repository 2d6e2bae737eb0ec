"""The live owner, driven by a manual clock (no real sleeps): upstream runtime.spec cases."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from dsh_hookspecs import hookimpl
from dsh_host import Appended
from dsh_host.testing import wait_until

from .harness import make_harness, spin

SECOND = 1.0


async def create(h, agent, after, prompt="p"):
    value = await h.call(agent, "schedule_create", {"prompt": prompt, "after_seconds": after})
    assert "id" in value, value
    await h.settle(agent)
    return value["id"]


async def advance(h, agent, seconds):
    h.clock.advance(seconds)
    await h.settle(agent)


def log_events(logs, name):
    return [entry for entry in logs if entry["event"] == name]


async def overdue_while_busy(h, model, text):
    """An Agent whose 5 s reminder falls due while its turn ``text`` runs (the model holds it):
    returns the Agent and its owner, which is waiting for the Agent to become idle."""
    agent = await h.agent()
    await create(h, agent, 5)
    agent.send(text)
    await wait_until(lambda: model.started == [text])
    h.clock.advance(5)
    owner = h.owner(agent)
    await wait_until(lambda: owner._idle_wait is not None)
    return agent, owner


async def test_long_waits_are_segmented_and_an_idle_wake_only_rearms(h):
    agent = await h.agent()
    await create(h, agent, 3600)
    assert h.segments(agent) == [60.0]
    flushes = h.flush.count
    for _ in range(59):
        await advance(h, agent, 60)
        assert h.segments(agent) == [60.0]
    assert h.flush.count == flushes  # segment wakes cost no flush and no task
    assert h.dispatches(agent) == []
    await advance(h, agent, 60)
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])


async def test_a_wall_clock_rollback_never_fires_early(h):
    agent = await h.agent()
    await create(h, agent, 100)
    h.clock.set_wall(h.clock.now_ms() - 3_600_000)  # an administrator sets the clock back 1 h
    await advance(h, agent, 100)
    assert h.dispatches(agent) == []
    # The wake at 60 s re-read the wall clock and armed another full segment (20 s are left).
    assert h.segments(agent) == [20.0]
    await advance(h, agent, 3600)
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])


async def test_a_forward_jump_is_honoured_within_one_segment_and_dispatched_once(h):
    agent = await h.agent()
    await create(h, agent, 86_400)
    h.clock.suspend(2 * 86_400)  # the machine slept; loop timers did not notice
    await advance(h, agent, 60)
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])
    await h.settle(agent)
    await advance(h, agent, 3600)
    assert h.dispatches(agent) == ["schedule-1"]
    assert len(h.followups(agent)) == 1


async def test_overdue_record_waits_for_when_idle_and_then_dispatches(clock_model_harness):
    h, model = clock_model_harness
    agent, _owner = await overdue_while_busy(h, model, "busy turn")
    assert h.dispatches(agent) == []
    listed = await h.call(agent, "schedule_list", {})
    assert [v["state"] for v in listed] == ["overdue"]
    model.gate("busy turn").set()
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])
    model.release_all()
    await h.settle(agent)
    starts = [e.data for e in agent.session.events if e.type == "user/message"]
    assert starts[-1]["source"] == {"kind": "plugin", "plugin": "schedule"}


async def test_due_path_order(h):
    agent = await h.agent()
    await create(h, agent, 5)
    order = h.flush.log
    order.clear()
    real_claim, real_followup = agent.run_maintenance, agent.followup

    async def claim(task):
        order.append("claim")
        try:
            return await real_claim(task)
        finally:
            order.append("release")

    def followup(text, *, plugin, with_events=()):
        order.append("followup")
        return real_followup(text, plugin=plugin, with_events=with_events)

    agent.run_maintenance = claim
    agent.followup = followup
    remove = h.host.sessions.subscribe(
        lambda o: (
            order.append("dispatch")
            if o.event.type == "schedule/change" and o.event.data["operation"] == "dispatch"
            else None
        ),
        Appended,
    )
    await advance(h, agent, 5)
    await wait_until(lambda: "dispatch" in order)
    await h.settle(agent)
    remove()
    assert order[:6] == ["flush", "claim", "followup", "dispatch", "release", "flush"]


async def test_equal_targets_dispatch_in_create_order_one_turn_each(h):
    agent = await h.agent()
    await h.call(agent, "schedule_create", {"prompt": "first", "after_seconds": 7})
    await h.call(agent, "schedule_create", {"prompt": "second", "after_seconds": 7})
    await h.settle(agent)
    await advance(h, agent, 7)
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1", "schedule-2"])
    await h.settle(agent)
    prompts = [f["text"].rsplit("\n", 1)[-1] for f in h.followups(agent)]
    assert prompts == ['reminder_prompt_json: "first"', 'reminder_prompt_json: "second"']
    reminders = [e for e in agent.session.events if e.type == "user/message" and "source" in e.data]
    assert len(reminders) == 2


async def test_the_clock_is_read_again_inside_the_claimed_phase(h):
    agent = await h.agent()
    await create(h, agent, 5)
    real_claim = agent.run_maintenance

    async def claim(task):
        h.clock.set_wall(h.clock.now_ms() - 60_000)  # moved back between preflight and claim
        return await real_claim(task)

    agent.run_maintenance = claim
    await advance(h, agent, 5)
    assert h.dispatches(agent) == []
    assert h.followups(agent) == []
    assert h.segments(agent) == [60.0]  # the full 60 s until the target again


async def test_the_fold_is_read_again_inside_the_claimed_phase(h):
    agent = await h.agent()
    await create(h, agent, 5)
    real_claim = agent.run_maintenance

    async def claim(task):
        # A management mutation that won the race (written straight to the log).
        agent.session.append(
            "schedule/change", {"version": 1, "operation": "delete", "id": "schedule-1"}
        )
        return await real_claim(task)

    agent.run_maintenance = claim
    await advance(h, agent, 5)
    assert h.dispatches(agent) == []
    assert h.followups(agent) == []


async def test_no_dispatch_when_followup_throws_and_the_record_stays(h):
    agent = await h.agent()
    await create(h, agent, 5)
    real_followup = agent.followup

    def broken(text, *, plugin, with_events=()):
        raise RuntimeError("inbox full")

    agent.followup = broken
    with capture_logs() as logs:
        await advance(h, agent, 5)
    assert h.dispatches(agent) == []
    assert log_events(logs, "owner.enqueue_failed")[0]["schedule_id"] == "schedule-1"
    assert not h.owner(agent).faulted
    agent.followup = real_followup
    listed = await h.call(agent, "schedule_list", {})  # a later trigger retries
    assert listed[0]["state"] == "overdue"
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])


class RejectDispatch:
    @hookimpl
    def dsh_event_validate(self, session, event):
        if event.type == "schedule/change" and event.data.get("operation") == "dispatch":
            raise RuntimeError("append refused")


async def test_a_refused_dispatch_append_faults_the_owner_and_leaves_no_followup(h):
    agent = await h.agent()
    await create(h, agent, 5)
    h.host.load_plugin("reject", factory=RejectDispatch)
    before = len(agent.session.events)
    with capture_logs() as logs:
        await advance(h, agent, 5)
    owner = h.owner(agent)
    assert owner.faulted
    faulted = log_events(logs, "owner.faulted")
    assert faulted[0]["reason"] == "append_failed"
    assert faulted[0]["schedule_id"] == "schedule-1"
    # All or nothing: the follow-up was taken back with its dispatch and never queued, so no
    # durable follow-up exists without its dispatch (and nothing can be delivered twice).
    assert h.followups(agent) == []
    assert len(agent.session.events) == before
    assert agent.inbox == ()
    stored = await h.host.inspect(agent.session.id)
    assert not [e for e in stored.events if e.type == "agent/followup"]
    await h.host.unload_plugin("reject")
    await advance(h, agent, 120)
    await h.call(agent, "schedule_list", {})
    await h.settle(agent)
    assert h.dispatches(agent) == []
    assert owner._timer is None


async def test_a_rejected_dispatch_barrier_is_not_retried_until_another_trigger(
    clock_model_harness,
):
    h, model = clock_model_harness
    agent = await h.agent()
    await create(h, agent, 5)
    await create(h, agent, 6)
    h.flush.once = ["ok", "raise"]  # preflight ok, barrier rejected
    owner = h.owner(agent)
    with capture_logs() as logs:
        h.clock.advance(6)
        await wait_until(lambda: log_events(logs, "owner.flush_failed"))
        await wait_until(lambda: owner._run is None)
    assert h.dispatches(agent) == ["schedule-1"]
    assert [e["step"] for e in log_events(logs, "owner.flush_failed")] == ["barrier"]
    assert not owner.faulted
    assert owner._timer is None
    await spin(20)
    assert h.dispatches(agent) == ["schedule-1"]
    # The next trigger (here the reminder turn reaching idle) recovers and goes on.
    model.release_all()
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1", "schedule-2"])
    await h.settle(agent)
    stored = await h.host.inspect(agent.session.id)
    dispatches = [e for e in stored.events if e.type == "schedule/change"][2:]
    assert [e.data["id"] for e in dispatches] == ["schedule-1", "schedule-2"]


async def test_a_rejected_preflight_keeps_the_record_pending_and_retries(h):
    agent = await h.agent()
    await create(h, agent, 5)
    h.flush.once = ["false"]
    with capture_logs() as logs:
        await advance(h, agent, 5)
        assert h.dispatches(agent) == []
        assert log_events(logs, "owner.flush_failed")[0]["error"] == "unacked"
        # Fails before this fix: nothing was armed, so it waited for user activity.
        assert h.segments(agent) == [1.0]
        await advance(h, agent, 1)
    assert h.dispatches(agent) == ["schedule-1"]
    assert len(log_events(logs, "owner.storage_stalled")) == 1
    assert len(log_events(logs, "owner.storage_recovered")) == 1


async def test_storage_failing_at_the_due_time_backs_off_then_delivers_by_itself(h):
    # Fails before this fix: after a failed due-time preflight nothing was delivered until the
    # user did something, however long storage had been healthy again.
    agent = await h.agent()
    await create(h, agent, 5)
    owner = h.owner(agent)
    h.flush.mode = "raise"
    delays = []
    with capture_logs() as logs:
        await advance(h, agent, 5)
        for _ in range(8):
            (delay,) = h.segments(agent)
            delays.append(delay)
            await advance(h, agent, delay)
        assert h.dispatches(agent) == []
        assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]  # one segment at most
        h.flush.mode = "ok"
        (delay,) = h.segments(agent)
        await advance(h, agent, delay)
        await h.settle(agent)
    assert h.dispatches(agent) == ["schedule-1"]
    assert not owner.faulted
    # Reported once per stall, not on every retry.
    stalls = log_events(logs, "owner.storage_stalled")
    assert [(e["log_level"], e["step"]) for e in stalls] == [("warning", "preflight")]
    warned = [e for e in log_events(logs, "owner.flush_failed") if e["log_level"] == "warning"]
    assert len(warned) == 1
    assert len(log_events(logs, "owner.storage_recovered")) == 1
    assert h.plugin.stalled == {}


async def test_a_later_successful_flush_redrives_a_stalled_owner_at_once(h):
    # Fails before this fix: an explicit flush answering durable did not re-drive the owner.
    agent = await h.agent()
    await create(h, agent, 5)
    h.flush.once = ["raise"]
    await advance(h, agent, 5)
    assert h.dispatches(agent) == []
    assert h.segments(agent) == [1.0]
    assert await h.host.sessions.flush(agent.session) is True  # e.g. POST .../flush
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])
    await h.settle(agent)


async def test_another_sessions_flush_does_not_redrive_a_stalled_owner(h):
    agent, other = await h.agent(), await h.agent()
    await create(h, agent, 5)
    h.flush.once = ["raise"]
    await advance(h, agent, 5)
    assert h.segments(agent) == [1.0]
    assert await h.host.sessions.flush(other.session) is True
    await spin(20)
    assert h.dispatches(agent) == []
    await advance(h, agent, 1)
    assert h.dispatches(agent) == ["schedule-1"]


async def test_a_disposed_stalled_owner_is_forgotten(h):
    agent = await h.agent()
    await create(h, agent, 5)
    owner = h.owner(agent)
    h.flush.once = ["raise"]
    await advance(h, agent, 5)
    assert h.plugin.stalled == {agent.session.id: owner}
    await owner.dispose()
    assert h.plugin.stalled == {}
    owner.session_flushed()  # a late observation does nothing
    assert h.segments(agent) == []


async def test_idle_wait_failure_is_contained(h):
    agent = await h.agent()
    await create(h, agent, 5)

    async def broken_when_idle():
        raise RuntimeError("idle wait broke")

    real_claim = agent.run_maintenance
    agent.when_idle = broken_when_idle

    async def busy(task):
        from dsh_hookspecs import AgentBusyError

        raise AgentBusyError("pretend a turn owns the agent")

    agent.run_maintenance = busy
    with capture_logs() as logs:
        await advance(h, agent, 5)
        await wait_until(lambda: log_events(logs, "owner.idle_wait_failed"))
    owner = h.owner(agent)
    assert not owner.faulted
    agent.run_maintenance = real_claim
    await h.call(agent, "schedule_list", {})
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])


async def test_dispose_stops_an_idle_wait(clock_model_harness):
    h, model = clock_model_harness
    agent, owner = await overdue_while_busy(h, model, "busy")
    await owner.dispose()
    assert owner._idle_wait is None
    model.release_all()
    await h.settle(agent)
    assert h.dispatches(agent) == []


async def test_a_corrupt_owned_log_faults_the_owner_and_the_tools_report_it(h):
    agent = await h.agent()
    await create(h, agent, 500)
    session = agent.session
    sid = session.id
    await h.host.close_session(sid)
    stored = h.host.backend.inner._sessions[sid]
    from dsh_hookspecs import Event

    stored.events.append(
        Event(
            seq=len(stored.events),
            type="schedule/change",
            time=0,
            data={"version": 1, "operation": "dispatch", "id": "schedule-9"},
        )
    )
    with capture_logs() as logs:
        resumed = await h.host.resume_session(sid)
        await h.settle(resumed)
    assert log_events(logs, "session.invalid")[0]["plugin"] == "schedule"
    assert h.owner(resumed).faulted
    assert log_events(logs, "owner.faulted")[0]["reason"] == "corrupt_log"
    for name, arguments in (
        ("schedule_list", {}),
        ("schedule_create", {"prompt": "x", "after_seconds": 5}),
        ("schedule_delete", {"id": "schedule-1"}),
    ):
        value = await h.call(resumed, name, arguments)
        assert value["code"] == "corrupt_schedule_log"


async def test_a_corrupt_log_seen_inside_the_claim_faults_the_owner(h):
    agent = await h.agent()
    await create(h, agent, 5)
    plugin = h.plugin
    real_claim = agent.run_maintenance

    async def claim(task):
        from dsh_schedule import ScheduleLogError

        fold = plugin.folds.of(agent.session)
        fold._error = ScheduleLogError("damaged in memory")
        return await real_claim(task)

    agent.run_maintenance = claim
    with capture_logs() as logs:
        await advance(h, agent, 5)
    assert h.owner(agent).faulted
    assert log_events(logs, "owner.faulted")[0]["reason"] == "corrupt_log"
    assert h.dispatches(agent) == []


async def test_owner_startup_maintenance_and_framing_failures_are_contained(h):
    agent = await h.agent()
    await create(h, agent, 5)
    real_claim = agent.run_maintenance

    async def rejected(task):
        raise RuntimeError("maintenance machinery broke")

    agent.run_maintenance = rejected
    with capture_logs() as logs:
        await advance(h, agent, 5)
        await wait_until(lambda: h.owner(agent).faulted)
    assert log_events(logs, "owner.faulted")[0]["reason"] == "run_failed"
    agent.run_maintenance = real_claim
    # A faulted owner ignores triggers for the rest of the Agent's life.
    await h.call(agent, "schedule_list", {})
    await h.settle(agent)
    assert h.dispatches(agent) == []


async def test_no_work_when_liveness_changes_during_the_preflight(h):
    agent = await h.agent()
    await create(h, agent, 5)
    h.flush.mode = "gate"
    h.clock.advance(5)
    owner = h.owner(agent)
    await wait_until(lambda: owner._run is not None and h.flush.count > 0)
    disposing = asyncio.create_task(agent.dispose())
    await spin()
    assert not disposing.done()  # dispose waits for the in-flight preflight
    h.flush.mode = "ok"
    h.flush.gate.set()
    await asyncio.wait_for(disposing, 5)
    assert h.dispatches(agent) == []
    assert h.followups(agent) == []


async def test_no_work_when_liveness_changes_during_the_claim(h):
    agent = await h.agent()
    await create(h, agent, 5)
    real_claim = agent.run_maintenance

    async def claim(task):
        h.host.sessions.detach(agent.session)
        return await real_claim(task)

    agent.run_maintenance = claim
    await advance(h, agent, 5)
    assert h.dispatches(agent) == []


async def test_a_claim_refused_after_the_session_went_cold_waits_for_nothing(h):
    # The contract: a claim that fails once the Agent's Session is no longer live releases
    # without work; it does not wait for the Agent's next idle.
    agent = await h.agent()
    await create(h, agent, 5)
    idle_waits = []

    async def counted_when_idle():
        idle_waits.append(True)

    async def busy(task):
        from dsh_hookspecs import AgentBusyError

        h.host.sessions.detach(agent.session)
        raise AgentBusyError("pretend a turn owns the agent")

    agent.when_idle = counted_when_idle
    agent.run_maintenance = busy
    owner = h.owner(agent)
    await advance(h, agent, 5)
    await wait_until(lambda: owner._run is None or owner._run.done())
    assert idle_waits == []
    assert owner._idling is None
    assert h.dispatches(agent) == []


async def test_no_rearm_after_dispose_during_the_barrier(h):
    agent = await h.agent()
    await create(h, agent, 5)
    await create(h, agent, 60)
    owner = h.owner(agent)
    h.flush.before = lambda n: None
    dispatched = asyncio.Event()
    remove = h.host.sessions.subscribe(
        lambda o: dispatched.set() if o.event.type == "schedule/change" else None, Appended
    )
    h.flush.mode = "gate"
    h.flush.once = ["ok"]  # the preflight passes, the barrier waits on the gate
    h.clock.advance(5)
    await asyncio.wait_for(dispatched.wait(), 5)
    disposing = asyncio.create_task(owner.dispose())
    await wait_until(lambda: owner.stopping)  # the dispose began while the barrier waits
    h.flush.mode = "ok"
    h.flush.gate.set()
    await asyncio.wait_for(disposing, 5)
    remove()
    assert owner._timer is None
    assert h.segments(agent) == []
    assert h.dispatches(agent) == ["schedule-1"]


async def test_dispose_clears_a_future_timer_and_leaves_records(h):
    agent = await h.agent()
    await create(h, agent, 500)
    assert h.segments(agent) == [60.0]
    await agent.dispose()
    assert [d for d in h.clock.pending_delays() if d > 1] == []  # the owner's timer is gone
    await advance(h, agent, 600)
    assert h.changes(agent)[-1]["operation"] == "create"  # no delete on teardown
    assert h.dispatches(agent) == []


async def test_a_segment_wake_with_a_corrupt_fold_hands_over_to_the_full_drive(h):
    agent = await h.agent()
    await create(h, agent, 500)
    fold = h.plugin.folds.of(agent.session)
    from dsh_schedule import ScheduleLogError

    fold._error = ScheduleLogError("damaged")
    with capture_logs() as logs:
        await advance(h, agent, 60)
    assert h.owner(agent).faulted
    assert log_events(logs, "owner.faulted")[0]["reason"] == "corrupt_log"


async def test_a_timer_that_fires_after_stop_does_nothing(h):
    agent = await h.agent()
    await create(h, agent, 500)
    owner = h.owner(agent)
    owner.stopping = True
    owner._on_timer()
    assert owner._run is None
    owner._wait_for_idle()  # nor does a busy Agent seen while stopping: no idle wait starts
    assert owner._idle_wait is None
    owner.stopping = False


async def test_a_checkpoint_that_fails_once_stopping_began_arms_no_retry(h):
    agent = await h.agent()
    await create(h, agent, 5)
    owner = h.owner(agent)
    h.flush.mode = "raise"
    h.flush.before = lambda n: setattr(owner, "stopping", True)  # stopping while it flushes
    with capture_logs() as logs:
        h.clock.advance(5)
        await wait_until(lambda: log_events(logs, "owner.flush_failed"))
        await wait_until(lambda: owner._run is None)
    assert log_events(logs, "owner.storage_stalled") == []
    assert owner._timer is None
    assert h.plugin.stalled == {}
    h.flush.before = None
    h.flush.mode = "ok"
    owner.stopping = False


async def test_a_disposed_agent_at_claim_time_ends_the_drive_quietly(h):
    agent = await h.agent()
    await create(h, agent, 5)

    async def disposed(task):
        from dsh_hookspecs import AgentDisposedError

        raise AgentDisposedError("gone")

    agent.run_maintenance = disposed
    await advance(h, agent, 5)
    assert not h.owner(agent).faulted
    assert h.dispatches(agent) == []


async def test_a_cancelled_run_is_not_a_fault(h):
    agent = await h.agent()
    await create(h, agent, 5)
    owner = h.owner(agent)
    h.flush.mode = "gate"
    h.clock.advance(5)
    await wait_until(lambda: owner._run is not None and h.flush.count > 0)
    run = owner._run
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    await wait_until(lambda: owner._run is None)
    assert not owner.faulted
    h.flush.mode = "ok"
    h.flush.gate.set()


async def test_owner_respects_a_configured_segment():
    h = await make_harness(config={"max_segment_seconds": 5})
    try:
        agent = await h.agent()
        await create(h, agent, 20)
        assert h.segments(agent) == [5.0]
    finally:
        await h.host.close()


class RejectFollowup:
    @hookimpl
    def dsh_event_validate(self, session, event):
        if event.type == "agent/followup":
            raise RuntimeError("no follow-ups today")


async def test_a_refused_followup_keeps_the_record_and_the_owner(h):
    agent = await h.agent()
    await create(h, agent, 5)
    h.host.load_plugin("reject", factory=RejectFollowup)
    with capture_logs() as logs:
        await advance(h, agent, 5)
    assert log_events(logs, "owner.enqueue_failed")[0]["schedule_id"] == "schedule-1"
    assert not h.owner(agent).faulted
    assert h.dispatches(agent) == []
    await h.host.unload_plugin("reject")
    await h.call(agent, "schedule_list", {})  # the next trigger delivers it
    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])


async def test_a_dispatch_refused_after_the_schedule_check_leaves_a_sound_fold(h):
    # Reload so the refusing plugin validates AFTER the Schedule plugin (pluggy calls the last
    # registered first): the fold has then already seen the tentative follow-up.
    await h.host.unload_plugin("schedule")
    h.host.load_plugin("reject", factory=RejectDispatch)
    h.host.load_plugin("schedule")
    fresh = await h.agent()
    await create(h, fresh, 5)
    await advance(h, fresh, 5)
    assert h.owner(fresh).faulted
    assert h.followups(fresh) == []
    listed = await h.call(fresh, "schedule_list", {})  # the fold was rebuilt, not corrupted
    assert [v["id"] for v in listed] == ["schedule-1"]
    await h.host.unload_plugin("reject")
    created = await h.call(fresh, "schedule_create", {"prompt": "again", "after_seconds": 60})
    assert created["id"] == "schedule-2"


async def test_a_preflight_failing_after_its_session_was_detached_arms_nothing(h):
    agent = await h.agent()
    await create(h, agent, 5)
    owner = h.owner(agent)
    owner.session_flushed()  # a healthy owner ignores flush observations
    assert h.segments(agent) == [5.0]
    h.flush.once = ["gate"]
    h.clock.advance(5)
    await wait_until(lambda: h.flush.gate is not None and owner._run is not None)
    await spin(10)
    h.host.sessions.detach(agent.session)  # the Session goes cold while the preflight waits
    h.flush.gate.set()  # the write now fails: the Session is no longer tracked
    await wait_until(lambda: owner._run is None)
    assert h.segments(agent) == []
    assert h.plugin.stalled == {}
