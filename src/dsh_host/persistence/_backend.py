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

Every write is one value, :class:`~._write.Write`, that checks itself before any backend sees it;
every backend decides conflicts with what is stored by the same rules (:func:`check_position`).

Leases (docs/always-on.md, "Several hosts on one PostgreSQL"): a backend several processes share
(PostgreSQL) also offers :class:`Leases` as its ``leases`` attribute (:func:`leases_of`). A Session
is live on at most one host: the host acquires its lease before making it live, renews it, and
releases it when it goes cold. Every append carries the holder's epoch (a fencing token) and the
database refuses one whose epoch is no longer current. SQLite and memory keep their single-process
lock and have none.

The durable wake index (docs/always-on.md, "The durable wake index"): besides its log, a stored
Session holds at most one wake entry per plugin (``plugin -> at_ms``), written only by
:meth:`Backend.append` in the same transaction as that batch's events, so the index never runs ahead
of or behind the log.

The board: a host-wide durable projection across Sessions. A stored Session holds board rows
(``(plugin, key) -> BoardEntry(kind, at_ms, data)``, posted with
:meth:`~dsh_hookspecs.SessionStore.post`), written like wake entries only by
:meth:`Backend.append`, in the transaction of the batch that caused them. They are read across
Sessions without loading any log: :meth:`Backend.board_page` (one plugin's rows of one kind,
soonest first, a page at a time) and :meth:`Backend.board_count`. An older store migrated at
open has an empty board until the host re-derives it (:attr:`Backend.needs_board_rebuild`).

Names: a stored Session also holds its name (what :func:`dsh_host._names.session_name` says of
its log), stored by :meth:`Backend.append` with the batch that changed it (never cleared) and
listed by :meth:`Backend.list_sessions` and :meth:`Backend.board_page`, so a listing needs no
log.

Paging the Session list: a backend that offers :class:`PagedBackend` (all three here) lists its
Sessions a page at a time, newest first, through an index (``list_page``, ``count_sessions``),
so a list on a store of a million Sessions reads one page, never the whole table and never a
log. :func:`session_page` and :func:`session_count` read any :class:`Backend` that way, falling
back to :meth:`Backend.list_sessions` for a backend without the capability.

The outbox (:mod:`._outbox`): a stored Session also holds outbox entries, notices waiting to be sent
outside the page, one per channel. :meth:`Backend.append` files and withdraws them
(:attr:`~._write.Write.outbox`, checked by :func:`~._write.check_outbox`) in the transaction of the
batch that caused them; every backend here is also an :class:`~._outbox.OutboxBackend`, whose send
worker claims, settles and lists them without loading any log.

Delete: :meth:`Backend.delete` removes a Session's header, events, wake entries, board rows,
outbox entries and name in one durable transaction. Forks are independent copies (a fork's
header only names its parent), so they are not touched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Protocol, TypeVar, cast, runtime_checkable

import structlog

from dsh_hookspecs import (
    BoardEntry,
)

from .. import _json, _records

# Re-exported: the stored-record types live on the records floor, below storage and Sessions.
from .._records import BoardRow as BoardRow  # noqa: PLC0414
from .._records import DamagedSummary as DamagedSummary  # noqa: PLC0414
from .._records import SessionListing as SessionListing  # noqa: PLC0414
from .._records import StoredSession as StoredSession  # noqa: PLC0414
from .._records import StoredSummary as StoredSummary  # noqa: PLC0414
from .._records import damaged_sessions as damaged_sessions  # noqa: PLC0414
from ._outbox import (
    ERROR_MAX_CHARS,
    STATUSES,
    OutboxClaim,
    OutboxRow,
    Settlement,
    decode_notice,
)
from ._write import BOARD_KIND, INT64_MAX, Write, check_int64

log = structlog.get_logger(__name__)


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


#: One due entry of the wake index: ``(session_id, plugin, at_ms)``.
DueWake = tuple[str, str, int]

#: Where a board page ends: the ``(at_ms, session_id, key)`` of its last row.
BoardCursor = tuple[int, str, str]

#: Where a page of the Session list ends: the ``(created_at, id)`` of its last row.
SessionCursor = tuple[int, str]

#: One row of a Session list page: a decodable Session, or a row that cannot be decoded.
SessionRow = StoredSummary | DamagedSummary


class Backend(Protocol):
    """Async storage of Session headers and event logs, with each Session's wake entries, board
    rows and name."""

    name: str

    @property
    def needs_board_rebuild(self) -> bool:
        """True after an :meth:`open` that migrated an older store holding at least one
        Session: its board is empty until the host re-derives it (``dsh reindex``, or the
        rebuild at boot). False otherwise (a new or current store)."""
        ...

    async def open(self) -> None:
        """Acquire resources; report a corrupt store with :class:`StorageCorruptError`."""
        ...

    async def close(self) -> None:
        """Release resources. Idempotent."""
        ...

    async def load(self, session_id: str) -> StoredSession | None:
        """The stored header, events, wake entries and board rows of ``session_id``, or
        ``None``."""
        ...

    async def list_sessions(self) -> Sequence[StoredSummary]:
        """Every stored Session, oldest ``createdAt`` first, each with its stored name
        (:attr:`StoredSummary.name`, ``None`` until it has one).

        A row that cannot be decoded does not fail the listing: the answer is then a
        :class:`SessionListing` naming it in ``damaged`` (see :func:`damaged_sessions`), and
        :meth:`load` of that id raises :class:`StorageCorruptError`.
        """
        ...

    async def append(self, write: Write) -> None:
        """Store ``write`` atomically (see :class:`~._write.Write`): its events, wake entries,
        board rows, name and outbox changes, all in one transaction or none of it.

        :class:`StorageConflictError` and nothing written when ``write.start`` does not fit what
        is stored (:func:`check_position`). When the call returns, the write is durable to the
        backend's promise (SQLite: fsynced).
        """
        ...

    async def board_page(
        self,
        plugin: str,
        kind: str,
        *,
        after: BoardCursor | None = None,
        limit: int,
        session_id: str | None = None,
    ) -> Sequence[BoardRow]:
        """At most ``limit`` board rows of ``plugin`` and ``kind`` across every stored Session
        (only ``session_id``'s with it), ordered by ``(at_ms, session_id, key)`` ascending and
        strictly after the cursor ``after``: the ``(at_ms, session_id, key)`` of the last row of
        the previous page. Ids and keys sort by code point. Each row names its Session's stored
        name. No log is loaded."""
        ...

    async def board_count(
        self, plugin: str, kind: str, *, after_ms: int | None = None, session_id: str | None = None
    ) -> int:
        """How many board rows of ``plugin`` and ``kind`` have ``at_ms > after_ms`` (every one
        when ``None``), across every stored Session (only ``session_id``'s with it)."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Remove the Session's header, events, wake entries, board rows, outbox entries and
        name in one durable transaction; ``False`` when it is not stored.

        Ordered after every append already requested. Forks are independent copies (a fork's
        header only names its parent) and keep working. A shared backend (PostgreSQL) raises
        :class:`SessionLiveElsewhereError` while another host holds an unexpired lease of it, and
        removes this host's own lease with the Session.
        """
        ...

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        """At most ``limit`` wake entries with ``at_ms <= now_ms``, earliest first (ties by
        Session id, then plugin), as ``(session_id, plugin, at_ms)``."""
        ...

    async def earliest_wake(self) -> int | None:
        """The smallest ``at_ms`` of every stored wake entry, or ``None`` when there is none."""
        ...


@runtime_checkable
class PagedBackend(Protocol):
    """A backend that lists its Sessions a page at a time through an index (all three here).

    The order is the Session list's: newest first, by ``(created_at, id)`` descending (ids by
    code point). Neither method loads a log.
    """

    async def list_page(
        self, *, after: SessionCursor | None = None, limit: int
    ) -> Sequence[SessionRow]:
        """At most ``limit`` stored Sessions, newest first, strictly after the cursor ``after``
        (the :func:`session_cursor` of the last row of the previous page), each with its stored
        name. A row that cannot be decoded is a :class:`DamagedSummary` in its place, ordered
        by its ``created_at`` column; it never hides the others. (A ``created_at`` column that
        is not an integer, which only damage from outside makes, sorts before every other row
        and is listed on the first page only.)"""
        ...

    async def count_sessions(self) -> int:
        """How many Sessions are stored (damaged rows included), without reading any log."""
        ...


class Leases(Protocol):
    """One live owner per Session across hosts sharing a database.

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


def decode_board_entry(kind: object, at_ms: object, data: object) -> BoardEntry:
    """A stored board row's columns as a :class:`~dsh_hookspecs.BoardEntry`; ``ValueError``
    with a plain reason when they are not what :func:`check_board_post` lets through."""
    if type(kind) is not str or not BOARD_KIND.fullmatch(kind):
        raise _records.RecordError(f"the board kind {kind!r} is invalid")
    if type(at_ms) is not int:
        raise _records.RecordError(f"the board at_ms {at_ms!r} is not an integer")
    if not isinstance(data, str):
        raise _records.RecordError("the board data column is not text")
    return BoardEntry(kind=kind, at_ms=at_ms, data=_json.loads(data))


def decode_board_rows(
    session_id: str,
    rows: Iterable[Sequence[object]],
    corrupt: Callable[[str], StorageError],
) -> dict[tuple[str, str], BoardEntry]:
    """A stored Session's ``(plugin, key, kind, at_ms, data)`` board rows by ``(plugin, key)``;
    a row that does not decode raises ``corrupt(reason)``."""
    board: dict[tuple[str, str], BoardEntry] = {}
    for plugin, key, kind, at_ms, data in rows:
        try:
            board[str(plugin), str(key)] = decode_board_entry(kind, at_ms, data)
        except ValueError as exc:
            raise corrupt(
                f"board row {key!r} of plugin {plugin!r} of session {session_id!r} "
                f"is invalid: {exc}"
            ) from exc
    return board


def check_claim(now_ms: object, limit: object, owner: object, claim_until_ms: object) -> None:
    """``ValueError`` unless the arguments of :meth:`~._outbox.OutboxBackend.claim_outbox`
    have their types: 64-bit integer instants with ``claim_until_ms`` not before ``now_ms``, a
    non-negative ``limit`` and a non-empty ``owner`` name."""
    for what, value in (("now_ms", now_ms), ("claim_until_ms", claim_until_ms)):
        if type(value) is not int:
            raise ValueError(f"an outbox claim's {what} must be an integer, got {value!r}")
        check_int64(value, f"an outbox claim's {what}")
    assert type(now_ms) is int  # checked above
    assert type(claim_until_ms) is int
    if claim_until_ms < now_ms:
        raise ValueError(f"an outbox claim cannot end ({claim_until_ms}) before now ({now_ms})")
    check_page_limit(limit)
    if type(owner) is not str or not owner or "\x00" in owner:
        raise ValueError(f"an outbox claim needs a non-empty owner name, got {owner!r}")


def check_settle(
    row: object,
    owner: object,
    *,
    status: object,
    now_ms: object,
    next_ms: object,
    error: object,
) -> str | None:
    """``ValueError`` unless the arguments of :meth:`~._outbox.OutboxBackend.settle_outbox`
    have their types (``status`` one of :data:`~._outbox.STATUSES` but ``sending``, and
    ``pending`` with a ``next_ms``); the ``error`` to store: on one line of plain text, cut to
    :data:`~._outbox.ERROR_MAX_CHARS`."""
    if not isinstance(row, OutboxRow):
        raise ValueError(f"settle needs the claimed OutboxRow, got {type(row).__name__}")  # noqa: TRY004
    if type(owner) is not str or not owner:
        raise ValueError(f"settle needs the claim's owner name, got {owner!r}")
    if status not in STATUSES or status == "sending":
        raise ValueError(f"an entry is settled as pending or a final state, not {status!r}")
    if type(now_ms) is not int:
        raise ValueError(f"settle's now_ms must be an integer, got {now_ms!r}")
    check_int64(now_ms, "settle's now_ms")
    if next_ms is None:
        if status == "pending":
            raise ValueError("an entry settled as pending (a retry) needs its next_ms")
    elif type(next_ms) is not int:
        raise ValueError(f"settle's next_ms must be an integer, got {next_ms!r}")
    else:
        check_int64(next_ms, "settle's next_ms")
    if error is None:
        return None
    if type(error) is not str:
        raise ValueError(f"settle's error must be text, got {error!r}")
    plain = " ".join(error.replace("\x00", " ").split())
    plain = plain.encode("utf-8", "replace").decode("utf-8")  # no lone surrogate is stored
    return plain[:ERROR_MAX_CHARS]


def checked_settlement(each: object) -> str | None:
    """:func:`check_settle` of one :class:`~._outbox.Settlement`: the ``error`` to store."""
    if not isinstance(each, Settlement):
        raise ValueError(f"settle needs a Settlement, got {type(each).__name__}")  # noqa: TRY004
    return check_settle(
        each.row,
        each.owner,
        status=each.status,
        now_ms=each.now_ms,
        next_ms=each.next_ms,
        error=each.error,
    )


def claimed(row: OutboxRow, now_ms: int) -> OutboxClaim:
    """The claim at ``now_ms`` of the stored ``row`` as it was read before (``sending``: an
    expired claim, so ambiguous)."""
    return OutboxClaim(
        dataclasses.replace(row, status="sending", attempts=row.attempts + 1, updated_ms=now_ms),
        ambiguous=row.status == "sending",
    )


#: The columns of a stored outbox entry that :func:`decode_outbox_row` decodes, in its order.
OUTBOX_COLUMNS = (
    "session_id, plugin, key, channel, notice, status, attempts, next_ms, error, updated_ms"
)


def decode_outbox_row(columns: Sequence[object]) -> OutboxRow:
    """A stored outbox entry's :data:`OUTBOX_COLUMNS` as an :class:`~._outbox.OutboxRow`;
    ``ValueError`` when they are not what an append and the worker store (a damaged entry)."""
    session_id, plugin, key, channel, notice, status, attempts, next_ms, error, updated_ms = columns
    texts = (session_id, plugin, key, channel, notice)
    if not all(type(text) is str for text in texts):
        raise _records.RecordError("an outbox entry's names or notice are not text")
    if status not in STATUSES:
        raise _records.RecordError(f"the outbox status {status!r} is unknown")
    if not all(type(value) is int for value in (attempts, next_ms, updated_ms)):
        raise _records.RecordError("an outbox entry's counts or instants are not integers")
    if error is not None and type(error) is not str:
        raise _records.RecordError("an outbox entry's error is not text")
    return OutboxRow(
        session_id=str(session_id),
        plugin=str(plugin),
        key=str(key),
        channel=str(channel),
        notice=decode_notice(str(notice)),
        status=status,
        attempts=cast(int, attempts),
        next_ms=cast(int, next_ms),
        error=error,
        updated_ms=cast(int, updated_ms),
    )


def outbox_row(columns: Sequence[object], **where: object) -> OutboxRow | None:
    """:func:`decode_outbox_row` of a stored entry, or ``None`` when it cannot be decoded,
    logged (``storage.outbox_entry_damaged``, with ``where`` naming the store): one damaged entry
    never hides or blocks the others."""
    try:
        return decode_outbox_row(columns)
    except ValueError as exc:
        log.warning(
            "storage.outbox_entry_damaged",
            **where,
            session_id=columns[0],
            plugin=columns[1],
            key=columns[2],
            channel=columns[3],
            error=" ".join(str(exc).split()),
        )
        return None


def board_rows(plugin: str, found: Iterable[Sequence[object]], **where: object) -> list[BoardRow]:
    """The board rows of ``plugin`` in a page's stored ``(session_id, name, key, kind, at_ms,
    data)`` columns, in their order. A row that cannot be decoded is logged
    (``storage.board_row_damaged``, with ``where`` naming the store) and left out: the board is
    derived state, and one damaged row never hides the board of every other Session."""
    rows: list[BoardRow] = []
    for sid, name, key, kind, at_ms, data in found:
        try:
            entry = decode_board_entry(kind, at_ms, data)
        except ValueError as exc:
            log.warning(
                "storage.board_row_damaged",
                **where,
                session_id=sid,
                plugin=plugin,
                key=key,
                error=" ".join(str(exc).split()),
            )
            continue
        shown = name if isinstance(name, str) and name else None
        rows.append(BoardRow(str(sid), shown, plugin, str(key), entry))
    return rows


def check_board_cursor(after: object) -> BoardCursor | None:
    """``after`` when it is ``None`` or an ``(at_ms, session_id, key)`` tuple of an integer
    and two strings, else ``ValueError``."""
    if after is None:
        return None
    if (
        type(after) is not tuple
        or len(after) != 3
        or type(after[0]) is not int
        or type(after[1]) is not str
        or type(after[2]) is not str
    ):
        raise ValueError(f"a board cursor must be (at_ms, session_id, key), got {after!r}")
    check_int64(after[0], "a board cursor's at_ms")
    return after


def check_board_query(
    plugin: object,
    kind: object,
    *,
    limit: object = 0,
    after: object = None,
    after_ms: object = None,
    session_id: object = None,
) -> BoardCursor | None:
    """``ValueError`` unless the arguments of :meth:`Backend.board_page` or
    :meth:`Backend.board_count` have their types: ``plugin`` and ``kind`` strings, ``limit`` a
    non-negative integer, ``after`` a board cursor (:func:`check_board_cursor`), ``after_ms``
    ``None`` or a 64-bit integer, ``session_id`` ``None`` or a string. The cursor, checked."""
    if type(plugin) is not str or type(kind) is not str:
        raise ValueError(f"a board query needs a plugin and a kind, got {plugin!r}, {kind!r}")
    if type(limit) is not int or limit < 0:
        raise ValueError(f"a board page limit must be a non-negative integer, got {limit!r}")
    if after_ms is not None:
        if type(after_ms) is not int:
            raise ValueError(f"a board count's after_ms must be an integer, got {after_ms!r}")
        check_int64(after_ms, "a board count's after_ms")
    if session_id is not None and type(session_id) is not str:
        raise ValueError(f"a board query's session id must be a string, got {session_id!r}")
    return check_board_cursor(after)


def check_session_cursor(after: object) -> SessionCursor | None:
    """``after`` when it is ``None`` or a ``(created_at, id)`` tuple of a 64-bit integer and a
    string, else ``ValueError``."""
    if after is None:
        return None
    if (
        type(after) is not tuple
        or len(after) != 2
        or type(after[0]) is not int
        or type(after[1]) is not str
    ):
        raise ValueError(f"a session cursor must be (created_at, id), got {after!r}")
    check_int64(after[0], "a session cursor's created_at")
    return after


def check_page_limit(limit: object) -> int:
    """``limit`` when it is a non-negative integer (not a bool), else ``ValueError``."""
    if type(limit) is not int or limit < 0:
        raise ValueError(f"a page limit must be a non-negative integer, got {limit!r}")
    return limit


def session_cursor(row: SessionRow) -> SessionCursor:
    """The cursor that continues a Session list page after ``row``. A damaged row whose
    creation time cannot be read sorts before every other row (see
    :meth:`PagedBackend.list_page`)."""
    if isinstance(row, DamagedSummary):
        return (INT64_MAX if row.created_at is None else row.created_at), row.id
    return row.header.created_at, row.header.id


async def session_page(
    backend: Backend, *, after: SessionCursor | None = None, limit: int
) -> list[SessionRow]:
    """:meth:`PagedBackend.list_page` of ``backend``; a backend without it is read whole with
    :meth:`Backend.list_sessions` and cut (the same rows, at the cost of a full listing)."""
    cursor = check_session_cursor(after)
    check_page_limit(limit)
    if isinstance(backend, PagedBackend):
        return list(await backend.list_page(after=cursor, limit=limit))
    listing = await backend.list_sessions()
    rows: list[SessionRow] = [*listing, *damaged_sessions(listing)]
    rows.sort(key=session_cursor, reverse=True)
    return [row for row in rows if cursor is None or session_cursor(row) < cursor][:limit]


async def session_count(backend: Backend) -> int:
    """:meth:`PagedBackend.count_sessions` of ``backend``, else the length of its listing."""
    if isinstance(backend, PagedBackend):
        return await backend.count_sessions()
    listing = await backend.list_sessions()
    return len(listing) + len(damaged_sessions(listing))


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
