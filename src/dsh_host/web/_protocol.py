"""The HTTP/1.1 connection protocol: uvicorn's h11 protocol with what this server adds.

* Each request's scope carries an abort callable (``scope["extensions"][ABORT]``): a response
  that gives up on its client (an event stream whose write stayed blocked) calls it, and the
  connection is reset at once. ``transport.close()`` would wait for the write buffer to drain,
  which a client that stopped reading never lets happen, so the descriptor and its buffers
  would stay for as long as the client likes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Callable
from typing import Any, Final, cast

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

#: The scope extension holding the connection's abort callable (no arguments, returns None).
ABORT: Final = "dsh.abort"

_LINGER_RESET: Final = struct.pack("ii", 1, 0)


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

    def _abort(self) -> None:
        if self.transport is not None:
            abort_transport(self.transport)


def _with_abort(app: ASGIApp, abort: Callable[[], None]) -> ASGIApp:
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        scope["extensions"] = {**scope.get("extensions", {}), ABORT: abort}
        await app(scope, receive, send)

    return wrapped
