"""Request parsing: Session ids, query parameters, JSON bodies and ``Last-Event-ID``.

Input is strict: unknown fields, unknown or repeated query parameters, wrong JSON types and
malformed JSON are refused (as :class:`~._errors.ApiError`) before a handler does anything, so a
refused request changes no Session. A body is size-checked while it is read, and its whole read
is bounded in time.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Final

from starlette.requests import ClientDisconnect, Request

from .. import _json
from ._errors import ApiError

#: Largest request body accepted (bytes); larger bodies are refused while they are read.
MAX_BODY_BYTES: Final = 1024 * 1024

_SESSION_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_UINT: Final = re.compile(r"[0-9]{1,18}")


def brief(text: str) -> str:
    """``text`` quoted and cut to 40 characters, for an error message that echoes input."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def session_id(request: Request) -> str:
    """The ``{id}`` path parameter; an id no Session could have is ``session_not_found``."""
    value: str = request.path_params["id"]
    if _SESSION_ID.fullmatch(value) is None:
        raise ApiError("session_not_found", "no such session")
    return value


def query(request: Request, allowed: frozenset[str]) -> dict[str, str]:
    """The query parameters, each at most once and each one of ``allowed``."""
    out: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in allowed:
            raise ApiError("invalid_query", f"unknown query parameter {brief(key)}")
        if key in out:
            raise ApiError("invalid_query", f"query parameter {key} is repeated")
        out[key] = value
    return out


def uint(params: dict[str, str], key: str) -> int | None:
    """``params[key]`` as a non-negative integer; ``None`` when absent."""
    value = params.get(key)
    if value is None:
        return None
    if _UINT.fullmatch(value) is None:
        raise ApiError("invalid_query", f"{key} must be a non-negative integer")
    return int(value)


async def read_json(
    request: Request, *, limit: int, timeout: float, required: bool
) -> dict[str, object]:
    """The body as a JSON object; an empty optional body is ``{}``.

    ``limit``: most bytes accepted (checked while read); ``timeout``: seconds the whole body may
    take to arrive (then 408 and the connection closes).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError("body_too_large", f"the body is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        # A body that stops arriving must not hold its connection: bound the whole read.
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise ApiError("body_too_large", f"the body is over {limit} bytes")
                chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError("invalid_json", "the request body arrived incomplete") from None
    except TimeoutError:
        raise ApiError(
            "request_timeout",
            f"the request body did not arrive within {timeout:g} s",
            headers={"Connection": "close"},
        ) from None
    body = b"".join(chunks)
    if not body:
        if required:
            raise ApiError("invalid_json", "a JSON object body is required")
        return {}
    content_type = request.headers.get("content-type")
    if content_type is not None:
        media = content_type.split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise ApiError("unsupported_media_type", "the body must be application/json")
    try:
        value = _json.loads(body)
    except _json.JSONError as exc:
        raise ApiError("invalid_json", f"the body is not strict JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ApiError("invalid_body", "the body must be a JSON object")
    return dict(value)


def fields(body: dict[str, object], allowed: Sequence[str]) -> None:
    """Refuse a body key that is not one of ``allowed``."""
    for key in body:
        if key not in allowed:
            raise ApiError("unknown_field", f"unknown field {brief(key)}")


def last_event_id(request: Request) -> int | None:
    """The ``Last-Event-ID`` header as a seq; ``None`` when absent or empty."""
    values = request.headers.getlist("last-event-id")
    if not values or values == [""]:
        return None  # an empty id resets the client's last id: like no header at all
    if len(values) != 1 or _UINT.fullmatch(values[0]) is None:
        raise ApiError("invalid_last_event_id", "Last-Event-ID must be a non-negative integer")
    return int(values[0])
