"""Stream clients that stop reading are dropped by a real ``dsh serve`` (issue 9, finding 4).

N clients ask for a Session's event stream through sockets with a tiny receive buffer and never
read a byte; one more client reads everything. The Session then gets messages far larger than
every buffer between the server and a client, so the server's writes to the silent clients
block. Within the server's send time-out (30 s, ``WebServer``'s default, which ``dsh serve``
uses) plus a margin, each silent client's connection must be closed by the server: its TCP
state (``TCP_INFO``, read without reading the socket) leaves ESTABLISHED, reset or shut down.
The reading client keeps its stream and sees every message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from dsh_host.testing import wait_until
from tests.chaos.figures import full_size
from tests.procs import LISTENING, DshProcess

pytestmark = [pytest.mark.chaos, pytest.mark.slow]

#: ``WebServer(send_timeout=...)``'s default, the one ``dsh serve`` runs with.
SEND_TIMEOUT = 30.0
#: How long after the last write was queued a silent client may still be connected.
BOUND = SEND_TIMEOUT + 10.0
TCP_ESTABLISHED = 1
#: Messages far larger than the socket buffers (kernel send buffer, the client's 4 KB window,
#: the server's transport buffer): 14 x 900 KB.
MESSAGES = 14
MESSAGE_BYTES = 900_000


def tcp_state(sock: socket.socket) -> int:
    """The kernel's TCP state of ``sock`` (``struct tcp_info``'s first byte), without reading."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    return int(struct.unpack_from("B", info)[0])


def server_sockets(pid: int) -> int:
    """How many sockets the server process holds open (its listener included)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            if str(fd.readlink()).startswith("socket:"):
                count += 1
    return count


async def silent_stream(port: int, sid: str) -> socket.socket:
    """A client with a tiny receive buffer that asks for the stream and never reads."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", port)), 10)
    request = (
        f"GET /api/sessions/{sid}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    )
    await asyncio.wait_for(loop.sock_sendall(sock, request.encode()), 10)
    return sock


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[DshProcess, str]]:
    proc = DshProcess(
        [
            "serve",
            "--data",
            str(tmp_path / "data"),
            "--port",
            "0",
            "--model",
            "scripted",
            "--log-level",
            "warning",
        ]
    )
    try:
        match = await asyncio.to_thread(proc.wait_for_line, LISTENING, 30.0)
        yield proc, match[1]
    finally:
        proc.close()


async def test_stream_clients_that_stop_reading_are_dropped(
    server: tuple[DshProcess, str], tally: Counter[str]
) -> None:
    proc, url = server
    port = int(url.rsplit(":", 1)[1])
    clients = 20 if full_size() else 3
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as client:
        created = await client.post("/api/sessions", json={})
        assert created.status_code == 201, created.text
        sid = created.json()["id"]
        before = server_sockets(proc.proc.pid)

        # The reading client: it must keep its stream while the silent ones are dropped.
        texts: list[str] = []
        opened = asyncio.Event()

        async def read() -> None:
            async with client.stream(
                "GET", f"/api/sessions/{sid}/events", timeout=httpx.Timeout(10.0, read=None)
            ) as response:
                assert response.status_code == 200
                opened.set()
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        event = json.loads(line[6:])["event"]
                        if event["type"] == "user/message":
                            texts.append(event["data"]["text"])

        reader = asyncio.create_task(read())
        silent = [await silent_stream(port, sid) for _ in range(clients)]
        try:
            async with asyncio.timeout(10):
                await opened.wait()
            # Every silent client is attached (one more server socket each) before the writes.
            await wait_until(lambda: server_sockets(proc.proc.pid) >= before + clients, timeout=10)
            assert all(tcp_state(sock) == TCP_ESTABLISHED for sock in silent)
            for index in range(MESSAGES):
                text = f"{index:03d} " + "x" * MESSAGE_BYTES
                answer = await client.post(f"/api/sessions/{sid}/messages", json={"text": text})
                assert answer.status_code == 202, answer.text
            written = time.monotonic()
            dropped_at: dict[int, float] = {}

            def dropped() -> bool:
                for index, sock in enumerate(silent):
                    if index not in dropped_at and tcp_state(sock) != TCP_ESTABLISHED:
                        dropped_at[index] = time.monotonic() - written
                return len(dropped_at) == clients

            with contextlib.suppress(TimeoutError):
                await wait_until(dropped, timeout=BOUND)
            tally["slow clients"] += clients
            tally["slow clients dropped within the bound"] += len(dropped_at)
            tally["send time-out (s)"] = int(SEND_TIMEOUT)
            tally["bound (s)"] = int(BOUND)
            if dropped_at:
                tally["slowest drop after the last write x1000 (s)"] = round(
                    max(dropped_at.values()) * 1000
                )
            assert len(dropped_at) == clients, f"dropped {sorted(dropped_at)} of {clients}"
            # The reader saw every message, and its stream is still open: one more arrives.
            answer = await client.post(f"/api/sessions/{sid}/messages", json={"text": "after"})
            assert answer.status_code == 202
            await wait_until(lambda: len(texts) == MESSAGES + 1, timeout=30)
            assert [text[:3] for text in texts[:MESSAGES]] == [
                f"{index:03d}" for index in range(MESSAGES)
            ]
            assert texts[-1] == "after"
            assert not reader.done()
            # The server let go of the silent clients' sockets (only the reader's and the
            # client's request connections remain beside the listener).
            await wait_until(lambda: server_sockets(proc.proc.pid) <= before + 2, timeout=10)
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            for sock in silent:
                sock.close()
    assert proc.terminate(timeout=20) == 0
