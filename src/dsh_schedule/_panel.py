"""The ``schedule.reminders`` Session view: what the browser's Reminders panel shows.

Derived from the committed log the host passes to ``dsh_session_views`` (never by appending):
the active reminders by next occurrence, and the latest deliveries with their lateness. Each
item carries the reminder's ``prompt`` and, when it has one, its ``title`` (what the panel shows
first); a delivery is shown as the reminder read when it was delivered (an edit since does not
rewrite it), with ``"done": true`` once acked and ``"snoozedUntil"`` once snoozed. It walks the
owned suffix with the fold's own walk (:meth:`~._fold.IncrementalFold.walk`), so it agrees
with :func:`~._fold.fold` on what is active; a corrupt stream raises
:class:`~._codec.ScheduleLogError` (the host logs it and shows no panel).

A delivery more than a minute late names a reason: ``"busy"`` when a turn was open at the due
instant (the reminder waited for the Agent), else ``"offline"`` (the host was not running or the
Session was not open, so nothing could deliver it on time).
"""

from collections.abc import Sequence
from typing import Final

from dsh_hookspecs import Event, JSONValue

from ._codec import Dispatch, Record, format_instant
from ._fold import IncrementalFold, check_seed_length, dispatched
from ._instants import parse_instant
from ._record_fields import extra_fields, rule_fields

__all__ = ["LATE_AFTER_MS", "RECENT_LIMIT", "VIEW_NAME", "reminders_view"]

#: The view's name in ``GET /api/sessions/{id}/views``.
VIEW_NAME: Final = "schedule.reminders"
#: At most this many recent deliveries, newest first.
RECENT_LIMIT: Final = 10
#: A delivery later than this gets a reason.
LATE_AFTER_MS: Final = 60_000


def _active_item(record: Record) -> dict[str, JSONValue]:
    """An active reminder: its id, text (``prompt``, and ``title`` when it has one), kind, next
    occurrence and its rule in the record's wire names (``afterSeconds``; ``everySeconds``;
    ``time``, ``timeZone`` and ``weekdays``; ``expression`` and ``timeZone``; none for ``at``),
    so an edit can send the record it showed back as ``expected``."""
    item: dict[str, JSONValue] = {
        "scheduleId": record.id,
        "prompt": record.prompt,
        "kind": record.kind,
        "nextAt": record.scheduled_at,
    }
    if record.title is not None:
        item["title"] = record.title
    item.update(rule_fields(record))
    item.update(extra_fields(record))
    return item


def _busy_at(turns: Sequence[tuple[int, int | None]], instant_ms: int) -> bool:
    """Whether a turn was open at ``instant_ms`` (``turns``: ``(start, end or None)`` times)."""
    return any(start <= instant_ms and (end is None or instant_ms < end) for start, end in turns)


def reminders_view(events: Sequence[Event], seed_length: int) -> dict[str, JSONValue]:
    """The view of ``events`` (a committed log): ``{"badge", "active", "recent"}``."""
    check_seed_length(seed_length, len(events))
    folded = IncrementalFold(seed_length)
    deliveries: list[tuple[Record, str, Event]] = []
    for event, change in folded.walk(events):
        if isinstance(change, Dispatch):
            record = folded.get(change.id)
            assert record is not None  # the walk refuses a dispatch of an inactive id
            deliveries.append((record, dispatched(record, change)[0], event))
    turns: list[tuple[int, int | None]] = []
    for index in range(seed_length, len(events)):
        event = events[index]
        if event.type == "turn/start":
            turns.append((event.time, None))
        elif event.type == "turn/end" and turns and turns[-1][1] is None:
            turns[-1] = (turns[-1][0], event.time)
    recent: list[JSONValue] = []
    for record, occurrence_at, event in reversed(deliveries[-RECENT_LIMIT:]):
        due_ms = parse_instant(occurrence_at)
        late_ms = max(0, event.time - due_ms)
        item: dict[str, JSONValue] = {
            "scheduleId": record.id,
            "prompt": record.prompt,
            "occurrenceAt": occurrence_at,
            "deliveredAt": format_instant(event.time),
            "lateMs": late_ms,
        }
        if record.title is not None:
            item["title"] = record.title
        delivery = folded.delivery(record.id, occurrence_at)
        assert delivery is not None  # the walk kept every delivery
        if delivery.done:
            item["done"] = True
        if delivery.until is not None:
            item["snoozedUntil"] = delivery.until
        if late_ms > LATE_AFTER_MS:
            item["lateReason"] = "busy" if _busy_at(turns, due_ms) else "offline"
        recent.append(item)
    upcoming = sorted(folded.active, key=lambda record: (record.scheduled_at, record.id))
    return {
        "badge": len(upcoming),
        "active": [_active_item(record) for record in upcoming],
        "recent": recent,
    }
