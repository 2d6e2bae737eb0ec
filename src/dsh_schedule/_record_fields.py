"""A record as the tools answer it: the wire fields of its rule and options, its state, and its
delivery mode (what ``schedule_list``, ``schedule_create`` and the other tools return, and what
the board and the Reminders panel show).
"""

from typing import Final

from dsh_hookspecs import JSONValue

from ._codec import (
    AfterRecord,
    AtRecord,
    CronRecord,
    DailyRecord,
    EveryRecord,
    Record,
    WeeklyRecord,
    parse_instant,
)

__all__ = ["DELIVERY_MODE", "extra_fields", "record_answer", "rule_fields"]

#: The only delivery mode: the reminder is delivered into its own Session, nowhere else.
DELIVERY_MODE: Final = "session-local"


def record_answer(record: Record, now_ms: int) -> dict[str, JSONValue]:
    """The tools' answer for an active record at ``now_ms`` (overdue iff now >= target), keys
    in the contract's order: ``id, kind, prompt``, ``title`` when it has one, the rule
    (``afterSeconds``; ``everySeconds``; ``time, timeZone``; ``time, timeZone, weekdays``;
    ``expression, timeZone``; an at record has none), ``renotifyMinutes`` and ``snoozedFrom``
    when it has them, ``scheduledAt, state, deliveryMode``. A recurring record's
    ``scheduledAt`` is its next undispatched target."""
    answer: dict[str, JSONValue] = {"id": record.id, "kind": record.kind, "prompt": record.prompt}
    if record.title is not None:
        answer["title"] = record.title
    answer.update(rule_fields(record))
    answer.update(extra_fields(record))
    answer["scheduledAt"] = record.scheduled_at
    answer["state"] = "overdue" if now_ms >= parse_instant(record.scheduled_at) else "scheduled"
    answer["deliveryMode"] = DELIVERY_MODE
    return answer


def rule_fields(record: Record) -> dict[str, JSONValue]:
    """The wire fields of ``record``'s rule, in wire order (none for an at record)."""
    if isinstance(record, AfterRecord):
        return {"afterSeconds": record.after_seconds}
    if isinstance(record, EveryRecord):
        return {"everySeconds": record.every_seconds}
    if isinstance(record, DailyRecord):
        return {"time": record.time, "timeZone": record.time_zone}
    if isinstance(record, WeeklyRecord):
        return {
            "time": record.time,
            "timeZone": record.time_zone,
            "weekdays": list(record.weekdays),
        }
    if isinstance(record, CronRecord):
        return {"expression": record.expression, "timeZone": record.time_zone}
    return {}


def extra_fields(record: Record) -> dict[str, JSONValue]:
    """The optional wire fields ``renotifyMinutes`` and ``snoozedFrom`` (``{"id",
    "occurrenceAt"}``) of ``record``, those it has."""
    fields: dict[str, JSONValue] = {}
    if record.renotify_minutes is not None:
        fields["renotifyMinutes"] = record.renotify_minutes
    if isinstance(record, AtRecord) and record.snoozed_from is not None:
        snoozed = record.snoozed_from
        fields["snoozedFrom"] = {"id": snoozed.id, "occurrenceAt": snoozed.occurrence_at}
    return fields
