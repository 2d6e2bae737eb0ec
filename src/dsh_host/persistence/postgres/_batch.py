"""One batch of appends written with a fixed number of statements, whatever its size.

:func:`lock_lengths` locks the ``sessions`` rows of every Session a batch touches, in id order
(so two hosts committing overlapping batches never deadlock), and returns their stored lengths.
:func:`write_planned` decides every request against those lengths in order, exactly as if they
were applied one by one (:func:`~dsh_host.persistence._backend.check_position`), then writes
what was accepted with one statement per table (``unnest`` of arrays; the board and the wake
index one to set and one to remove rows, newest change winning; the outbox one to withdraw and
one to insert, as :func:`~.._writes.plan_outbox` folds the batch's changes). It raises
:class:`Replan` when a create lost a race with another process (the caller rolls back and takes
the per-request path).

Every write carries its lease epoch (:class:`Fence`): a create is leased to this process at
epoch 1, every other request sets ``writer`` to the epoch it holds (or claimed in this
transaction), and the database's fence refuses the statement when one of them is stale (the
caller then replans, and that request alone fails).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from .._backend import StorageConflictError, StorageError, check_position
from .._write import EncodedNotice
from .._writes import OutboxPlan, plan_outbox
from ._schema import Connection

if TYPE_CHECKING:
    from .._writes import BoardSet, Request

_LOCK_SQL = "SELECT id, length FROM sessions WHERE id = ANY(%s) ORDER BY id FOR UPDATE"
_CREATE_SQL = (
    "INSERT INTO sessions (id, header, created_at, length, epoch, writer, owner, lease_until) "
    "SELECT v.*, 1, 1, %s, dsh_now_ms() + %s "
    "FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[]) AS v "
    "ON CONFLICT (id) DO NOTHING RETURNING id"
)
_LENGTH_SQL = (
    "UPDATE sessions AS s SET length = v.length, writer = v.writer "
    "FROM unnest(%s::text[], %s::bigint[], %s::bigint[]) AS v (id, length, writer) "
    "WHERE s.id = v.id"
)
#: The epoch a write carries when this process holds no lease (the fence refuses it).
NO_EPOCH = -1


@dataclass(frozen=True, slots=True)
class Fence:
    """The lease side of one transaction: who writes, and the epoch of each Session."""

    owner: str
    ttl_ms: int
    epochs: dict[str, int]

    def writer(self, session_id: str) -> int:
        return self.epochs.get(session_id, NO_EPOCH)


_EVENTS_SQL = (
    "INSERT INTO events (session_id, seq, type, time, data) "
    "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bigint[], %s::text[])"
)
_WAKE_SET_SQL = (
    "INSERT INTO wakes (session_id, plugin, at_ms) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::bigint[]) "
    "ON CONFLICT (session_id, plugin) DO UPDATE SET at_ms = EXCLUDED.at_ms"
)
_WAKE_CLEAR_SQL = (
    "DELETE FROM wakes AS w USING unnest(%s::text[], %s::text[]) AS v (session_id, plugin) "
    "WHERE w.session_id = v.session_id AND w.plugin = v.plugin"
)


_BOARD_SET_SQL = (
    "INSERT INTO board (session_id, plugin, key, kind, at_ms, data) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[], "
    "%s::text[]) "
    "ON CONFLICT (session_id, plugin, key) DO UPDATE SET "
    "kind = EXCLUDED.kind, at_ms = EXCLUDED.at_ms, data = EXCLUDED.data"
)
_BOARD_CLEAR_SQL = (
    "DELETE FROM board AS b "
    "USING unnest(%s::text[], %s::text[], %s::text[]) AS v (session_id, plugin, key) "
    "WHERE b.session_id = v.session_id AND b.plugin = v.plugin AND b.key = v.key"
)
_NAMES_SQL = (
    "INSERT INTO names (session_id, name) SELECT * FROM unnest(%s::text[], %s::text[]) "
    "ON CONFLICT (session_id) DO UPDATE SET name = EXCLUDED.name"
)
#: Withdraw the pending entries of some notices.
_OUTBOX_WITHDRAW_SQL = (
    "UPDATE outbox AS o SET status = 'withdrawn' "
    "FROM unnest(%s::text[], %s::text[], %s::text[]) AS v (session_id, plugin, key) "
    "WHERE o.session_id = v.session_id AND o.plugin = v.plugin AND o.key = v.key "
    "AND o.status = 'pending'"
)
#: Insert entries unless stored, their ids in the order given.
_OUTBOX_INSERT_SQL = (
    "INSERT INTO outbox (session_id, plugin, key, channel, notice, status, attempts, next_ms, "
    "error, updated_ms) "
    "SELECT v.session_id, v.plugin, v.key, v.channel, v.notice, v.status, 0, v.due, NULL, v.due "
    "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
    "%s::bigint[]) WITH ORDINALITY AS v (session_id, plugin, key, channel, notice, status, due, n) "
    "ORDER BY v.n ON CONFLICT (session_id, plugin, key, channel) DO NOTHING"
)


async def write_outbox(conn: Connection, plan: OutboxPlan) -> None:
    """Store ``plan`` (:func:`~.._writes.plan_outbox`) with two statements at most."""
    if plan.withdraw:
        await conn.execute(_OUTBOX_WITHDRAW_SQL, _columns(plan.withdraw, 3))
    if plan.insert:
        await conn.execute(_OUTBOX_INSERT_SQL, _columns(plan.insert, 7))


class Replan(Exception):  # noqa: N818 - a signal to the caller, not a failure
    """A create of this batch met a Session another process created meanwhile."""


async def lock_lengths(conn: Connection, batch: Sequence[Request]) -> dict[str, int | None]:
    """The stored length of each Session of ``batch`` (``None``: absent), its row locked."""
    lengths: dict[str, int | None] = dict.fromkeys(sorted({r.session_id for r in batch}))
    # (An id PostgreSQL text cannot hold is absent; its request fails in its own savepoint.)
    storable = [sid for sid in lengths if "\x00" not in sid]
    cur = await conn.execute(_LOCK_SQL, (storable,))
    for sid, length in await cur.fetchall():
        lengths[cast(str, sid)] = cast(int, length)
    return lengths


@dataclass(slots=True)
class _Plan:
    created: dict[str, Request] = field(default_factory=dict)
    lengths: dict[str, int] = field(default_factory=dict)
    events: list[tuple[str, int, str, int, str]] = field(default_factory=list)
    wakes: dict[tuple[str, str], int | None] = field(default_factory=dict)
    #: ``(session_id, plugin, key)`` -> the row to store, or ``None`` to remove it.
    board: dict[tuple[str, str, str], BoardSet | None] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    #: The outbox changes of the accepted requests, in their order.
    outbox: list[tuple[str, EncodedNotice]] = field(default_factory=list)


def _columns(rows: Sequence[tuple[object, ...]], width: int) -> list[list[object]]:
    return [[row[i] for row in rows] for i in range(width)]


async def write_planned(
    conn: Connection, batch: Sequence[Request], stored: dict[str, int | None], fence: Fence
) -> list[StorageError | None]:
    """Decide and write ``batch`` inside the open transaction; the outcome of each request."""
    plan = _Plan()
    outcomes: list[StorageError | None] = []
    for request in batch:
        sid = request.session_id
        creating = request.header_json is not None
        try:
            check_position(sid, request.start, stored[sid], creating=creating)
        except StorageConflictError as exc:
            outcomes.append(exc)
            continue
        if creating:
            plan.created[sid] = request
            fence.epochs[sid] = 1  # a create is leased to this process at epoch 1
        stored[sid] = plan.lengths[sid] = request.start + len(request.rows)
        plan.events.extend(request.rows)
        for plugin, at_ms in request.wakes:
            plan.wakes[sid, plugin] = at_ms
        for target in request.board_clear:
            plan.board[target] = None
        for row in request.board_set:
            plan.board[row[:3]] = row
        if request.name is not None:
            plan.names[sid] = request.name
        plan.outbox.extend((sid, change) for change in request.outbox)
        outcomes.append(None)
    if plan.created:
        creates = [
            (sid, r.header_json, r.created_at, plan.lengths.pop(sid))
            for sid, r in plan.created.items()
        ]
        cur = await conn.execute(_CREATE_SQL, [fence.owner, fence.ttl_ms, *_columns(creates, 4)])
        if len(await cur.fetchall()) != len(creates):
            raise Replan
    if plan.lengths:
        rows = [(sid, length, fence.writer(sid)) for sid, length in plan.lengths.items()]
        await conn.execute(_LENGTH_SQL, _columns(rows, 3))
    if plan.events:
        await conn.execute(_EVENTS_SQL, _columns(plan.events, 5))
    cleared = [key for key, at_ms in plan.wakes.items() if at_ms is None]
    if cleared:
        await conn.execute(_WAKE_CLEAR_SQL, _columns(cleared, 2))
    kept = [(*key, at_ms) for key, at_ms in plan.wakes.items() if at_ms is not None]
    if kept:
        await conn.execute(_WAKE_SET_SQL, _columns(kept, 3))
    await _write_board(conn, plan)
    return outcomes


async def _write_board(conn: Connection, plan: _Plan) -> None:
    removed = [target for target, row in plan.board.items() if row is None]
    if removed:
        await conn.execute(_BOARD_CLEAR_SQL, _columns(removed, 3))
    stored = [row for row in plan.board.values() if row is not None]
    if stored:
        await conn.execute(_BOARD_SET_SQL, _columns(stored, 6))
    if plan.names:
        await conn.execute(_NAMES_SQL, _columns(list(plan.names.items()), 2))
    if plan.outbox:
        await write_outbox(conn, plan_outbox(plan.outbox))
