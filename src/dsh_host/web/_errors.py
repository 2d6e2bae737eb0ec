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
405    ``method_not_allowed``      the route exists, the method does not (``Allow`` lists them)
408    ``request_timeout``         the request body did not arrive within the body time-out (the
                                   connection is closed)
409    ``event_rejected``          a plugin refused an event the request would append (e.g. the
                                   ``session/end-seed`` that opening a fork or a resume writes)
409    ``session_live_elsewhere``  several hosts share the database and another live host holds
                                   the Session's lease: send its writes and event streams to
                                   that host (route by Session id); history reads work anywhere
413    ``body_too_large``          the body is over 1 MiB (checked while reading)
415    ``unsupported_media_type``  a body whose ``Content-Type`` is not ``application/json``
422    ``invalid_body``            the JSON body is not an object
422    ``unknown_field``           the body object has a key the endpoint does not define
422    ``missing_field``           a required body key is absent
422    ``invalid_field``           a body value has the wrong type or value (``true`` is not an
                                   integer; ``text`` must be a non-blank string)
422    ``invalid_query``           an unknown, repeated or ill-typed query parameter, or a value
                                   out of range (``beforeSeq`` >= 0, ``maxMessages`` in [1, 500])
422    ``invalid_boundary``        a fork boundary outside ``[0, len(events)]`` or inside an open
                                   turn
422    ``invalid_last_event_id``   a ``Last-Event-ID`` header that is not a non-negative integer
422    ``invalid_arguments``       a user action's ``arguments`` that the tool's JSON schema
                                   refuses (the message names the first violation)
503    ``storage_unavailable``     reading or writing storage failed (the request may be retried)
503    ``session_unavailable``     the Session's Agent was closing while the request ran
503    ``shutting_down``           the server is stopping
500    ``internal_error``          a bug in the host (logged with its traceback)
=====  ==========================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Final

import structlog
from starlette.responses import Response

from dsh_hookspecs import JSONValue

from .. import _json
from ..persistence import SessionLiveElsewhereError, StorageError

log = structlog.get_logger(__name__)

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
    "method_not_allowed": 405,
    "request_timeout": 408,
    "event_rejected": 409,
    "session_live_elsewhere": 409,
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
def storage_operation(operation: str) -> Iterator[None]:
    """Answer a storage failure inside the block with 503 ``storage_unavailable``, and a
    Session another live host holds (or took over meanwhile) with 409 ``session_live_elsewhere``.

    ``operation`` (``"create"``, ``"list"``, ...) is logged and named in the message, so a client
    and an operator both see which call storage refused. Anything else passes through.
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
            "storage_unavailable", f"storage is unavailable ({operation}); retry later"
        ) from None
