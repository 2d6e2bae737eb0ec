"""The persistence coordinator: write-behind, flush drains, initialization recovery."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Event, SessionHeader
from dsh_host import Flushed, LiveHost, LiveSessionStore
from dsh_host.persistence import (
    MemoryBackend,
    PrefixDivergedError,
    StorageConflictError,
    StorageError,
    StoredSession,
    Write,
    events_identical,
)
from dsh_host.testing import FaultInjectingBackend, wait_until


async def stored_types(host, session_id):
    stored = await host.inspect(session_id)
    return None if stored is None else [e.type for e in stored.events]


async def assert_identical_prefix(host, session):
    stored = await host.inspect(session.id)
    assert stored is not None
    assert len(stored.events) == len(session.events)
    assert all(events_identical(a, b) for a, b in zip(stored.events, session.events, strict=True))


async def test_flush_drains_and_acknowledges(host):
    agent = await host.create_session()
    session = agent.session
    session.append("user/message", {"text": "x"})
    assert await stored_types(host, session.id) == []
    assert await host.sessions.flush(session) is True
    await assert_identical_prefix(host, session)


async def test_write_behind_commits_after_the_batching_window(host, clock):
    agent = await host.create_session()
    session = agent.session
    session.append("user/message", {"text": "a"})
    session.append("user/message", {"text": "b"})
    clock.advance(0.01)  # the batching window elapses on the host's clock
    await wait_until(lambda: host.backend.plan.append_calls[-1][1:] == (0, 2))
    await assert_identical_prefix(host, session)


async def test_first_initialization_failing_before_storage_changed_is_retried(host, backend):
    backend.plan.fail_appends = 1
    session = host.sessions.create()
    session.append("user/message", {"text": "x"})
    with pytest.raises(StorageError, match="injected write failure"):
        await host.sessions.flush(session)
    assert await host.inspect(session.id) is None
    assert await host.sessions.flush(session) is True
    await assert_identical_prefix(host, session)


async def test_initialization_reported_failed_after_commit_writes_only_the_missing_suffix(
    host, backend
):
    backend.plan.fail_after_commit = 1
    session = host.sessions.create()
    session.append("user/message", {"text": "one"})
    with pytest.raises(StorageError, match="after commit"):
        await host.sessions.flush(session)
    session.append("user/message", {"text": "two"})
    with capture_logs() as logs:
        assert await host.sessions.flush(session) is True
    await assert_identical_prefix(host, session)
    # The retry read the actual cursor (1 stored event) and appended only seq 1.
    assert backend.plan.append_calls[-1] == (session.id, 1, 1)
    assert any(entry["event"] == "persistence.reconciled" for entry in logs)


async def test_a_fork_seed_committed_before_init_was_reported_failed(host, backend):
    parent = await host.create_session()
    parent.session.append("user/message", {"text": "parent"})
    backend.plan.fail_after_commit = 1
    child = host.sessions.fork(parent.session)
    with pytest.raises(StorageError):
        await host.sessions.flush(child)
    assert await host.sessions.flush(child) is True
    stored = await host.inspect(child.id)
    assert stored.header.seed_length == 1
    assert [e.type for e in stored.events] == ["user/message", "session/end-seed"]


async def test_a_stored_prefix_that_diverges_is_refused_and_never_overwritten(host, backend):
    session = host.sessions.create(session_id="dup")
    session.append("user/message", {"text": "live"})
    backend.plan.fail_after_commit = 1
    with pytest.raises(StorageError):
        await host.sessions.flush(session)
    # Someone else's log now sits under that id in storage.
    inner = backend.inner
    stored_before = await inner.load("dup")
    other = Event(seq=0, type="user/message", time=0, data={"text": "other"})
    inner._sessions["dup"].events[0] = other  # type: ignore[attr-defined]
    with pytest.raises(PrefixDivergedError, match="refusing to overwrite"):
        await host.sessions.flush(session)
    after = await inner.load("dup")
    assert after.events == (other,)
    assert stored_before is not None


async def test_a_longer_stored_log_is_divergent(host, backend):
    header = SessionHeader(version=1, id="long", created_at=0)
    events = [Event(seq=i, type="x/y", time=0, data={}) for i in range(3)]
    await backend.inner.append(Write("long", 0, events, header))
    session = await host.sessions.resume("long")
    # Pretend init must reconcile (as after a failed write) against a store that grew.
    foreign = [Event(seq=i, type="x/y", time=0, data={"foreign": True}) for i in (3, 4)]
    await backend.inner.append(Write("long", 3, foreign))
    host.persistence._states[session].cursor = None  # type: ignore[attr-defined]
    with pytest.raises(PrefixDivergedError, match="storage holds 5 events"):
        await host.sessions.flush(session)


async def test_a_materialized_session_that_vanished_is_refused(host, backend):
    agent = await host.create_session()
    del backend.inner._sessions[agent.session.id]  # type: ignore[attr-defined]
    backend.plan.fail_appends = 1
    agent.session.append("user/message", {"text": "x"})
    with pytest.raises(StorageError):
        await host.sessions.flush(agent.session)
    with pytest.raises(StorageError, match="lost its persisted log"):
        await host.sessions.flush(agent.session)


async def test_resume_persists_only_the_new_suffix(clock):
    backend = FaultInjectingBackend(MemoryBackend())
    async with LiveHost(backend=backend, clock=clock) as host:
        agent = await host.create_session()
        agent.session.append("user/message", {"text": "x"})
        sid = agent.session.id
    async with LiveHost(backend=backend, clock=clock) as host:
        backend.plan.append_calls.clear()
        agent = await host.resume_session(sid)
        assert [e.type for e in agent.session.events] == ["user/message", "session/end-seed"]
        assert await host.sessions.flush(agent.session) is True
        assert backend.plan.append_calls == [(sid, 1, 1)]
        await assert_identical_prefix(host, agent.session)


async def test_background_write_failure_is_logged_once_and_retried_by_the_next_flush(
    host, backend, clock
):
    agent = await host.create_session()
    backend.plan.fail_appends = 1
    with capture_logs() as logs:
        agent.session.append("user/message", {"text": "x"})
        clock.advance(0.01)
        await wait_until(
            lambda: any(e["event"] == "persistence.background_write_failed" for e in logs)
        )
    calls = len(backend.plan.append_calls)
    clock.advance(1)  # no automatic retry loop
    assert len(backend.plan.append_calls) == calls
    assert await host.sessions.flush(agent.session) is True
    await assert_identical_prefix(host, agent.session)


async def test_host_close_commits_pending_writes(clock):
    backend = MemoryBackend()
    host = LiveHost(backend=backend, clock=clock)
    await host.start()
    agent = await host.create_session()
    agent.session.append("user/message", {"text": "pending"})
    sid = agent.session.id
    await host.close()
    await backend.open()
    stored = await backend.load(sid)
    assert [e.type for e in stored.events] == ["user/message"]


async def test_list_sessions_shows_live_and_stored_with_lineage(host):
    parent = await host.create_session()
    child = await host.fork_session(parent.session.id)
    rows = await host.list_sessions()
    by_id = {row["id"]: row for row in rows}
    assert by_id[parent.session.id]["live"] is True
    assert by_id[child.session.id]["parentSession"] == parent.session.id
    await host.close_session(child.session.id)
    rows = {row["id"]: row for row in await host.list_sessions()}
    assert rows[child.session.id]["live"] is False


# -- one authority on what is committed: durable_length and proven_prefix --------------------


async def test_durable_length_is_the_stored_length_after_a_resume(clock):
    backend = MemoryBackend()
    async with LiveHost(backend=backend, clock=clock) as host:
        agent = await host.create_session()
        agent.session.append("user/message", {"text": "x"})
        agent.session.append("user/message", {"text": "y"})
        sid = agent.session.id
    async with LiveHost(backend=backend, clock=clock) as host:
        agent = await host.resume_session(sid)
        # Two stored events; the end-seed marker appended on resume is not durable yet.
        assert len(agent.session.events) == 3
        assert host.persistence.durable_length(agent.session) == 2
        assert host.sessions.durable_length(agent.session) == 2
        assert await host.sessions.flush(agent.session) is True
        assert host.persistence.durable_length(agent.session) == 3


async def test_durable_length_advances_only_on_an_acknowledged_flush(host, backend, clock):
    session = host.sessions.create()
    assert host.persistence.durable_length(session) == 0  # created: nothing proven yet
    session.append("user/message", {"text": "a"})
    assert host.persistence.durable_length(session) == 0  # an append is not durability
    assert await host.sessions.flush(session) is True
    assert host.persistence.durable_length(session) == 1

    # Written behind, but no flush acknowledged it: storage holds it, the length stays.
    session.append("user/message", {"text": "b"})
    clock.advance(0.01)
    await wait_until(lambda: backend.plan.append_calls[-1][1:] == (1, 1))
    assert await stored_types(host, session.id) == ["user/message", "user/message"]
    assert host.persistence.durable_length(session) == 1

    # A failed flush does not move it.
    session.append("user/message", {"text": "c"})
    backend.plan.fail_appends = 1
    with pytest.raises(StorageError, match="injected write failure"):
        await host.sessions.flush(session)
    assert host.persistence.durable_length(session) == 1

    # Nor does a flush that stored everything but whose outcome is a failure (another
    # listener raised, so the flush was never acknowledged).
    async def refuse(_session: object) -> bool:
        raise StorageError("injected listener failure")

    remove = host.sessions.add_flush_listener(refuse)
    with pytest.raises(StorageError, match="injected listener failure"):
        await host.sessions.flush(session)
    remove()
    await assert_identical_prefix(host, session)
    assert host.persistence.durable_length(session) == 1

    assert await host.sessions.flush(session) is True
    assert host.persistence.durable_length(session) == 3
    assert host.sessions.durable_length(session) == 3  # what the Agents read


async def test_durable_length_is_the_maximum_when_flushes_complete_out_of_order(host):
    session = host.sessions.create()
    session.append("user/message", {"text": "a"})
    release = asyncio.Event()
    calls = 0

    async def slow_first(_session: object) -> None:  # observe-only: never acknowledges
        nonlocal calls
        calls += 1
        if calls == 1:
            await release.wait()

    seen: list[tuple[int, int]] = []

    def flushed(flushed_session: object, through_seq: int) -> None:
        seen.append((through_seq, host.persistence.durable_length(session)))

    host.sessions.add_flush_listener(slow_first)
    host.sessions.subscribe(lambda o: flushed(o.session, o.through_seq), Flushed)
    first = asyncio.create_task(host.sessions.flush(session))  # through_seq 1
    await wait_until(lambda: calls == 1)
    session.append("user/message", {"text": "b"})
    assert await host.sessions.flush(session) is True  # through_seq 2 completes first
    assert host.persistence.durable_length(session) == 2
    release.set()
    assert await first is True
    assert host.persistence.durable_length(session) == 2  # the late, older flush: no step back
    # Every session/flushed observer already reads the advanced length.
    assert seen == [(2, 2), (1, 2)]


async def test_durable_length_of_an_unknown_session_is_zero(host):
    other = LiveSessionStore().create()
    assert host.persistence.durable_length(other) == 0


async def test_proven_prefix_is_proved_once_per_durable_length(host, monkeypatch):
    agent = await host.create_session()
    session = agent.session
    session.append("user/message", {"text": "a"})
    assert await host.sessions.flush(session) is True
    reads: list[str] = []
    real = host.persistence.inspect

    async def counting(session_id: str) -> StoredSession | None:
        reads.append(session_id)
        return await real(session_id)

    monkeypatch.setattr(host.persistence, "inspect", counting)
    assert await host.persistence.proven_prefix(session) == 1
    session.append("user/message", {"text": "b"})
    assert await host.persistence.proven_prefix(session) == 1  # no flush since: reused
    assert len(reads) == 1
    assert await host.sessions.flush(session) is True
    assert await host.persistence.proven_prefix(session, needed=1) == 1  # covers the range
    assert len(reads) == 1
    assert await host.persistence.proven_prefix(session) == 2  # the durable length moved
    assert len(reads) == 2


@pytest.mark.parametrize("how", ["absent", "fails", "diverged"])
async def test_proven_prefix_proves_nothing_without_an_identical_stored_prefix(
    host, monkeypatch, how
):
    agent = await host.create_session()
    session = agent.session
    assert await host.sessions.flush(session) is True
    session.append("user/message", {"text": "a"})

    async def inspect(session_id: str) -> StoredSession | None:
        if how == "fails":
            raise StorageError("injected inspection failure")
        if how == "absent":
            return None
        forged = Event(seq=0, type="user/message", time=0, data={"text": "forged"})
        return StoredSession(header=session.header, events=(forged,))

    monkeypatch.setattr(host.persistence, "inspect", inspect)
    with capture_logs() as logs:
        assert await host.persistence.proven_prefix(session) == 0
    assert any(e["event"].startswith("web.history_") for e in logs)


class _LateAppends(MemoryBackend):
    """A memory backend whose held append lands only when the next append arrives: the write a
    cancelled flush left under way commits after the next flush read storage."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.held = asyncio.Event()
        self._release = asyncio.Event()
        self._landed = asyncio.Event()
        self.conflicts = 0
        self._writer: asyncio.Task[None] | None = None

    async def _land(self, write: Write) -> None:
        await self._release.wait()
        try:
            await super().append(write)
        finally:
            self._landed.set()

    async def append(self, write: Write) -> None:
        if self.hold:
            # Handed to a "writer" of its own, as a real backend's: a cancelled caller stops
            # waiting for it, but the write still lands.
            self.hold = False
            self.held.set()
            self._writer = asyncio.create_task(self._land(write))
            await asyncio.shield(self._writer)
            return
        if self.held.is_set() and not self._landed.is_set():
            self._release.set()
            await self._landed.wait()
        try:
            await super().append(write)
        except StorageConflictError:
            self.conflicts += 1
            raise


@pytest.mark.parametrize("path", ["flush", "background"])
async def test_a_write_left_by_a_cancelled_flush_landing_late_is_not_written_twice(clock, path):
    # A flush whose caller is cancelled (an eviction, a close) leaves its write under way. When
    # it lands after the next drain read storage, that drain's write conflicts; it reads storage
    # again, finds its own events there and writes only what is still missing, without an error.
    backend = _LateAppends()
    async with LiveHost(backend=backend, clock=clock, model="scripted") as host:
        session = host.sessions.create()
        session.append("user/message", {"text": "one"})
        assert await host.sessions.flush(session) is True
        session.append("user/message", {"text": "two"})
        backend.hold = True
        first = asyncio.create_task(host.sessions.flush(session))
        await backend.held.wait()
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        session.append("user/message", {"text": "three"})
        with capture_logs() as logs:
            if path == "flush":
                assert await host.sessions.flush(session) is True
            else:
                clock.advance(1.0)  # the write-behind timer of "three"

                async def stored_three() -> bool:
                    stored = await backend.load(session.id)
                    return stored is not None and len(stored.events) == 3

                await wait_until(stored_three)
        assert backend.conflicts == 1  # the late write did land first
        await assert_identical_prefix(host, session)
        stored = await backend.load(session.id)
        assert stored is not None
        assert [e.data for e in stored.events] == [{"text": t} for t in ("one", "two", "three")]
        assert not [e for e in logs if e["log_level"] in ("warning", "error")]
