"""The commit-gated event sidecar: raw events on append, presented views only after commit.

Two observations of the :class:`~dsh_host.LiveSessionStore` (its one subscription, see
:mod:`dsh_host._observations` for the order they arrive in) feed the event streams:

* every append is fanned out at once, raw, to the subscribers of that Session id (an append is
  never durability evidence, so it never carries a presented view);
* every ``session/flushed(session, through_seq)`` may move what is committed. The one authority
  on that is the persistence coordinator (``LiveSessionStore.durable_length``, which reads
  ``host.persistence.durable_length``): the stored length of a resumed Session, 0 for a created
  or forked one until its first acknowledged flush, then the maximum acknowledged
  ``through_seq``, advanced before this subscriber runs. For each seq it newly covers the plugins'
  ``dsh_event_present`` is asked for a view; when there is one the *identical* event is sent
  again with ``{"for": "event", "view": view}`` (a late view). A rejected or unacknowledged
  flush publishes nothing, so its views wait for a later successful one.

To send each late view once, the sidecar remembers per exact live Session object (a
``WeakKeyDictionary``: a Session id that is resumed again gets a new object, never another
lifecycle's) how far its late views went: the durable length when it opened (a resume does not
re-broadcast historical receipts; a fork seed is not the child's storage until the child's own
flush proves it, so an inherited receipt appears after that flush), then each durable length a
flush reached. That is the sidecar's own progress, not a second answer to "what is committed": a
flush that completes late, below the durable length, sends nothing. A Session the sidecar never
saw open starts at 0, which at worst re-sends views the client upgrades in place.

After the late views of a flush, the Session's plugin views (``dsh_session_views`` over the
committed prefix) go out as one ``event: views`` frame to the subscribers that asked for them
(``?views=1``) when they differ from the last ones sent.

Each subscriber has a bounded queue. One that falls too far behind is closed (its stream ends and
the client reconnects with ``Last-Event-ID``): memory never grows with a slow reader.

Ephemeral frames (the store's stream observation: assistant text while a turn generates it) go
to the subscribers of that Session id as ``event: stream`` frames with no ``id:`` line, so
``Last-Event-ID`` never moves because of them and a reconnect never replays them; they are
never stored. The pieces of one message in progress (from its first piece to the next
``assistant/message``, ``turn/start`` or ``turn/end``: a *segment*) reach only the subscribers
that were there when its first piece was sent, so nobody sees a message from its middle. They
have their own bound per subscriber (``stream_queue_size``), outside the durable one: a
subscriber with that many undelivered pieces queued gets no more pieces of that segment (its
client keeps the prefix it has until the durable message replaces it) and follows the next
segment again; its stream stays open and durable frames keep their guarantee.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast

import structlog

from dsh_hookspecs import Event, JSONValue

from .. import _json
from .._observations import Appended, Flushed, Opened, Streamed
from ..core import LiveSession, LiveSessionStore, PluginManager
from ._present import present
from ._viewdata import encode_views_frame, views_payload

log = structlog.get_logger(__name__)

#: Default bound of undelivered frames per subscriber.
DEFAULT_QUEUE_SIZE: Final = 1024
#: Default bound of undelivered ephemeral frames (streamed pieces) per subscriber.
DEFAULT_STREAM_QUEUE_SIZE: Final = 256
#: An event of these types ends the message in progress: later pieces start a new segment.
SEGMENT_ENDS: Final = frozenset({"assistant/message", "turn/start", "turn/end"})

CloseReason = Literal["disconnected", "overflow", "shutdown", "done"]


@dataclass(frozen=True, slots=True)
class Frame:
    """One event on the wire. ``view`` is the whole sidecar (``{"for": "event", "view": ...}``).

    ``late`` marks a view re-sent after a commit: such frames bypass the replay de-duplication,
    because their purpose is to repeat a seq the client already has.
    """

    event: Event
    view: JSONValue | None
    late: bool
    data: bytes


def encode_frame(event: Event, view: JSONValue | None) -> bytes:
    """``id: <seq>`` and one ``data:`` line (strict JSON never contains a raw line break)."""
    message: dict[str, JSONValue] = {"event": event.to_json()}
    if view is not None:
        message["view"] = view
    return b"id: %d\ndata: %s\n\n" % (event.seq, _json.dumps(message).encode("utf-8"))


def make_frame(event: Event, view: JSONValue | None = None, *, late: bool = False) -> Frame:
    return Frame(event=event, view=view, late=late, data=encode_frame(event, view))


class Segment:
    """One message in progress of one live Session: the pieces from its first to its end."""

    __slots__ = ("message_id",)

    def __init__(self, message_id: JSONValue) -> None:
        self.message_id = message_id


@dataclass(frozen=True, slots=True)
class StreamFrame:
    """One ephemeral frame: ``event: stream`` and one ``data:`` line, no ``id:``."""

    segment: Segment
    data: bytes


def encode_stream_frame(payload: Mapping[str, JSONValue]) -> bytes:
    """``event: stream`` and ``data: {"stream": payload}``; no ``id:`` line (never resumed)."""
    message: dict[str, JSONValue] = {"stream": dict(payload)}
    return b"event: stream\ndata: %s\n\n" % _json.dumps(message).encode("utf-8")


@dataclass(frozen=True, slots=True)
class ViewsFrame:
    """The Session's plugin views after a flush changed them: ``event: views``, no ``id:``.

    Queued as a durable frame (inside the subscriber's bound), never de-duplicated by seq."""

    data: bytes


class SubscriptionClosedError(Exception):
    """The subscription ended and every queued frame was delivered."""

    def __init__(self, reason: CloseReason) -> None:
        super().__init__(reason)
        self.reason: CloseReason = reason


class Subscription:
    """The frames for one stream of one Session id, in a bounded queue."""

    __slots__ = (
        "_durable",
        "_frames",
        "_maxsize",
        "_on_close",
        "_pieces",
        "_ready",
        "_stream_maxsize",
        "reason",
        "segment",
        "session_id",
        "views",
    )

    def __init__(
        self,
        session_id: str,
        maxsize: int,
        on_close: Callable[[Subscription], None],
        stream_maxsize: int = DEFAULT_STREAM_QUEUE_SIZE,
        *,
        views: bool = False,
    ) -> None:
        self.session_id = session_id
        #: Whether this stream takes ``event: views`` frames (``?views=1``).
        self.views = views
        self._maxsize = maxsize
        self._stream_maxsize = stream_maxsize
        self._frames: deque[Frame | StreamFrame | ViewsFrame] = deque()
        self._durable = 0  # how many of ``_frames`` are durable frames
        self._pieces = 0  # and how many are ephemeral ones
        self._ready = asyncio.Event()
        self._on_close = on_close
        #: Why the subscription ended (``None`` while it is open).
        self.reason: CloseReason | None = None
        #: The message in progress whose pieces this subscriber gets (``None``: none now).
        self.segment: Segment | None = None

    @property
    def closed(self) -> bool:
        return self.reason is not None

    def push(self, frame: Frame | ViewsFrame) -> None:
        if self.reason is not None:
            return
        if self._durable >= self._maxsize:
            # Too slow: stop queueing (bounded memory) and let the stream end after what is
            # queued; the client resumes from its Last-Event-ID.
            log.warning("web.stream_overflow", session_id=self.session_id, queued=self._maxsize)
            self.close("overflow")
            return
        self._durable += 1
        self._frames.append(frame)
        self._ready.set()

    def push_piece(self, frame: StreamFrame) -> None:
        """Queue an ephemeral frame of the segment this subscriber follows; a subscriber with
        ``stream_maxsize`` pieces undelivered stops following it (nothing else changes)."""
        if self.reason is not None or self.segment is not frame.segment:
            return
        if self._pieces >= self._stream_maxsize:
            # Never the text: ephemeral output is not logged.
            log.info("web.stream_pieces_dropped", session_id=self.session_id)
            self.segment = None
            return
        self._pieces += 1
        self._frames.append(frame)
        self._ready.set()

    async def get(self, timeout: float) -> Frame | StreamFrame | ViewsFrame | None:
        """The next frame; ``None`` after ``timeout`` seconds without one.

        Raises :class:`SubscriptionClosedError` once closed and drained.
        """
        while not self._frames:
            if self.reason is not None:
                raise SubscriptionClosedError(self.reason)
            self._ready.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._ready.wait()
            except TimeoutError:
                return None
        frame = self._frames.popleft()
        if isinstance(frame, StreamFrame):
            self._pieces -= 1
        else:
            self._durable -= 1
        return frame

    def close(self, reason: CloseReason) -> None:
        if self.reason is not None:
            return
        self.reason = reason
        if reason in ("disconnected", "shutdown"):
            # Nobody to send to, or no time to: a reconnect replays from its Last-Event-ID.
            self._frames.clear()
            self._durable = self._pieces = 0
        self._ready.set()
        self._on_close(self)


class Sidecar:
    """The stream subscribers per Session id, and how far each live Session's late views went."""

    def __init__(
        self,
        store: LiveSessionStore,
        plugins: PluginManager,
        *,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        stream_queue_size: int = DEFAULT_STREAM_QUEUE_SIZE,
    ) -> None:
        for name, size in (("queue_size", queue_size), ("stream_queue_size", stream_queue_size)):
            if type(size) is not int or size < 1:
                raise ValueError(f"{name} must be a positive integer")
        self._store = store
        self._plugins = plugins
        self._queue_size = queue_size
        self._stream_queue_size = stream_queue_size
        #: Per live Session object: the message in progress (absent between messages).
        self._segments: weakref.WeakKeyDictionary[LiveSession, Segment] = (
            weakref.WeakKeyDictionary()
        )
        #: Per live Session object: late views were sent for seqs below this.
        self._presented: weakref.WeakKeyDictionary[LiveSession, int] = weakref.WeakKeyDictionary()
        #: Per live Session object: the committed length the plugin views were last derived
        #: from, and those views (with the name) as JSON text.
        self._views_sent: weakref.WeakKeyDictionary[LiveSession, tuple[int, str]] = (
            weakref.WeakKeyDictionary()
        )
        self._subscribers: dict[str, set[Subscription]] = {}
        self._closed = False
        self._unsubscribe = store.subscribe(self._observe, (Appended, Streamed, Flushed, Opened))

    # -- queries ------------------------------------------------------------------------------
    def subscriber_count(self, session_id: str) -> int:
        return len(self._subscribers.get(session_id, ()))

    # -- subscriptions --------------------------------------------------------------------------
    def subscribe(self, session_id: str, *, views: bool = False) -> Subscription:
        """A new subscription for ``session_id`` (closed at once when the sidecar is closed);
        ``views``: it also takes the Session's plugin views frames."""
        subscription = Subscription(
            session_id, self._queue_size, self._forget, self._stream_queue_size, views=views
        )
        if self._closed:
            subscription.close("shutdown")
            return subscription
        self._subscribers.setdefault(session_id, set()).add(subscription)
        return subscription

    def _forget(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.session_id)
        if subscribers is None:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del self._subscribers[subscription.session_id]

    def _broadcast(self, session_id: str, frame: Frame | ViewsFrame) -> None:
        for subscription in list(self._subscribers.get(session_id, ())):
            subscription.push(frame)

    def end_streams(self, session_id: str) -> None:
        """End the streams of ``session_id`` (its lease went to another host: a client that
        reconnects is told where it lives now)."""
        for subscription in list(self._subscribers.get(session_id, ())):
            subscription.close("done")

    def close(self) -> None:
        """Stop observing the store and end every subscription (their streams finish)."""
        if self._closed:
            return
        self._closed = True
        self._unsubscribe()
        for subscribers in list(self._subscribers.values()):
            for subscription in list(subscribers):
                subscription.close("shutdown")

    # -- store observations ---------------------------------------------------------------------
    def _observe(self, observation: Appended | Streamed | Flushed | Opened) -> None:
        session = cast(LiveSession, observation.session)  # the store publishes its own only
        match observation:
            case Appended(event=event):
                self._on_append(session, event)
            case Streamed(payload=payload):
                self._on_stream(session, payload)
            case Flushed():
                self._on_flushed(session)
            case Opened():
                self._on_open(session)

    def _on_open(self, session: LiveSession) -> None:
        # The authority answers: it took in the open first (rule 1 of _observations).
        # What is committed at open is presentable through replay, never as late views.
        self._presented[session] = self._store.durable_length(session)

    def _on_append(self, session: LiveSession, event: Event) -> None:
        if event.type in SEGMENT_ENDS:
            self._segments.pop(session, None)
        if session.id in self._subscribers:
            self._broadcast(session.id, make_frame(event))

    def _on_stream(self, session: LiveSession, payload: Mapping[str, JSONValue]) -> None:
        subscribers = self._subscribers.get(session.id, set())
        message_id = payload.get("messageId")
        segment = self._segments.get(session)
        if segment is None or segment.message_id != message_id:
            # A new message in progress: those listening now follow it from its first piece.
            segment = self._segments[session] = Segment(message_id)
            for subscription in subscribers:
                subscription.segment = segment
        if not subscribers:
            return
        frame = StreamFrame(segment=segment, data=encode_stream_frame(payload))
        for subscription in list(subscribers):
            subscription.push_piece(frame)

    def _on_flushed(self, session: LiveSession) -> None:
        # Not its through_seq: the durable length already counts it (the maximum of all).
        previous = self._presented.get(session, 0)
        durable = self._store.durable_length(session)
        if durable <= previous:
            return  # an older flush completing late: the maximum already covers it
        self._presented[session] = durable
        if session.id not in self._subscribers:
            return  # nobody listening; later subscribers get these views through replay
        current = self._store.get(session.id)
        if current is not None and current is not session:
            return  # the id belongs to another lifecycle now; its streams follow that one
        events = session.events
        seed_length = session.header.owned_from
        for seq in range(previous, min(durable, len(events))):
            view = present(self._plugins, events, seq, seed_length, session)
            if view is not None:
                self._broadcast(session.id, make_frame(events[seq], view, late=True))
        self._push_views(session, events[: min(durable, len(events))], seed_length)

    def _push_views(
        self, session: LiveSession, committed: Sequence[Event], seed_length: int
    ) -> None:
        """Send the views (and name) of the newly committed prefix when they differ from the
        last sent. A flush that committed nothing new derives nothing (the plugins walk the
        whole prefix, so this is the one place their cost is paid per change, not per flush)."""
        listeners = [s for s in self._subscribers.get(session.id, ()) if s.views]
        if not listeners:
            return
        last = self._views_sent.get(session)
        if last is not None and last[0] == len(committed):
            return
        payload = views_payload(self._plugins, committed, seed_length, session)
        text = _json.dumps([payload["views"], payload["name"]])
        self._views_sent[session] = (len(committed), text)
        if last is not None and last[1] == text:
            return
        frame = ViewsFrame(encode_views_frame(payload))
        for subscription in listeners:
            subscription.push(frame)
