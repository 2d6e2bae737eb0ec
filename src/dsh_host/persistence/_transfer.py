"""Moving whole Sessions in and out of a backend: a read snapshot and an all-or-nothing writer.

``dsh export``, ``dsh import`` and ``dsh migrate`` (``dsh_host/cli/_transfer.py``) read and write
stores through two capabilities every backend here offers:

* :class:`ExportBackend`: :meth:`~ExportBackend.export_sessions` yields stored Sessions (header
  and events; no wake entries, board rows or names: derived state) oldest ``createdAt`` first,
  ids by code point, one at a time, from ONE consistent snapshot of what is committed, so a
  ``dsh serve`` may keep writing the same store meanwhile (SQLite: one read transaction on a
  read-only connection of its own; PostgreSQL: a ``REPEATABLE READ READ ONLY`` transaction).
  Memory is bounded by one Session's events (a few small Sessions may be read together).
* :class:`ImportBackend`: :meth:`~ImportBackend.import_sessions` stores a stream of Sessions in
  ONE transaction: a Session absent is inserted with its header, events and the derived state
  that comes with it (:class:`ImportedSession`); one present with an identical header and log is
  left as it is (counted ``unchanged``); one present with different content raises
  :class:`ImportConflictError` naming it, and nothing of the whole stream is written. A failure
  of any kind (the stream itself raising included), or the process dying, leaves the store as
  it was.

:func:`check_storable` checks a Session the way an append would before anything is written, so
a file that a backend could not store is refused while it is read.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import structlog

from dsh_hookspecs import Event, SessionHeader

from .._records import StoredSession, events_identical, headers_identical
from ._backend import StorageConflictError
from ._write import Write

__all__ = [
    "ExportBackend",
    "ImportBackend",
    "ImportConflictError",
    "ImportCounts",
    "ImportedSession",
    "UnstorableError",
    "check_storable",
    "logged",
    "same_content",
]

log = structlog.get_logger(__name__)


class ImportConflictError(StorageConflictError):
    """An imported Session's id is stored with a different header or log: never merged."""

    def __init__(self, session_id: str, why: str) -> None:
        super().__init__(
            f"session {session_id} is already stored with different content ({why}); "
            "nothing was imported"
        )
        self.session_id = session_id


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """One Session to import: its header and log, with the wake entries and board rows its
    plugins derive from that log (``session.wakes``, ``session.board``) and its name."""

    session: StoredSession
    name: str | None = None

    def write(self) -> Write:
        """The write that creates this Session as it is imported: its header, its whole log,
        its wake entries, board rows and name (checked as any append's)."""
        stored = self.session
        return Write(
            stored.header.id,
            0,
            stored.events,
            stored.header,
            stored.wakes,
            board=stored.board,
            name=self.name,
        )


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """What :meth:`ImportBackend.import_sessions` did."""

    #: Sessions inserted, and their events.
    imported: int = 0
    imported_events: int = 0
    #: Sessions already stored with the same header and log (left as they were).
    unchanged: int = 0
    unchanged_events: int = 0


def logged(counts: ImportCounts, **where: object) -> ImportCounts:
    """``counts``, once logged as ``storage.imported`` with ``where`` naming the store."""
    log.info(
        "storage.imported",
        **where,
        sessions=counts.imported,
        events=counts.imported_events,
        unchanged=counts.unchanged,
    )
    return counts


@runtime_checkable
class ExportBackend(Protocol):
    """A backend that reads a consistent snapshot of whole Sessions."""

    def export_sessions(
        self, ids: Sequence[str] | None = None
    ) -> AsyncGenerator[StoredSession, None]:
        """Every stored Session (only those of ``ids``), oldest ``createdAt`` first and ids by
        code point, each with its header and events (no wake entries or board rows), all from
        one snapshot of what is committed. A Session of ``ids`` that is not stored raises
        :class:`~._backend.StorageError` naming it before anything is yielded; a row that
        cannot be decoded raises :class:`~._backend.StorageCorruptError`. Close the iterator
        (``contextlib.aclosing``) to end the snapshot early."""
        ...


@runtime_checkable
class ImportBackend(Protocol):
    """A backend that stores a stream of whole Sessions all or nothing."""

    async def import_sessions(self, sessions: AsyncIterable[ImportedSession]) -> ImportCounts:
        """Store ``sessions`` in one transaction (see the module docstring): absent ones are
        inserted with their wake entries, board rows and name, identical ones skipped, and a
        different one raises :class:`ImportConflictError`; on any error nothing is written.
        A shared store (PostgreSQL) refuses with
        :class:`~._backend.SessionLiveElsewhereError` while a host holds a lease on it."""
        ...


def same_content(stored: StoredSession, incoming: StoredSession) -> str | None:
    """``None`` when the two Sessions have identical headers and logs, else how they differ."""
    if not headers_identical(stored.header, incoming.header):
        return "its header differs"
    if len(stored.events) != len(incoming.events):
        return f"it holds {len(stored.events)} events, the import {len(incoming.events)}"
    for mine, theirs in zip(stored.events, incoming.events, strict=True):
        if not events_identical(mine, theirs):
            return f"event {mine.seq} differs"
    return None


class UnstorableError(ValueError):
    """A header or event no backend would store; ``index``: the event's, ``None`` the header."""

    def __init__(self, index: int | None, reason: str) -> None:
        super().__init__(reason)
        self.index = index


def check_storable(header: SessionHeader, events: Sequence[Event]) -> None:
    """Raise :class:`UnstorableError` for the first part of a Session an append would refuse
    (:class:`~._write.Write`: 64-bit integers, contiguous seqs from 0, UTF-8 text)."""
    try:
        Write(header.id, 0, (), header)
    except ValueError as exc:
        raise UnstorableError(None, str(exc)) from None
    for index, event in enumerate(events):
        try:
            Write(header.id, index, (event,))
        except ValueError as exc:
            raise UnstorableError(index, str(exc)) from None
