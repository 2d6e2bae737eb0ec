"""Wall-clock rules: the next and the latest due occurrence of a ``daily``, ``weekly`` or
``cron`` reminder in its own time zone.

The daylight-saving rules, one place for all three kinds:

* every candidate is a local wall time on a local date; it is read in the zone with ``fold=0``
  (the earlier of two instants when the wall time happens twice) and kept only when that instant
  reads back as the same wall time, so a wall time that does not exist (a spring-forward gap, or a
  date the zone skipped) yields nothing for that date: **skipped, never shifted**;
* a wall time that happens twice yields its earlier instant only, so it **fires once**, and a rule
  decided between the two instants first fires on the next date;
* ``every_seconds`` is elapsed time and is not handled here.

Read with ``fold=0``, later wall times never map to earlier instants, so walking wall times
forward (backward) walks occurrences forward (backward).

``daily`` and ``weekly`` walk dates with :mod:`zoneinfo` (they carry millisecond times a cron
expression cannot). ``cron`` walks the naive wall times :mod:`cronsim` produces for the canonical
expression (:mod:`._cron`), which applies the Vixie/Debian rule for the two day fields. Each search
is bounded (400 years: the Gregorian calendar's weekday and leap-year cycle); a rule with no
representable occurrence in that window, or none before year 10000, answers ``None``.
Instants are integer epoch milliseconds, as everywhere in the plugin.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Final
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

__all__ = ["HORIZON_YEARS", "Wall", "cron_wall", "latest_due", "next_after", "weekly_wall"]

#: How far a search looks, in years, before it answers that no occurrence is representable.
HORIZON_YEARS: Final = 400
_UTC: Final = dt.UTC
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=_UTC)
_MS: Final = dt.timedelta(milliseconds=1)
#: More than any clock has ever been set back at once (a repeated hour is at most 2 h).
_REPEAT_MARGIN: Final = dt.timedelta(hours=3)

#: A rule's wall times from a naive local start, forward (``False``) or backward (``True``):
#: every candidate strictly after (before) ``start``, in order. It may stop early.
Wall = Callable[[dt.datetime, bool], Iterator[dt.datetime]]


def _instant(ms: int) -> dt.datetime:
    return _EPOCH + ms * _MS


def _ms(instant: dt.datetime) -> int:
    return (instant - _EPOCH) // _MS


def _local(ms: int, zone: ZoneInfo) -> dt.datetime | None:
    """The naive wall time of ``ms`` in ``zone``, or ``None`` past year 1 or 9999 there."""
    try:
        return _instant(ms).astimezone(zone).replace(tzinfo=None, fold=0)
    except OverflowError:
        return None


def _real(wall: dt.datetime, zone: ZoneInfo) -> int | None:
    """The epoch ms of ``wall`` in ``zone`` (earlier instant of a repeated one), or ``None``
    when that wall time does not exist there (or its instant is past year 1 or 9999)."""
    local = wall.replace(tzinfo=zone, fold=0)
    try:
        back = local.astimezone(_UTC).astimezone(zone)
    except OverflowError:
        return None
    return _ms(local) if back.replace(tzinfo=None) == wall else None


def weekly_wall(time_ms: int, weekdays: frozenset[int] | None) -> Wall:
    """The wall times of ``daily`` (``weekdays`` ``None``) or ``weekly`` (ISO 1-7) at
    ``time_ms`` milliseconds after local midnight."""
    offset = dt.timedelta(milliseconds=time_ms)

    def walk(start: dt.datetime, backward: bool) -> Iterator[dt.datetime]:
        step = dt.timedelta(days=-1 if backward else 1)
        day = dt.datetime.combine(start.date(), dt.time())
        for _ in range(HORIZON_YEARS * 366 + 2):
            wall = day + offset
            if (wall < start if backward else wall > start) and (
                weekdays is None or wall.isoweekday() in weekdays
            ):
                yield wall
            try:
                day += step
            except OverflowError:
                return

    return walk


def cron_wall(expression: str) -> Wall:
    """The wall times of a canonical cron ``expression`` (:mod:`cronsim` steps off ``start``
    before it searches, so each one is strictly after, or before, it)."""

    def walk(start: dt.datetime, backward: bool) -> Iterator[dt.datetime]:
        try:
            found = CronSim(expression, start, reverse=backward)
        except CronSimError:  # a day that never exists (``0 0 30 2 *``)
            return
        limit = start.year + (-HORIZON_YEARS if backward else HORIZON_YEARS)
        while True:
            try:
                wall = next(found)
            except (StopIteration, OverflowError, ValueError):
                return
            if (wall.year < limit) if backward else (wall.year > limit):
                return  # pragma: no cover - cronsim gives up after 50 years of no match first
            yield wall

    return walk


def next_after(wall: Wall, zone: ZoneInfo, floor_ms: int) -> int | None:
    """The first occurrence strictly after ``floor_ms``, or ``None`` when none is
    representable within the horizon."""
    start = _local(floor_ms, zone)
    if start is None:
        return None
    for candidate in wall(start, False):
        real = _real(candidate, zone)
        if real is not None and real > floor_ms:
            return real
    return None


def latest_due(wall: Wall, zone: ZoneInfo, committed_ms: int, ceiling_ms: int) -> int:
    """The occurrence a decision at ``ceiling_ms`` delivers: the latest at or before it, and
    never earlier than the committed target ``committed_ms`` (which stays due even when newer
    zone data would put the rule elsewhere)."""
    start = _local(ceiling_ms, zone)
    if start is None:
        return committed_ms
    try:
        # The ceiling may read as the second pass of a repeated hour, so wall times after that
        # reading can still be instants before it: look from past them.
        start += _REPEAT_MARGIN
    except OverflowError:
        start = dt.datetime.max  # noqa: DTZ901 - wall times are naive here
    for candidate in wall(start, True):
        real = _real(candidate, zone)
        if real is not None and real <= ceiling_ms:
            return max(real, committed_ms)
    return committed_ms
