"""The data of plugin Session views (``dsh_session_views``) as the API and the stream send it.

``{"views": {name: view}, "throughSeq": n}``: ``n`` is the length of the committed prefix the
views were derived from. A view that is not JSON is dropped (and logged), never sent half-way.
On the event stream the same object is one ``event: views`` frame without an ``id:`` line, so
``Last-Event-ID`` never moves because of it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import structlog

from dsh_hookspecs import Event, JSONValue

from .. import _json
from .._names import session_name
from ..core import LiveSession, PluginManager
from ..persistence import StorageError

if TYPE_CHECKING:
    from ..core import LiveHost

log = structlog.get_logger(__name__)


def session_views(
    plugins: PluginManager,
    committed: Sequence[Event],
    seed_length: int,
    session: LiveSession | None,
) -> dict[str, JSONValue]:
    """Every plugin's views of ``committed`` (a committed prefix), each one canonical JSON."""
    out: dict[str, JSONValue] = {}
    for name, view in plugins.session_views(committed, seed_length, session).items():
        try:
            out[name] = _json.canonical(view)
        except _json.JSONError as exc:
            log.error("web.bad_session_view", view=name, error=str(exc))
    return out


def views_payload(
    plugins: PluginManager,
    committed: Sequence[Event],
    seed_length: int,
    session: LiveSession | None,
) -> dict[str, JSONValue]:
    """``{"views", "name", "throughSeq"}`` of a committed prefix (``name``: the Session's name
    so far, or ``None``; the browser refreshes its list when it or a badge changed)."""
    return {
        "views": session_views(plugins, committed, seed_length, session),
        "name": session_name(committed),
        "throughSeq": len(committed),
    }


def encode_views_frame(payload: JSONValue) -> bytes:
    """``event: views`` and one ``data:`` line; no ``id:`` line."""
    return b"event: views\ndata: %s\n\n" % _json.dumps(payload).encode("utf-8")


def badges(views: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
    """The positive integer ``badge`` of each view that has one (the Session list's badges,
    and ``dsh sessions``'s)."""
    out: dict[str, JSONValue] = {}
    for name, view in views.items():
        badge = view.get("badge") if isinstance(view, dict) else None
        if type(badge) is int and badge > 0:
            out[name] = badge
    return out


#: The most rows :class:`RowSummaries` remembers (a few pages of the list, the least recently
#: listed forgotten first).
MAX_REMEMBERED_ROWS: Final = 2048


class RowSummaries:
    """The Session list's ``name`` and ``badges`` per row, derived from committed logs.

    A cold Session's are derived from its stored log once per stored length (a listing does not
    re-read unchanged logs); a live one's from its committed prefix, once per durable length.
    Only the rows of the pages listed lately are remembered (at most
    :data:`MAX_REMEMBERED_ROWS`), so a host with a million Sessions keeps a few pages' worth.
    """

    def __init__(self, host: LiveHost, *, remember: int = MAX_REMEMBERED_ROWS) -> None:
        self.host = host
        self._remember = remember
        #: id -> ((committed length, live), name, badges), least recently listed first
        self._cache: OrderedDict[str, tuple[tuple[int, bool], str | None, dict[str, JSONValue]]] = (
            OrderedDict()
        )

    def forget(self, sid: str) -> None:
        """Drop what is remembered of ``sid`` (it was deleted)."""
        self._cache.pop(sid, None)

    async def annotate(self, rows: list[dict[str, Any]], lengths: dict[str, int]) -> None:
        """Add ``name`` (when it has one) and ``badges`` (when any) to each healthy row."""
        for row in rows:
            if row.get("damaged"):
                continue
            summary = await self._summary(row["id"], lengths.get(row["id"]))
            if summary is None:
                continue
            name, row_badges = summary
            if name is not None:
                row["name"] = name
            if row_badges:
                row["badges"] = row_badges

    async def _summary(
        self, sid: str, stored_length: int | None
    ) -> tuple[str | None, dict[str, JSONValue]] | None:
        live = self.host.sessions.get(sid)
        if live is not None:
            events = live.events
            key = (min(self.host.persistence.durable_length(live), len(events)), True)
        elif stored_length is not None:
            key = (stored_length, False)
        else:
            return None
        cached = self._cache.get(sid)
        if cached is not None and cached[0] == key:
            self._cache.move_to_end(sid)
            return cached[1], cached[2]
        if live is not None:
            committed: Sequence[Event] = events[: key[0]]
            seed_length = live.header.owned_from
        else:
            try:
                stored = await self.host.inspect(sid)
            except StorageError as exc:
                log.warning("web.list_summary_unavailable", session_id=sid, error=str(exc))
                return None
            if stored is None:
                return None
            committed, seed_length = stored.events, stored.header.owned_from
            key = (len(committed), False)
        views = session_views(self.host.plugins, committed, seed_length, live)
        summary = (session_name(committed), badges(views))
        self._cache[sid] = (key, *summary)
        self._cache.move_to_end(sid)
        while len(self._cache) > self._remember:
            self._cache.popitem(last=False)
        return summary
