"""An in-memory backend with exactly the :class:`~dsh_host.persistence.Backend` contract.

It serves tests and throwaway hosts. Stored events are the caller's (immutable) ``Event`` objects;
their data is still checked to be strict JSON so that a test backed by memory refuses what the
SQLite backend would refuse (:func:`~dsh_host.persistence._backend.encode_append`), and
conflicts are decided by the shared :func:`~dsh_host.persistence._backend.check_position`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog

from dsh_hookspecs import Event, SessionHeader

from ._backend import (
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
        return StoredSession(header=entry.header, events=tuple(entry.events))

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
    ) -> None:
        self._require_open()
        # Encoded only to refuse what a durable backend could not store; the text is dropped.
        stored_header = encode_append(session_id, start, events, header).header
        entry = self._sessions.get(session_id)
        stored_length = None if entry is None else len(entry.events)
        check_position(session_id, start, stored_length, creating=stored_header is not None)
        if entry is None:
            assert stored_header is not None  # check_position refused a plain append
            self._sessions[session_id] = _Entry(stored_header, list(events))
        else:
            entry.events.extend(events)
        self.commits += 1
        self.appends += 1
