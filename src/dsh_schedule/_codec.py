"""The strict version-1 ``schedule/change`` codec (and, re-exported, the canonical instants).

Wire shapes (exact key sets, camelCase; the unions were widened without a version bump, so every
earlier log decodes exactly as before)::

    {"version": 1, "operation": "create", "schedule": RECORD}
    {"version": 1, "operation": "update", "id": "schedule-1", "schedule": RECORD}
    {"version": 1, "operation": "delete", "id": "schedule-1"}
    {"version": 1, "operation": "dispatch", "id": "schedule-1"}         # an after or at record
    {"version": 1, "operation": "dispatch", "id": "schedule-1",
     "acceptedAt": "2026-08-05T12:17:34.000Z"}                           # an every record
    {"version": 1, "operation": "dispatch", "id": "schedule-1",
     "acceptedAt": "…", "occurrenceAt": "…", "nextAt": "…" | null}      # daily, weekly, cron
    {"version": 1, "operation": "ack", "id": "schedule-1", "occurrenceAt": "…"}

    RECORD: {"id", "kind": "after", "prompt", "afterSeconds", "scheduledAt"}
          | {"id", "kind": "at", "prompt", "scheduledAt"}
          | {"id", "kind": "every", "prompt", "everySeconds", "scheduledAt"}
          | {"id", "kind": "daily", "prompt", "time", "timeZone", "scheduledAt"}
          | {"id", "kind": "weekly", "prompt", "time", "timeZone", "weekdays", "scheduledAt"}
          | {"id", "kind": "cron", "prompt", "expression", "timeZone", "scheduledAt"}

Every record may also hold ``"title"`` (a trimmed string of 1-120 characters; absent when there
is none) and ``"renotifyMinutes"`` (an integer of 5-1440: re-notify a delivery not yet done;
absent when off); an ``at`` record may hold ``"snoozedFrom": {"id", "occurrenceAt"}``, the
delivered occurrence it snoozes (absent on any other). An ``ack`` marks one delivered occurrence
(``occurrenceAt``, the instant its dispatch delivered) of the id done.

``time`` is ``HH:mm:ss.SSS``, ``weekdays`` ascending ISO weekdays (1 = Monday), ``expression``
the canonical spelling of :func:`~._cron.canonical_cron`, ``timeZone`` ``UTC`` or an
Area/Location name (only its shape is checked here: decoding never consults zone data). A
calendar record's ``scheduledAt`` is its committed next target and a calendar dispatch freezes
what it delivered and where the record goes next, so replay never consults a zone either.

A record's class is chosen by its selector key (``afterSeconds``, ``everySeconds``,
``expression``, ``weekdays``), else by its kind, else it is read as an ``at`` record; its
``kind`` must then name that class (so an after record relabelled ``at`` is "kind 'at' is not
'after'").

Decoding never coerces: ``True`` and ``1.0`` are not ``1``, ``"5"`` is not ``5``, an extra or
missing key anywhere is an error. Every failure is a :class:`ScheduleLogError` whose message says
what is wrong and where (a ``$``-rooted path in wire names).

Instants are ``YYYY-MM-DDTHH:MM:SS.sssZ`` (UTC, exactly three fraction digits, years 0001-9999),
exchanged as integer epoch milliseconds (:mod:`._instants`).
"""

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, NoReturn, TypeAlias, TypeVar

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from dsh_hookspecs import JSONValue

from ._cron import CronError, canonical_cron
from ._instants import (
    MAX_INSTANT_MS,
    MAX_SAFE_INTEGER,
    MIN_INSTANT_MS,
    brief,
    format_instant,
    parse_instant,
)

__all__ = [
    "CALENDAR_KINDS",
    "KINDS",
    "MAX_AFTER_SECONDS",
    "MAX_EVERY_SECONDS",
    "MAX_INSTANT_MS",
    "MAX_RENOTIFY_MINUTES",
    "MAX_TITLE_CHARS",
    "MIN_EVERY_SECONDS",
    "MIN_EVERY_SECONDS_FLOOR",
    "MIN_INSTANT_MS",
    "MIN_RENOTIFY_MINUTES",
    "Ack",
    "AfterRecord",
    "AtRecord",
    "CalendarRecord",
    "Create",
    "CronRecord",
    "DailyRecord",
    "Delete",
    "Dispatch",
    "EveryRecord",
    "OneShotRecord",
    "Record",
    "RecurringRecord",
    "ScheduleChange",
    "ScheduleLogError",
    "SnoozedFrom",
    "Update",
    "WeeklyRecord",
    "brief",
    "decode_change",
    "encode_change",
    "encode_record",
    "format_instant",
    "parse_instant",
]


# --------------------------------------------------------------------------------------------
# Values

#: The largest ``afterSeconds`` whose millisecond value is a JavaScript safe integer.
MAX_AFTER_SECONDS: Final = MAX_SAFE_INTEGER // 1000
#: The default shortest fixed-rate interval, in seconds (a shorter ``every_seconds`` is
#: ``frequency_too_high``; the plugin's ``min_every_seconds`` config may lower it to
#: :data:`MIN_EVERY_SECONDS_FLOOR`).
MIN_EVERY_SECONDS: Final = 300
#: The shortest ``everySeconds`` any configuration writes, so the shortest a log may hold.
MIN_EVERY_SECONDS_FLOOR: Final = 60
#: The largest ``everySeconds`` whose millisecond value is a JavaScript safe integer.
MAX_EVERY_SECONDS: Final = MAX_AFTER_SECONDS
#: The longest ``title``, in characters.
MAX_TITLE_CHARS: Final = 120
#: The shortest ``renotifyMinutes``.
MIN_RENOTIFY_MINUTES: Final = 5
#: The longest ``renotifyMinutes`` (a day).
MAX_RENOTIFY_MINUTES: Final = 1440
#: The record kinds of version 1.
KINDS: Final = ("after", "at", "every", "daily", "weekly", "cron")
#: The kinds whose occurrences are wall times in a time zone.
CALENDAR_KINDS: Final = ("daily", "weekly", "cron")


class ScheduleLogError(Exception):
    """The Session's schedule log is not a valid version-1 ``schedule/change`` stream."""

    code: Final = "corrupt_schedule_log"


@attrs.frozen(kw_only=True)
class SnoozedFrom:
    """The delivered occurrence a snooze reminder stands for: the reminder ``id`` and the
    ``occurrence_at`` its dispatch delivered (wire ``{"id", "occurrenceAt"}``)."""

    id: str
    occurrence_at: str


@attrs.frozen(kw_only=True)
class AfterRecord:
    """An active one-shot reminder: fire ``after_seconds`` after creation, at ``scheduled_at``."""

    id: str
    kind: Literal["after"]
    prompt: str
    after_seconds: int
    scheduled_at: str
    title: str | None = None
    renotify_minutes: int | None = None


@attrs.frozen(kw_only=True)
class AtRecord:
    """An active one-shot reminder at an absolute instant: only the UTC ``scheduled_at`` is kept
    (no offset, local fields or zone, so replay never consults a zone). ``snoozed_from`` names
    the delivered occurrence a snooze reminder stands for."""

    id: str
    kind: Literal["at"]
    prompt: str
    scheduled_at: str
    title: str | None = None
    renotify_minutes: int | None = None
    snoozed_from: SnoozedFrom | None = None


@attrs.frozen(kw_only=True)
class EveryRecord:
    """An active fixed-rate reminder every ``every_seconds``, anchored at its creation:
    ``scheduled_at`` is the earliest anchor-aligned target not yet dispatched."""

    id: str
    kind: Literal["every"]
    prompt: str
    every_seconds: int
    scheduled_at: str
    title: str | None = None
    renotify_minutes: int | None = None


@attrs.frozen(kw_only=True)
class DailyRecord:
    """An active reminder every day at the wall time ``time`` (``HH:mm:ss.SSS``) in
    ``time_zone``; ``scheduled_at`` is its committed next target."""

    id: str
    kind: Literal["daily"]
    prompt: str
    time: str
    time_zone: str
    scheduled_at: str
    title: str | None = None
    renotify_minutes: int | None = None


@attrs.frozen(kw_only=True)
class WeeklyRecord:
    """An active reminder at the wall time ``time`` in ``time_zone`` on each of ``weekdays``
    (ascending ISO weekdays, 1 = Monday); ``scheduled_at`` is its committed next target."""

    id: str
    kind: Literal["weekly"]
    prompt: str
    time: str
    time_zone: str
    weekdays: tuple[int, ...]
    scheduled_at: str
    title: str | None = None
    renotify_minutes: int | None = None


@attrs.frozen(kw_only=True)
class CronRecord:
    """An active reminder at the wall times of the canonical five-field cron ``expression`` in
    ``time_zone``; ``scheduled_at`` is its committed next target."""

    id: str
    kind: Literal["cron"]
    prompt: str
    expression: str
    time_zone: str
    scheduled_at: str
    title: str | None = None
    renotify_minutes: int | None = None


#: A record that is delivered once and then ends.
OneShotRecord: TypeAlias = AfterRecord | AtRecord
#: A record whose occurrences are wall times in a time zone.
CalendarRecord: TypeAlias = DailyRecord | WeeklyRecord | CronRecord
#: A record that stays active after a delivery (while it has a next occurrence).
RecurringRecord: TypeAlias = EveryRecord | DailyRecord | WeeklyRecord | CronRecord
#: Any active record.
Record: TypeAlias = AfterRecord | AtRecord | EveryRecord | DailyRecord | WeeklyRecord | CronRecord

_RECORD_CLASSES: Final[dict[str, type[Record]]] = {
    "after": AfterRecord,
    "at": AtRecord,
    "every": EveryRecord,
    "daily": DailyRecord,
    "weekly": WeeklyRecord,
    "cron": CronRecord,
}


@attrs.frozen(kw_only=True)
class Create:
    """``operation: "create"``: ``record`` becomes active (wire key ``schedule``)."""

    record: Record


@attrs.frozen(kw_only=True)
class Update:
    """``operation: "update"``: the active record ``id`` is replaced by ``record`` (the whole new
    record, same id; wire key ``schedule``), keeping its place in create order."""

    id: str
    record: Record


@attrs.frozen(kw_only=True)
class Delete:
    """``operation: "delete"``: the active record ``id`` is removed without delivery."""

    id: str


def _calendar_fields(instance: "Dispatch", _: object, value: str | None) -> None:
    if value is not None and instance.occurrence_at is None:
        raise ValueError("nextAt belongs to a calendar dispatch, which has occurrenceAt")
    if instance.occurrence_at is not None and instance.accepted_at is None:
        raise ValueError("a calendar dispatch has acceptedAt")


@attrs.frozen(kw_only=True)
class Dispatch:
    """``operation: "dispatch"``: the active record ``id`` was delivered as a follow-up.

    ``accepted_at`` (wire ``acceptedAt``, a canonical instant) is the decision time of a
    recurring record's delivery, and absent (``None``) for a one-shot's. A calendar record's
    dispatch also freezes the occurrence it delivered (``occurrence_at``) and the record's next
    target (``next_at``; ``None`` is the wire's ``null``: no representable next occurrence, the
    record ends); both are ``None`` (and absent on the wire) for every other dispatch.
    """

    id: str
    accepted_at: str | None = None
    occurrence_at: str | None = None
    next_at: str | None = attrs.field(default=None, validator=_calendar_fields)

    @property
    def calendar(self) -> bool:
        """A calendar record's dispatch (it carries ``occurrenceAt`` and ``nextAt``)."""
        return self.occurrence_at is not None


@attrs.frozen(kw_only=True)
class Ack:
    """``operation: "ack"``: the occurrence ``occurrence_at`` that a dispatch of ``id``
    delivered is done (the id need not be active any more)."""

    id: str
    occurrence_at: str


ScheduleChange: TypeAlias = Create | Update | Delete | Dispatch | Ack

_T = TypeVar("_T")


@attrs.frozen(kw_only=True)
class _CalendarDispatch:
    """The wire form of a calendar dispatch: all four keys, ``nextAt`` possibly ``null``."""

    id: str
    accepted_at: str
    occurrence_at: str
    next_at: str | None


# --------------------------------------------------------------------------------------------
# Converter


class _InvalidFieldError(ValueError):
    """A field-level rule failed; its message is shown verbatim."""


def _exact(cls: type[_T], expected: str) -> Callable[[object, object], _T]:
    """A structure hook accepting only instances of exactly ``cls`` (so no bool for int)."""

    def structure(value: object, _: object) -> _T:
        if type(value) is not cls:
            raise _InvalidFieldError(f"expected {expected}, got {_json_type(value)}")
        return value

    return structure


_exact_str: Final = _exact(str, "a string")
_exact_int: Final = _exact(int, "an integer")
_exact_bool: Final = _exact(bool, "a boolean")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _schedule_id(value: object, _: object) -> str:
    text = _exact_str(value, _)
    if not text or text != text.strip():
        raise _InvalidFieldError(
            f"id {brief(text)} must be non-empty without surrounding whitespace"
        )
    return text


_KIND_LIST: Final = ", ".join(f'"{kind}"' for kind in KINDS[:-1]) + f', or "{KINDS[-1]}"'


def _kind(expected: str) -> Callable[[object, object], str]:
    """The ``kind`` hook of the record class for ``expected``."""

    def structure(value: object, _: object) -> str:
        if _exact_str(value, _) not in KINDS:
            raise _InvalidFieldError(f"v1 schedule kind must be {_KIND_LIST}, got {brief(value)}")
        if value != expected:
            raise _InvalidFieldError(f"kind {brief(value)} is not {expected!r}")
        return expected

    return structure


def _prompt(value: object, _: object) -> str:
    text = _exact_str(value, _)
    if not text or text != text.strip():
        raise _InvalidFieldError("prompt must be non-empty and already trimmed")
    return text


def _title(value: object, _: object) -> str:
    text = _exact_str(value, _)
    if not text or text != text.strip() or len(text) > MAX_TITLE_CHARS:
        raise _InvalidFieldError(
            f"title must be 1 to {MAX_TITLE_CHARS} characters and already trimmed"
        )
    return text


def _after_seconds(value: object, _: object) -> int:
    number = _exact_int(value, _)
    if not 0 < number <= MAX_AFTER_SECONDS:
        raise _InvalidFieldError(f"afterSeconds {number} is not a positive safe integer of seconds")
    return number


def _every_seconds(value: object, _: object) -> int:
    number = _exact_int(value, _)
    if not MIN_EVERY_SECONDS_FLOOR <= number <= MAX_EVERY_SECONDS:
        raise _InvalidFieldError(
            f"everySeconds {number} is not a safe integer of at least {MIN_EVERY_SECONDS_FLOOR} "
            "whose milliseconds are safe"
        )
    return number


# ``HH:mm:ss.SSS`` with ASCII digits; a leap second or 24:00 is refused below.
_TIME: Final = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})\.[0-9]{3}")
# The shape of ``UTC`` or an Area/Location zone name (the same one the host validates with).
_ZONE: Final = re.compile(r"UTC|[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+")


def _time(value: object, _: object) -> str:
    text = _exact_str(value, _)
    match = _TIME.fullmatch(text)
    if match is None or int(match[1]) > 23 or int(match[2]) > 59 or int(match[3]) > 59:
        raise _InvalidFieldError(f"time {brief(text)} is not an HH:mm:ss.SSS time of day")
    return text


def _time_zone(value: object, _: object) -> str:
    text = _exact_str(value, _)
    if _ZONE.fullmatch(text) is None:
        raise _InvalidFieldError(f"timeZone {brief(text)} is not UTC or an Area/Location name")
    return text


def _weekdays(value: object, _: object) -> tuple[int, ...]:
    if type(value) is not list:
        raise _InvalidFieldError(f"expected an array, got {_json_type(value)}")
    days = tuple(value)
    if (
        not days
        or any(type(day) is not int or not 1 <= day <= 7 for day in days)
        or list(days) != sorted(set(days))
    ):
        raise _InvalidFieldError(
            f"weekdays {brief(value)} is not a non-empty ascending array of ISO weekdays 1-7"
        )
    return days


def _expression(value: object, _: object) -> str:
    text = _exact_str(value, _)
    try:
        canonical = canonical_cron(text)
    except CronError:
        canonical = None
    if canonical != text:
        raise _InvalidFieldError(f"expression {brief(text)} is not a canonical cron expression")
    return text


def _renotify_minutes(value: object, _: object) -> int:
    number = _exact_int(value, _)
    if not MIN_RENOTIFY_MINUTES <= number <= MAX_RENOTIFY_MINUTES:
        raise _InvalidFieldError(
            f"renotifyMinutes {number} is not an integer from {MIN_RENOTIFY_MINUTES} to "
            f"{MAX_RENOTIFY_MINUTES}"
        )
    return number


def _instant(name: str) -> Callable[[object, object], str]:
    """The hook of an instant field called ``name`` on the wire."""

    def structure(value: object, _: object) -> str:
        text = _exact_str(value, _)
        try:
            parse_instant(text)
        except ValueError as exc:
            raise _InvalidFieldError(f"{name} {exc}") from None
        return text

    return structure


def _next_instant(value: object, _: object) -> str | None:
    return None if value is None else _instant("nextAt")(value, _)


def _snoozed_from_hook(converter: cattrs.Converter) -> Callable[[object, object], SnoozedFrom]:
    """The hook of ``snoozedFrom``: an object of exactly ``id`` and ``occurrenceAt``."""

    def structure(value: object, _: object) -> SnoozedFrom:
        if not isinstance(value, dict):
            raise _InvalidFieldError(f"expected an object, got {_json_type(value)}")
        snoozed: SnoozedFrom = converter.structure(value, SnoozedFrom)
        return snoozed

    return structure


#: The wire keys of each record class besides the optional ones, and the sentence a record
#: with another key set is refused with (an after record reports its keys one by one).
_KEY_SETS: Final = {
    AtRecord: (
        frozenset({"id", "kind", "prompt", "scheduledAt"}),
        "at schedule must contain exactly id, kind, prompt, and scheduledAt",
    ),
    EveryRecord: (
        frozenset({"id", "kind", "prompt", "everySeconds", "scheduledAt"}),
        "every schedule must contain exactly id, kind, prompt, everySeconds, and scheduledAt",
    ),
    DailyRecord: (
        frozenset({"id", "kind", "prompt", "time", "timeZone", "scheduledAt"}),
        "daily schedule must contain exactly id, kind, prompt, time, timeZone, and scheduledAt",
    ),
    WeeklyRecord: (
        frozenset({"id", "kind", "prompt", "time", "timeZone", "weekdays", "scheduledAt"}),
        (
            "weekly schedule must contain exactly id, kind, prompt, time, timeZone, weekdays, "
            "and scheduledAt"
        ),
    ),
    CronRecord: (
        frozenset({"id", "kind", "prompt", "expression", "timeZone", "scheduledAt"}),
        (
            "cron schedule must contain exactly id, kind, prompt, expression, timeZone, and "
            "scheduledAt"
        ),
    ),
}
#: The optional wire keys of every record.
_OPTIONAL: Final = frozenset({"title", "renotifyMinutes"})
#: The optional wire keys of each record class that has more.
_MORE_OPTIONAL: Final[dict[type[Record], frozenset[str]]] = {
    AtRecord: _OPTIONAL | {"snoozedFrom"},
}
_SELECTOR_KEYS: Final[tuple[tuple[str, type[Record]], ...]] = (
    ("afterSeconds", AfterRecord),
    ("everySeconds", EveryRecord),
    ("expression", CronRecord),
    ("weekdays", WeeklyRecord),
)


def _record_class(value: Mapping[Any, Any]) -> type[Record]:
    """The class a record object is read as (see the module docstring)."""
    for key, cls in _SELECTOR_KEYS:
        if key in value:
            return cls
    kind = value.get("kind")
    if type(kind) is str and kind in _RECORD_CLASSES:
        return _RECORD_CLASSES[kind]
    return AtRecord


def _record_hook(converter: cattrs.Converter) -> Callable[[object, object], Record]:
    """The structure hook of :data:`Record`: the class by :func:`_record_class`, decoded by its
    own generated hook (after an exact key-set check for the classes that have one)."""

    def structure(value: object, _: object) -> Record:
        if not isinstance(value, dict):
            raise _InvalidFieldError(f"schedule record must be an object, got {_json_type(value)}")
        cls = _record_class(value)
        expected = _KEY_SETS.get(cls)
        optional = _MORE_OPTIONAL.get(cls, _OPTIONAL)
        if expected is not None and set(value) - optional != expected[0]:
            keys = sorted(value, key=repr)
            raise _InvalidFieldError(f"{expected[1]}, got keys {brief(keys)}")
        record: Record = converter.structure(value, cls)
        return record

    return structure


def _dispatch_hook(converter: cattrs.Converter) -> Callable[[object, object], Dispatch]:
    """The structure hook of :class:`Dispatch`: a body with ``occurrenceAt`` or ``nextAt`` is a
    calendar dispatch and must hold all four keys."""
    plain = make_dict_structure_fn(
        Dispatch,
        converter,
        id=override(struct_hook=_schedule_id),
        accepted_at=override(rename="acceptedAt", struct_hook=_instant("acceptedAt")),
        occurrence_at=override(omit=True),
        next_at=override(omit=True),
    )

    def structure(value: Any, _: object) -> Dispatch:
        if "occurrenceAt" not in value and "nextAt" not in value:
            return plain(value, Dispatch)
        wire = converter.structure(value, _CalendarDispatch)
        return Dispatch(
            id=wire.id,
            accepted_at=wire.accepted_at,
            occurrence_at=wire.occurrence_at,
            next_at=wire.next_at,
        )

    return structure


def _make_converter() -> cattrs.Converter:
    # forbid_extra_keys is inherited by every class hook generated from this converter.
    converter = cattrs.Converter(forbid_extra_keys=True)
    # Exact primitive hooks first: the class hooks generated below capture what is registered.
    converter.register_structure_hook(str, _exact_str)
    converter.register_structure_hook(int, _exact_int)
    converter.register_structure_hook(bool, _exact_bool)
    by_id = override(struct_hook=_schedule_id)
    fields_by_name = {
        "id": by_id,
        "prompt": override(struct_hook=_prompt),
        "title": override(struct_hook=_title, omit_if_default=True),
        "after_seconds": override(rename="afterSeconds", struct_hook=_after_seconds),
        "every_seconds": override(rename="everySeconds", struct_hook=_every_seconds),
        "time": override(struct_hook=_time),
        "time_zone": override(rename="timeZone", struct_hook=_time_zone),
        "weekdays": override(struct_hook=_weekdays, unstruct_hook=list),
        "expression": override(struct_hook=_expression),
        "scheduled_at": override(rename="scheduledAt", struct_hook=_instant("scheduledAt")),
        "renotify_minutes": override(
            rename="renotifyMinutes", struct_hook=_renotify_minutes, omit_if_default=True
        ),
        "snoozed_from": override(
            rename="snoozedFrom", struct_hook=_snoozed_from_hook(converter), omit_if_default=True
        ),
    }
    snoozed_fields: dict[str, Any] = {
        "id": by_id,
        "occurrence_at": override(rename="occurrenceAt", struct_hook=_instant("occurrenceAt")),
    }
    converter.register_structure_hook(
        SnoozedFrom, make_dict_structure_fn(SnoozedFrom, converter, **snoozed_fields)
    )
    converter.register_unstructure_hook(
        SnoozedFrom, make_dict_unstructure_fn(SnoozedFrom, converter, **snoozed_fields)
    )
    for kind, cls in _RECORD_CLASSES.items():
        fields: dict[str, Any] = {
            name: fields_by_name[name] for name in attrs.fields_dict(cls) if name != "kind"
        }
        record_hook = make_dict_structure_fn(
            cls, converter, kind=override(struct_hook=_kind(kind)), **fields
        )
        converter.register_structure_hook(cls, record_hook)
        converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **fields))
    converter.register_structure_hook_func(lambda cls: cls == Record, _record_hook(converter))
    schedule = override(rename="schedule")
    create_hook = make_dict_structure_fn(Create, converter, record=schedule)
    converter.register_structure_hook(Create, create_hook)
    update_hook = make_dict_structure_fn(Update, converter, id=by_id, record=schedule)
    converter.register_structure_hook(Update, update_hook)
    delete_hook = make_dict_structure_fn(Delete, converter, id=by_id)
    converter.register_structure_hook(Delete, delete_hook)
    ack_hook = make_dict_structure_fn(
        Ack,
        converter,
        id=by_id,
        occurrence_at=override(rename="occurrenceAt", struct_hook=_instant("occurrenceAt")),
    )
    converter.register_structure_hook(Ack, ack_hook)
    calendar_hook = make_dict_structure_fn(
        _CalendarDispatch,
        converter,
        id=by_id,
        accepted_at=override(rename="acceptedAt", struct_hook=_instant("acceptedAt")),
        occurrence_at=override(rename="occurrenceAt", struct_hook=_instant("occurrenceAt")),
        next_at=override(rename="nextAt", struct_hook=_next_instant),
    )
    converter.register_structure_hook(_CalendarDispatch, calendar_hook)
    converter.register_structure_hook(Dispatch, _dispatch_hook(converter))
    return converter


_CONVERTER: Final = _make_converter()
_OPERATIONS: Final[dict[str, type[ScheduleChange]]] = {
    "create": Create,
    "update": Update,
    "delete": Delete,
    "dispatch": Dispatch,
    "ack": Ack,
}
_NAMES: Final = {cls: name for name, cls in _OPERATIONS.items()}
# Attribute name -> wire key, for error paths (cattrs notes carry attribute names).
_WIRE_KEYS: Final = {
    "record": "schedule",
    "after_seconds": "afterSeconds",
    "every_seconds": "everySeconds",
    "time_zone": "timeZone",
    "scheduled_at": "scheduledAt",
    "accepted_at": "acceptedAt",
    "occurrence_at": "occurrenceAt",
    "next_at": "nextAt",
    "renotify_minutes": "renotifyMinutes",
    "snoozed_from": "snoozedFrom",
}


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ForbiddenExtraKeysError):
        # key=repr: a non-JSON mapping may mix key types, which plain sorting cannot order.
        return f"extra keys {sorted(exc.extra_fields, key=repr)}"
    if isinstance(exc, KeyError):
        return "missing key"
    return str(exc)  # an _InvalidFieldError from the hooks above (they raise nothing else)


def _flatten(exc: BaseException, path: str) -> list[str]:
    if not isinstance(exc, ClassValidationError):
        return [f"{_describe(exc)} @ {path}"]
    with_notes, without_notes = exc.group_exceptions()
    problems = [f"{_describe(inner)} @ {path}" for inner in without_notes]
    for inner, note in with_notes:
        problems.extend(_flatten(inner, f"{path}.{_WIRE_KEYS.get(note.name, note.name)}"))
    return problems


def _fail(seq: int | None, problem: str) -> NoReturn:
    where = "schedule/change" if seq is None else f"schedule/change at seq {seq}"
    raise ScheduleLogError(f"{where}: {problem}")


def decode_change(data: object, *, seq: int | None = None) -> ScheduleChange:
    """Decode one ``schedule/change`` payload, or raise :class:`ScheduleLogError`.

    ``seq``, when given, is named in the error message.
    """
    if not isinstance(data, dict):
        _fail(seq, f"expected an object, got {_json_type(data)} @ $")
    if "version" not in data:
        _fail(seq, "missing key @ $.version")
    version = data["version"]
    if type(version) is not int or version != 1:
        _fail(seq, f"unsupported version {brief(version)}, expected the integer 1 @ $.version")
    if "operation" not in data:
        _fail(seq, "missing key @ $.operation")
    operation = data["operation"]
    cls = _OPERATIONS.get(operation) if type(operation) is str else None
    if cls is None:
        _fail(seq, f"unknown operation {brief(operation)} @ $.operation")
    body = {key: value for key, value in data.items() if key not in {"version", "operation"}}
    try:
        return _CONVERTER.structure(body, cls)
    except ClassValidationError as exc:
        _fail(seq, "; ".join(_flatten(exc, "$")))


def encode_record(record: Record) -> dict[str, JSONValue]:
    """The wire object of ``record`` (``title``, ``renotifyMinutes`` and ``snoozedFrom`` only
    when it has them)."""
    encoded: dict[str, JSONValue] = _CONVERTER.unstructure(record)
    return encoded


def encode_change(change: ScheduleChange) -> dict[str, JSONValue]:
    """Encode ``change`` as its wire JSON object (key order: version, operation, body; a
    dispatch has ``acceptedAt`` only when it has a decision time, and ``occurrenceAt`` and
    ``nextAt`` only when it is a calendar record's)."""
    head: dict[str, JSONValue] = {"version": 1, "operation": _NAMES[type(change)]}
    if isinstance(change, Create):
        return {**head, "schedule": encode_record(change.record)}
    if isinstance(change, Update):
        return {**head, "id": change.id, "schedule": encode_record(change.record)}
    body: dict[str, JSONValue] = {"id": change.id}
    if isinstance(change, Ack):
        return {**head, **body, "occurrenceAt": change.occurrence_at}
    if isinstance(change, Dispatch) and change.accepted_at is not None:
        body["acceptedAt"] = change.accepted_at
        if change.occurrence_at is not None:
            body["occurrenceAt"] = change.occurrence_at
            body["nextAt"] = change.next_at
    return {**head, **body}
