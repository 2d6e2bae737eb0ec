"""An in-memory backend with exactly the :class:`~dsh_host.persistence.Backend` contract.

It serves tests and throwaway hosts. Stored events are the caller's (immutable) ``Event`` objects;
their data is still checked to be strict JSON so that a test backed by memory refuses what the
SQLite backend would refuse (:func:`~dsh_host.persistence._backend.encode_append`), and
conflicts are decided by the shared :func:`~dsh_host.persistence._backend.check_position`.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from dsh_hookspecs import Event, SessionHeader

from ._backend import (
    NO_WAKES,
    DueWake,
    StorageError,
    StoredSession,
    StoredSummary,
    check_position,
    encode_append,
)

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class _Entry:
    header: SessionHeader
    events: list[Event] = field(default_factory=list)
    wakes: dict[str, int] = field(default_factory=dict)


class MemoryBackend:
    """Dict-backed storage. Data lives as long as the object; close and reopen keep it."""

    name = "memory"

    def __init__(self) -> None:
        self._sessions: dict[str, _Entry] = {}
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
            header=entry.header, events=tuple(entry.events), wakes=dict(entry.wakes)
        )

    async def list_sessions(self) -> Sequence[StoredSummary]:
        self._require_open()
        entries = sorted(self._sessions.values(), key=lambda e: (e.header.created_at, e.header.id))
        return [StoredSummary(header=e.header, length=len(e.events)) for e in entries]

    async def append(
        self,
        session_id: str,
        start: int,
        events: Sequence[Event],
        header: SessionHeader | None = None,
        wakes: Mapping[str, int | None] = NO_WAKES,
    ) -> None:
        self._require_open()
        # Encoded only to refuse what a durable backend could not store; the text is dropped.
        encoded = encode_append(session_id, start, events, header, wakes)
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
        self.commits += 1
        self.appends += 1

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
