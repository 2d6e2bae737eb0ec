"""The Starlette application: the JSON API, the event streams, the page and its static files.

Routes (DESIGN section 4)::

    GET  /                               the browser page (index.html + renderer config)
    GET  /static/<file>                  the browser client
    GET  /plugins/<plugin>/<asset>.js    a renderer module a plugin registered
    GET  /api/sessions                   list               POST /api/sessions           create
    POST /api/sessions/{id}/fork         fork               POST /api/sessions/{id}/resume
    POST /api/sessions/{id}/messages     send a message     POST /api/sessions/{id}/flush
    GET  /api/sessions/{id}/history      one history page   GET  /api/sessions/{id}/events  SSE

Input is strict: unknown fields, unknown query parameters, wrong JSON types and malformed JSON
are refused before anything runs (see :mod:`._errors` for every answer a client can get), and a
refused request changes no Session. Everything under ``/api`` passes :mod:`._guard` first. The
event stream itself lives in :mod:`._stream`, its data in :mod:`._sidecar`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote

import structlog
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from dsh_hookspecs import (
    AgentDisposedError,
    Event,
    EventRejectedError,
    JSONValue,
    SessionNotLiveError,
)

from .. import _json
from .._agent import LiveAgent
from .._host import Host
from .._session import ForkBoundaryError
from ..persistence import StorageError, StoredSession
from ._errors import ApiError, error_response, json_response
from ._guard import RESPONSE_HEADERS, Guard
from ._history import DEFAULT_MAX_MESSAGES, MAX_MAX_MESSAGES, history_page
from ._sidecar import Sidecar
from ._stream import EventStream, Replay

log = structlog.get_logger(__name__)

#: Largest request body accepted (bytes); larger bodies are refused while they are read.
MAX_BODY_BYTES: Final = 1024 * 1024
#: The folder of the browser client.
STATIC_DIR: Final = Path(__file__).resolve().parent / "static"
CONFIG_PLACEHOLDER: Final = "<!--DSH_CONFIG-->"

_SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_UINT = re.compile(r"[0-9]{1,18}")
_CONTENT_TYPES: Final = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}
#: Asset files may change between runs of a development checkout: always revalidate.
_ASSET_HEADERS: Final = {"Cache-Control": "no-cache"}
_STORAGE_FAILURES: Final = (StorageError, OSError)


@dataclass(slots=True)
class _Settings:
    host: Host
    sidecar: Sidecar
    token: bytes | None
    keepalive: float
    send_timeout: float
    max_body: int
    body_timeout: float = 10.0
    closing: bool = False


# -- request parsing ------------------------------------------------------------------------------


def _brief(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _session_id(request: Request) -> str:
    session_id: str = request.path_params["id"]
    if _SESSION_ID.fullmatch(session_id) is None:
        raise ApiError("session_not_found", "no such session")
    return session_id


def _query(request: Request, allowed: frozenset[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in allowed:
            raise ApiError("invalid_query", f"unknown query parameter {_brief(key)}")
        if key in out:
            raise ApiError("invalid_query", f"query parameter {key} is repeated")
        out[key] = value
    return out


def _uint(query: dict[str, str], key: str) -> int | None:
    value = query.get(key)
    if value is None:
        return None
    if _UINT.fullmatch(value) is None:
        raise ApiError("invalid_query", f"{key} must be a non-negative integer")
    return int(value)


async def _read_json(request: Request, settings: _Settings, *, required: bool) -> dict[str, object]:
    """The body as a JSON object; an empty optional body is ``{}``. Size-checked while read."""
    limit = settings.max_body
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError("body_too_large", f"the body is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        # A body that stops arriving must not hold its connection: bound the whole read.
        async with asyncio.timeout(settings.body_timeout):
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
            f"the request body did not arrive within {settings.body_timeout:g} s",
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


def _fields(body: dict[str, object], allowed: Sequence[str]) -> None:
    for key in body:
        if key not in allowed:
            raise ApiError("unknown_field", f"unknown field {_brief(key)}")


# -- the application ------------------------------------------------------------------------------


class _Api:
    """The route handlers; one instance per app."""

    def __init__(self, settings: _Settings) -> None:
        self.s = settings
        self.host = settings.host
        self.template = (STATIC_DIR / "index.html").read_text(encoding="utf-8")

    # -- Sessions ---------------------------------------------------------------------------------
    async def sessions(self, request: Request) -> Response:
        _query(request, frozenset())
        if request.method == "POST":
            _fields(await _read_json(request, self.s, required=False), ())
            try:
                agent = await self.host.create_session()
            except _STORAGE_FAILURES as exc:
                raise _storage_failed("create", exc) from None
            session = agent.session
            return json_response({"id": session.id, "header": session.header.to_json()}, 201)
        try:
            rows: list[JSONValue] = list(await self.host.list_sessions())
        except _STORAGE_FAILURES as exc:
            raise _storage_failed("list", exc) from None
        return json_response({"sessions": rows})

    async def fork(self, request: Request) -> Response:
        session_id = _session_id(request)
        _query(request, frozenset())
        body = await _read_json(request, self.s, required=False)
        _fields(body, ("boundary",))
        boundary = body.get("boundary")
        if "boundary" in body and type(boundary) is not int:
            raise ApiError("invalid_field", "boundary must be an integer")
        assert boundary is None or isinstance(boundary, int)
        try:
            # A cold parent is checked against its stored log first and stays cold if refused.
            agent = await self.host.fork_session(session_id, boundary)
        except KeyError:
            raise ApiError("session_not_found", "no such session") from None
        except ForkBoundaryError as exc:
            raise ApiError("invalid_boundary", str(exc)) from None
        except EventRejectedError as exc:
            raise ApiError("event_rejected", str(exc)) from None
        except SessionNotLiveError:
            raise ApiError("session_unavailable", "the session was closed meanwhile") from None
        except _STORAGE_FAILURES as exc:
            raise _storage_failed("fork", exc) from None
        session = agent.session
        return json_response({"id": session.id, "header": session.header.to_json()}, 201)

    async def resume(self, request: Request) -> Response:
        session_id = _session_id(request)
        _query(request, frozenset())
        _fields(await _read_json(request, self.s, required=False), ())
        agent = await self._resume(session_id)
        return json_response({"id": agent.session.id, "live": True})

    async def messages(self, request: Request) -> Response:
        session_id = _session_id(request)
        _query(request, frozenset())
        body = await _read_json(request, self.s, required=True)
        _fields(body, ("text",))
        if "text" not in body:
            raise ApiError("missing_field", "text is required")
        text = body["text"]
        if not isinstance(text, str) or not text.strip():
            raise ApiError("invalid_field", "text must be a non-blank string")
        agent = await self._resume(session_id)
        try:
            agent.send(text)
        except AgentDisposedError:
            raise ApiError("session_unavailable", "the session is closing") from None
        return json_response({"accepted": True}, 202)

    async def flush(self, request: Request) -> Response:
        session_id = _session_id(request)
        _query(request, frozenset())
        _fields(await _read_json(request, self.s, required=False), ())
        session = self.host.sessions.get(session_id)
        if session is None:
            # A cold Session is its stored log: everything it has is durable already, and
            # flushing must not activate it.
            stored = await self._stored(session_id)
            return json_response({"durable": True, "throughSeq": len(stored.events)})
        through_seq = len(session.events)  # what this flush covers (captured at entry)
        try:
            durable = await self.host.sessions.flush(session)
        except SessionNotLiveError:
            raise ApiError("session_unavailable", "the session was closed meanwhile") from None
        except _STORAGE_FAILURES as exc:
            raise _storage_failed("flush", exc) from None
        return json_response({"durable": durable, "throughSeq": through_seq})

    async def history(self, request: Request) -> Response:
        session_id = _session_id(request)
        query = _query(request, frozenset({"beforeSeq", "maxMessages"}))
        before_seq = _uint(query, "beforeSeq")
        max_messages = _uint(query, "maxMessages")
        if max_messages is None:
            max_messages = DEFAULT_MAX_MESSAGES
        elif not 1 <= max_messages <= MAX_MAX_MESSAGES:
            raise ApiError("invalid_query", f"maxMessages must be in [1, {MAX_MAX_MESSAGES}]")
        # A live Session proves its stored prefix itself (a failed inspection only costs views).
        stored = None
        if self.host.sessions.get(session_id) is None:
            stored = await self._stored(session_id, "history")
        page = await history_page(self.host, session_id, before_seq, max_messages, stored=stored)
        assert page is not None  # live, or read from storage above
        return json_response(page)

    async def events(self, request: Request) -> Response:
        session_id = _session_id(request)
        _query(request, frozenset())
        last_event_id = _last_event_id(request)
        # Subscribe before the snapshot: every append from now on is queued, so replay plus
        # queue has no gap; the floor then drops what both contain.
        subscription = self.s.sidecar.subscribe(session_id)
        try:
            replay = await self._replay(session_id, last_event_id)
        except BaseException:
            subscription.close("done")
            raise
        return EventStream(
            subscription,
            replay,
            self.s.sidecar.present,
            keepalive=self.s.keepalive,
            send_timeout=self.s.send_timeout,
        )

    # -- helpers --------------------------------------------------------------------------------
    async def _resume(self, session_id: str) -> LiveAgent:
        try:
            return await self.host.resume_session(session_id)
        except KeyError:
            raise ApiError("session_not_found", "no such session") from None
        except EventRejectedError as exc:
            raise ApiError("event_rejected", str(exc)) from None
        except _STORAGE_FAILURES as exc:
            raise _storage_failed("resume", exc) from None

    async def _stored(self, session_id: str, operation: str = "inspect") -> StoredSession:
        """The stored Session; 404 when storage has none, 503 when storage fails."""
        try:
            stored = await self.host.inspect(session_id)
        except _STORAGE_FAILURES as exc:
            raise _storage_failed(operation, exc) from None
        if stored is None:
            raise ApiError("session_not_found", "no such session")
        return stored

    async def _replay(self, session_id: str, last_event_id: int | None) -> Replay:
        live = self.host.sessions.get(session_id)
        if live is not None:
            # No await between subscribing and this snapshot: the queue holds exactly the
            # events from len(events) on.
            events: Sequence[Event] = live.events
            end = len(events)
            view_limit = self.s.sidecar.watermark(live)
            seed_length = live.header.seed_length or 0
        else:
            stored = await self._stored(session_id)
            events = stored.events
            end = len(events)
            view_limit = end  # every stored event is committed
            seed_length = stored.header.seed_length or 0
        if last_event_id is None:
            # Only what is appended after connecting; the queue holds nothing older.
            return Replay(events, range(0), view_limit, seed_length, floor=-1)
        start = min(last_event_id + 1, end)
        # Anything at or below end - 1 is either known to the client or replayed here.
        return Replay(events, range(start, end), view_limit, seed_length, floor=end - 1)

    # -- page and assets ------------------------------------------------------------------------
    async def page(self, request: Request) -> Response:
        del request  # ?session= and ?token= are read by the page itself
        config: JSONValue = {"renderers": self._renderers()}
        tag = f'<script id="dsh-config" type="application/json">{_script_json(config)}</script>'
        html = self.template.replace(CONFIG_PLACEHOLDER, tag, 1)
        return Response(html, media_type="text/html; charset=utf-8")

    def _renderers(self) -> list[JSONValue]:
        out: list[JSONValue] = []
        seen: set[tuple[str, str]] = set()
        for plugin, asset in self.host.plugins.renderer_assets():
            name = asset.name
            types = list(asset.event_types)
            if (
                not _asset_name_ok(plugin)
                or not _asset_name_ok(name)
                or not all(isinstance(t, str) for t in types)
            ):
                log.error("web.bad_renderer_asset", plugin=plugin, asset=repr(name))
                continue
            if (plugin, name) in seen:
                continue
            seen.add((plugin, name))
            url = f"/plugins/{quote(plugin, safe='')}/{quote(name, safe='')}.js"
            out.append({"plugin": plugin, "url": url, "eventTypes": list(types)})
        return out

    async def plugin_asset(self, request: Request) -> Response:
        plugin: str = request.path_params["plugin"]
        file: str = request.path_params["file"]
        if file.endswith(".js"):
            name = file[: -len(".js")]
            for owner, asset in self.host.plugins.renderer_assets():
                if owner == plugin and asset.name == name:
                    return await _file(Path(asset.path), _CONTENT_TYPES[".js"])
        raise ApiError("not_found", "no such renderer asset")

    async def static(self, request: Request) -> Response:
        relative: str = request.path_params["path"]
        parts = relative.split("/")
        if any(not part or part.startswith(".") or "\\" in part or "\0" in part for part in parts):
            raise ApiError("not_found", "no such file")
        root = STATIC_DIR
        path = root.joinpath(*parts).resolve()
        content_type = _CONTENT_TYPES.get(path.suffix.lower())
        if content_type is None or not path.is_relative_to(root):
            raise ApiError("not_found", "no such file")
        return await _file(path, content_type)


def _last_event_id(request: Request) -> int | None:
    values = request.headers.getlist("last-event-id")
    if not values or values == [""]:
        return None  # an empty id resets the client's last id: like no header at all
    if len(values) != 1 or _UINT.fullmatch(values[0]) is None:
        raise ApiError("invalid_last_event_id", "Last-Event-ID must be a non-negative integer")
    return int(values[0])


def _storage_failed(operation: str, exc: BaseException) -> ApiError:
    log.warning(
        "web.storage_failed", operation=operation, error=str(exc), error_type=type(exc).__name__
    )
    return ApiError("storage_unavailable", f"storage is unavailable ({operation}); retry later")


def _asset_name_ok(name: object) -> bool:
    return isinstance(name, str) and bool(name) and "/" not in name and "\\" not in name


def _script_json(value: JSONValue) -> str:
    # Inside <script> only "</script" or "<!--" could end or confuse the element; JSON never
    # needs a raw "<", ">" or "&", so escaping them keeps the data inert wherever it sits.
    text = _json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


async def _file(path: Path, content_type: str) -> Response:
    try:
        data = await asyncio.to_thread(path.read_bytes)
    except OSError:
        log.info("web.asset_unreadable", path=str(path))
        raise ApiError("not_found", "no such file") from None
    return Response(data, media_type=content_type, headers=_ASSET_HEADERS)


# -- assembly -------------------------------------------------------------------------------------

_HTTP_CODES: Final = {
    404: ("not_found", "no such route"),
    405: ("method_not_allowed", "method not allowed here"),
}


async def _api_error(request: Request, exc: Exception) -> Response:
    del request
    assert isinstance(exc, ApiError)
    return error_response(exc.code, exc.message, exc.headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Errors the framework itself raises (routing): the same JSON shape as ours."""
    del request
    assert isinstance(exc, HTTPException)
    code, message = _HTTP_CODES.get(exc.status_code, ("bad_request", "bad request"))
    return error_response(code, message, exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Runs in Starlette's outermost middleware, outside the guard: it sets the guard's headers."""
    log.error(
        "web.internal_error",
        method=request.method,
        path=request.url.path,
        error=repr(exc),
        exc_info=exc,
    )
    return error_response("internal_error", "internal error", RESPONSE_HEADERS)


def create_app(
    host: Host,
    *,
    sidecar: Sidecar,
    token: str | None = None,
    keepalive: float = 15.0,
    send_timeout: float = 30.0,
    max_body: int = MAX_BODY_BYTES,
    body_timeout: float = 10.0,
) -> Starlette:
    """The ASGI app for ``host``. ``sidecar`` is owned by the caller (close it on shutdown).

    ``keepalive``: seconds of stream silence before a ``: keep-alive`` comment. ``send_timeout``:
    seconds a stream write may wait for a client that stopped reading before the stream is
    abandoned. ``body_timeout``: seconds a request body may take to arrive (then 408 and the
    connection closes). The app's ``state.web`` has ``closing`` (set it to refuse new API
    requests).
    """
    if token == "":
        raise ValueError("token must be a non-empty string")
    if not keepalive > 0 or not send_timeout > 0 or not body_timeout > 0:
        raise ValueError("keepalive, send_timeout and body_timeout must be positive")
    settings = _Settings(
        host=host,
        sidecar=sidecar,
        token=None if token is None else token.encode("utf-8"),
        keepalive=keepalive,
        send_timeout=send_timeout,
        max_body=max_body,
        body_timeout=body_timeout,
    )
    api = _Api(settings)
    session = "/api/sessions/{id}"
    routes = [
        Route("/", api.page, methods=["GET"]),
        Route("/static/{path:path}", api.static, methods=["GET"]),
        Route("/plugins/{plugin}/{file}", api.plugin_asset, methods=["GET"]),
        Route("/api/sessions", api.sessions, methods=["GET", "POST"]),
        Route(f"{session}/fork", api.fork, methods=["POST"]),
        Route(f"{session}/resume", api.resume, methods=["POST"]),
        Route(f"{session}/messages", api.messages, methods=["POST"]),
        Route(f"{session}/flush", api.flush, methods=["POST"]),
        Route(f"{session}/history", api.history, methods=["GET"]),
        Route(f"{session}/events", api.events, methods=["GET"]),
    ]
    handlers: dict[type[Exception], Callable[[Request, Exception], Awaitable[Response]]] = {
        ApiError: _api_error,
        HTTPException: _http_error,
        Exception: _internal_error,
    }
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, token=settings.token, closing=lambda: settings.closing)],
        exception_handlers=handlers,
    )
    # "/api/sessions/" is not "/api/sessions": answer 404 rather than redirect.
    app.router.redirect_slashes = False
    app.state.web = settings
    return app
