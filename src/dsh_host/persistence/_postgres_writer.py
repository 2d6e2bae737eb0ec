"""Group commit for the PostgreSQL store: one writer task, one transaction per batch.

:meth:`PgWriter.submit` only queues a request. The writer task (owned by a
:class:`~dsh_hookspecs.TaskSlot`) takes every queued request, applies them on one pooled
connection inside a single transaction that shares one COMMIT (one WAL flush,
``synchronous_commit`` as the server has it, on by default). Requests arriving meanwhile form
the next batch.

First the whole batch is decided and written with a fixed number of statements
(:mod:`._postgres_batch`); a request that conflicts fails alone. Should a statement fail on one
request's data, or a create race with another process, that transaction is rolled back and the
batch is applied again request by request, each in its own SAVEPOINT, so only the bad request
fails. The stored lengths are read ``FOR UPDATE`` in id order and a create is an ``INSERT ...
ON CONFLICT DO NOTHING``, so two processes appending to one Session serialize in the database
and the loser gets :class:`StorageConflictError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import cast

import psycopg
import structlog

from dsh_hookspecs import TaskSlot

from ._backend import StorageConflictError, StorageCorruptError, StorageError, check_position
from ._postgres_batch import Replan, lock_lengths, write_planned
from ._postgres_schema import is_request_error

# The queued request is the same record as SQLite's (one encoded append and its future).
from ._sqlite_writer import Request as PgRequest

log = structlog.get_logger(__name__)

Connection = psycopg.AsyncConnection[tuple[object, ...]]


#: Runs ``body(conn)`` on a pooled connection; driver errors become :class:`StorageError`.
Borrow = Callable[
    [Callable[[Connection], Awaitable[list[StorageError | None]]], str],
    Awaitable[list[StorageError | None]],
]


class PgWriter:
    """The inbox of append requests and the task that commits them in groups."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._slot = TaskSlot(f"dsh-postgres-writer:{where}")
        #: ``None`` while not accepting; a ``None`` item asks the task to finish.
        self._inbox: asyncio.Queue[PgRequest | None] | None = None
        self.commits = 0  # transactions committed, each holding one group of appends
        self.appends = 0  # append requests stored

    @property
    def accepting(self) -> bool:
        return self._inbox is not None

    def start(self, borrow: Borrow) -> None:
        inbox: asyncio.Queue[PgRequest | None] = asyncio.Queue()
        self._inbox = inbox
        self._slot.start(lambda: self._run(inbox, borrow))

    def submit(self, request: PgRequest) -> None:
        assert self._inbox is not None, "submit() before start() or after stop()"
        self._inbox.put_nowait(request)

    async def stop(self) -> None:
        """Refuse new requests, let the task commit every queued one, and wait for it."""
        inbox, self._inbox = self._inbox, None
        if inbox is not None:
            inbox.put_nowait(None)  # behind every request already queued
        await self._slot.join()

    async def _run(self, inbox: asyncio.Queue[PgRequest | None], borrow: Borrow) -> None:
        taken: list[PgRequest | None] = []
        try:
            while None not in taken:
                taken = [await inbox.get()]
                while not inbox.empty():
                    taken.append(inbox.get_nowait())
                batch = [r for r in taken if r is not None and not r.future.done()]
                if batch:
                    await self._commit(borrow, batch)
        finally:
            # Requests are left only when the task itself is torn down: answer every one.
            while not inbox.empty():
                taken.append(inbox.get_nowait())
            gone = StorageError(
                f"{self._where}: the writer stopped; the write may or may not be stored"
            )
            for request in taken:
                if request is not None and not request.future.done():
                    request.future.set_exception(type(gone)(str(gone)))

    async def _commit(self, borrow: Borrow, batch: list[PgRequest]) -> None:
        try:
            outcomes = await borrow(lambda conn: self._transaction(conn, batch), "commit appends")
        except StorageError as exc:
            log.error(
                "storage.commit_failed", where=self._where, requests=len(batch), error=str(exc)
            )
            outcomes = [type(exc)(str(exc)) for _ in batch]
        else:
            self.commits += 1
            self.appends += outcomes.count(None)
        waiting = [
            (r.future, o) for r, o in zip(batch, outcomes, strict=True) if not r.future.done()
        ]
        for future, failure in waiting:
            if failure is None:
                future.set_result(None)
            else:
                future.set_exception(failure)

    async def _transaction(
        self, conn: Connection, batch: list[PgRequest]
    ) -> list[StorageError | None]:
        try:
            async with conn.transaction():
                return await write_planned(conn, batch, await lock_lengths(conn, batch))
        except Replan:
            log.debug("storage.batch_replanned", where=self._where, reason="a create raced")
        except psycopg.Error as exc:
            if not is_request_error(exc):
                raise  # the connection or server failed: the whole batch fails
            log.debug("storage.batch_replanned", where=self._where, reason=str(exc))
        # Rolled back: each request again in its own savepoint, so that one bad request (or a
        # create that raced) fails alone.
        async with conn.transaction():
            await lock_lengths(conn, batch)
            return [await self._in_savepoint(conn, request) for request in batch]

    async def _in_savepoint(self, conn: Connection, request: PgRequest) -> StorageError | None:
        try:
            async with conn.transaction():
                await _apply(conn, request)
        except StorageConflictError as exc:
            return exc
        except psycopg.Error as exc:
            if not is_request_error(exc):
                raise  # the connection or server failed: the whole batch fails
            if isinstance(exc, psycopg.IntegrityError):
                return StorageCorruptError(
                    f"{self._where}: stored events of session {request.session_id!r} "
                    f"disagree with its recorded length: {exc}"
                )
            return StorageError(f"append to session {request.session_id} refused: {exc}")
        return None


async def _apply(conn: Connection, request: PgRequest) -> None:
    sid, start = request.session_id, request.start
    cur = await conn.execute("SELECT length FROM sessions WHERE id = %s FOR UPDATE", (sid,))
    row = await cur.fetchone()
    creating = request.header_json is not None
    check_position(sid, start, None if row is None else cast(int, row[0]), creating=creating)
    if creating:
        cur = await conn.execute(
            "INSERT INTO sessions (id, header, created_at, length) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (id) DO NOTHING",
            (sid, request.header_json, request.created_at, len(request.rows)),
        )
        if cur.rowcount != 1:  # created by another process since the read above
            check_position(sid, start, 0, creating=True)
    elif request.rows:
        await conn.execute(
            "UPDATE sessions SET length = %s WHERE id = %s", (start + len(request.rows), sid)
        )
    if request.rows:
        async with conn.cursor() as many:
            await many.executemany(
                "INSERT INTO events (session_id, seq, type, time, data) "
                "VALUES (%s, %s, %s, %s, %s)",
                request.rows,
            )
    for plugin, at_ms in request.wakes:
        if at_ms is None:
            await conn.execute(
                "DELETE FROM wakes WHERE session_id = %s AND plugin = %s", (sid, plugin)
            )
        else:
            await conn.execute(
                "INSERT INTO wakes (session_id, plugin, at_ms) VALUES (%s, %s, %s) "
                "ON CONFLICT (session_id, plugin) DO UPDATE SET at_ms = EXCLUDED.at_ms",
                (sid, plugin, at_ms),
            )
