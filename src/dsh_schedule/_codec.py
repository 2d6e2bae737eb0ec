"""The strict version-1 ``schedule/change`` codec (and, re-exported, the canonical instants).

Wire shapes (exact key sets, camelCase; the union was widened without a version bump, so every
after-only log decodes exactly as before)::

    {"version": 1, "operation": "create", "schedule": RECORD}
    {"version": 1, "operation": "delete", "id": "schedule-1"}
    {"version": 1, "operation": "dispatch", "id": "schedule-1"}         # an after or at record
    {"version": 1, "operation": "dispatch", "id": "schedule-1",
     "acceptedAt": "2026-08-05T12:17:34.000Z"}                           # an every record

    RECORD: {"id", "kind": "after", "prompt", "afterSeconds", "scheduledAt"}
          | {"id", "kind": "at", "prompt", "scheduledAt"}
          | {"id", "kind": "every", "prompt", "everySeconds", "scheduledAt"}

A record's class is chosen by its selector key (``afterSeconds``, ``everySeconds``), else by its
kind, else it is read as an ``at`` record; its ``kind`` must then name that class (so an after
record relabelled ``at`` is "kind 'at' is not 'after'").

Decoding never coerces: ``True`` and ``1.0`` are not ``1``, ``"5"`` is not ``5``, an extra or
missing key anywhere is an error. Every failure is a :class:`ScheduleLogError` whose message says
what is wrong and where (a ``$``-rooted path in wire names).

Instants are ``YYYY-MM-DDTHH:MM:SS.sssZ`` (UTC, exactly three fraction digits, years 0001-9999),
exchanged as integer epoch milliseconds (:mod:`._instants`).
"""

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, NoReturn, TypeAlias, TypeVar

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from dsh_hookspecs import JSONValue

from ._instants import (
    MAX_INSTANT_MS,
    MAX_SAFE_INTEGER,
    MIN_INSTANT_MS,
    brief,
    format_instant,
    parse_instant,
)

__all__ = [
    "KINDS",
    "MAX_AFTER_SECONDS",
    "MAX_EVERY_SECONDS",
    "MAX_INSTANT_MS",
    "MIN_EVERY_SECONDS",
    "MIN_INSTANT_MS",
    "AfterRecord",
    "AtRecord",
    "Create",
    "Delete",
    "Dispatch",
    "EveryRecord",
    "OneShotRecord",
    "Record",
    "ScheduleChange",
    "ScheduleLogError",
    "brief",
    "decode_change",
    "encode_change",
    "format_instant",
    "parse_instant",
]


# --------------------------------------------------------------------------------------------
# Values

#: The largest ``afterSeconds`` whose millisecond value is a JavaScript safe integer.
MAX_AFTER_SECONDS: Final = MAX_SAFE_INTEGER // 1000
#: The shortest fixed-rate interval, in seconds (a shorter ``every_seconds`` is
#: ``frequency_too_high``).
MIN_EVERY_SECONDS: Final = 300
#: The largest ``everySeconds`` whose millisecond value is a JavaScript safe integer.
MAX_EVERY_SECONDS: Final = MAX_AFTER_SECONDS
#: The record kinds of version 1.
KINDS: Final = ("after", "at", "every")


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
class AtRecord:
    """An active one-shot reminder at an absolute instant: only the UTC ``scheduled_at`` is kept
    (no offset, local fields or zone, so replay never consults a zone)."""

    id: str
    kind: Literal["at"]
    prompt: str
    scheduled_at: str


@attrs.frozen(kw_only=True)
class EveryRecord:
    """An active fixed-rate reminder every ``every_seconds``, anchored at its creation:
    ``scheduled_at`` is the earliest anchor-aligned target not yet dispatched."""

    id: str
    kind: Literal["every"]
    prompt: str
    every_seconds: int
    scheduled_at: str


#: A record that is delivered once and then ends.
OneShotRecord: TypeAlias = AfterRecord | AtRecord
#: Any active record.
Record: TypeAlias = AfterRecord | AtRecord | EveryRecord


@attrs.frozen(kw_only=True)
class Create:
    """``operation: "create"``: ``record`` becomes active (wire key ``schedule``)."""

    record: Record


@attrs.frozen(kw_only=True)
class Delete:
    """``operation: "delete"``: the active record ``id`` is removed without delivery."""

    id: str


@attrs.frozen(kw_only=True)
class Dispatch:
    """``operation: "dispatch"``: the active record ``id`` was delivered as a follow-up.

    ``accepted_at`` (wire ``acceptedAt``, a canonical instant) is the decision time of an every
    record's delivery, and absent (``None``) for a one-shot's.
    """

    id: str
    accepted_at: str | None = None


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


def _kind(expected: str) -> Callable[[object, object], str]:
    """The ``kind`` hook of the record class for ``expected``."""

    def structure(value: object, _: object) -> str:
        if _exact_str(value, _) not in KINDS:
            raise _InvalidFieldError(
                f'v1 schedule kind must be "after", "at", or "every", got {brief(value)}'
            )
        if value != expected:
            raise _InvalidFieldError(f"kind {brief(value)} is not {expected!r}")
        return expected

    return structure


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


def _every_seconds(value: object, _: object) -> int:
    number = _exact_int(value, _)
    if not MIN_EVERY_SECONDS <= number <= MAX_EVERY_SECONDS:
        raise _InvalidFieldError(
            f"everySeconds {number} is not a safe integer of at least {MIN_EVERY_SECONDS} "
            "whose milliseconds are safe"
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


#: The exact key sets of the records whose wrong key set is reported as one sentence.
_KEY_SETS: Final = {
    AtRecord: (
        frozenset({"id", "kind", "prompt", "scheduledAt"}),
        "at schedule must contain exactly id, kind, prompt, and scheduledAt",
    ),
    EveryRecord: (
        frozenset({"id", "kind", "prompt", "everySeconds", "scheduledAt"}),
        "every schedule must contain exactly id, kind, prompt, everySeconds, and scheduledAt",
    ),
}


def _record_class(value: Mapping[Any, Any]) -> type[Record]:
    """The class a record object is read as (see the module docstring)."""
    if "afterSeconds" in value:
        return AfterRecord
    if "everySeconds" in value:
        return EveryRecord
    kind = value.get("kind")
    if kind == "every" and type(kind) is str:
        return EveryRecord
    if kind == "after" and type(kind) is str:
        return AfterRecord
    return AtRecord


def _record_hook(converter: cattrs.Converter) -> Callable[[object, object], Record]:
    """The structure hook of :data:`Record`: the class by :func:`_record_class`, decoded by its
    own generated hook (after an exact key-set check for at and every records)."""

    def structure(value: object, _: object) -> Record:
        if not isinstance(value, dict):
            raise _InvalidFieldError(f"schedule record must be an object, got {_json_type(value)}")
        cls = _record_class(value)
        expected = _KEY_SETS.get(cls)
        if expected is not None and set(value) != expected[0]:
            keys = sorted(value, key=repr)
            raise _InvalidFieldError(f"{expected[1]}, got keys {brief(keys)}")
        record: Record = converter.structure(value, cls)
        return record

    return structure


def _make_converter() -> cattrs.Converter:
    # forbid_extra_keys is inherited by every class hook generated from this converter.
    converter = cattrs.Converter(forbid_extra_keys=True)
    # Exact primitive hooks first: the class hooks generated below capture what is registered.
    converter.register_structure_hook(str, _exact_str)
    converter.register_structure_hook(int, _exact_int)
    converter.register_structure_hook(bool, _exact_bool)
    selectors = {
        "after_seconds": override(rename="afterSeconds", struct_hook=_after_seconds),
        "every_seconds": override(rename="everySeconds", struct_hook=_every_seconds),
        "scheduled_at": override(rename="scheduledAt", struct_hook=_instant("scheduledAt")),
    }
    by_id = override(struct_hook=_schedule_id)
    prompt = override(struct_hook=_prompt)
    for cls, kind in ((AfterRecord, "after"), (AtRecord, "at"), (EveryRecord, "every")):
        fields: dict[str, Any] = {
            name: selectors[name] for name in attrs.fields_dict(cls) if name in selectors
        }
        record_hook = make_dict_structure_fn(
            cls,
            converter,
            id=by_id,
            kind=override(struct_hook=_kind(kind)),
            prompt=prompt,
            **fields,
        )
        converter.register_structure_hook(cls, record_hook)
        converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **fields))
    converter.register_structure_hook_func(lambda cls: cls == Record, _record_hook(converter))
    create_hook = make_dict_structure_fn(Create, converter, record=override(rename="schedule"))
    converter.register_structure_hook(Create, create_hook)
    delete_hook = make_dict_structure_fn(Delete, converter, id=by_id)
    converter.register_structure_hook(Delete, delete_hook)
    accepted_at = override(rename="acceptedAt", struct_hook=_instant("acceptedAt"))
    dispatch_hook = make_dict_structure_fn(Dispatch, converter, id=by_id, accepted_at=accepted_at)
    converter.register_structure_hook(Dispatch, dispatch_hook)
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
    "every_seconds": "everySeconds",
    "scheduled_at": "scheduledAt",
    "accepted_at": "acceptedAt",
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
    """Encode ``change`` as its wire JSON object (key order: version, operation, body; a
    dispatch without ``accepted_at`` has no ``acceptedAt`` key)."""
    head: dict[str, JSONValue] = {"version": 1, "operation": _NAMES[type(change)]}
    if isinstance(change, Create):
        record: dict[str, JSONValue] = _CONVERTER.unstructure(change.record)
        return {**head, "schedule": record}
    if isinstance(change, Dispatch) and change.accepted_at is not None:
        return {**head, "id": change.id, "acceptedAt": change.accepted_at}
    return {**head, "id": change.id}
