"""The SQLite store's file: schema, byte-level and integrity checks at open, the read-only
listing and list pages, and the mapping of ``sqlite3`` errors to :class:`StorageError`.

Nothing here writes to a store it has not proven to be ours: the byte checks read the header,
the integrity and schema checks run on a read-only connection, and the write connection is
opened only after both passed (:meth:`StoreFile.connect`). The checks that read every page
(``quick_check`` and the count of what is stored) are skipped only for a store sealed by a clean
close and untouched since (:mod:`._seal`).
"""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import structlog

from dsh_hookspecs import SessionHeader

from ... import _json, _records
from .._backend import (
    DamagedSummary,
    SessionCursor,
    SessionListing,
    SessionRow,
    StorageCorruptError,
    StorageError,
    StorageReadOnlyError,
    StoredSummary,
)

log = structlog.get_logger(__name__)

_T = TypeVar("_T")

#: ``PRAGMA user_version`` of the schema below (2 added the wake index, 3 the board, the names
#: and the tally of deletes, 4 the index that pages the Session list, 5 the outbox; an older
#: store is migrated at open by creating what it lacks, see :meth:`StoreFile.connect`).
SCHEMA_VERSION = 5

#: The database file's name inside the data folder, unless a backend is given another.
DEFAULT_FILENAME = "dsh.sqlite3"

_V1_SCHEMA = (
    (
        "CREATE TABLE sessions ("
        "id TEXT PRIMARY KEY NOT NULL, "
        "header TEXT NOT NULL, "
        "created_at INTEGER NOT NULL, "
        "length INTEGER NOT NULL)"
    ),
    (
        "CREATE TABLE events ("
        "session_id TEXT NOT NULL REFERENCES sessions(id), "
        "seq INTEGER NOT NULL, "
        "type TEXT NOT NULL, "
        "time INTEGER NOT NULL, "
        "data TEXT NOT NULL, "
        "PRIMARY KEY (session_id, seq)) WITHOUT ROWID"
    ),
)
#: What version 2 added: the durable wake index, one entry per plugin per Session.
_WAKES_SCHEMA = (
    (
        "CREATE TABLE wakes ("
        "session_id TEXT NOT NULL REFERENCES sessions(id), "
        "plugin TEXT NOT NULL, "
        "at_ms INTEGER NOT NULL, "
        "PRIMARY KEY (session_id, plugin)) WITHOUT ROWID"
    ),
    "CREATE INDEX wakes_due ON wakes (at_ms, session_id, plugin)",
)
#: What version 3 added: the board (rows across Sessions, read by plugin and kind, soonest
#: first), each Session's stored name, and the tally of deleted Sessions and events (one row,
#: absent until the first delete) that keeps the position record truthful.
_BOARD_SCHEMA = (
    (
        "CREATE TABLE board ("
        "session_id TEXT NOT NULL REFERENCES sessions(id), "
        "plugin TEXT NOT NULL, "
        "key TEXT NOT NULL, "
        "kind TEXT NOT NULL, "
        "at_ms INTEGER NOT NULL, "
        "data TEXT NOT NULL, "
        "PRIMARY KEY (session_id, plugin, key)) WITHOUT ROWID"
    ),
    "CREATE INDEX board_by_kind ON board (plugin, kind, at_ms, session_id, key)",
    (
        "CREATE TABLE names ("
        "session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id), "
        "name TEXT NOT NULL) WITHOUT ROWID"
    ),
    (
        "CREATE TABLE deleted ("
        "id INTEGER PRIMARY KEY CHECK (id = 1), "
        "sessions INTEGER NOT NULL, "
        "events INTEGER NOT NULL)"
    ),
)
#: What version 4 added: the Session list's order as an index, so a page of it (newest first)
#: is an index search, never a scan and sort of every Session.
_LIST_SCHEMA = ("CREATE INDEX sessions_by_creation ON sessions (created_at, id)",)
#: What version 5 added: the outbox, one entry per notice and channel (``id``: the insertion
#: order a Session's entries are listed in), claimed by ``(status, next_ms)``.
_OUTBOX_SCHEMA = (
    (
        "CREATE TABLE outbox ("
        "id INTEGER PRIMARY KEY, "
        "session_id TEXT NOT NULL REFERENCES sessions(id), "
        "plugin TEXT NOT NULL, "
        "key TEXT NOT NULL, "
        "channel TEXT NOT NULL, "
        "notice TEXT NOT NULL, "
        "status TEXT NOT NULL, "
        "attempts INTEGER NOT NULL, "
        "next_ms INTEGER NOT NULL, "
        "error TEXT, "
        "updated_ms INTEGER NOT NULL, "
        "claimed_by TEXT, "
        "claim_until_ms INTEGER, "
        "UNIQUE (session_id, plugin, key, channel))"
    ),
    "CREATE INDEX outbox_due ON outbox (status, next_ms)",
    "CREATE INDEX outbox_by_session ON outbox (session_id, id)",
)
_SCHEMA = _V1_SCHEMA + _WAKES_SCHEMA + _BOARD_SCHEMA + _LIST_SCHEMA + _OUTBOX_SCHEMA
#: What migrating a store of each older version creates, in one transaction.
_MIGRATIONS = {
    1: _WAKES_SCHEMA + _BOARD_SCHEMA + _LIST_SCHEMA + _OUTBOX_SCHEMA,
    2: _BOARD_SCHEMA + _LIST_SCHEMA + _OUTBOX_SCHEMA,
    3: _LIST_SCHEMA + _OUTBOX_SCHEMA,
    4: _OUTBOX_SCHEMA,
}

_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
_WAL_HEADER_SIZE = 32
_BUSY_TIMEOUT_MS = 5000
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
#: Counted, not summed from ``sessions.length``: a damaged length must not look like a loss.
#: (Open already reads every page for quick_check; this adds one more pass over the events.)
#: What was deleted is added from the tally the delete transaction keeps, so a delete never
#: looks like a loss (a store before version 3 has deleted nothing).
_POSITION_SQL_BEFORE_3 = "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events)"
_POSITION_SQL = (
    "SELECT (SELECT count(*) FROM sessions) + coalesce((SELECT sessions FROM deleted), 0), "
    "(SELECT count(*) FROM events) + coalesce((SELECT events FROM deleted), 0)"
)
#: A scratch table created inside the start-up write probe and rolled back with it.
_PROBE_DDL = "CREATE TABLE dsh_write_probe (x INTEGER)"
#: Every Session with its stored name, oldest first (the columns :func:`summaries` decodes).
LIST_SQL = (
    "SELECT s.id, s.header, s.length, s.created_at, n.name "
    "FROM sessions s LEFT JOIN names n ON n.session_id = s.id ORDER BY s.created_at, s.id"
)
#: The same of a store before version 3 (read only): no names yet.
_LIST_SQL_BEFORE_3 = (
    "SELECT id, header, length, created_at, NULL FROM sessions ORDER BY created_at, id"
)
#: One page of the Session list, newest first, through ``sessions_by_creation`` (``{after}``:
#: the cursor's condition or nothing); the columns :func:`page_rows` decodes.
_PAGE_SQL = (
    "SELECT s.id, s.header, s.length, s.created_at, {name} FROM sessions s{join}{after} "
    "ORDER BY s.created_at DESC, s.id DESC LIMIT ?"
)
_PAGE_AFTER = " WHERE (s.created_at, s.id) < (?, ?)"
_NAMES_JOIN = " LEFT JOIN names n ON n.session_id = s.id"
#: How many Sessions are stored (the smallest index is counted; no log is read).
COUNT_SQL = "SELECT count(*) FROM sessions"

#: The store's position as ``(sessions, events)`` ever stored (those stored now plus those
#: deleted): both only grow with every acknowledged write.
Position = tuple[int, int]


def list_sql(version: int) -> str:
    """The listing of :func:`summaries` for a store of schema ``version``."""
    return LIST_SQL if version >= 3 else _LIST_SQL_BEFORE_3


def page_query(
    after: SessionCursor | None, limit: int, version: int = SCHEMA_VERSION
) -> tuple[str, list[object]]:
    """The statement and parameters of one Session list page of a store of schema ``version``
    (an older one has no names, and no index yet: read only, it is scanned)."""
    named = version >= 3
    sql = _PAGE_SQL.format(
        name="n.name" if named else "NULL",
        join=_NAMES_JOIN if named else "",
        after="" if after is None else _PAGE_AFTER,
    )
    return sql, [*(after or ()), limit]


_SchemaRow = tuple[str, str, str, str | None]


def if_present(action: Callable[[], _T], failure: str) -> _T | None:
    """``action()``, or ``None`` when its file does not exist; other OS errors are a
    :class:`StorageError` starting with ``failure``."""
    try:
        return action()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"{failure}: {exc}") from exc


def _schema_rows(conn: sqlite3.Connection) -> list[_SchemaRow]:
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name"
    ).fetchall()
    return [tuple(row) for row in rows]


def _expected_schema(ddls: tuple[str, ...]) -> list[_SchemaRow]:
    """The sqlite_schema rows ``ddls`` produce (SQLite stores the DDL text verbatim)."""
    conn = sqlite3.connect(":memory:")
    try:
        for ddl in ddls:
            conn.execute(ddl)
        return _schema_rows(conn)
    finally:
        conn.close()


#: The schema of each version this dsh opens (an older one is migrated at open).
_EXPECTED_SCHEMAS = {
    1: _expected_schema(_V1_SCHEMA),
    2: _expected_schema(_V1_SCHEMA + _WAKES_SCHEMA),
    3: _expected_schema(_V1_SCHEMA + _WAKES_SCHEMA + _BOARD_SCHEMA),
    4: _expected_schema(_V1_SCHEMA + _WAKES_SCHEMA + _BOARD_SCHEMA + _LIST_SCHEMA),
    SCHEMA_VERSION: _expected_schema(_SCHEMA),
}


def corrupt_error(path: Path, what: str) -> StorageCorruptError:
    log.error("storage.corrupt", path=str(path), problem=what)
    return StorageCorruptError(f"database file {path} is corrupt or truncated: {what}")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can never write (nor "repair") the file; raises ``sqlite3.Error``."""
    # check_same_thread=False only so that any thread may close it.
    conn = sqlite3.connect(
        path.as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    except BaseException:
        conn.close()
        raise
    return conn


def _checked_header(session_id: str, text: object) -> SessionHeader:
    """The stored header decoded by the strict codecs; ``ValueError`` with a plain reason."""
    if not isinstance(text, str):
        raise _records.RecordError("header column is not text")
    header = _records.header_from_json(_json.loads(text))
    if header.id != session_id:
        raise _records.RecordError(f"it has id {header.id!r}")
    return header


def decode_header(path: Path, session_id: str, text: object) -> SessionHeader:
    try:
        return _checked_header(session_id, text)
    except ValueError as exc:
        raise corrupt_error(
            path, f"the stored header of session {session_id!r} is invalid: {exc}"
        ) from exc


def _decoded_row(path: Path, row: Any) -> SessionRow:
    """One row of ``LIST_SQL`` (or a page) decoded by the strict codecs, or its damage."""
    sid, text, length, created_at, name = row
    if type(length) is not int or length < 0:
        reason = f"the stored length {length!r} is invalid"
    else:
        try:
            header = _checked_header(sid, text)
        except ValueError as exc:
            reason = f"the stored header is invalid: {exc}"
        else:
            shown = name if isinstance(name, str) and name else None
            return StoredSummary(header=header, length=length, name=shown)
    reason = " ".join(reason.split())  # one plain line, whatever the codec said
    log.warning("storage.session_damaged", path=str(path), session_id=sid, error=reason)
    created = created_at if type(created_at) is int else None
    return DamagedSummary(id=str(sid), error=reason, created_at=created)


def summaries(path: Path, rows: list[Any]) -> SessionListing:
    """Rows of ``LIST_SQL`` decoded by the strict codecs; an undecodable row is listed damaged."""
    good: list[StoredSummary] = []
    damaged: list[DamagedSummary] = []
    for row in rows:
        decoded = _decoded_row(path, row)
        if isinstance(decoded, DamagedSummary):
            damaged.append(decoded)
        else:
            good.append(decoded)
    return SessionListing(good, damaged)


def page_rows(path: Path, rows: list[Any]) -> list[SessionRow]:
    """Rows of a page (:func:`page_query`) decoded in their order; a damaged one in its place."""
    return [_decoded_row(path, row) for row in rows]


def list_sessions_read_only(data_dir: Path, filename: str = DEFAULT_FILENAME) -> SessionListing:
    """List the Sessions of a store another process may hold, without its lock (blocking).

    Safe beside the writer: SQLite's WAL mode lets a reader see the last committed transaction
    while the writer continues, and the read-only connection can never write (nor "repair") the
    file. The integrity checks of a full open are the holder's business; undecodable rows are
    listed as damaged as by :meth:`SQLiteBackend.list_sessions`. An absent file lists nothing.
    A store of an older schema version (one a newer dsh has not migrated yet) is read as it is;
    its Sessions have no stored name.
    """
    path = (Path(data_dir) / filename).absolute()
    if not path.is_file():
        return SessionListing()
    try:
        conn = _connect_read_only(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path} read-only: {exc}") from exc
    try:
        if is_blank(conn):
            return SessionListing()  # created but never written: an empty store
        rows = conn.execute(list_sql(stored_version(conn))).fetchall()
    except sqlite3.Error as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()
    return summaries(path, rows)


def read_only_page(
    data_dir: Path,
    after: SessionCursor | None,
    limit: int,
    filename: str = DEFAULT_FILENAME,
    *,
    count: bool = False,
) -> tuple[list[SessionRow], int | None]:
    """One page of the Session list of a store another process may hold (blocking), through a
    connection that can never write; with ``count``, also how many Sessions it stores, read in
    the same snapshot (else ``None``). An absent or blank store is an empty page of none."""
    path = (Path(data_dir) / filename).absolute()
    if not path.is_file():
        return [], 0 if count else None
    try:
        conn = _connect_read_only(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path} read-only: {exc}") from exc
    try:
        if is_blank(conn):
            return [], 0 if count else None  # created but never written: an empty store
        conn.execute("BEGIN")  # one snapshot for the page and the count
        sql, params = page_query(after, limit, stored_version(conn))
        rows = conn.execute(sql, params).fetchall()
        stored = int(conn.execute(COUNT_SQL).fetchone()[0]) if count else None
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()
    return page_rows(path, rows), stored


def is_blank(conn: sqlite3.Connection) -> bool:
    """Whether the database ``conn`` reads was created but never written (no schema at all)."""
    return not _schema_rows(conn)


def stored_version(conn: sqlite3.Connection) -> int:
    """The schema version (``PRAGMA user_version``) of the store ``conn`` reads."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _CORRUPT_CODES


def _is_read_only(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) == sqlite3.SQLITE_READONLY


def rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            log.warning("storage.rollback_failed", error=str(exc))


class StoreFile:
    """One database file: the checks that open it and the errors that name it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: The schema version the last :meth:`connect` migrated from, ``None`` when it did not
        #: migrate (a new or current store).
        self.migrated_from: int | None = None

    # -- errors naming this file --------------------------------------------------------------

    def corrupt(self, what: str) -> StorageCorruptError:
        return corrupt_error(self.path, what)

    def mapped(self, exc: sqlite3.Error, doing: str) -> StorageError:
        if _is_corruption(exc):
            return self.corrupt(f"{exc} (while trying to {doing})")
        return StorageError(f"database file {self.path}: could not {doing}: {exc}")

    def _foreign(self, what: str) -> StorageCorruptError:
        log.error("storage.foreign_schema", path=str(self.path), problem=what)
        return StorageCorruptError(f"database file {self.path} is not a dsh store: {what}")

    def _read_only(self, exc: sqlite3.Error) -> StorageReadOnlyError:
        log.error("storage.read_only", path=str(self.path), error=str(exc))
        return StorageReadOnlyError(
            f"database file {self.path} is not writable ({exc}); "
            "dsh will not serve a store it cannot write"
        )

    # -- integrity checks at open (never write) ---------------------------------------------

    def stored_position(self, sealed: Position | None = None) -> Position | None:
        """The position the file holds after every check passed; ``None`` for a fresh store
        (absent, empty, or a database without our schema yet).

        ``sealed``: the position a clean close sealed for this very file (:mod:`._seal`); then
        the checks that read every page are skipped and it is the answer.
        """
        return None if self._check_file() else self._check_database(sealed)

    def _check_file(self) -> bool:
        """Byte-level checks before SQLite sees the file; True for a fresh (absent/empty) store."""
        path = self.path
        wal = path.with_name(path.name + "-wal")
        info = if_present(path.stat, f"cannot read database file {path}")
        if info is None:
            return True
        if not stat.S_ISREG(info.st_mode):
            raise StorageError(f"database file {path} is not a regular file")
        wal_info = if_present(wal.stat, f"cannot read the WAL file {wal}")
        wal_size = 0 if wal_info is None else wal_info.st_size
        size = info.st_size
        if size == 0:
            # Created but never written. With WAL frames beside it SQLite decides what it holds.
            return wal_size == 0
        try:
            with path.open("rb") as f:
                head = f.read(_HEADER_SIZE)
        except OSError as exc:
            raise StorageError(f"cannot read database file {path}: {exc}") from exc
        if head[: len(_SQLITE_MAGIC)] != _SQLITE_MAGIC[: len(head)]:
            raise self.corrupt("the file is not a SQLite database")
        if len(head) < _HEADER_SIZE:
            raise self.corrupt(f"the file has only {size} bytes, shorter than a SQLite header")
        page_size = int.from_bytes(head[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
            raise self.corrupt(f"the header declares an invalid page size {page_size}")
        if wal_size > _WAL_HEADER_SIZE:
            # Pages may legitimately live only in the WAL until the next checkpoint; the
            # read-only open below replays the WAL and quick_check judges the result.
            return False
        # Not left to quick_check: SQLite zero-fills a short read, so a cut inside the last page
        # passes quick_check although bytes are lost (whole pages it reports as malformed).
        if size % page_size:
            raise self.corrupt(f"its {size} bytes are not a whole number of {page_size}-byte pages")
        declared = int.from_bytes(head[28:32], "big")
        header_count_valid = head[24:28] == head[92:96]
        if header_count_valid and declared and size < declared * page_size:
            raise self.corrupt(
                f"the header declares {declared} pages ({declared * page_size} bytes) "
                f"but the file has only {size} bytes"
            )
        return False

    def _check_database(self, sealed: Position | None) -> Position | None:
        """Integrity and schema checks on a read-only connection: the stored position, or
        ``None`` for an empty database. With ``sealed`` the schema is checked, but neither
        ``quick_check`` nor the count runs (each reads every page)."""
        try:
            conn = _connect_read_only(self.path)
        except sqlite3.Error as exc:
            raise self.mapped(exc, "open the database read-only") from exc
        try:
            if sealed is None:
                problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
                if problems != ["ok"]:
                    raise self.corrupt("PRAGMA quick_check reported: " + "; ".join(problems))
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            schema = _schema_rows(conn)
            if version == 0 and not schema:
                return None
            if version not in _EXPECTED_SCHEMAS:
                raise self._foreign(
                    f"unknown schema version {version} (PRAGMA user_version); "
                    f"this dsh reads version {SCHEMA_VERSION}"
                )
            if schema != _EXPECTED_SCHEMAS[version]:
                names = ", ".join(f"{row[0]} {row[1]}" for row in schema) or "nothing"
                raise self._foreign(f"its schema ({names}) is not the dsh schema")
            if sealed is not None:
                log.info("storage.sealed_open", path=str(self.path))
                return sealed
            position_sql = _POSITION_SQL if version >= 3 else _POSITION_SQL_BEFORE_3
            sessions, events = conn.execute(position_sql).fetchone()
            return int(sessions), int(events)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and not _is_corruption(exc):
                raise self.mapped(exc, "check the database") from exc
            raise self.corrupt(str(exc)) from exc
        finally:
            conn.close()

    # -- the write connection ----------------------------------------------------------------

    def connect(self, fresh: bool) -> sqlite3.Connection:
        """The write connection (WAL, full sync), with the schema created when ``fresh``, proven
        writable before it is returned."""
        try:
            # check_same_thread=False only so that a cancelled open() can close the connection
            # after the worker thread has ended; all other use stays on the worker thread.
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self.mapped(exc, "open the database") from exc
        self.migrated_from = None
        try:
            self._enable_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            if fresh:
                self._create_schema(conn)
            else:
                self._migrate(conn)
            self._prove_writable(conn)
        except sqlite3.Error as exc:
            conn.close()
            if _is_read_only(exc):
                raise self._read_only(exc) from exc
            raise self.mapped(exc, "prepare the database") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _prove_writable(self, conn: sqlite3.Connection) -> None:
        """Write to the store inside a transaction that is rolled back; raises if refused.

        SQLite opens a file it may not write (its mode, or a header write version it does not
        know) without complaint and refuses only the first real write, so a store is proven
        writable before anything is served. The rolled-back change never reaches the WAL.
        """
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_PROBE_DDL)
        finally:
            rollback(conn)

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorageError(
                f"database file {self.path}: cannot switch to WAL journal mode (got {mode})"
            )

    def _still_version(self, version: int) -> Callable[[sqlite3.Connection], None]:
        def check(conn: sqlite3.Connection) -> None:
            if stored_version(conn) != version or _schema_rows(conn) != _EXPECTED_SCHEMAS[version]:
                raise self._foreign("the database changed while it was being opened")

        return check

    def _check_still_empty(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != 0 or _schema_rows(conn):
            raise self._foreign("the database changed while it was being opened")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring an older store (checked at open) to the current version in one transaction:
        add what it lacks. The wake index and the board are created empty (derived state: the
        host re-derives them), the names are filled as Sessions are written, nothing was
        deleted, the outbox starts empty (nothing was filed before it); the list's index is
        built from the stored Sessions (once, at this open)."""
        version = stored_version(conn)
        if version == SCHEMA_VERSION:
            return
        if version not in _MIGRATIONS:  # it was a version this dsh opens when it was checked
            raise self._foreign("the database changed while it was being opened")
        self._write_schema(conn, self._still_version(version), _MIGRATIONS[version])
        self.migrated_from = version
        log.info(
            "storage.migrated",
            path=str(self.path),
            from_version=version,
            schema_version=SCHEMA_VERSION,
        )

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        self._write_schema(conn, self._check_still_empty, _SCHEMA)
        log.info("storage.created", path=str(self.path), schema_version=SCHEMA_VERSION)

    @staticmethod
    def _write_schema(
        conn: sqlite3.Connection,
        check: Callable[[sqlite3.Connection], None],
        ddls: tuple[str, ...],
    ) -> None:
        """In one write transaction: ``check`` what is there, run ``ddls``, set the version."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            check(conn)
            for ddl in ddls:
                conn.execute(ddl)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
