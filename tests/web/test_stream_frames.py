"""Ephemeral ``event: stream`` frames (issue 12 item 2): a turn's streamed text reaches the
Session's subscribers as frames without ``id:``, is never in history, the stored log, a replay
or a log line, and a slow reader loses pieces rather than its stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import JSONValue, Turn
from dsh_host import LiveHost, LiveSession
from dsh_host.testing import FaultInjectingBackend, ManualClock
from dsh_host.web import Frame, Sidecar, StreamFrame, Subscription

from .support import WAIT, SSEFrame, SSEReader, append, serve, stream

PIECES = ("alpha ", "beta ")
LAST_PIECE = "gamma"
FINAL = "the final answer"


class GatedStreamer:
    """Streams two pieces, waits (bounded) for the test, streams one more and says the text."""

    name = "gated-streamer"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.message_ids: list[str] = []

    async def run_turn(self, turn: Turn) -> None:
        self.message_ids.append(turn.input.message_id)
        for piece in PIECES:
            turn.stream(piece)
        async with asyncio.timeout(WAIT):
            await self.release.wait()
        turn.stream(LAST_PIECE)
        turn.say(FINAL)


@pytest.fixture
def model() -> GatedStreamer:
    return GatedStreamer()


@pytest.fixture
async def stream_host(
    clock: ManualClock, backend: FaultInjectingBackend, model: GatedStreamer
) -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=backend, clock=clock, model=model) as running:
        yield running


def piece(message_id: str, text: str) -> dict[str, JSONValue]:
    return {"stream": {"type": "assistant/stream", "messageId": message_id, "text": text}}


async def until_type(reader: SSEReader, event_type: str) -> list[SSEFrame]:
    """Frames up to and including the durable event of ``event_type``."""
    out: list[SSEFrame] = []
    while True:
        frame = await reader.next()
        assert frame is not None, f"the stream ended after {out}"
        out.append(frame)
        if frame.event is None and frame.data["event"]["type"] == event_type:
            return out


def durable_types(frames: list[SSEFrame]) -> list[str]:
    return [f.data["event"]["type"] for f in frames if f.event is None]


def pieces_of(frames: list[SSEFrame]) -> list[JSONValue]:
    return [f.data for f in frames if f.event == "stream"]


async def test_stream_frames_have_no_id_and_are_in_no_history_log_or_replay(
    stream_host: LiveHost, model: GatedStreamer
):
    async with serve(stream_host) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        with capture_logs() as logs:
            async with stream(client, sid) as reader:
                response = await client.post(f"/api/sessions/{sid}/messages", json={"text": "hi"})
                assert response.status_code == 202
                first = await reader.frames(4)  # turn/start, user/message and the two pieces
                (message_id,) = model.message_ids
                assert durable_types(first) == ["turn/start", "user/message"]
                assert pieces_of(first) == [piece(message_id, text) for text in PIECES]
                for frame in first:
                    if frame.event == "stream":
                        assert frame.id is None  # no id: line at all
                    else:
                        assert frame.id == str(frame.seq)

                # Mid-stream: no durable assistant message, and the pieces are not history.
                history = (await client.get(f"/api/sessions/{sid}/history")).json()
                types = [entry["event"]["type"] for entry in history["entries"]]
                assert types == ["turn/start", "user/message"]
                assert "alpha" not in json.dumps(history)

                model.release.set()
                rest = await until_type(reader, "turn/end")
                assert pieces_of(rest) == [piece(message_id, LAST_PIECE)]
                assert durable_types(rest) == ["assistant/message", "turn/end"]
                assert rest[-2].data["event"]["data"] == {"text": FINAL}

            # A reconnect from the first event replays only durable frames.
            async with stream(client, sid, last_event_id=0) as replay:
                agent = stream_host.agents.for_session(sid)
                assert agent is not None
                count = len(agent.session.events)
                append(agent.session, "marker")  # whatever comes before it is the replay
                frames = await until_type(replay, "test/presentable")
                assert [f.seq for f in frames] == list(range(1, count + 1))
                assert all(f.event is None and f.id == str(f.seq) for f in frames)

        assert (await client.post(f"/api/sessions/{sid}/flush")).json()["durable"] is True
        stored = await stream_host.inspect(sid)
        assert stored is not None
        stored_text = json.dumps([event.to_json() for event in stored.events])
        assert FINAL in stored_text
        for text in (*PIECES, LAST_PIECE):
            assert text.strip() not in stored_text
            assert not any(text.strip() in repr(entry) for entry in logs), "a piece was logged"


async def test_pieces_go_only_to_that_sessions_subscribers(
    stream_host: LiveHost, model: GatedStreamer
):
    async with serve(stream_host) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        other = (await client.post("/api/sessions", json={})).json()["id"]
        async with stream(client, sid) as mine, stream(client, other) as theirs:
            await client.post(f"/api/sessions/{sid}/messages", json={"text": "hi"})
            model.release.set()
            assert len(pieces_of(await until_type(mine, "turn/end"))) == 3
            other_session = stream_host.sessions.get(other)
            assert other_session is not None
            append(other_session, "marker")
            frames = await until_type(theirs, "test/presentable")
            assert [f.data["event"]["type"] for f in frames] == ["test/presentable"]


# -- the sidecar's segments and bounds ---------------------------------------------------------


def drain(subscription: Subscription) -> list[Frame | StreamFrame]:
    frames = list(subscription._frames)
    while subscription._frames:
        subscription._frames.popleft()
    subscription._durable = subscription._pieces = 0
    return frames


def texts(frames: list[Frame | StreamFrame]) -> list[str]:
    out: list[str] = []
    for frame in frames:
        if isinstance(frame, StreamFrame):
            assert frame.data.startswith(b"event: stream\ndata: ")
            assert b"\nid:" not in frame.data
            payload = json.loads(frame.data.split(b"data: ", 1)[1])
            out.append(payload["stream"]["text"])
        else:
            out.append(f"#{frame.event.type}")
    return out


def publish(host: LiveHost, session: LiveSession, message_id: str, text: str) -> None:
    payload: dict[str, JSONValue] = {
        "type": "assistant/stream",
        "messageId": message_id,
        "text": text,
    }
    host.sessions.publish_stream(session, payload)


@pytest.fixture
async def plain_host(clock: ManualClock, backend: FaultInjectingBackend) -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=backend, clock=clock, model="none") as running:
        yield running


async def test_a_subscriber_joining_mid_message_gets_none_of_it_then_the_next(plain_host: LiveHost):
    sidecar = Sidecar(plain_host.sessions, plain_host.plugins)
    try:
        session = plain_host.sessions.create()
        early = sidecar.subscribe(session.id)
        publish(plain_host, session, "m1", "one ")
        late = sidecar.subscribe(session.id)
        publish(plain_host, session, "m1", "two")
        session.append("assistant/message", {"text": "one two"})
        publish(plain_host, session, "m1", "three")  # the same turn's next message
        publish(plain_host, session, "m2", "four")  # another message id: a new segment too
        assert texts(drain(early)) == ["one ", "two", "#assistant/message", "three", "four"]
        assert texts(drain(late)) == ["#assistant/message", "three", "four"]
        session.append("turn/end", {"outcome": "ok"})
        publish(plain_host, session, "m3", "five")
        assert texts(drain(early)) == ["#turn/end", "five"]
        assert texts(drain(late)) == ["#turn/end", "five"]
    finally:
        sidecar.close()


async def test_a_slow_subscriber_loses_the_rest_of_a_message_not_its_stream(plain_host: LiveHost):
    sidecar = Sidecar(plain_host.sessions, plain_host.plugins, queue_size=3, stream_queue_size=2)
    try:
        session = plain_host.sessions.create()
        slow = sidecar.subscribe(session.id)
        with capture_logs() as logs:
            for index in range(10):
                publish(plain_host, session, "m1", f"p{index}")
        assert slow.reason is None  # still open
        assert slow._pieces == 2  # bounded
        assert [e["event"] for e in logs] == ["web.stream_pieces_dropped"]  # once, no text
        assert "p2" not in repr(logs)
        # Pieces do not count against the durable bound: three durable frames still fit.
        for label in ("a", "b", "c"):
            append(session, label)
        assert slow.reason is None
        # Once drained, it gets no more of that message (its client keeps the prefix)...
        assert texts(drain(slow)) == ["p0", "p1", *["#test/presentable"] * 3]
        publish(plain_host, session, "m1", "p10")
        assert drain(slow) == []
        # ...and follows the next one from its first piece.
        session.append("assistant/message", {"text": "p0..p10"})
        publish(plain_host, session, "m1", "q0")
        assert texts(drain(slow)) == ["#assistant/message", "q0"]
        # The durable bound is what it was: a fourth undelivered durable frame closes it.
        for label in ("d", "e", "f", "g"):
            append(session, label)
        assert slow.reason == "overflow"
    finally:
        sidecar.close()


async def test_get_hands_out_pieces_in_order_with_durable_frames(plain_host: LiveHost):
    sidecar = Sidecar(plain_host.sessions, plain_host.plugins)
    try:
        session = plain_host.sessions.create()
        subscription = sidecar.subscribe(session.id)
        append(session, "a")
        publish(plain_host, session, "m1", "x")
        append(session, "b")
        got = [await subscription.get(WAIT) for _ in range(3)]
        assert texts([frame for frame in got if frame is not None]) == [
            "#test/presentable",
            "x",
            "#test/presentable",
        ]
        assert subscription._pieces == subscription._durable == 0
        publish(plain_host, session, "m1", "y")
        subscription.close("disconnected")  # a gone client's queue is dropped, pieces too
        assert subscription._pieces == subscription._durable == 0
        sidecar.close()
        publish(plain_host, session, "m1", "z")  # no longer observed
        assert sidecar.subscriber_count(session.id) == 0
    finally:
        sidecar.close()


def test_the_bounds_must_be_positive_integers(plain_host: LiveHost):
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="stream_queue_size"):
            Sidecar(plain_host.sessions, plain_host.plugins, stream_queue_size=bad)  # type: ignore[arg-type]


async def test_a_piece_for_a_session_not_live_here_goes_nowhere(plain_host: LiveHost):
    sidecar = Sidecar(plain_host.sessions, plain_host.plugins)
    try:
        session = plain_host.sessions.create()
        subscription = sidecar.subscribe(session.id)
        await plain_host.close_session(session.id)
        publish(plain_host, session, "m1", "late")
        assert [f for f in drain(subscription) if isinstance(f, StreamFrame)] == []
    finally:
        sidecar.close()
