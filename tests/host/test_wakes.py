"""The durable wake index in the reference host (issue 11 item 1): what the coordinator writes.

The plugin-facing contract (durable after the acknowledged flush, replaced, cleared, refusals,
resume) is the conformance suite's :class:`~dsh_host.conformance.WakeContract`; these cases pin
how the host writes it: in the same append as the batch, never an extra write on the hot path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dsh_hookspecs import Session, SessionNotLiveError, hookimpl
from dsh_host import LiveHost, LiveSessionStore
from dsh_host.persistence import MemoryBackend, SQLiteBackend, Write
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until

PLUGIN = "waker"
AT = 1_785_931_260_000

#: One recorded append: ``(start, number of events, wakes or None when none was passed)``.
Call = tuple[int, int, dict[str, int | None] | None]


class Recording(MemoryBackend):
    """A memory backend that records what every append carried."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []

    async def append(self, write: Write) -> None:
        self.calls.append((write.start, len(write.events), dict(write.wakes) or None))
        await super().append(write)


@pytest.fixture
def recording() -> Recording:
    return Recording()


@pytest.fixture
async def waker_host(
    clock: ManualClock, recording: Recording
) -> AsyncIterator[tuple[LiveHost, FaultInjectingBackend]]:
    faulty = FaultInjectingBackend(recording)
    async with LiveHost(backend=faulty, clock=clock, model="scripted") as host:
        host.load_plugin(PLUGIN, factory=object)
        yield host, faulty


async def test_a_request_rides_in_the_same_append_as_the_events_before_it(
    waker_host: tuple[LiveHost, FaultInjectingBackend], recording: Recording
) -> None:
    host, _ = waker_host
    session = (await host.create_session()).session
    del recording.calls[:]
    session.append("user/message", {"text": "remind me"})
    host.sessions.request_wake(session, PLUGIN, AT)
    session.append("user/message", {"text": "after the request"})
    assert await host.sessions.flush(session) is True
    assert recording.calls == [(len(session.events) - 2, 2, {PLUGIN: AT})]
    stored = await host.inspect(session.id)
    assert stored is not None
    assert stored.wakes == {PLUGIN: AT}


async def test_the_hot_path_passes_no_wakes_and_an_unchanged_request_writes_nothing(
    waker_host: tuple[LiveHost, FaultInjectingBackend], recording: Recording
) -> None:
    host, _ = waker_host
    session = (await host.create_session()).session
    host.sessions.request_wake(session, PLUGIN, AT)
    assert await host.sessions.flush(session) is True
    del recording.calls[:]
    host.sessions.request_wake(session, PLUGIN, AT)  # the standing entry: nothing changes
    session.append("user/message", {"text": "x"})
    assert await host.sessions.flush(session) is True
    assert await host.sessions.flush(session) is True
    assert recording.calls == [(len(session.events) - 1, 1, None)]


async def test_a_request_alone_is_written_by_the_background_window(
    waker_host: tuple[LiveHost, FaultInjectingBackend], recording: Recording, clock: ManualClock
) -> None:
    host, _ = waker_host
    session = (await host.create_session()).session
    del recording.calls[:]
    host.sessions.request_wake(session, PLUGIN, AT)
    clock.advance(0.01)  # the batching window elapses on the host's clock
    await wait_until(lambda: recording.calls == [(len(session.events), 0, {PLUGIN: AT})])


async def test_after_a_failed_write_a_newer_request_wins(
    waker_host: tuple[LiveHost, FaultInjectingBackend],
) -> None:
    host, faulty = waker_host
    session = (await host.create_session()).session
    host.sessions.request_wake(session, PLUGIN, AT)
    faulty.plan.fail_after_commit = 1  # stored, but reported failed: storage is re-read
    with pytest.raises(Exception, match="injected failure after commit"):
        await host.sessions.flush(session)
    host.sessions.request_wake(session, PLUGIN, AT + 1)
    assert await host.sessions.flush(session) is True
    stored = await host.inspect(session.id)
    assert stored is not None
    assert stored.wakes == {PLUGIN: AT + 1}
    assert dict(host.sessions.wakes(session)) == {PLUGIN: AT + 1}


async def test_a_fork_does_not_inherit_the_parents_entries(
    waker_host: tuple[LiveHost, FaultInjectingBackend],
) -> None:
    host, _ = waker_host
    parent = (await host.create_session()).session
    host.sessions.request_wake(parent, PLUGIN, AT)
    child = (await host.fork_session(parent.id)).session
    assert dict(host.sessions.wakes(child)) == {}
    stored = await host.inspect(child.id)
    assert stored is not None
    assert stored.wakes == {}


async def test_entries_survive_a_host_restart_on_sqlite(tmp_path: Path, clock: ManualClock) -> None:
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.load_plugin(PLUGIN, factory=object)
        session = (await host.create_session()).session
        host.sessions.request_wake(session, PLUGIN, AT)
        # Not flushed by hand: the host's close writes the pending entry with its final flush.
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        resumed = (await host.resume_session(session.id)).session
        assert dict(host.sessions.wakes(resumed)) == {PLUGIN: AT}
        assert await host.backend.due_wakes(AT, 10) == [(session.id, PLUGIN, AT)]
        assert await host.backend.earliest_wake() == AT


def test_a_store_without_a_plugin_layer_knows_no_plugin() -> None:
    store = LiveSessionStore(clock=ManualClock())
    session = store.create()
    with pytest.raises(ValueError, match="loaded plugin"):
        store.request_wake(session, PLUGIN, AT)
    assert dict(store.wakes(session)) == {}
    store.detach(session)
    with pytest.raises(SessionNotLiveError):
        store.request_wake(session, PLUGIN, AT)


class FoldingWaker:
    """A plugin that files, from its fold in ``dsh_session_opened``, the largest ``at`` of the
    ``waker/at`` events in the log (none: it clears its entry)."""

    def __init__(self) -> None:
        self.host: Any = None

    @hookimpl
    def dsh_plugin_start(self, host: Any, config: object) -> None:
        del config
        self.host = host

    @hookimpl
    def dsh_session_opened(self, session: Session, reason: str) -> None:
        del reason
        targets = [e.data["at"] for e in session.events if e.type == "waker/at"]  # type: ignore[index, call-overload]
        self.host.sessions.request_wake(session, PLUGIN, max(targets) if targets else None)


async def test_reindex_rebuilds_every_cold_sessions_entries_from_the_logs(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.load_plugin(PLUGIN, factory=FoldingWaker)
        first = (await host.create_session()).session
        first.append("waker/at", {"at": AT})
        host.sessions.request_wake(first, PLUGIN, AT + 99)  # an index that disagrees with the log
        second = (await host.create_session()).session
        host.sessions.request_wake(second, PLUGIN, AT)  # the log asks for nothing
        third = (await host.create_session()).session
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.load_plugin(PLUGIN, factory=FoldingWaker)
        live = (await host.resume_session(third.id)).session
        host.sessions.request_wake(live, PLUGIN, AT + 7)  # live: its standing entry is current
        assert await host.sessions.flush(live) is True
        rebuilt, entries, failed = await host.reindex()
        assert (rebuilt, entries, failed) == (2, 1, [])
        assert await host.backend.due_wakes(AT + 1000, 10) == [
            (first.id, PLUGIN, AT),
            (third.id, PLUGIN, AT + 7),
        ]
        assert host.sessions.get(first.id) is None  # reindexed Sessions stay cold
        # No Agent was created for the reindexed Sessions: only the live one has its own.
        assert [agent.session.id for agent in host.agents.all()] == [third.id]


async def test_reindex_without_the_filing_plugin_clears_its_entries(
    tmp_path: Path, clock: ManualClock
) -> None:
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        host.load_plugin(PLUGIN, factory=object)
        session = (await host.create_session()).session
        host.sessions.request_wake(session, PLUGIN, AT)
    async with LiveHost(backend=SQLiteBackend(tmp_path), clock=clock) as host:
        assert await host.reindex() == (1, 0, [])
        assert await host.backend.earliest_wake() is None
