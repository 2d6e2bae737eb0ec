"""The SQLite backend, the embedded default: one database file in the data folder.

:class:`SQLiteBackend` (:mod:`._store`) keeps its file (:mod:`._file`), the position record of
what was acknowledged (:mod:`._position`) and a group-committing writer (:mod:`._writer`);
:class:`DataDirLock` (:mod:`._lock`) keeps one live dsh process per data folder, and
:func:`list_sessions_read_only`, :func:`read_only_page` and :func:`load_read_only` read a store
another process holds. A clean close seals the store (:mod:`._seal`) so that the next open skips
the checks that read every page.
"""

from __future__ import annotations

from ._lock import DataDirLock
from ._store import (
    DEFAULT_FILENAME,
    POSITION_SUFFIX,
    SCHEMA_VERSION,
    SEAL_SUFFIX,
    SQLiteBackend,
    list_sessions_read_only,
    load_read_only,
    read_only_page,
)

__all__ = [
    "DEFAULT_FILENAME",
    "POSITION_SUFFIX",
    "SCHEMA_VERSION",
    "SEAL_SUFFIX",
    "DataDirLock",
    "SQLiteBackend",
    "list_sessions_read_only",
    "load_read_only",
    "read_only_page",
]
