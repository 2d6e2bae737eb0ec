"""The Web API's error answers: one JSON shape and a closed table of stable codes.

Every error body is ``{"error": {"code": "<code>", "message": "<text>"}}``. ``code`` is stable
(clients branch on it); ``message`` is for people and may change. Nothing a client sends is
answered with a 5xx: client mistakes are 4xx, storage trouble is 503, and ``internal_error`` is
only ever a bug in this host.

=====  ==========================  ==============================================================
HTTP   code                        when
=====  ==========================  ==============================================================
400    ``invalid_json``            the body is not one strict JSON document (malformed, not
                                   UTF-8, duplicate keys, NaN/Infinity, trailing data), or a
                                   required body is empty or arrived incomplete
400    ``bad_request``             any other request the HTTP layer itself refuses (also a
                                   malformed request line or header, answered by the protocol)
400    ``invalid_time_zone``       a message's ``timeZone`` that is not a string, or not ``UTC``
                                   or an IANA Area/Location zone the host's ``tzdata`` knows
401    ``unauthorized``            the server has a token and ``Authorization: Bearer <token>``
                                   is missing or wrong (every ``/api`` path)
403    ``forbidden_origin``        token-less server: a browser request whose ``Origin`` is not
                                   this server (cross-site request forgery)
403    ``forbidden_host``          token-less server: a ``Host`` header that is not a loopback
                                   name (DNS rebinding)
404    ``not_found``               no such route, static file or renderer asset
404    ``session_not_found``       no live or stored Session has that id
404    ``tool_not_found``          the Session's Agent has no tool of that name (a user action)
404    ``subscription_not_found``  no Web Push subscription has that id
405    ``method_not_allowed``      the route exists, the method does not (``Allow`` lists them)
408    ``request_timeout``         the request body did not arrive within the body time-out (the
                                   connection is closed)
409    ``event_rejected``          a plugin refused an event the request would append (e.g. the
                                   ``session/end-seed`` that opening a fork or a resume writes)
409    ``session_live_elsewhere``  several hosts share the database and another live host holds
                                   the Session's lease: send its writes and event streams to
                                   that host (route by Session id); history reads work anywhere
409    ``no_channels``             a test notification on a server with no notification channel
409    ``push_off``                a Web Push subscription on a server without Web Push (it needs
                                   ``dsh serve --public-url``)
413    ``body_too_large``          the body is over 1 MiB (checked while reading)
415    ``unsupported_media_type``  a body whose ``Content-Type`` is not ``application/json``
422    ``invalid_body``            the JSON body is not an object
422    ``unknown_field``           the body object has a key the endpoint does not define
422    ``missing_field``           a required body key is absent
422    ``invalid_field``           a body value has the wrong type or value (``true`` is not an
                                   integer; ``text`` must be a non-blank string)
422    ``invalid_query``           an unknown, repeated, missing or ill-typed query parameter,
                                   or a value out of range (``beforeSeq`` >= 0, ``maxMessages`` in
                                   [1, 500], a board's or the Session list's ``limit`` in
                                   [1, 200])
422    ``invalid_boundary``        a fork boundary outside ``[0, len(events)]`` or inside an open
                                   turn
422    ``invalid_last_event_id``   a ``Last-Event-ID`` header that is not a non-negative integer
422    ``invalid_arguments``       a user action's ``arguments`` that the tool's JSON schema
                                   refuses (the message names the first violation)
422    ``bad_cursor``              a board page's or a Session list page's ``after`` that is not
                                   a cursor this server made (start again from the first page)
422    ``invalid_subscription``    a Web Push subscription without an endpoint this host can send
                                   to or without its keys (the message says which)
503    ``storage_unavailable``     reading or writing storage failed, or storage did not answer
                                   within the app's storage wait (5 s by default); ``Retry-After``
                                   says when to retry. A write whose wait ran out may still
                                   complete, and its message says so
503    ``session_unavailable``     the Session's Agent was closing while the request ran
503    ``shutting_down``           the server is stopping
500    ``internal_error``          a bug in the host (logged with its traceback)
=====  ==========================  ==============================================================

Storage that stops answering (a PostgreSQL server that is stopped keeps its connections open and
answers neither a connection nor a query): :class:`StorageWait` bounds every request's wait for
storage. Past it the request answers 503 ``storage_unavailable`` at once, while the operation goes
on by itself (cancelling it would wait for the server too) and what it ends with is logged.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final, TypeVar

import structlog
from starlette.responses import Response

from dsh_hookspecs import JSONValue

from .. import _json
from ..persistence import SessionLiveElsewhereError, StorageError

log = structlog.get_logger(__name__)

_T = TypeVar("_T")

#: Seconds a request waits for storage by default (``dsh serve`` runs with it).
DEFAULT_STORAGE_WAIT: Final = 5.0
#: What a request whose storage wait ran out adds when retrying it is simply safe.
RETRY_LATER: Final = "retry later"

#: Every code this module may answer with, and its HTTP status.
ERROR_CODES: Final[Mapping[str, int]] = {
    "invalid_json": 400,
    "bad_request": 400,
    "invalid_time_zone": 400,
    "unauthorized": 401,
    "forbidden_origin": 403,
    "forbidden_host": 403,
    "not_found": 404,
    "session_not_found": 404,
    "tool_not_found": 404,
    "subscription_not_found": 404,
    "method_not_allowed": 405,
    "request_timeout": 408,
    "event_rejected": 409,
    "session_live_elsewhere": 409,
    "no_channels": 409,
    "push_off": 409,
    "body_too_large": 413,
    "unsupported_media_type": 415,
    "invalid_body": 422,
    "unknown_field": 422,
    "missing_field": 422,
    "invalid_field": 422,
    "invalid_query": 422,
    "invalid_boundary": 422,
    "invalid_last_event_id": 422,
    "invalid_arguments": 422,
    "bad_cursor": 422,
    "invalid_subscription": 422,
    "storage_unavailable": 503,
    "session_unavailable": 503,
    "shutting_down": 503,
    "internal_error": 500,
}


class WebConfigError(ValueError):
    """The Web server was configured unsafely or inconsistently (e.g. public without a token)."""


class ApiError(Exception):
    """Raised by a handler to answer with one error body; the status comes from the code."""

    def __init__(
        self, code: str, message: str, *, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def json_response(
    value: JSONValue, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """A strict-JSON answer (the guard marks it ``Cache-Control: no-store``)."""
    return Response(
        _json.dumps(value).encode("utf-8"),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def error_response(code: str, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return json_response({"error": {"code": code, "message": message}}, ERROR_CODES[code], headers)


#: What a failing storage read or write raises (a backend's error, or the file system's).
STORAGE_FAILURES: Final = (StorageError, OSError)


@contextmanager
def storage_operation(operation: str, *, retry_after: str | None = None) -> Iterator[None]:
    """Answer a storage failure inside the block with 503 ``storage_unavailable``, and a
    Session another live host holds (or took over meanwhile) with 409 ``session_live_elsewhere``.

    ``operation`` (``"create"``, ``"list"``, ...) is logged and named in the message, so a client
    and an operator both see which call storage refused. ``retry_after``: the 503's
    ``Retry-After`` (seconds). Anything else passes through.
    """
    try:
        yield
    except SessionLiveElsewhereError as exc:
        log.info("web.session_live_elsewhere", operation=operation, error=str(exc))
        raise ApiError(
            "session_live_elsewhere",
            "this session is live on another host; send its requests to that host "
            "(route by session id)",
        ) from None
    except STORAGE_FAILURES as exc:
        log.warning(
            "web.storage_failed", operation=operation, error=str(exc), error_type=type(exc).__name__
        )
        raise ApiError(
            "storage_unavailable",
            f"storage is unavailable ({operation}); retry later",
            headers=None if retry_after is None else {"Retry-After": retry_after},
        ) from None


class StorageWait:
    """How long a request waits for storage (one per app): :meth:`run` answers 503
    ``storage_unavailable`` with ``Retry-After`` once ``seconds`` have passed.

    The operation itself is not cancelled: it goes on in a task of its own (a write may still
    commit, a resume may still open its Session), is counted in :attr:`pending` until it ends,
    and what it ends with is logged (``web.storage_late_done`` / ``web.storage_late_failed``).
    """

    def __init__(self, seconds: float = DEFAULT_STORAGE_WAIT) -> None:
        self.seconds = seconds
        #: The ``Retry-After`` of every 503 ``storage_unavailable`` (whole seconds, at least 1).
        self.retry_after = str(max(1, math.ceil(seconds)))
        self._late: set[asyncio.Future[Any]] = set()

    @property
    def pending(self) -> int:
        """Operations whose request stopped waiting and that have not ended yet."""
        return len(self._late)

    def deadline(self) -> float:
        """When a request starting now stops waiting (event loop time): share it between the
        storage calls of one request, so that together they wait at most ``seconds``."""
        return asyncio.get_running_loop().time() + self.seconds

    async def run(
        self,
        operation: str,
        call: Awaitable[_T],
        *,
        deadline: float | None = None,
        late: str | Callable[[], str] = RETRY_LATER,
    ) -> _T:
        """``await call`` for at most until ``deadline`` (default: ``seconds`` from now).

        Its storage failures are answered as :func:`storage_operation` answers them. Past the
        deadline: 503 ``storage_unavailable`` saying storage did not answer in time, then
        ``late`` (or what ``late()`` returns, called at that moment): what became of the request,
        in plain words. A write must not claim that nothing happened.
        """
        loop = asyncio.get_running_loop()
        end = self.deadline() if deadline is None else deadline
        with storage_operation(operation, retry_after=self.retry_after):
            future = asyncio.ensure_future(call)
            try:
                done, _ = await asyncio.wait({future}, timeout=max(0.0, end - loop.time()))
                if done:
                    return future.result()
            finally:
                if not future.done():  # timed out, or this request was cancelled meanwhile
                    self._abandon(operation, future)
        consequence = late if isinstance(late, str) else late()
        log.warning("web.storage_timeout", operation=operation, seconds=self.seconds)
        raise ApiError(
            "storage_unavailable",
            f"storage did not answer within {self.seconds:g} s ({operation}); {consequence}",
            headers={"Retry-After": self.retry_after},
        )

    def _abandon(self, operation: str, future: asyncio.Future[Any]) -> None:
        self._late.add(future)

        def settled(done: asyncio.Future[Any]) -> None:
            self._late.discard(done)
            if done.cancelled():
                log.info("web.storage_late_cancelled", operation=operation)
            elif (exc := done.exception()) is not None:
                log.warning("web.storage_late_failed", operation=operation, error=repr(exc))
            else:
                log.info("web.storage_late_done", operation=operation)

        future.add_done_callback(settled)
