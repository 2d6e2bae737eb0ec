"""Session leases on PostgreSQL: one live owner per Session across hosts
(docs/always-on.md, "Several hosts on one PostgreSQL").

:class:`PgLeases` is :class:`~dsh_host.persistence.Leases` for :class:`PostgresBackend`. Each
process is an *owner* (a random name). The epochs it holds are kept here; the writer reads them
when it commits a batch (every write carries its epoch and the database's fence refuses a stale
one, see :mod:`._schema`), and tells this object what a commit granted (a create, a
claim on write) or refused (:meth:`PgLeases.lost`). Lease times are the database clock's, so
hosts whose clocks disagree still agree on who holds a lease.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import structlog

from dsh_hookspecs import Once

from .._backend import SessionLiveElsewhereError
from ._schema import Connection

log = structlog.get_logger(__name__)

#: Runs ``body(conn)`` on a pooled connection (driver errors become StorageError).
Borrow = Callable[[Callable[[Connection], Awaitable[Any]], str], Awaitable[Any]]

#: Take the lease of one Session when it is free to this owner; the new epoch.
_ACQUIRE_SQL = (
    "UPDATE sessions SET epoch = epoch + 1, writer = epoch + 1, owner = %(owner)s, "
    "lease_until = dsh_now_ms() + %(ttl)s "
    "WHERE id = (SELECT s.id FROM sessions s WHERE s.id = %(id)s "
    "AND (s.owner IS NULL OR s.owner = %(owner)s OR s.lease_until < dsh_now_ms()) "
    "FOR UPDATE{skip}) RETURNING epoch"
)
#: Who holds a Session's lease and for how many more ms (``NULL`` when free).
_HOLDER_SQL = "SELECT owner, lease_until - dsh_now_ms() FROM sessions WHERE id = %s"
#: Renewals and releases touch many rows at once: they lock them in id order first, as the
#: group writer does (``_LOCK_SQL``), so two of them never wait on each other in a cycle.
_IN_ID_ORDER = (
    "WITH locked AS MATERIALIZED (SELECT id FROM sessions WHERE id = ANY(%(ids)s::text[]) "
    "ORDER BY id FOR UPDATE) "
)
_RENEW_SQL = (
    _IN_ID_ORDER  # noqa: S608 - fixed text, values are bound parameters
    + "UPDATE sessions s SET lease_until = dsh_now_ms() + %(ttl)s "
    "FROM unnest(%(ids)s::text[], %(epochs)s::bigint[]) AS v (id, epoch), locked l "
    "WHERE s.id = v.id AND l.id = s.id AND s.epoch = v.epoch AND s.owner = %(owner)s "
    "RETURNING s.id"
)
_RELEASE_SQL = (
    _IN_ID_ORDER  # noqa: S608 - fixed text, values are bound parameters
    + "UPDATE sessions s SET owner = NULL, lease_until = NULL "
    "FROM unnest(%(ids)s::text[], %(epochs)s::bigint[]) AS v (id, epoch), locked l "
    "WHERE s.id = v.id AND l.id = s.id AND s.epoch = v.epoch AND s.owner = %(owner)s "
    "RETURNING s.id"
)


def new_owner() -> str:
    """A name for this process as a lease owner: host name, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class PgLeases:
    """The leases one :class:`PostgresBackend` process holds."""

    def __init__(self, *, owner: str, lease_seconds: float, borrow: Borrow) -> None:
        if not lease_seconds > 0:
            raise ValueError(f"lease_seconds must be positive, got {lease_seconds!r}")
        self.owner = owner
        self.ttl_ms = max(1, round(lease_seconds * 1000))
        self.renew_interval = lease_seconds / 3
        self._borrow = borrow
        self._epochs: dict[str, int] = {}
        #: One acquire at a time per Session: two concurrent ones would each bump the epoch and
        #: could leave the older one recorded here (this host's next write then fenced).
        self._acquiring: dict[str, Once] = {}
        self._listeners: list[Callable[[str], None]] = []
        #: Releases gathering for the next round trip, and the task that sends them.
        self._releases: _Releases | None = None
        self._releasing: asyncio.Task[None] | None = None
        #: Appends the database refused because their epoch was stale.
        self.fenced = 0

    def held(self, session_id: str) -> bool:
        return session_id in self._epochs

    async def live_elsewhere(self, session_id: str) -> bool:
        if session_id in self._epochs or "\x00" in session_id:
            return False

        async def read(conn: Connection) -> tuple[object, ...] | None:
            return await (await conn.execute(_HOLDER_SQL, (session_id,))).fetchone()

        found = cast("tuple[object, ...] | None", await self._borrow(read, "read a lease"))
        return found is not None and _foreign(found, self.owner)

    def epoch(self, session_id: str) -> int | None:
        return self._epochs.get(session_id)

    def on_lost(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    def granted(self, session_id: str, epoch: int) -> None:
        """A commit made this process the holder at ``epoch`` (a create, a claim on write)."""
        self._epochs[session_id] = epoch

    def forget(self, session_id: str) -> None:
        """The Session (and its lease with it) was deleted here: nothing is held, nobody is
        told (the lease was not lost to another host)."""
        self._epochs.pop(session_id, None)

    def lost(self, session_id: str, *, fenced: bool = False) -> None:
        """The lease of ``session_id`` is someone else's now; the listeners hear it once."""
        if fenced:
            self.fenced += 1
        epoch = self._epochs.pop(session_id, None)
        if epoch is None:
            return
        log.warning("storage.lease_lost", session_id=session_id, epoch=epoch, fenced=fenced)
        for listener in list(self._listeners):
            listener(session_id)

    def _params(self, **extra: object) -> dict[str, object]:
        return {"owner": self.owner, "ttl": self.ttl_ms, **extra}

    async def acquire(self, session_id: str, *, skip_locked: bool = False) -> None:
        if session_id in self._epochs or "\x00" in session_id:
            return
        once = self._acquiring.setdefault(session_id, Once(f"dsh-lease:{session_id}"))
        try:  # concurrent callers share the one acquire (and its outcome)
            await once.run(lambda: self._acquire(session_id, skip_locked=skip_locked))
        finally:
            if self._acquiring.get(session_id) is once:
                del self._acquiring[session_id]

    async def _acquire(self, session_id: str, *, skip_locked: bool) -> None:
        sql = _ACQUIRE_SQL.format(skip=" SKIP LOCKED" if skip_locked else "")

        async def take(conn: Connection) -> tuple[object, ...] | None:
            row = await (await conn.execute(sql, self._params(id=session_id))).fetchone()
            if row is not None:
                return ("taken", row[0])
            return await (await conn.execute(_HOLDER_SQL, (session_id,))).fetchone()

        found = cast("tuple[object, ...] | None", await self._borrow(take, "acquire a lease"))
        if found is None:
            return  # no such Session: the load that follows says so
        if found[0] == "taken":
            self._epochs[session_id] = cast(int, found[1])
            log.info("storage.lease_acquired", session_id=session_id, epoch=found[1])
            return
        owner, remaining = found
        if not _foreign(found, self.owner):
            raise SessionLiveElsewhereError(
                f"session {session_id} is being claimed by another host at this moment"
            )
        raise SessionLiveElsewhereError(
            f"session {session_id} is live on another host ({owner}) for up to "
            f"{cast(int, remaining) / 1000:.1f} s unless that host renews its lease"
        )

    async def release(self, session_id: str) -> None:
        """Releases asked for while one is under way are sent together (a herd of woken
        Sessions going cold again shares its round trips); each caller waits for its own."""
        epoch = self._epochs.pop(session_id, None)
        if epoch is None:
            return
        batch = self._releases
        if batch is None:
            batch = self._releases = _Releases(asyncio.get_running_loop().create_future())
            if self._releasing is None:
                self._releasing = asyncio.get_running_loop().create_task(
                    self._send_releases(), name="dsh-lease-releases"
                )
        batch.held[session_id] = epoch
        await asyncio.shield(batch.done)

    async def _send_releases(self) -> None:
        try:
            while (batch := self._releases) is not None:
                self._releases = None
                try:
                    await self._release(batch.held)
                except Exception as exc:
                    batch.done.set_exception(exc)
                    batch.done.exception()  # reported to its callers; never unobserved
                else:
                    batch.done.set_result(None)
        finally:
            self._releasing = None

    async def release_all(self) -> None:
        if self._releasing is not None:
            await asyncio.wait([self._releasing])  # the releases under way end first
        held, self._epochs = self._epochs, {}
        if held:
            await self._release(held)

    async def _release(self, held: dict[str, int]) -> None:
        """Give up ``held``; a lease another host took over in the meantime (this process was
        frozen past its expiry) is logged as lost: the release leaves that holder alone."""
        params = self._params(ids=list(held), epochs=list(held.values()))

        async def run(conn: Connection) -> list[tuple[object, ...]]:
            return await (await conn.execute(_RELEASE_SQL, params)).fetchall()

        rows = cast("list[tuple[object, ...]]", await self._borrow(run, "release leases"))
        released = {str(row[0]) for row in rows}
        for sid, epoch in held.items():
            if sid not in released and sid not in self._epochs:  # not taken again meanwhile
                log.warning("storage.lease_lost", session_id=sid, epoch=epoch, fenced=False)

    async def renew(self) -> Sequence[str]:
        held = dict(self._epochs)
        if not held:
            return []
        params = self._params(ids=list(held), epochs=list(held.values()))

        async def run(conn: Connection) -> list[tuple[object, ...]]:
            return await (await conn.execute(_RENEW_SQL, params)).fetchall()

        rows = cast("list[tuple[object, ...]]", await self._borrow(run, "renew leases"))
        renewed = {str(row[0]) for row in rows}
        lost = [s for s, e in held.items() if s not in renewed and self._epochs.get(s) == e]
        for sid in lost:
            self.lost(sid)
        return lost


@dataclass(slots=True)
class _Releases:
    """Leases to give up in one round trip, and when that round trip ended."""

    done: asyncio.Future[None]
    held: dict[str, int] = field(default_factory=dict)


def _foreign(holder: tuple[object, ...], me: str) -> bool:
    """Whether a ``(owner, ms left)`` row of :data:`_HOLDER_SQL` is another's live lease."""
    owner, remaining = holder
    return owner is not None and owner != me and cast(int, remaining) >= 0
