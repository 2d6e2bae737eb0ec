"""Helpers for the Web host tests: a controllable flush path, test plugins, a real server and an
SSE reader with bounded waits."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from dsh_hookspecs import Event, JSONValue, RendererAsset, hookimpl
from dsh_host import LiveHost, LiveSession
from dsh_host.testing import wait_until
from dsh_host.web import WebServer
from tests.schedule.harness import replace_flush_listener

WAIT = 5.0  # seconds: the bound of every wait in these tests

PRESENTABLE = "test/presentable"
BROKEN = "test/broken"


class Presenter:
    """A tiny plugin presenting ``test/presentable`` events (and failing on ``test/broken``)."""

    @hookimpl
    def dsh_event_present(
        self, events: Sequence[Event], seq: int, seed_length: int
    ) -> JSONValue | None:
        event = events[seq]
        if event.type == PRESENTABLE:
            assert isinstance(event.data, dict)
            return {"label": event.data["label"], "seedLength": seed_length, "of": len(events)}
        if event.type == BROKEN:
            raise RuntimeError("presentation failed on purpose")
        return None


class Renderers:
    """A plugin contributing renderer assets (one with a hostile event type)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @hookimpl
    def dsh_renderer_assets(self) -> list[RendererAsset]:
        return [
            RendererAsset(name="row", path=str(self.path), event_types=("test/presentable",)),
            RendererAsset(
                name="evil", path=str(self.path), event_types=("</script><script>alert(1)",)
            ),
        ]


@dataclass
class FlushGate:
    """Stands in front of the persistence coordinator's flush listener.

    With ``auto`` set every flush gets that verdict at once; with ``auto=None`` each flush waits
    in :attr:`pending` until the test calls :meth:`release`. Verdicts: ``"ok"`` (delegate to the
    coordinator: durable ``True``), ``"raise"`` (the flush fails), ``"false"`` (no
    acknowledgement).
    """

    delegate: Callable[[LiveSession], Awaitable[bool | None]]
    auto: str | None = "ok"
    pending: list[asyncio.Future[str]] = field(default_factory=list)

    async def __call__(self, session: LiveSession) -> bool | None:
        verdict = self.auto
        if verdict is None:
            future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self.pending.append(future)
            verdict = await future
        if verdict == "raise":
            raise OSError("injected flush failure")
        if verdict == "false":
            return None
        return await self.delegate(session)

    async def wait_pending(self, count: int) -> None:
        """Bounded wait until ``count`` flushes wait in :attr:`pending`."""
        await wait_until(lambda: len(self.pending) >= count, timeout=WAIT)

    def release(self, index: int, verdict: str = "ok") -> None:
        self.pending[index].set_result(verdict)


def install_flush_gate(host: LiveHost) -> FlushGate:
    """Replace the coordinator's flush listener by a :class:`FlushGate` delegating to it."""
    return replace_flush_listener(host, lambda delegate: FlushGate(delegate=delegate))


@contextlib.asynccontextmanager
async def serve(
    host: LiveHost, **options: Any
) -> AsyncIterator[tuple[WebServer, httpx.AsyncClient]]:
    """A real server on 127.0.0.1, port 0, and a client for it; both closed afterwards."""
    server = WebServer(host, port=0, **options)
    url = await server.start()
    try:
        async with httpx.AsyncClient(base_url=url, timeout=WAIT) as client:
            yield server, client
    finally:
        await server.stop()


@dataclass
class SSEFrame:
    id: str | None = None
    data: Any = None
    comment: str | None = None
    #: The ``event:`` field (``None`` when the frame has none: a durable event frame).
    event: str | None = None

    @property
    def seq(self) -> int:
        return self.data["event"]["seq"]

    @property
    def view(self) -> Any:
        return self.data.get("view")


class SSEReader:
    """Reads frames (and comments) from an httpx streaming response, each wait bounded."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def _line(self) -> str | None:
        try:
            return await anext(self._lines)
        except StopAsyncIteration:
            return None

    async def next(self, *, comments: bool = False, timeout: float = WAIT) -> SSEFrame | None:
        """The next frame (``None`` at the end of the stream); comments only if asked."""
        async with asyncio.timeout(timeout):
            frame = SSEFrame()
            data: list[str] = []
            while True:
                line = await self._line()
                if line is None:
                    return None
                if line.startswith(":"):
                    if comments:
                        return SSEFrame(comment=line[1:].strip())
                    continue
                if line == "":
                    if data:
                        frame.data = json.loads("\n".join(data))
                        return frame
                    continue
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "id":
                    frame.id = value
                elif name == "event":
                    frame.event = value
                elif name == "data":
                    data.append(value)

    async def frames(self, count: int) -> list[SSEFrame]:
        out: list[SSEFrame] = []
        for _ in range(count):
            frame = await self.next()
            assert frame is not None, f"stream ended after {out}"
            out.append(frame)
        return out

    async def until_end(self, timeout: float = WAIT) -> list[SSEFrame]:
        out: list[SSEFrame] = []
        async with asyncio.timeout(timeout):
            while (frame := await self.next(timeout=timeout)) is not None:
                out.append(frame)
        return out


@contextlib.asynccontextmanager
async def stream(
    client: httpx.AsyncClient, session_id: str, last_event_id: int | str | None = None, **kw: Any
) -> AsyncIterator[SSEReader]:
    headers = dict(kw.pop("headers", {}))
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    async with client.stream(
        "GET", f"/api/sessions/{session_id}/events", headers=headers, **kw
    ) as response:
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"] == "text/event-stream"
        yield SSEReader(response)


def append(session: LiveSession, label: str, kind: str = PRESENTABLE) -> Event:
    return session.append(kind, {"label": label})


async def flush_task(host: LiveHost, session: LiveSession, gate: FlushGate) -> asyncio.Task[bool]:
    """Start a flush and wait (bounded) until it waits in ``gate`` (``gate.auto`` is ``None``):
    it has taken its ``through`` seq, so later appends are not covered by it."""
    waiting = len(gate.pending)
    task = asyncio.get_running_loop().create_task(host.sessions.flush(session))
    await gate.wait_pending(waiting + 1)
    return task
