"""Cold delivery, the host side (issue 11 item 2): due wake entries resume their cold Sessions.

A tiny plugin stands in for the Schedule plugin: its targets are ``waker/at`` events in the log;
on every open it "delivers" the due ones (a ``waker/done`` event) unless told to be stubborn, and
files its next target with the wake index. Time is a ManualClock; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from dsh_hookspecs import Session, hookimpl
from dsh_host import LiveHost
from dsh_host.persistence import (
    Backend,
    DueWake,
    MemoryBackend,
    PostgresBackend,
    SQLiteBackend,
    StorageError,
)
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from dsh_schedule import parse_instant
from tests.api import call_tool, dispatches, new_session, wait_for
from tests.api import history as events
from tests.browser.conftest import start_server
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster

PLUGIN = "waker"


class Waker:
    """Files the earliest undelivered ``waker/at`` target; records every resume."""

    def __init__(self, *, stubborn: bool = False) -> None:
        self.host: Any = None
        self.stubborn = stubborn
        self.resumes: list[str] = []

    @hookimpl
    def dsh_plugin_start(self, host: Any, config: object) -> None:
        del config
        self.host = host

    @hookimpl
    def dsh_session_opened(self, session: Session, reason: str) -> None:
        if reason == "resumed":
            self.resumes.append(session.id)
        events = session.events
        done = {e.data["at"] for e in events if e.type == "waker/done"}  # type: ignore[index, call-overload]
        pending = sorted(
            e.data["at"]  # type: ignore[index, call-overload]
            for e in events
            if e.type == "waker/at" and e.data["at"] not in done  # type: ignore[index, call-overload]
        )
        now = self.host.clock.now_ms()
        if not self.stubborn:
            for at in [at for at in pending if at <= now]:
                session.append("waker/done", {"at": at})
                pending.remove(at)
        self.host.sessions.request_wake(session, PLUGIN, pending[0] if pending else None)


def load_waker(host: LiveHost, *, stubborn: bool = False) -> Waker:
    waker = Waker(stubborn=stubborn)
    host.load_plugin(PLUGIN, factory=lambda: waker)
    return waker


async def cold_session_due_at(host: LiveHost, at_ms: int) -> str:
    """A Session with one target at ``at_ms``, filed and then made cold."""
    session = (await host.create_session()).session
    session.append("waker/at", {"at": at_ms})
    host.sessions.request_wake(session, PLUGIN, at_ms)
    await host.close_session(session.id)
    return session.id


async def advance_until(clock: ManualClock, done: Callable[[], bool], step: float = 0.05) -> None:
    """Advance the host clock ``step`` s at a time, letting the loop run in between, until
    ``done()`` (bounded: 10 s of real time)."""
    deadline = time.monotonic() + 10
    while not done():
        assert time.monotonic() < deadline, "condition not met within 10 s"
        clock.advance(step)
        for _ in range(20):
            await asyncio.sleep(0)


async def settled(host: LiveHost, clock: ManualClock, delay: float) -> None:
    """Wait until the wake service is idle with its timer armed ``delay`` s of loop time out."""

    def armed() -> bool:
        return not host.wakeups.busy and any(abs(d - delay) < 1e-6 for d in clock.pending_delays())

    await wait_until(armed)


async def done_events(host: LiveHost, session_id: str) -> list[object]:
    live = host.sessions.get(session_id)
    if live is not None:
        assert await host.sessions.flush(live) is True
    stored = await host.inspect(session_id)
    assert stored is not None
    return [e.data["at"] for e in stored.events if e.type == "waker/done"]  # type: ignore[index, call-overload]


async def test_a_due_cold_session_is_resumed_once_at_start_up_on_sqlite(
    tmp_path: Path, clock: ManualClock
) -> None:
    at = clock.now_ms() + 30_000
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        load_waker(host)
        session_id = await cold_session_due_at(host, at)
    clock.advance(120)  # the host was down when the target passed
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        waker = load_waker(host)
        await wait_until(lambda: waker.resumes == [session_id])
        assert host.sessions.get(session_id) is not None
        assert await done_events(host, session_id) == [at]
        stored = await host.inspect(session_id)
        assert stored is not None
        assert stored.wakes == {}  # the plugin cleared its entry: the index moved on
        clock.advance(300)
        assert waker.resumes == [session_id]


async def test_a_future_entry_is_resumed_when_the_clock_reaches_it_not_before(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        waker = load_waker(host)
        at = clock.now_ms() + 90_000
        session_id = await cold_session_due_at(host, at)
        assert host.wakeups.armed_for == at
        await settled(host, clock, 60.0)  # one bounded segment, not the whole 90 s
        clock.advance(60)
        await settled(host, clock, 30.0)  # the wall clock was re-read: 30 s remain
        clock.advance(29.999)
        await settled(host, clock, 0.001)
        assert waker.resumes == []
        clock.advance(0.001)
        await wait_until(lambda: waker.resumes == [session_id])
        assert await done_events(host, session_id) == [at]


async def test_a_wall_clock_set_forward_is_honoured_within_one_segment(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        waker = load_waker(host)
        at = clock.now_ms() + 3_600_000
        session_id = await cold_session_due_at(host, at)
        clock.set_wall(at + 5)
        clock.advance(60)
        await wait_until(lambda: waker.resumes == [session_id])


async def test_a_live_session_is_never_resumed_by_the_service(clock: ManualClock) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        waker = load_waker(host, stubborn=True)
        session = (await host.create_session()).session
        host.sessions.request_wake(session, PLUGIN, clock.now_ms())  # due now, but live
        assert await host.sessions.flush(session) is True
        host.wakeups.kick()
        await settled(host, clock, 60.0)
        clock.advance(60)
        await settled(host, clock, 60.0)
        assert waker.resumes == []


async def test_an_entry_still_due_after_a_resume_does_not_resume_again_while_live(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        waker = load_waker(host, stubborn=True)  # resumes but never clears its due entry
        session_id = await cold_session_due_at(host, clock.now_ms() + 10_000)
        clock.advance(10)
        await wait_until(lambda: waker.resumes == [session_id])
        for _ in range(3):
            await settled(host, clock, 60.0)  # no spin: one pass a segment at most
            clock.advance(60)
        await settled(host, clock, 60.0)
        assert waker.resumes == [session_id]
        with capture_logs() as logs:
            await host.close_session(session_id)  # cold again, the entry still due
            await settled(host, clock, 1.0)  # retried after a back-off, not at once
            assert waker.resumes == [session_id]
            clock.advance(1)
            await wait_until(lambda: waker.resumes == [session_id] * 2)
            await host.close_session(session_id)
            await settled(host, clock, 2.0)  # the back-off doubles
            clock.advance(2)
            await wait_until(lambda: waker.resumes == [session_id] * 3)
        still_due = [entry for entry in logs if entry["event"] == "host.wake_still_due"]
        assert len(still_due) == 1  # logged once


async def test_due_entries_beyond_one_page_and_behind_live_ones_are_all_delivered(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        host.wakeups.batch = 2
        waker = load_waker(host)
        now = clock.now_ms()
        for index in range(3):  # the earliest entries belong to live Sessions: skipped
            live = (await host.create_session()).session
            host.sessions.request_wake(live, PLUGIN, now - 10_000 + index)
            assert await host.sessions.flush(live) is True
        cold = [await cold_session_due_at(host, now + 1_000 * (index + 1)) for index in range(3)]
        clock.advance(5)
        await wait_until(lambda: sorted(waker.resumes) == sorted(cold))
        await settled(host, clock, 60.0)
        assert sorted(waker.resumes) == sorted(cold)


async def test_a_request_for_an_earlier_wake_rearms_the_timer(clock: ManualClock) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        waker = load_waker(host)
        await cold_session_due_at(host, clock.now_ms() + 3_600_000)
        session = (await host.create_session()).session
        at = clock.now_ms() + 5_000
        session.append("waker/at", {"at": at})
        host.sessions.request_wake(session, PLUGIN, at)
        assert host.wakeups.armed_for == at
        await host.close_session(session.id)
        clock.advance(5)
        await wait_until(lambda: waker.resumes == [session.id])


class FailingDueWakes(FaultInjectingBackend):
    """Fails the next ``fail_due`` index queries."""

    fail_due = 0

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        if self.fail_due:
            self.fail_due -= 1
            raise StorageError("injected index failure")
        return await super().due_wakes(now_ms, limit)


class Disagreeing(MemoryBackend):
    """An index whose earliest entry is due but never listed as due."""

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        del now_ms, limit
        return []

    async def earliest_wake(self) -> int | None:
        return 0


async def test_an_index_whose_queries_disagree_does_not_make_the_host_spin(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=Disagreeing(), clock=clock) as host:
        await settled(host, clock, 60.0)  # one look a segment, not a busy loop
        clock.advance(60)
        await settled(host, clock, 60.0)


async def test_a_storage_failure_in_the_timer_path_is_logged_once_and_retried(
    clock: ManualClock,
) -> None:
    backend = FailingDueWakes(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock) as host:
        waker = load_waker(host)
        session_id = await cold_session_due_at(host, clock.now_ms() + 10_000)
        backend.fail_due = 2
        with capture_logs() as logs:
            clock.advance(10)
            await settled(host, clock, 1.0)
            clock.advance(1)
            await settled(host, clock, 2.0)  # failed again: the back-off doubled
            assert waker.resumes == []
            clock.advance(2)
            await wait_until(lambda: waker.resumes == [session_id])
        events = [entry["event"] for entry in logs]
        assert events.count("host.wakes_unreadable") == 1
        assert events.count("host.wakes_readable_again") == 1


async def test_a_failed_resume_is_retried_after_a_back_off(clock: ManualClock) -> None:
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock) as host:
        waker = load_waker(host)
        session_id = await cold_session_due_at(host, clock.now_ms() + 10_000)
        backend.plan.fail_loads = 1
        clock.advance(10)
        await settled(host, clock, 1.0)
        assert waker.resumes == []
        clock.advance(1)
        await wait_until(lambda: waker.resumes == [session_id])


async def test_a_retry_never_waits_longer_than_one_segment(clock: ManualClock) -> None:
    # A shared database's short leases make segments under 1 s: the back-off's first delay is
    # cut to one segment too, so a failed resume is tried again at the next segment.
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock) as host:
        host.wakeups.max_segment = 0.25
        waker = load_waker(host)
        session_id = await cold_session_due_at(host, clock.now_ms() + 10_000)
        backend.plan.fail_loads = 1
        clock.advance(10)
        await settled(host, clock, 0.25)
        assert waker.resumes == []
        clock.advance(0.25)
        await wait_until(lambda: waker.resumes == [session_id])


async def test_reindex_delivers_nothing_and_delivery_resumes_after(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        load_waker(host)
        session_id = await cold_session_due_at(host, clock.now_ms() + 10_000)
    clock.advance(60)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        waker = load_waker(host, stubborn=True)
        assert await host.reindex() == (1, 1, [])
        assert waker.resumes == [session_id]  # reindex's own open, refiling only
        assert host.sessions.get(session_id) is None  # nothing was delivered meanwhile
        await wait_until(lambda: waker.resumes == [session_id] * 2)  # then delivery goes on
        assert host.sessions.get(session_id) is not None


async def test_closing_the_host_stops_the_timer(clock: ManualClock) -> None:
    host = LiveHost(backend=MemoryBackend(), clock=clock)
    await host.start()
    load_waker(host)
    await cold_session_due_at(host, clock.now_ms() + 90_000)
    await settled(host, clock, 60.0)
    await host.close()
    assert host.wakeups.armed_for is None
    assert not host.wakeups.busy
    assert 60.0 not in clock.pending_delays()


async def test_no_filed_wake_arms_nothing(clock: ManualClock) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        load_waker(host)
        session = (await host.create_session()).session
        await host.close_session(session.id)
        await wait_until(lambda: not host.wakeups.busy)
        assert host.wakeups.armed_for is None


def dispatched(events: Sequence[Any], schedule_id: str) -> int:
    return sum(
        1
        for e in events
        if e.type == "schedule/change"
        and e.data["operation"] == "dispatch"
        and e.data["id"] == schedule_id
    )


async def scheduled(host: LiveHost, after_seconds: int, prompt: str = "p") -> tuple[str, str]:
    """The Schedule plugin loaded with ``cold_delivery`` on, one new Session holding one
    reminder ``after_seconds`` away, its Agent idle again: ``(session id, schedule id)``."""
    host.load_plugin("schedule", {"cold_delivery": True})
    agent = await host.create_session()
    created = await agent.execute_tool(
        "schedule_create", {"prompt": prompt, "after_seconds": after_seconds}
    )
    assert isinstance(created, dict)
    await wait_until(lambda: agent.phase == "idle")
    return agent.session.id, str(created["id"])


async def test_a_cold_schedule_reminder_is_dispatched_exactly_once_on_sqlite(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        session_id, schedule_id = await scheduled(host, 120, "call mom")
        await host.close_session(session_id)  # nobody looks at it any more
        stored = await host.inspect(session_id)
        assert stored is not None
        assert set(stored.wakes) == {"schedule"}
        clock.advance(119)
        await wait_until(lambda: not host.wakeups.busy)
        assert host.sessions.get(session_id) is None  # not before it is due
        clock.advance(1)

        def in_log() -> int:
            live = host.sessions.get(session_id)
            return 0 if live is None else dispatched(live.events, schedule_id)

        await wait_until(lambda: in_log() == 1)
        for _ in range(3):
            clock.advance(60)
            await wait_until(lambda: not host.wakeups.busy)
        # Delivered and quiet: it goes cold again at a tick of the host clock (the Settler's),
        # and no later pass delivered it twice.
        await advance_until(clock, lambda: host.sessions.get(session_id) is None)
        stored = await host.inspect(session_id)
        assert stored is not None
        assert dispatched(stored.events, schedule_id) == 1
        assert not stored.wakes
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        stored = await host.inspect(session_id)
        assert stored is not None
        assert dispatched(stored.events, schedule_id) == 1


def test_a_reminder_due_while_dsh_serve_was_down_fires_once_after_a_sigkill_restart(
    tmp_path: Path,
) -> None:
    """The example overlay turns cold delivery on: nobody resumes the Session by hand."""
    data = tmp_path / "data"
    boot1 = start_server(data)
    try:
        session_id = new_session(boot1)
        made = call_tool(boot1, session_id, "schedule_create", {"prompt": "p", "after_seconds": 1})
        assert made["state"] == "scheduled"
    finally:
        boot1.process.kill()  # SIGKILL: the create was already acknowledged
        boot1.close()
    due_ms = parse_instant(made["scheduledAt"])
    wait_for(lambda: time.time() * 1000 > due_ms)  # it falls due while no server runs
    boot2 = start_server(data)
    try:
        wait_for(lambda: dispatches(events(boot2, session_id)))
        assert boot2.http.post(f"/api/sessions/{session_id}/flush").json()["durable"] is True
        assert len(dispatches(events(boot2, session_id))) == 1
    finally:
        boot2.process.kill()
        boot2.close()
    boot3 = start_server(data)
    try:
        assert len(dispatches(events(boot3, session_id))) == 1  # never delivered twice
    finally:
        boot3.close()


async def test_a_reminder_due_while_the_host_was_down_fires_once_on_postgresql(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    clock: ManualClock,
) -> None:
    url = pg_cluster.new_database()

    def backend() -> Backend:
        return PostgresBackend(url)

    async with LiveHost(backend=backend(), clock=clock) as host:
        session_id, schedule_id = await scheduled(host, 60)
    clock.advance(600)  # due while no host runs
    async with LiveHost(backend=backend(), clock=clock) as host:
        host.load_plugin("schedule", {"cold_delivery": True})

        def in_log() -> int:
            live = host.sessions.get(session_id)
            return 0 if live is None else dispatched(live.events, schedule_id)

        await wait_until(lambda: in_log() == 1)
    async with LiveHost(backend=backend(), clock=clock) as host:
        stored = await host.inspect(session_id)
        assert stored is not None
        assert dispatched(stored.events, schedule_id) == 1
