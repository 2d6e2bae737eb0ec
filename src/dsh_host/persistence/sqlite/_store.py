"""The embedded default backend: one SQLite database file in the data folder.

Durability and crash safety come from SQLite itself: WAL journal, ``synchronous=FULL`` (every
commit is fsynced), explicit ``BEGIN IMMEDIATE`` / ``COMMIT`` in autocommit mode. A torn WAL
tail is discarded by SQLite's own recovery, so a store reopened after a crash holds exactly the
transactions that committed.

Threading: every ``sqlite3`` call runs on one worker thread owned by the backend, so the event
loop never waits on the disk and the connection is never used from two threads at once.

Group commit: :meth:`SQLiteBackend.append` only queues a request; the writer of
:mod:`._writer` commits every queued request in one transaction, each in its own
SAVEPOINT (a conflicting request fails alone). ``commits`` / ``appends`` count transactions and
stored requests so that grouping can be observed.

The store is never replaced or rewritten to "repair" it: a file that is not ours, truncated, or
failing ``PRAGMA quick_check`` is reported at :meth:`~SQLiteBackend.open` with
:class:`StorageCorruptError`, and the integrity checks run on a read-only connection
(:mod:`._file`). Open also refuses a store it cannot write (:class:`StorageReadOnlyError`,
proven by a write that is rolled back) and a store that holds less than was acknowledged
(:class:`StorageBehindError`, against the position record of :mod:`._position`). One
undecodable Session row never hides the others: listings name it in
:attr:`SessionListing.damaged`. The two checks that read every page (``quick_check`` and the
count the position record is compared with) are skipped when the last close was clean and the
file is untouched since (the seal of :mod:`._seal`), so a large store opens in constant time.

The board, names and deletes: board rows and a Session's name are written by the writer in the
savepoint of their append; board pages and counts are read on the worker thread like loads,
through the index ``board_by_kind`` (plugin, kind, at_ms, session_id, key), without reading any
log. A delete is queued to the writer behind the appends requested before it and removes every
row of the Session in one transaction; the tally of deletes it keeps in the store is part of the
store's position, so a delete never reads as lost data at the next open. A store of an older
schema version is migrated at open (:attr:`SQLiteBackend.needs_board_rebuild`).

The outbox: entries are filed and withdrawn by the writer in the savepoint of their append. A
claim or a settle is a write transaction of its own on the writer's thread and connection
(between two batches); a claim reads due entries through the index ``outbox_due`` (status,
next_ms). A Session's entries are read on the read thread through ``outbox_by_session``.

The Session list is paged newest first through the index ``sessions_by_creation``
(``created_at``, ``id``): :meth:`SQLiteBackend.list_page` reads one page and the stored names
of its rows, never a log (:func:`read_only_page` does the same beside a running holder).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import threading
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Sequence,
)
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, TypeVar

import structlog

from dsh_hookspecs import Event

from ... import _json, _records
from .._backend import (
    OUTBOX_COLUMNS,
    BoardCursor,
    BoardRow,
    DueWake,
    SessionCursor,
    SessionListing,
    SessionRow,
    StorageConflictError,
    StorageError,
    StoredSession,
    StoredSummary,
    board_rows,
    check_board_query,
    check_claim,
    check_page_limit,
    check_session_cursor,
    checked_settlement,
    claimed,
    decode_board_rows,
    outbox_row,
)
from .._loads import LoadBatcher, Loaded
from .._outbox import OutboxClaim, OutboxRow, Settlement, SettleOne
from .._transfer import ImportCounts, ImportedSession, logged
from .._write import Write
from .._writes import Outcomes, Request, append_request, delete_request
from ._file import (
    COUNT_SQL,
    DEFAULT_FILENAME,
    LIST_SQL,
    SCHEMA_VERSION,
    Position,
    StoreFile,
    decode_header,
    is_blank,
    list_sessions_read_only,
    page_query,
    page_rows,
    read_only_page,
    rollback,
    stored_version,
    summaries,
)
from ._lock import DataDirLock
from ._position import POSITION_SUFFIX, PositionRecord
from ._seal import SEAL_SUFFIX, Seal
from ._transfer import ExportSnapshot, import_all
from ._writer import GroupWriter, apply_in_savepoint, write_batch

__all__ = [
    "DEFAULT_FILENAME",
    "POSITION_SUFFIX",
    "SCHEMA_VERSION",
    "SEAL_SUFFIX",
    "SQLiteBackend",
    "list_sessions_read_only",
    "load_read_only",
    "read_only_page",
]

log = structlog.get_logger(__name__)

_T = TypeVar("_T")

_State = Literal["new", "opening", "open", "closed"]

#: One page of one plugin's board rows of one kind, soonest first (``{after}``: the cursor's
#: condition or nothing, ``{session}``: the Session's or nothing).
_BOARD_PAGE_SQL = (
    "SELECT b.session_id, n.name, b.key, b.kind, b.at_ms, b.data FROM board b "
    "LEFT JOIN names n ON n.session_id = b.session_id "
    "WHERE b.plugin = ? AND b.kind = ?{after}{session} "
    "ORDER BY b.at_ms, b.session_id, b.key LIMIT ?"
)
_BOARD_AFTER = " AND (b.at_ms, b.session_id, b.key) > (?, ?, ?)"
_BOARD_SESSION = " AND b.session_id = ?"
#: The most Sessions one batched load reads (well under SQLite's limit on bound parameters).
LOAD_BATCH = 256
_BOARD_COUNT_SQL = "SELECT count(*) FROM board b WHERE b.plugin = ? AND b.kind = ?{after}{session}"

#: The entries due at ``?1``, earliest ``next_ms`` first: pending ones, and sending ones whose
#: claim expired (each arm an ordered range of ``outbox_due``).
_OUTBOX_DUE_SQL = (
    f"SELECT id, {OUTBOX_COLUMNS} FROM outbox WHERE status = 'pending' AND next_ms <= ?1 "  # noqa: S608
    f"UNION ALL SELECT id, {OUTBOX_COLUMNS} FROM outbox "
    "WHERE status = 'sending' AND claim_until_ms < ?1 ORDER BY next_ms, id LIMIT ?2"
)
_OUTBOX_CLAIM_SQL = (
    "UPDATE outbox SET status = 'sending', attempts = attempts + 1, claimed_by = ?, "
    "claim_until_ms = ?, updated_ms = ? WHERE id = ?"
)
#: What a claim does to an entry it cannot decode.
_OUTBOX_DAMAGED_SQL = (
    "UPDATE outbox SET status = 'failed', error = 'damaged notice', updated_ms = ?, "
    "claimed_by = NULL, claim_until_ms = NULL WHERE id = ?"
)
#: The outcome of a claim, fenced by its owner.
_OUTBOX_SETTLE_SQL = (
    "UPDATE outbox SET status = ?, next_ms = coalesce(?, next_ms), error = ?, updated_ms = ?, "
    "claimed_by = NULL, claim_until_ms = NULL WHERE session_id = ? AND plugin = ? AND key = ? "
    "AND channel = ? AND status = 'sending' AND claimed_by = ?"
)
_OUTBOX_OF_SQL = f"SELECT {OUTBOX_COLUMNS} FROM outbox WHERE session_id = ? ORDER BY id"  # noqa: S608
_OUTBOX_EARLIEST_SQL = (
    "SELECT min(at) FROM (SELECT min(next_ms) AS at FROM outbox WHERE status = 'pending' "
    "UNION ALL SELECT min(claim_until_ms) FROM outbox WHERE status = 'sending')"
)


class SQLiteBackend(SettleOne):
    """Durable storage in ``<data_dir>/<filename>``, guarded by the data-folder lock.

    Silent loss is refused at open. The store's position (Sessions and events ever stored: those
    stored now plus those deleted, a tally the store keeps; both only grow) is recorded after
    every COMMIT that returned in a small file beside the database, ``<filename>.position``,
    with a plain write (no fsync of its own). A record behind the store is harmless (the
    process died between COMMIT and the write); a store behind the record has lost acknowledged
    commits (a deleted ``-wal`` file, a truncated, emptied or replaced database) and
    :meth:`open` raises :class:`StorageBehindError`, unless ``accept_data_loss`` is set: then it
    logs a warning and resets the record to the store.
    """

    name = "sqlite"
    #: See :attr:`Backend.needs_board_rebuild`: set by each :meth:`open`.
    needs_board_rebuild = False

    def __init__(
        self, data_dir: Path, *, filename: str = DEFAULT_FILENAME, accept_data_loss: bool = False
    ) -> None:
        self._dir = Path(data_dir).absolute()
        self._path = self._dir / filename
        self._file = StoreFile(self._path)
        self._record = PositionRecord(self._path, accept_data_loss=accept_data_loss)
        self._seal = Seal(self._path)
        self._lock = DataDirLock(self._dir)
        self._state: _State = "new"
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._writer = GroupWriter(self._path)
        self._closer: asyncio.Event | None = None
        self._loads = LoadBatcher(self._read_many, limit=LOAD_BATCH)
        #: Reads run on a thread and connection of their own (WAL lets them read beside the
        #: writer), so a page or a load never waits behind a commit's fsync.
        self._reads: ThreadPoolExecutor | None = None
        self._read_conn: sqlite3.Connection | None = None
        self._read_thread: int | None = None

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def position_file(self) -> Path:
        """The record of the last acknowledged position."""
        return self._record.path

    @property
    def position(self) -> Position:
        """``(sessions, events)`` ever stored (stored now plus deleted) through the last
        acknowledged commit."""
        return self._record.position

    @property
    def pending(self) -> int:
        """Append requests accepted but not yet committed or failed."""
        return self._writer.pending

    @property
    def commits(self) -> int:
        """Number of append transactions committed (one per group of appends)."""
        return self._writer.commits

    @property
    def appends(self) -> int:
        """Number of append requests stored."""
        return self._writer.appends

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
                self._record.close()
                self._lock.release()
            self._state = previous
            raise
        self._executor = executor
        self._conn = conn
        self._state = "open"
        # Only a store from before the board (version 3) lacks board rows and names; a later
        # migration adds an index and nothing to re-derive.
        before_board = self._file.migrated_from is not None and self._file.migrated_from < 3
        self.needs_board_rebuild = before_board and self._record.position[0] > 0
        # Looked up per batch, so that an instrumented ``_write_batch`` (tests) takes effect.
        self._writer.start(executor, lambda batch: self._write_batch(batch))  # noqa: PLW0108
        await self._open_reads()
        log.info("storage.opened", backend=self.name, path=str(self._path))

    async def _open_reads(self) -> None:
        """The read thread and its connection; without them (it could not open) reads share
        the writer's thread, as they always may."""
        reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-sqlite-read")
        try:
            self._read_conn = await asyncio.get_running_loop().run_in_executor(
                reads, self._open_reader
            )
        except (sqlite3.Error, OSError) as exc:
            reads.shutdown(wait=True)
            log.warning("storage.read_connection_failed", path=str(self._path), error=str(exc))
            return
        self._reads = reads

    def _open_reader(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, isolation_level=None, timeout=30)
        try:
            conn.execute("PRAGMA query_only = ON")
        except BaseException:
            conn.close()
            raise
        self._read_thread = threading.get_ident()
        return conn

    def _close_reader(self) -> None:
        conn, self._read_conn = self._read_conn, None
        if conn is not None:
            conn.close()

    async def close(self) -> None:
        while self._closer is not None:  # another close() is running; let it finish
            await self._closer.wait()
        if self._state != "open":
            return
        self._closer = done = asyncio.Event()
        try:
            # Cancelling close() must not kill the writer mid-batch: stop() only waits for it.
            await self._writer.stop()
            reads, self._reads = self._reads, None
            if reads is not None:  # before the writer's: the last close checkpoints the WAL
                await asyncio.get_running_loop().run_in_executor(reads, self._close_reader)
                reads.shutdown(wait=True)
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
            # Taken (and removed) before anything else reads the file: it vouches for this open.
            stored = self._file.stored_position(self._seal.take())
            position = stored or (0, 0)
            self._record.check_not_behind(position, fresh=stored is None)  # before any write
            conn = self._file.connect(stored is None)
            try:
                self._record.open(position)
            except BaseException:
                conn.close()
                raise
        except BaseException:
            self._record.close()
            self._lock.release()
            raise
        return conn

    def _close_sync(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                conn.close()  # the last close checkpoints the WAL into the database file
                # Clean: the next open may skip the checks that read every page (._seal).
                self._seal.write(self._record.position)
        except sqlite3.Error as exc:
            log.warning("storage.close_failed", path=str(self._path), error=str(exc))
        finally:
            self._record.close()
            self._lock.release()

    # -- the worker thread -----------------------------------------------------------------

    async def _call(self, fn: Callable[[], _T]) -> _T:
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"database file {self._path} is not open")
        assert self._executor is not None
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def _read(self, fn: Callable[[], _T]) -> _T:
        """Run the read ``fn`` on the read thread (on the writer's when there is none)."""
        reads = self._reads
        if reads is None:
            return await self._call(fn)
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"database file {self._path} is not open")
        return await asyncio.get_running_loop().run_in_executor(reads, fn)

    def _connection(self) -> sqlite3.Connection:
        """The connection of the calling thread: the read thread's, or the writer's."""
        if self._read_conn is not None and threading.get_ident() == self._read_thread:
            return self._read_conn
        if self._conn is None:
            raise StorageError(f"database file {self._path} is not open")
        return self._conn

    # -- reads -----------------------------------------------------------------------------

    async def load(self, session_id: str) -> StoredSession | None:
        """Loads asked for while the worker thread is busy are read together (one query per
        table for up to :data:`LOAD_BATCH` Sessions), so a herd of resumes shares its reads."""
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"database file {self._path} is not open")
        return await self._loads.load(session_id)

    async def _read_many(self, session_ids: Sequence[str]) -> dict[str, Loaded]:
        return await self._read(functools.partial(self._load_many_sync, session_ids))

    async def list_sessions(self) -> Sequence[StoredSummary]:
        return await self._read(self._list_sync)

    @classmethod
    def load_read_only(
        cls, data_dir: Path, session_id: str, filename: str = DEFAULT_FILENAME
    ) -> StoredSession | None:
        """Load one Session of a store another process may hold, without its lock (blocking),
        as :func:`list_sessions_read_only` lists them: through a connection that can never
        write. A Session (or a file) that is not there is ``None``; an undecodable one raises
        as :meth:`load` does."""
        reader = cls(data_dir, filename=filename)  # never opened: it takes no lock
        if not reader.path.is_file():
            return None
        try:
            conn = sqlite3.connect(
                reader.path.as_uri() + "?mode=ro", uri=True, isolation_level=None, timeout=5
            )
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {reader.path} read-only: {exc}") from exc
        try:
            try:
                if is_blank(conn):
                    return None  # created but never written: an empty store
                version = stored_version(conn)
            except sqlite3.Error as exc:
                raise reader._file.mapped(exc, "read the schema version") from exc
            return reader._load_sync(session_id, conn, version)
        finally:
            conn.close()

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        return await self._read(lambda: self._due_sync(now_ms, limit))

    async def earliest_wake(self) -> int | None:
        return await self._read(self._earliest_sync)

    def _due_sync(self, now_ms: int, limit: int) -> list[DueWake]:
        try:
            rows = self._connection().execute(
                "SELECT session_id, plugin, at_ms FROM wakes WHERE at_ms <= ? "
                "ORDER BY at_ms, session_id, plugin LIMIT ?",
                (now_ms, max(0, limit)),
            )
            return [(str(sid), str(plugin), int(at_ms)) for sid, plugin, at_ms in rows]
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "list due wakes") from exc

    def _earliest_sync(self) -> int | None:
        try:
            (at_ms,) = self._connection().execute("SELECT min(at_ms) FROM wakes").fetchone()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "read the earliest wake") from exc
        return None if at_ms is None else int(at_ms)

    def _load_sync(
        self, session_id: str, conn: sqlite3.Connection | None = None, version: int = SCHEMA_VERSION
    ) -> StoredSession | None:
        """One Session, through the open connection or ``conn`` of a store of schema
        ``version`` (see :func:`load_read_only`: an older store has no wake entries or board
        rows yet)."""
        outcome = self._load_many_sync([session_id], conn, version)[session_id]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def _load_many_sync(
        self,
        session_ids: Sequence[str],
        conn: sqlite3.Connection | None = None,
        version: int = SCHEMA_VERSION,
    ) -> dict[str, Loaded]:
        """Several Sessions, one query per table: each id's Session, ``None`` when it is not
        stored, or the error that makes it unreadable (one damaged Session never hides the
        others). A failing query raises for all of them."""
        conn = self._connection() if conn is None else conn
        marks = ",".join("?" * len(session_ids))
        params = tuple(session_ids)
        try:
            # One read transaction: the logs, wakes and boards of one snapshot (the read
            # thread reads beside the writer, which may commit between two statements).
            conn.execute("BEGIN")
            heads = conn.execute(
                f"SELECT id, header, length FROM sessions WHERE id IN ({marks})",  # noqa: S608
                params,
            ).fetchall()
            events: dict[str, list[Any]] = {}
            for row in conn.execute(
                "SELECT session_id, seq, type, time, data FROM events "  # noqa: S608
                f"WHERE session_id IN ({marks}) ORDER BY session_id, seq",
                params,
            ):
                events.setdefault(row[0], []).append(row[1:])
            wakes: dict[str, list[Any]] = {}
            if version >= 2:
                for row in conn.execute(
                    f"SELECT session_id, plugin, at_ms FROM wakes WHERE session_id IN ({marks})",  # noqa: S608
                    params,
                ):
                    wakes.setdefault(row[0], []).append(row[1:])
            board: dict[str, list[Any]] = {}
            if version >= 3:
                for row in conn.execute(
                    "SELECT session_id, plugin, key, kind, at_ms, data FROM board "  # noqa: S608
                    f"WHERE session_id IN ({marks})",
                    params,
                ):
                    board.setdefault(row[0], []).append(row[1:])
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            rollback(conn)
            what = f"session {session_ids[0]!r}" if len(session_ids) == 1 else "sessions"
            raise self._file.mapped(exc, f"load {what}") from exc
        loaded: dict[str, Loaded] = dict.fromkeys(session_ids)
        for session_id, header, length in heads:
            sid = str(session_id)
            try:
                loaded[sid] = self._decode(
                    sid,
                    header_text=header,
                    length=length,
                    rows=events.get(sid, ()),
                    wake_rows=wakes.get(sid, ()),
                    board_rows=board.get(sid, ()),
                )
            except StorageError as exc:
                loaded[sid] = exc
        return loaded

    def _decode(
        self,
        session_id: str,
        *,
        header_text: object,
        length: object,
        rows: Sequence[Any],
        wake_rows: Sequence[Any],
        board_rows: Sequence[Any],
    ) -> StoredSession:
        header = decode_header(self._path, session_id, header_text)
        events: list[Event] = []
        for expected, (seq, etype, time, data) in enumerate(rows):
            if seq != expected:
                raise self._file.corrupt(
                    f"session {session_id!r} has event seq {seq!r} where {expected} belongs"
                )
            try:
                if not isinstance(data, str):
                    raise _records.RecordError("data column is not text")
                obj = {"seq": seq, "type": etype, "time": time, "data": _json.loads(data)}
                events.append(_records.event_from_json(obj))
            except ValueError as exc:
                raise self._file.corrupt(
                    f"stored event seq {seq} of session {session_id!r} is invalid: {exc}"
                ) from exc
        if len(events) != length:
            raise self._file.corrupt(
                f"session {session_id!r} records length {length!r} but has {len(events)} events"
            )
        board = decode_board_rows(session_id, board_rows, self._file.corrupt)
        return StoredSession(
            header=header,
            events=tuple(events),
            wakes={str(p): int(at) for p, at in wake_rows},
            board=board,
        )

    async def list_page(
        self, *, after: SessionCursor | None = None, limit: int
    ) -> Sequence[SessionRow]:
        cursor = check_session_cursor(after)
        check_page_limit(limit)
        return await self._read(lambda: self._page_sync(cursor, limit))

    async def count_sessions(self) -> int:
        return await self._read(self._count_sync)

    def _page_sync(self, after: SessionCursor | None, limit: int) -> list[SessionRow]:
        sql, params = page_query(after, limit)
        try:
            rows = self._connection().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "list a page of sessions") from exc
        return page_rows(self._path, rows)

    def _count_sync(self) -> int:
        try:
            (count,) = self._connection().execute(COUNT_SQL).fetchone()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "count sessions") from exc
        return int(count)

    def _list_sync(self) -> SessionListing:
        conn = self._connection()
        try:
            rows = conn.execute(LIST_SQL).fetchall()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "list sessions") from exc
        return summaries(self._path, rows)

    # -- the board ---------------------------------------------------------------------------

    async def board_page(
        self,
        plugin: str,
        kind: str,
        *,
        after: BoardCursor | None = None,
        limit: int,
        session_id: str | None = None,
    ) -> Sequence[BoardRow]:
        cursor = check_board_query(plugin, kind, limit=limit, after=after, session_id=session_id)
        return await self._read(
            lambda: self._board_page_sync(plugin, kind, cursor, limit, session_id)
        )

    async def board_count(
        self, plugin: str, kind: str, *, after_ms: int | None = None, session_id: str | None = None
    ) -> int:
        check_board_query(plugin, kind, after_ms=after_ms, session_id=session_id)
        sql = _BOARD_COUNT_SQL.format(
            after="" if after_ms is None else " AND b.at_ms > ?",
            session="" if session_id is None else _BOARD_SESSION,
        )
        params = [plugin, kind, *_present(after_ms, session_id)]
        return await self._read(lambda: self._board_count_sync(sql, params))

    def _board_page_sync(
        self,
        plugin: str,
        kind: str,
        after: BoardCursor | None,
        limit: int,
        session_id: str | None,
    ) -> list[BoardRow]:
        sql = _BOARD_PAGE_SQL.format(
            after="" if after is None else _BOARD_AFTER,
            session="" if session_id is None else _BOARD_SESSION,
        )
        params = [plugin, kind, *(after or ()), *_present(session_id), limit]
        try:
            found = self._connection().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "read the board") from exc
        return board_rows(plugin, found, path=str(self._path))

    def _board_count_sync(self, sql: str, params: list[object]) -> int:
        try:
            (count,) = self._connection().execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "count board rows") from exc
        return int(count)

    # -- writes (group commit) -------------------------------------------------------------

    async def append(self, write: Write) -> None:
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"database file {self._path} is not open")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._writer.submit(append_request(write, future))
        # If the caller is cancelled the request may still commit (like any write whose
        # acknowledgement is lost); a request not yet taken by the writer is dropped.
        await future

    async def delete(self, session_id: str) -> bool:
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"database file {self._path} is not open")
        if type(session_id) is not str or not session_id:
            raise ValueError(f"session id must be a non-empty string, got {session_id!r}")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._writer.submit(delete_request(session_id, future))
        try:
            await future
        except StorageConflictError:
            return False  # not stored
        log.info("storage.session_deleted", path=str(self._path), session_id=session_id)
        return True

    # Worker-thread steps of one batch, methods so that tests can instrument them.

    def _write_batch(self, batch: list[Request]) -> Outcomes:
        return write_batch(
            self._connection(), self._file, batch, self._apply_in_savepoint, self._record.advance
        )

    def _apply_in_savepoint(
        self, conn: sqlite3.Connection, request: Request
    ) -> StorageError | None:
        return apply_in_savepoint(conn, self._file, request)

    # -- export and import -------------------------------------------------------------------

    async def export_sessions(
        self, ids: Sequence[str] | None = None
    ) -> AsyncGenerator[StoredSession, None]:
        """:meth:`~.._transfer.ExportBackend.export_sessions` through a read-only connection
        opened for the export, in one read transaction (WAL lets it read beside a writer), on
        a thread of its own. It takes no lock and needs no :meth:`open`: it reads a store
        another process holds (``dsh export`` beside a running ``dsh serve``). An absent or
        blank store holds nothing."""
        loop = asyncio.get_running_loop()
        reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-sqlite-export")
        snapshot = ExportSnapshot(self._path, self._file, self._decode_row, ids)
        try:
            await loop.run_in_executor(reads, snapshot.begin)
            while batch := await loop.run_in_executor(reads, snapshot.next_batch):
                for stored in batch:
                    yield stored
        finally:
            reads.submit(snapshot.close)
            reads.shutdown(wait=False)

    def _decode_row(
        self, session_id: str, header_text: object, length: object, rows: Sequence[Any]
    ) -> StoredSession:
        return self._decode(
            session_id,
            header_text=header_text,
            length=length,
            rows=rows,
            wake_rows=(),
            board_rows=(),
        )

    def _load_inside(self, conn: sqlite3.Connection, session_id: str) -> StoredSession | None:
        """One stored Session's header and log, read inside the caller's open transaction."""
        head = conn.execute(
            "SELECT header, length FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if head is None:
            return None
        rows = conn.execute(
            "SELECT seq, type, time, data FROM events WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        return self._decode_row(session_id, head[0], head[1], rows)

    async def import_sessions(self, sessions: AsyncIterable[ImportedSession]) -> ImportCounts:
        """:meth:`~.._transfer.ImportBackend.import_sessions` in one transaction on the
        writer's thread (appends queued meanwhile wait for it). Each Session is encoded on the
        event loop as an append would be, and pulled by the writer's thread one at a time, so
        memory holds one Session; nothing is stored unless everything is (SQLite rolls back a
        transaction the process died in)."""
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"database file {self._path} is not open")
        loop = asyncio.get_running_loop()
        iterator = aiter(sessions)

        async def next_one() -> tuple[ImportedSession, Request] | None:
            try:
                item = await anext(iterator)
            except StopAsyncIteration:
                return None
            return item, append_request(item.write(), loop.create_future())

        def pull() -> tuple[ImportedSession, Request] | None:
            return asyncio.run_coroutine_threadsafe(next_one(), loop).result()

        counts = await self._call(
            lambda: import_all(self._connection(), self._file, pull, self._load_inside)
        )
        if counts.imported:
            self._record.advance(counts.imported, counts.imported_events)
        return logged(counts, path=str(self._path))

    # -- the outbox ----------------------------------------------------------------------------

    async def claim_outbox(
        self, now_ms: int, limit: int, owner: str, claim_until_ms: int
    ) -> Sequence[OutboxClaim]:
        check_claim(now_ms, limit, owner, claim_until_ms)
        if limit == 0:
            return []
        return await self._call(lambda: self._claim_sync(now_ms, limit, owner, claim_until_ms))

    async def settle_outbox_many(self, settlements: Sequence[Settlement]) -> Sequence[bool]:
        params = [_settle_params(each, checked_settlement(each)) for each in settlements]
        if not params:
            return []
        return await self._call(lambda: self._settle_sync(params))

    async def outbox_of(self, session_id: str) -> Sequence[OutboxRow]:
        return await self._read(lambda: self._outbox_of_sync(session_id))

    async def earliest_outbox(self) -> int | None:
        return await self._read(self._earliest_outbox_sync)

    def _claim_sync(
        self, now_ms: int, limit: int, owner: str, claim_until_ms: int
    ) -> list[OutboxClaim]:
        """One write transaction on the writer's connection (between two batches)."""
        conn = self._connection()
        claims: list[OutboxClaim] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                while len(claims) < limit:
                    found = conn.execute(_OUTBOX_DUE_SQL, (now_ms, limit - len(claims)))
                    rows = found.fetchall()
                    taken = len(claims)
                    for number, *columns in rows:
                        row = self._outbox_row(columns)
                        if row is None:
                            conn.execute(_OUTBOX_DAMAGED_SQL, (now_ms, number))
                            continue
                        conn.execute(_OUTBOX_CLAIM_SQL, (owner, claim_until_ms, now_ms, number))
                        claims.append(claimed(row, now_ms))
                    if len(claims) - taken == len(rows):  # else damaged ones took places
                        break
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "claim outbox entries") from exc
        return claims

    def _settle_sync(self, params: list[tuple[object, ...]]) -> list[bool]:
        """One write transaction on the writer's connection (between two batches)."""
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                settled = [conn.execute(_OUTBOX_SETTLE_SQL, one).rowcount == 1 for one in params]
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "settle outbox entries") from exc
        return settled

    def _outbox_of_sync(self, session_id: str) -> list[OutboxRow]:
        try:
            found = self._connection().execute(_OUTBOX_OF_SQL, (session_id,)).fetchall()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "read the outbox") from exc
        return [row for row in map(self._outbox_row, found) if row is not None]

    def _earliest_outbox_sync(self) -> int | None:
        try:
            (at_ms,) = self._connection().execute(_OUTBOX_EARLIEST_SQL).fetchone()
        except sqlite3.Error as exc:
            raise self._file.mapped(exc, "read the earliest outbox entry") from exc
        return None if at_ms is None else int(at_ms)

    def _outbox_row(self, columns: Sequence[object]) -> OutboxRow | None:
        return outbox_row(columns, path=str(self._path))


def _settle_params(each: Settlement, error: str | None) -> tuple[object, ...]:
    row = each.row
    return (
        each.status,
        each.next_ms,
        error,
        each.now_ms,
        row.session_id,
        row.plugin,
        row.key,
        row.channel,
        each.owner,
    )


def _present(*values: object) -> list[object]:
    """The values that are not ``None`` (the parameters of optional conditions)."""
    return [value for value in values if value is not None]


def load_read_only(
    data_dir: Path, session_id: str, filename: str = DEFAULT_FILENAME
) -> StoredSession | None:
    """:meth:`SQLiteBackend.load_read_only` (``dsh sessions`` reads names and views this way)."""
    return SQLiteBackend.load_read_only(data_dir, session_id, filename)
