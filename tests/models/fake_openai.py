"""A fake OpenAI-compatible chat-completions server on loopback, scripted per test.

Each ``POST /v1/chat/completions`` takes the next :class:`Reply` of the queue: a streamed answer
(text pieces and/or tool-call pieces, as Server-Sent Events), an HTTP error with headers, a
stall (nothing sent for a while), a reply that drips its pieces slowly, a stream cut mid-way (the
connection drops) or one that ends with an error event. Every request
is recorded: its body, its headers and its arrival (``time.monotonic()``). uvicorn serves it on
127.0.0.1:0 in a background thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from dsh_hookspecs import Tool, ToolCall


class CutStreamError(Exception):
    """Raised inside a streamed body: uvicorn drops the connection mid-response."""


@dataclass
class Reply:
    """One scripted answer. ``chunks`` are chat-completion chunk deltas, sent in order."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = "stop"
    status: int = 200
    #: The error body: JSON, or plain text when it is a string.
    error: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to hold before the status line (a stall), or before chunk ``hold_at``.
    hold: float = 0.0
    hold_at: int = 0
    #: Drop the connection after this many chunks (``None``: finish normally).
    cut_after: int | None = None
    #: Seconds to wait before each chunk after the first (a server dripping its reply).
    drip: float = 0.0
    #: Sent as an ``{"error": ...}`` event after the chunks, in place of the finish.
    stream_error: dict[str, Any] | None = None


def text(*pieces: str) -> Reply:
    """A streamed plain answer in ``pieces``."""
    return Reply(chunks=[{"content": piece} for piece in pieces])


def tool_calls(*calls: tuple[str, str, list[str]], said: tuple[str, ...] = ()) -> Reply:
    """A streamed reply saying ``said`` then calling each ``(id, name, argument pieces)``, the
    arguments arriving in those pieces (index per call, id and name in the first piece only)."""
    chunks: list[dict[str, Any]] = [{"content": piece} for piece in said]
    for index, (call_id, name, pieces) in enumerate(calls):
        first = {"index": index, "id": call_id, "type": "function"}
        chunks.append({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]})
        chunks.extend(
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]} for piece in pieces
        )
    return Reply(chunks=chunks, finish="tool_calls")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error with an OpenAI-style body."""
    body = {"message": message, "type": "fake_error", "code": None}
    return Reply(status=status, error={"error": body}, headers=headers or {})


async def _echo(call: ToolCall) -> Any:
    return {"echoed": call.arguments["word"]}


#: The tool the tests' and the bench's scripted tool calls call: it says ``word`` back.
ECHO = Tool(
    name="echo",
    description="Says the word back.",
    parameters={
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": False,
    },
    handler=_echo,
)


@dataclass
class Recorded:
    body: dict[str, Any]
    headers: dict[str, str]
    at: float


def _chunk(delta: dict[str, Any], finish: str | None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "choices": [choice],
    }
    return f"data: {json.dumps(payload)}\n\n".encode()


class FakeOpenAI:
    """The server; ``url`` is its ``/v1`` base once :meth:`start` returned."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.url = ""
        self._release = threading.Event()
        app = Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def bodies(self) -> list[dict[str, Any]]:
        return [request.body for request in self.requests]

    async def _hold(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            while not self._release.is_set():
                await anyio.sleep(0.02)  # the server's own stall, released when it stops

    async def _complete(self, request: Request) -> Response:
        self.requests.append(
            Recorded(await request.json(), dict(request.headers), time.monotonic())
        )
        if not self.replies:
            return JSONResponse({"error": {"message": "no scripted reply left"}}, status_code=418)
        reply = self.replies.popleft()
        if reply.hold and not reply.hold_at:
            await self._hold(reply.hold)
        if reply.status != 200 and isinstance(reply.error, str):
            return PlainTextResponse(reply.error, status_code=reply.status, headers=reply.headers)
        if reply.status != 200:
            return JSONResponse(reply.error, status_code=reply.status, headers=reply.headers)
        return StreamingResponse(self._body(reply), media_type="text/event-stream")

    async def _body(self, reply: Reply) -> AsyncIterator[bytes]:
        for number, delta in enumerate(reply.chunks):
            if reply.cut_after is not None and number >= reply.cut_after:
                raise CutStreamError
            if reply.hold and reply.hold_at == number:
                await self._hold(reply.hold)
            if reply.drip and number:
                await self._hold(reply.drip)
            yield _chunk(delta, None)
        if reply.cut_after is not None:
            raise CutStreamError
        if reply.stream_error is not None:
            yield f"data: {json.dumps({'error': reply.stream_error})}\n\n".encode()
            return
        yield _chunk({}, reply.finish)
        yield b"data: [DONE]\n\n"

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.01)  # bounded start-up poll of a server thread
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"

    def stop(self) -> None:
        self._release.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)
