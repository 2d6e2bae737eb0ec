"""``GET /api/sessions/{id}/views`` (the plugins' Session views) and ``POST .../name``.

Views are derived from the committed prefix only (a live Session's durable events, or a cold
Session's stored log) and reading them never activates a cold Session. A rename is the
``session/rename`` event: it resumes a cold Session, is appended and flushed. The name is stored
as it will be shown (:func:`~dsh_host._names.clean_name`: control, bidi and invisible characters
dropped, whitespace collapsed); one with nothing visible left, or too long, is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import Event

from .._names import RENAME, clean_name, session_name
from ..core import LiveSession
from ._errors import ApiError, json_response
from ._handlers import Routes, session_refusals
from ._viewdata import views_payload


class SessionViews(Routes):
    """The route handlers; one instance per app."""

    async def views(self, request: Request) -> Response:
        sid = self.api.session_request(request)
        committed, seed_length, live = await self._committed(sid)
        return json_response(views_payload(self.host.plugins, committed, seed_length, live))

    async def rename(self, request: Request) -> Response:
        sid, body = await self.api.session_post(request, ("name",), required=True)
        if "name" not in body:
            raise ApiError("missing_field", "name is required")
        try:
            name = clean_name(body["name"])
        except ValueError as exc:
            raise ApiError("invalid_field", str(exc)) from None
        # Checked before the Session is touched: a refused name resumes nothing.
        deadline = self.api.storage.deadline()  # one storage wait for the resume and the flush
        agent = await self.api.resume_live(sid, deadline=deadline)
        session = agent.session
        with session_refusals():
            if session_name(session.events) != name:  # a retried rename adds no second copy
                session.append(RENAME, {"name": name})
            durable = await self.api.storage.run(
                "rename",
                self.host.sessions.flush(session),
                deadline=deadline,
                late="the new name is kept and may still be saved; it shows once it is",
            )
        return json_response({"id": session.id, "name": name, "durable": durable})

    async def _committed(self, sid: str) -> tuple[Sequence[Event], int, LiveSession | None]:
        live = self.host.sessions.get(sid)
        if live is not None:
            events = live.events
            durable = min(self.host.persistence.durable_length(live), len(events))
            return events[:durable], live.header.owned_from, live
        stored = await self.api.stored_session(sid, "views")
        return stored.events, stored.header.owned_from, None
