"""Export and import for the SQLite store (:mod:`.._transfer`), the blocking halves.

:class:`ExportSnapshot` reads whole Sessions through a read-only connection of its own, in ONE
read transaction: WAL lets it read the last commit while a ``dsh serve`` keeps writing, and
never takes the data-folder lock. Sessions are read in ``(created_at, id)`` order a page of
headers at a time, and their events a few Sessions at a time (at most :data:`EVENTS_PER_READ`
events, or one Session's), so memory never grows with the store.

:func:`import_all` runs on the writer's thread, inside one ``BEGIN IMMEDIATE`` transaction:
it pulls one Session at a time from the event loop, compares one already stored, inserts an
absent one through the writer's own request path (:func:`~._writer.apply_in_savepoint`), and
commits only after the last one. Anything raised rolls everything back.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from .. import _transfer
from .._backend import StorageError, StoredSession
from .._writes import Request
from ._file import SCHEMA_VERSION, StoreFile, is_blank, rollback, stored_version
from ._writer import apply_in_savepoint

#: The most events one read of the export takes (unless one Session alone holds more).
EVENTS_PER_READ = 4096
#: Session headers read per page of the export.
HEADERS_PER_PAGE = 256
#: Ids per ``IN (...)`` list (well under SQLite's limit on bound parameters).
IDS_PER_QUERY = 256

_FIRST_PAGE_SQL = (
    "SELECT id, header, length, created_at FROM sessions ORDER BY created_at, id LIMIT ?"
)
_NEXT_PAGE_SQL = (
    "SELECT id, header, length, created_at FROM sessions "
    "WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?"
)
_CHOSEN_SQL = "SELECT id, header, length, created_at FROM sessions WHERE id IN ({marks})"
_EVENTS_SQL = (
    "SELECT session_id, seq, type, time, data FROM events "
    "WHERE session_id IN ({marks}) ORDER BY session_id, seq"
)

#: Decodes one stored Session: ``(id, header text, length, event rows)``.
Decode = Callable[[str, object, object, Sequence[Any]], StoredSession]


class ExportSnapshot:
    """One read transaction over the store at ``path``; each method runs on one thread."""

    def __init__(
        self, path: Path, file: StoreFile, decode: Decode, ids: Sequence[str] | None
    ) -> None:
        self._path = path
        self._file = file
        self._decode = decode
        self._ids = None if ids is None else list(dict.fromkeys(ids))
        self._conn: sqlite3.Connection | None = None
        #: Headers read and not yet exported: ``(id, header text, length, created_at)``.
        self._pending: deque[tuple[Any, ...]] = deque()
        self._after: tuple[Any, Any] | None = None
        self._done = False

    def begin(self) -> None:
        """Open the connection and the snapshot; for chosen ids, read and order their rows."""
        if not self._path.is_file():
            self._check_chosen([])
            self._done = True
            return
        try:
            conn = sqlite3.connect(
                self._path.as_uri() + "?mode=ro",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                timeout=30,
            )
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {self._path} read-only: {exc}") from exc
        self._conn = conn
        try:
            conn.execute("BEGIN")  # the snapshot: every read below sees one commit
            if is_blank(conn):
                self._check_chosen([])
                self._done = True
                return
            version = stored_version(conn)
            if version > SCHEMA_VERSION:
                raise StorageError(
                    f"{self._path} has dsh schema version {version}, newer than the version "
                    f"{SCHEMA_VERSION} this dsh knows; export it with that newer dsh"
                )
            if self._ids is not None:
                rows: list[tuple[Any, ...]] = []
                for start in range(0, len(self._ids), IDS_PER_QUERY):
                    chunk = self._ids[start : start + IDS_PER_QUERY]
                    sql = _CHOSEN_SQL.format(marks=",".join("?" * len(chunk)))
                    rows += conn.execute(sql, chunk).fetchall()
                self._check_chosen(rows)
                rows.sort(key=lambda row: (_order(row[3]), row[0]))
                self._pending.extend(rows)
                self._done = True  # nothing more to page through
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "begin an export") from exc

    def _check_chosen(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if self._ids is None:
            return
        found = {row[0] for row in rows}
        missing = [sid for sid in self._ids if sid not in found]
        if missing:
            raise StorageError(f"no session {missing[0]} is stored in {self._path}")

    def next_batch(self) -> list[StoredSession]:
        """The next Sessions in order (empty at the end): one, or several whose events add up
        to at most :data:`EVENTS_PER_READ`."""
        if not self._pending and not self._done:
            self._read_page()
        if not self._pending:
            return []
        conn = self._conn
        assert conn is not None
        chosen = [self._pending.popleft()]
        total = _length(chosen[0][2])
        while self._pending and len(chosen) < IDS_PER_QUERY:
            more = _length(self._pending[0][2])
            if total + more > EVENTS_PER_READ:
                break
            chosen.append(self._pending.popleft())
            total += more
        ids = [row[0] for row in chosen]
        events: dict[str, list[Any]] = {sid: [] for sid in ids}
        try:
            sql = _EVENTS_SQL.format(marks=",".join("?" * len(ids)))
            for row in conn.execute(sql, ids):
                events[row[0]].append(row[1:])
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "read sessions to export") from exc
        return [self._decode(sid, text, length, events[sid]) for sid, text, length, _ in chosen]

    def _read_page(self) -> None:
        conn = self._conn
        assert conn is not None
        try:
            if self._after is None:
                rows = conn.execute(_FIRST_PAGE_SQL, (HEADERS_PER_PAGE,)).fetchall()
            else:
                rows = conn.execute(_NEXT_PAGE_SQL, (*self._after, HEADERS_PER_PAGE)).fetchall()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "list sessions to export") from exc
        if len(rows) < HEADERS_PER_PAGE:
            self._done = True
        if rows:
            self._after = (rows[-1][3], rows[-1][0])
        self._pending.extend(rows)

    def close(self) -> None:
        """End the snapshot (a read transaction only ever rolls back) and the connection."""
        conn, self._conn = self._conn, None
        if conn is not None:
            rollback(conn)
            conn.close()


def _length(value: object) -> int:
    return value if type(value) is int and value > 0 else 0


def _order(created_at: object) -> int:
    return created_at if type(created_at) is int else -(2**63)


class Pull(Protocol):
    """Fetches the next Session to import from the event loop (``None`` at the end)."""

    def __call__(self) -> tuple[_transfer.ImportedSession, Request] | None: ...


def import_all(
    conn: sqlite3.Connection,
    file: StoreFile,
    pull: Pull,
    load: Callable[[sqlite3.Connection, str], StoredSession | None],
) -> _transfer.ImportCounts:
    """Worker thread: pull and store every Session in one transaction (see the module
    docstring); ``load`` reads a stored Session inside it. Commits only at the end."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise file.mapped(exc, "begin an import") from exc
    imported = events = unchanged = unchanged_events = 0
    try:
        while (pulled := pull()) is not None:
            item, request = pulled
            if _store_one(conn, file, item, request, load):
                imported += 1
                events += len(request.rows)
            else:
                unchanged += 1
                unchanged_events += len(request.rows)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        rollback(conn)
        raise file.mapped(exc, "import sessions") from exc
    except BaseException:
        rollback(conn)
        raise
    return _transfer.ImportCounts(imported, events, unchanged, unchanged_events)


def _store_one(
    conn: sqlite3.Connection,
    file: StoreFile,
    item: _transfer.ImportedSession,
    request: Request,
    load: Callable[[sqlite3.Connection, str], StoredSession | None],
) -> bool:
    """Insert one Session (``True``), or find it stored with the same content (``False``);
    raise :class:`~.._transfer.ImportConflictError` when it is stored with other content."""
    stored = load(conn, request.session_id)
    if stored is not None:
        why = _transfer.same_content(stored, item.session)
        if why is not None:
            raise _transfer.ImportConflictError(request.session_id, why)
        return False
    failure = apply_in_savepoint(conn, file, request)
    if failure is not None:
        raise failure
    return True
