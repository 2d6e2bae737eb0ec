"""Group commit for the PostgreSQL store: one writer task, one transaction per batch.

:meth:`PgWriter.submit` only queues a request. The writer task (owned by a
:class:`~dsh_hookspecs.TaskSlot`) takes every queued request, applies them on one pooled
connection inside a single transaction that shares one COMMIT (one WAL flush,
``synchronous_commit`` as the server has it, on by default). Requests arriving meanwhile form
the next batch.

First the whole batch is decided and written with a fixed number of statements
(:mod:`._batch`); a request that conflicts fails alone. Should a statement fail on one
request's data, or a create race with another process, that transaction is rolled back and the
batch is applied again request by request, each in its own SAVEPOINT, so only the bad request
fails. The stored lengths are read ``FOR UPDATE`` in id order and a create is an ``INSERT ...
ON CONFLICT DO NOTHING``, so two processes appending to one Session serialize in the database
and the loser gets :class:`StorageConflictError`.

Leases: each transaction first claims, in the database, the free leases of Sessions it writes
without holding one (the first write after a restart of the store); every write then carries
its epoch, and a request the fence refuses fails alone with :class:`StorageFencedError` (its
lease is reported lost). What a commit granted is recorded only once it committed.

A batch holding a delete takes the per-request path. A delete fails alone with
:class:`SessionLiveElsewhereError` while another host holds an unexpired lease of its Session;
otherwise it removes every row of the Session (this host's lease, in the Session's row, goes
with it and is forgotten here once the delete committed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import cast

import psycopg
import structlog

from dsh_hookspecs import TaskSlot

from .._backend import (
    SessionLiveElsewhereError,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    StorageFencedError,
    check_position,
)
from .._writes import Outcomes, Request, plan_outbox
from ._batch import Fence, Replan, lock_lengths, write_outbox, write_planned
from ._leases import PgLeases
from ._schema import Connection, is_fenced, is_request_error

log = structlog.get_logger(__name__)

#: Take the leases of several Sessions (locked by the batch already) free to this owner.
_CLAIM_SQL = (
    "UPDATE sessions s SET epoch = s.epoch + 1, writer = s.epoch + 1, owner = %(owner)s, "
    "lease_until = dsh_now_ms() + %(ttl)s "
    "WHERE s.id = ANY(%(ids)s) "
    "AND (s.owner IS NULL OR s.owner = %(owner)s OR s.lease_until < dsh_now_ms()) "
    "RETURNING s.id, s.epoch"
)


#: Runs ``body(conn)`` on a pooled connection; driver errors become :class:`StorageError`.
Borrow = Callable[
    [Callable[[Connection], Awaitable[Outcomes]], str],
    Awaitable[Outcomes],
]


class PgWriter:
    """The inbox of append requests and the task that commits them in groups."""

    def __init__(self, where: str, leases: PgLeases) -> None:
        self._where = where
        self._leases = leases
        self._slot = TaskSlot(f"dsh-postgres-writer:{where}")
        #: ``None`` while not accepting; a ``None`` item asks the task to finish.
        self._inbox: asyncio.Queue[Request | None] | None = None
        self.commits = 0  # transactions committed, each holding one group of appends
        self.appends = 0  # append requests stored

    @property
    def accepting(self) -> bool:
        return self._inbox is not None

    def start(self, borrow: Borrow) -> None:
        inbox: asyncio.Queue[Request | None] = asyncio.Queue()
        self._inbox = inbox
        self._slot.start(lambda: self._run(inbox, borrow))

    def submit(self, request: Request) -> None:
        assert self._inbox is not None, "submit() before start() or after stop()"
        self._inbox.put_nowait(request)

    async def stop(self) -> None:
        """Refuse new requests, let the task commit every queued one, and wait for it."""
        inbox, self._inbox = self._inbox, None
        if inbox is not None:
            inbox.put_nowait(None)  # behind every request already queued
        await self._slot.join()

    async def _run(self, inbox: asyncio.Queue[Request | None], borrow: Borrow) -> None:
        taken: list[Request | None] = []
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

    async def _commit(self, borrow: Borrow, batch: list[Request]) -> None:
        try:
            outcomes = await borrow(lambda conn: self._transaction(conn, batch), "commit appends")
        except StorageError as exc:
            log.error(
                "storage.commit_failed", where=self._where, requests=len(batch), error=str(exc)
            )
            outcomes = [type(exc)(str(exc)) for _ in batch]
        else:
            self.commits += 1
            self.appends += sum(
                1 for r, o in zip(batch, outcomes, strict=True) if o is None and not r.delete
            )
        waiting = [
            (r.future, o) for r, o in zip(batch, outcomes, strict=True) if not r.future.done()
        ]
        for future, failure in waiting:
            if failure is None:
                future.set_result(None)
            else:
                future.set_exception(failure)

    async def _transaction(self, conn: Connection, batch: list[Request]) -> Outcomes:
        if not any(request.delete for request in batch):  # deletes take the path below
            try:
                async with conn.transaction():
                    stored = await lock_lengths(conn, batch)
                    fence = await self._fence(conn, stored)
                    outcomes = await write_planned(conn, batch, stored, fence)
                return self._settled(batch, outcomes, fence)
            except Replan:
                log.debug("storage.batch_replanned", where=self._where, reason="a create raced")
            except psycopg.Error as exc:
                if not is_request_error(exc):
                    raise  # the connection or server failed: the whole batch fails
                log.debug("storage.batch_replanned", where=self._where, reason=str(exc))
        # (Rolled back, if it was tried:) each request in its own savepoint, so that one bad
        # request (or a create that raced, or a write under a stale lease) fails alone.
        async with conn.transaction():
            fence = await self._fence(conn, await lock_lengths(conn, batch))
            outcomes = [await self._in_savepoint(conn, request, fence) for request in batch]
        return self._settled(batch, outcomes, fence)

    async def _fence(self, conn: Connection, stored: dict[str, int | None]) -> Fence:
        """The epochs this transaction writes under: those held, and free leases claimed now."""
        leases = self._leases
        epochs: dict[str, int] = {}
        unheld: list[str] = []
        for sid, length in stored.items():
            epoch = leases.epoch(sid)
            if epoch is not None:
                epochs[sid] = epoch
            elif length is not None:
                unheld.append(sid)
        if unheld:
            cur = await conn.execute(
                _CLAIM_SQL, {"owner": leases.owner, "ttl": leases.ttl_ms, "ids": unheld}
            )
            for claimed, claimed_epoch in await cur.fetchall():
                epochs[cast(str, claimed)] = cast(int, claimed_epoch)
        return Fence(owner=leases.owner, ttl_ms=leases.ttl_ms, epochs=epochs)

    def _settled(self, batch: list[Request], outcomes: Outcomes, fence: Fence) -> Outcomes:
        """Record what the committed transaction granted, and the leases found lost."""
        for request, outcome in zip(batch, outcomes, strict=True):
            sid = request.session_id
            if outcome is None and request.delete:
                self._leases.forget(sid)  # its lease was in the row the delete removed
            elif outcome is None and sid in fence.epochs:
                self._leases.granted(sid, fence.epochs[sid])
            elif isinstance(outcome, StorageFencedError):
                log.warning("storage.append_fenced", where=self._where, session_id=sid)
                self._leases.lost(sid, fenced=True)
        return outcomes

    async def _in_savepoint(
        self, conn: Connection, request: Request, fence: Fence
    ) -> StorageError | None:
        try:
            async with conn.transaction():
                await _apply(conn, request, fence)
        except (StorageConflictError, SessionLiveElsewhereError) as exc:
            return exc
        except psycopg.Error as exc:
            if not is_request_error(exc):
                raise  # the connection or server failed: the whole batch fails
            if is_fenced(exc):
                return StorageFencedError(
                    f"append to session {request.session_id} refused by the database: another "
                    "host holds a newer lease of it (this host was paused or cut off too long)"
                )
            if isinstance(exc, psycopg.IntegrityError):
                return StorageCorruptError(
                    f"{self._where}: stored events of session {request.session_id!r} "
                    f"disagree with its recorded length: {exc}"
                )
            return StorageError(f"append to session {request.session_id} refused: {exc}")
        return None


#: The Session's lease holder and the ms its lease has left, its row locked for the delete.
_HOLDER_FOR_DELETE_SQL = (
    "SELECT owner, lease_until - dsh_now_ms() FROM sessions WHERE id = %s FOR UPDATE"
)


async def _delete(conn: Connection, sid: str, fence: Fence) -> None:
    """Remove every row of ``sid``, unless another host holds an unexpired lease of it."""
    row = await (await conn.execute(_HOLDER_FOR_DELETE_SQL, (sid,))).fetchone()
    if row is None:
        raise StorageConflictError(f"session {sid} does not exist")
    owner, remaining = row
    if owner is not None and owner != fence.owner and cast(int, remaining) >= 0:
        raise SessionLiveElsewhereError(
            f"session {sid} is live on another host ({owner}) for up to "
            f"{cast(int, remaining) / 1000:.1f} s unless that host renews its lease; "
            "it was not deleted"
        )
    for table in ("board", "names", "wakes", "outbox", "events"):
        await conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (sid,))  # noqa: S608
    await conn.execute("DELETE FROM sessions WHERE id = %s", (sid,))


async def _apply(conn: Connection, request: Request, fence: Fence) -> None:
    if request.delete:
        await _delete(conn, request.session_id, fence)
        return
    sid, start = request.session_id, request.start
    cur = await conn.execute("SELECT length FROM sessions WHERE id = %s FOR UPDATE", (sid,))
    row = await cur.fetchone()
    creating = request.header_json is not None
    check_position(sid, start, None if row is None else cast(int, row[0]), creating=creating)
    if creating:
        cur = await conn.execute(
            "INSERT INTO sessions (id, header, created_at, length, epoch, writer, owner, "
            "lease_until) VALUES (%s, %s, %s, %s, 1, 1, %s, dsh_now_ms() + %s) "
            "ON CONFLICT (id) DO NOTHING",
            (
                sid,
                request.header_json,
                request.created_at,
                len(request.rows),
                fence.owner,
                fence.ttl_ms,
            ),
        )
        if cur.rowcount != 1:  # created by another process since the read above
            check_position(sid, start, 0, creating=True)
        fence.epochs[sid] = 1
    else:  # every write, even one of wake entries only, passes the fence
        await conn.execute(
            "UPDATE sessions SET length = %s, writer = %s WHERE id = %s",
            (start + len(request.rows), fence.writer(sid), sid),
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
    async with conn.cursor() as many:
        if request.board_clear:
            await many.executemany(
                "DELETE FROM board WHERE session_id = %s AND plugin = %s AND key = %s",
                request.board_clear,
            )
        if request.board_set:
            await many.executemany(
                "INSERT INTO board (session_id, plugin, key, kind, at_ms, data) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (session_id, plugin, key) "
                "DO UPDATE SET kind = EXCLUDED.kind, at_ms = EXCLUDED.at_ms, data = EXCLUDED.data",
                request.board_set,
            )
    if request.name is not None:
        await conn.execute(
            "INSERT INTO names (session_id, name) VALUES (%s, %s) "
            "ON CONFLICT (session_id) DO UPDATE SET name = EXCLUDED.name",
            (sid, request.name),
        )
    if request.outbox:
        await write_outbox(conn, plan_outbox((sid, change) for change in request.outbox))
