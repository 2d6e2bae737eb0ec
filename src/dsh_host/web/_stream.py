"""The ``text/event-stream`` response of one Session id.

Order on the wire: the response headers at once; then the replay (every event with seq above
``Last-Event-ID``, taken from a snapshot made *after* subscribing); then, with ``?views=1``, one
``event: views`` frame (the plugins' Session views of the snapshot's committed prefix); then
live frames from the
subscription (ephemeral ``event: stream`` frames among them, never replayed), and a
``: keep-alive`` comment after each ``keepalive`` seconds of silence.

De-duplication: the subscription was registered before the snapshot, so replay plus queue has no
gap, but both may hold the same seq (a cold Session read from storage while it was being resumed
and appended to). ``Replay.floor`` is the last seq the client has or the replay sent; raw live
frames at or below it are dropped. Late-view frames always pass: repeating a seq with its view is
their purpose, and the client upgrades the event in place.

Ending: the subscription closing (server stop, overflow) completes the response; a client
disconnect (seen by a watcher task that owns ``receive``) ends it silently; a write that stays
blocked for ``send_timeout`` abandons the client and resets its connection at once (through the
protocol's abort extension): a graceful close would wait for a client that does not read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import structlog
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from dsh_hookspecs import Event, TaskSlot

from ..core import LiveSession, PluginManager
from ._present import present
from ._protocol import ABORT
from ._sidecar import StreamFrame, Subscription, SubscriptionClosedError, ViewsFrame, encode_frame
from ._viewdata import encode_views_frame, views_payload

log = structlog.get_logger(__name__)

SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"x-accel-buffering", b"no"),
]
KEEPALIVE: Final = b": keep-alive\n\n"


@dataclass(frozen=True, slots=True)
class Replay:
    """What a reconnecting stream sends before live frames, and the de-duplication floor."""

    events: Sequence[Event]
    seqs: range
    view_limit: int
    seed_length: int
    #: Raw live frames with ``seq <= floor`` are already known to the client or replayed.
    floor: int
    #: The live Session whose log ``events`` is; ``None`` for a stored log.
    session: LiveSession | None = None


class EventStream(Response):
    """``text/event-stream`` for one Session id: replay, then live frames and keep-alives."""

    def __init__(
        self,
        subscription: Subscription,
        replay: Replay,
        plugins: PluginManager,
        *,
        keepalive: float,
        send_timeout: float,
        attach: Callable[[], Callable[[], None]] | None = None,
    ) -> None:
        """``attach()`` is called while the stream runs (it keeps the Session from idle
        eviction) and returns its release."""
        # Deliberately not Response.__init__: this response writes its own headers and body.
        self.status_code = 200
        self.background = None
        self._subscription = subscription
        self._replay = replay
        self._plugins = plugins
        self._keepalive = keepalive
        self._send_timeout = send_timeout
        self._abort: Callable[[], None] | None = None
        self._attach = attach

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        subscription = self._subscription
        self._abort = scope.get("extensions", {}).get(ABORT)
        release = self._attach() if self._attach is not None else None
        try:
            # Headers go out at once, so a client knows it is attached before any event.
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            if scope["method"] == "HEAD":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            # The watcher owns ``receive`` while the pump owns ``send``; it lives as long as
            # the pump (a TaskGroup would turn a watcher failure into the stream's failure).
            watcher = TaskSlot("dsh-web-stream-watcher")
            watcher.start(lambda: _watch(receive, subscription))
            try:
                complete = await self._pump(send)
            finally:
                await watcher.stop()
            if complete:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            subscription.close("done")
            if release is not None:
                release()

    async def _pump(self, send: Send) -> bool:
        """Send replay then live frames; False when the client stopped taking them."""
        replay, subscription = self._replay, self._subscription
        for seq in replay.seqs:
            if subscription.closed:
                return subscription.reason != "disconnected"
            event = replay.events[seq]
            view = (
                present(self._plugins, replay.events, seq, replay.seed_length, replay.session)
                if seq < replay.view_limit
                else None
            )
            if not await self._send(send, encode_frame(event, view)):
                return False
        if subscription.views:
            if subscription.closed:
                return subscription.reason != "disconnected"
            # The plugin views of what the snapshot had committed (a flush pushes later ones).
            committed = replay.events[: replay.view_limit]
            payload = views_payload(self._plugins, committed, replay.seed_length, replay.session)
            if not await self._send(send, encode_views_frame(payload)):
                return False
        while True:
            try:
                frame = await subscription.get(self._keepalive)
            except SubscriptionClosedError:
                return True
            if frame is None:
                data = KEEPALIVE
            elif isinstance(frame, StreamFrame | ViewsFrame):
                data = frame.data  # no seq, nothing to de-duplicate
            elif frame.late or frame.event.seq > replay.floor:
                data = frame.data
            else:
                continue  # already replayed from the snapshot
            if not await self._send(send, data):
                return False

    async def _send(self, send: Send, data: bytes) -> bool:
        try:
            async with asyncio.timeout(self._send_timeout):
                await send({"type": "http.response.body", "body": data, "more_body": True})
        except TimeoutError:
            # The client stopped reading: give up on it and free the connection now.
            log.warning("web.stream_send_timeout", session_id=self._subscription.session_id)
            self._subscription.close("overflow")
            if self._abort is not None:
                self._abort()
            return False
        except OSError:
            self._subscription.close("disconnected")
            return False
        return True


async def _watch(receive: Receive, subscription: Subscription) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            subscription.close("disconnected")
            return
