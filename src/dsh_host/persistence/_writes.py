"""What the SQLite and PostgreSQL group writers share: the queued append and its outcome.

Each backend's ``append`` encodes the Session's new events (and header, on create) once, on the
event loop, into a :class:`Request` and queues it; its writer task commits queued requests in
groups (:mod:`.sqlite._writer`, :mod:`.postgres._writer`) and settles each request's future
with its :data:`Outcomes` entry.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ._backend import StorageError

__all__ = ["Outcomes", "Request"]


@dataclass(slots=True, eq=False)
class Request:
    """One queued append, already encoded."""

    session_id: str
    start: int
    header_json: str | None
    created_at: int
    rows: list[tuple[str, int, str, int, str]]
    future: asyncio.Future[None]
    #: The batch's checked wake entries, ``(plugin, at_ms or None to remove)``.
    wakes: tuple[tuple[str, int | None], ...] = ()


#: One outcome per request of a batch: ``None`` stored, else the error that request fails with.
Outcomes = list[StorageError | None]
