"""``GET /api/sessions/{id}/views`` (the plugins' Session views) and ``POST .../name``.

Views are derived from the committed prefix only (a live Session's durable events, or a cold
Session's stored log) and reading them never activates a cold Session. A rename is the
``session/rename`` event: it resumes a cold Session, is appended and flushed.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import Event, EventRejectedError, SessionNotLiveError

from .._names import RENAME, clean_name
from .._session import LiveSession
from ._errors import ApiError, json_response, storage_operation
from ._handlers import Api
from ._requests import fields, query, session_id
from ._viewdata import views_payload

_NO_QUERY = frozenset[str]()


class SessionViews:
    """The route handlers; one instance per app."""

    def __init__(self, api: Api) -> None:
        """``api``: the app's Session handlers, whose body reading and resume these share."""
        self.api = api
        self.host = api.host

    async def views(self, request: Request) -> Response:
        sid = session_id(request)
        query(request, _NO_QUERY)
        committed, seed_length, live = await self._committed(sid)
        return json_response(views_payload(self.host.plugins, committed, seed_length, live))

    async def rename(self, request: Request) -> Response:
        sid = session_id(request)
        query(request, _NO_QUERY)
        body = await self.api.read_body(request, required=True)
        fields(body, ("name",))
        if "name" not in body:
            raise ApiError("missing_field", "name is required")
        try:
            name = clean_name(body["name"])
        except ValueError as exc:
            raise ApiError("invalid_field", str(exc)) from None
        # Checked before the Session is touched: a refused name resumes nothing.
        agent = await self.api.resume_live(sid)
        session = agent.session
        try:
            session.append(RENAME, {"name": name})
            with storage_operation("rename"):
                durable = await self.host.sessions.flush(session)
        except EventRejectedError as exc:
            raise ApiError("event_rejected", str(exc)) from None
        except SessionNotLiveError:
            raise ApiError("session_unavailable", "the session was closed meanwhile") from None
        return json_response({"id": session.id, "name": name, "durable": durable})

    async def _committed(self, sid: str) -> tuple[Sequence[Event], int, LiveSession | None]:
        live = self.host.sessions.get(sid)
        if live is not None:
            events = live.events
            durable = min(self.host.persistence.durable_length(live), len(events))
            return events[:durable], live.header.seed_length or 0, live
        stored = await self.api.stored_session(sid, "views")
        return stored.events, stored.header.seed_length or 0, None
