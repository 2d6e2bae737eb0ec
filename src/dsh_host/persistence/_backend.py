"""The storage backend interface and its error hierarchy.

A backend stores, per Session id, one header and a contiguous append-only event list. It knows
nothing about live Sessions: the :class:`~dsh_host.persistence.Coordinator` decides what to write.

Errors::

    StorageError                 any backend failure (driver errors are mapped to this)
    ├── StorageConflictError     an append whose start is not the stored length, or a create of
    │                            an id that exists
    ├── StorageCorruptError      the store on disk cannot be trusted (reported at open)
    ├── StorageReadOnlyError     the store can be read but not written (reported at open)
    ├── StorageBehindError       the store holds less than was acknowledged (reported at open)
    ├── DataDirLockedError       the data folder is held by another live dsh process
    ├── PrefixDivergedError      a stored prefix differs from the live Session (never overwritten)
    └── SessionLiveElsewhereError  another live host holds the Session's lease
        └── StorageFencedError     the database refused an append: a newer lease epoch exists

The stored-record types (:class:`StoredSession`, :class:`StoredSummary`, :class:`DamagedSummary`,
:class:`SessionListing`) live on the records floor (``dsh_host._records``), below both storage
and Sessions; they are re-exported here.

Every backend runs the same request checks before touching its store (:func:`encode_append`)
and decides conflicts with what is stored by the same rules (:func:`check_position`).

Leases (issue 11 item 5): a backend several processes share (PostgreSQL) also offers
:class:`Leases` as its ``leases`` attribute (:func:`leases_of`). A Session is live on at most
one host: the host acquires its lease before making it live, renews it, and releases it when it
goes cold. Every append carries the holder's epoch (a fencing token) and the database refuses one
whose epoch is no longer current. SQLite and memory keep their single-process lock and have none.

The durable wake index (issue 11): besides its log, a stored Session holds at most one wake
entry per plugin (``plugin -> at_ms``), written only by :meth:`Backend.append` in the same
transaction as that batch's events, so the index never runs ahead of or behind the log.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Protocol, TypeVar, runtime_checkable

from dsh_hookspecs import (
    BOARD_DATA_MAX_BYTES,
    BOARD_KEY_MAX_CHARS,
    WAKE_MAX_MS,
    WAKE_MIN_MS,
    BoardEntry,
    Event,
    JSONValue,
    SessionHeader,
)

from .. import _json, _records

# Re-exported: the stored-record types live on the records floor, below storage and Sessions.
from .._records import DamagedSummary as DamagedSummary  # noqa: PLC0414
from .._records import SessionListing as SessionListing  # noqa: PLC0414
from .._records import StoredSession as StoredSession  # noqa: PLC0414
from .._records import StoredSummary as StoredSummary  # noqa: PLC0414
from .._records import damaged_sessions as damaged_sessions  # noqa: PLC0414


class StorageError(Exception):
    """A storage operation failed."""


class StorageConflictError(StorageError):
    """An optimistic append or create did not match what is stored."""


class StorageCorruptError(StorageError):
    """The store is corrupt or truncated; it is reported, never silently replaced."""


class StorageReadOnlyError(StorageError):
    """The store can be read but not written: refused at open, before anything is served."""


class StorageBehindError(StorageError):
    """The store holds less than was acknowledged before: commits were lost outside dsh."""


class DataDirLockedError(StorageError):
    """The data folder is already opened by another live dsh process."""


class PrefixDivergedError(StorageError):
    """The stored prefix of a Session differs from the live Session."""


class SessionLiveElsewhereError(StorageError):
    """Another live host holds this Session's lease (the Web API answers 409
    ``session_live_elsewhere``)."""


class StorageFencedError(SessionLiveElsewhereError):
    """The database refused an append: a newer lease epoch exists, so this host lost the
    Session (it was paused or cut off longer than its lease). Nothing of it was written."""


#: The wake entries of a batch that changes none (the default of :meth:`Backend.append`).
NO_WAKES: Final[Mapping[str, int | None]] = MappingProxyType({})

#: One due entry of the wake index: ``(session_id, plugin, at_ms)``.
DueWake = tuple[str, str, int]


class Backend(Protocol):
    """Async storage of Session headers and event logs."""

    name: str

    async def open(self) -> None:
        """Acquire resources; report a corrupt store with :class:`StorageCorruptError`."""
        ...

    async def close(self) -> None:
        """Release resources. Idempotent."""
        ...

    async def load(self, session_id: str) -> StoredSession | None:
        """The stored header, events and wake entries of ``session_id``, or ``None``."""
        ...

    async def list_sessions(self) -> Sequence[StoredSummary]:
        """Every stored Session, oldest ``createdAt`` first.

        A row that cannot be decoded does not fail the listing: the answer is then a
        :class:`SessionListing` naming it in ``damaged`` (see :func:`damaged_sessions`), and
        :meth:`load` of that id raises :class:`StorageCorruptError`.
        """
        ...

    async def append(
        self,
        session_id: str,
        start: int,
        events: Sequence[Event],
        header: SessionHeader | None = None,
        wakes: Mapping[str, int | None] = NO_WAKES,
    ) -> None:
        """Atomically store ``events`` (whose seqs are ``start, start+1, ...``) and ``wakes``.

        With ``header``, the Session is created in the same transaction (``start`` must be 0 and
        the id must be absent). Without it, the Session must exist and its stored length must
        equal ``start``. Otherwise :class:`StorageConflictError` and nothing is written. When the
        call returns, the write is durable to the backend's promise (SQLite: fsynced).

        ``wakes`` (plugin -> epoch ms, or ``None`` to remove that plugin's entry) is applied to
        the Session's wake entries in the same transaction: all of it with the events, or none.
        An append with no events and only wakes is valid (it still checks ``start``).
        """
        ...

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        """At most ``limit`` wake entries with ``at_ms <= now_ms``, earliest first (ties by
        Session id, then plugin), as ``(session_id, plugin, at_ms)``."""
        ...

    async def earliest_wake(self) -> int | None:
        """The smallest ``at_ms`` of every stored wake entry, or ``None`` when there is none."""
        ...


class Leases(Protocol):
    """One live owner per Session across hosts sharing a database (issue 11 item 5).

    The lease of a Session is ``(owner, epoch, expiry)`` in the database. :meth:`acquire` takes
    it when it is free, expired or already this process's, and makes the epoch larger;
    :meth:`renew` (every :attr:`renew_interval` seconds) extends every lease held; a lease found
    taken over, on renewal or because the database refused an append, is reported once to the
    listener set with :meth:`on_lost`. A Session created by this process is leased by it.
    """

    #: Seconds between renewals (a third of the lease's time to live).
    renew_interval: float

    async def acquire(self, session_id: str, *, skip_locked: bool = False) -> None:
        """Hold the lease of ``session_id`` (nothing when no such Session is stored).

        Raises :class:`SessionLiveElsewhereError` while another live host holds it, and, with
        ``skip_locked``, also when another host is claiming or writing it at this instant (so
        hosts looking for due wakes share the work instead of waiting on each other).
        """
        ...

    async def release(self, session_id: str) -> None:
        """Give the lease up (the Session went cold here). Idempotent."""
        ...

    async def renew(self) -> Sequence[str]:
        """Extend every lease held; the ids of those found lost (also told to the listener)."""
        ...

    def on_lost(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` when a lease held here is found taken over."""
        ...

    def held(self, session_id: str) -> bool:
        """Whether this process holds the lease of ``session_id``."""
        ...

    async def live_elsewhere(self, session_id: str) -> bool:
        """Whether another host holds an unexpired lease of ``session_id`` (a read only)."""
        ...


@runtime_checkable
class LeasedBackend(Protocol):
    """A backend whose Sessions are leased (it has a ``leases`` attribute)."""

    leases: Leases


def leases_of(backend: object) -> Leases | None:
    """The :class:`Leases` of ``backend``, or ``None`` for a single-process backend."""
    return backend.leases if isinstance(backend, LeasedBackend) else None


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class EncodedAppend:
    """An append request that passed :func:`encode_append`."""

    #: The header in stored form (absent ``delegationDepth`` is 0), or ``None``.
    header: SessionHeader | None
    #: ``header`` as strict JSON text.
    header_json: str | None
    #: Each event's ``data`` as strict JSON text.
    data_json: tuple[str, ...]
    #: The checked wake entries of the batch, sorted by plugin (``None`` removes one).
    wakes: tuple[tuple[str, int | None], ...] = ()


def _storable_text(value: JSONValue, what: str) -> str:
    text = _json.dumps(value)
    if not text.isascii():  # ASCII is always valid UTF-8; only the rest can hold a lone surrogate
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _json.JSONError(f"{what} is not encodable as UTF-8: {exc.reason}") from None
    return text


def _check_int64(value: int, what: str) -> None:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _records.RecordError(f"{what} {value} does not fit in 64 bits")


def check_wake_instant(at_ms: object) -> int:
    """``at_ms`` when it is an integer (not a bool) in ``[WAKE_MIN_MS, WAKE_MAX_MS]``, else
    ``ValueError`` naming the range."""
    if type(at_ms) is not int or not WAKE_MIN_MS <= at_ms <= WAKE_MAX_MS:
        raise ValueError(
            f"a wake instant must be an integer of epoch milliseconds in "
            f"[{WAKE_MIN_MS}, {WAKE_MAX_MS}], got {at_ms!r}"
        )
    return at_ms


_BOARD_KIND = re.compile(r"[a-z0-9_]{1,32}")


def check_board_post(key: object, entry: object) -> BoardEntry | None:
    """``entry`` when ``key`` and it make a valid board post (:meth:`SessionStore.post
    <dsh_hookspecs.SessionStore.post>`), else ``ValueError`` saying what is wrong. ``entry``
    comes back with its ``data`` canonical (a copy nobody else holds)."""
    if type(key) is not str or not 0 < len(key) <= BOARD_KEY_MAX_CHARS:
        raise ValueError(
            f"a board key must be a string of 1 to {BOARD_KEY_MAX_CHARS} characters, got {key!r}"
        )
    if entry is None:
        return None
    if not isinstance(entry, BoardEntry):
        raise ValueError(f"a board entry must be a BoardEntry or None, got {entry!r}")  # noqa: TRY004
    if type(entry.kind) is not str or not _BOARD_KIND.fullmatch(entry.kind):
        raise ValueError(
            f"a board entry's kind must be 1 to 32 characters of a-z, 0-9 and _, got {entry.kind!r}"
        )
    check_wake_instant(entry.at_ms)
    try:
        data = _json.canonical(entry.data)
    except _json.JSONError as exc:
        raise ValueError(f"a board entry's data must be JSON: {exc}") from None
    size = len(_json.dumps(data).encode("utf-8"))
    if size > BOARD_DATA_MAX_BYTES:
        raise ValueError(
            f"a board entry's data must be at most {BOARD_DATA_MAX_BYTES} bytes of JSON, got {size}"
        )
    return BoardEntry(kind=entry.kind, at_ms=entry.at_ms, data=data)


def _checked_wakes(wakes: Mapping[str, int | None]) -> tuple[tuple[str, int | None], ...]:
    checked: list[tuple[str, int | None]] = []
    for plugin, at_ms in wakes.items():
        if type(plugin) is not str or not plugin:
            raise ValueError(f"a wake entry needs a non-empty plugin name, got {plugin!r}")
        checked.append((plugin, None if at_ms is None else check_wake_instant(at_ms)))
    return tuple(sorted(checked))


def encode_append(
    session_id: str,
    start: int,
    events: Sequence[Event],
    header: SessionHeader | None,
    wakes: Mapping[str, int | None] = NO_WAKES,
) -> EncodedAppend:
    """Check an append request's own shape and encode it as it is stored.

    A malformed request is the caller's bug, not a storage outcome: it raises ``ValueError``
    (a :class:`~dsh_host._records.RecordError` for a header or event that the strict codecs
    would refuse on load, a :class:`~dsh_host._json.JSONError` for data that is not strict,
    UTF-8-encodable JSON) and nothing is written. Conflicts with what is stored are decided by
    :func:`check_position`.
    """
    if not session_id:
        raise ValueError("session id must be a non-empty string")
    if type(start) is not int or start < 0:
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    data_json: list[str] = []
    for offset, event in enumerate(events):
        if type(event.seq) is not int or event.seq != start + offset:
            raise ValueError(
                f"event seqs must run from {start} contiguously; "
                f"position {offset} has seq {event.seq!r}"
            )
        # The envelope rules of _records.event_from_json, checked in place (hot path).
        if type(event.type) is not str or not event.type:
            raise _records.RecordError("event.type must be a non-empty string")
        if type(event.time) is not int:
            raise _records.RecordError("event.time must be an integer")
        _check_int64(event.seq, "event.seq")
        _check_int64(event.time, "event.time")
        data_json.append(_storable_text(event.data, f"data of event {event.seq}"))
    checked_wakes = _checked_wakes(wakes) if wakes else ()
    if header is None:
        return EncodedAppend(
            header=None, header_json=None, data_json=tuple(data_json), wakes=checked_wakes
        )
    if header.id != session_id:
        raise ValueError(f"header id {header.id!r} does not match session id {session_id!r}")
    stored = _records.stored_header(header)
    checked = _records.header_from_json(stored)
    _check_int64(checked.created_at, "header.createdAt")
    return EncodedAppend(
        header=checked,
        header_json=_storable_text(stored, "the header"),
        data_json=tuple(data_json),
        wakes=checked_wakes,
    )


def check_position(
    session_id: str, start: int, stored_length: int | None, *, creating: bool
) -> None:
    """Raise :class:`StorageConflictError` unless an append at ``start`` fits what is stored.

    ``stored_length`` is the stored event count, ``None`` for an absent Session; ``creating``
    says whether the request carries a header (a create must start at 0 on an absent id).
    """
    if creating:
        if start != 0:
            raise StorageConflictError(
                f"session {session_id} must be created at start 0, not {start}"
            )
        if stored_length is not None:
            raise StorageConflictError(f"session {session_id} already exists")
    elif stored_length is None:
        raise StorageConflictError(f"session {session_id} does not exist")
    elif stored_length != start:
        raise StorageConflictError(
            f"session {session_id} has {stored_length} stored events, append expected {start}"
        )


_B = TypeVar("_B", bound=Backend)


@asynccontextmanager
async def opened(backend: _B) -> AsyncIterator[_B]:
    """``backend`` opened for the ``async with`` block, and closed after it (even on error)."""
    await backend.open()
    try:
        yield backend
    finally:
        await backend.close()
