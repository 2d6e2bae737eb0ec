"""The SQLite backend, the embedded default: one database file in the data folder.

:class:`SQLiteBackend` (:mod:`._store`) keeps its file (:mod:`._file`), the position record of
what was acknowledged (:mod:`._position`) and a group-committing writer (:mod:`._writer`);
:class:`DataDirLock` (:mod:`._lock`) keeps one live dsh process per data folder, and
:func:`list_sessions_read_only` and :func:`load_read_only` read a store another process holds.
"""

from __future__ import annotations

from ._lock import DataDirLock
from ._store import (
    DEFAULT_FILENAME,
    POSITION_SUFFIX,
    SCHEMA_VERSION,
    SQLiteBackend,
    list_sessions_read_only,
    load_read_only,
)

__all__ = [
    "DEFAULT_FILENAME",
    "POSITION_SUFFIX",
    "SCHEMA_VERSION",
    "DataDirLock",
    "SQLiteBackend",
    "list_sessions_read_only",
    "load_read_only",
]
