"""An in-memory backend with exactly the :class:`~dsh_host.persistence.Backend` contract.

It serves tests and throwaway hosts. Stored events are the caller's (immutable) ``Event`` objects;
their data is still checked to be strict JSON so that a test backed by memory refuses what the
SQLite backend would refuse (a :class:`~dsh_host.persistence.Write` checks itself), and
conflicts are decided by the shared :func:`~dsh_host.persistence._backend.check_position`.
Board rows, names, deletes, Session list pages and the outbox follow the same contract (a board
page, a list page or a claim is computed by scanning every row, which is fine at the sizes a test
holds).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import AsyncGenerator, AsyncIterable, Sequence
from dataclasses import dataclass, field

import structlog

from dsh_hookspecs import BoardEntry, Event, SessionHeader

from ._backend import (
    BoardCursor,
    BoardRow,
    DueWake,
    SessionCursor,
    SessionRow,
    StorageError,
    StoredSession,
    StoredSummary,
    check_board_query,
    check_claim,
    check_page_limit,
    check_position,
    check_session_cursor,
    checked_settlement,
)
from ._outbox import OutboxClaim, OutboxRow, Settlement, SettleOne, decode_notice
from ._transfer import ImportConflictError, ImportCounts, ImportedSession, same_content
from ._write import EncodedNotice, Write

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class _Entry:
    header: SessionHeader
    events: list[Event] = field(default_factory=list)
    wakes: dict[str, int] = field(default_factory=dict)
    board: dict[tuple[str, str], BoardEntry] = field(default_factory=dict)
    name: str | None = None


@dataclass(slots=True)
class _Sending:
    """An outbox entry and, while it is ``sending``, who holds its claim until when."""

    row: OutboxRow
    claimed_by: str | None = None
    claim_until_ms: int | None = None


class MemoryBackend(SettleOne):
    """Dict-backed storage. Data lives as long as the object; close and reopen keep it."""

    name = "memory"
    #: A memory store is never migrated, so its board never needs rebuilding.
    needs_board_rebuild = False

    def __init__(self) -> None:
        self._sessions: dict[str, _Entry] = {}
        #: Every outbox entry by ``(session_id, plugin, key, channel)``, in insertion order.
        self._outbox: dict[tuple[str, str, str, str], _Sending] = {}
        self._open = False
        #: Number of append transactions committed (one per successful append).
        self.commits = 0
        #: Number of append requests stored.
        self.appends = 0

    def _require_open(self) -> None:
        if not self._open:
            raise StorageError("memory backend is not open")

    async def open(self) -> None:
        if self._open:
            raise StorageError("memory backend is already open")
        self._open = True

    async def close(self) -> None:
        self._open = False

    async def load(self, session_id: str) -> StoredSession | None:
        self._require_open()
        entry = self._sessions.get(session_id)
        if entry is None:
            return None
        return StoredSession(
            header=entry.header,
            events=tuple(entry.events),
            wakes=dict(entry.wakes),
            board=dict(entry.board),
        )

    async def list_sessions(self) -> Sequence[StoredSummary]:
        self._require_open()
        entries = sorted(self._sessions.values(), key=lambda e: (e.header.created_at, e.header.id))
        return [StoredSummary(header=e.header, length=len(e.events), name=e.name) for e in entries]

    async def list_page(
        self, *, after: SessionCursor | None = None, limit: int
    ) -> Sequence[SessionRow]:
        self._require_open()
        cursor = check_session_cursor(after)
        check_page_limit(limit)
        keys = (
            (e.header.created_at, e.header.id)
            for e in self._sessions.values()
            if cursor is None or (e.header.created_at, e.header.id) < cursor
        )
        return [
            StoredSummary(header=entry.header, length=len(entry.events), name=entry.name)
            for entry in (self._sessions[sid] for _, sid in heapq.nlargest(limit, keys))
        ]

    async def count_sessions(self) -> int:
        self._require_open()
        return len(self._sessions)

    async def append(self, write: Write) -> None:
        self._require_open()
        session_id, start, events, encoded = (
            write.session_id,
            write.start,
            write.events,
            write.encoded,
        )
        stored_header = encoded.header
        entry = self._sessions.get(session_id)
        stored_length = None if entry is None else len(entry.events)
        check_position(session_id, start, stored_length, creating=stored_header is not None)
        if entry is None:
            assert stored_header is not None  # check_position refused a plain append
            entry = self._sessions[session_id] = _Entry(stored_header, list(events))
        else:
            entry.events.extend(events)
        for plugin, at_ms in encoded.wakes:
            if at_ms is None:
                entry.wakes.pop(plugin, None)
            else:
                entry.wakes[plugin] = at_ms
        for post in encoded.board:
            if post.entry is None:
                entry.board.pop((post.plugin, post.key), None)
            else:
                entry.board[post.plugin, post.key] = post.entry
        if encoded.name is not None:
            entry.name = encoded.name
        for change in encoded.outbox:
            self._file_notice(session_id, change)
        self.commits += 1
        self.appends += 1

    def _file_notice(self, sid: str, change: EncodedNotice) -> None:
        """One outbox change, applied in its order (the reference the others fold)."""
        plugin, key, text = change.plugin, change.key, change.notice_json
        if text is None:
            for stored in self._outbox.values():
                row = stored.row
                target = (row.session_id, row.plugin, row.key)
                if target == (sid, plugin, key) and row.status == "pending":
                    stored.row = dataclasses.replace(row, status="withdrawn")
            return
        notice = decode_notice(text)
        for channel in change.channels:
            self._outbox.setdefault(
                (sid, plugin, key, channel),
                _Sending(
                    OutboxRow(
                        session_id=sid,
                        plugin=plugin,
                        key=key,
                        channel=channel,
                        notice=notice,
                        status="pending",
                        attempts=0,
                        next_ms=change.due_ms,
                        error=None,
                        updated_ms=change.due_ms,
                    )
                ),
            )

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
        rows = (
            ((e.at_ms, sid, key), BoardRow(sid, stored.name, plugin, key, e))
            for sid, stored in self._sessions.items()
            if session_id is None or sid == session_id
            for (p, key), e in stored.board.items()
            if p == plugin and e.kind == kind
        )
        after_cursor = (row for row in rows if cursor is None or row[0] > cursor)
        return [row for _, row in heapq.nsmallest(limit, after_cursor, key=lambda r: r[0])]

    async def board_count(
        self, plugin: str, kind: str, *, after_ms: int | None = None, session_id: str | None = None
    ) -> int:
        self._require_open()
        check_board_query(plugin, kind, after_ms=after_ms, session_id=session_id)
        return sum(
            1
            for sid, stored in self._sessions.items()
            if session_id is None or sid == session_id
            for (p, _), e in stored.board.items()
            if p == plugin and e.kind == kind and (after_ms is None or e.at_ms > after_ms)
        )

    async def delete(self, session_id: str) -> bool:
        self._require_open()
        if self._sessions.pop(session_id, None) is None:
            return False
        for target in [t for t in self._outbox if t[0] == session_id]:
            del self._outbox[target]
        self.commits += 1
        return True

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        self._require_open()
        due = (
            (at_ms, sid, plugin)
            for sid, entry in self._sessions.items()
            for plugin, at_ms in entry.wakes.items()
            if at_ms <= now_ms
        )
        return [(sid, plugin, at_ms) for at_ms, sid, plugin in heapq.nsmallest(limit, due)]

    async def earliest_wake(self) -> int | None:
        self._require_open()
        return min((at for e in self._sessions.values() for at in e.wakes.values()), default=None)

    # -- export and import -----------------------------------------------------------------

    async def export_sessions(
        self, ids: Sequence[str] | None = None
    ) -> AsyncGenerator[StoredSession, None]:
        """:meth:`~._transfer.ExportBackend.export_sessions`: the snapshot is the list of
        Sessions (and their logs, immutable events) at the first step."""
        self._require_open()
        if ids is None:
            chosen = list(self._sessions.values())
        else:
            missing = [sid for sid in ids if sid not in self._sessions]
            if missing:
                raise StorageError(f"no session {missing[0]} is stored in memory")
            chosen = [self._sessions[sid] for sid in dict.fromkeys(ids)]
        chosen.sort(key=lambda e: (e.header.created_at, e.header.id))
        snapshot = [(entry.header, tuple(entry.events)) for entry in chosen]
        for header, events in snapshot:
            yield StoredSession(header=header, events=events)

    async def import_sessions(self, sessions: AsyncIterable[ImportedSession]) -> ImportCounts:
        """:meth:`~._transfer.ImportBackend.import_sessions`: everything is checked and staged
        first, then stored in one step (nothing when anything fails)."""
        self._require_open()
        staged: dict[str, _Entry] = {}
        imported = events = unchanged = unchanged_events = 0
        async for item in sessions:
            stored = item.session
            header = stored.header
            encoded = item.write().encoded
            present = self._sessions.get(header.id) or staged.get(header.id)
            if present is not None:
                mine = StoredSession(header=present.header, events=tuple(present.events))
                why = same_content(mine, stored)
                if why is not None:
                    raise ImportConflictError(header.id, why)
                unchanged += 1
                unchanged_events += len(stored.events)
                continue
            assert encoded.header is not None
            staged[header.id] = _Entry(
                encoded.header,
                list(stored.events),
                wakes={plugin: at for plugin, at in encoded.wakes if at is not None},
                board={(p.plugin, p.key): p.entry for p in encoded.board if p.entry is not None},
                name=encoded.name,
            )
            imported += 1
            events += len(stored.events)
        self._require_open()
        self._sessions.update(staged)
        if staged:
            self.commits += 1
        return ImportCounts(imported, events, unchanged, unchanged_events)

    # -- the outbox ------------------------------------------------------------------------

    async def claim_outbox(
        self, now_ms: int, limit: int, owner: str, claim_until_ms: int
    ) -> Sequence[OutboxClaim]:
        self._require_open()
        check_claim(now_ms, limit, owner, claim_until_ms)
        due = [
            (stored.row.next_ms, order, stored)
            for order, stored in enumerate(self._outbox.values())
            if (stored.row.status == "pending" and stored.row.next_ms <= now_ms)
            or (
                stored.row.status == "sending"
                and stored.claim_until_ms is not None
                and stored.claim_until_ms < now_ms
            )
        ]
        claims: list[OutboxClaim] = []
        for _, _, stored in heapq.nsmallest(limit, due, key=lambda d: d[:2]):
            ambiguous = stored.row.status == "sending"
            stored.row = dataclasses.replace(
                stored.row, status="sending", attempts=stored.row.attempts + 1, updated_ms=now_ms
            )
            stored.claimed_by, stored.claim_until_ms = owner, claim_until_ms
            claims.append(OutboxClaim(stored.row, ambiguous))
        return claims

    async def settle_outbox_many(self, settlements: Sequence[Settlement]) -> Sequence[bool]:
        self._require_open()
        errors = [checked_settlement(each) for each in settlements]
        return [self._settle(each, error) for each, error in zip(settlements, errors, strict=True)]

    def _settle(self, each: Settlement, error: str | None) -> bool:
        row = each.row
        stored = self._outbox.get((row.session_id, row.plugin, row.key, row.channel))
        if stored is None or stored.row.status != "sending" or stored.claimed_by != each.owner:
            return False
        stored.row = dataclasses.replace(
            stored.row,
            status=each.status,
            next_ms=stored.row.next_ms if each.next_ms is None else each.next_ms,
            error=error,
            updated_ms=each.now_ms,
        )
        stored.claimed_by = stored.claim_until_ms = None
        return True

    async def outbox_of(self, session_id: str) -> Sequence[OutboxRow]:
        self._require_open()
        return [
            stored.row for stored in self._outbox.values() if stored.row.session_id == session_id
        ]

    async def earliest_outbox(self) -> int | None:
        self._require_open()
        instants = [
            stored.row.next_ms if stored.row.status == "pending" else stored.claim_until_ms
            for stored in self._outbox.values()
            if stored.row.status in ("pending", "sending")
        ]
        return min((at for at in instants if at is not None), default=None)
