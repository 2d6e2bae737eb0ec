"""The Starlette application: routes, error answers and the guard, assembled by :func:`create_app`.

Routes::

    GET  /                               the browser page (index.html + renderer config)
    GET  /sw.js                          the service worker (Web Push notifications)
    GET  /static/<file>                  the browser client
    GET  /plugins/<plugin>/<asset>.js    a renderer module a plugin registered (.css: a stylesheet)
    GET  /api/sessions                   a page of the list, newest first (``limit``, ``after``)
    POST /api/sessions                   create a Session
    DELETE /api/sessions/{id}            delete a Session (its live turn stopped, its rows gone)
    POST /api/sessions/{id}/fork         fork               POST /api/sessions/{id}/resume
    POST /api/sessions/{id}/messages     send a message     POST /api/sessions/{id}/flush
    GET  /api/sessions/{id}/history      one history page   GET  /api/sessions/{id}/events  SSE
    GET  /api/sessions/{id}/views        plugin views       POST /api/sessions/{id}/name    rename
    POST /api/sessions/{id}/tools/{name} run an Agent tool as the user's action
    POST /api/sessions/{id}/turn/cancel  stop the running model turn (the Stop button)
    GET  /api/board                      one plugin's board rows of one kind, soonest first
    GET  /api/board/count                how many of them are after an instant
    GET  /api/notify                     the notification channels; is Web Push offered
    POST /api/notify/test                send a test notification on every channel
    POST /api/notify/push                add a browser's Web Push subscription
    DELETE /api/notify/push/{id}         remove one
    GET  /api/sessions/{id}/notices      the Session's outbox entries (sent, pending, failed)

Where each part lives: request parsing in :mod:`._requests`, the API handlers in
:mod:`._handlers`, the page and assets in :mod:`._assets`, every error answer in :mod:`._errors`,
the guard in front of ``/api`` in :mod:`._guard`, the event stream in :mod:`._stream` and its
data in :mod:`._sidecar`, plugin views and names in :mod:`._views`, user tool calls in
:mod:`._user_tools`, the board in :mod:`._board`, pages of the Session list in
:mod:`._session_list`, notification settings, Web Push and notices in :mod:`._notify`.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import structlog
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..core import LiveHost
from ._assets import Assets
from ._board import Board
from ._errors import DEFAULT_STORAGE_WAIT, ApiError, StorageWait, WebConfigError, error_response
from ._guard import RESPONSE_HEADERS, Guard, token_problem
from ._handlers import Api, Settings
from ._notify import Notify
from ._requests import MAX_BODY_BYTES
from ._sidecar import Sidecar
from ._user_tools import UserTools
from ._views import SessionViews

__all__ = ["MAX_BODY_BYTES", "check_options", "create_app"]

log = structlog.get_logger(__name__)

_HTTP_CODES = {
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


def check_options(
    *,
    token: str | None,
    keepalive: float,
    send_timeout: float,
    body_timeout: float,
    storage_wait: float = DEFAULT_STORAGE_WAIT,
) -> None:
    """Refuse options no app can run with (:class:`WebConfigError`, a :class:`ValueError`)."""
    problem = None if token is None else token_problem(token)
    if problem is not None:
        raise WebConfigError(
            f"the token must be a non-empty string of visible ASCII with no spaces around it "
            f"({problem})"
        )
    if not keepalive > 0 or not send_timeout > 0 or not body_timeout > 0:
        raise WebConfigError("keepalive, send_timeout and body_timeout must be positive")
    if not (storage_wait > 0 and math.isfinite(storage_wait)):
        raise WebConfigError("storage_wait must be positive and finite")


def create_app(
    host: LiveHost,
    *,
    sidecar: Sidecar,
    token: str | None = None,
    keepalive: float = 15.0,
    send_timeout: float = 30.0,
    max_body: int = MAX_BODY_BYTES,
    body_timeout: float = 10.0,
    storage_wait: float = DEFAULT_STORAGE_WAIT,
) -> Starlette:
    """The ASGI app for ``host``. ``sidecar`` is owned by the caller (close it on shutdown).

    ``keepalive``: seconds of stream silence before a ``: keep-alive`` comment. ``send_timeout``:
    seconds a stream write may wait for a client that stopped reading before the stream is
    abandoned. ``body_timeout``: seconds a request body may take to arrive (then 408 and the
    connection closes). ``storage_wait``: seconds a request waits for storage, all its storage
    calls together (then 503 ``storage_unavailable`` with ``Retry-After``). The app's
    ``state.web`` has ``closing`` (set it to refuse new API requests).
    """
    check_options(
        token=token,
        keepalive=keepalive,
        send_timeout=send_timeout,
        body_timeout=body_timeout,
        storage_wait=storage_wait,
    )
    settings = Settings(
        host=host,
        sidecar=sidecar,
        token=None if token is None else token.encode("utf-8"),
        keepalive=keepalive,
        send_timeout=send_timeout,
        max_body=max_body,
        body_timeout=body_timeout,
        storage=StorageWait(storage_wait),
    )
    api = Api(settings)
    views = SessionViews(api)
    user_tools = UserTools(api)
    board = Board(api)
    notify = Notify(api)
    assets = Assets(host.plugins)
    session = "/api/sessions/{id}"
    routes = [
        Route("/", assets.page, methods=["GET"]),
        Route("/sw.js", assets.service_worker, methods=["GET"]),
        Route("/static/{path:path}", assets.static, methods=["GET"]),
        Route("/plugins/{plugin}/{file}", assets.plugin_asset, methods=["GET"]),
        Route("/api/sessions", api.sessions, methods=["GET", "POST"]),
        Route(session, api.delete, methods=["DELETE"]),
        Route(f"{session}/fork", api.fork, methods=["POST"]),
        Route(f"{session}/resume", api.resume, methods=["POST"]),
        Route(f"{session}/messages", api.messages, methods=["POST"]),
        Route(f"{session}/flush", api.flush, methods=["POST"]),
        Route(f"{session}/turn/cancel", api.cancel_turn, methods=["POST"]),
        Route(f"{session}/history", api.history, methods=["GET"]),
        Route(f"{session}/events", api.events, methods=["GET"]),
        Route(f"{session}/views", views.views, methods=["GET"]),
        Route(f"{session}/name", views.rename, methods=["POST"]),
        Route(f"{session}/tools/{{name}}", user_tools.run, methods=["POST"]),
        Route("/api/board", board.page, methods=["GET"]),
        Route("/api/board/count", board.count, methods=["GET"]),
        Route(f"{session}/notices", notify.notices, methods=["GET"]),
        Route("/api/notify", notify.settings, methods=["GET"]),
        Route("/api/notify/test", notify.test, methods=["POST"]),
        Route("/api/notify/push", notify.subscribe, methods=["POST"]),
        Route("/api/notify/push/{id}", notify.unsubscribe, methods=["DELETE"]),
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
