"""Group commit for the SQLite store: one writer task, one transaction per batch.

:meth:`GroupWriter.submit` only queues a request. The writer task (owned by a
:class:`~dsh_hookspecs.TaskSlot`) takes every queued request and applies them on the backend's
worker thread inside a single transaction (:func:`write_batch`), each in its own SAVEPOINT
(:func:`apply_in_savepoint`): a request that conflicts is rolled back to its savepoint and fails
alone, the others share one COMMIT and therefore one fsync. Requests arriving meanwhile form the
next batch.

A request's board changes, name and outbox changes are written in its savepoint with its
events, so they are stored with them or not at all. A delete is a request too (queued behind
every append requested before it): it removes the Session's rows from every table and adds what
it removed to the tally of deletes (``deleted``), so the store's position (stored plus deleted)
never goes back.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path

import structlog

from dsh_hookspecs import TaskSlot

from .._backend import StorageConflictError, StorageError, check_position
from .._writes import OutboxPlan, Outcomes, Request, plan_outbox
from ._file import StoreFile, rollback

log = structlog.get_logger(__name__)


#: Runs one batch on the worker thread (see :func:`write_batch`).
BatchWriter = Callable[[list[Request]], Outcomes]


class GroupWriter:
    """The queue of append requests and the task that commits them in groups."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._slot = TaskSlot(f"dsh-sqlite-writer:{path}")
        self._queue: list[Request] = []
        self._wakeup = asyncio.Event()
        self._accepting = False
        self._in_flight = 0
        #: Number of append transactions committed (one per group of appends).
        self.commits = 0
        #: Number of append requests stored.
        self.appends = 0

    @property
    def accepting(self) -> bool:
        return self._accepting

    @property
    def pending(self) -> int:
        """Requests accepted but not yet committed or failed."""
        return len(self._queue) + self._in_flight

    def start(self, executor: Executor, write: BatchWriter) -> None:
        """Accept requests and start the writer task, which runs ``write`` on ``executor``."""
        self._queue = []
        self._wakeup = asyncio.Event()
        self._accepting = True
        self._slot.start(lambda: self._write_loop(executor, write))

    def submit(self, request: Request) -> None:
        self._queue.append(request)
        self._wakeup.set()

    async def stop(self) -> None:
        """Refuse new requests, let the writer commit every queued one, and wait for it.

        Cancelling the caller stops the wait, never the writer mid-batch.
        """
        self._accepting = False
        self._wakeup.set()
        await self._slot.join()

    async def _write_loop(self, executor: Executor, write: BatchWriter) -> None:
        loop = asyncio.get_running_loop()
        batch: list[Request] = []
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
                    outcomes = await loop.run_in_executor(executor, write, batch)
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
                    self.appends += sum(
                        1
                        for r, o in zip(batch, outcomes, strict=True)
                        if o is None and not r.delete
                    )
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


#: Applies one request inside the open transaction (see :func:`apply_in_savepoint`).
RequestApplier = Callable[[sqlite3.Connection, Request], StorageError | None]


def write_batch(
    conn: sqlite3.Connection,
    file: StoreFile,
    batch: list[Request],
    apply: RequestApplier,
    committed: Callable[[int, int], None],
) -> Outcomes:
    """Worker thread: one transaction, one savepoint per request.

    ``committed(sessions, events)`` is told what the batch stored, only once COMMIT returned.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise file.mapped(exc, "begin a write transaction") from exc
    try:
        outcomes = [apply(conn, request) for request in batch]
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        rollback(conn)
        raise file.mapped(exc, "commit a write transaction") from exc
    except BaseException:
        rollback(conn)
        raise
    # COMMIT returned: the batch is durable, so the record may now say so (never before).
    # A failed batch records nothing: were it stored after all, the record is only behind.
    stored = [request for request, outcome in zip(batch, outcomes, strict=True) if outcome is None]
    committed(
        sum(request.header_json is not None for request in stored),
        sum(len(request.rows) for request in stored),
    )
    return outcomes


def apply_in_savepoint(
    conn: sqlite3.Connection, file: StoreFile, request: Request
) -> StorageError | None:
    conn.execute("SAVEPOINT request")
    try:
        _apply(conn, request)
    except Exception as exc:
        if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
            raise  # the database itself failed: the whole batch fails
        # The transaction is still open: undo this request alone.
        conn.execute("ROLLBACK TO request")
        conn.execute("RELEASE request")
        if isinstance(exc, StorageConflictError):
            return exc
        if isinstance(exc, sqlite3.IntegrityError):
            return file.corrupt(
                f"stored events of session {request.session_id!r} disagree with its "
                f"recorded length: {exc}"
            )
        log.exception("storage.request_failed", session_id=request.session_id, error=repr(exc))
        return StorageError(f"append to session {request.session_id} failed: {exc!r}")
    conn.execute("RELEASE request")
    return None


def _delete(conn: sqlite3.Connection, sid: str) -> None:
    """Remove every row of ``sid`` and count what was removed in the tally of deletes."""
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone() is None:
        raise StorageConflictError(f"session {sid} does not exist")
    for table in ("board", "names", "wakes", "outbox"):
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))  # noqa: S608 - fixed names
    events = conn.execute("DELETE FROM events WHERE session_id = ?", (sid,)).rowcount
    conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    conn.execute(
        "INSERT INTO deleted (id, sessions, events) VALUES (1, 1, ?) ON CONFLICT (id) "
        "DO UPDATE SET sessions = sessions + 1, events = events + excluded.events",
        (events,),
    )


def _apply(conn: sqlite3.Connection, request: Request) -> None:
    if request.delete:
        _delete(conn, request.session_id)
        return
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
    for plugin, at_ms in request.wakes:
        if at_ms is None:
            conn.execute("DELETE FROM wakes WHERE session_id = ? AND plugin = ?", (sid, plugin))
        else:
            conn.execute(
                "INSERT INTO wakes (session_id, plugin, at_ms) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id, plugin) DO UPDATE SET at_ms = excluded.at_ms",
                (sid, plugin, at_ms),
            )
    if request.board_clear:
        conn.executemany(
            "DELETE FROM board WHERE session_id = ? AND plugin = ? AND key = ?",
            request.board_clear,
        )
    if request.board_set:
        conn.executemany(
            "INSERT INTO board (session_id, plugin, key, kind, at_ms, data) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, plugin, key) DO UPDATE SET "
            "kind = excluded.kind, at_ms = excluded.at_ms, data = excluded.data",
            request.board_set,
        )
    if request.name is not None:
        conn.execute(
            "INSERT INTO names (session_id, name) VALUES (?, ?) "
            "ON CONFLICT (session_id) DO UPDATE SET name = excluded.name",
            (sid, request.name),
        )
    if request.outbox:
        write_outbox(conn, plan_outbox((sid, change) for change in request.outbox))


#: Withdraw the pending entries of one notice.
_OUTBOX_WITHDRAW_SQL = (
    "UPDATE outbox SET status = 'withdrawn' "
    "WHERE session_id = ? AND plugin = ? AND key = ? AND status = 'pending'"
)
#: Insert one entry unless it is stored (in any state).
_OUTBOX_INSERT_SQL = (
    "INSERT INTO outbox (session_id, plugin, key, channel, notice, status, attempts, next_ms, "
    "error, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, NULL, ?7) "
    "ON CONFLICT (session_id, plugin, key, channel) DO NOTHING"
)


def write_outbox(conn: sqlite3.Connection, plan: OutboxPlan) -> None:
    """Store ``plan`` (:func:`~.._writes.plan_outbox`) inside the open transaction."""
    if plan.withdraw:
        conn.executemany(_OUTBOX_WITHDRAW_SQL, plan.withdraw)
    if plan.insert:
        conn.executemany(_OUTBOX_INSERT_SQL, plan.insert)


def _batch_failure(exc: Exception) -> StorageError:
    """A fresh exception per request (one instance must not be raised in several tasks)."""
    if isinstance(exc, StorageError):
        failure = type(exc)(str(exc))
    else:
        failure = StorageError(f"write failed: {exc!r}")
    failure.__cause__ = exc
    return failure
