"""``GET /api/board`` and ``GET /api/board/count``: the host's board across every Session.

The board is the durable projection plugins post to (``SessionStore.post``): one plugin's rows
of one kind, soonest first, read from storage without loading any Session's log (a live
Session's rows show once the flush that covers them is acknowledged). A page answers::

    {"rows": [{"sessionId", "sessionName", "key", "kind", "atMs", "data"}], "next": cursor}

``sessionName`` is the Session's stored name (``null`` until it has one); ``next`` is ``null``
on the last page, else an opaque cursor string for ``after=`` (one the server did not make is
refused with 422 ``bad_cursor``). ``since=<ms>`` instead of ``after`` starts at the first row
whose ``atMs`` is after that instant ("what arrived while you were away").
``GET /api/board/count`` answers ``{"count": n}``: the rows whose ``atMs`` is after ``after``
(every one without it).
"""

from __future__ import annotations

import re
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import WAKE_MAX_MS, JSONValue

from .._records import BoardRow
from . import _cursor as cursor
from ._errors import ApiError, json_response
from ._handlers import Routes
from ._requests import brief, query, uint

#: Rows of a page when ``limit`` is not given, and the most one page may hold.
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
#: The longest plugin name a query may name (a longer one names no loaded plugin).
MAX_PLUGIN_CHARS: Final = 200

_KIND: Final = re.compile(r"[a-z0-9_]{1,32}")
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")

_PAGE_QUERY: Final = frozenset({"plugin", "kind", "limit", "after", "since", "session"})
_COUNT_QUERY: Final = frozenset({"plugin", "kind", "after", "session"})

Cursor = tuple[int, str, str]


def encode_cursor(row: BoardRow) -> str:
    """The opaque cursor after ``row``: its ``(at_ms, session_id, key)`` as URL-safe text."""
    return cursor.encode([row.entry.at_ms, row.session_id, row.key])


def decode_cursor(value: str) -> Cursor:
    """The ``(at_ms, session_id, key)`` of a cursor :func:`encode_cursor` made, or 422
    ``bad_cursor``."""
    at_ms, session_id, key = cursor.decode(value, 3)
    if not cursor.is_int64(at_ms) or not isinstance(session_id, str) or not isinstance(key, str):
        raise cursor.bad_cursor()
    return at_ms, session_id, key


def _row(row: BoardRow) -> JSONValue:
    return {
        "sessionId": row.session_id,
        "sessionName": row.session_name,
        "key": row.key,
        "kind": row.entry.kind,
        "atMs": row.entry.at_ms,
        "data": row.entry.data,
    }


class Board(Routes):
    """The route handlers; one instance per app."""

    async def page(self, request: Request) -> Response:
        params = query(request, _PAGE_QUERY)
        plugin, kind, session = _target(params)
        limit = uint(params, "limit")
        if limit is None:
            limit = DEFAULT_LIMIT
        elif not 1 <= limit <= MAX_LIMIT:
            raise ApiError("invalid_query", f"limit must be in [1, {MAX_LIMIT}]")
        after = None if "after" not in params else decode_cursor(params["after"])
        since = uint(params, "since")
        if since is not None:
            if after is not None:
                raise ApiError("invalid_query", "give after or since, not both")
            # Every Session id is non-empty, so this cursor starts at the first row whose
            # atMs is after ``since``.
            after = (min(since, WAKE_MAX_MS) + 1, "", "")
        # One row more than asked for says whether another page follows.
        rows = await self.api.storage.run(
            "board",
            self.host.backend.board_page(
                plugin, kind, after=after, limit=limit + 1, session_id=session
            ),
        )
        page = list(rows[:limit])
        more = len(rows) > limit
        return json_response(
            {
                "rows": [_row(row) for row in page],
                "next": encode_cursor(page[-1]) if more and page else None,
            }
        )

    async def count(self, request: Request) -> Response:
        params = query(request, _COUNT_QUERY)
        plugin, kind, session = _target(params)
        after = uint(params, "after")
        count = await self.api.storage.run(
            "board",
            self.host.backend.board_count(plugin, kind, after_ms=after, session_id=session),
        )
        return json_response({"count": count})


def _target(params: dict[str, str]) -> tuple[str, str, str | None]:
    """The ``plugin``, ``kind`` and optional ``session`` of a board query (422
    ``invalid_query`` when one is missing or malformed)."""
    for name in ("plugin", "kind"):
        if not params.get(name):
            raise ApiError("invalid_query", f"{name} is required")
    plugin, kind = params["plugin"], params["kind"]
    if len(plugin) > MAX_PLUGIN_CHARS:
        raise ApiError("invalid_query", f"plugin must be at most {MAX_PLUGIN_CHARS} characters")
    if _KIND.fullmatch(kind) is None:
        raise ApiError(
            "invalid_query", f"kind must be 1 to 32 characters of a-z, 0-9 and _, not {brief(kind)}"
        )
    session = params.get("session")
    if session is not None and _SESSION_ID.fullmatch(session) is None:
        raise ApiError("invalid_query", f"session is not a session id: {brief(session)}")
    return plugin, kind, session
