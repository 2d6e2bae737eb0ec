"""The due decision: what the owner delivers at one decision time.

1. One-shots first: the after or at record with the earliest ``scheduledAt <= now`` (ties by
   create order) is delivered alone, with an id-only dispatch.
2. Otherwise one batch: every recurring record (every, daily, weekly, cron) with
   ``scheduledAt <= now``, sorted by that current ``scheduledAt`` and then create order, each
   delivering its latest occurrence at or before ``now`` (never a backlog), all dispatched with
   the same ``acceptedAt = now``. A calendar record's dispatch also freezes the occurrence it
   delivered and its next target (``nextAt``, ``null`` when none is representable).
3. Otherwise nothing is due (the owner arms for the earliest target of any kind).
"""

from collections.abc import Sequence

import attrs
import structlog

from dsh_hookspecs import InvalidTimeZoneError

from ._codec import (
    MAX_INSTANT_MS,
    MIN_INSTANT_MS,
    AfterRecord,
    AtRecord,
    Dispatch,
    EveryRecord,
    OneShotRecord,
    Record,
    RecurringRecord,
    ScheduleLogError,
    format_instant,
    parse_instant,
)
from ._every import Occurrence, resolve_every_occurrence
from ._framing import BatchItem, batch_framing, reminder_framing
from ._rules import calendar_occurrence

__all__ = ["Batch", "Decision", "OneShot", "due_decision", "recurring_occurrence"]

log = structlog.get_logger(__name__)


@attrs.frozen
class OneShot:
    """Deliver one due one-shot record."""

    record: OneShotRecord

    def framing(self) -> str:
        return reminder_framing(self.record)

    def dispatches(self) -> tuple[Dispatch, ...]:
        return (Dispatch(id=self.record.id),)


@attrs.frozen
class Batch:
    """Deliver the due recurring records, each at its occurrence (epoch ms), decided at
    ``accepted_ms``."""

    accepted_ms: int
    items: tuple[tuple[RecurringRecord, int], ...]

    def framing(self) -> str:
        reminders: list[BatchItem] = [
            (record.id, format_instant(occurrence), record.prompt)
            for record, occurrence in self.items
        ]
        return batch_framing(reminders)

    def dispatches(self) -> tuple[Dispatch, ...]:
        accepted_at = format_instant(self.accepted_ms)
        return tuple(
            _dispatch(record, occurrence, self.accepted_ms, accepted_at)
            for record, occurrence in self.items
        )


def _dispatch(
    record: RecurringRecord, occurrence: int, accepted_ms: int, accepted_at: str
) -> Dispatch:
    if isinstance(record, EveryRecord):
        return Dispatch(id=record.id, accepted_at=accepted_at)
    following = recurring_occurrence(record, accepted_ms).next_ms
    return Dispatch(
        id=record.id,
        accepted_at=accepted_at,
        occurrence_at=format_instant(occurrence),
        next_at=None if following is None else format_instant(following),
    )


Decision = OneShot | Batch


def recurring_occurrence(record: RecurringRecord, now_ms: int) -> Occurrence:
    """The occurrence a decision at ``now_ms`` delivers from the due ``record``, and its next
    target.

    Raises :class:`~._codec.ScheduleLogError` when ``now_ms`` is not a representable instant.
    A calendar record whose zone is no longer in the installed ``tzdata`` delivers its committed
    target and ends (logged): without its zone no next occurrence can be computed.
    """
    if isinstance(record, EveryRecord):
        return resolve_every_occurrence(record, now_ms)
    if not MIN_INSTANT_MS <= now_ms <= MAX_INSTANT_MS:
        raise ScheduleLogError(
            f"{record.kind} acceptedAt must be a representable four-digit-year instant"
        )
    try:
        return calendar_occurrence(record, now_ms)
    except InvalidTimeZoneError:
        log.warning("owner.zone_missing", schedule_id=record.id, time_zone=record.time_zone)
        return Occurrence(parse_instant(record.scheduled_at), None)


def due_decision(active: Sequence[Record], now_ms: int) -> Decision | None:
    """What is delivered at ``now_ms`` from the ``active`` records (create order), or ``None``.

    Raises :class:`~._codec.ScheduleLogError` when a recurring record is due and ``now_ms`` is
    not a representable instant (one-shots are decided first and unaffected).
    """
    one_shot: OneShotRecord | None = None
    one_shot_at = 0
    recurring: list[tuple[int, RecurringRecord]] = []
    for record in active:
        target = parse_instant(record.scheduled_at)
        if target > now_ms:
            continue
        if not isinstance(record, AfterRecord | AtRecord):
            recurring.append((target, record))
        elif one_shot is None or target < one_shot_at:
            one_shot, one_shot_at = record, target
    if one_shot is not None:
        return OneShot(one_shot)
    if not recurring:
        return None
    recurring.sort(key=lambda entry: entry[0])  # stable: ties stay in create order
    items = tuple(
        (record, recurring_occurrence(record, now_ms).occurrence_ms) for _, record in recurring
    )
    return Batch(now_ms, items)
