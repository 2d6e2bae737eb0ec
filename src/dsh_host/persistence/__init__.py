"""Durable storage of Session headers and event logs.

:class:`Backend` is the interface; :class:`MemoryBackend` and :class:`SQLiteBackend` (the
embedded default) implement it. :class:`DataDirLock` keeps one live dsh process per data folder.
"""

from __future__ import annotations

from ._backend import (
    Backend,
    DataDirLockedError,
    PrefixDivergedError,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StoredSession,
    StoredSummary,
)
from ._lock import DataDirLock
from ._memory import MemoryBackend
from ._sqlite import SQLiteBackend

__all__ = [
    "Backend",
    "DataDirLock",
    "DataDirLockedError",
    "MemoryBackend",
    "PrefixDivergedError",
    "SQLiteBackend",
    "StorageConflictError",
    "StorageCorruptError",
    "StorageError",
    "StoredSession",
    "StoredSummary",
]
