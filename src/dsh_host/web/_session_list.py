"""``GET /api/sessions``: the Session list, a page at a time, newest first.

A page answers::

    {"sessions": [row], "next": cursor}

Each row is ``{"id", "createdAt", "live", "parentSession"?, "seedLength"?, "name"?,
"badges"?}``, or a row storage cannot decode: ``{"id", "createdAt"?, "live": false,
"damaged": true, "error"}``. Rows are ordered by ``(createdAt, id)`` descending (ids by code
point), the order of the browser's list, and read from storage's index
(:func:`~dsh_host.persistence.session_page`): a page reads its own rows and, for the names and
badges of its cold rows, their stored logs (once per stored length, :class:`RowSummaries`);
never the whole list. ``limit`` is 1 to :data:`MAX_LIMIT` (:data:`DEFAULT_LIMIT` when absent);
``next`` is ``null`` on the last page, else an opaque cursor for ``after=`` (one the server did
not make is refused with 422 ``bad_cursor``). A Session created or deleted between two pages
moves nothing: a page continues strictly after the last row of the one before.
"""

from __future__ import annotations

from typing import Any, Final

from dsh_hookspecs import JSONValue, SessionHeader

from ..core import LiveHost
from ..persistence import (
    DamagedSummary,
    SessionCursor,
    SessionRow,
    session_cursor,
    session_page,
)
from . import _cursor as cursor
from ._errors import ApiError
from ._requests import uint
from ._viewdata import RowSummaries

#: Rows of a page when ``limit`` is not given, and the most one page may hold.
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
#: The query parameters of ``GET /api/sessions``.
PAGE_QUERY: Final = frozenset({"limit", "after"})


def encode_cursor(after: SessionCursor) -> str:
    """The opaque text of ``after`` (its ``(createdAt, id)``, URL-safe)."""
    return cursor.encode([after[0], after[1]])


def decode_cursor(value: str) -> SessionCursor:
    """The ``(createdAt, id)`` of a cursor :func:`encode_cursor` made, or 422 ``bad_cursor``."""
    created_at, session_id = cursor.decode(value, 2)
    if not cursor.is_int64(created_at) or not isinstance(session_id, str) or "\x00" in session_id:
        raise cursor.bad_cursor()
    return created_at, session_id


def page_request(params: dict[str, str]) -> tuple[SessionCursor | None, int]:
    """The ``after`` cursor and ``limit`` of a page request (422 when malformed)."""
    limit = uint(params, "limit")
    if limit is None:
        limit = DEFAULT_LIMIT
    elif not 1 <= limit <= MAX_LIMIT:
        raise ApiError("invalid_query", f"limit must be in [1, {MAX_LIMIT}]")
    after = None if "after" not in params else decode_cursor(params["after"])
    return after, limit


async def list_page(
    host: LiveHost, summaries: RowSummaries, after: SessionCursor | None, limit: int
) -> dict[str, JSONValue]:
    """One page of the list (``{"sessions", "next"}``), with names and badges."""
    # One row more than asked for says whether another page follows.
    found = await session_page(host.backend, after=after, limit=limit + 1)
    page = found[:limit]
    rows: list[dict[str, Any]] = []
    lengths: dict[str, int] = {}
    for stored in page:
        rows.append(_row(host, stored))
        if not isinstance(stored, DamagedSummary):
            lengths[stored.header.id] = stored.length
    await summaries.annotate(rows, lengths)
    more = len(found) > limit
    return {
        "sessions": list[JSONValue](rows),
        "next": encode_cursor(session_cursor(page[-1])) if more and page else None,
    }


def _row(host: LiveHost, stored: SessionRow) -> dict[str, Any]:
    live = host.sessions.get(stored.id if isinstance(stored, DamagedSummary) else stored.header.id)
    if live is not None:
        return header_row(live.header, live=True)
    if isinstance(stored, DamagedSummary):
        row: dict[str, Any] = {"id": stored.id}
        if stored.created_at is not None:
            row["createdAt"] = stored.created_at
        return {**row, "live": False, "damaged": True, "error": stored.error}
    return header_row(stored.header, live=False)


def header_row(header: SessionHeader, *, live: bool) -> dict[str, Any]:
    """A healthy row before its name and badges: ``{"id", "createdAt", "live",
    "parentSession"?, "seedLength"?}``."""
    row: dict[str, Any] = {"id": header.id, "createdAt": header.created_at, "live": live}
    if header.parent_session is not None:
        row["parentSession"] = header.parent_session
        if header.seed_length is not None:
            row["seedLength"] = header.seed_length
    return row
