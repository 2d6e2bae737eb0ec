"""Two hosts on one PostgreSQL database (issue 11 item 5), in one process: one live owner.

Each :class:`LiveHost` has its own :class:`PostgresBackend` (its own lease owner name). A Session
live on one host is refused to the other until it goes cold there; a host whose lease was taken
over drops the Session without writing anything (the database refuses its next append, or its
renewal notices first); due wakes are delivered by exactly one host, and a dead host's by the
other once its lease has run out. The wake plugin is the stand-in of test_cold_delivery.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import psycopg
import pytest
from structlog.testing import capture_logs

from dsh_host import LiveHost
from dsh_host.persistence import PostgresBackend, SessionLiveElsewhereError
from dsh_host.testing import wait_until
from tests.host.test_cold_delivery import cold_session_due_at, done_events, load_waker
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


def _sql(url: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params)  # type: ignore[arg-type]
        return cur.fetchall() if cur.description else []


def _run_out(url: str, sid: str) -> None:
    """The lease of ``sid`` expires, as when its holder was paused past its time to live."""
    _sql(url, "UPDATE sessions SET lease_until = 0 WHERE id = %s", sid)


@pytest.fixture
def make_host(url: str) -> Callable[..., LiveHost]:
    def make(owner: str, lease_seconds: float = 30.0) -> LiveHost:
        backend = PostgresBackend(url, owner=owner, lease_seconds=lease_seconds)
        return LiveHost(backend=backend, model="scripted")

    return make


@pytest.fixture
async def two(make_host: Callable[..., LiveHost]) -> AsyncIterator[tuple[LiveHost, LiveHost]]:
    async with make_host("host-1") as one, make_host("host-2") as two:
        yield one, two


async def test_a_session_live_on_one_host_is_refused_by_another_until_it_goes_cold_there(
    two: tuple[LiveHost, LiveHost],
) -> None:
    one, other = two
    agent = await one.create_session()
    sid = agent.session.id
    with pytest.raises(SessionLiveElsewhereError, match="live on another host"):
        await other.resume_session(sid)
    assert other.sessions.get(sid) is None
    with pytest.raises(KeyError):
        await other.resume_session("no-such-session")  # absent is still "not found"
    await one.close_session(sid)  # cold on host 1: its lease is released
    resumed = await other.resume_session(sid)
    resumed.send("/help")
    await wait_until(lambda: resumed.phase == "idle" and len(resumed.session.events) > 2)
    with pytest.raises(SessionLiveElsewhereError):
        await one.resume_session(sid)
    assert other.leases is not None
    assert other.leases.held(sid)


async def test_a_host_whose_lease_was_taken_over_has_its_append_refused_and_drops_the_session(
    two: tuple[LiveHost, LiveHost], url: str
) -> None:
    one, other = two
    agent = await one.create_session()
    sid = agent.session.id
    _run_out(url, sid)  # host 1 was frozen past its lease ...
    taken = await other.resume_session(sid)  # ... and host 2 took the Session over
    assert await other.sessions.flush(taken.session)
    stored_before = await other.inspect(sid)
    assert stored_before is not None
    with capture_logs() as logs:
        agent.send("hello from the past")  # host 1 still thinks it is live: it writes
        await wait_until(lambda: any(e["event"] == "host.session_dropped" for e in logs))
    assert one.sessions.get(sid) is None
    assert one.agents.for_session(sid) is None
    assert one.leases is not None
    assert one.leases.fenced >= 1  # refused by the database, not by host 1
    assert not one.leases.held(sid)
    stored = await other.inspect(sid)
    assert stored is not None
    assert stored.events == stored_before.events  # nothing of host 1's reached the log
    with pytest.raises(SessionLiveElsewhereError):
        await one.resume_session(sid)


async def test_renewal_notices_a_lease_taken_over_and_drops_the_session_without_writing(
    make_host: Callable[..., LiveHost], url: str
) -> None:
    async with make_host("host-1", lease_seconds=0.6) as one, make_host("host-2") as other:
        agent = await one.create_session()
        sid = agent.session.id
        assert await one.sessions.flush(agent.session)
        _run_out(url, sid)
        await other.resume_session(sid)
        await wait_until(lambda: one.sessions.get(sid) is None)  # renewed every 0.2 s
        assert one.leases is not None
        assert one.leases.fenced == 0


async def test_renewal_keeps_a_live_session_s_lease_beyond_its_time_to_live(
    make_host: Callable[..., LiveHost],
) -> None:
    async with make_host("host-1", lease_seconds=0.6) as one, make_host("host-2") as other:
        agent = await one.create_session()
        sid = agent.session.id
        loop = asyncio.get_running_loop()
        until = loop.time() + 1.5  # well past 0.6 s: only renewals keep it

        async def past_the_ttl() -> bool:
            with pytest.raises(SessionLiveElsewhereError):
                await other.resume_session(sid)
            return loop.time() > until

        await wait_until(past_the_ttl, timeout=10)
        assert one.sessions.get(sid) is not None


async def test_a_due_wake_of_a_cold_session_is_delivered_by_exactly_one_of_two_hosts(
    make_host: Callable[..., LiveHost],
) -> None:
    async with make_host("writer") as writer:
        load_waker(writer)  # due after the writer is gone (else it would deliver it itself)
        sid = await cold_session_due_at(writer, writer.clock.now_ms() + 500)
    one, other = make_host("host-1"), make_host("host-2")
    wakers = [load_waker(one), load_waker(other)]
    await asyncio.gather(one.start(), other.start())
    try:
        await wait_until(lambda: one.sessions.get(sid) or other.sessions.get(sid), timeout=10)
        live = one if one.sessions.get(sid) else other
        assert len(await done_events(live, sid)) == 1
        await wait_until(lambda: not one.wakeups.busy and not other.wakeups.busy)
        assert sum(w.resumes.count(sid) for w in wakers) == 1
    finally:
        await asyncio.gather(one.close(), other.close())
    async with make_host("reader") as reader:
        assert len(await done_events(reader, sid)) == 1


async def test_a_dead_host_s_due_wake_is_delivered_by_the_other_once_its_lease_runs_out(
    make_host: Callable[..., LiveHost], url: str
) -> None:
    async with make_host("writer") as writer:
        load_waker(writer)  # due after the writer is gone (else it would deliver it itself)
        sid = await cold_session_due_at(writer, writer.clock.now_ms() + 500)
    # A host claimed it for its wake and died before dispatching: its lease stands 1.5 s.
    _sql(
        url,
        "UPDATE sessions SET owner = 'dead', epoch = epoch + 1, writer = epoch + 1, "
        "lease_until = dsh_now_ms() + 1500 WHERE id = %s",
        sid,
    )
    survivor = make_host("survivor")
    waker = load_waker(survivor)
    started = asyncio.get_running_loop().time()
    async with survivor:
        await wait_until(lambda: survivor.sessions.get(sid) is not None, timeout=15)
        waited = asyncio.get_running_loop().time() - started
        assert waited >= 1.0  # not while the dead host's lease stood
        assert len(await done_events(survivor, sid)) == 1
        assert waker.resumes == [sid]


async def test_a_wake_another_host_files_later_is_found_by_a_host_that_had_none_standing(
    make_host: Callable[..., LiveHost],
) -> None:
    survivor = make_host("survivor", lease_seconds=0.9)  # looks again every 0.3 s
    waker = load_waker(survivor)
    async with survivor:
        await wait_until(lambda: not survivor.wakeups.busy)
        assert survivor.wakeups.armed_for is not None  # shared: it keeps looking
        async with make_host("writer") as writer:
            load_waker(writer)
            sid = await cold_session_due_at(writer, writer.clock.now_ms() + 1000)
        await wait_until(lambda: survivor.sessions.get(sid) is not None, timeout=10)
        assert len(await done_events(survivor, sid)) == 1
        assert waker.resumes == [sid]


# -- cold plans under the lease ---------------------------------------------------------------


async def _reminder_due_soon(make_host: Callable[..., LiveHost], seconds: int) -> str:
    """A cold Session whose Schedule reminder falls due in ``seconds``, written by a host that
    is gone before then."""
    async with make_host("writer") as writer:
        writer.load_plugin("schedule", {"cold_delivery": True})
        agent = await writer.create_session()
        value = await agent.execute_tool(
            "schedule_create", {"prompt": "stretch", "after_seconds": seconds}
        )
        assert isinstance(value, dict)
        assert "id" in value, value
        sid = agent.session.id
        await writer.close_session(sid)
    return sid


def _dispatches(events: list[object]) -> int:
    return sum(
        1
        for e in events
        if getattr(e, "type", None) == "schedule/change"
        and getattr(e, "data", {}).get("operation") == "dispatch"
    )


async def test_a_due_reminder_is_planned_by_exactly_one_of_two_hosts_under_its_lease(
    make_host: Callable[..., LiveHost],
) -> None:
    sid = await _reminder_due_soon(make_host, 3)  # due once both hosts have the plugin
    one, other = make_host("host-1"), make_host("host-2")
    await asyncio.gather(one.start(), other.start())
    for host in (one, other):
        host.load_plugin("schedule", {"cold_delivery": True})
    try:
        await wait_until(lambda: one.cold.stored + other.cold.stored == 1, timeout=15)

        async def turned() -> bool:
            stored = await one.inspect(sid)
            return stored is not None and any(e.type == "turn/end" for e in stored.events)

        await wait_until(turned, timeout=15)
        stored = await one.inspect(sid)
        assert stored is not None
        assert _dispatches(list(stored.events)) == 1
        assert one.cold.stored + other.cold.stored == 1
    finally:
        await asyncio.gather(one.close(), other.close())


class _HeldPlan(PostgresBackend):
    """Holds the first write carrying a follow-up (a plan's) until released."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.held = asyncio.Event()
        self.release = asyncio.Event()

    async def append(self, write):  # type: ignore[no-untyped-def]
        if not self.held.is_set() and any(e.type == "agent/followup" for e in write.events):
            self.held.set()
            await self.release.wait()
        await super().append(write)


async def test_a_resume_that_waited_for_a_plan_keeps_the_lease_the_plan_took(
    make_host: Callable[..., LiveHost], url: str
) -> None:
    sid = await _reminder_due_soon(make_host, 1)
    backend = _HeldPlan(url, owner="host-1", lease_seconds=30.0)
    async with LiveHost(backend=backend, model="scripted") as one:
        one.load_plugin("schedule", {"cold_delivery": True})
        await asyncio.wait_for(backend.held.wait(), 15)  # host 1 is storing the plan
        assert one.leases is not None
        assert one.leases.held(sid)
        opening = asyncio.create_task(one.resume_session(sid))  # a person opens it on host 1
        await asyncio.sleep(0.05)
        assert not opening.done()
        backend.release.set()
        agent = await asyncio.wait_for(opening, 10)
        assert one.sessions.get(sid) is agent.session
        assert one.leases.held(sid)  # the plan left its lease to the Session now live here
        # Another host (started only now: its own wake service would otherwise race host 1 for
        # the due Session) is refused it.
        async with make_host("host-2") as other:
            with pytest.raises(SessionLiveElsewhereError):
                await other.resume_session(sid)
        assert _dispatches(list(agent.session.events)) == 1
