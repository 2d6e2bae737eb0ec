"""A herd: many cold Sessions due at one instant (cold delivery under a bound).

The wake service resumes due Sessions concurrently (``concurrency`` at once) and the host's
:class:`~dsh_host.core._settle.Settler` makes each woken Session cold again as soon as it is quiet,
holding at most ``max_live`` of them: a herd never grows the live set without bound. A person who
attached to a woken Session keeps it; a Session that stays busy or due is not evicted under it.
The stand-in plugin is the ``Waker`` of test_cold_delivery (it delivers due targets on open).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from structlog.testing import capture_logs

from dsh_host import Detached, LiveHost, Opened
from dsh_host.persistence import MemoryBackend, SQLiteBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from tests.host.test_cold_delivery import (
    advance_until,
    cold_session_due_at,
    done_events,
    load_waker,
)


class LiveCount:
    """How many Sessions are live, and the most at once (Opened/Detached observers)."""

    def __init__(self, host: LiveHost) -> None:
        self.now = self.peak = len(host.sessions.live())
        host.sessions.subscribe(self._observe, (Opened, Detached))

    def _observe(self, observation: Opened | Detached) -> None:
        self.now += 1 if isinstance(observation, Opened) else -1
        self.peak = max(self.peak, self.now)


async def stored_herd(folder: Path, clock: ManualClock, count: int) -> tuple[int, list[str]]:
    """``count`` cold Sessions on SQLite in ``folder``, each with one target 10 s from now (the
    host that made them is closed): that instant and their ids."""
    at = clock.now_ms() + 10_000
    async with LiveHost(backend=SQLiteBackend(folder), clock=clock) as host:
        load_waker(host)
        return at, [await cold_session_due_at(host, at) for _ in range(count)]


async def test_a_herd_is_delivered_once_each_with_the_live_set_bounded(
    tmp_path: Path, clock: ManualClock
) -> None:
    at, ids = await stored_herd(tmp_path, clock, 60)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.wakeups.concurrency = 4
        host.settler.max_live = 7
        waker = load_waker(host)
        live = LiveCount(host)
        await advance_until(clock, lambda: sorted(waker.resumes) == sorted(ids) and not live.now)
        assert live.peak <= 7
        assert live.peak >= 4  # resumed concurrently, not one at a time
        assert len(host.settler) == 0
        for session_id in ids:
            assert await done_events(host, session_id) == [at]


async def test_a_woken_session_someone_attached_to_stays_live(clock: ManualClock) -> None:
    async with LiveHost(backend=FaultInjectingBackend(MemoryBackend()), clock=clock) as host:
        waker = load_waker(host)
        session_id = await cold_session_due_at(host, clock.now_ms() + 1_000)
        clock.advance(1)
        await wait_until(lambda: waker.resumes == [session_id] and session_id in host.settler)
        release = host.attach(session_id)  # a person opened it
        await advance_until(clock, lambda: session_id not in host.settler)
        assert host.sessions.get(session_id) is not None
        release()


async def test_a_busy_woken_session_is_evicted_only_once_its_turn_is_over(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=FaultInjectingBackend(MemoryBackend()), clock=clock) as host:
        waker = load_waker(host)
        session_id = await cold_session_due_at(host, clock.now_ms() + 1_000)
        clock.advance(1)
        await wait_until(lambda: waker.resumes == [session_id])
        agent = host.agents.for_session(session_id)
        assert agent is not None
        entered, leave = asyncio.Event(), asyncio.Event()

        async def busy() -> None:
            entered.set()
            await leave.wait()

        work = asyncio.ensure_future(agent.run_maintenance(busy))
        await entered.wait()
        for _ in range(5):  # ticks pass while its Agent works: it stays live
            clock.advance(0.05)
            await asyncio.sleep(0)
        assert host.sessions.get(session_id) is not None
        leave.set()
        await work
        await advance_until(clock, lambda: host.sessions.get(session_id) is None)
        assert session_id not in host.settler


async def test_a_session_whose_entry_stays_due_is_left_to_idle_eviction(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=FaultInjectingBackend(MemoryBackend()), clock=clock) as host:
        waker = load_waker(host, stubborn=True)  # never clears its due entry
        session_id = await cold_session_due_at(host, clock.now_ms() + 1_000)
        clock.advance(1)
        await wait_until(lambda: waker.resumes == [session_id] and session_id in host.settler)
        clock.advance(host.settler.grace - 1)
        await advance_until(clock, lambda: session_id not in host.settler, step=1.0)
        assert host.sessions.get(session_id) is not None  # not evicted under its plugin
        assert waker.resumes == [session_id]


async def test_an_eviction_storage_refuses_is_logged_and_left_to_idle_eviction(
    clock: ManualClock,
) -> None:
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock) as host:
        waker = load_waker(host)
        at = clock.now_ms() + 1_000
        session_id = await cold_session_due_at(host, at)
        clock.advance(1)
        await wait_until(lambda: waker.resumes == [session_id] and session_id in host.settler)
        live = host.sessions.get(session_id)
        assert live is not None
        assert await host.sessions.flush(live) is True  # the delivery is durable
        backend.plan.fail_appends = 1_000
        live.append("waker/note", {})  # something to write at the eviction's flush
        with capture_logs() as logs:
            await advance_until(clock, lambda: session_id not in host.settler)
        assert host.sessions.get(session_id) is not None  # still live: nothing was lost
        failed = [entry for entry in logs if entry["event"] == "host.woken_evict_failed"]
        assert [entry["session_id"] for entry in failed] == [session_id]
        backend.plan.fail_appends = 0
        assert await host.sessions.flush(live) is True
        assert await done_events(host, session_id) == [at]


async def test_resumes_wait_for_room_and_go_on_as_woken_sessions_go_cold(
    tmp_path: Path, clock: ManualClock
) -> None:
    _, ids = await stored_herd(tmp_path, clock, 6)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.settler.max_live = 2
        waker = load_waker(host)
        clock.advance(10)
        await wait_until(lambda: len(waker.resumes) == 2 and len(host.settler) == 2)
        for _ in range(20):  # the loop runs, but no room: nothing more is resumed
            await asyncio.sleep(0)
        assert len(waker.resumes) == 2
        await advance_until(clock, lambda: sorted(waker.resumes) == sorted(ids))
        await advance_until(clock, lambda: not host.sessions.live())


async def test_a_session_delivered_since_the_index_was_read_is_not_opened(
    clock: ManualClock,
) -> None:
    # Two hosts read the same page of due entries; by the time one reaches a Session the other
    # may have delivered it. Its stored entries say so: it stays cold, and nothing runs twice.
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock) as host:
        waker = load_waker(host)
        at = clock.now_ms() + 1_000
        session_id = await cold_session_due_at(host, at)
        clock.advance(1)
        await wait_until(lambda: waker.resumes == [session_id])
        await host.close_session(session_id)  # delivered: its entry is gone
        stored = await host.inspect(session_id)
        assert stored is not None
        assert dict(stored.wakes) == {}
        stale = [(session_id, "waker", at)]

        async def stale_page(now_ms: int, limit: int) -> list[tuple[str, str, int]]:
            del now_ms, limit
            return stale

        host.wakeups.forget(session_id)
        with capture_logs() as logs:
            backend.due_wakes = stale_page  # type: ignore[method-assign]
            host.wakeups.kick()
            await wait_until(
                lambda: any(e["event"] == "host.wake_delivered_elsewhere" for e in logs)
            )
        assert waker.resumes == [session_id]  # not opened again
        assert host.sessions.get(session_id) is None
        assert await done_events(host, session_id) == [at]
