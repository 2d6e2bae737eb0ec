"""What the SQLite and PostgreSQL group writers share: the queued write and its outcome.

Each backend's ``append`` encodes the Session's new events (and header, on create), wake
entries, board changes and name once, on the event loop, into a :class:`Request`
(:func:`append_request`) and queues it; its ``delete`` queues a :class:`Request` too
(:func:`delete_request`), so a delete is ordered after every append requested before it. The
writer task commits queued requests in groups (:mod:`.sqlite._writer`,
:mod:`.postgres._writer`) and settles each request's future with its :data:`Outcomes` entry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from dsh_hookspecs import Event

from ._backend import EncodedAppend, StorageError

__all__ = ["BoardClear", "BoardSet", "Outcomes", "Request", "append_request", "delete_request"]

#: A board row to store: ``(session_id, plugin, key, kind, at_ms, data as JSON text)``.
BoardSet = tuple[str, str, str, str, int, str]
#: A board row to remove: ``(session_id, plugin, key)``.
BoardClear = tuple[str, str, str]


@dataclass(slots=True, eq=False)
class Request:
    """One queued append (or delete), already encoded."""

    session_id: str
    start: int
    header_json: str | None
    created_at: int
    rows: list[tuple[str, int, str, int, str]]
    future: asyncio.Future[None]
    #: The batch's checked wake entries, ``(plugin, at_ms or None to remove)``.
    wakes: tuple[tuple[str, int | None], ...] = ()
    #: The batch's board rows to store, and to remove (one change per ``(plugin, key)``).
    board_set: tuple[BoardSet, ...] = ()
    board_clear: tuple[BoardClear, ...] = ()
    #: The Session's new name, or ``None`` (unchanged).
    name: str | None = None
    #: A delete of the Session rather than an append (every other field is empty); its outcome
    #: is a :class:`~dsh_host.persistence.StorageConflictError` when it is not stored.
    delete: bool = False


def append_request(
    session_id: str,
    start: int,
    events: Sequence[Event],
    encoded: EncodedAppend,
    future: asyncio.Future[None],
) -> Request:
    """The queued form of an append that passed :func:`~._backend.encode_append`."""
    board_set: list[BoardSet] = []
    board_clear: list[BoardClear] = []
    for post in encoded.board:
        if post.entry is None or post.data_json is None:
            board_clear.append((session_id, post.plugin, post.key))
        else:
            entry = post.entry
            board_set.append(
                (session_id, post.plugin, post.key, entry.kind, entry.at_ms, post.data_json)
            )
    return Request(
        session_id=session_id,
        start=start,
        header_json=encoded.header_json,
        created_at=0 if encoded.header is None else encoded.header.created_at,
        rows=[
            (session_id, e.seq, e.type, e.time, data)
            for e, data in zip(events, encoded.data_json, strict=True)
        ],
        future=future,
        wakes=encoded.wakes,
        board_set=tuple(board_set),
        board_clear=tuple(board_clear),
        name=encoded.name,
    )


def delete_request(session_id: str, future: asyncio.Future[None]) -> Request:
    """The queued form of a delete of ``session_id``."""
    return Request(
        session_id=session_id,
        start=0,
        header_json=None,
        created_at=0,
        rows=[],
        future=future,
        delete=True,
    )


#: One outcome per request of a batch: ``None`` stored, else the error that request fails with.
Outcomes = list[StorageError | None]
