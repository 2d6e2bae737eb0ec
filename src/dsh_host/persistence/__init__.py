"""Durable storage of Session headers and event logs.

:class:`Backend` is the interface; :class:`MemoryBackend` and :class:`SQLiteBackend` (the
embedded default) implement it. :class:`DataDirLock` keeps one live dsh process per data folder;
:func:`list_sessions_read_only` reads a store another process holds.
"""

from __future__ import annotations

from .._records import events_identical
from ._backend import (
    NO_WAKES,
    Backend,
    DamagedSummary,
    DataDirLockedError,
    DueWake,
    LeasedBackend,
    Leases,
    PrefixDivergedError,
    SessionListing,
    SessionLiveElsewhereError,
    StorageBehindError,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StorageFencedError,
    StorageReadOnlyError,
    StoredSession,
    StoredSummary,
    check_wake_instant,
    damaged_sessions,
    leases_of,
    opened,
)
from ._coordinator import Coordinator, Durability, SessionSource, check_stored_prefix
from ._lock import DataDirLock
from ._memory import MemoryBackend
from ._postgres import PostgresBackend, is_postgres_url, redacted
from ._sqlite import SQLiteBackend, list_sessions_read_only

__all__ = [
    "NO_WAKES",
    "Backend",
    "Coordinator",
    "DamagedSummary",
    "DataDirLock",
    "DataDirLockedError",
    "DueWake",
    "Durability",
    "LeasedBackend",
    "Leases",
    "MemoryBackend",
    "PostgresBackend",
    "PrefixDivergedError",
    "SQLiteBackend",
    "SessionListing",
    "SessionLiveElsewhereError",
    "SessionSource",
    "StorageBehindError",
    "StorageConflictError",
    "StorageCorruptError",
    "StorageError",
    "StorageFencedError",
    "StorageReadOnlyError",
    "StoredSession",
    "StoredSummary",
    "check_stored_prefix",
    "check_wake_instant",
    "damaged_sessions",
    "events_identical",
    "is_postgres_url",
    "leases_of",
    "list_sessions_read_only",
    "opened",
    "redacted",
]
