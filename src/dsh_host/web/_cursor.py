"""The opaque page cursors of ``GET /api/board`` and ``GET /api/sessions``.

A cursor is the sort key of the last row of a page (a JSON array of integers and strings) as
URL-safe base64 text without padding. One the server did not make, or one that does not hold
the fields its list sorts by, is refused with 422 ``bad_cursor``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final, TypeGuard

from dsh_hookspecs import JSONValue

from .. import _json
from ._errors import ApiError

#: The longest cursor accepted (one the server makes is far shorter).
MAX_CURSOR_CHARS: Final = 1024
#: The range of an integer field (a stored instant).
INT64: Final = (-(2**63), 2**63 - 1)

_CURSOR: Final = re.compile(r"[A-Za-z0-9_-]+")


def encode(fields: list[JSONValue]) -> str:
    """The opaque text of a sort key."""
    text = _json.dumps(fields)
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode(value: str, count: int) -> list[JSONValue]:
    """The ``count`` fields of a cursor :func:`encode` made, or :func:`bad_cursor`."""
    if len(value) > MAX_CURSOR_CHARS or _CURSOR.fullmatch(value) is None:
        raise bad_cursor()
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        decoded = _json.loads(raw)
    except (binascii.Error, ValueError):
        raise bad_cursor() from None
    if not isinstance(decoded, list) or len(decoded) != count:
        raise bad_cursor()
    return decoded


def is_int64(value: object) -> TypeGuard[int]:
    return type(value) is int and INT64[0] <= value <= INT64[1]


def bad_cursor() -> ApiError:
    return ApiError("bad_cursor", "after is not a cursor this server made; start from the top")
