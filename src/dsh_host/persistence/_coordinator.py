"""The persistence coordinator: write-behind batches, the durable flush listener, recovery.

Per live Session it keeps a *cursor*: how many events of that Session object are known to be in
storage. The pending batch is simply ``session.events[cursor:]`` (the log is append-only and its
events are immutable, so nothing is copied). Appends arm a short batching window after which a
background write drains the batch; a flush cancels the window, drains (including events admitted
while draining) and acknowledges with ``True``.

Recovery: whenever the cursor is unknown (the first initialization failed, or any write raised,
so storage may or may not hold it), the next drain *reconciles* against storage first: it loads
the stored Session, checks that the header and every stored event are identical to the live
prefix, adopts the stored length as the cursor and writes only the missing suffix. A stored
prefix that differs is refused with :class:`PrefixDivergedError` and never overwritten; a Session
that was materialized once and has vanished from storage is refused too.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog

from dsh_hookspecs import Clock, Session, TimerHandle

from .._records import events_identical, headers_identical
from ._backend import Backend, PrefixDivergedError, StorageError, StoredSession

if TYPE_CHECKING:  # annotations only: _session imports this package
    from .._session import LiveSession, OpenReason, SessionStore

log = structlog.get_logger(__name__)


class _State:
    __slots__ = (
        "cursor",
        "lock",
        "materialized",
        "timer",
        "write_failed",
    )

    def __init__(self, cursor: int | None, materialized: bool) -> None:
        #: Events ``[0, cursor)`` are known to be stored; ``None`` = unknown, reconcile first.
        self.cursor = cursor
        #: Storage held this Session at some point (a later absence is data loss, not "new").
        self.materialized = materialized
        self.lock = asyncio.Lock()
        self.timer: TimerHandle | None = None
        self.write_failed = False


class Coordinator:
    """Connects a :class:`SessionStore` to a :class:`Backend`."""

    def __init__(
        self,
        store: SessionStore,
        backend: Backend,
        *,
        clock: Clock,
        batch_delay: float = 0.005,
    ) -> None:
        self.store = store
        self.backend = backend
        self.clock = clock
        self.batch_delay = batch_delay
        self._states: weakref.WeakKeyDictionary[LiveSession, _State] = weakref.WeakKeyDictionary()
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False
        self._unsubscribe: list[Callable[[], None]] = [
            store.add_open_observer(self._on_open),
            store.add_append_observer(self._on_append),
            store.add_flush_listener(self._on_flush),
            store.add_detach_observer(self._on_detach),
        ]
        store.set_loader(self.backend.load)

    # -- store observers ------------------------------------------------------------------
    def _on_open(self, session: LiveSession, reason: OpenReason, stored_length: int) -> None:
        if reason == "resumed":
            self._states[session] = _State(cursor=stored_length, materialized=True)
        else:
            # Created and forked Sessions are written with their header on the first drain.
            self._states[session] = _State(cursor=None, materialized=False)

    def _on_append(self, session: LiveSession, _event: object) -> None:
        state = self._states.get(session)
        if state is None or self._closed:
            return
        state.write_failed = False  # a new event resumes paused automatic retries
        if state.timer is None:
            state.timer = self.clock.call_later(
                self.batch_delay, lambda: self._start_background(session)
            )

    def _on_detach(self, session: LiveSession) -> None:
        state = self._states.pop(session, None)
        if state is not None and state.timer is not None:
            state.timer.cancel()

    async def _on_flush(self, session: LiveSession) -> bool:
        state = self._states.get(session)
        if state is None:
            raise StorageError(f"session {session.id} is not tracked by persistence")
        if state.timer is not None:
            state.timer.cancel()
            state.timer = None
        await self._drain(session, state)
        return True

    # -- background write-behind ------------------------------------------------------------
    def _start_background(self, session: LiveSession) -> None:
        state = self._states.get(session)
        if state is None:
            return
        state.timer = None
        if self._closed or state.write_failed:
            return
        task = asyncio.get_running_loop().create_task(self._background_drain(session, state))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _background_drain(self, session: LiveSession, state: _State) -> None:
        try:
            await self._drain(session, state)
        except Exception as exc:
            # Logged once; the batch stays (it is the unwritten log range) and automatic
            # retries pause until a new event or an explicit flush.
            state.write_failed = True
            log.warning(
                "persistence.background_write_failed",
                session_id=session.id,
                error=str(exc),
                error_type=type(exc).__name__,
            )

    # -- the write path -----------------------------------------------------------------------
    async def _drain(self, session: LiveSession, state: _State) -> None:
        async with state.lock:
            while True:
                if state.cursor is None:
                    await self._reconcile(session, state)
                assert state.cursor is not None
                end = len(session.events)
                if state.cursor >= end and state.materialized:
                    return
                start = state.cursor
                batch = session.events[start:end]
                header = session.header if not state.materialized else None
                try:
                    await self.backend.append(session.id, start, batch, header)
                except BaseException:
                    # The write may or may not have committed: re-read storage next time.
                    state.cursor = None
                    raise
                state.materialized = True
                state.cursor = end

    async def _reconcile(self, session: LiveSession, state: _State) -> None:
        stored = await self.backend.load(session.id)
        if stored is None:
            if state.materialized:
                raise StorageError(f"session {session.id} lost its persisted log")
            state.cursor = 0
            return
        check_stored_prefix(session, stored)
        state.materialized = True
        state.cursor = len(stored.events)
        log.info(
            "persistence.reconciled",
            session_id=session.id,
            stored=len(stored.events),
            live=len(session.events),
        )

    # -- lifecycle ------------------------------------------------------------------------------
    async def close(self) -> None:
        """Stop observing and wait for background writes (callers flush first)."""
        self._closed = True
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        for state in list(self._states.values()):
            if state.timer is not None:
                state.timer.cancel()
                state.timer = None
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def inspect(self, session_id: str) -> StoredSession | None:
        """The stored header and events of ``session_id`` (for identity checks and cold history)."""
        return await self.backend.load(session_id)


def check_stored_prefix(session: Session, stored: StoredSession) -> None:
    """Raise :class:`PrefixDivergedError` unless ``stored`` is a prefix of the live ``session``.

    The headers must be identical (an absent ``delegationDepth`` counts as 0), storage must not
    hold more events than the live log, and every stored event must equal the live event at its
    index.
    """
    if not headers_identical(stored.header, session.header):
        raise PrefixDivergedError(
            f"session {session.id}: the stored header differs from the live Session; "
            "refusing to overwrite it"
        )
    live = session.events
    if len(stored.events) > len(live):
        raise PrefixDivergedError(
            f"session {session.id}: storage holds {len(stored.events)} events but the live "
            f"Session has {len(live)}; refusing to overwrite it"
        )
    for index, stored_event in enumerate(stored.events):
        if not events_identical(stored_event, live[index]):
            raise PrefixDivergedError(
                f"session {session.id}: stored event {index} differs from the live "
                "Session; refusing to overwrite it"
            )
