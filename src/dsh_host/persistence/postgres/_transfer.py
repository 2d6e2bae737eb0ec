"""Export and import for the PostgreSQL store (:mod:`.._transfer`).

An export reads in ONE ``REPEATABLE READ READ ONLY`` transaction on one pooled connection: every
statement sees the snapshot its first one took, whatever the hosts sharing the database commit
meanwhile. Session headers are read a page at a time in ``(created_at, id)`` order, and their
logs a few Sessions at a time (at most :data:`EVENTS_PER_READ` events, or one Session's).

An import is ONE transaction too. It first refuses while any host holds an unexpired lease
(stop every ``dsh serve`` on the database first), then stores the stream in batches of a few
Sessions with the group writer's own statements (:func:`~._batch.lock_lengths`,
:func:`~._batch.write_planned`: one statement per table per batch). The Sessions it creates are
leased to the import while it runs and released in the same transaction, so a host takes them
at once afterwards. The server rolls back a transaction whose client died.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import cast

from .. import _transfer
from .._backend import (
    SessionLiveElsewhereError,
    StorageConflictError,
    StorageError,
    StoredSession,
)
from .._writes import Request
from ._batch import Fence, Replan, lock_lengths, write_planned
from ._schema import LOAD_MANY_SQL, Connection

#: The most events one read of the export takes (unless one Session alone holds more).
EVENTS_PER_READ = 4096
#: Session headers read per page of the export.
HEADERS_PER_PAGE = 256
#: An import writes its Sessions in batches of at most this many events (or one Session) ...
IMPORT_EVENTS = 4096
#: ... and at most this many Sessions.
IMPORT_SESSIONS = 256

SNAPSHOT_SQL = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"
_FIRST_PAGE_SQL = (
    "SELECT id, header, length, created_at FROM sessions ORDER BY created_at, id LIMIT %s"
)
_NEXT_PAGE_SQL = (
    "SELECT id, header, length, created_at FROM sessions "
    "WHERE (created_at, id) > (%s, %s) ORDER BY created_at, id LIMIT %s"
)
_CHOSEN_SQL = "SELECT id, header, length, created_at FROM sessions WHERE id = ANY(%s)"
#: One Session another host holds an unexpired lease of (its id, holder and ms left).
HELD_SQL = (
    "SELECT id, owner, lease_until - dsh_now_ms() FROM sessions "
    "WHERE owner IS NOT NULL AND owner <> %s AND lease_until >= dsh_now_ms() LIMIT 1"
)
#: Release the leases an import took on the Sessions it created.
_RELEASE_SQL = "UPDATE sessions SET owner = NULL, lease_until = NULL WHERE owner = %s"

#: Decodes one stored Session from its :data:`LOAD_MANY_SQL` rows (without the id column).
Decode = Callable[[str, Sequence[tuple[object, ...]]], StoredSession]
_Head = tuple[str, int, int]


async def export_all(
    conn: Connection, decode: Decode, ids: Sequence[str] | None, where: str
) -> AsyncGenerator[StoredSession, None]:
    """Yield the Sessions of the snapshot ``conn``'s open transaction reads (see the module
    docstring); a Session of ``ids`` that is not stored raises before anything is yielded."""
    pending: list[_Head] = []
    after: tuple[int, str] | None = None
    paging = ids is None
    if ids is not None:
        chosen = list(dict.fromkeys(ids))
        storable = [sid for sid in chosen if "\x00" not in sid]
        rows = await (await conn.execute(_CHOSEN_SQL, (storable,))).fetchall()
        found = {cast(str, row[0]) for row in rows}
        missing = [sid for sid in chosen if sid not in found]
        if missing:
            raise StorageError(f"no session {missing[0]} is stored in {where}")
        pending = sorted((_head(row) for row in rows), key=lambda head: (head[2], head[0]))
    pending.reverse()  # popped from the end
    while True:
        if not pending and paging:
            if after is None:
                cur = await conn.execute(_FIRST_PAGE_SQL, (HEADERS_PER_PAGE,))
            else:
                cur = await conn.execute(_NEXT_PAGE_SQL, (*after, HEADERS_PER_PAGE))
            page = [_head(row) for row in await cur.fetchall()]
            paging = len(page) == HEADERS_PER_PAGE
            if page:
                after = (page[-1][2], page[-1][0])
            pending = page[::-1]
        if not pending:
            return
        batch = [pending.pop()]
        total = batch[0][1]
        while pending and total + pending[-1][1] <= EVENTS_PER_READ:
            total += pending[-1][1]
            batch.append(pending.pop())
        found_rows = await (await conn.execute(LOAD_MANY_SQL, ([h[0] for h in batch],))).fetchall()
        logs: dict[str, list[tuple[object, ...]]] = {}
        for row in found_rows:
            logs.setdefault(cast(str, row[0]), []).append(row[1:])
        for sid, _, _ in batch:
            yield decode(sid, logs[sid])


def _head(row: tuple[object, ...]) -> _Head:
    sid, _, length, created_at = row
    count = length if type(length) is int and length > 0 else 0
    created = created_at if type(created_at) is int else -(2**63)
    return cast(str, sid), count, created


async def import_all(
    conn: Connection,
    items: AsyncIterator[tuple[_transfer.ImportedSession, Request]],
    *,
    owner: str,
    ttl_ms: int,
    decode: Decode,
) -> _transfer.ImportCounts:
    """Store ``items`` inside ``conn``'s open transaction (see the module docstring)."""
    held = await (await conn.execute(HELD_SQL, (owner,))).fetchone()
    if held is not None:
        sid, holder, remaining = held
        raise SessionLiveElsewhereError(
            f"session {sid} is live on another host ({holder}) for up to "
            f"{cast(int, remaining) / 1000:.1f} s: stop every dsh serve on this database "
            "before an import; nothing was imported"
        )
    counts = [0, 0, 0, 0]
    batch: list[tuple[_transfer.ImportedSession, Request]] = []
    events = 0
    async for pair in items:
        batch.append(pair)
        events += len(pair[1].rows)
        if events >= IMPORT_EVENTS or len(batch) >= IMPORT_SESSIONS:
            await _write(conn, batch, owner=owner, ttl_ms=ttl_ms, decode=decode, counts=counts)
            batch, events = [], 0
    if batch:
        await _write(conn, batch, owner=owner, ttl_ms=ttl_ms, decode=decode, counts=counts)
    await conn.execute(_RELEASE_SQL, (owner,))
    return _transfer.ImportCounts(*counts)


async def _write(
    conn: Connection,
    batch: list[tuple[_transfer.ImportedSession, Request]],
    *,
    owner: str,
    ttl_ms: int,
    decode: Decode,
    counts: list[int],
) -> None:
    requests = [request for _, request in batch]
    stored = await lock_lengths(conn, requests)
    present = [sid for sid, length in stored.items() if length is not None]
    if present:
        rows = await (await conn.execute(LOAD_MANY_SQL, (present,))).fetchall()
        logs: dict[str, list[tuple[object, ...]]] = {}
        for row in rows:
            logs.setdefault(cast(str, row[0]), []).append(row[1:])
        for item, request in batch:
            sid = request.session_id
            if sid not in logs:
                continue
            why = _transfer.same_content(decode(sid, logs[sid]), item.session)
            if why is not None:
                raise _transfer.ImportConflictError(sid, why)
            counts[2] += 1
            counts[3] += len(request.rows)
    absent = [request for request in requests if stored[request.session_id] is None]
    if not absent:
        return
    fence = Fence(owner=owner, ttl_ms=ttl_ms, epochs={})
    try:
        outcomes = await write_planned(conn, absent, stored, fence)
    except Replan:
        raise StorageConflictError(
            "another process created one of the imported sessions meanwhile; nothing was imported"
        ) from None
    for outcome in outcomes:
        if outcome is not None:
            raise outcome
    counts[0] += len(absent)
    counts[1] += sum(len(request.rows) for request in absent)
