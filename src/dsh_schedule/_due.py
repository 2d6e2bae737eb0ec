"""The due decision: what the owner delivers at one decision time.

1. One-shots first: the after or at record with the earliest ``scheduledAt <= now`` (ties by
   create order) is delivered alone, with an id-only dispatch.
2. Otherwise one batch: every every record with ``scheduledAt <= now``, sorted by that current
   ``scheduledAt`` and then create order, each delivering its latest occurrence at or before
   ``now`` (never a backlog), all dispatched with the same ``acceptedAt = now``.
3. Otherwise nothing is due (the owner arms for the earliest target of any kind).
"""

from collections.abc import Sequence

import attrs

from ._answers import BatchItem, batch_framing, reminder_framing
from ._codec import Dispatch, EveryRecord, OneShotRecord, Record, format_instant, parse_instant
from ._every import resolve_every_occurrence

__all__ = ["Batch", "Decision", "OneShot", "due_decision"]


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
    """Deliver the due every records, each at its occurrence (epoch ms), decided at
    ``accepted_ms``."""

    accepted_ms: int
    items: tuple[tuple[EveryRecord, int], ...]

    def framing(self) -> str:
        reminders: list[BatchItem] = [
            (record.id, format_instant(occurrence), record.prompt)
            for record, occurrence in self.items
        ]
        return batch_framing(reminders)

    def dispatches(self) -> tuple[Dispatch, ...]:
        accepted_at = format_instant(self.accepted_ms)
        return tuple(Dispatch(id=record.id, accepted_at=accepted_at) for record, _ in self.items)


Decision = OneShot | Batch


def due_decision(active: Sequence[Record], now_ms: int) -> Decision | None:
    """What is delivered at ``now_ms`` from the ``active`` records (create order), or ``None``.

    Raises :class:`~._codec.ScheduleLogError` when an every record is due and ``now_ms`` is not
    a representable instant (one-shots are decided first and unaffected).
    """
    one_shot: OneShotRecord | None = None
    one_shot_at = 0
    every: list[tuple[int, EveryRecord]] = []
    for record in active:
        target = parse_instant(record.scheduled_at)
        if target > now_ms:
            continue
        if isinstance(record, EveryRecord):
            every.append((target, record))
        elif one_shot is None or target < one_shot_at:
            one_shot, one_shot_at = record, target
    if one_shot is not None:
        return OneShot(one_shot)
    if not every:
        return None
    every.sort(key=lambda entry: entry[0])  # stable: ties stay in create order
    items = tuple(
        (record, resolve_every_occurrence(record, now_ms).occurrence_ms) for _, record in every
    )
    return Batch(now_ms, items)
