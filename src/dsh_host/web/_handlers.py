"""The JSON API's handlers: Sessions (and deleting one), messages, flushes, stopping a turn,
history pages and event streams.

Each handler parses its request first (:mod:`._requests`; a refused request changes no Session),
then does one host operation. A storage failure anywhere in one is answered by
:func:`~._errors.storage_operation` with 503 ``storage_unavailable`` naming the operation, and
every wait for storage is bounded by the app's :class:`~._errors.StorageWait` (one deadline per
request, shared by its storage calls): past it the request answers 503 ``storage_unavailable``
at once, saying what became of it. The stream itself lives in :mod:`._stream`, its data in
:mod:`._sidecar`, history pages in :mod:`._history`, pages of the Session list in
:mod:`._session_list`.

The other route groups (:mod:`._views`, :mod:`._user_tools`) are :class:`Routes` on this same
:class:`Api`: they parse a request on one Session with :meth:`Api.session_request` or
:meth:`Api.session_post` and answer what a live Session refuses with :func:`session_refusals`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import (
    AgentDisposedError,
    Event,
    EventRejectedError,
    InvalidTimeZoneError,
    SessionNotLiveError,
    canonical_time_zone,
)

from ..core import ForkBoundaryError, LiveAgent, LiveHost
from ..persistence import SessionLiveElsewhereError, StoredSession
from ._errors import RETRY_LATER, ApiError, StorageWait, json_response
from ._history import DEFAULT_MAX_MESSAGES, MAX_MAX_MESSAGES, history_page
from ._requests import fields, last_event_id, query, read_json, session_id, uint
from ._session_list import PAGE_QUERY, list_page, page_request
from ._sidecar import Sidecar
from ._stream import EventStream, Replay
from ._viewdata import RowSummaries

_NO_QUERY = frozenset[str]()
_INVALID_ZONE = "timeZone must be UTC or a valid IANA Area/Location name."
#: What a request whose storage wait ran out says became of it (see :class:`StorageWait`).
_CREATE_LATE = "the session may still be created: look at the session list before creating another"
_FORK_LATE = "the fork may still be created: look at the session list before forking again"
_RESUME_LATE = "the session may still open; retry later"
_MESSAGE_LATE = "the message was not sent; send it again later"
_FLUSH_LATE = "the flush goes on and may still complete; flush again later to learn the outcome"
_DELETE_LATE = "the session may still be deleted: look at the session list before deleting again"


@dataclass(slots=True)
class Settings:
    """What one app runs with (``app.state.web``); set ``closing`` to refuse new API requests."""

    host: LiveHost
    sidecar: Sidecar
    token: bytes | None
    keepalive: float
    send_timeout: float
    max_body: int
    body_timeout: float = 10.0
    closing: bool = False
    #: How long a request waits for storage.
    storage: StorageWait = field(default_factory=StorageWait)


class Api:
    """The route handlers; one instance per app."""

    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.host = settings.host
        self.storage = settings.storage
        #: The list rows' names and badges (one cache per app).
        self.summaries = RowSummaries(settings.host)

    # -- Sessions ---------------------------------------------------------------------------------
    async def sessions(self, request: Request) -> Response:
        if request.method == "POST":
            query(request, _NO_QUERY)
            fields(await self.read_body(request, required=False), ())
            agent = await self.storage.run("create", self.host.create_session(), late=_CREATE_LATE)
            session = agent.session
            return json_response({"id": session.id, "header": session.header.to_json()}, 201)
        # One page, newest first (``limit``, ``after``): see ._session_list.
        after, limit = page_request(query(request, PAGE_QUERY))
        page = await self.storage.run("list", list_page(self.host, self.summaries, after, limit))
        return json_response(page)

    async def delete(self, request: Request) -> Response:
        """Delete a Session for good: ``{"deleted": true}``, 404 when there is none.

        A live one is stopped first (its turn cancelled, its Agent disposed); then storage
        removes its log, wake entries, board rows and name in one transaction. Its event
        streams end (a client that reconnects is told it is gone). Forks keep working."""
        sid, _ = await self.session_post(request)
        deleted = await self.storage.run("delete", self.host.delete_session(sid), late=_DELETE_LATE)
        self.summaries.forget(sid)
        if not deleted:
            raise ApiError("session_not_found", "no such session")
        self.s.sidecar.end_streams(sid)
        return json_response({"deleted": True})

    async def fork(self, request: Request) -> Response:
        sid, body = await self.session_post(request, ("boundary",))
        boundary = body.get("boundary")
        if "boundary" in body and type(boundary) is not int:
            raise ApiError("invalid_field", "boundary must be an integer")
        assert boundary is None or isinstance(boundary, int)
        try:
            # A cold parent is checked against its stored log first and stays cold if refused.
            with session_refusals():
                agent = await self.storage.run(
                    "fork", self.host.fork_session(sid, boundary), late=_FORK_LATE
                )
        except KeyError:
            raise ApiError("session_not_found", "no such session") from None
        except ForkBoundaryError as exc:
            raise ApiError("invalid_boundary", str(exc)) from None
        session = agent.session
        return json_response({"id": session.id, "header": session.header.to_json()}, 201)

    async def resume(self, request: Request) -> Response:
        sid, _ = await self.session_post(request)
        agent = await self.resume_live(sid, late=_RESUME_LATE)
        return json_response({"id": agent.session.id, "live": True})

    async def messages(self, request: Request) -> Response:
        sid, body = await self.session_post(request, ("text", "timeZone"), required=True)
        if "text" not in body:
            raise ApiError("missing_field", "text is required")
        text = body["text"]
        if not isinstance(text, str) or not text.strip():
            raise ApiError("invalid_field", "text must be a non-blank string")
        # Checked before the Session is touched: a refused zone resumes nothing.
        zone = _time_zone(body["timeZone"]) if "timeZone" in body else None
        agent = await self.resume_live(sid, late=_MESSAGE_LATE)
        try:
            agent.send(text, time_zone=zone)
        except AgentDisposedError:
            raise ApiError("session_unavailable", "the session is closing") from None
        return json_response({"accepted": True}, 202)

    async def flush(self, request: Request) -> Response:
        sid, _ = await self.session_post(request)
        session = self.host.sessions.get(sid)
        if session is None:
            # A cold Session is its stored log: everything it has is durable already, and
            # flushing must not activate it.
            stored = await self.stored_session(sid)
            return json_response({"durable": True, "throughSeq": len(stored.events)})
        through_seq = len(session.events)  # what this flush covers (captured at entry)
        with session_refusals():
            durable = await self.storage.run(
                "flush", self.host.sessions.flush(session), late=_FLUSH_LATE
            )
        return json_response({"durable": durable, "throughSeq": through_seq})

    async def cancel_turn(self, request: Request) -> Response:
        """Stop the Session's running model turn (the browser's Stop): ``{"cancelled": bool}``.

        Never resumes a cold Session: a cold Session runs no turn, so it answers ``false``
        (404 when there is no such Session, 409 when another live host holds it)."""
        sid, _ = await self.session_post(request)
        agent = self.host.agents.for_session(sid)
        if agent is None:
            deadline = self.storage.deadline()  # one storage wait for both reads
            await self._not_live_elsewhere(sid, "cancel", deadline=deadline)
            await self.stored_session(sid, deadline=deadline)
            return json_response({"cancelled": False})
        return json_response({"cancelled": agent.cancel_turn()})

    async def history(self, request: Request) -> Response:
        sid = session_id(request)
        params = query(request, frozenset({"beforeSeq", "maxMessages"}))
        before_seq = uint(params, "beforeSeq")
        max_messages = uint(params, "maxMessages")
        if max_messages is None:
            max_messages = DEFAULT_MAX_MESSAGES
        elif not 1 <= max_messages <= MAX_MAX_MESSAGES:
            raise ApiError("invalid_query", f"maxMessages must be in [1, {MAX_MAX_MESSAGES}]")
        # A live Session proves its stored prefix itself (a failed inspection only costs views;
        # one that does not answer in time is answered 503 like any other storage wait).
        deadline = self.storage.deadline()
        stored = None
        if self.host.sessions.get(sid) is None:
            stored = await self.stored_session(sid, "history", deadline=deadline)
        page = await self.storage.run(
            "history",
            history_page(self.host, sid, before_seq, max_messages, stored=stored),
            deadline=deadline,
        )
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
    def session_request(self, request: Request) -> str:
        """The Session id of a request on one Session that takes no query parameter."""
        sid = session_id(request)
        query(request, _NO_QUERY)
        return sid

    async def session_post(
        self, request: Request, allowed: tuple[str, ...] = (), *, required: bool = False
    ) -> tuple[str, dict[str, object]]:
        """:meth:`session_request` for a POST, with its JSON body: an object of the ``allowed``
        keys only (``required``: a body must be sent; otherwise none is ``{}``)."""
        sid = self.session_request(request)
        body = await self.read_body(request, required=required)
        fields(body, allowed)
        return sid, body

    async def read_body(self, request: Request, *, required: bool) -> dict[str, object]:
        return await read_json(
            request, limit=self.s.max_body, timeout=self.s.body_timeout, required=required
        )

    async def resume_live(
        self, sid: str, *, deadline: float | None = None, late: str = RETRY_LATER
    ) -> LiveAgent:
        """The Session's live root Agent (resumed when cold). ``late``: what the 503 says when
        storage does not answer by ``deadline`` (by default the storage wait from now)."""
        try:
            return await self.storage.run(
                "resume", self.host.resume_session(sid), deadline=deadline, late=late
            )
        except KeyError:
            raise ApiError("session_not_found", "no such session") from None
        except EventRejectedError as exc:
            raise ApiError("event_rejected", str(exc)) from None

    async def _not_live_elsewhere(
        self, sid: str, operation: str = "stream", *, deadline: float | None = None
    ) -> None:
        """409 for a cold Session another live host holds (it streams and runs turns there)."""
        if self.host.leases is not None:
            await self.storage.run(operation, self._refuse_elsewhere(sid), deadline=deadline)

    async def _refuse_elsewhere(self, sid: str) -> None:
        leases = self.host.leases
        assert leases is not None
        if await leases.live_elsewhere(sid):
            raise SessionLiveElsewhereError(f"session {sid} is live on another host")

    async def stored_session(
        self, sid: str, operation: str = "inspect", *, deadline: float | None = None
    ) -> StoredSession:
        """The stored Session; 404 when storage has none, 503 when storage fails or does not
        answer by ``deadline`` (by default the storage wait from now)."""
        stored = await self.storage.run(operation, self.host.inspect(sid), deadline=deadline)
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
            seed_length = live.header.owned_from
        else:
            deadline = self.storage.deadline()
            await self._not_live_elsewhere(sid, deadline=deadline)
            stored = await self.stored_session(sid, deadline=deadline)
            events = stored.events
            end = len(events)
            view_limit = end  # every stored event is committed
            seed_length = stored.header.owned_from
        if last_seen is None:
            # Only what is appended after connecting; the queue holds nothing older.
            return Replay(events, range(0), view_limit, seed_length, floor=-1, session=live)
        start = min(last_seen + 1, end)
        # Anything at or below end - 1 is either known to the client or replayed here.
        return Replay(
            events, range(start, end), view_limit, seed_length, floor=end - 1, session=live
        )


class Routes:
    """Route handlers beside :class:`Api` that share its request parsing, resume and storage
    wait; one instance per app."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.host = api.host


@contextlib.contextmanager
def session_refusals() -> Iterator[None]:
    """Answer what a live Session refuses inside the block: an event it refused is 409
    ``event_rejected``; a Session (or its Agent) closed meanwhile is 503 ``session_unavailable``."""
    try:
        yield
    except EventRejectedError as exc:
        raise ApiError("event_rejected", str(exc)) from None
    except (AgentDisposedError, SessionNotLiveError):
        raise ApiError("session_unavailable", "the session was closed meanwhile") from None


def _time_zone(value: object) -> str:
    """A message's ``timeZone``: the user's IANA zone for that turn only (never stored)."""
    if not isinstance(value, str):
        raise ApiError("invalid_time_zone", "timeZone must be a string.")
    try:
        return canonical_time_zone(value)
    except InvalidTimeZoneError:
        raise ApiError("invalid_time_zone", _INVALID_ZONE) from None
