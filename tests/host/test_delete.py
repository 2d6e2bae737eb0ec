"""Deleting a Session (``LiveHost.delete_session``): a live one is stopped first (its turn
cancelled, its Agent disposed, nothing more of it written), then storage removes its log, wake
entries, board rows and name in one transaction. Forks keep working; a resume under way opens
nothing; cold delivery forgets it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dsh_host import LiveHost
from dsh_host.persistence import SQLiteBackend, StorageError
from dsh_host.testing import ManualClock, wait_until

from .board_plugin import PLUGIN, Pins, entry, load_pins
from .board_support import Faults, agrees
from .models import GatedModel

AT = 1_785_931_260_000


@pytest.fixture
def faulty(tmp_path: Path) -> Faults:
    return Faults(SQLiteBackend(tmp_path / "data"))


@pytest.fixture
async def rig(clock: ManualClock, faulty: Faults) -> AsyncIterator[tuple[LiveHost, Pins]]:
    model = GatedModel()
    async with LiveHost(backend=faulty, clock=clock, model=model) as host:
        host.test_model = model  # type: ignore[attr-defined]
        yield host, load_pins(host)
        faulty.plan.gate = None
        faulty.load_gate = None
        for gate in model.release.values():
            gate.set()


async def gone(host: LiveHost, session_id: str) -> None:
    """Nothing of ``session_id`` is stored, listed, on the board or live."""
    assert await host.backend.load(session_id) is None
    assert session_id not in [s.header.id for s in await host.backend.list_sessions()]
    rows = await host.backend.board_page(PLUGIN, "pending", limit=50)
    assert session_id not in [row.session_id for row in rows]
    assert host.sessions.get(session_id) is None
    assert host.agents.for_session(session_id) is None
    with pytest.raises(KeyError):
        await host.resume_session(session_id)


async def test_an_unknown_session_is_not_deleted(rig) -> None:
    host, _ = rig
    assert await host.delete_session("no-such-session") is False
    assert await host.delete_session("no-such-session") is False


async def test_a_cold_session_goes_with_its_rows_and_a_second_delete_finds_nothing(rig) -> None:
    host, pins = rig
    kept = (await host.create_session()).session
    pins.pin(kept, "k", AT + 5, "kept")
    session = (await host.create_session()).session
    pins.pin(session, "a", AT, "stretch")
    host.sessions.request_wake(session, PLUGIN, AT)
    await host.close_session(session.id)
    assert await host.delete_session(session.id) is True
    await gone(host, session.id)
    assert await host.backend.earliest_wake() is None
    assert await host.delete_session(session.id) is False
    assert await host.sessions.flush(kept) is True  # another Session is untouched
    assert await agrees(host.backend, kept.id) == {"k": entry(AT + 5, "kept")}


async def test_a_live_session_is_stopped_first_and_nothing_more_of_it_is_written(rig) -> None:
    host, pins = rig
    model: GatedModel = host.test_model  # type: ignore[attr-defined]
    agent = await host.create_session()
    session = agent.session
    pins.pin(session, "a", AT, "stretch")
    assert await host.sessions.flush(session) is True
    agent.send("a long turn")
    await wait_until(lambda: model.started == ["a long turn"])
    pins.pin(session, "b", AT + 1, "posted, never flushed")
    assert await host.delete_session(session.id) is True
    assert not host.sessions.is_live(session)
    assert agent.disposed
    assert not [e for e in session.events if e.type == "assistant/message"]  # turn cancelled
    await gone(host, session.id)
    host.clock.advance(1)  # type: ignore[attr-defined]  # any batching window would fire now
    await asyncio.sleep(0)
    assert await host.backend.load(session.id) is None


async def test_a_write_under_way_ends_before_the_delete_and_none_follows(
    rig, faulty: Faults
) -> None:
    host, pins = rig
    session = (await host.create_session()).session
    pins.pin(session, "a", AT, "stretch")
    faulty.plan.gate = asyncio.Event()
    calls = len(faulty.plan.append_calls)
    flush = asyncio.ensure_future(host.sessions.flush(session))
    await wait_until(lambda: len(faulty.plan.append_calls) > calls)
    deleting = asyncio.ensure_future(host.delete_session(session.id))
    await wait_until(lambda: not host.sessions.is_live(session))
    assert not deleting.done()  # it waits for the write in progress
    faulty.plan.gate.set()
    assert await deleting is True
    with pytest.raises(StorageError, match="deleted"):
        await flush
    await gone(host, session.id)


async def test_a_resume_under_way_does_not_bring_a_deleted_session_back(
    rig, faulty: Faults
) -> None:
    host, pins = rig
    session = (await host.create_session()).session
    pins.pin(session, "a", AT, "stretch")
    await host.close_session(session.id)
    faulty.load_gate = asyncio.Event()
    resumes = [asyncio.ensure_future(host.resume_session(session.id)) for _ in range(2)]
    await wait_until(lambda: faulty.loads_held >= 1)
    assert await host.delete_session(session.id) is True
    faulty.load_gate.set()
    for resume in resumes:
        with pytest.raises(KeyError):
            await resume
    faulty.load_gate = None
    await gone(host, session.id)


async def test_a_fork_keeps_working_after_its_parent_is_deleted(rig) -> None:
    host, pins = rig
    parent = (await host.create_session()).session
    pins.pin(parent, "a", AT, "the parent's")
    child = (await host.fork_session(parent.id)).session
    assert dict(host.sessions.posted(child)) == {}  # a fork inherits no rows
    assert await host.delete_session(parent.id) is True
    await gone(host, parent.id)
    pins.pin(child, "c", AT + 1, "the child's")
    assert await host.sessions.flush(child) is True
    await host.close_session(child.id)
    resumed = (await host.resume_session(child.id)).session
    assert resumed.header.parent_session == parent.id  # it only names its parent
    assert [e.type for e in resumed.events[: child.header.owned_from]] == [
        e.type for e in child.events[: child.header.owned_from]
    ]
    assert await agrees(host.backend, child.id) == {"c": entry(AT + 1, "the child's")}


async def test_cold_delivery_forgets_a_deleted_session(rig) -> None:
    host, pins = rig
    session = (await host.create_session()).session
    host.sessions.request_wake(session, PLUGIN, host.clock.now_ms() + 5_000)
    await host.close_session(session.id)
    assert host.wakeups.armed_for is not None
    with capture_logs() as logs:
        assert await host.delete_session(session.id) is True
        await wait_until(lambda: not host.wakeups.busy and host.wakeups.armed_for is None)
        host.clock.advance(10)  # type: ignore[attr-defined]
        await wait_until(lambda: not host.wakeups.busy)
    assert (session.id, "resumed") not in pins.opened
    assert not [entry for entry in logs if entry["log_level"] in ("warning", "error")]


class _Phantom(Faults):
    """Lists a due wake entry of a Session storage no longer holds (deleted after the index
    was read)."""

    async def due_wakes(self, now_ms: int, limit: int):  # type: ignore[no-untyped-def]
        return [("deleted-meanwhile", PLUGIN, AT - 60_000)]

    async def earliest_wake(self) -> int | None:
        return None


async def test_a_pass_that_listed_a_deleted_session_treats_it_as_gone(
    clock: ManualClock, tmp_path: Path
) -> None:
    backend = _Phantom(SQLiteBackend(tmp_path / "data"))
    with capture_logs() as logs:
        async with LiveHost(backend=backend, clock=clock, model="none") as host:
            await wait_until(lambda: any(e["event"] == "host.wake_session_gone" for e in logs))
            await wait_until(lambda: not host.wakeups.busy)
    assert not [e for e in logs if e["log_level"] in ("warning", "error")]
