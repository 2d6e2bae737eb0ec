"""Faults (issue "Reliability harness", part 2), on a real in-process host over real SQLite.

Every fault of :data:`~tests.reliability.support.FAULTS` (storage write failures, a commit whose
acknowledgement is lost, ENOSPC from the SQLite writer thread, rejected and unacknowledged
flushes) is injected into each checkpoint of the three tools and of the due path; then slow
storage, a SQLite file that runs out of space (SQLITE_FULL, "database or disk is full") and a
full disk failing a whole group commit. Each time:

* a tool answers ``persistence_uncertain`` (with the documented ``operation`` and ``id``);
* nothing is lost: after the next successful checkpoint storage holds exactly the live log, it
  decodes and folds, and every reminder still owed is delivered exactly once (one follow-up next
  to its dispatch, one turn) - and a restart on the same folder delivers nothing again.

The coordinator's write-behind window is stretched so that only flushes write: each injected
fault hits exactly the checkpoint it names (the tests assert it was consumed).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dsh_hookspecs import AgentBusyError, hookimpl
from dsh_host.persistence import events_identical
from dsh_host.testing import wait_until
from tests.schedule.harness import spin, uncertain

from .support import CLEAN, FAULTS, Rig, close_rig, make_rig

pytestmark = pytest.mark.chaos


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    running = await make_rig(tmp_path)
    running.host.persistence.batch_delay = 1e9  # no background writes: only flushes write
    try:
        yield running
    finally:
        await close_rig(running)


def _tally(tally: Counter[str], rig: Rig, *found: dict[str, int]) -> None:
    """Add one case's figures; ``found`` are the audit counts of each Session it audited.
    Called before the counts are asserted, so that a failing case still reports them."""
    tally["cases"] += 1
    tally["faults injected"] += sum(rig.injected.values())
    for kind, count in rig.injected.items():
        tally[f"faults injected: {kind}"] += count
    tally["failed flushes"] += rig.failed_flushes
    tally["persistence_uncertain answers"] += rig.uncertain_answers
    for counts in found:
        for key, value in counts.items():
            tally[f"reminders {key}"] += value


# -- the tools' checkpoints -----------------------------------------------------------------------

TOOL_STEPS = (
    "create-preflight",
    "create-barrier",
    "list-preflight",
    "delete-preflight",
    "delete-barrier",
)


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("step", TOOL_STEPS)
async def test_a_failed_tool_checkpoint_answers_uncertain_and_the_next_one_recovers(
    rig: Rig, tally: Counter[str], step: str, fault: str
) -> None:
    agent = await rig.h.agent()
    kept = await rig.create(agent, "kept", 30)
    doomed = await rig.create(agent, "doomed", 40) if step.startswith("delete") else None
    operation, checkpoint = step.split("-")
    rig.at_flush(1 if checkpoint == "preflight" else 2, fault)
    if operation == "create":
        value = await rig.call(agent, "schedule_create", {"prompt": "new", "after_seconds": 20})
        expected = uncertain("create", "schedule-2" if checkpoint == "barrier" else None)
    elif operation == "list":
        value = await rig.call(agent, "schedule_list", {})
        expected = uncertain("list")
    else:
        value = await rig.call(agent, "schedule_delete", {"id": doomed})
        expected = uncertain("delete", doomed)
    assert value == expected
    assert not rig.pending_faults()

    # The next successful checkpoint (here: a list) confirms whatever the live log holds.
    listed = await rig.call(agent, "schedule_list", {})
    active = {
        "create-preflight": [kept],  # the create never happened
        "create-barrier": [kept, "schedule-2"],  # it happened; now it is durable
        "list-preflight": [kept],
        "delete-preflight": [kept, doomed],  # the delete never happened
        "delete-barrier": [kept],  # it happened; now it is durable
    }[step]
    assert [view["id"] for view in listed] == active
    stored = await rig.host.inspect(agent.session.id)
    assert stored is not None
    live = agent.session.events
    assert all(events_identical(a, b) for a, b in zip(stored.events, live, strict=False))
    assert [e for e in stored.events if e.type == "schedule/change"] == [
        e for e in live if e.type == "schedule/change"
    ]  # every decision in the live log is durable now

    # Everything still active is delivered once, in target order.
    await rig.h.settle(agent)
    rig.clock.advance(60)
    targets = {view["id"]: view["scheduledAt"] for view in listed}
    due = sorted(active, key=targets.__getitem__)
    await wait_until(lambda: rig.h.dispatches(agent) == due)
    found = await rig.audit(agent, due)
    _tally(tally, rig, found)
    assert found == CLEAN, found
    await rig.reboot_delivers_nothing_new(agent)


# -- the due path ---------------------------------------------------------------------------------

DUE_STEPS = (
    *(f"preflight:{fault}" for fault in FAULTS),
    "claim:busy",
    "followup:rejected",
    *(f"barrier:{fault}" for fault in FAULTS),
)


class RejectFollowupOnce:
    """A plugin refusing the next reminder ``agent/followup`` append (the follow-up step)."""

    def __init__(self) -> None:
        self.armed = True

    @hookimpl
    def dsh_event_validate(self, session: object, event: object) -> None:
        if self.armed and getattr(event, "type", None) == "agent/followup":
            self.armed = False
            raise RuntimeError("injected: the follow-up append fails")


@pytest.mark.parametrize("step", DUE_STEPS)
async def test_a_failure_at_each_due_path_step_loses_and_duplicates_nothing(
    rig: Rig, tally: Counter[str], step: str
) -> None:
    agent = await rig.h.agent()
    first = await rig.create(agent, "first", 5)
    second = await rig.create(agent, "second", 50)
    await rig.h.settle(agent)
    # Something not yet durable, so that the owner's preflight has to write.
    agent.session.append("test/activity", {"note": "not yet flushed"})
    where, fault = step.split(":")
    if where == "preflight":
        rig.at_flush(1, fault)
    elif where == "barrier":
        rig.at_flush(2, fault)
    elif where == "claim":
        claim = agent.run_maintenance

        async def busy_once(task: object) -> object:
            agent.run_maintenance = claim  # type: ignore[method-assign]
            rig.injected["claim busy"] += 1
            raise AgentBusyError("injected: a turn owns the Agent")

        agent.run_maintenance = busy_once  # type: ignore[method-assign]
    else:
        rejecter = RejectFollowupOnce()
        rig.host.load_plugin("reject-followup", factory=lambda: rejecter)
        rig.injected["follow-up append rejected"] += 1

    rig.clock.advance(5)
    await rig.h.settle(agent)
    assert not rig.pending_faults()
    if where in ("preflight", "followup"):
        # Nothing was decided: no follow-up, no dispatch; the record is still active...
        assert rig.h.followups(agent) == []
        assert rig.h.dispatches(agent) == []
        # ... and the next trigger (a management preflight) delivers it, once.
        listed = await rig.call(agent, "schedule_list", {})
        assert [(view["id"], view["state"]) for view in listed] == [
            (first, "overdue"),
            (second, "scheduled"),
        ]
    await wait_until(lambda: rig.h.dispatches(agent) == [first])
    await rig.h.settle(agent)
    if where == "barrier":
        # The barrier failed, yet the dispatch was not retried: the reminder turn's own
        # checkpoint (the next successful one) made follow-up and dispatch durable together.
        stored = await rig.host.inspect(agent.session.id)
        assert stored is not None
        changes = [e.data for e in stored.events if e.type == "schedule/change"]
        assert changes[-1] == {"version": 1, "operation": "dispatch", "id": first}
    rig.clock.advance(50)
    await wait_until(lambda: rig.h.dispatches(agent) == [first, second])
    found = await rig.audit(agent, [first, second])
    _tally(tally, rig, found)
    assert found == CLEAN, found
    await rig.reboot_delivers_nothing_new(agent)


# -- slow storage ---------------------------------------------------------------------------------


async def test_slow_storage_delays_answers_and_dispatches_but_never_early_or_twice(
    rig: Rig, tally: Counter[str]
) -> None:
    one, two = await rig.h.agent(), await rig.h.agent()
    soon = await rig.create(one, "soon", 5)
    one.session.append("test/activity", {"note": "not yet flushed"})  # the preflight must write
    gate = asyncio.Event()
    rig.backend.plan.gate = gate  # every write now waits: a very slow disk
    rig.injected["slow storage"] += 1
    calls = len(rig.backend.plan.append_calls)
    creating = asyncio.create_task(
        rig.call(two, "schedule_create", {"prompt": "while slow", "after_seconds": 30})
    )
    rig.clock.advance(5)  # the reminder falls due while storage hangs
    # Both the create's preflight and the owner's preflight are stuck in storage.
    await wait_until(lambda: len(rig.backend.plan.append_calls) >= calls + 2)
    stuck = len(rig.backend.plan.append_calls)
    rig.clock.advance(120)  # minutes pass; nothing may be decided without a confirmed preflight
    await spin(50)  # whatever the timers fired has had its turns to run
    assert len(rig.backend.plan.append_calls) == stuck  # no write was started meanwhile
    assert not creating.done()
    assert rig.h.followups(one) == []
    assert rig.h.dispatches(one) == []
    assert rig.h.changes(two) == []
    gate.set()
    value = await creating
    assert isinstance(value, dict)
    assert value["id"] == "schedule-1"
    await wait_until(lambda: rig.h.dispatches(one) == [soon])
    await rig.h.settle(one)
    await rig.h.settle(two)
    assert rig.h.dispatches(two) == []  # its target is still 30 s after the confirmed create
    rig.clock.advance(30)
    await wait_until(lambda: rig.h.dispatches(two) == ["schedule-1"])
    found = await rig.audit(one, [soon])
    found2 = await rig.audit(two, ["schedule-1"])
    _tally(tally, rig, found, found2)
    assert found == CLEAN, found
    assert found2 == CLEAN, found2


# -- full disks -----------------------------------------------------------------------------------


async def _page_limit(rig: Rig, pages: int | None) -> None:
    """``PRAGMA max_page_count`` on the backend's own connection (its writer thread)."""
    sqlite = rig.sqlite

    def apply() -> None:
        conn = sqlite._connection()
        limit = pages
        if limit is None:
            limit = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {int(limit)}").fetchone()

    await sqlite._call(apply)


async def test_a_sqlite_file_out_of_space_answers_uncertain_and_recovers_when_space_returns(
    rig: Rig, tally: Counter[str]
) -> None:
    agent = await rig.h.agent()
    due = await rig.create(agent, "due while full", 5)
    kept = await rig.create(agent, "kept", 3600)
    await _page_limit(rig, None)  # the file may not grow any more: SQLITE_FULL on growth
    rig.injected["sqlite full"] += 1
    agent.session.append("test/activity", {"blob": "x" * 300_000})  # needs pages it cannot get
    assert await rig.call(agent, "schedule_create", {"prompt": "p", "after_seconds": 9}) == (
        uncertain("create")
    )
    assert await rig.call(agent, "schedule_list", {}) == uncertain("list")
    assert await rig.call(agent, "schedule_delete", {"id": kept}) == uncertain("delete", kept)
    failed = rig.failed_flushes
    rig.clock.advance(10)
    await rig.h.settle(agent)
    assert rig.failed_flushes > failed  # the owner's preflight failed too
    assert rig.h.followups(agent) == []
    assert rig.h.dispatches(agent) == []
    stored = await rig.host.inspect(agent.session.id)
    assert stored is not None
    assert [e.data["schedule"]["id"] for e in stored.events if e.type == "schedule/change"] == [
        due,
        kept,
    ]

    await _page_limit(rig, 1_000_000)  # space returns
    listed = await rig.call(agent, "schedule_list", {})
    assert [(view["id"], view["state"]) for view in listed] == [
        (due, "overdue"),
        (kept, "scheduled"),
    ]
    await wait_until(lambda: rig.h.dispatches(agent) == [due])
    found = await rig.audit(agent, [due])
    assert found == CLEAN, found  # kept is not due yet: still active, not lost
    rig.clock.advance(3600)
    await wait_until(lambda: rig.h.dispatches(agent) == [due, kept])
    found = await rig.audit(agent, [due, kept])
    _tally(tally, rig, found)
    assert found == CLEAN, found


async def test_enospc_fails_a_whole_group_commit_and_every_session_recovers(
    rig: Rig, tally: Counter[str]
) -> None:
    agents = [await rig.h.agent() for _ in range(4)]
    for agent in agents:
        await rig.create(agent, "before", 5)
    commits = rig.sqlite.commits
    rig.enospc_left = 10_000  # the disk stays full until we say so
    answers = await asyncio.gather(
        *(
            rig.call(agent, "schedule_create", {"prompt": "during", "after_seconds": 5})
            for agent in agents
        )
    )
    assert answers == [uncertain("create")] * 4
    rig.clock.advance(10)
    for agent in agents:
        await rig.h.settle(agent)
        assert rig.h.dispatches(agent) == []  # no preflight could be confirmed
    assert rig.sqlite.commits == commits  # not one write committed while the disk was full
    rig.injected["enospc"] += 10_000 - rig.enospc_left
    rig.enospc_left = 0  # space freed
    for agent in agents:
        listed = await rig.call(agent, "schedule_list", {})
        assert [(view["id"], view["state"]) for view in listed] == [("schedule-1", "overdue")]
        await wait_until(lambda agent=agent: rig.h.dispatches(agent) == ["schedule-1"])
    found = [await rig.audit(agent, ["schedule-1"]) for agent in agents]
    _tally(tally, rig, *found)
    assert found == [CLEAN] * len(agents), found


class RejectDispatchOnce:
    """A plugin refusing the next ``schedule/change`` dispatch (the dispatch append step)."""

    def __init__(self) -> None:
        self.armed = True

    @hookimpl
    def dsh_event_validate(self, session: object, event: object) -> None:
        data = getattr(event, "data", None)
        if self.armed and isinstance(data, dict) and data.get("operation") == "dispatch":
            self.armed = False
            raise RuntimeError("injected: the dispatch append fails")


async def test_a_refused_dispatch_append_leaves_neither_event_and_a_resume_delivers_once(
    rig: Rig, tally: Counter[str]
) -> None:
    agent = await rig.h.agent()
    first = await rig.create(agent, "first", 5)
    rejecter = RejectDispatchOnce()
    rig.host.load_plugin("reject-dispatch", factory=lambda: rejecter)
    rig.injected["dispatch append rejected"] += 1
    rig.clock.advance(5)
    await rig.h.settle(agent)
    assert rig.h.owner(agent).faulted  # the owner stops, as designed ...
    assert rig.h.followups(agent) == []  # ... and the follow-up went back with its dispatch
    assert rig.h.dispatches(agent) == []
    listed = await rig.call(agent, "schedule_list", {})
    assert [(view["id"], view["state"]) for view in listed] == [(first, "overdue")]
    stored = await rig.host.inspect(agent.session.id)
    assert stored is not None
    assert not [e for e in stored.events if e.type == "agent/followup"]
    # A later life of the Session (a new owner) delivers it exactly once.
    session_id = agent.session.id
    await rig.host.close_session(session_id)
    resumed = await rig.host.resume_session(session_id)
    await wait_until(lambda: rig.h.dispatches(resumed) == [first])
    found = await rig.audit(resumed, [first])
    _tally(tally, rig, found)
    assert found == CLEAN, found
    await rig.reboot_delivers_nothing_new(resumed)


# -- storage fails at the due time, then recovers with no user activity -----------------------

#: The owner's back-off after a failed preflight or barrier: 1 s, doubling (issue 9 item 2).
BACKOFF_FIRST = 1.0


async def _fail_at_the_due_time(rig: Rig, agent: Any, failures: int) -> str:
    """A reminder falls due while every SQLite write fails (ENOSPC from the writer thread);
    the owner's preflight and its ``failures - 1`` retries fail. Then storage recovers."""
    first = await rig.create(agent, "due while storage fails", 5)
    await rig.h.settle(agent)
    # Something not yet durable, so that the due-time preflight has to write.
    agent.session.append("test/activity", {"note": "not yet flushed"})
    rig.enospc_left = 10**6  # storage fails, for as long as it is not repaired
    rig.clock.advance(5)
    await rig.h.settle(agent)
    delay = BACKOFF_FIRST
    for _ in range(failures - 1):
        rig.clock.advance(delay)  # a retry, which fails too
        await rig.h.settle(agent)
        delay *= 2
    assert rig.h.followups(agent) == []
    assert rig.h.dispatches(agent) == []
    rig.injected["enospc (persistent)"] += 1
    rig.enospc_left = 0  # storage recovers; nobody does anything
    return first


async def test_storage_failing_at_the_due_time_then_recovering_delivers_within_the_backoff(
    rig: Rig, tally: Counter[str]
) -> None:
    agent = await rig.h.agent()
    first = await _fail_at_the_due_time(rig, agent, failures=3)
    # Three failures: the next retry comes 4 s after the last one; nothing else happens.
    rig.clock.advance(BACKOFF_FIRST * 4)
    await wait_until(lambda: rig.h.dispatches(agent) == [first], timeout=5.0)
    await rig.h.settle(agent)
    found = await rig.audit(agent, [first])
    _tally(tally, rig, found)
    tally["stalls recovered"] += 1
    assert found == CLEAN, found
    await rig.reboot_delivers_nothing_new(agent)


async def test_storage_recovering_is_noticed_by_the_next_successful_flush(
    rig: Rig, tally: Counter[str]
) -> None:
    agent = await rig.h.agent()
    first = await _fail_at_the_due_time(rig, agent, failures=2)
    # No clock advance: an explicit flush that answers durable re-drives the owner promptly.
    assert await rig.host.sessions.flush(agent.session) is True
    await wait_until(lambda: rig.h.dispatches(agent) == [first], timeout=5.0)
    await rig.h.settle(agent)
    found = await rig.audit(agent, [first])
    _tally(tally, rig, found)
    tally["stalls recovered"] += 1
    assert found == CLEAN, found
