"""The embedded default backend: one SQLite database file in the data folder.

Durability and crash safety come from SQLite itself: WAL journal, ``synchronous=FULL`` (every
commit is fsynced), explicit ``BEGIN IMMEDIATE`` / ``COMMIT`` in autocommit mode. A torn WAL
tail is discarded by SQLite's own recovery, so a store reopened after a crash holds exactly the
transactions that committed.

Threading: every ``sqlite3`` call runs on one worker thread owned by the backend, so the event
loop never waits on the disk and the connection is never used from two threads at once.

Group commit: :meth:`SQLiteBackend.append` only queues a request. One writer task takes every
queued request and applies them on the worker thread inside a single transaction, each in its
own SAVEPOINT: a request that conflicts is rolled back to its savepoint and fails alone, the
others share one COMMIT and therefore one fsync. Requests arriving meanwhile form the next
batch. ``commits`` / ``appends`` count transactions and stored requests so that grouping can be
observed.

The store is never replaced or rewritten to "repair" it: a file that is not ours, truncated, or
failing ``PRAGMA quick_check`` is reported at :meth:`~SQLiteBackend.open` with
:class:`StorageCorruptError`, and the integrity checks run on a read-only connection. Open also
refuses a store it cannot write (:class:`StorageReadOnlyError`, proven by a write that is rolled
back) and a store that holds less than was acknowledged (:class:`StorageBehindError`, against
the position record described on :class:`SQLiteBackend`). One undecodable Session row never
hides the others: listings name it in :attr:`SessionListing.damaged`.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import structlog

from dsh_hookspecs import Event, SessionHeader
from dsh_host import _json, _records

from ._backend import (
    DamagedSummary,
    SessionListing,
    StorageBehindError,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StorageReadOnlyError,
    StoredSession,
    StoredSummary,
    check_position,
    encode_append,
)
from ._lock import DataDirLock

log = structlog.get_logger(__name__)

_T = TypeVar("_T")

#: ``PRAGMA user_version`` of the schema below.
SCHEMA_VERSION = 1

#: The database file's name inside the data folder, unless a backend is given another.
DEFAULT_FILENAME = "dsh.sqlite3"

_SCHEMA = (
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

_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
_WAL_HEADER_SIZE = 32
_BUSY_TIMEOUT_MS = 5000
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
#: Suffix of the position record beside the database file (see :class:`SQLiteBackend`).
POSITION_SUFFIX = ".position"
#: The store's position as ``(sessions, events)``: both only grow with every acknowledged write.
_Position = tuple[int, int]
_POSITION_RECORD = "dsh-position v1 sessions={:020d} events={:020d}\n"
_POSITION_RE = re.compile(rb"dsh-position v1 sessions=(\d{20}) events=(\d{20})\n")
#: Counted, not summed from ``sessions.length``: a damaged length must not look like a loss.
#: (Open already reads every page for quick_check; this adds one more pass over the events.)
_POSITION_SQL = "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events)"
#: A scratch table created inside the start-up write probe and rolled back with it.
_PROBE_DDL = "CREATE TABLE dsh_write_probe (x INTEGER)"
_LIST_SQL = "SELECT id, header, length, created_at FROM sessions ORDER BY created_at, id"

_SchemaRow = tuple[str, str, str, str | None]


def _schema_rows(conn: sqlite3.Connection) -> list[_SchemaRow]:
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name"
    ).fetchall()
    return [tuple(row) for row in rows]


def _expected_schema() -> list[_SchemaRow]:
    """The sqlite_schema rows our DDL produces (SQLite stores the DDL text verbatim)."""
    conn = sqlite3.connect(":memory:")
    try:
        for ddl in _SCHEMA:
            conn.execute(ddl)
        return _schema_rows(conn)
    finally:
        conn.close()


_EXPECTED_SCHEMA = _expected_schema()


def _corrupt_error(path: Path, what: str) -> StorageCorruptError:
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


def _decode_header(path: Path, session_id: str, text: object) -> SessionHeader:
    try:
        return _checked_header(session_id, text)
    except ValueError as exc:
        raise _corrupt_error(
            path, f"the stored header of session {session_id!r} is invalid: {exc}"
        ) from exc


def _summaries(path: Path, rows: list[Any]) -> SessionListing:
    """Rows of ``_LIST_SQL`` decoded by the strict codecs; an undecodable row is listed damaged."""
    good: list[StoredSummary] = []
    damaged: list[DamagedSummary] = []
    for sid, text, length, created_at in rows:
        if type(length) is not int or length < 0:
            reason = f"the stored length {length!r} is invalid"
        else:
            try:
                header = _checked_header(sid, text)
            except ValueError as exc:
                reason = f"the stored header is invalid: {exc}"
            else:
                good.append(StoredSummary(header=header, length=length))
                continue
        reason = " ".join(reason.split())  # one plain line, whatever the codec said
        log.warning("storage.session_damaged", path=str(path), session_id=sid, error=reason)
        created = created_at if type(created_at) is int else None
        damaged.append(DamagedSummary(id=str(sid), error=reason, created_at=created))
    return SessionListing(good, damaged)


def list_sessions_read_only(data_dir: Path, filename: str = DEFAULT_FILENAME) -> SessionListing:
    """List the Sessions of a store another process may hold, without its lock (blocking).

    Safe beside the writer: SQLite's WAL mode lets a reader see the last committed transaction
    while the writer continues, and the read-only connection can never write (nor "repair") the
    file. The integrity checks of a full open are the holder's business; undecodable rows are
    listed as damaged as by :meth:`SQLiteBackend.list_sessions`. An absent file lists nothing.
    """
    path = (Path(data_dir) / filename).absolute()
    if not path.is_file():
        return SessionListing()
    try:
        conn = _connect_read_only(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path} read-only: {exc}") from exc
    try:
        if not _schema_rows(conn):
            return SessionListing()  # created but never written: an empty store
        rows = conn.execute(_LIST_SQL).fetchall()
    except sqlite3.Error as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()
    return _summaries(path, rows)


@dataclass(slots=True, eq=False)
class _Request:
    """One queued append, already encoded."""

    session_id: str
    start: int
    header_json: str | None
    created_at: int
    rows: list[tuple[str, int, str, int, str]]
    future: asyncio.Future[None]


_State = Literal["new", "opening", "open", "closed"]


class SQLiteBackend:
    """Durable storage in ``<data_dir>/<filename>``, guarded by the data-folder lock.

    Silent loss is refused at open. The store's position (Sessions stored, events stored;
    both only grow) is recorded after every COMMIT that returned in a small file beside the
    database, ``<filename>.position``, with a plain write (no fsync of its own). A record behind
    the store is harmless (the process died between COMMIT and the write); a store behind the
    record has lost acknowledged commits (a deleted ``-wal`` file, a truncated, emptied or
    replaced database) and :meth:`open` raises :class:`StorageBehindError`, unless
    ``accept_data_loss`` is set: then it logs a warning and resets the record to the store.
    """

    name = "sqlite"

    def __init__(
        self, data_dir: Path, *, filename: str = DEFAULT_FILENAME, accept_data_loss: bool = False
    ) -> None:
        self._dir = Path(data_dir).absolute()
        self._path = self._dir / filename
        self._lock = DataDirLock(self._dir)
        self._accept_data_loss = accept_data_loss
        self._position_path = self._dir / (filename + POSITION_SUFFIX)
        self._position: _Position = (0, 0)
        self._position_fd: int | None = None
        self._position_warned = False
        self._state: _State = "new"
        self._accepting = False
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._writer: asyncio.Task[None] | None = None
        self._wakeup: asyncio.Event | None = None
        self._closer: asyncio.Event | None = None
        self._queue: list[_Request] = []
        self._in_flight = 0
        #: Number of append transactions committed (one per group of appends).
        self.commits = 0
        #: Number of append requests stored.
        self.appends = 0

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def position_file(self) -> Path:
        """The record of the last acknowledged position."""
        return self._position_path

    @property
    def position(self) -> _Position:
        """``(sessions, events)`` stored through the last acknowledged commit."""
        return self._position

    @property
    def pending(self) -> int:
        """Append requests accepted but not yet committed or failed."""
        return len(self._queue) + self._in_flight

    def __repr__(self) -> str:
        return f"SQLiteBackend({str(self._path)!r}, state={self._state})"

    # -- lifecycle -------------------------------------------------------------------------

    async def open(self) -> None:
        if self._state in ("opening", "open") or self._closer is not None:
            raise StorageError(f"database file {self._path} is already open")
        previous, self._state = self._state, "opening"
        loop = asyncio.get_running_loop()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-sqlite")
        opening: Future[sqlite3.Connection] = executor.submit(self._open_sync)
        try:
            conn = await asyncio.wrap_future(opening, loop=loop)
        except BaseException:
            # Also on cancellation: let the thread finish, then undo whatever it acquired.
            executor.shutdown(wait=True)
            if not opening.cancelled() and opening.exception() is None:
                opening.result().close()
                self._close_position_record()
                self._lock.release()
            self._state = previous
            raise
        self._executor = executor
        self._conn = conn
        self._queue = []
        self._wakeup = asyncio.Event()
        self._accepting = True
        self._state = "open"
        self._writer = loop.create_task(self._write_loop(), name=f"dsh-sqlite-writer:{self._path}")
        log.info("storage.opened", backend=self.name, path=str(self._path))

    async def close(self) -> None:
        while self._closer is not None:  # another close() is running; let it finish
            await self._closer.wait()
        if self._state != "open":
            return
        self._closer = done = asyncio.Event()
        try:
            self._accepting = False
            assert self._wakeup is not None
            self._wakeup.set()
            if self._writer is not None:
                # Shielded: cancelling close() must not kill the writer mid-batch.
                await asyncio.shield(self._writer)
                self._writer = None
            executor = self._executor
            assert executor is not None
            await asyncio.get_running_loop().run_in_executor(executor, self._close_sync)
            executor.shutdown(wait=True)
            self._executor = None
            self._state = "closed"
            log.info("storage.closed", backend=self.name, path=str(self._path))
        finally:
            self._closer = None
            done.set()

    def _open_sync(self) -> sqlite3.Connection:
        self._lock.acquire()  # first: a folder held by another process is never touched
        try:
            # None: a fresh store (absent, empty, or a database without our schema yet).
            stored = None if self._check_file() else self._check_database()
            position = stored or (0, 0)
            self._check_not_behind(position, fresh=stored is None)  # before anything is written
            conn = self._connect(stored is None)
            try:
                self._open_position_record(position)
            except BaseException:
                conn.close()
                raise
        except BaseException:
            self._close_position_record()
            self._lock.release()
            raise
        return conn

    def _close_sync(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                conn.close()  # the last close checkpoints the WAL into the database file
        except sqlite3.Error as exc:
            log.warning("storage.close_failed", path=str(self._path), error=str(exc))
        finally:
            self._close_position_record()
            self._lock.release()

    # -- the position record (silent loss is refused at open) --------------------------------

    def _read_position_record(self) -> _Position | None:
        try:
            raw = self._position_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {self._position_path}: {exc}") from exc
        if not raw:  # created, never written (or emptied by a power cut): nothing recorded
            return None
        match = _POSITION_RE.fullmatch(raw)
        if match is None:
            # Not ours to judge: refusing would be a false alarm; it is rewritten below.
            log.warning("storage.position_unreadable", path=str(self._position_path))
            return None
        return int(match[1]), int(match[2])

    def _check_not_behind(self, stored: _Position, *, fresh: bool) -> None:
        recorded = self._read_position_record()
        if recorded is None or (stored[0] >= recorded[0] and stored[1] >= recorded[1]):
            return
        (log.warning if self._accept_data_loss else log.error)(
            "storage.data_loss_accepted" if self._accept_data_loss else "storage.behind",
            path=str(self._path),
            stored_sessions=stored[0],
            stored_events=stored[1],
            acknowledged_sessions=recorded[0],
            acknowledged_events=recorded[1],
        )
        if self._accept_data_loss:
            return
        holds = "is missing or empty" if fresh else f"holds {_amount(stored)}"
        raise StorageBehindError(
            f"database file {self._path} {holds}, but {_amount(recorded)} were acknowledged "
            f"(recorded in {self._position_path}): "
            f"acknowledged commits are missing (a lost {self._path.name}-wal file, a truncated "
            "or replaced database?); refusing to start. To start anyway with what the store "
            "holds, run dsh serve --accept-data-loss"
        )

    def _open_position_record(self, position: _Position) -> None:
        record = _POSITION_RECORD.format(*position).encode("ascii")
        try:
            fd = os.open(self._position_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open {self._position_path}: {exc}") from exc
        self._position_fd = fd
        try:
            os.pwrite(fd, record, 0)
            os.ftruncate(fd, len(record))
        except OSError as exc:
            raise StorageError(f"cannot write {self._position_path}: {exc}") from exc
        self._position = position

    def _close_position_record(self) -> None:
        fd, self._position_fd = self._position_fd, None
        if fd is not None:
            os.close(fd)

    def _record_position(self, position: _Position) -> None:
        """Worker thread, only after a COMMIT returned: the record is never ahead of the store."""
        self._position = position
        fd = self._position_fd
        if fd is None:
            return
        try:
            # Fixed width, in place: one write, no truncation, no fsync of its own.
            os.pwrite(fd, _POSITION_RECORD.format(*position).encode("ascii"), 0)
        except OSError as exc:
            # The commit itself is durable; a stale record only weakens the check at open.
            if not self._position_warned:
                self._position_warned = True
                log.warning(
                    "storage.position_unwritten", path=str(self._position_path), error=str(exc)
                )

    # -- integrity checks at open (never write) --------------------------------------------

    def _corrupt(self, what: str) -> StorageCorruptError:
        return _corrupt_error(self._path, what)

    def _foreign(self, what: str) -> StorageCorruptError:
        log.error("storage.foreign_schema", path=str(self._path), problem=what)
        return StorageCorruptError(f"database file {self._path} is not a dsh store: {what}")

    def _check_file(self) -> bool:
        """Byte-level checks before SQLite sees the file; True for a fresh (absent/empty) store."""
        wal = self._path.with_name(self._path.name + "-wal")
        try:
            info = self._path.stat()
        except FileNotFoundError:
            return True
        except OSError as exc:
            raise StorageError(f"cannot read database file {self._path}: {exc}") from exc
        if not stat.S_ISREG(info.st_mode):
            raise StorageError(f"database file {self._path} is not a regular file")
        try:
            wal_size = wal.stat().st_size
        except FileNotFoundError:
            wal_size = 0
        except OSError as exc:
            raise StorageError(f"cannot read the WAL file {wal}: {exc}") from exc
        size = info.st_size
        if size == 0:
            # Created but never written. With WAL frames beside it SQLite decides what it holds.
            return wal_size == 0
        try:
            with self._path.open("rb") as f:
                head = f.read(_HEADER_SIZE)
        except OSError as exc:
            raise StorageError(f"cannot read database file {self._path}: {exc}") from exc
        if head[: len(_SQLITE_MAGIC)] != _SQLITE_MAGIC[: len(head)]:
            raise self._corrupt("the file is not a SQLite database")
        if len(head) < _HEADER_SIZE:
            raise self._corrupt(f"the file has only {size} bytes, shorter than a SQLite header")
        page_size = int.from_bytes(head[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
            raise self._corrupt(f"the header declares an invalid page size {page_size}")
        if wal_size > _WAL_HEADER_SIZE:
            # Pages may legitimately live only in the WAL until the next checkpoint; the
            # read-only open below replays the WAL and quick_check judges the result.
            return False
        # Not left to quick_check: SQLite zero-fills a short read, so a cut inside the last page
        # passes quick_check although bytes are lost (whole pages it reports as malformed).
        if size % page_size:
            raise self._corrupt(
                f"its {size} bytes are not a whole number of {page_size}-byte pages"
            )
        declared = int.from_bytes(head[28:32], "big")
        header_count_valid = head[24:28] == head[92:96]
        if header_count_valid and declared and size < declared * page_size:
            raise self._corrupt(
                f"the header declares {declared} pages ({declared * page_size} bytes) "
                f"but the file has only {size} bytes"
            )
        return False

    def _check_database(self) -> _Position | None:
        """Integrity and schema checks on a read-only connection: the stored position, or
        ``None`` for an empty database."""
        try:
            conn = _connect_read_only(self._path)
        except sqlite3.Error as exc:
            raise self._mapped(exc, "open the database read-only") from exc
        try:
            problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
            if problems != ["ok"]:
                raise self._corrupt("PRAGMA quick_check reported: " + "; ".join(problems))
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            schema = _schema_rows(conn)
            if version == 0 and not schema:
                return None
            if version != SCHEMA_VERSION:
                raise self._foreign(
                    f"unknown schema version {version} (PRAGMA user_version); "
                    f"this dsh reads version {SCHEMA_VERSION}"
                )
            if schema != _EXPECTED_SCHEMA:
                names = ", ".join(f"{row[0]} {row[1]}" for row in schema) or "nothing"
                raise self._foreign(f"its schema ({names}) is not the dsh schema")
            sessions, events = conn.execute(_POSITION_SQL).fetchone()
            return int(sessions), int(events)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and not _is_corruption(exc):
                raise self._mapped(exc, "check the database") from exc
            raise self._corrupt(str(exc)) from exc
        finally:
            conn.close()

    def _connect(self, fresh: bool) -> sqlite3.Connection:
        try:
            # check_same_thread=False only so that a cancelled open() can close the connection
            # after the worker thread has ended; all other use stays on the worker thread.
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._mapped(exc, "open the database") from exc
        try:
            self._enable_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            if fresh:
                self._create_schema(conn)
            self._prove_writable(conn)
        except sqlite3.Error as exc:
            conn.close()
            if _is_read_only(exc):
                raise self._read_only(exc) from exc
            raise self._mapped(exc, "prepare the database") from exc
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
            _rollback(conn)

    def _read_only(self, exc: sqlite3.Error) -> StorageReadOnlyError:
        log.error("storage.read_only", path=str(self._path), error=str(exc))
        return StorageReadOnlyError(
            f"database file {self._path} is not writable ({exc}); "
            "dsh will not serve a store it cannot write"
        )

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorageError(
                f"database file {self._path}: cannot switch to WAL journal mode (got {mode})"
            )

    def _check_still_empty(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != 0 or _schema_rows(conn):
            raise self._foreign("the database changed while it was being opened")

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._check_still_empty(conn)
            for ddl in _SCHEMA:
                conn.execute(ddl)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        log.info("storage.created", path=str(self._path), schema_version=SCHEMA_VERSION)

    # -- error mapping ---------------------------------------------------------------------

    def _mapped(self, exc: sqlite3.Error, doing: str) -> StorageError:
        if _is_corruption(exc):
            return self._corrupt(f"{exc} (while trying to {doing})")
        return StorageError(f"database file {self._path}: could not {doing}: {exc}")

    async def _call(self, fn: Callable[[], _T]) -> _T:
        if self._state != "open" or not self._accepting:
            raise StorageError(f"database file {self._path} is not open")
        assert self._executor is not None
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StorageError(f"database file {self._path} is not open")
        return self._conn

    # -- reads -----------------------------------------------------------------------------

    async def load(self, session_id: str) -> StoredSession | None:
        return await self._call(lambda: self._load_sync(session_id))

    async def list_sessions(self) -> Sequence[StoredSummary]:
        return await self._call(self._list_sync)

    def _load_sync(self, session_id: str) -> StoredSession | None:
        conn = self._connection()
        try:
            row = conn.execute(
                "SELECT header, length FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            rows = conn.execute(
                "SELECT seq, type, time, data FROM events WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ).fetchall()
        except sqlite3.Error as exc:
            raise self._mapped(exc, f"load session {session_id!r}") from exc
        header = _decode_header(self._path, session_id, row[0])
        events: list[Event] = []
        for expected, (seq, etype, time, data) in enumerate(rows):
            if seq != expected:
                raise self._corrupt(
                    f"session {session_id!r} has event seq {seq!r} where {expected} belongs"
                )
            try:
                if not isinstance(data, str):
                    raise _records.RecordError("data column is not text")
                obj = {"seq": seq, "type": etype, "time": time, "data": _json.loads(data)}
                events.append(_records.event_from_json(obj))
            except ValueError as exc:
                raise self._corrupt(
                    f"stored event seq {seq} of session {session_id!r} is invalid: {exc}"
                ) from exc
        if len(events) != row[1]:
            raise self._corrupt(
                f"session {session_id!r} records length {row[1]!r} but has {len(events)} events"
            )
        return StoredSession(header=header, events=tuple(events))

    def _list_sync(self) -> SessionListing:
        conn = self._connection()
        try:
            rows = conn.execute(_LIST_SQL).fetchall()
        except sqlite3.Error as exc:
            raise self._mapped(exc, "list sessions") from exc
        return _summaries(self._path, rows)

    # -- writes (group commit) -------------------------------------------------------------

    async def append(
        self,
        session_id: str,
        start: int,
        events: Sequence[Event],
        header: SessionHeader | None = None,
    ) -> None:
        if self._state != "open" or not self._accepting:
            raise StorageError(f"database file {self._path} is not open")
        encoded = encode_append(session_id, start, events, header)
        rows = [
            (session_id, e.seq, e.type, e.time, data)
            for e, data in zip(events, encoded.data_json, strict=True)
        ]
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(
            _Request(
                session_id=session_id,
                start=start,
                header_json=encoded.header_json,
                created_at=0 if encoded.header is None else encoded.header.created_at,
                rows=rows,
                future=future,
            )
        )
        assert self._wakeup is not None
        self._wakeup.set()
        # If the caller is cancelled the request may still commit (like any write whose
        # acknowledgement is lost); a request not yet taken by the writer is dropped.
        await future

    async def _write_loop(self) -> None:
        assert self._wakeup is not None
        assert self._executor is not None
        loop = asyncio.get_running_loop()
        batch: list[_Request] = []
        try:
            while True:
                if not self._queue:
                    if not self._accepting:
                        return
                    self._wakeup.clear()
                    await self._wakeup.wait()
                    continue
                batch = [r for r in self._queue if not r.future.done()]
                self._queue = []
                if not batch:
                    continue
                self._in_flight = len(batch)
                try:
                    outcomes = await loop.run_in_executor(self._executor, self._write_batch, batch)
                except Exception as exc:
                    log.exception(
                        "storage.commit_failed",
                        path=str(self._path),
                        requests=len(batch),
                        error=str(exc),
                    )
                    outcomes = [_batch_failure(exc) for _ in batch]
                else:
                    self.commits += 1
                    self.appends += sum(1 for o in outcomes if o is None)
                finally:
                    self._in_flight = 0
                for request, outcome in zip(batch, outcomes, strict=True):
                    if request.future.done():
                        continue
                    if outcome is None:
                        request.future.set_result(None)
                    else:
                        request.future.set_exception(outcome)
                batch = []
        finally:
            # Only reached with requests left when the writer itself is torn down (the event
            # loop closing under an open backend): never leave an append waiting forever.
            for request in [*batch, *self._queue]:
                if not request.future.done():
                    request.future.set_exception(
                        StorageError(
                            f"database file {self._path}: the writer stopped; "
                            "the write may or may not be stored"
                        )
                    )
            self._queue = []

    def _write_batch(self, batch: list[_Request]) -> list[StorageError | None]:
        """Worker thread: one transaction, one savepoint per request."""
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._mapped(exc, "begin a write transaction") from exc
        try:
            outcomes = [self._apply_in_savepoint(conn, request) for request in batch]
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise self._mapped(exc, "commit a write transaction") from exc
        except BaseException:
            _rollback(conn)
            raise
        # COMMIT returned: the batch is durable, so the record may now say so (never before).
        # A failed batch records nothing: were it stored after all, the record is only behind.
        sessions, events = self._position
        for request, outcome in zip(batch, outcomes, strict=True):
            if outcome is None:
                sessions += request.header_json is not None
                events += len(request.rows)
        if (sessions, events) != self._position:
            self._record_position((sessions, events))
        return outcomes

    def _apply_in_savepoint(
        self, conn: sqlite3.Connection, request: _Request
    ) -> StorageError | None:
        conn.execute("SAVEPOINT request")
        try:
            self._apply(conn, request)
        except Exception as exc:
            if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                raise  # the database itself failed: the whole batch fails
            # The transaction is still open: undo this request alone.
            conn.execute("ROLLBACK TO request")
            conn.execute("RELEASE request")
            if isinstance(exc, StorageConflictError):
                return exc
            if isinstance(exc, sqlite3.IntegrityError):
                return self._corrupt(
                    f"stored events of session {request.session_id!r} disagree with its "
                    f"recorded length: {exc}"
                )
            log.exception("storage.request_failed", session_id=request.session_id, error=repr(exc))
            return StorageError(f"append to session {request.session_id} failed: {exc!r}")
        conn.execute("RELEASE request")
        return None

    def _apply(self, conn: sqlite3.Connection, request: _Request) -> None:
        sid, start = request.session_id, request.start
        # Inside the write transaction, so nothing changes between this read and the writes.
        row = conn.execute("SELECT length FROM sessions WHERE id = ?", (sid,)).fetchone()
        creating = request.header_json is not None
        check_position(sid, start, None if row is None else row[0], creating=creating)
        if creating:
            conn.execute(
                "INSERT INTO sessions (id, header, created_at, length) VALUES (?, ?, ?, ?)",
                (sid, request.header_json, request.created_at, len(request.rows)),
            )
        elif request.rows:
            conn.execute(
                "UPDATE sessions SET length = ? WHERE id = ?", (start + len(request.rows), sid)
            )
        if request.rows:
            conn.executemany(
                "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, ?, ?)",
                request.rows,
            )


def _is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _CORRUPT_CODES


def _amount(position: _Position) -> str:
    sessions, events = position
    return (
        f"{sessions} session{'' if sessions == 1 else 's'} and "
        f"{events} event{'' if events == 1 else 's'}"
    )


def _is_read_only(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) == sqlite3.SQLITE_READONLY


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            log.warning("storage.rollback_failed", error=str(exc))


def _batch_failure(exc: Exception) -> StorageError:
    """A fresh exception per request (one instance must not be raised in several tasks)."""
    if isinstance(exc, StorageError):
        failure = type(exc)(str(exc))
    else:
        failure = StorageError(f"write failed: {exc!r}")
    failure.__cause__ = exc
    return failure
