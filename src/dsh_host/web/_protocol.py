"""The HTTP/1.1 connection protocol: uvicorn's h11 protocol with what this server adds.

* Each request's scope carries an abort callable (``scope["extensions"][ABORT]``): a response
  that gives up on its client (an event stream whose write stayed blocked) calls it, and the
  connection is reset at once. ``transport.close()`` would wait for the write buffer to drain,
  which a client that stopped reading never lets happen, so the descriptor and its buffers
  would stay for as long as the client likes.
* A request h11 cannot parse (a malformed request line or header, an oversized head) is answered
  with the API's JSON error shape (``bad_request``) and the guard's security headers, not
  uvicorn's plain-text "Invalid HTTP request received.", and the connection is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Callable
from typing import Any, Final, cast

import h11
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from ._guard import RESPONSE_HEADERS

#: The scope extension holding the connection's abort callable (no arguments, returns None).
ABORT: Final = "dsh.abort"

_LINGER_RESET: Final = struct.pack("ii", 1, 0)
_BAD_REQUEST_BODY: Final = (
    b'{"error":{"code":"bad_request","message":"the request is not valid HTTP/1.1"}}'
)


def abort_transport(transport: asyncio.BaseTransport) -> None:
    """Close ``transport`` now, discarding unsent data (a reset, not a graceful close)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        # Linger 0: the kernel drops the unsent bytes and answers with a reset, instead of
        # keeping them (and retrying) for a peer that does not read.
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
    cast(asyncio.WriteTransport, transport).abort()


class Protocol(H11Protocol):
    """One client connection (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.app = _with_abort(self.app, self._abort)

    def send_400_response(self, msg: str) -> None:
        del msg  # uvicorn's plain-text reason; the JSON body says the same
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(_BAD_REQUEST_BODY)).encode("ascii")),
            *((name.lower().encode(), value.encode()) for name, value in RESPONSE_HEADERS.items()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=_BAD_REQUEST_BODY),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _abort(self) -> None:
        if self.transport is not None:
            abort_transport(self.transport)


def _with_abort(app: ASGIApp, abort: Callable[[], None]) -> ASGIApp:
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        scope["extensions"] = {**scope.get("extensions", {}), ABORT: abort}
        await app(scope, receive, send)

    return wrapped
