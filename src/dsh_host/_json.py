"""Strict JSON: no NaN/Infinity, no duplicate keys, integers stay integers.

Everything the host stores or sends goes through :func:`dumps`; everything it reads through
:func:`loads`. :func:`canonical` copies an in-memory value into the exact shape the host stores
(plain dicts with str keys, lists, finite numbers) or refuses it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from dsh_hookspecs import JSONValue


class JSONError(ValueError):
    """A value or document that is not strict JSON."""


def _reject_constant(name: str) -> Any:
    raise JSONError(f"non-finite number {name} is not allowed")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JSONError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 overflows to infinity
        raise JSONError(f"number {text} is out of range")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicates,
    parse_constant=_reject_constant,
    parse_float=_finite_float,
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def loads(text: str | bytes) -> JSONValue:
    """Parse one strict JSON document."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONError(f"not UTF-8: {exc}") from None
    try:
        value, end = _DECODER.raw_decode(text)
    except JSONError:
        raise
    except ValueError as exc:  # JSONDecodeError, and an integer literal of over 4300 digits
        raise JSONError(str(exc)) from None
    except RecursionError:
        raise JSONError("document nested too deeply") from None
    if text[end:].strip():
        raise JSONError("trailing data after the JSON document")
    if _SURROGATE_ESCAPE.search(text):
        canonical(value)  # an escaped lone surrogate parses, but is not valid Unicode
    return value  # type: ignore[no-any-return]


def dumps(value: JSONValue) -> str:
    """Serialise compactly; refuses NaN/Infinity."""
    try:
        return _ENCODER.encode(value)
    except ValueError as exc:
        raise JSONError(str(exc)) from None


# An integer of more digits than this cannot be written back out (CPython's int/str limit is
# 4300 digits), so the host refuses it on the way in rather than fail later in storage.
_INT_BOUND = 10**4000
_NONE = type(None)


def _text(value: str) -> str:
    """``value`` as a plain ``str`` that UTF-8 can encode (no lone surrogates), or refuse it."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise JSONError("string holds a lone surrogate and is not valid Unicode") from None
    return value if type(value) is str else str(value)


def _integer(value: int) -> int:
    if not -_INT_BOUND < value < _INT_BOUND:
        raise JSONError("integer has too many digits to be stored")
    return value if type(value) is int else int(value)


def canonical(value: object, _depth: int = 0) -> JSONValue:
    """Return a fresh copy of ``value`` in stored form, or raise :class:`JSONError`.

    Tuples become lists; dict keys must be ``str``; floats must be finite; strings must be
    valid Unicode (UTF-8 encodable); integers must be writable (at most 4000 digits);
    subclasses of the JSON types (an ``IntEnum``, a ``str`` subclass) become the plain type.
    Whatever this accepts, storage can encode.
    """
    if _plain(value):
        return value  # type: ignore[return-value]
    kind = type(value)
    if _depth > 200:
        raise JSONError("value nested too deeply")
    if kind is dict:
        out: dict[str, JSONValue] = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            name = key if type(key) is str and key.isascii() else _key(key)
            out[name] = item if _plain(item) else canonical(item, _depth + 1)
        return out
    if kind is list or kind is tuple:
        return [
            item if _plain(item) else canonical(item, _depth + 1)
            for item in value  # type: ignore[attr-defined]
        ]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JSONError("non-finite number is not allowed")
        return float(value)
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return canonical(dict(value), _depth)
    if isinstance(value, list | tuple):
        return canonical(list(value), _depth)
    raise JSONError(f"{kind.__name__} is not a JSON value")


def _plain(item: object) -> bool:
    """Already canonical and immutable: kept as is (this runs for every value of every event)."""
    kind = type(item)
    if kind is str:
        return item.isascii()  # type: ignore[attr-defined, no-any-return]
    if kind is int:
        return -_INT_BOUND < item < _INT_BOUND  # type: ignore[operator]
    return kind is bool or kind is _NONE


def _key(key: object) -> str:
    if isinstance(key, str):
        return _text(key)
    raise JSONError(f"object key {key!r} is not a string")


def identical(a: JSONValue, b: JSONValue) -> bool:
    """Deep strict equality: ``1``, ``1.0`` and ``True`` are three different values."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    return a == b
