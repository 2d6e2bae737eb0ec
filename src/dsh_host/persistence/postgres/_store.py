"""The PostgreSQL backend: Session headers and event logs in a PostgreSQL database.

``PostgresBackend("postgresql://USER@HOST:PORT/DB")`` implements the same
:class:`~dsh_host.persistence.Backend` contract as SQLite, through psycopg 3 (async) and its
connection pool. Open connects once first (so a refused connection is a plain
:class:`StorageError`, never with the password in it), creates the schema on an empty
database and refuses one written by a newer dsh (:mod:`._schema`). Appends are
committed in groups (:mod:`._writer`); reads use pooled connections.

Event data and headers are stored as the strict JSON codec writes them (text; a NUL inside a
JSON string is the escape ``\\u0000``, which PostgreSQL text holds), so what is loaded is
identical to what was appended. Wake entries (the durable wake index) are written in the
transaction of their batch and read in the snapshot of the log they belong to. One
undecodable Session row never hides the others: listings name it in
:attr:`SessionListing.damaged`. Several processes may share one database: the
position check runs in the database, so a racing writer gets :class:`StorageConflictError`.

Board rows and names are written in the transaction of their batch; board pages and counts, and
pages of the Session list (newest first, through ``sessions_by_creation``), are one indexed
statement each, reading no log. A delete is queued to the writer behind the appends
requested before it and removes every row of the Session in one transaction; it is refused with
:class:`SessionLiveElsewhereError` while another host holds an unexpired lease of the Session,
and this host's own lease goes with the Session (its lease lives in the Session's row).

The outbox: entries are filed and withdrawn in the transaction of their batch. A claim locks
the due entries it takes (``FOR UPDATE SKIP LOCKED``, so hosts claiming at once share them and
never take the same one) and marks them in the same transaction; a settle is one statement,
fenced by the claim's owner. Neither loads a Session nor needs its lease.

Leases (docs/always-on.md, "Several hosts on one PostgreSQL"): :attr:`PostgresBackend.leases`
(:mod:`._leases`) holds this process's leases; every append carries the epoch it holds and the
database refuses a stale one (:class:`StorageFencedError`). Due wakes of a Session another live host
leases are not listed here (that host delivers them); once its lease runs out they are. Closing the
backend releases every lease it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Sequence,
)
from operator import attrgetter
from typing import Literal, TypeVar, cast
from urllib.parse import urlsplit

import psycopg
import psycopg_pool
import structlog

from dsh_hookspecs import Event, JSONValue, SessionHeader

from ... import _json, _records
from .._backend import (
    BoardCursor,
    BoardRow,
    DamagedSummary,
    DueWake,
    SessionCursor,
    SessionListing,
    SessionRow,
    StorageConflictError,
    StorageCorruptError,
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
from .._writes import Request, append_request, delete_request
from ._leases import PgLeases, new_owner
from ._schema import (
    BOARD_AFTER,
    BOARD_COUNT_AFTER,
    BOARD_COUNT_SQL,
    BOARD_PAGE_SQL,
    BOARD_SESSION,
    COUNT_SQL,
    DUE_SQL,
    EARLIEST_SQL,
    LIST_SQL,
    LOAD_MANY_BOARD_SQL,
    LOAD_MANY_SQL,
    LOAD_MANY_WAKES_SQL,
    OUTBOX_CLAIM_SQL,
    OUTBOX_DAMAGED_SQL,
    OUTBOX_DUE_SQL,
    OUTBOX_EARLIEST_SQL,
    OUTBOX_OF_SQL,
    OUTBOX_SETTLE_SQL,
    PAGE_AFTER,
    PAGE_SQL,
    PAGE_THROUGH,
    SCHEMA_VERSION,
    Connection,
    ensure_schema,
    plain,
    redacted,
)
from ._transfer import HELD_SQL, SNAPSHOT_SQL, export_all, import_all
from ._writer import PgWriter

__all__ = ["SCHEMA_VERSION", "PostgresBackend", "is_postgres_url", "redacted"]

log = structlog.get_logger(__name__)

_T = TypeVar("_T")

#: The most Sessions one batched load reads.
LOAD_BATCH = 256
_State = Literal["new", "opening", "open", "closed"]


def is_postgres_url(value: str) -> bool:
    """Whether a ``--data`` value names a PostgreSQL database rather than a folder."""
    return value.startswith(("postgresql://", "postgres://"))


class PostgresBackend(SettleOne):
    """Durable storage in the PostgreSQL database ``url`` names (libpq URL syntax)."""

    name = "postgres"
    #: See :attr:`Backend.needs_board_rebuild`: set by each :meth:`open`.
    needs_board_rebuild = False

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 4,
        connect_timeout: float = 10.0,
        lease_seconds: float = 15.0,
        owner: str | None = None,
    ) -> None:
        """``lease_seconds``: how long a host that stops renewing keeps its Sessions' leases
        (renewed every third of it); ``owner``: this process's name as a lease holder (a
        random one by default; two processes must never share one)."""
        self._url = url
        self._where = f"PostgreSQL {redacted(url)}"
        try:
            self._secret = urlsplit(url).password
        except ValueError:
            self._secret = None
        self._pool_size = pool_size
        self._timeout = connect_timeout
        self._state: _State = "new"
        self._pool: psycopg_pool.AsyncConnectionPool[Connection] | None = None
        #: The leases this process holds (:class:`~dsh_host.persistence.Leases`).
        self.leases = PgLeases(
            owner=owner or new_owner(), lease_seconds=lease_seconds, borrow=self._borrow
        )
        self._writer = PgWriter(self._where, self.leases)
        self._loads = LoadBatcher(self._read_many, limit=LOAD_BATCH)

    def __repr__(self) -> str:
        return f"PostgresBackend({redacted(self._url)!r}, state={self._state})"

    #: Append transactions committed, and append requests stored (grouping is their ratio).
    commits = property(attrgetter("_writer.commits"))
    appends = property(attrgetter("_writer.appends"))

    # -- lifecycle -------------------------------------------------------------------------

    async def open(self) -> None:
        if self._state in ("opening", "open"):
            raise StorageError(f"{self._where} is already open")
        previous, self._state = self._state, "opening"
        try:
            self._pool = await self._connected()
        except BaseException:
            self._state = previous
            raise
        self._state = "open"
        self._writer.start(self._borrow)
        log.info("storage.opened", backend=self.name, url=redacted(self._url))

    async def _connected(self) -> psycopg_pool.AsyncConnectionPool[Connection]:
        """The schema checked (created on an empty database), then the pool opened."""
        try:
            first = await psycopg.AsyncConnection.connect(
                self._url, autocommit=True, connect_timeout=max(1, round(self._timeout))
            )
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot connect to {self._where}: {plain(exc, self._secret)}"
            ) from None
        try:
            migrated = await self._checked(
                lambda: ensure_schema(first, self._where), "create the schema"
            )
            setting = await self._checked(lambda: _synchronous_commit(first), "read settings")
        finally:
            await first.close()
        # Only a database from before the board (version 3) lacks board rows and names.
        self.needs_board_rebuild = migrated is not None and migrated[0] < 3 and migrated[1] > 0
        if migrated is not None:
            log.info(
                "storage.migrated",
                where=self._where,
                from_version=migrated[0],
                schema_version=SCHEMA_VERSION,
            )
        if setting == "off":
            # An acknowledged append could then be lost in a server crash: said, not changed.
            log.warning("storage.synchronous_commit_off", where=self._where)
        pool: psycopg_pool.AsyncConnectionPool[Connection] = psycopg_pool.AsyncConnectionPool(
            self._url,
            min_size=1,
            max_size=self._pool_size,
            kwargs={"autocommit": True},
            # A connection the server dropped (a restart, a failover) is replaced at checkout,
            # so it never fails the next append.
            check=psycopg_pool.AsyncConnectionPool.check_connection,
            open=False,
            timeout=self._timeout,
            name="dsh",
        )
        try:
            await self._checked(lambda: pool.open(wait=True, timeout=self._timeout), "connect")
        except BaseException:
            await pool.close()
            raise
        return pool

    async def close(self) -> None:
        if self._state != "open":
            return
        self._state = "closed"
        try:
            await self._writer.stop()
            await self._release_leases()
        finally:
            pool, self._pool = self._pool, None
            if pool is not None:
                await pool.close()
            log.info("storage.closed", backend=self.name, url=redacted(self._url))

    async def _release_leases(self) -> None:
        try:
            await self.leases.release_all()
        except StorageError as exc:  # they run out after their time to live anyway
            log.warning("storage.lease_release_failed", where=self._where, error=str(exc))

    # -- connections -----------------------------------------------------------------------

    async def _checked(self, step: Callable[[], Awaitable[_T]], what: str) -> _T:
        try:
            return await step()
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise StorageError(
                f"{self._where}: {what} failed: {plain(exc, self._secret)}"
            ) from None

    async def _borrow(self, body: Callable[[Connection], Awaitable[_T]], what: str) -> _T:
        pool = self._pool
        if pool is None:
            raise StorageError(f"{self._where} is not open")

        async def run() -> _T:
            async with pool.connection() as conn:
                return await body(conn)

        return await self._checked(run, what)

    def _require_open(self) -> None:
        if self._state != "open" or not self._writer.accepting:
            raise StorageError(f"{self._where} is not open")

    # -- reads -----------------------------------------------------------------------------

    async def load(self, session_id: str) -> StoredSession | None:
        """Loads asked for while a read is under way are read together (one snapshot, one
        query per table for up to :data:`LOAD_BATCH` Sessions): a herd of resumes shares its
        round trips."""
        self._require_open()
        if "\x00" in session_id:
            return None  # PostgreSQL text cannot hold NUL, so no such Session is stored
        return await self._loads.load(session_id)

    async def _read_many(self, session_ids: Sequence[str]) -> dict[str, Loaded]:
        ids = list(session_ids)

        async def rows(conn: Connection) -> tuple[list[tuple[object, ...]], ...]:
            async with conn.transaction():  # one snapshot for the logs, wakes and boards
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                log_rows = await (await conn.execute(LOAD_MANY_SQL, (ids,))).fetchall()
                wake_rows = await (await conn.execute(LOAD_MANY_WAKES_SQL, (ids,))).fetchall()
                board_rows = await (await conn.execute(LOAD_MANY_BOARD_SQL, (ids,))).fetchall()
            return log_rows, wake_rows, board_rows

        what = f"load session {ids[0]!r}" if len(ids) == 1 else "load sessions"
        found, wake_rows, board_rows = await self._borrow(rows, what)
        logs: dict[str, list[tuple[object, ...]]] = {}
        for row in found:
            logs.setdefault(str(row[0]), []).append(row[1:])
        wakes: dict[str, list[tuple[object, ...]]] = {}
        for row in wake_rows:
            wakes.setdefault(str(row[0]), []).append(row[1:])
        boards: dict[str, list[tuple[object, ...]]] = {}
        for row in board_rows:
            boards.setdefault(str(row[0]), []).append(row[1:])
        loaded: dict[str, Loaded] = dict.fromkeys(ids)
        for sid, log_rows in logs.items():
            try:
                loaded[sid] = self._decode(sid, log_rows, wakes.get(sid, ()), boards.get(sid, ()))
            except StorageError as exc:
                loaded[sid] = exc
        return loaded

    def _decode(
        self,
        session_id: str,
        found: Sequence[tuple[object, ...]],
        wake_rows: Sequence[tuple[object, ...]],
        board_rows: Sequence[tuple[object, ...]],
    ) -> StoredSession:
        header = self._header(session_id, found[0][0])
        length = found[0][1]
        decoded = [self._event(session_id, at, row[2:]) for at, row in enumerate(found)]
        events = [e for e in decoded if e is not None]
        if length != len(events):
            raise self._corrupt(
                f"session {session_id!r} records length {length!r} but has {len(events)} events"
            )
        wakes = {str(plugin): cast(int, at_ms) for plugin, at_ms in wake_rows}
        board = decode_board_rows(session_id, board_rows, self._corrupt)
        return StoredSession(header=header, events=tuple(events), wakes=wakes, board=board)

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        self._require_open()

        async def rows(conn: Connection) -> list[tuple[object, ...]]:
            params = {"now": now_ms, "limit": max(0, limit), "owner": self.leases.owner}
            return await (await conn.execute(DUE_SQL, params)).fetchall()

        found = await self._borrow(rows, "list due wakes")
        return [(str(sid), str(plugin), cast(int, at_ms)) for sid, plugin, at_ms in found]

    async def earliest_wake(self) -> int | None:
        self._require_open()

        async def row(conn: Connection) -> tuple[object, ...] | None:
            return await (await conn.execute(EARLIEST_SQL, {"owner": self.leases.owner})).fetchone()

        found = await self._borrow(row, "read the earliest wake")
        return None if found is None else cast("int | None", found[0])

    async def list_sessions(self) -> Sequence[StoredSummary]:
        self._require_open()

        async def rows(conn: Connection) -> list[tuple[object, ...]]:
            cur = await conn.execute(LIST_SQL)
            return await cur.fetchall()

        good: list[StoredSummary] = []
        damaged: list[DamagedSummary] = []
        for found in await self._borrow(rows, "list sessions"):
            row = self._summary(found)
            if isinstance(row, DamagedSummary):
                damaged.append(row)
            else:
                good.append(row)
        return SessionListing(good, damaged)

    async def list_page(
        self, *, after: SessionCursor | None = None, limit: int
    ) -> Sequence[SessionRow]:
        self._require_open()
        cursor = check_session_cursor(after)
        check_page_limit(limit)
        params: dict[str, object] = {"limit": limit}
        condition = ""
        if cursor is not None:
            created_at, sid = cursor
            condition = PAGE_AFTER
            if "\x00" in sid:  # PostgreSQL text cannot hold NUL, and no stored id holds one
                sid, condition = sid.split("\x00", 1)[0], PAGE_THROUGH
            params.update(created_at=created_at, sid=sid)
        sql = PAGE_SQL.format(after=condition)

        async def rows(conn: Connection) -> list[tuple[object, ...]]:
            return await (await conn.execute(sql, params)).fetchall()

        return [self._summary(found) for found in await self._borrow(rows, "list sessions")]

    async def count_sessions(self) -> int:
        self._require_open()

        async def row(conn: Connection) -> tuple[object, ...] | None:
            return await (await conn.execute(COUNT_SQL)).fetchone()

        found = await self._borrow(row, "count sessions")
        return 0 if found is None else cast(int, found[0])

    def _summary(self, found: tuple[object, ...]) -> SessionRow:
        """One row of :data:`LIST_SQL` or :data:`PAGE_SQL`, decoded, or its damage."""
        sid, text, length, created_at, name = found
        try:
            if type(length) is not int or length < 0:
                raise _records.RecordError(f"the stored length {length!r} is invalid")
            header = _decoded_header(str(sid), text)
        except ValueError as exc:
            reason = " ".join(str(exc).split())
            log.warning("storage.session_damaged", where=self._where, session_id=sid, error=reason)
            at = created_at if type(created_at) is int else None
            return DamagedSummary(id=str(sid), error=reason, created_at=at)
        shown = name if isinstance(name, str) and name else None
        return StoredSummary(header=header, length=length, name=shown)

    async def board_page(
        self,
        plugin: str,
        kind: str,
        *,
        after: BoardCursor | None = None,
        limit: int,
        session_id: str | None = None,
    ) -> Sequence[BoardRow]:
        self._require_open()
        cursor = check_board_query(plugin, kind, limit=limit, after=after, session_id=session_id)
        if _has_nul(plugin, kind, session_id, *(cursor or ())[1:]):
            return []  # PostgreSQL text cannot hold NUL, so no such row is stored
        sql = BOARD_PAGE_SQL.format(
            after="" if cursor is None else BOARD_AFTER,
            session="" if session_id is None else BOARD_SESSION,
        )
        params: dict[str, object] = {
            "plugin": plugin,
            "kind": kind,
            "limit": limit,
            "session": session_id,
        }
        if cursor is not None:
            params.update(at=cursor[0], sid=cursor[1], key=cursor[2])

        async def rows(conn: Connection) -> list[tuple[object, ...]]:
            return await (await conn.execute(sql, params)).fetchall()

        return board_rows(plugin, await self._borrow(rows, "read the board"), where=self._where)

    async def board_count(
        self, plugin: str, kind: str, *, after_ms: int | None = None, session_id: str | None = None
    ) -> int:
        self._require_open()
        check_board_query(plugin, kind, after_ms=after_ms, session_id=session_id)
        if _has_nul(plugin, kind, session_id):
            return 0  # PostgreSQL text cannot hold NUL, so no such row is stored
        sql = BOARD_COUNT_SQL.format(
            after="" if after_ms is None else BOARD_COUNT_AFTER,
            session="" if session_id is None else BOARD_SESSION,
        )
        params = {"plugin": plugin, "kind": kind, "after_ms": after_ms, "session": session_id}

        async def row(conn: Connection) -> tuple[object, ...] | None:
            return await (await conn.execute(sql, params)).fetchone()

        found = await self._borrow(row, "count board rows")
        return 0 if found is None else cast(int, found[0])

    def _corrupt(self, what: str) -> StorageCorruptError:
        log.error("storage.corrupt", where=self._where, problem=what)
        return StorageCorruptError(f"{self._where} holds a damaged row: {what}")

    def _header(self, session_id: str, text: object) -> SessionHeader:
        try:
            return _decoded_header(session_id, text)
        except ValueError as exc:
            raise self._corrupt(
                f"the stored header of session {session_id!r} is invalid: {exc}"
            ) from exc

    def _event(self, session_id: str, at: int, row: tuple[object, ...]) -> Event | None:
        seq, etype, time, data = row
        if seq is None and at == 0:
            return None  # the LEFT JOIN row of a Session without events
        if seq != at:
            raise self._corrupt(f"session {session_id!r} has event seq {seq!r} where {at} belongs")
        try:
            if not isinstance(data, str):
                raise _records.RecordError("data column is not text")
            obj = {"seq": at, "type": etype, "time": time, "data": _json.loads(data)}
            return _records.event_from_json(cast("JSONValue", obj))
        except ValueError as exc:
            raise self._corrupt(
                f"stored event seq {seq} of session {session_id!r} is invalid: {exc}"
            ) from exc

    # -- writes (group commit) -------------------------------------------------------------

    async def append(self, write: Write) -> None:
        self._require_open()
        if _holds_nul(write):
            raise StorageError(
                f"append to session {write.session_id!r} refused: PostgreSQL text cannot hold NUL"
            )
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._writer.submit(append_request(write, future))
        # A cancelled caller's request may still commit (a write whose acknowledgement is lost).
        await future

    async def delete(self, session_id: str) -> bool:
        self._require_open()
        if type(session_id) is not str or not session_id:
            raise ValueError(f"session id must be a non-empty string, got {session_id!r}")
        if _has_nul(session_id):
            return False  # PostgreSQL text cannot hold NUL, so no such Session is stored
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._writer.submit(delete_request(session_id, future))
        try:
            await future
        except StorageConflictError:
            return False  # not stored
        log.info("storage.session_deleted", where=self._where, session_id=session_id)
        return True

    # -- export and import -------------------------------------------------------------------

    async def export_sessions(
        self, ids: Sequence[str] | None = None
    ) -> AsyncGenerator[StoredSession, None]:
        """:meth:`~.._transfer.ExportBackend.export_sessions` in one ``REPEATABLE READ READ
        ONLY`` transaction on one pooled connection (it needs :meth:`open`; it takes no
        lease, so it reads beside the hosts sharing the database)."""
        self._require_open()
        pool = self._pool
        assert pool is not None
        try:
            async with pool.connection() as conn, conn.transaction():
                await conn.execute(SNAPSHOT_SQL)
                async for stored in export_all(conn, self._decode_log, ids, self._where):
                    yield stored
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise StorageError(
                f"{self._where}: export sessions failed: {plain(exc, self._secret)}"
            ) from None

    def _decode_log(self, session_id: str, rows: Sequence[tuple[object, ...]]) -> StoredSession:
        return self._decode(session_id, rows, (), ())

    async def held_elsewhere(self) -> str | None:
        """How a host holds an unexpired lease on this database (one Session's id and
        holder, in words), or ``None`` when none does: ``dsh migrate`` refuses a source a
        host is serving."""
        self._require_open()

        async def row(conn: Connection) -> tuple[object, ...] | None:
            return await (await conn.execute(HELD_SQL, (self.leases.owner,))).fetchone()

        found = await self._borrow(row, "read the leases")
        if found is None:
            return None
        sid, holder, remaining = found
        return (
            f"session {sid} is live on another host ({holder}) for up to "
            f"{cast(int, remaining) / 1000:.1f} s"
        )

    async def import_sessions(self, sessions: AsyncIterable[ImportedSession]) -> ImportCounts:
        """:meth:`~.._transfer.ImportBackend.import_sessions` in one transaction on one pooled
        connection, written in batches by the group writer's statements; refused
        (:class:`SessionLiveElsewhereError`) while another host holds an unexpired lease."""
        self._require_open()
        loop = asyncio.get_running_loop()

        async def encoded() -> AsyncIterator[tuple[ImportedSession, Request]]:
            async for item in sessions:
                write = item.write()
                if _holds_nul(write):
                    raise StorageError(
                        f"session {write.session_id!r} cannot be imported: "
                        "PostgreSQL text cannot hold NUL"
                    )
                yield item, append_request(write, loop.create_future())

        async def body(conn: Connection) -> ImportCounts:
            async with conn.transaction():
                return await import_all(
                    conn,
                    encoded(),
                    owner=self.leases.owner,
                    ttl_ms=self.leases.ttl_ms,
                    decode=self._decode_log,
                )

        return logged(await self._borrow(body, "import sessions"), where=self._where)

    # -- the outbox ----------------------------------------------------------------------------

    async def claim_outbox(
        self, now_ms: int, limit: int, owner: str, claim_until_ms: int
    ) -> Sequence[OutboxClaim]:
        self._require_open()
        check_claim(now_ms, limit, owner, claim_until_ms)
        if limit == 0:
            return []

        async def claim(conn: Connection) -> list[OutboxClaim]:
            claims: list[OutboxClaim] = []
            async with conn.transaction():
                while len(claims) < limit:
                    params = {"now": now_ms, "limit": limit - len(claims)}
                    found = await (await conn.execute(OUTBOX_DUE_SQL, params)).fetchall()
                    taken: list[object] = []
                    damaged: list[object] = []
                    for number, *columns in found:
                        row = self._outbox_row(columns)
                        if row is None:
                            damaged.append(number)
                            continue
                        taken.append(number)
                        claims.append(claimed(row, now_ms))
                    if taken:
                        marks = {"owner": owner, "until": claim_until_ms, "now": now_ms}
                        await conn.execute(OUTBOX_CLAIM_SQL, {**marks, "ids": taken})
                    if not damaged:
                        break
                    # Damaged entries took places: marked failed, they are not found again.
                    await conn.execute(OUTBOX_DAMAGED_SQL, {"now": now_ms, "ids": damaged})
            return claims

        return await self._borrow(claim, "claim outbox entries")

    async def settle_outbox_many(self, settlements: Sequence[Settlement]) -> Sequence[bool]:
        self._require_open()
        errors = [checked_settlement(each) for each in settlements]
        params = [
            None
            if _has_nul(e.row.session_id, e.row.plugin, e.row.key, e.row.channel, e.owner)
            else {
                "status": e.status,
                "next": e.next_ms,
                "error": error,
                "now": e.now_ms,
                "sid": e.row.session_id,
                "plugin": e.row.plugin,
                "key": e.row.key,
                "channel": e.row.channel,
                "owner": e.owner,
            }
            for e, error in zip(settlements, errors, strict=True)
        ]
        if not any(params):
            return [False] * len(params)  # PostgreSQL text cannot hold NUL: no such entry

        async def settle(conn: Connection) -> list[bool]:
            async with conn.transaction():
                return [
                    one is not None and (await conn.execute(OUTBOX_SETTLE_SQL, one)).rowcount == 1
                    for one in params
                ]

        return await self._borrow(settle, "settle outbox entries")

    async def outbox_of(self, session_id: str) -> Sequence[OutboxRow]:
        self._require_open()
        if _has_nul(session_id):
            return []  # PostgreSQL text cannot hold NUL, so no such Session is stored

        async def rows(conn: Connection) -> list[tuple[object, ...]]:
            return await (await conn.execute(OUTBOX_OF_SQL, (session_id,))).fetchall()

        found = await self._borrow(rows, "read the outbox")
        return [row for row in map(self._outbox_row, found) if row is not None]

    async def earliest_outbox(self) -> int | None:
        self._require_open()

        async def row(conn: Connection) -> tuple[object, ...] | None:
            return await (await conn.execute(OUTBOX_EARLIEST_SQL)).fetchone()

        found = await self._borrow(row, "read the earliest outbox entry")
        return None if found is None else cast("int | None", found[0])

    def _outbox_row(self, columns: Sequence[object]) -> OutboxRow | None:
        return outbox_row(columns, where=self._where)


def _has_nul(*texts: str | None) -> bool:
    return any(text is not None and "\x00" in text for text in texts)


def _holds_nul(write: Write) -> bool:
    """Whether a text column of ``write`` holds a raw NUL: its id, an event type, a plugin name,
    a board key or its name (JSON text escapes NUL; a raw one has no storage here)."""
    encoded = write.encoded
    return _has_nul(
        write.session_id,
        *(e.type for e in write.events),
        *(plugin for plugin, _ in encoded.wakes),
        *(text for post in encoded.board for text in (post.plugin, post.key)),
        encoded.name,
    )


async def _synchronous_commit(conn: Connection) -> str:
    """The server's ``synchronous_commit`` for this database (dsh never changes it)."""
    row = await (await conn.execute("SHOW synchronous_commit")).fetchone()
    return "" if row is None else str(row[0])


def _decoded_header(session_id: str, text: object) -> SessionHeader:
    """The stored header decoded by the strict codecs; ``ValueError`` with a plain reason."""
    header = _records.header_from_json(_json.loads(text)) if isinstance(text, str) else None
    if header is not None and header.id == session_id:
        return header
    found = "no text" if header is None else f"id {header.id!r}"
    raise _records.RecordError(f"the stored header has {found}")
