"""Fixed-rate arithmetic: which occurrence of an every record a decision time delivers.

With ``T`` the record's ``scheduledAt`` (the earliest anchor-aligned target not yet dispatched),
``I`` its interval and ``A`` the decision time (a dispatch's ``acceptedAt``), the delivered
occurrence is the latest target ``O = T + k*I <= A``; the record then waits for ``N = O + I``.
Occurrences between ``T`` and ``O`` are never delivered, stored or counted (no backlog), and
``N`` follows the creation anchor, never ``A`` (no drift). Integers only: the arithmetic is exact.
"""

import attrs

from ._codec import EveryRecord, ScheduleLogError
from ._instants import MAX_INSTANT_MS, MAX_SAFE_INTEGER, MIN_INSTANT_MS, parse_instant

__all__ = ["Occurrence", "resolve_every_occurrence"]


@attrs.frozen
class Occurrence:
    """The occurrence a decision delivers (epoch ms) and the record's next target, or ``None``
    when that would not be representable (the record is then exhausted and removed)."""

    occurrence_ms: int
    next_ms: int | None


def resolve_every_occurrence(record: EveryRecord, accepted_ms: int) -> Occurrence:
    """The latest occurrence of ``record`` at or before ``accepted_ms``, and the next target.

    Raises :class:`ScheduleLogError` when ``accepted_ms`` is not an int in years 0001-9999, the
    interval is not a positive safe integer of milliseconds, or ``accepted_ms`` precedes the
    record's ``scheduledAt``.
    """
    if type(accepted_ms) is not int or not MIN_INSTANT_MS <= accepted_ms <= MAX_INSTANT_MS:
        raise ScheduleLogError("every acceptedAt must be a representable four-digit-year instant")
    seconds = record.every_seconds
    if type(seconds) is not int or not 0 < seconds * 1000 <= MAX_SAFE_INTEGER:
        raise ScheduleLogError("every interval milliseconds must be a positive safe integer")
    interval = seconds * 1000
    target = parse_instant(record.scheduled_at)
    if accepted_ms < target:
        raise ScheduleLogError("every dispatch cannot precede the active scheduledAt")
    occurrence = target + (accepted_ms - target) // interval * interval
    following = occurrence + interval
    return Occurrence(occurrence, following if following <= MAX_INSTANT_MS else None)
