"""Canonical UTC instants: ``YYYY-MM-DDTHH:MM:SS.sssZ`` (exactly three fraction digits, years
0001-9999), exchanged as integer epoch milliseconds; the arithmetic is exact over the whole range.
"""

import datetime as dt
import functools
import re
from typing import Final

__all__ = [
    "MAX_INSTANT_MS",
    "MAX_SAFE_INTEGER",
    "MIN_INSTANT_MS",
    "brief",
    "format_instant",
    "parse_instant",
]

#: JavaScript's ``Number.MAX_SAFE_INTEGER``: clocks, targets and intervals (in milliseconds)
#: beyond it are not representable.
MAX_SAFE_INTEGER: Final = 2**53 - 1


def brief(value: object) -> str:
    """``repr`` of an offending value, cut short so junk cannot flood a log line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


_MS_PER_DAY: Final = 86_400_000
_EPOCH_ORDINAL: Final = dt.date(1970, 1, 1).toordinal()

#: Epoch milliseconds of ``0001-01-01T00:00:00.000Z``.
MIN_INSTANT_MS: Final = (dt.date.min.toordinal() - _EPOCH_ORDINAL) * _MS_PER_DAY
#: Epoch milliseconds of ``9999-12-31T23:59:59.999Z``.
MAX_INSTANT_MS: Final = (dt.date.max.toordinal() - _EPOCH_ORDINAL + 1) * _MS_PER_DAY - 1

# ASCII digits only: ``\d`` would also match other scripts' digits.
_INSTANT: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z"
)


def format_instant(ms: int) -> str:
    """Render epoch milliseconds as ``YYYY-MM-DDTHH:MM:SS.sssZ``.

    Raises :class:`ValueError` for a non-int (``bool`` included) or a value outside
    [:data:`MIN_INSTANT_MS`, :data:`MAX_INSTANT_MS`].
    """
    if type(ms) is not int:
        raise ValueError(f"instant must be an int of epoch milliseconds, got {type(ms).__name__}")
    if not MIN_INSTANT_MS <= ms <= MAX_INSTANT_MS:
        raise ValueError(f"instant {ms} ms is outside years 0001-9999")
    days, in_day = divmod(ms, _MS_PER_DAY)
    date = dt.date.fromordinal(_EPOCH_ORDINAL + days)
    seconds, millis = divmod(in_day, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return (
        f"{date.year:04d}-{date.month:02d}-{date.day:02d}"
        f"T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"
    )


@functools.lru_cache(maxsize=16_384)
def parse_instant(text: str) -> int:
    """Parse the canonical form :func:`format_instant` produces, and nothing else.

    Raises :class:`ValueError` for any other form (no millis, ``z``, offsets, ...), an impossible
    calendar date (Feb 30, year 0000) or time of day (hour 24, second 60).
    """
    match = _INSTANT.fullmatch(text)
    if match is None:
        raise ValueError(f"{brief(text)} is not a YYYY-MM-DDTHH:MM:SS.sssZ instant")
    year, month, day, hour, minute, second, millis = (int(part) for part in match.groups())
    try:
        date = dt.date(year, month, day)
    except ValueError:
        raise ValueError(f"{brief(text)} is not a real calendar date") from None
    ms = (
        (date.toordinal() - _EPOCH_ORDINAL) * _MS_PER_DAY
        + ((hour * 60 + minute) * 60 + second) * 1000
        + millis
    )
    # Hour 24, minute 60 or second 60 land on another instant and fail to round-trip (the last
    # day's 24:00 would even leave the range, which format_instant reports the same way).
    if ms > MAX_INSTANT_MS or format_instant(ms) != text:
        raise ValueError(f"{brief(text)} is not a real time of day")
    return ms
