"""Live Sessions and the LiveSessionStore with the flush contract (docs/design.md section 3.6).

A :class:`LiveSession` is an append-only log with contiguous ``seq``. The
:class:`LiveSessionStore` creates, forks, resumes and detaches them, and implements ``flush``:

* ``through_seq = len(events)`` is captured at call entry;
* every flush listener runs concurrently and all of them settle before a failure propagates
  (the first registered failure is raised);
* the flush is durable only when some listener returned a literal ``True``;
* only then is the acknowledgement reported to the store's :class:`Durability` (the persistence
  coordinator, the one authority on what is committed: :meth:`LiveSessionStore.durable_length`
  reads it), and then :class:`~dsh_host._observations.Flushed` published to the store's
  subscribers and ``dsh_session_flushed`` to plugins; their failures are logged and contained.

It also takes the plugins' wake requests (:meth:`LiveSessionStore.request_wake`, the durable wake
index of :class:`dsh_hookspecs.SessionStore`): it validates them, keeps each live Session's
standing entries, and publishes :class:`~dsh_host._observations.WakeChanged` (the persistence
coordinator writes the entry with the Session's next batch).

It also takes the plugins' board posts (:meth:`LiveSessionStore.post`, the board of
:class:`dsh_hookspecs.SessionStore`) the same way, publishing
:class:`~dsh_host._observations.BoardChanged`, and their notices
(:meth:`LiveSessionStore.notify`, publishing :class:`~dsh_host._observations.Notified`,
which the coordinator writes to the outbox).

A delete (``LiveHost.delete_session``) runs inside :meth:`LiveSessionStore.deleting`: while it
lasts the Session cannot be resumed, and a load of it that was under way when it began opens
nothing (its caller hears :class:`KeyError`, as for a Session storage does not hold).

Everything the store tells host components (opened, appended, flushed, wake changed, detached,
streamed) goes through its one subscription API, :meth:`LiveSessionStore.subscribe`; the kinds and
the ordering rules among them are documented in one place, :mod:`dsh_host._observations`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Generic, Literal, TypeVar, overload

from dsh_hookspecs import (
    BoardEntry,
    Clock,
    Event,
    JSONValue,
    Notice,
    SessionHeader,
    SessionNotLiveError,
    owes_turn,
)

from .. import _json
from .._observations import (
    Appended,
    BoardChanged,
    Detached,
    Flushed,
    Notified,
    Opened,
    OpenReason,
    Publisher,
    Streamed,
    WakeChanged,
)
from .._records import HEADER_VERSION, StoredSession
from ..persistence import (
    Durability,
    check_board_post,
    check_notice,
    check_notice_key,
    check_wake_instant,
)
from ._clock import SystemClock

_T = TypeVar("_T")

FlushListener = Callable[["LiveSession"], Awaitable[bool | None]]
#: The host's own wake entry (in the place of a plugin name; no plugin may be named so): it
#: stands while a Session owes a turn (:meth:`LiveSessionStore.owe_turn`).
TURNS_WAKE = "dsh.turns"


class NothingDueError(KeyError):
    """Cold delivery asked for a Session none of whose stored wake entries is due any more
    (another host delivered it since the index was read): it stays cold."""


#: Runs on a stored log before it is resumed; raises to keep the Session cold.
StoredCheck = Callable[[Sequence[Event]], object]


class SessionHooks:
    """What the store needs from the plugin layer (the host wires the real facade in)."""

    def event_validate(self, session: LiveSession, event: Event) -> None:
        """Raise :class:`EventRejectedError` to refuse ``event``."""

    def session_opened(self, session: LiveSession, reason: OpenReason) -> None:
        """Tell plugins a Session became live (their complaints are logged, never raised)."""

    def session_flushed(self, session: LiveSession, through_seq: int) -> None:
        """Tell plugins a flush was acknowledged (failures contained)."""


class ForkBoundaryError(ValueError):
    """A fork boundary outside ``[0, len(events)]`` or inside an open turn."""


def check_fork_boundary(events: Sequence[Event], boundary: int | None) -> int:
    """The fork boundary of ``events`` (``None``: all of them), or :class:`ForkBoundaryError`.

    A boundary must be an integer in ``[0, len(events)]`` that is not inside an open turn.
    """
    if boundary is None:
        boundary = len(events)
    if type(boundary) is not int or not 0 <= boundary <= len(events):
        raise ForkBoundaryError(f"fork boundary must be an integer in [0, {len(events)}]")
    depth = 0
    for event in events[:boundary]:
        if event.type == "turn/start":
            depth += 1
        elif event.type == "turn/end":
            depth = max(0, depth - 1)
    if depth > 0:
        raise ForkBoundaryError(f"fork boundary {boundary} is inside an open turn")
    return boundary


class _EventsView(Sequence[Event]):
    """Read-only live view of a Session's event list (no copy)."""

    __slots__ = ("_events",)

    def __init__(self, events: list[Event]) -> None:
        self._events = events

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        return self._events[index]

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)


class LiveSession:
    """One live, append-only Session (implements :class:`dsh_hookspecs.Session`)."""

    __slots__ = (
        "__weakref__",
        "_board",
        "_events",
        "_header",
        "_store",
        "_view",
        "_wakes",
        "attached",
    )

    def __init__(
        self,
        store: LiveSessionStore,
        header: SessionHeader,
        seed: Sequence[Event],
        wakes: Mapping[str, int] | None = None,
        board: Mapping[tuple[str, str], BoardEntry] | None = None,
    ) -> None:
        self._store = store
        self._header = header
        self._events: list[Event] = list(seed)
        self._view = _EventsView(self._events)
        self.attached = True
        #: The standing wake entries (plugin -> at_ms); only the store changes them.
        self._wakes: dict[str, int] = dict(wakes or {})
        #: The standing board rows ((plugin, key) -> entry); only the store changes them.
        self._board: dict[tuple[str, str], BoardEntry] = dict(board or {})

    def __repr__(self) -> str:
        return f"<LiveSession {self._header.id} len={len(self._events)}>"

    @property
    def id(self) -> str:
        return self._header.id

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def events(self) -> Sequence[Event]:
        return self._view

    def append(self, type: str, data: JSONValue) -> Event:  # noqa: A002 - wire name
        return self.append_canonical(type, _json.canonical(data))

    def append_canonical(self, type: str, data: JSONValue) -> Event:  # noqa: A002 - wire name
        """:meth:`append` for data the host has just built with :func:`_json.canonical`.

        Host-internal: ``data`` must be a fresh canonical value nobody else holds (it is not
        copied again). Plugins use :meth:`append`.
        """
        return self._admit(((type, data),), copy=False)[0]

    def append_all(self, items: Sequence[tuple[str, JSONValue]]) -> list[Event]:
        """Append several events in one synchronous step, all or nothing.

        Each candidate is validated with the earlier ones already in the log (as they will be);
        if any is refused, the earlier ones are taken back before anything else sees them (no
        subscriber, no persistence, no stream) and the refusal is raised. Validators must
        therefore read the log only when called, never keep a count of it on their own.
        """
        return self._admit(items, copy=True)

    def _admit(self, items: Sequence[tuple[str, JSONValue]], *, copy: bool) -> list[Event]:
        """Validate and append ``items`` all or nothing, then publish them (:class:`Appended`).

        ``copy``: canonicalize each ``data`` first (else it is a fresh canonical value already).
        """
        if not self.attached:
            raise SessionNotLiveError(f"session {self.id} is detached")
        checked: list[tuple[str, JSONValue]] = []
        for kind, data in items:
            if kind.__class__ is not str or not kind:
                raise ValueError("event type must be a non-empty string")
            checked.append((kind, _json.canonical(data) if copy else data))
        now = self._store.clock.now_ms()
        start = len(self._events)
        candidates = [
            Event(seq=start + offset, type=kind, time=now, data=data)
            for offset, (kind, data) in enumerate(checked)
        ]
        try:
            for event in candidates:
                self._store.hooks.event_validate(self, event)
                self._events.append(event)
        except BaseException:
            del self._events[start:]
            raise
        store = self._store
        if store._wants(Appended):  # noqa: SLF001 - store and session are one unit
            for event in candidates:
                store._publish(Appended(self, event))  # noqa: SLF001 - one unit
        return candidates


class LiveSessionStore(Publisher):
    """Creates, forks, resumes, detaches and flushes live Sessions.

    Host components hear of what happens through :meth:`subscribe` (one callback, the kinds
    wanted, one handle back; see :mod:`dsh_host._observations` for the kinds and the order)."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        hooks: SessionHooks | None = None,
        loader: Callable[[str], Awaitable[StoredSession | None]] | None = None,
        plugin_names: Callable[[], Collection[str]] | None = None,
    ) -> None:
        super().__init__()
        self.clock: Clock = clock or SystemClock()
        self.hooks = hooks or SessionHooks()
        self._loader = loader
        #: The loaded plugins' names (a wake request names one); ``None``: no plugin is known.
        self._plugin_names = plugin_names
        self._durability: Durability | None = None
        self._live: dict[str, LiveSession] = {}
        self._resuming: dict[str, asyncio.Future[LiveSession]] = {}
        self._flush_listeners: list[FlushListener] = []
        #: Ids with a delete under way (how many), and the loads of each id under way.
        self._deleting: dict[str, int] = {}
        self._loads: dict[str, list[_Load]] = {}
        #: Sessions the cold path is writing: a load of one waits for the write to end.
        self._cold_writes: dict[str, asyncio.Event] = {}
        #: Session id -> how many resumes wait for its cold write to end.
        self._cold_waiters: dict[str, int] = {}

    # -- flush listeners (host-internal; subscriptions: Publisher.subscribe) -------------------
    def add_flush_listener(self, listener: FlushListener) -> Callable[[], None]:
        """Take part in every flush (the flush contract above); returns its remover."""
        self._flush_listeners.append(listener)
        return Remover(self._flush_listeners, listener)

    def publish_stream(self, session: LiveSession, payload: Mapping[str, JSONValue]) -> None:
        """Publish ``payload`` (ephemeral: streamed assistant text) as :class:`Streamed`.

        Never logged, never replayed; nothing happens for a Session that is not live here."""
        if self._live.get(session.id) is not session or not self._wants(Streamed):
            return
        self._publish(Streamed(session, payload))

    def set_loader(self, loader: Callable[[str], Awaitable[StoredSession | None]]) -> None:
        self._loader = loader

    def set_durability(self, durability: Durability) -> None:
        """The authority on what is committed (the persistence coordinator sets itself)."""
        self._durability = durability

    # -- queries ------------------------------------------------------------------------------
    def get(self, session_id: str) -> LiveSession | None:
        return self._live.get(session_id)

    def live(self) -> list[LiveSession]:
        return list(self._live.values())

    def is_live(self, session: object) -> bool:
        return isinstance(session, LiveSession) and self._live.get(session.id) is session

    def durable_length(self, session: LiveSession) -> int:
        """Events ``[0, n)`` of ``session`` acknowledged durable, as the :class:`Durability`
        answers (0 without one: nothing is proven then)."""
        durability = self._durability
        return 0 if durability is None else durability.durable_length(session)

    # -- the durable wake index ----------------------------------------------------------------
    def request_wake(self, session: LiveSession, plugin: str, at_ms: int | None) -> None:
        """:meth:`dsh_hookspecs.SessionStore.request_wake`: validate, record, publish."""
        if not self.is_live(session):
            raise SessionNotLiveError(f"session {getattr(session, 'id', session)!r} is not live")
        known = () if self._plugin_names is None else self._plugin_names()
        if type(plugin) is not str or plugin not in known:
            raise ValueError(f"a wake request must name a loaded plugin, got {plugin!r}")
        if at_ms is not None:
            check_wake_instant(at_ms)
        standing = session._wakes  # noqa: SLF001 - store and session are one unit
        if standing.get(plugin) == at_ms:
            return  # the standing entry already says so: nothing to write
        if at_ms is None:
            del standing[plugin]
        else:
            standing[plugin] = at_ms
        self._publish(WakeChanged(session, plugin, at_ms))

    def owe_turn(self, session: LiveSession, owed: bool) -> None:
        """File (due now) or clear the host's own wake entry :data:`TURNS_WAKE` of ``session``:
        it stands while the Session owes a turn (a follow-up whose turn has not started, or a
        turn that has not ended), so that after a crash cold delivery resumes the Session and
        its Agent runs the turn (or closes it). Like any entry, it is written with the events
        that caused it. A Session that is not live is left alone."""
        if not self.is_live(session):
            return
        standing = session._wakes  # noqa: SLF001 - store and session are one unit
        if owed and TURNS_WAKE not in standing:
            at_ms = standing[TURNS_WAKE] = self.clock.now_ms()
            self._publish(WakeChanged(session, TURNS_WAKE, at_ms))
        elif not owed and TURNS_WAKE in standing:
            del standing[TURNS_WAKE]
            self._publish(WakeChanged(session, TURNS_WAKE, None))

    def wakes(self, session: LiveSession) -> Mapping[str, int]:
        """:meth:`dsh_hookspecs.SessionStore.wakes`: the standing entries, read-only."""
        return MappingProxyType(session._wakes)  # noqa: SLF001 - store and session are one unit

    # -- the board ------------------------------------------------------------------------------
    def post(self, session: LiveSession, plugin: str, key: str, entry: BoardEntry | None) -> None:
        """:meth:`dsh_hookspecs.SessionStore.post`: validate, record, publish."""
        if not self.is_live(session):
            raise SessionNotLiveError(f"session {getattr(session, 'id', session)!r} is not live")
        known = () if self._plugin_names is None else self._plugin_names()
        if type(plugin) is not str or plugin not in known:
            raise ValueError(f"a board post must name a loaded plugin, got {plugin!r}")
        checked = check_board_post(key, entry)
        standing = session._board  # noqa: SLF001 - store and session are one unit
        if standing.get((plugin, key)) == checked:
            return  # the standing row already says so: nothing to write
        if checked is None:
            del standing[plugin, key]
        else:
            standing[plugin, key] = checked
        self._publish(BoardChanged(session, plugin, key, checked))

    def posted(self, session: LiveSession) -> Mapping[tuple[str, str], BoardEntry]:
        """:meth:`dsh_hookspecs.SessionStore.posted`: the standing rows, read-only."""
        return MappingProxyType(session._board)  # noqa: SLF001 - store and session are one unit

    # -- the outbox ----------------------------------------------------------------------------
    def notify(self, session: LiveSession, plugin: str, key: str, notice: Notice | None) -> None:
        """:meth:`dsh_hookspecs.SessionStore.notify`: validate, publish (the persistence
        coordinator files it with the Session's next batch)."""
        if not self.is_live(session):
            raise SessionNotLiveError(f"session {getattr(session, 'id', session)!r} is not live")
        known = () if self._plugin_names is None else self._plugin_names()
        if type(plugin) is not str or plugin not in known:
            raise ValueError(f"a notice must name a loaded plugin, got {plugin!r}")
        check_notice_key(key)
        checked = None if notice is None else check_notice(notice)
        self._publish(Notified(session, plugin, key, checked))

    # -- lifecycle ----------------------------------------------------------------------------
    def create(
        self,
        *,
        cwd: str | None = None,
        origin: Literal["subagent"] | None = None,
        delegation_depth: int | None = None,
        session_id: str | None = None,
    ) -> LiveSession:
        header = SessionHeader(
            version=HEADER_VERSION,
            id=session_id or _new_id(),
            created_at=self.clock.now_ms(),
            cwd=cwd,
            origin=origin,
            delegation_depth=delegation_depth,
        )
        return self._open(header, (), "created", 0)

    def fork(self, source: LiveSession, boundary: int | None = None) -> LiveSession:
        """A new live Session whose seed is ``source.events[:boundary]`` (default: all)."""
        if not self.is_live(source):
            raise SessionNotLiveError(f"session {source.id} is not live")
        events = source.events
        boundary = check_fork_boundary(events, boundary)
        header = SessionHeader(
            version=HEADER_VERSION,
            id=_new_id(),
            created_at=self.clock.now_ms(),
            cwd=source.header.cwd,
            parent_session=source.id,
            seed_length=boundary,
        )
        return self._open(header, tuple(events[:boundary]), "forked", 0)

    async def resume(
        self, session_id: str, *, check: StoredCheck | None = None, due_by: int | None = None
    ) -> LiveSession:
        """The live Session of ``session_id``, loading it from storage when it is cold.

        Idempotent: a live Session is returned as is; concurrent resumes share one load.
        Raises :class:`KeyError` when storage has no such Session, or it is being deleted.

        ``due_by`` (cold delivery): a Session whose stored wake entries are all later than that
        wall ms is not opened (:class:`NothingDueError`): another host delivered it meanwhile.

        ``check(stored_events)`` runs on a Session this call loads, before it is opened: what it
        raises is raised here and the Session stays cold. Such a load is not shared (a refusal
        concerns this caller only); a Session already live or being resumed is not checked.
        """
        if session_id in self._deleting:
            raise KeyError(session_id)
        live = self._live.get(session_id)
        if live is not None:
            return live
        pending = self._resuming.get(session_id)
        if pending is not None:
            return await asyncio.shield(pending)
        if self._loader is None:
            raise KeyError(session_id)
        if check is not None or due_by is not None:
            return await self._load(session_id, check, due_by)
        future: asyncio.Future[LiveSession] = asyncio.get_running_loop().create_future()
        self._resuming[session_id] = future
        try:
            session = await self._load(session_id)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # a failed resume is reported to every waiter, never unobserved
            raise
        else:
            future.set_result(session)
            return session
        finally:
            del self._resuming[session_id]

    async def _stored(self, session_id: str) -> StoredSession:
        """The stored Session, or :class:`KeyError` when storage has none or it was deleted
        while it was read (the caller must not open it)."""
        assert self._loader is not None
        while (written := self._cold_writes.get(session_id)) is not None:
            self._cold_waiters[session_id] = self._cold_waiters.get(session_id, 0) + 1
            try:
                await written.wait()  # load what the cold path wrote, never what it read
            finally:
                left = self._cold_waiters[session_id] - 1
                if left:
                    self._cold_waiters[session_id] = left
                else:
                    del self._cold_waiters[session_id]
        load = _Load()
        loads = self._loads.setdefault(session_id, [])
        loads.append(load)
        try:
            stored = await self._loader(session_id)
        finally:
            loads.remove(load)
            if not loads:
                del self._loads[session_id]
        if stored is None or load.deleted:
            raise KeyError(session_id)
        return stored

    def awaiting_cold_write(self, session_id: str) -> bool:
        """A resume of ``session_id`` waits for the cold write under way (it opens the Session
        here as soon as that write ends: what the write held for it, a lease, is its now)."""
        return session_id in self._cold_waiters

    @contextlib.contextmanager
    def writing_cold(self, session_id: str) -> Iterator[bool]:
        """Hold ``session_id`` for a cold write: ``True`` (held) unless it is live, deleting or
        being loaded; while held, a resume waits for the block to end and then loads what it
        stored. Nothing between the check and the hold awaits, so no load slips between."""
        if (
            session_id in self._live
            or session_id in self._loads
            or session_id in self._deleting
            or session_id in self._cold_writes
        ):
            yield False
            return
        written = self._cold_writes[session_id] = asyncio.Event()
        try:
            yield True
        finally:
            del self._cold_writes[session_id]
            written.set()

    @contextlib.contextmanager
    def deleting(self, session_id: str) -> Iterator[None]:
        """While the block runs, ``session_id`` is not resumed (:class:`KeyError`), and a load
        of it already under way opens nothing. The caller detaches a live one itself."""
        for load in self._loads.get(session_id, ()):
            load.deleted = True
        self._deleting[session_id] = self._deleting.get(session_id, 0) + 1
        try:
            yield
        finally:
            left = self._deleting[session_id] - 1
            if left:
                self._deleting[session_id] = left
            else:
                del self._deleting[session_id]

    async def _load(
        self, session_id: str, check: StoredCheck | None = None, due_by: int | None = None
    ) -> LiveSession:
        stored = await self._stored(session_id)
        live = self._live.get(session_id)  # a concurrent create or resume may have won meanwhile
        if live is not None:
            return live
        if due_by is not None and not any(at_ms <= due_by for at_ms in stored.wakes.values()):
            raise NothingDueError(session_id)
        if check is not None:
            check(stored.events)
        return self._open(
            stored.header,
            stored.events,
            "resumed",
            len(stored.events),
            wakes=stored.wakes,
            board=stored.board,
        )

    async def rederive_wakes(self, session_id: str) -> LiveSession:
        """Open the cold ``session_id`` with no standing wake entry or board row, for ``dsh
        reindex``.

        Its plugins see ``dsh_session_opened(session, "resumed")`` and file their entries and
        post their rows again from their fold (:meth:`request_wake`, :meth:`post`); every stored
        entry and row that none filed again is cleared.
        No Agent is created. The caller flushes the Session (which writes the rebuilt entries)
        and detaches it. Raises :class:`KeyError` when storage has no such Session and
        ``ValueError`` when it is live (its standing entries are current).
        """
        if session_id in self._live or session_id in self._resuming:
            raise ValueError(f"session {session_id} is live")
        if self._loader is None or session_id in self._deleting:
            raise KeyError(session_id)
        stored = await self._stored(session_id)
        if session_id in self._live:
            raise ValueError(f"session {session_id} is live")
        session = self._open(stored.header, stored.events, "resumed", len(stored.events))
        refiled = session._wakes  # noqa: SLF001 - store and session are one unit
        for plugin in sorted(stored.wakes.keys() - refiled.keys()):
            self._publish(WakeChanged(session, plugin, None))
        reposted = session._board  # noqa: SLF001 - store and session are one unit
        for plugin, key in sorted(stored.board.keys() - reposted.keys()):
            self._publish(BoardChanged(session, plugin, key, None))
        return session

    def detach(self, session: LiveSession) -> None:
        """Make ``session`` cold: no more appends or flushes through this object."""
        if self._live.get(session.id) is not session:
            return
        del self._live[session.id]
        session.attached = False
        self._publish(Detached(session))

    def _open(
        self,
        header: SessionHeader,
        seed: Sequence[Event],
        reason: OpenReason,
        stored_length: int,
        *,
        wakes: Mapping[str, int] | None = None,
        board: Mapping[tuple[str, str], BoardEntry] | None = None,
    ) -> LiveSession:
        if header.id in self._live:
            raise ValueError(f"session {header.id} is already live")
        session = LiveSession(self, header, seed, wakes, board)
        self._live[header.id] = session
        self._publish(Opened(session, reason, stored_length))
        if seed and seed[-1].type != "session/end-seed":
            try:
                session.append("session/end-seed", {})
            except BaseException:
                self.detach(session)  # never leave a half-opened Session live
                raise
        if reason == "resumed":
            self.owe_turn(session, owes_turn(session.events[header.owned_from :]))
        self.hooks.session_opened(session, reason)
        return session

    # -- flush ----------------------------------------------------------------------------------
    async def flush(self, session: LiveSession) -> bool:
        if not self.is_live(session):
            raise SessionNotLiveError(f"session {getattr(session, 'id', session)!r} is not live")
        through_seq = len(session.events)
        listeners = list(self._flush_listeners)
        if not listeners:
            return False
        if len(listeners) == 1:
            # The common case (just the persistence coordinator): nothing else to settle, so
            # await it directly instead of paying for a task per flush.
            durable = await listeners[0](session) is True
        else:
            results = await asyncio.gather(
                *(_call_listener(listener, session) for listener in listeners),
                return_exceptions=True,
            )
            for result in results:
                if isinstance(result, BaseException):
                    raise result
            durable = any(result is True for result in results)
        if not durable:
            return False
        # Before any subscriber hears Flushed, so each reads the advanced durable length.
        if self._durability is not None:
            self._durability.acknowledged(session, through_seq)
        self._publish_flushed(session, through_seq)
        return True

    def _publish_flushed(self, session: LiveSession, through_seq: int) -> None:
        self._publish(Flushed(session, through_seq))
        self.hooks.session_flushed(session, through_seq)


class _Load:
    """One read of a stored Session under way (a delete that begins meanwhile marks it)."""

    __slots__ = ("deleted",)

    def __init__(self) -> None:
        self.deleted = False


async def _call_listener(listener: FlushListener, session: LiveSession) -> bool | None:
    # A listener that raises synchronously must not starve the others: gather() sees its
    # exception like any other result because the call happens inside this coroutine.
    return await listener(session)


class Remover(Generic[_T]):
    """Calling it removes ``item`` from ``items`` if it is still there (flush listeners, idle
    callbacks)."""

    __slots__ = ("_item", "_items")

    def __init__(self, items: list[_T], item: _T) -> None:
        self._items = items
        self._item = item

    def __call__(self) -> None:
        if self._item in self._items:
            self._items.remove(self._item)


def _new_id() -> str:
    return uuid.uuid4().hex
