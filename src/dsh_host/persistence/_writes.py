"""What the SQLite and PostgreSQL group writers share: the queued write and its outcome.

Each backend's ``append`` turns a :class:`~._write.Write` (checked and encoded when it was made)
into a :class:`Request` (:func:`append_request`) and queues it; its ``delete`` queues a
:class:`Request` too (:func:`delete_request`), so a delete is ordered after every append requested
before it. The writer task commits queued requests in groups (:mod:`.sqlite._writer`,
:mod:`.postgres._writer`) and settles each request's future with its :data:`Outcomes` entry.

The outbox changes of one request, or of every request a batch accepted, are folded into one
:class:`OutboxPlan` (:func:`plan_outbox`): the withdrawals of entries stored before, then the
inserts, each with the state the changes in order leave it in, so that a writer stores them with
two statements whatever their number.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._backend import StorageError
from ._write import EncodedNotice, Write

__all__ = [
    "BoardClear",
    "BoardSet",
    "OutboxInsert",
    "OutboxPlan",
    "OutboxTarget",
    "Outcomes",
    "Request",
    "append_request",
    "delete_request",
    "plan_outbox",
]

#: A board row to store: ``(session_id, plugin, key, kind, at_ms, data as JSON text)``.
BoardSet = tuple[str, str, str, str, int, str]
#: A board row to remove: ``(session_id, plugin, key)``.
BoardClear = tuple[str, str, str]
#: The entries of one notice: ``(session_id, plugin, key)``.
OutboxTarget = tuple[str, str, str]
#: An outbox entry to insert unless stored: ``(session_id, plugin, key, channel, notice as
#: JSON text, status, due_ms)``; its ``next_ms`` and ``updated_ms`` are ``due_ms``.
OutboxInsert = tuple[str, str, str, str, str, str, int]


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
    #: The batch's checked outbox changes, in their order.
    outbox: tuple[EncodedNotice, ...] = ()
    #: A delete of the Session rather than an append (every other field is empty); its outcome
    #: is a :class:`~dsh_host.persistence.StorageConflictError` when it is not stored.
    delete: bool = False


def append_request(write: Write, future: asyncio.Future[None]) -> Request:
    """The queued form of ``write``."""
    session_id, encoded = write.session_id, write.encoded
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
        start=write.start,
        header_json=encoded.header_json,
        created_at=0 if encoded.header is None else encoded.header.created_at,
        rows=[
            (session_id, e.seq, e.type, e.time, data)
            for e, data in zip(write.events, encoded.data_json, strict=True)
        ],
        future=future,
        wakes=encoded.wakes,
        board_set=tuple(board_set),
        board_clear=tuple(board_clear),
        name=encoded.name,
        outbox=encoded.outbox,
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


@dataclass(slots=True)
class OutboxPlan:
    """What a run of outbox changes does to the store, as two statements.

    First every ``pending`` entry stored before of each of :attr:`withdraw` becomes
    ``withdrawn``; then each of :attr:`insert` is inserted unless its ``(session_id, plugin,
    key, channel)`` is stored (an insert followed by a withdrawal of its key is inserted
    ``withdrawn``; a repeated insert of one entry keeps the first).
    """

    withdraw: list[OutboxTarget] = field(default_factory=list)
    insert: list[OutboxInsert] = field(default_factory=list)


def plan_outbox(changes: Iterable[tuple[str, EncodedNotice]]) -> OutboxPlan:
    """The :class:`OutboxPlan` of ``(session_id, change)`` pairs applied in their order."""
    withdraw: dict[OutboxTarget, None] = {}
    inserted: dict[tuple[str, str, str, str], OutboxInsert] = {}
    for sid, change in changes:
        plugin, key = change.plugin, change.key
        if change.notice_json is None:
            withdraw[sid, plugin, key] = None
            for entry, row in inserted.items():  # inserted by this run, and still pending
                if entry[:3] == (sid, plugin, key) and row[5] == "pending":
                    inserted[entry] = (sid, plugin, key, row[3], row[4], "withdrawn", row[6])
            continue
        for channel in change.channels:
            row = (sid, plugin, key, channel, change.notice_json, "pending", change.due_ms)
            inserted.setdefault((sid, plugin, key, channel), row)
    return OutboxPlan(withdraw=list(withdraw), insert=list(inserted.values()))
