"""Durable storage of Session headers and event logs, with each Session's wake entries, board
rows and name (the board is read across Sessions: :class:`BoardRow`).

:class:`Backend` is the interface (:mod:`._backend`), and one durable write is one value,
:class:`Write` (:mod:`._write`), that checks itself before any backend sees it; three backends
implement it, and page the Session list through an index (:class:`PagedBackend`;
:func:`session_page` reads any backend):

* memory, :class:`MemoryBackend` (:mod:`._memory`): nothing survives the process, for tests;
* SQLite, :class:`SQLiteBackend` (:mod:`.sqlite`): the embedded default, one file in the data
  folder, where :class:`DataDirLock` keeps one live dsh process per data folder and
  :func:`list_sessions_read_only`, :func:`read_only_page` and :func:`load_read_only` read a
  store another process holds;
* PostgreSQL, :class:`PostgresBackend` (:mod:`.postgres`): a database several hosts share, with
  Session leases (:class:`Leases`).

Each also keeps the outbox, notices waiting to be sent outside the page
(:class:`OutboxBackend`, :mod:`._outbox`), and moves whole Sessions in and out: a consistent
read snapshot and an all-or-nothing writer (:class:`ExportBackend`, :class:`ImportBackend`,
:mod:`._transfer`). What the SQLite and PostgreSQL writers share is in :mod:`._writes`. The
:class:`Coordinator` (:mod:`._coordinator`) sits above them: it writes each live Session's
flushes to the backend in order and acknowledges durability.
"""

from __future__ import annotations

from .._records import events_identical
from ._backend import (
    Backend,
    BoardCursor,
    BoardRow,
    DamagedSummary,
    DataDirLockedError,
    DueWake,
    LeasedBackend,
    Leases,
    PagedBackend,
    PrefixDivergedError,
    SessionCursor,
    SessionListing,
    SessionLiveElsewhereError,
    SessionRow,
    StorageBehindError,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StorageFencedError,
    StorageReadOnlyError,
    StoredSession,
    StoredSummary,
    check_session_cursor,
    damaged_sessions,
    leases_of,
    opened,
    session_count,
    session_cursor,
    session_page,
)
from ._coordinator import Coordinator, Durability, SessionSource, check_stored_prefix
from ._memory import MemoryBackend
from ._outbox import (
    OutboxBackend,
    OutboxChange,
    OutboxClaim,
    OutboxRow,
    Settlement,
    check_notice,
    check_notice_key,
    idempotency_key,
)
from ._outbox import Status as OutboxStatus
from ._transfer import (
    ExportBackend,
    ImportBackend,
    ImportConflictError,
    ImportCounts,
    ImportedSession,
    UnstorableError,
    check_storable,
)
from ._write import NO_POSTS, NO_WAKES, Write, check_board_post, check_wake_instant
from .postgres import PostgresBackend, is_postgres_url, redacted
from .sqlite import (
    DataDirLock,
    SQLiteBackend,
    list_sessions_read_only,
    load_read_only,
    read_only_page,
)

__all__ = [
    "NO_POSTS",
    "NO_WAKES",
    "Backend",
    "BoardCursor",
    "BoardRow",
    "Coordinator",
    "DamagedSummary",
    "DataDirLock",
    "DataDirLockedError",
    "DueWake",
    "Durability",
    "ExportBackend",
    "ImportBackend",
    "ImportConflictError",
    "ImportCounts",
    "ImportedSession",
    "LeasedBackend",
    "Leases",
    "MemoryBackend",
    "OutboxBackend",
    "OutboxChange",
    "OutboxClaim",
    "OutboxRow",
    "OutboxStatus",
    "PagedBackend",
    "PostgresBackend",
    "PrefixDivergedError",
    "SQLiteBackend",
    "SessionCursor",
    "SessionListing",
    "SessionLiveElsewhereError",
    "SessionRow",
    "SessionSource",
    "Settlement",
    "StorageBehindError",
    "StorageConflictError",
    "StorageCorruptError",
    "StorageError",
    "StorageFencedError",
    "StorageReadOnlyError",
    "StoredSession",
    "StoredSummary",
    "UnstorableError",
    "Write",
    "check_board_post",
    "check_notice",
    "check_notice_key",
    "check_session_cursor",
    "check_storable",
    "check_stored_prefix",
    "check_wake_instant",
    "damaged_sessions",
    "events_identical",
    "idempotency_key",
    "is_postgres_url",
    "leases_of",
    "list_sessions_read_only",
    "load_read_only",
    "opened",
    "read_only_page",
    "redacted",
    "session_count",
    "session_cursor",
    "session_page",
]
