"""A due wake of a cold Session, answered from what is stored (:func:`plan_wake`).

When the Schedule wake entry of a cold Session is due, the host asks the plugin what it means
(:func:`~dsh_hookspecs.hookspecs.dsh_wake_due`) instead of making the Session live. The answer
is decided by the same rules the live owner runs (:class:`~._runtime.ScheduleOwner`): the same
fold of the owned stream, the same :func:`~._due.due_decision` and framing, the same board rows
(:func:`~._board.wanted_rows`) and notices (:func:`~._board.delivery_notices`), and the wake the
wake filer would file next. So a reminder delivered cold and one delivered live leave the same
log, board, outbox and wake entry.

The plan holds at most one follow-up, as one drive of the live owner does: the live owner
dispatches the next due reminder only once the Agent is idle again, after the follow-up's turn.
A later due reminder therefore stays due in the returned wake entry, and is answered when the
Session's owed turn has run. Whenever the live owner would wait or would refuse (the log owes a
turn, or its owned stream does not fold), the plan is ``None`` and the host resumes the Session,
so the live path decides.
"""

from __future__ import annotations

from dsh_hookspecs import DeliveryPlan, Event, Followup, JSONValue, Notice, StoredWake, owes_turn

from ._board import delivery_notices, kept_deliveries, row_changes, wanted_rows
from ._codec import Dispatch, ScheduleLogError, encode_change, parse_instant
from ._due import due_decision
from ._fold import SCHEDULE_CHANGE, IncrementalFold, earliest

__all__ = ["FOLLOWUP", "plan_wake"]

#: The event a follow-up enters the log as.
FOLLOWUP = "agent/followup"


def plan_wake(wake: StoredWake, plugin: str) -> DeliveryPlan | None:
    """What the due wake ``wake`` of the cold Session means (``plugin``: the name its
    follow-ups name as their source), or ``None`` when the live owner must decide."""
    events = wake.events
    owned = events[wake.header.owned_from :]
    if owes_turn(owned):
        return None
    folded = IncrementalFold(wake.header.owned_from)
    try:
        stored = folded.steps(events)
        laid, followups, known = _deliver(folded, len(events), wake.now_ms, plugin)
        delivered = folded.steps([*events, *laid], known)
    except ScheduleLogError:
        return None
    notices: list[tuple[str, Notice | None]] = []
    for event, change, record in delivered:
        assert isinstance(change, Dispatch)  # the laid events dispatch and do nothing else
        notices.extend(delivery_notices(wake.session_id, folded, event, change, record))
    next_record = earliest(folded.active)
    return DeliveryPlan(
        followups=followups,
        board=row_changes(wake.board, wanted_rows(folded, kept_deliveries(stored + delivered))),
        notices=tuple(notices),
        wake_at_ms=None if next_record is None else parse_instant(next_record.scheduled_at),
    )


def _deliver(
    folded: IncrementalFold, start: int, now_ms: int, plugin: str
) -> tuple[list[Event], tuple[Followup, ...], dict[int, Dispatch]]:
    """The events (laid out from ``start`` as the host appends them), the follow-up and the
    dispatches by seq of the one decision due at ``now_ms``; none when nothing is due."""
    record = earliest(folded.active)
    if record is None or parse_instant(record.scheduled_at) > now_ms:
        return [], (), {}
    decision = due_decision(folded.active, now_ms)
    assert decision is not None  # the earliest record is due at now_ms
    changes = decision.dispatches()
    dispatches: tuple[tuple[str, JSONValue], ...] = tuple(
        (SCHEDULE_CHANGE, encode_change(dispatch)) for dispatch in changes
    )
    followup = Followup(text=decision.framing(), events=dispatches)
    source: JSONValue = {"kind": "plugin", "plugin": plugin}
    laid = [
        Event(seq=start, type=FOLLOWUP, time=now_ms, data={"text": followup.text, "source": source})
    ]
    laid.extend(
        Event(seq=start + 1 + offset, type=kind, time=now_ms, data=data)
        for offset, (kind, data) in enumerate(dispatches)
    )
    return laid, (followup,), {start + 1 + offset: c for offset, c in enumerate(changes)}
