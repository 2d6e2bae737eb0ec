"""The event stream against a real uvicorn on 127.0.0.1 (never an in-process transport)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

import httpx
import pytest

from dsh_host import LiveHost
from dsh_host.persistence import StoredSession
from dsh_host.testing import wait_until
from dsh_host.web import WebServer

from .support import WAIT, FlushGate, SSEFrame, append, serve, stream


async def _session(host: LiveHost) -> str:
    agent = await host.create_session()
    return agent.session.id


def _seqs(frames: list[SSEFrame]) -> list[int]:
    return [frame.seq for frame in frames]


async def test_frames_carry_the_seq_as_id_and_the_json_shape(web_host: LiveHost, gate: FlushGate):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    async with serve(web_host) as (_, client), stream(client, sid) as reader:
        headers = reader.response.headers
        assert headers["cache-control"] == "no-store"
        assert headers["x-accel-buffering"] == "no"
        first = append(session, "one")
        session.append("note", {"n": [1, 2.5, None, True]})
        frames = await reader.frames(2)
    assert [f.id for f in frames] == ["0", "1"]
    assert frames[0].data == {"event": first.to_json()}
    assert frames[1].data == {
        "event": {
            "seq": 1,
            "type": "note",
            "time": session.events[1].time,
            "data": {"n": [1, 2.5, None, True]},
        }
    }


async def test_without_last_event_id_only_new_events_are_sent(web_host: LiveHost, gate: FlushGate):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    for label in "abc":
        append(session, label)
    async with serve(web_host) as (_, client), stream(client, sid) as reader:
        append(session, "d")
        frames = await reader.frames(1)
    assert _seqs(frames) == [3]


async def test_last_event_id_replays_exactly_the_missing_events(
    web_host: LiveHost, gate: FlushGate
):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    for label in "abcde":
        append(session, label)
    async with serve(web_host) as (_, client):
        async with stream(client, sid, last_event_id=2) as reader:
            replayed = await reader.frames(2)
            append(session, "f")
            live = await reader.frames(1)
        assert _seqs(replayed) == [3, 4]
        assert _seqs(live) == [5]
        # A client ahead of the log (another data folder?) gets what exists from now on.
        async with stream(client, sid, last_event_id=99) as reader:
            append(session, "g")
            assert _seqs(await reader.frames(1)) == [6]
        # An empty id is "no id" (the SSE reset), anything else must be a seq.
        async with stream(client, sid, last_event_id="") as reader:
            append(session, "h")
            assert _seqs(await reader.frames(1)) == [7]
        for bad in ("-1", "1.5", "abc", "+1", "1" * 30):
            response = await client.get(
                f"/api/sessions/{sid}/events", headers={"Last-Event-ID": bad}
            )
            assert response.status_code == 422
            assert response.json()["error"]["code"] == "invalid_last_event_id"


async def test_replay_attaches_views_only_below_the_live_watermark(
    web_host: LiveHost, gate: FlushGate
):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    async with serve(web_host) as (_, client):
        # (The sidecar watches flushes from the moment the server starts.)
        session.append("note", {})
        append(session, "a")
        append(session, "b")
        assert await web_host.sessions.flush(session) is True
        append(session, "c")  # appended, not committed
        async with stream(client, sid, last_event_id=0) as reader:
            frames = await reader.frames(3)
    assert _seqs(frames) == [1, 2, 3]
    assert [f.view["view"]["label"] if f.view else None for f in frames] == ["a", "b", None]


async def test_replay_views_follow_the_coordinator_even_for_flushes_before_the_server(
    web_host: LiveHost, gate: FlushGate
):
    """The persistence coordinator is the one answer to "what is committed": a flush that
    completed before any server (and its sidecar) existed still gates the replay's views."""
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    append(session, "a")
    append(session, "b")
    assert await web_host.sessions.flush(session) is True
    append(session, "c")  # appended, not committed
    assert web_host.persistence.durable_length(session) == 2
    async with serve(web_host) as (_, client), stream(client, sid, last_event_id=0) as reader:
        frames = await reader.frames(2)
    assert _seqs(frames) == [1, 2]
    assert [f.view["view"]["label"] if f.view else None for f in frames] == ["b", None]


async def test_late_view_frames_follow_the_flush(web_host: LiveHost, gate: FlushGate):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    async with serve(web_host) as (_, client), stream(client, sid) as reader:
        append(session, "receipt")
        (raw,) = await reader.frames(1)
        assert raw.view is None
        gate.auto = "raise"
        response = await client.post(f"/api/sessions/{sid}/flush")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "storage_unavailable"
        gate.auto = "ok"
        response = await client.post(f"/api/sessions/{sid}/flush")
        assert response.json() == {"durable": True, "throughSeq": 1}
        (upgraded,) = await reader.frames(1)
    assert upgraded.id == raw.id == "0"
    assert upgraded.data["event"] == raw.data["event"]
    assert upgraded.view == {"for": "event", "view": {"label": "receipt", "seedLength": 0, "of": 1}}


async def test_keep_alive_comments_arrive_while_idle(web_host: LiveHost):
    sid = await _session(web_host)
    async with serve(web_host, keepalive=0.05) as (_, client), stream(client, sid) as reader:
        comments = [await reader.next(comments=True) for _ in range(2)]
    assert [c.comment for c in comments if c is not None] == ["keep-alive", "keep-alive"]


async def test_a_cold_session_streams_once_resumed_without_rebroadcasting_receipts(
    web_host: LiveHost, gate: FlushGate
):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    session.append("note", {})
    append(session, "old receipt")
    assert await web_host.sessions.flush(session) is True
    await web_host.close_session(sid)
    assert web_host.sessions.get(sid) is None

    async with serve(web_host) as (_, client), stream(client, sid, last_event_id=0) as reader:
        (replayed,) = await reader.frames(1)  # cold replay: the stored log, views included
        assert replayed.seq == 1
        assert replayed.view is not None
        assert web_host.sessions.get(sid) is None  # streaming never resumes
        response = await client.post(f"/api/sessions/{sid}/messages", json={"text": "hello"})
        assert response.status_code == 202
        types: list[str] = []
        while "turn/end" not in types:
            frame = await reader.next()
            assert frame is not None
            assert frame.view is None  # the resume re-broadcasts no historical receipt
            types.append(frame.data["event"]["type"])
        assert types[:3] == ["session/end-seed", "turn/start", "user/message"]
        # Whatever the turn's checkpoint published came before this marker.
        assert (await client.post(f"/api/sessions/{sid}/flush")).json()["durable"] is True
        live = web_host.sessions.get(sid)
        assert live is not None
        marker = append(live, "marker")
        frame = await reader.next()
        assert frame is not None
        assert (frame.seq, frame.view) == (marker.seq, None)


async def test_a_cold_replay_racing_a_resume_has_no_duplicates_and_no_gaps(
    web_host: LiveHost, gate: FlushGate, monkeypatch: pytest.MonkeyPatch
):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    for label in "ab":
        append(session, label)
    assert await web_host.sessions.flush(session) is True
    await web_host.close_session(sid)

    real = web_host.inspect
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow_inspect(session_id: str) -> StoredSession | None:
        entered.set()
        await release.wait()
        return await real(session_id)

    async with serve(web_host) as (_, client):
        monkeypatch.setattr(web_host, "inspect", slow_inspect)

        async def connect() -> list[SSEFrame]:
            async with stream(client, sid, last_event_id=0) as reader:
                return await reader.frames(4)

        reading = asyncio.create_task(connect())
        async with asyncio.timeout(WAIT):
            await entered.wait()
        # While the stream reads storage, the Session comes back, grows and commits.
        resumed = await web_host.sessions.resume(sid)  # seq 2: session/end-seed
        append(resumed, "c")  # seq 3
        assert await web_host.sessions.flush(resumed) is True
        release.set()
        frames = await asyncio.wait_for(reading, WAIT)
    assert _seqs(frames) == [1, 2, 3, 3]
    # Cold replay presents every stored receipt; the late view (always passed) repeats it.
    assert [f.view is not None for f in frames] == [True, False, True, True]


async def test_a_slow_subscriber_is_disconnected_and_resumes_with_last_event_id(
    web_host: LiveHost,
):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    async with serve(web_host, queue_size=3) as (server, client):
        async with stream(client, sid) as reader:
            for index in range(10):  # one synchronous burst: more than the queue holds
                append(session, str(index))
            delivered = await reader.until_end()
        assert _seqs(delivered) == [0, 1, 2]
        assert server.sidecar is not None
        assert server.sidecar.subscriber_count(sid) == 0
        async with stream(client, sid, last_event_id=delivered[-1].id) as reader:
            assert _seqs(await reader.frames(7)) == list(range(3, 10))


async def test_stopping_the_server_ends_open_streams_promptly(web_host: LiveHost):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    async with (
        serve(web_host) as (server, client),
        stream(client, sid) as one,
        stream(client, sid, last_event_id=0) as two,
        httpx.AsyncClient(base_url=server.url or "", timeout=WAIT) as other,
        stream(other, sid) as three,
    ):
        append(session, "x")
        for reader in (one, two, three):
            assert await reader.next() is not None
        started = time.monotonic()
        stopping = asyncio.create_task(server.stop())
        for reader in (one, two, three):
            assert await reader.until_end() == []
        await asyncio.wait_for(stopping, WAIT)
        assert time.monotonic() - started < 2.0
    with pytest.raises(httpx.TransportError):
        async with httpx.AsyncClient(base_url=server.url or "") as late_client:
            await late_client.get("/api/sessions")


async def test_stream_errors_are_plain_json_answers(web_host: LiveHost):
    async with serve(web_host, token="s3cret") as (_, client):
        response = await client.get("/api/sessions/nope/events")
        assert response.status_code == 401
        authorized = {"Authorization": "Bearer s3cret"}
        response = await client.get("/api/sessions/nope/events", headers=authorized)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "session_not_found"
        response = await client.post("/api/sessions/nope/events", headers=authorized)
        assert response.status_code == 405
        sid = await _session(web_host)
        session = web_host.sessions.get(sid)
        assert session is not None
        async with stream(client, sid, headers=authorized) as reader:
            append(session, "a")
            assert _seqs(await reader.frames(1)) == [0]


async def test_a_client_that_stops_reading_is_cut_off_with_bounded_memory(web_host: LiveHost):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    async with serve(web_host, send_timeout=0.2, queue_size=10_000) as (server, _):
        sidecar = server.sidecar
        assert sidecar is not None
        assert server.url is not None
        port = int(server.url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(
                f"GET /api/sessions/{sid}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            )
            await writer.drain()
            async with asyncio.timeout(WAIT):
                await reader.readuntil(b"\r\n\r\n")  # attached; from here on we never read
            await wait_until(lambda: sidecar.subscriber_count(sid) == 1, timeout=WAIT)
            big = "x" * 65536
            for _ in range(200):  # ~13 MB, far more than the socket buffers hold
                session.append("note", {"big": big})
            # The stream gives up on the blocked write and forgets the subscriber.
            await wait_until(lambda: sidecar.subscriber_count(sid) == 0, timeout=WAIT)
            # The connection ends (reset, or EOF after what was already written).
            rest = b""
            with contextlib.suppress(ConnectionResetError):
                async with asyncio.timeout(WAIT):
                    rest = await reader.read()
            assert len(rest) < 200 * 65536
        finally:
            writer.close()
            with contextlib.suppress(ConnectionResetError):
                await writer.wait_closed()


async def _raw_stream_socket(port: int, sid: str) -> socket.socket:
    """A client socket with a tiny receive buffer that asked for the stream and never reads."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", port)), WAIT)
    request = f"GET /api/sessions/{sid}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    await asyncio.wait_for(loop.sock_sendall(sock, request.encode()), WAIT)
    return sock


async def test_a_client_that_never_reads_has_its_connection_aborted(web_host: LiveHost):
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    send_timeout = 0.2
    async with serve(web_host, send_timeout=send_timeout, queue_size=10_000) as (server, _):
        sidecar = server.sidecar
        assert sidecar is not None
        assert server.url is not None
        sock = await _raw_stream_socket(int(server.url.rsplit(":", 1)[1]), sid)
        try:
            await wait_until(lambda: sidecar.subscriber_count(sid) == 1, timeout=WAIT)
            assert server.connection_count == 1
            big = "x" * 65536
            for _ in range(200):  # ~13 MB: far more than the socket buffers hold
                session.append("note", {"big": big})
            started = time.monotonic()
            # Without the client reading a byte, the server lets go of the connection: the
            # subscription is gone and so is the connection (its descriptor and buffers).
            await wait_until(lambda: sidecar.subscriber_count(sid) == 0, timeout=WAIT)
            await wait_until(lambda: server.connection_count == 0, timeout=WAIT)
            assert time.monotonic() - started < send_timeout + 2.0
            # The client sees the end (reset, or EOF after what its buffer holds) once it reads.
            loop = asyncio.get_running_loop()
            received = 0
            with contextlib.suppress(ConnectionResetError):
                async with asyncio.timeout(WAIT):
                    while chunk := await loop.sock_recv(sock, 65536):
                        received += len(chunk)
            assert received < 200 * 65536
        finally:
            sock.close()


async def test_stopping_the_server_with_open_streams_leaves_no_task(
    web_host: LiveHost, gate: FlushGate
):
    """Each stream's receive watcher and the server's main loop are owned tasks: once stop()
    returns, none of them (and no request task) is left running."""
    sid = await _session(web_host)
    session = web_host.sessions.get(sid)
    assert session is not None
    before = asyncio.all_tasks()
    server = WebServer(web_host, port=0)
    url = await server.start()
    async with (
        httpx.AsyncClient(base_url=url, timeout=WAIT) as client,
        stream(client, sid) as first,
        stream(client, sid) as second,
    ):
        append(session, "x")
        assert _seqs(await first.frames(1)) == _seqs(await second.frames(1)) == [0]
        names = [task.get_name() for task in asyncio.all_tasks()]
        assert names.count("dsh-web-main-loop") == 1
        assert names.count("dsh-web-stream-watcher") == 2
        await server.stop()
    left = asyncio.all_tasks() - before
    assert not left, sorted(task.get_name() for task in left)
