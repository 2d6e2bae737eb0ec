"""The JSON API's handlers: Sessions, messages, flushes, history pages and event streams.

Each handler parses its request first (:mod:`._requests`; a refused request changes no Session),
then does one host operation. A storage failure anywhere in one is answered by
:func:`~._errors.storage_operation` with 503 ``storage_unavailable`` naming the operation. The
stream itself lives in :mod:`._stream`, its data in :mod:`._sidecar`, pages in :mod:`._history`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import (
    AgentDisposedError,
    Event,
    EventRejectedError,
    InvalidTimeZoneError,
    JSONValue,
    SessionNotLiveError,
    canonical_time_zone,
)

from .._agent import LiveAgent
from .._host import Host
from .._session import ForkBoundaryError
from ..persistence import SessionLiveElsewhereError, StoredSession
from ._errors import ApiError, json_response, storage_operation
from ._history import DEFAULT_MAX_MESSAGES, MAX_MAX_MESSAGES, history_page
from ._requests import fields, last_event_id, query, read_json, session_id, uint
from ._sidecar import Sidecar
from ._stream import EventStream, Replay
from ._viewdata import RowSummaries

_NO_QUERY = frozenset[str]()
_INVALID_ZONE = "timeZone must be UTC or a valid IANA Area/Location name."


@dataclass(slots=True)
class Settings:
    """What one app runs with (``app.state.web``); set ``closing`` to refuse new API requests."""

    host: Host
    sidecar: Sidecar
    token: bytes | None
    keepalive: float
    send_timeout: float
    max_body: int
    body_timeout: float = 10.0
    closing: bool = False


class Api:
    """The route handlers; one instance per app."""

    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.host = settings.host
        #: The list rows' names and badges (one cache per app).
        self.summaries = RowSummaries(settings.host)

    # -- Sessions ---------------------------------------------------------------------------------
    async def sessions(self, request: Request) -> Response:
        query(request, _NO_QUERY)
        if request.method == "POST":
            fields(await self.read_body(request, required=False), ())
            with storage_operation("create"):
                agent = await self.host.create_session()
            session = agent.session
            return json_response({"id": session.id, "header": session.header.to_json()}, 201)
        lengths: dict[str, int] = {}
        with storage_operation("list"):
            rows = await self.host.list_sessions(lengths=lengths)
        await self.summaries.annotate(rows, lengths)
        return json_response({"sessions": list[JSONValue](rows)})

    async def fork(self, request: Request) -> Response:
        sid = session_id(request)
        query(request, _NO_QUERY)
        body = await self.read_body(request, required=False)
        fields(body, ("boundary",))
        boundary = body.get("boundary")
        if "boundary" in body and type(boundary) is not int:
            raise ApiError("invalid_field", "boundary must be an integer")
        assert boundary is None or isinstance(boundary, int)
        try:
            # A cold parent is checked against its stored log first and stays cold if refused.
            with storage_operation("fork"):
                agent = await self.host.fork_session(sid, boundary)
        except KeyError:
            raise ApiError("session_not_found", "no such session") from None
        except ForkBoundaryError as exc:
            raise ApiError("invalid_boundary", str(exc)) from None
        except EventRejectedError as exc:
            raise ApiError("event_rejected", str(exc)) from None
        except SessionNotLiveError:
            raise ApiError("session_unavailable", "the session was closed meanwhile") from None
        session = agent.session
        return json_response({"id": session.id, "header": session.header.to_json()}, 201)

    async def resume(self, request: Request) -> Response:
        sid = session_id(request)
        query(request, _NO_QUERY)
        fields(await self.read_body(request, required=False), ())
        agent = await self.resume_live(sid)
        return json_response({"id": agent.session.id, "live": True})

    async def messages(self, request: Request) -> Response:
        sid = session_id(request)
        query(request, _NO_QUERY)
        body = await self.read_body(request, required=True)
        fields(body, ("text", "timeZone"))
        if "text" not in body:
            raise ApiError("missing_field", "text is required")
        text = body["text"]
        if not isinstance(text, str) or not text.strip():
            raise ApiError("invalid_field", "text must be a non-blank string")
        # Checked before the Session is touched: a refused zone resumes nothing.
        zone = _time_zone(body["timeZone"]) if "timeZone" in body else None
        agent = await self.resume_live(sid)
        try:
            agent.send(text, time_zone=zone)
        except AgentDisposedError:
            raise ApiError("session_unavailable", "the session is closing") from None
        return json_response({"accepted": True}, 202)

    async def flush(self, request: Request) -> Response:
        sid = session_id(request)
        query(request, _NO_QUERY)
        fields(await self.read_body(request, required=False), ())
        session = self.host.sessions.get(sid)
        if session is None:
            # A cold Session is its stored log: everything it has is durable already, and
            # flushing must not activate it.
            stored = await self.stored_session(sid)
            return json_response({"durable": True, "throughSeq": len(stored.events)})
        through_seq = len(session.events)  # what this flush covers (captured at entry)
        try:
            with storage_operation("flush"):
                durable = await self.host.sessions.flush(session)
        except SessionNotLiveError:
            raise ApiError("session_unavailable", "the session was closed meanwhile") from None
        return json_response({"durable": durable, "throughSeq": through_seq})

    async def history(self, request: Request) -> Response:
        sid = session_id(request)
        params = query(request, frozenset({"beforeSeq", "maxMessages"}))
        before_seq = uint(params, "beforeSeq")
        max_messages = uint(params, "maxMessages")
        if max_messages is None:
            max_messages = DEFAULT_MAX_MESSAGES
        elif not 1 <= max_messages <= MAX_MAX_MESSAGES:
            raise ApiError("invalid_query", f"maxMessages must be in [1, {MAX_MAX_MESSAGES}]")
        # A live Session proves its stored prefix itself (a failed inspection only costs views).
        stored = None
        if self.host.sessions.get(sid) is None:
            stored = await self.stored_session(sid, "history")
        page = await history_page(self.host, sid, before_seq, max_messages, stored=stored)
        assert page is not None  # live, or read from storage above
        return json_response(page)

    async def events(self, request: Request) -> Response:
        sid = session_id(request)
        params = query(request, frozenset({"views"}))
        if params.get("views", "1") != "1":
            raise ApiError("invalid_query", "views must be 1")
        last_seen = last_event_id(request)
        # Subscribe before the snapshot: every append from now on is queued, so replay plus
        # queue has no gap; the floor then drops what both contain. ``?views=1`` also sends
        # the plugins' Session views (after the replay, and after each flush that changes them).
        subscription = self.s.sidecar.subscribe(sid, views="views" in params)
        try:
            replay = await self._replay(sid, last_seen)
        except BaseException:
            subscription.close("done")
            raise
        return EventStream(
            subscription,
            replay,
            self.host.plugins,
            keepalive=self.s.keepalive,
            send_timeout=self.s.send_timeout,
            attach=partial(self.host.attach, sid),
        )

    # -- helpers --------------------------------------------------------------------------------
    async def read_body(self, request: Request, *, required: bool) -> dict[str, object]:
        return await read_json(
            request, limit=self.s.max_body, timeout=self.s.body_timeout, required=required
        )

    async def resume_live(self, sid: str) -> LiveAgent:
        try:
            with storage_operation("resume"):
                return await self.host.resume_session(sid)
        except KeyError:
            raise ApiError("session_not_found", "no such session") from None
        except EventRejectedError as exc:
            raise ApiError("event_rejected", str(exc)) from None

    async def _not_live_elsewhere(self, sid: str) -> None:
        """409 for the stream of a Session another live host holds (it streams there)."""
        leases = self.host.leases
        with storage_operation("stream"):
            if leases is not None and await leases.live_elsewhere(sid):
                raise SessionLiveElsewhereError(f"session {sid} is live on another host")

    async def stored_session(self, sid: str, operation: str = "inspect") -> StoredSession:
        """The stored Session; 404 when storage has none, 503 when storage fails."""
        with storage_operation(operation):
            stored = await self.host.inspect(sid)
        if stored is None:
            raise ApiError("session_not_found", "no such session")
        return stored

    async def _replay(self, sid: str, last_seen: int | None) -> Replay:
        live = self.host.sessions.get(sid)
        if live is not None:
            # No await between subscribing and this snapshot: the queue holds exactly the
            # events from len(events) on.
            events: Sequence[Event] = live.events
            end = len(events)
            view_limit = self.host.persistence.durable_length(live)  # what is committed
            seed_length = live.header.seed_length or 0
        else:
            await self._not_live_elsewhere(sid)
            stored = await self.stored_session(sid)
            events = stored.events
            end = len(events)
            view_limit = end  # every stored event is committed
            seed_length = stored.header.seed_length or 0
        if last_seen is None:
            # Only what is appended after connecting; the queue holds nothing older.
            return Replay(events, range(0), view_limit, seed_length, floor=-1, session=live)
        start = min(last_seen + 1, end)
        # Anything at or below end - 1 is either known to the client or replayed here.
        return Replay(
            events, range(start, end), view_limit, seed_length, floor=end - 1, session=live
        )


def _time_zone(value: object) -> str:
    """A message's ``timeZone``: the user's IANA zone for that turn only (never stored)."""
    if not isinstance(value, str):
        raise ApiError("invalid_time_zone", "timeZone must be a string.")
    try:
        return canonical_time_zone(value)
    except InvalidTimeZoneError:
        raise ApiError("invalid_time_zone", _INVALID_ZONE) from None
