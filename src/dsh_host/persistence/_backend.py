"""The storage backend interface and its error hierarchy.

A backend stores, per Session id, one header and a contiguous append-only event list. It knows
nothing about live Sessions: the :class:`~dsh_host.persistence.Coordinator` decides what to write.

Errors::

    StorageError                 any backend failure (driver errors are mapped to this)
    ├── StorageConflictError     an append whose start is not the stored length, or a create of
    │                            an id that exists
    ├── StorageCorruptError      the store on disk cannot be trusted (reported at open)
    ├── DataDirLockedError       the data folder is held by another live dsh process
    └── PrefixDivergedError      a stored prefix differs from the live Session (never overwritten)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dsh_hookspecs import Event, SessionHeader


class StorageError(Exception):
    """A storage operation failed."""


class StorageConflictError(StorageError):
    """An optimistic append or create did not match what is stored."""


class StorageCorruptError(StorageError):
    """The store is corrupt or truncated; it is reported, never silently replaced."""


class DataDirLockedError(StorageError):
    """The data folder is already opened by another live dsh process."""


class PrefixDivergedError(StorageError):
    """The stored prefix of a Session differs from the live Session."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """What :meth:`Backend.load` returns: the stored header and every stored event."""

    header: SessionHeader
    events: tuple[Event, ...]


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """One row of :meth:`Backend.list_sessions`."""

    header: SessionHeader
    length: int


class Backend(Protocol):
    """Async storage of Session headers and event logs."""

    name: str

    async def open(self) -> None:
        """Acquire resources; report a corrupt store with :class:`StorageCorruptError`."""
        ...

    async def close(self) -> None:
        """Release resources. Idempotent."""
        ...

    async def load(self, session_id: str) -> StoredSession | None:
        """The stored header and events of ``session_id``, or ``None`` if absent."""
        ...

    async def list_sessions(self) -> Sequence[StoredSummary]:
        """Every stored Session, oldest ``createdAt`` first."""
        ...

    async def append(
        self,
        session_id: str,
        start: int,
        events: Sequence[Event],
        header: SessionHeader | None = None,
    ) -> None:
        """Atomically store ``events`` (whose seqs are ``start, start+1, ...``).

        With ``header``, the Session is created in the same transaction (``start`` must be 0 and
        the id must be absent). Without it, the Session must exist and its stored length must
        equal ``start``. Otherwise :class:`StorageConflictError` and nothing is written. When the
        call returns, the write is durable to the backend's promise (SQLite: fsynced).
        """
        ...
