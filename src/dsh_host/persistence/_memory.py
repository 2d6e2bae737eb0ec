"""An in-memory backend with exactly the :class:`~dsh_host.persistence.Backend` contract.

It serves tests and throwaway hosts. Stored events are the caller's (immutable) ``Event`` objects;
their data is still checked to be strict JSON so that a test backed by memory refuses what the
SQLite backend would refuse. :func:`encode_append` holds the request checks every backend runs
before touching its store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog

from dsh_hookspecs import Event, JSONValue, SessionHeader
from dsh_host import _json, _records

from ._backend import StorageConflictError, StorageError, StoredSession, StoredSummary

log = structlog.get_logger(__name__)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class EncodedAppend:
    """An append request that passed :func:`encode_append`."""

    #: The header in stored form (absent ``delegationDepth`` is 0), or ``None``.
    header: SessionHeader | None
    #: ``header`` as strict JSON text.
    header_json: str | None
    #: Each event's ``data`` as strict JSON text.
    data_json: tuple[str, ...]


def _storable_text(value: JSONValue, what: str) -> str:
    text = _json.dumps(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _json.JSONError(f"{what} is not encodable as UTF-8: {exc.reason}") from None
    return text


def _check_int64(value: int, what: str) -> None:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _records.RecordError(f"{what} {value} does not fit in 64 bits")


def encode_append(
    session_id: str, start: int, events: Sequence[Event], header: SessionHeader | None
) -> EncodedAppend:
    """Check an append request's own shape and encode it as it is stored.

    A malformed request is the caller's bug, not a storage outcome: it raises ``ValueError``
    (a :class:`~dsh_host._records.RecordError` for a header or event that the strict codecs
    would refuse on load, a :class:`~dsh_host._json.JSONError` for data that is not strict,
    UTF-8-encodable JSON) and nothing is written. Conflicts with what is stored are decided by
    the backend.
    """
    if not session_id:
        raise ValueError("session id must be a non-empty string")
    if type(start) is not int or start < 0:
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    data_json: list[str] = []
    for offset, event in enumerate(events):
        if type(event.seq) is not int or event.seq != start + offset:
            raise ValueError(
                f"event seqs must run from {start} contiguously; "
                f"position {offset} has seq {event.seq!r}"
            )
        # The envelope rules of _records.event_from_json, checked in place (hot path).
        if type(event.type) is not str or not event.type:
            raise _records.RecordError("event.type must be a non-empty string")
        if type(event.time) is not int:
            raise _records.RecordError("event.time must be an integer")
        _check_int64(event.seq, "event.seq")
        _check_int64(event.time, "event.time")
        data_json.append(_storable_text(event.data, f"data of event {event.seq}"))
    if header is None:
        return EncodedAppend(header=None, header_json=None, data_json=tuple(data_json))
    if header.id != session_id:
        raise ValueError(f"header id {header.id!r} does not match session id {session_id!r}")
    stored = _records.stored_header(header)
    checked = _records.header_from_json(stored)
    _check_int64(checked.created_at, "header.createdAt")
    return EncodedAppend(
        header=checked,
        header_json=_storable_text(stored, "the header"),
        data_json=tuple(data_json),
    )


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
        if stored_header is not None:
            if start != 0:
                raise StorageConflictError(
                    f"session {session_id} must be created at start 0, not {start}"
                )
            if entry is not None:
                raise StorageConflictError(f"session {session_id} already exists")
            self._sessions[session_id] = _Entry(stored_header, list(events))
        else:
            if entry is None:
                raise StorageConflictError(f"session {session_id} does not exist")
            if len(entry.events) != start:
                raise StorageConflictError(
                    f"session {session_id} has {len(entry.events)} stored events, "
                    f"append expected {start}"
                )
            entry.events.extend(events)
        self.commits += 1
        self.appends += 1
