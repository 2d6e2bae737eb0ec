"""The calendar selectors (``daily``, ``weekly``, ``cron``): their arguments, checked with the
contract's codes and messages, and what their records deliver.

:func:`calendar_rule` turns a tool argument into a :class:`CalendarRule` (a normalised time
``HH:mm:ss.SSS``, ascending weekdays, the canonical cron spelling, the zone name as given);
:func:`first_target` is the rule's first occurrence strictly after the creation sample (the
record's ``scheduledAt``); :func:`calendar_occurrence` is what a decision delivers from an active
record: the latest due occurrence (never a backlog, never before the committed target) and the
next target, which the dispatch freezes in the log. The daylight-saving rules are
:mod:`._calendar`'s.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

import attrs

from dsh_hookspecs import InvalidTimeZoneError, load_time_zone

from ._at import ScheduleInputError
from ._calendar import Wall, cron_wall, latest_due, next_after, weekly_wall
from ._codec import CalendarRecord, CronRecord, DailyRecord, WeeklyRecord
from ._cron import CronError, canonical_cron
from ._every import Occurrence
from ._instants import MAX_INSTANT_MS, MIN_INSTANT_MS, parse_instant

__all__ = [
    "CalendarKind",
    "CalendarRule",
    "calendar_occurrence",
    "calendar_record",
    "calendar_rule",
    "first_target",
    "no_future_occurrence",
    "rule_of",
    "same_calendar_rule",
    "same_zone",
]

CalendarKind: TypeAlias = Literal["daily", "weekly", "cron"]

_TIME_RULE: Final = "with time HH:mm:ss and optional 1-3 fractional digits."
_KEYS: Final[dict[str, tuple[frozenset[str], str]]] = {
    "daily": (
        frozenset({"time", "time_zone"}),
        f"daily must contain exactly time and time_zone, {_TIME_RULE}",
    ),
    "weekly": (
        frozenset({"time", "time_zone", "weekdays"}),
        f"weekly must contain exactly time, time_zone, and weekdays, {_TIME_RULE}",
    ),
    "cron": (
        frozenset({"expression", "time_zone"}),
        "cron must contain exactly expression and time_zone, with a five-field cron expression.",
    ),
}
_TIME_SHAPE: Final = (
    "{}.time must use HH:mm:ss with optional 1-3 fractional digits, without leap seconds or 24:00."
)
WEEKDAYS_SHAPE: Final = "weekly.weekdays must be a non-empty array of ISO weekday numbers."
WEEKDAY_RANGE: Final = (
    "Each weekly.weekdays entry must be an integer from 1 (Monday) through 7 (Sunday)."
)
WEEKDAY_REPEAT: Final = "weekly.weekdays must not repeat weekday {}."
NO_FUTURE: Final = "No future {} occurrence is representable as a four-digit-year UTC instant."
# ASCII digits only; used with ``fullmatch``.
_TIME: Final = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,3}))?")
_ZONES: Final = "tzdata.zoneinfo"


@attrs.frozen(kw_only=True)
class CalendarRule:
    """A checked calendar selector: ``time`` is ``HH:mm:ss.SSS`` (daily, weekly),
    ``weekdays`` ascending ISO weekdays (weekly), ``expression`` canonical (cron)."""

    kind: CalendarKind
    time_zone: str
    time: str | None = None
    weekdays: tuple[int, ...] | None = None
    expression: str | None = None


def _refuse(message: str) -> ScheduleInputError:
    return ScheduleInputError("invalid_rule", message)


def _time(kind: str, value: object) -> str:
    match = _TIME.fullmatch(value) if isinstance(value, str) else None
    if match is None or int(match[1]) > 23 or int(match[2]) > 59 or int(match[3]) > 59:
        raise _refuse(_TIME_SHAPE.format(kind))
    fraction = (match[4] or "").ljust(3, "0")
    return f"{match[1]}:{match[2]}:{match[3]}.{fraction}"


def _weekdays(value: object) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise _refuse(WEEKDAYS_SHAPE)
    seen: set[int] = set()
    for day in value:
        if type(day) is not int or not 1 <= day <= 7:
            raise _refuse(WEEKDAY_RANGE)
        if day in seen:
            raise _refuse(WEEKDAY_REPEAT.format(day))
        seen.add(day)
    return tuple(sorted(seen))


def _zone(value: object) -> str:
    try:
        load_time_zone(value)  # type: ignore[arg-type]  # a non-string is refused there
    except InvalidTimeZoneError as error:
        raise ScheduleInputError(error.code, error.message) from None
    assert isinstance(value, str)
    return value


def calendar_rule(kind: CalendarKind, value: object) -> CalendarRule:
    """The rule of a ``daily``, ``weekly`` or ``cron`` argument, or
    :class:`~._at.ScheduleInputError` with the contract's code and message (checked in this
    order: the key set, the time or expression, the weekdays, the zone)."""
    keys, shape = _KEYS[kind]
    if not isinstance(value, Mapping) or set(value) != keys:
        raise _refuse(shape)
    if kind == "cron":
        try:
            expression = canonical_cron(value["expression"])
        except CronError as error:
            raise _refuse(str(error)) from None
        return CalendarRule(kind=kind, time_zone=_zone(value["time_zone"]), expression=expression)
    time = _time(kind, value["time"])
    weekdays = _weekdays(value["weekdays"]) if kind == "weekly" else None
    return CalendarRule(
        kind=kind, time_zone=_zone(value["time_zone"]), time=time, weekdays=weekdays
    )


def rule_of(record: CalendarRecord) -> CalendarRule:
    """The rule ``record`` follows."""
    if isinstance(record, CronRecord):
        return CalendarRule(kind="cron", time_zone=record.time_zone, expression=record.expression)
    weekdays = record.weekdays if isinstance(record, WeeklyRecord) else None
    return CalendarRule(
        kind=record.kind, time_zone=record.time_zone, time=record.time, weekdays=weekdays
    )


def _wall(rule: CalendarRule) -> Wall:
    if rule.expression is not None:
        return cron_wall(rule.expression)
    assert rule.time is not None
    time_ms = parse_instant(f"1970-01-01T{rule.time}Z")
    return weekly_wall(time_ms, None if rule.weekdays is None else frozenset(rule.weekdays))


def no_future_occurrence(kind: str) -> ScheduleInputError:
    """The refusal of a rule without a representable occurrence after the creation sample."""
    return ScheduleInputError("time_out_of_range", NO_FUTURE.format(kind))


def first_target(rule: CalendarRule, now_ms: int) -> int:
    """The rule's first occurrence strictly after ``now_ms`` (the record's first
    ``scheduledAt``), or ``time_out_of_range`` when none is representable."""
    if not MIN_INSTANT_MS <= now_ms <= MAX_INSTANT_MS:
        raise no_future_occurrence(rule.kind)
    target = next_after(_wall(rule), load_time_zone(rule.time_zone), now_ms)
    if target is None:
        raise no_future_occurrence(rule.kind)
    return target


def calendar_occurrence(record: CalendarRecord, accepted_ms: int) -> Occurrence:
    """What a decision at ``accepted_ms`` (at or after the record's ``scheduledAt``) delivers:
    the latest occurrence at or before it, never before the committed target, and the first
    occurrence after it (``None``: none is representable, so the record ends).

    Raises :class:`~dsh_hookspecs.InvalidTimeZoneError` when the record's zone is not in the
    installed ``tzdata`` (it was when the record was made).
    """
    rule = rule_of(record)
    zone = load_time_zone(rule.time_zone)
    wall = _wall(rule)
    committed = parse_instant(record.scheduled_at)
    occurrence = latest_due(wall, zone, committed, accepted_ms)
    return Occurrence(occurrence, next_after(wall, zone, accepted_ms))


def _zone_data(name: str) -> bytes:
    node = importlib.resources.files(_ZONES)
    for segment in name.split("/"):
        node = node.joinpath(segment)
    return node.read_bytes()


@functools.lru_cache(maxsize=256)
def same_zone(first: str, second: str) -> bool:
    """Whether two valid zone names compute alike: the same name, or an alias whose ``tzdata``
    file holds the same zone data as its target (``US/Eastern`` and ``America/New_York``)."""
    if first == second:
        return True
    for name in (first, second):
        load_time_zone(name)  # refuses names that are not zones before any file is read
    return _zone_data(first) == _zone_data(second)


def calendar_record(
    schedule_id: str, prompt: str, rule: CalendarRule, scheduled_at: str, title: str | None
) -> CalendarRecord:
    """The record of ``rule`` with its committed target ``scheduled_at``."""
    if rule.kind == "cron":
        assert rule.expression is not None
        return CronRecord(
            id=schedule_id,
            kind="cron",
            prompt=prompt,
            expression=rule.expression,
            time_zone=rule.time_zone,
            scheduled_at=scheduled_at,
            title=title,
        )
    assert rule.time is not None
    if rule.kind == "weekly":
        assert rule.weekdays is not None
        return WeeklyRecord(
            id=schedule_id,
            kind="weekly",
            prompt=prompt,
            time=rule.time,
            time_zone=rule.time_zone,
            weekdays=rule.weekdays,
            scheduled_at=scheduled_at,
            title=title,
        )
    return DailyRecord(
        id=schedule_id,
        kind="daily",
        prompt=prompt,
        time=rule.time,
        time_zone=rule.time_zone,
        scheduled_at=scheduled_at,
        title=title,
    )


def same_calendar_rule(record: CalendarRecord, rule: CalendarRule) -> bool:
    """Whether ``rule`` is the one ``record`` follows: the same kind, time and weekdays, or
    the same canonical expression, in the same zone (an alias computes like its target)."""
    mine = rule_of(record)
    return attrs.evolve(mine, time_zone=rule.time_zone) == rule and same_zone(
        mine.time_zone, rule.time_zone
    )
