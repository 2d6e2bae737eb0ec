"""The flush contract of docs/design.md section 3.6, against a bare LiveSessionStore."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import SessionNotLiveError
from dsh_host import Flushed, LiveSession, LiveSessionStore, SessionHooks
from dsh_host.testing import wait_until


class RecordingHooks(SessionHooks):
    def __init__(self) -> None:
        self.flushed: list[tuple[str, int]] = []

    def session_flushed(self, session: LiveSession, through_seq: int) -> None:
        self.flushed.append((session.id, through_seq))


@pytest.fixture
def hooks() -> RecordingHooks:
    return RecordingHooks()


@pytest.fixture
def store(hooks: RecordingHooks) -> LiveSessionStore:
    return LiveSessionStore(hooks=hooks)


async def test_no_listeners_is_not_durable_and_publishes_nothing(store, hooks):
    session = store.create()
    session.append("user/message", {"text": "hi"})
    assert await store.flush(session) is False
    assert hooks.flushed == []


async def test_observe_only_listeners_are_not_durability(store, hooks):
    seen = []

    async def observer(session):
        seen.append(session.id)

    async def returns_truthy_but_not_true(session):
        return 1  # only a literal True acknowledges durability

    store.add_flush_listener(observer)
    store.add_flush_listener(returns_truthy_but_not_true)  # type: ignore[arg-type]
    session = store.create()
    assert await store.flush(session) is False
    assert seen == [session.id]
    assert hooks.flushed == []


async def test_acknowledged_flush_publishes_the_entry_boundary(store, hooks):
    async def durable(session):
        return True

    store.add_flush_listener(durable)
    session = store.create()
    session.append("user/message", {"text": "a"})
    session.append("user/message", {"text": "b"})
    assert await store.flush(session) is True
    assert hooks.flushed == [(session.id, 2)]


async def test_boundary_is_captured_at_entry_while_a_suffix_is_appended(store, hooks):
    gate = asyncio.Event()

    async def slow(session):
        await gate.wait()
        return True

    store.add_flush_listener(slow)
    session = store.create()
    session.append("user/message", {"text": "a"})
    flush = asyncio.create_task(store.flush(session))
    await asyncio.sleep(0)
    session.append("user/message", {"text": "appended while flushing"})
    gate.set()
    assert await flush is True
    assert hooks.flushed == [(session.id, 1)]


async def test_concurrent_checkpoints_complete_in_reverse_order_without_widening(store, hooks):
    gates: list[asyncio.Event] = []

    async def gated(session):
        gate = asyncio.Event()
        gates.append(gate)
        await gate.wait()
        return True

    store.add_flush_listener(gated)
    session = store.create()
    session.append("user/message", {"text": "a"})
    first = asyncio.create_task(store.flush(session))
    await wait_until(lambda: len(gates) == 1)
    session.append("user/message", {"text": "b"})
    session.append("user/message", {"text": "c"})
    second = asyncio.create_task(store.flush(session))
    await wait_until(lambda: len(gates) == 2)
    gates[1].set()
    assert await second is True
    gates[0].set()
    assert await first is True
    # Each observation keeps its own entry boundary: the later-completing first flush does not
    # claim the suffix it never covered, and consumers keep the maximum.
    assert hooks.flushed == [(session.id, 3), (session.id, 1)]


async def test_rejecting_listener_propagates_only_after_all_listeners_settle(store, hooks):
    order: list[str] = []
    gate = asyncio.Event()

    async def fails_fast(session):
        order.append("fail")
        raise OSError("disk on fire")

    async def slow_success(session):
        await gate.wait()
        order.append("slow done")
        return True

    def raises_synchronously(session):
        order.append("sync raise")
        raise ValueError("sync")

    store.add_flush_listener(fails_fast)
    store.add_flush_listener(slow_success)
    store.add_flush_listener(raises_synchronously)  # type: ignore[arg-type]
    session = store.create()
    flush = asyncio.create_task(store.flush(session))
    await wait_until(lambda: order == ["fail", "sync raise"])
    await asyncio.sleep(0)
    assert not flush.done()  # both failures are in, yet the flush waits for the slow listener
    gate.set()
    with pytest.raises(OSError, match="disk on fire"):  # the first registered failure
        await flush
    assert order == ["fail", "sync raise", "slow done"]
    assert hooks.flushed == []


async def test_observer_failures_are_contained(store, hooks):
    async def durable(session):
        return True

    def broken_observer(session, through_seq):
        raise RuntimeError("observer bug")

    seen = []
    store.add_flush_listener(durable)
    store.subscribe(lambda o: broken_observer(o.session, o.through_seq), Flushed)
    store.subscribe(lambda o: seen.append(o.through_seq), Flushed)
    session = store.create()
    with capture_logs() as logs:
        assert await store.flush(session) is True
    assert seen == [0]
    assert hooks.flushed == [(session.id, 0)]
    assert any(entry["event"] == "session.flushed_observer_failed" for entry in logs)


async def test_flush_of_a_detached_session_is_refused(store):
    session = store.create()
    store.detach(session)
    with pytest.raises(SessionNotLiveError):
        await store.flush(session)
    with pytest.raises(SessionNotLiveError):
        session.append("user/message", {"text": "late"})


async def test_a_stale_object_of_a_reused_id_is_refused(store):
    session = store.create(session_id="same")
    store.detach(session)
    fresh = store.create(session_id="same")
    assert store.get("same") is fresh
    with pytest.raises(SessionNotLiveError):
        await store.flush(session)


async def test_listener_disposer_is_idempotent(store):
    async def durable(session):
        return True

    remove = store.add_flush_listener(durable)
    remove()
    remove()
    assert await store.flush(store.create()) is False
