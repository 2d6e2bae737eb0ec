"""The ``at`` selector: an absolute target, as a strict offset string or a local calendar object.

Pure functions (no clock, no I/O) that turn the model's ``at`` argument into the UTC epoch
milliseconds the record stores, with the exact codes and messages of the upstream contract
(the codes are listed in docs/design.md section 9):

* ``"2026-08-06T09:00:00+08:00"``: ``YYYY-MM-DDTHH:mm:ss``, an optional ``.f``/``.ff``/``.fff``
  fraction (right-padded to milliseconds), then ``Z`` or ``+HH:MM``/``-HH:MM`` (``-00:00`` is
  refused: it means "offset unknown" in RFC 3339).
* ``{"date": "2026-08-07", "time": "09:30:00", "time_zone": "Asia/Shanghai"}``: local wall
  time in ``UTC`` or an IANA Area/Location zone from ``tzdata``. A wall time the zone skips (a
  DST gap) is refused; one it repeats (a DST overlap) is the earlier instant.

Only the UTC instant is kept: no offset, local fields or zone, so replay never consults a zone.
:func:`future_instant` is the range and not-future check every selector's target goes through.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Final

from dsh_hookspecs import InvalidTimeZoneError, load_time_zone

from ._instants import (
    MAX_INSTANT_MS,
    MAX_SAFE_INTEGER,
    MIN_INSTANT_MS,
    format_instant,
    parse_instant,
)

__all__ = ["ScheduleInputError", "at_instant", "at_target", "future_instant"]

SHAPE: Final = (
    "at must use YYYY-MM-DDTHH:mm:ss with optional 1-3 digit fractional seconds and an "
    "explicit Z or numeric offset."
)
NOT_REAL: Final = "The at value must be a real ISO calendar date and time."
BAD_OFFSET: Final = "The at numeric offset is invalid."
NOT_A_SELECTOR: Final = "at must be an explicit-offset string or local calendar object."
LOCAL_KEYS: Final = "Local at must contain exactly date, time, and time_zone."
LOCAL_NOT_STRINGS: Final = "Local at date and time must be strings."
LOCAL_SHAPE: Final = (
    "Local at requires date YYYY-MM-DD and time HH:mm:ss with optional one-to-three digit "
    "milliseconds."
)
LOCAL_NOT_REAL: Final = "The local at value must be a real ISO calendar date and time."
IN_GAP: Final = "The local at time does not exist in the selected time zone."
OUT_OF_RANGE: Final = (
    "The scheduled time must be representable as a four-digit-year RFC 3339 UTC instant."
)
NOT_FUTURE: Final = "The scheduled time must be strictly in the future."

# Fixed-width ASCII digits (``\d`` would match other scripts' digits); ``T`` and ``Z`` upper
# case only. Used with ``fullmatch``.
_DATE: Final = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
_TIME: Final = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,3}))?"
_OFFSET_FORM: Final = re.compile(rf"{_DATE}T{_TIME}(?:Z|([+-])([0-9]{{2}}):([0-9]{{2}}))")
_LOCAL_DATE: Final = re.compile(_DATE)
_LOCAL_TIME: Final = re.compile(_TIME)
_LOCAL_KEY_SET: Final = frozenset({"date", "time", "time_zone"})
_MS: Final = dt.timedelta(milliseconds=1)
_FIRST_UTC: Final = dt.datetime.min.replace(tzinfo=dt.UTC)


class ScheduleInputError(Exception):
    """A selector the tool refuses: ``code`` and ``message`` are the tool's answer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def future_instant(target_ms: int, now_ms: int) -> int:
    """``target_ms`` if it is a representable instant strictly after ``now_ms``.

    Range first (``time_out_of_range``: a clock or target that is not a safe integer, or a
    target outside years 0001-9999), then ``not_future`` (the target is ``now_ms`` or earlier;
    1 ms ahead is accepted).
    """
    if not (_safe(now_ms) and _safe(target_ms) and MIN_INSTANT_MS <= target_ms <= MAX_INSTANT_MS):
        raise ScheduleInputError("time_out_of_range", OUT_OF_RANGE)
    if target_ms <= now_ms:
        raise ScheduleInputError("not_future", NOT_FUTURE)
    return target_ms


def at_instant(value: object, now_ms: int) -> int:
    """The UTC epoch-ms target of an ``at`` selector (string or ``{date, time, time_zone}``),
    strictly after ``now_ms``; raises :class:`ScheduleInputError` with the contract's code and
    message, the checks in the contract's order (the form's own checks, then range, then
    not-future)."""
    return future_instant(at_target(value), now_ms)


def at_target(value: object) -> int:
    """The epoch-ms instant an ``at`` selector names, with the form's own checks only (no range
    or not-future check: an edit that repeats a record's own ``at`` changes nothing)."""
    if isinstance(value, str):
        return _offset_instant(value)
    if isinstance(value, Mapping):
        return _local_instant(value)
    raise ScheduleInputError("invalid_rule", NOT_A_SELECTOR)


def _safe(number: int) -> bool:
    return type(number) is int and -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER


def _wall_ms(fields: tuple[str, ...], fraction: str | None, not_real: str) -> int:
    """``YYYY MM DD hh mm ss`` and a 1-3 digit fraction read as UTC epoch ms (the spec's L).

    Year 0000 and out-of-range clock fields are ``not_real``; an impossible calendar date
    (Feb 30, month 13) is the shared :data:`NOT_REAL`, as upstream words both forms."""
    year, month, day, hour, minute, second = fields
    if year == "0000" or int(hour) > 23 or int(minute) > 59 or int(second) > 59:
        raise ScheduleInputError("invalid_rule", not_real)
    millis = (fraction or "0").ljust(3, "0")
    try:
        return parse_instant(f"{year}-{month}-{day}T{hour}:{minute}:{second}.{millis}Z")
    except ValueError:
        raise ScheduleInputError("invalid_rule", NOT_REAL) from None


def _offset_instant(text: str) -> int:
    match = _OFFSET_FORM.fullmatch(text)
    if match is None:
        raise ScheduleInputError("invalid_rule", SHAPE)
    *fields, fraction, sign, offset_hour, offset_minute = match.groups()
    wall = _wall_ms(tuple(fields), fraction, NOT_REAL)
    if sign is None:  # Z
        return wall
    if int(offset_hour) > 23 or int(offset_minute) > 59 or text.endswith("-00:00"):
        raise ScheduleInputError("invalid_rule", BAD_OFFSET)
    offset_ms = (int(offset_hour) * 60 + int(offset_minute)) * 60_000
    return wall - offset_ms if sign == "+" else wall + offset_ms


def _local_instant(value: Mapping[object, object]) -> int:
    if set(value) != _LOCAL_KEY_SET:
        raise ScheduleInputError("invalid_rule", LOCAL_KEYS)
    date, time, zone_name = value["date"], value["time"], value["time_zone"]
    if not (isinstance(date, str) and isinstance(time, str)):
        raise ScheduleInputError("invalid_rule", LOCAL_NOT_STRINGS)
    if not isinstance(zone_name, str):
        raise ScheduleInputError("invalid_time_zone", "time_zone must be a string.")
    date_match, time_match = _LOCAL_DATE.fullmatch(date), _LOCAL_TIME.fullmatch(time)
    if date_match is None or time_match is None:
        raise ScheduleInputError("invalid_rule", LOCAL_SHAPE)
    *clock, fraction = time_match.groups()
    wall = _wall_ms((*date_match.groups(), *clock), fraction, LOCAL_NOT_REAL)
    try:
        zone = load_time_zone(zone_name)
    except InvalidTimeZoneError as error:
        raise ScheduleInputError(error.code, error.message) from None
    return _resolve(wall, zone)


def _resolve(wall: int, zone: dt.tzinfo) -> int:
    """The earliest instant whose local time in ``zone`` is exactly ``wall`` (local fields read
    as UTC ms): a DST overlap gives two (the earlier wins), a gap none (``invalid_rule``)."""
    naive = format_instant(wall)  # the input's fields, to compare round trips against
    local = dt.datetime.fromisoformat(naive[:-1])
    candidates: list[int] = []
    out_of_range = False
    for fold in (0, 1):
        offset = local.replace(fold=fold, tzinfo=zone).utcoffset()
        assert offset is not None  # a ZoneInfo always has one
        candidate = wall - offset // _MS
        if not MIN_INSTANT_MS <= candidate <= MAX_INSTANT_MS:
            out_of_range = True
            continue
        utc = _FIRST_UTC + (candidate - MIN_INSTANT_MS) * _MS
        try:
            back = utc.astimezone(zone).replace(tzinfo=None)
        except OverflowError:  # its local time is outside years 1-9999, so not ``wall``
            continue
        if back == local:
            candidates.append(candidate)
    if candidates:
        return min(candidates)
    if out_of_range:
        raise ScheduleInputError("time_out_of_range", OUT_OF_RANGE)
    raise ScheduleInputError("invalid_rule", IN_GAP)
