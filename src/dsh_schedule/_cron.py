"""The five-field cron dialect of the ``cron`` selector: strict validation and one spelling.

The grammar is Vixie's five fields (minute 0-59, hour 0-23, day-of-month 1-31, month 1-12,
day-of-week 0-7 with 0 and 7 both Sunday); each field is a comma list of ``*``, ``n``, ``a-b``,
``*/n`` and ``a-b/n``. Names (``MON``, ``JAN``), macros (``@daily``), ``L``, ``W``, ``#``, ``?``,
a lone ``n/m`` and a sixth field are refused with a message that says which element and why.

Every accepted expression has one stored spelling (:func:`canonical_cron`): each field is
expanded to its set of values and written again, so two expressions that select the same
minutes, hours, months and days are the same string. Only the two day fields remember how they
were written, because they combine by it (the Vixie/Debian rule: when either day field begins
with ``*`` a date must match both, otherwise either): a day field whose text began with ``*``
keeps a ``*``-led spelling (the densest ``*`` or ``*/n`` that fits, then what is left) and one
that did not never gains one. The minute, hour and month fields are ``*`` when they hold every
value, ``*/n`` when they are exactly one evenly stepped run from their lowest value, and plain
values and ranges otherwise (``0-45/15`` is ``*/15``; ``0-59`` is ``*``).

:mod:`cronsim` evaluates the canonical spelling with that same day rule (:mod:`._calendar`).
"""

from __future__ import annotations

import itertools
import re
from typing import Final, NamedTuple

__all__ = ["CronError", "canonical_cron"]


class CronError(ValueError):
    """An expression the ``cron`` selector refuses; the message is the tool's answer."""


class _Field(NamedTuple):
    name: str
    low: int
    high: int
    #: A day field: whether its text began with ``*`` changes what the expression selects.
    day: bool


_FIELDS: Final = (
    _Field("minute", 0, 59, day=False),
    _Field("hour", 0, 23, day=False),
    _Field("day-of-month", 1, 31, day=True),
    _Field("month", 1, 12, day=False),
    _Field("day-of-week", 0, 7, day=True),
)
_DAY_OF_WEEK: Final = 4
#: Sunday is both 0 and 7 in a day-of-week field; the spelling uses 0.
_SUNDAYS: Final = frozenset({0, 7})
# ASCII digits only; used with ``fullmatch``.
_ELEMENT: Final = re.compile(r"(?:(\*)|([0-9]+)(?:-([0-9]+))?)(?:/([0-9]+))?")
#: The longest element or value a refusal quotes before cutting it short.
_QUOTED_CHARS: Final = 24


def _quoted(text: str) -> str:
    return text if len(text) <= _QUOTED_CHARS else f"{text[: _QUOTED_CHARS - 3]}..."


def _number(digits: str) -> int:
    """``digits`` as an integer; a run too long for any field reads as one past every bound
    (and is never converted: a huge digit string is refused, not computed with)."""
    return int(digits) if len(digits) <= _QUOTED_CHARS else 10**_QUOTED_CHARS


def _values(field: _Field, element: str) -> set[int]:
    match = _ELEMENT.fullmatch(element)
    if match is None or (match[2] is not None and match[3] is None and match[4] is not None):
        raise CronError(
            f'cron.expression {field.name} field element "{_quoted(element)}" must be *, a value, '
            "a-b, */n, a-b/n, or a comma-separated list of those."
        )
    step = 1 if match[4] is None else _number(match[4])
    if step < 1:
        raise CronError(f"cron.expression {field.name} field step must be a positive integer.")
    if match[1] is not None:
        low, high = field.low, field.high
    else:
        texts = (match[2],) if match[3] is None else (match[2], match[3])
        for text in texts:
            if not field.low <= _number(text) <= field.high:
                raise CronError(
                    f"cron.expression {field.name} field value {_quoted(text)} is outside "
                    f"{field.low}-{field.high}."
                )
        low, high = _number(texts[0]), _number(texts[-1])
        if low > high:
            raise CronError(f"cron.expression {field.name} field range {low}-{high} is inverted.")
    return set(range(low, high + 1, step))


def _runs(values: list[int]) -> str:
    """``values`` (sorted, unique) as one ``a-b/n`` when they are evenly spaced (three or more,
    step above 1), else as comma-separated runs (``a`` or ``a-b`` for consecutive values)."""
    if len(values) >= 3:
        step = values[1] - values[0]
        if step > 1 and all(b - a == step for a, b in itertools.pairwise(values)):
            return f"{values[0]}-{values[-1]}/{step}"
    parts: list[str] = []
    start = previous = values[0]
    for value in [*values[1:], None]:
        if value is not None and value == previous + 1:
            previous = value
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if value is not None:
            start = previous = value
    return ",".join(parts)


def _star(step: int) -> str:
    return "*" if step == 1 else f"*/{step}"


def _spelled(field: _Field, values: set[int], star: bool) -> str:
    high = 6 if field.name == "day-of-week" else field.high
    ordered = sorted(values)
    if not field.day:
        # Exactly one stepped run from the lowest value (two values or more) reads as a star.
        for step in range(1, high - field.low + 1):
            if values == set(range(field.low, high + 1, step)):
                return _star(step)
        return _runs(ordered)
    if not star:
        return _runs(ordered)
    # A ``*``-led spelling: the densest ``*`` or ``*/n`` whose values all belong (``*/n`` with
    # n past the range is the lowest value alone), then what is left.
    for step in range(1, high - field.low + 2):
        stars = set(range(field.low, high + 1, step))
        if stars <= values:
            rest = sorted(values - stars)
            return _star(step) if not rest else f"{_star(step)},{_runs(rest)}"
    raise AssertionError("a *-led field always holds its lowest value")  # pragma: no cover


def canonical_cron(expression: object) -> str:
    """The stored spelling of ``expression``, or :class:`CronError` saying what is wrong."""
    if not isinstance(expression, str) or not expression or expression != expression.strip():
        raise CronError("cron.expression must be a non-empty trimmed string.")
    texts = expression.split()
    if len(texts) != len(_FIELDS):
        raise CronError(
            "cron.expression must contain exactly five whitespace-separated fields: "
            "minute hour day-of-month month day-of-week."
        )
    spelled: list[str] = []
    for index, (field, text) in enumerate(zip(_FIELDS, texts, strict=True)):
        elements = text.split(",")
        if "" in elements:
            raise CronError(
                f"cron.expression {field.name} field must not contain an empty list element."
            )
        values: set[int] = set()
        for element in elements:
            values |= _values(field, element)
        if index == _DAY_OF_WEEK and values & _SUNDAYS:
            values = (values - _SUNDAYS) | {0}
        spelled.append(_spelled(field, values, text.startswith("*")))
    return " ".join(spelled)
