"""The strict version-1 ``schedule/change`` codec and canonical UTC instants.

Wire shapes (exact key sets, camelCase)::

    {"version": 1, "operation": "create", "schedule": {"id", "kind", "prompt",
                                                       "afterSeconds", "scheduledAt"}}
    {"version": 1, "operation": "delete", "id": "schedule-1"}
    {"version": 1, "operation": "dispatch", "id": "schedule-1"}

Decoding never coerces: ``True`` and ``1.0`` are not ``1``, ``"5"`` is not ``5``, an extra or
missing key anywhere is an error. Every failure is a :class:`ScheduleLogError` whose message says
what is wrong and where (a ``$``-rooted path in wire names).

Instants are ``YYYY-MM-DDTHH:MM:SS.sssZ`` (UTC, exactly three fraction digits, years 0001-9999),
exchanged as integer epoch milliseconds; the arithmetic is exact over the whole range.
"""

import datetime as dt
import functools
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, NoReturn, TypeAlias, TypeVar

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from dsh_hookspecs import JSONValue

__all__ = [
    "MAX_AFTER_SECONDS",
    "MAX_INSTANT_MS",
    "MIN_INSTANT_MS",
    "AfterRecord",
    "Create",
    "Delete",
    "Dispatch",
    "ScheduleChange",
    "ScheduleLogError",
    "brief",
    "decode_change",
    "encode_change",
    "format_instant",
    "parse_instant",
]


def brief(value: object) -> str:
    """``repr`` of an offending value, cut short so junk cannot flood a log line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


# --------------------------------------------------------------------------------------------
# Instants

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


# --------------------------------------------------------------------------------------------
# Values

#: The largest ``afterSeconds`` whose millisecond value is a JavaScript safe integer.
MAX_AFTER_SECONDS: Final = (2**53 - 1) // 1000


class ScheduleLogError(Exception):
    """The Session's schedule log is not a valid version-1 ``schedule/change`` stream."""

    code: Final = "corrupt_schedule_log"


@attrs.frozen(kw_only=True)
class AfterRecord:
    """An active one-shot reminder: fire ``after_seconds`` after creation, at ``scheduled_at``."""

    id: str
    kind: Literal["after"]
    prompt: str
    after_seconds: int
    scheduled_at: str


@attrs.frozen(kw_only=True)
class Create:
    """``operation: "create"``: ``record`` becomes active (wire key ``schedule``)."""

    record: AfterRecord


@attrs.frozen(kw_only=True)
class Delete:
    """``operation: "delete"``: the active record ``id`` is removed without delivery."""

    id: str


@attrs.frozen(kw_only=True)
class Dispatch:
    """``operation: "dispatch"``: the active record ``id`` was delivered as a follow-up."""

    id: str


ScheduleChange: TypeAlias = Create | Delete | Dispatch

_T = TypeVar("_T")

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


def _kind(value: object, _: object) -> Literal["after"]:
    if _exact_str(value, _) != "after":
        raise _InvalidFieldError(f"kind {brief(value)} is not 'after'")
    return "after"


def _prompt(value: object, _: object) -> str:
    text = _exact_str(value, _)
    if not text or text != text.strip():
        raise _InvalidFieldError("prompt must be non-empty and already trimmed")
    return text


def _after_seconds(value: object, _: object) -> int:
    number = _exact_int(value, _)
    if not 0 < number <= MAX_AFTER_SECONDS:
        raise _InvalidFieldError(f"afterSeconds {number} is not a positive safe integer of seconds")
    return number


def _scheduled_at(value: object, _: object) -> str:
    text = _exact_str(value, _)
    try:
        parse_instant(text)
    except ValueError as exc:
        raise _InvalidFieldError(f"scheduledAt {exc}") from None
    return text


def _require_object(
    generated: Callable[[Mapping[str, Any], Any], _T],
) -> Callable[[object, object], _T]:
    """Wrap a generated class hook so a non-object value is reported as such."""

    def structure(value: object, cls: object) -> _T:
        if not isinstance(value, dict):
            raise _InvalidFieldError(f"expected an object, got {_json_type(value)}")
        return generated(value, cls)

    return structure


def _make_converter() -> cattrs.Converter:
    # forbid_extra_keys is inherited by every class hook generated from this converter.
    converter = cattrs.Converter(forbid_extra_keys=True)
    # Exact primitive hooks first: the class hooks generated below capture what is registered.
    converter.register_structure_hook(str, _exact_str)
    converter.register_structure_hook(int, _exact_int)
    converter.register_structure_hook(bool, _exact_bool)
    after_seconds = override(rename="afterSeconds", struct_hook=_after_seconds)
    scheduled_at = override(rename="scheduledAt", struct_hook=_scheduled_at)
    schedule = override(rename="schedule")
    by_id = override(struct_hook=_schedule_id)
    record_hook = make_dict_structure_fn(
        AfterRecord,
        converter,
        id=by_id,
        kind=override(struct_hook=_kind),
        prompt=override(struct_hook=_prompt),
        after_seconds=after_seconds,
        scheduled_at=scheduled_at,
    )
    converter.register_structure_hook(AfterRecord, _require_object(record_hook))
    create_hook = make_dict_structure_fn(Create, converter, record=schedule)
    converter.register_structure_hook(Create, _require_object(create_hook))
    for cls in (Delete, Dispatch):
        by_id_hook = make_dict_structure_fn(cls, converter, id=by_id)
        converter.register_structure_hook(cls, _require_object(by_id_hook))
    converter.register_unstructure_hook(
        AfterRecord,
        make_dict_unstructure_fn(
            AfterRecord, converter, after_seconds=after_seconds, scheduled_at=scheduled_at
        ),
    )
    converter.register_unstructure_hook(
        Create, make_dict_unstructure_fn(Create, converter, record=schedule)
    )
    return converter


_CONVERTER: Final = _make_converter()
_OPERATIONS: Final[dict[str, type[ScheduleChange]]] = {
    "create": Create,
    "delete": Delete,
    "dispatch": Dispatch,
}
_NAMES: Final = {cls: name for name, cls in _OPERATIONS.items()}
# Attribute name -> wire key, for error paths (cattrs notes carry attribute names).
_WIRE_KEYS: Final = {
    "record": "schedule",
    "after_seconds": "afterSeconds",
    "scheduled_at": "scheduledAt",
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


def encode_change(change: ScheduleChange) -> dict[str, JSONValue]:
    """Encode ``change`` as its wire JSON object (key order: version, operation, body)."""
    body: dict[str, JSONValue] = _CONVERTER.unstructure(change)
    return {"version": 1, "operation": _NAMES[type(change)], **body}
