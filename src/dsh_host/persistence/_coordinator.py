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

Wake requests (the durable wake index): a request changes the Session's pending wake entries
and arms the same batching window; a drain takes every pending entry together with the events
``[cursor, len(events))`` and hands both to one :meth:`Backend.append`, so an entry is stored in
the transaction of the events that were in the log when it was requested (or later ones), never
before them. A drain with no event but a pending entry still writes; a failed write puts the
entries back (newer requests win). A drain with no changed entry passes no wakes at all.

Notices (:class:`~dsh_host._observations.Notified`) too: each becomes one
:class:`~._outbox.OutboxChange` for the channels :attr:`Coordinator.channels` names at the write
(none: it writes nothing), handed to the same append as ``outbox``.

Board posts (:class:`~dsh_host._observations.BoardChanged`) are batched the same way, newest
post per ``(plugin, key)`` winning, and handed to the same :meth:`Backend.append` as ``board``
(only when some row changed); a failed write puts them back like wake entries, so the board and
the log agree after any crash.

Names: per live Session a :class:`~dsh_host._names.NameTracker` reads each event once (at the
drain that writes it) and the drain passes ``name`` only when the Session's name changed from
the one storage holds: none for a created or forked Session, the name of the stored prefix for
a resumed one (derived at its first drain, or told by :meth:`Coordinator.stored_name_is`).

Delete: :meth:`Coordinator.discard` drops a detached Session's pending wake entries, board rows
and name and waits for its write in progress; nothing of it is written again.

It is the one authority on "what is committed": :meth:`Coordinator.durable_length` is how many
leading events of a live Session object are acknowledged durable (the stored length when it was
resumed, 0 for a created or forked one until its first flush; then the maximum ``through_seq``
of every acknowledged flush, so flushes completing out of order never move it back), and
:meth:`Coordinator.proven_prefix` is how much of what storage holds is proven identical to it.

This module sits on the storage floor, below the Sessions: it types the live Sessions against
:class:`dsh_hookspecs.Session` and the store it observes against :class:`SessionSource`. It
subscribes to the store's observations (:mod:`dsh_host._observations`) first, when the host
builds the store, so it has taken in each of them before any other subscriber.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Generic, Protocol, TypeVar

import structlog

from dsh_hookspecs import BoardEntry, Clock, Notice, Session, TaskSet, TimerHandle

from .._names import NameTracker
from .._observations import Appended, BoardChanged, Detached, Notified, Opened, WakeChanged
from .._records import events_identical, headers_identical
from ._backend import (
    Backend,
    PrefixDivergedError,
    StorageConflictError,
    StorageError,
    StoredSession,
)
from ._outbox import OutboxChange
from ._write import Write

log = structlog.get_logger(__name__)


class Durability(Protocol):
    """What a store asks about and tells of durability (the :class:`Coordinator` is one)."""

    def durable_length(self, session: Session) -> int:
        """Events ``[0, n)`` of this live Session object are acknowledged durable."""
        ...

    def acknowledged(self, session: Session, through_seq: int) -> None:
        """A flush of ``session`` captured at ``through_seq`` was acknowledged durable."""
        ...


#: The observations the coordinator subscribes to.
Observed = Appended | Opened | WakeChanged | BoardChanged | Notified | Detached


class SessionSource(Protocol):
    """What the coordinator needs of a Session store (the host's ``LiveSessionStore``).

    ``subscribe`` and ``add_flush_listener`` each return a callable that ends what they began.
    """

    def subscribe(
        self,
        callback: Callable[[Observed], object],
        kinds: tuple[
            type[Appended],
            type[Opened],
            type[WakeChanged],
            type[BoardChanged],
            type[Notified],
            type[Detached],
        ],
    ) -> Callable[[], None]: ...

    def add_flush_listener(
        self, listener: Callable[[Session], Awaitable[bool | None]]
    ) -> Callable[[], None]: ...

    def set_loader(self, loader: Callable[[str], Awaitable[StoredSession | None]]) -> None: ...

    def set_durability(self, durability: Durability) -> None: ...


class _State:
    __slots__ = (
        "abandoned",
        "board",
        "cursor",
        "deleted",
        "detached",
        "durable",
        "lock",
        "materialized",
        "name_base",
        "names",
        "outbox",
        "stored_name",
        "timer",
        "wakes",
        "write_failed",
    )

    def __init__(self, cursor: int | None, materialized: bool, durable: int) -> None:
        #: Events ``[0, cursor)`` are known to be stored; ``None`` = unknown, reconcile first.
        self.cursor = cursor
        #: Storage held this Session at some point (a later absence is data loss, not "new").
        self.materialized = materialized
        #: Events ``[0, durable)`` are acknowledged durable (:meth:`Coordinator.durable_length`).
        self.durable = durable
        #: The store detached the Session: no more background writes start for it.
        self.detached = False
        self.lock = asyncio.Lock()
        self.timer: TimerHandle | None = None
        self.write_failed = False
        #: Wake entries requested but not yet handed to a write (plugin -> at_ms or None).
        self.wakes: dict[str, int | None] = {}
        #: Board rows posted but not yet handed to a write ((plugin, key) -> entry or None).
        self.board: dict[tuple[str, str], BoardEntry | None] = {}
        #: Notices filed but not yet handed to a write ((plugin, key) -> notice or None).
        self.outbox: dict[tuple[str, str], Notice | None] = {}
        #: The Session's name as far as the drains have read its log.
        self.names = NameTracker()
        #: The name storage holds (``None``: none).
        self.stored_name: str | None = None
        #: When positive, storage holds the name of the first ``name_base`` events (a resumed
        #: Session): :attr:`stored_name` is derived from them at the next drain.
        self.name_base = 0
        #: The Session was deleted: nothing of it is written any more.
        self.deleted = False
        #: The last write's caller was cancelled while it was under way: it may still land, and
        #: a write after it that conflicts is then retried from what storage holds.
        self.abandoned = False


class Coordinator:
    """Connects a Session store (:class:`SessionSource`) to a :class:`Backend`."""

    def __init__(
        self,
        store: SessionSource,
        backend: Backend,
        *,
        clock: Clock,
        batch_delay: float = 0.005,
    ) -> None:
        self.store = store
        self.backend = backend
        self.clock = clock
        self.batch_delay = batch_delay
        self._states: _ByIdentity[Session, _State] = _ByIdentity()
        #: Per exact live Session object: ``(durable length at the proof, proven stored
        #: length)``. A proven prefix stays proven (the log is append-only and storage only
        #: grows by the live events), so a proof is reused while no flush has moved the durable
        #: length, or while it covers the page.
        self._proofs: weakref.WeakKeyDictionary[Session, tuple[int, int]] = (
            weakref.WeakKeyDictionary()
        )
        self._background = TaskSet("persistence.background_drain")
        #: The notification channels an outbox entry is filed for (the host sets them): none
        #: by default, and then a notice writes nothing.
        self.channels: Callable[[], tuple[str, ...]] = tuple
        #: Told after a write that filed outbox entries (the send worker looks at once).
        self.outbox_filed: Callable[[], None] = _nothing
        self._closed = False
        self._unsubscribe: list[Callable[[], None]] = [
            store.subscribe(
                self._observe, (Appended, Opened, WakeChanged, BoardChanged, Notified, Detached)
            ),
            store.add_flush_listener(self._on_flush),
        ]
        store.set_loader(self.backend.load)
        store.set_durability(self)

    # -- what is committed ------------------------------------------------------------------
    def durable_length(self, session: Session) -> int:
        """Events ``[0, n)`` of this live Session object are acknowledged durable.

        The stored length when it was resumed, 0 for a created or forked Session until its
        first acknowledged flush, then the maximum ``through_seq`` of every acknowledged flush
        (an unacknowledged or failed flush never moves it). 0 for a Session this coordinator
        does not know.
        """
        state = self._states.get(session)
        return 0 if state is None else state.durable

    def acknowledged(self, session: Session, through_seq: int) -> None:
        """The store's report of an acknowledged flush (before any subscriber hears ``Flushed``)."""
        state = self._states.get(session)
        if state is not None and through_seq > state.durable:
            state.durable = through_seq

    async def proven_prefix(self, session: Session, *, needed: int | None = None) -> int:
        """Length of the stored prefix proven identical to ``session`` (0 when none is proven).

        The stored header must match (an absent ``delegationDepth`` counts as 0) and every stored
        event must equal the live event at its index; a stored log longer than the live one, any
        mismatch, no stored Session or a failed read proves nothing (the reason is logged).
        ``needed``: the end of the caller's range. A previous proof of this Session object is
        reused when its :meth:`durable_length` has not moved since, or when it covers ``needed``.
        """
        durable = self.durable_length(session)
        cached = self._proofs.get(session)
        if cached is not None:
            proven_at, proven = cached
            if proven_at == durable or (needed is not None and proven >= needed):
                return proven
        proven = await self._prove(session)
        if proven:
            self._proofs[session] = (durable, proven)
        return proven

    async def _prove(self, session: Session) -> int:
        # The log event names are the ones history pages logged before this proof moved here.
        try:
            stored = await self.inspect(session.id)
        except Exception as exc:
            log.warning("web.history_inspect_failed", session_id=session.id, error=str(exc))
            return 0
        if stored is None:
            log.info("web.history_not_stored", session_id=session.id)
            return 0
        try:
            check_stored_prefix(session, stored)
        except PrefixDivergedError as exc:
            log.warning("web.history_prefix_unproven", session_id=session.id, reason=str(exc))
            return 0
        return len(stored.events)

    # -- store observations ---------------------------------------------------------------
    def _observe(self, observation: Observed) -> None:
        match observation:
            case Appended(session=session):
                self._on_append(session)
            case Opened(session=session, reason=reason, stored_length=stored_length):
                self._on_open(session, reason, stored_length)
            case WakeChanged(session=session, plugin=plugin, at_ms=at_ms):
                self._on_wake(session, plugin, at_ms)
            case BoardChanged(session=session, plugin=plugin, key=key, entry=entry):
                self._on_board(session, plugin, key, entry)
            case Notified(session=session, plugin=plugin, key=key, notice=notice):
                self._on_notice(session, plugin, key, notice)
            case Detached(session=session):
                self._on_detach(session)

    def _on_open(self, session: Session, reason: str, stored_length: int) -> None:
        if reason == "resumed":
            state = self._states[session] = _State(
                cursor=stored_length, materialized=True, durable=stored_length
            )
            state.name_base = stored_length
        else:
            # Created and forked Sessions are written with their header on the first drain.
            self._states[session] = _State(cursor=None, materialized=False, durable=0)

    def _on_wake(self, session: Session, plugin: str, at_ms: int | None) -> None:
        state = self._states.get(session)
        if state is None:
            return
        state.wakes[plugin] = at_ms
        self._on_append(session)

    def _on_board(self, session: Session, plugin: str, key: str, entry: BoardEntry | None) -> None:
        state = self._states.get(session)
        if state is None:
            return
        state.board[plugin, key] = entry
        self._on_append(session)

    def _on_notice(self, session: Session, plugin: str, key: str, notice: Notice | None) -> None:
        state = self._states.get(session)
        if state is None:
            return
        state.outbox[plugin, key] = notice
        self._on_append(session)

    def outbox_changes(
        self, notices: Mapping[tuple[str, str], Notice | None]
    ) -> list[OutboxChange]:
        """The storage changes of ``notices``: each filed for the channels configured now (none
        configured: the notice is dropped), a withdrawal as is."""
        channels = self.channels()
        now_ms = self.clock.now_ms()
        changes = []
        for (plugin, key), notice in notices.items():
            if notice is None:
                changes.append(OutboxChange(plugin, key, None))
            elif channels:
                due_ms = max(now_ms, notice.not_before_ms or now_ms)
                changes.append(OutboxChange(plugin, key, notice, channels, due_ms))
        return changes

    def _on_append(self, session: Session) -> None:
        state = self._states.get(session)
        if state is None or self._closed:
            return
        state.write_failed = False  # a new event resumes paused automatic retries
        if state.timer is None:
            state.timer = self.clock.call_later(
                self.batch_delay, lambda: self._start_background(session)
            )

    def _on_detach(self, session: Session) -> None:
        # The state stays while the object lives: its durable length still answers.
        state = self._states.get(session)
        if state is None:
            return
        state.detached = True
        if state.timer is not None:
            state.timer.cancel()
            state.timer = None

    async def _on_flush(self, session: Session) -> bool:
        state = self._states.get(session)
        if state is None:
            raise StorageError(f"session {session.id} is not tracked by persistence")
        if state.timer is not None:
            state.timer.cancel()
            state.timer = None
        await self._drain(session, state)
        if state.deleted:
            raise StorageError(f"session {session.id} was deleted")
        return True

    # -- names and deletes ------------------------------------------------------------------------
    def stored_name_is(self, session: Session, name: str | None) -> None:
        """Storage holds ``name`` for ``session`` (``dsh reindex`` reads it from the listing):
        the next drain stores the Session's name when it differs."""
        state = self._states.get(session)
        if state is not None:
            state.stored_name = name
            state.name_base = 0

    async def discard(self, session: Session) -> None:
        """Write nothing of ``session`` (detached, being deleted) ever again: drop its pending
        wake entries, board rows and name, and wait for its write in progress (if any)."""
        state = self._states.get(session)
        if state is None:
            return
        state.deleted = state.detached = True
        if state.timer is not None:
            state.timer.cancel()
            state.timer = None
        state.wakes, state.board, state.outbox = {}, {}, {}
        async with state.lock:  # a write already under way ends before the caller goes on
            pass

    # -- background write-behind ------------------------------------------------------------
    def _start_background(self, session: Session) -> None:
        state = self._states.get(session)
        if state is None or state.detached:
            return
        state.timer = None
        if self._closed or state.write_failed:
            return
        self._background.spawn(self._background_drain(session, state))

    async def _background_drain(self, session: Session, state: _State) -> None:
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
    async def _drain(self, session: Session, state: _State) -> None:
        async with state.lock:
            while not state.deleted:
                if state.cursor is None:
                    await self._reconcile(session, state)
                assert state.cursor is not None
                end = len(session.events)
                wakes, board, notices = state.wakes, state.board, state.outbox
                name = _name_change(session, state, end)
                if (
                    state.cursor >= end
                    and state.materialized
                    and not wakes
                    and not board
                    and not notices
                    and name is None
                ):
                    return
                start = state.cursor
                batch = session.events[start:end]
                header = session.header if not state.materialized else None
                state.wakes, state.board, state.outbox = {}, {}, {}
                outbox = self.outbox_changes(notices) if notices else []
                try:
                    write = Write(
                        session.id,
                        start,
                        batch,
                        header,
                        wakes,
                        board=board,
                        name=name,
                        outbox=outbox,
                    )
                    await self.backend.append(write)
                except BaseException as exc:
                    # The write may or may not have committed: re-read storage next time, and
                    # write the entries and rows again with the next batch (newer ones win).
                    state.cursor = None
                    state.wakes = {**wakes, **state.wakes}
                    state.board = {**board, **state.board}
                    state.outbox = {**notices, **state.outbox}
                    if isinstance(exc, StorageConflictError) and state.abandoned:
                        # The write a cancelled caller left under way landed after this one's
                        # reconcile read storage: read again (the reconcile proves what it
                        # stored is this log's prefix) and write what is still missing.
                        state.abandoned = False
                        continue
                    state.abandoned = isinstance(exc, asyncio.CancelledError)
                    raise
                state.abandoned = False
                state.materialized = True
                state.cursor = end
                if name is not None:
                    state.stored_name = name
                if write.files_notices:
                    self.outbox_filed()

    async def _reconcile(self, session: Session, state: _State) -> None:
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
        await self._background.join()

    async def inspect(self, session_id: str) -> StoredSession | None:
        """The stored header and events of ``session_id`` (for identity checks and cold history)."""
        return await self.backend.load(session_id)


def _nothing() -> None:
    pass


def _name_change(session: Session, state: _State, end: int) -> str | None:
    """The Session's name through ``events[:end]`` when storage holds another one, else
    ``None`` (a name is never cleared)."""
    tracker = state.names
    if state.name_base:  # resumed: storage holds the name of its stored prefix
        state.stored_name = tracker.feed(session.events, state.name_base)
        state.name_base = 0
    name = tracker.feed(session.events, end)
    return name if name is not None and name != state.stored_name else None


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


_K = TypeVar("_K")
_V = TypeVar("_V")


class _ByIdentity(Generic[_K, _V]):
    """A map keyed by object identity that holds its keys weakly, like
    :class:`weakref.WeakKeyDictionary`, but whose lookups build no weak reference (every append
    and flush of every live Session looks its state up)."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[int, tuple[weakref.ref[_K], _V]] = {}

    def get(self, key: _K) -> _V | None:
        entry = self._data.get(id(key))
        return entry[1] if entry is not None and entry[0]() is key else None

    def __getitem__(self, key: _K) -> _V:
        entry = self._data.get(id(key))
        if entry is None or entry[0]() is not key:
            raise KeyError(key)
        return entry[1]

    def __setitem__(self, key: _K, value: _V) -> None:
        data, ident = self._data, id(key)

        def gone(ref: weakref.ref[_K]) -> None:
            # Runs before the key's memory (and so its id) can be reused.
            entry = data.get(ident)
            if entry is not None and entry[0] is ref:
                del data[ident]

        data[ident] = (weakref.ref(key, gone), value)

    def values(self) -> list[_V]:
        return [value for ref, value in self._data.values() if ref() is not None]
