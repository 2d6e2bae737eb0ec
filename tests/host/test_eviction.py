"""Idle eviction (issue 11 item 3): live Sessions nobody uses are detached to cold.

Time is a ManualClock; every wait is bounded by a condition, nothing sleeps.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dsh_host import LiveHost
from dsh_host._overlay import Overlay, OverlayError
from dsh_host.cli._main import _parser, evict_idle
from dsh_host.persistence import MemoryBackend, SQLiteBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from tests.host.test_cold_delivery import dispatched, scheduled
from tests.web.support import serve, stream


async def tick(host: LiveHost, clock: ManualClock, seconds: float) -> None:
    """Advance the host clock and wait for the eviction check it fires to finish."""
    clock.advance(seconds)
    await wait_until(lambda: not host.evictor.busy)


async def test_an_idle_session_is_evicted_after_the_timeout_not_before(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(
        backend=SQLiteBackend(tmp_path), clock=clock, evict_idle_seconds=120
    ) as host:
        agent = await host.create_session()
        agent.send("hello")
        await wait_until(lambda: agent.phase == "idle" and not agent.inbox)
        sid = agent.session.id
        before = [(e.seq, e.type) for e in agent.session.events]
        await tick(host, clock, 60)
        await tick(host, clock, 59)
        assert host.sessions.get(sid) is not None  # idle 119 s: still live
        with capture_logs() as logs:
            await tick(host, clock, 1)
            await wait_until(lambda: host.sessions.get(sid) is None)
        evicted = [e for e in logs if e["event"] == "host.session_evicted"]
        assert [e["session_id"] for e in evicted] == [sid]
        assert evicted[0]["idle_seconds"] >= 120
        assert agent.disposed
        stored = await host.inspect(sid)
        assert stored is not None
        assert [(e.seq, e.type) for e in stored.events][: len(before)] == before
        # a later message resumes it through the ordinary path
        resumed = await host.resume_session(sid)
        assert host.sessions.get(sid) is resumed.session


async def test_a_running_turn_queued_input_or_a_stream_keeps_a_session_live(
    clock: ManualClock,
) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock, evict_idle_seconds=60) as host:
        busy = await host.create_session()
        busy.session.append("x/test", {})

        async def hold() -> None:
            await wait_until(lambda: done, timeout=30)

        done = False
        task = busy.run_maintenance(hold)  # a non-idle phase
        running = asyncio.ensure_future(task)
        await wait_until(lambda: busy.phase != "idle")
        busy.send("queued while busy")
        watched = await host.create_session()
        release = host.attach(watched.session.id)
        for _ in range(3):
            await tick(host, clock, 60)
        assert host.sessions.get(busy.session.id) is not None
        assert host.sessions.get(watched.session.id) is not None
        release()
        release()  # idempotent
        await tick(host, clock, 60)
        await wait_until(lambda: host.sessions.get(watched.session.id) is None)
        done = True
        await running
        await wait_until(lambda: busy.phase == "idle" and not busy.inbox)
        assert host.sessions.get(busy.session.id) is not None
        await tick(host, clock, 60)
        await wait_until(lambda: host.sessions.get(busy.session.id) is None)


async def test_zero_turns_eviction_off(clock: ManualClock) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        agent = await host.create_session()
        assert not host.evictor.enabled
        assert clock.pending_delays() == [] or all(d != 60 for d in clock.pending_delays())
        clock.advance(3600)
        assert host.sessions.get(agent.session.id) is not None


async def test_a_failed_final_flush_keeps_the_session_live_and_is_retried(
    clock: ManualClock,
) -> None:
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock, evict_idle_seconds=60) as host:
        agent = await host.create_session()
        sid = agent.session.id
        agent.session.append("x/test", {"n": 1})
        backend.plan.fail_appends = 1_000_000
        with capture_logs() as logs:
            await tick(host, clock, 60)
            await wait_until(lambda: any(e["event"] == "host.session_evict_failed" for e in logs))
        assert host.sessions.get(sid) is not None
        backend.plan.fail_appends = 0
        await tick(host, clock, 60)
        await wait_until(lambda: host.sessions.get(sid) is None)
        stored = await host.inspect(sid)
        assert stored is not None
        assert [e.type for e in stored.events][-1] == "x/test"


async def test_an_evicted_sessions_reminder_still_fires_once(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(
        backend=SQLiteBackend(tmp_path), clock=clock, evict_idle_seconds=60
    ) as host:
        sid, schedule_id = await scheduled(host, 300)
        await tick(host, clock, 60)
        await wait_until(lambda: host.sessions.get(sid) is None)  # evicted, reminder standing

        def in_log() -> int:
            live = host.sessions.get(sid)
            return 0 if live is None else dispatched(live.events, schedule_id)

        for _ in range(4):
            clock.advance(60)
            await wait_until(lambda: not host.wakeups.busy)
        await wait_until(lambda: in_log() == 1 or host.sessions.get(sid) is None)
        clock.advance(1)
        await wait_until(lambda: not host.wakeups.busy)
        stored_count: list[Any] = []

        async def count() -> bool:
            live = host.sessions.get(sid)
            if live is not None:
                stored_count[:] = [dispatched(live.events, schedule_id)]
            else:
                stored = await host.inspect(sid)
                assert stored is not None
                stored_count[:] = [dispatched(stored.events, schedule_id)]
            return stored_count == [1]

        await wait_until(count)
        for _ in range(3):
            await tick(host, clock, 60)
            await wait_until(lambda: not host.wakeups.busy)
        assert await count()


def test_the_overlay_host_table_sets_evict_idle_seconds() -> None:
    assert Overlay.from_document({}).evict_idle_seconds is None
    assert Overlay.from_document({"host": {}}).evict_idle_seconds is None
    doc = {"host": {"evict_idle_seconds": 30}, "plugins": {}}
    assert Overlay.from_document(doc).evict_idle_seconds == 30
    assert Overlay.from_document({"host": {"evict_idle_seconds": 0}}).evict_idle_seconds == 0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"evict_idle_seconds": -1}, "integer >= 0"),
        ({"evict_idle_seconds": 1.5}, "integer >= 0"),
        ({"evict_idle_seconds": "600"}, "integer >= 0"),
        ({"evict_idle_seconds": True}, "integer >= 0"),
        ({"evict_idle": 10}, "unknown keys in [host]"),
        ("600", "'host' must be a table"),
    ],
)
def test_bad_host_tables_are_refused(table: object, message: str) -> None:
    with pytest.raises(OverlayError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Overlay.from_document({"host": table}, source="o.toml")


def test_a_negative_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        LiveHost(backend=MemoryBackend(), evict_idle_seconds=-1)


def test_dsh_serve_evict_idle_flag_wins_over_the_overlay_default_600() -> None:
    parser = _parser()
    overlay = Overlay.from_document({"host": {"evict_idle_seconds": 30}})
    assert evict_idle(parser.parse_args(["serve"]).evict_idle, Overlay()) == 600
    assert evict_idle(parser.parse_args(["serve"]).evict_idle, overlay) == 30
    flag = parser.parse_args(["serve", "--evict-idle", "0"]).evict_idle
    assert evict_idle(flag, overlay) == 0
    for bad in ("-5", "1.5", "soon"):
        with pytest.raises(SystemExit):
            parser.parse_args(["serve", "--evict-idle", bad])


async def test_an_open_event_stream_keeps_its_session_live(clock: ManualClock) -> None:
    async with LiveHost(backend=MemoryBackend(), clock=clock, evict_idle_seconds=60) as host:
        agent = await host.create_session()
        sid = agent.session.id
        async with serve(host) as (_, client):
            async with stream(client, sid):
                await wait_until(lambda: host.evictor.attached(sid) == 1)
                for _ in range(3):
                    await tick(host, clock, 60)
                assert host.sessions.get(sid) is not None
            await wait_until(lambda: host.evictor.attached(sid) == 0)
            await tick(host, clock, 60)
            await wait_until(lambda: host.sessions.get(sid) is None)


async def test_input_arriving_during_the_final_flush_keeps_the_session_live(
    clock: ManualClock,
) -> None:
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock, evict_idle_seconds=60) as host:
        agent = await host.create_session()
        sid = agent.session.id
        agent.session.append("x/test", {})
        gate = backend.plan.gate = asyncio.Event()
        calls = len(backend.plan.append_calls)
        clock.advance(60)
        await wait_until(lambda: len(backend.plan.append_calls) > calls)  # flush is waiting
        agent.send("hello")  # a message arrives meanwhile
        backend.plan.gate = None
        gate.set()
        await wait_until(lambda: not host.evictor.busy)
        assert host.sessions.get(sid) is not None
        assert not agent.disposed
        await wait_until(lambda: agent.phase == "idle" and not agent.inbox)
