"""Fixtures: the fake OpenAI-compatible server, and a real host whose model is ``openai``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from dsh_hookspecs import Event, ModelSettings
from dsh_host import LiveHost, Overlay, Streamed
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import wait_until

from .fake_openai import ECHO, FakeOpenAI

#: The key the tests put in the environment; it must never leave the HTTP request header.
SECRET = "sk-test-Zq81-DO-NOT-LEAK-4c2b"
#: A 50-character key for the redaction tests (issue 23): each run of 8 of its characters is
#: found nowhere else in what the tests look through.
KEY = "sk-live-7Hq2Vx9LmZ4pRt8KcW3nYb6DjF1sGa5UeX0oNi2MkQ"

MakeHost = Callable[..., Awaitable[LiveHost]]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def make_host(fake: FakeOpenAI) -> AsyncIterator[MakeHost]:
    """``await make_host(overlay=..., **settings)``: a started host on ``fake`` with the ``echo``
    tool, closed at the end of the test; ``settings`` are :class:`ModelSettings` fields (the
    key in ``environ`` is :data:`SECRET` unless given)."""
    hosts: list[LiveHost] = []

    async def make(overlay: Overlay | None = None, **settings: Any) -> LiveHost:
        options: dict[str, Any] = {
            "model_name": "fake",
            "timeout_seconds": 5.0,
            "environ": {"DSH_MODEL_API_KEY": SECRET},
            **settings,
        }
        model_settings = ModelSettings(base_url=fake.url, **options)
        host = LiveHost(
            backend=MemoryBackend(), model="openai", model_settings=model_settings, overlay=overlay
        )
        await host.start()
        hosts.append(host)
        host.tools.register(ECHO)
        return host

    try:
        yield make
    finally:
        for host in hosts:
            await host.close()


async def ask(host: LiveHost, agent: Any, message: str, *, timeout: float = 10.0) -> list[Event]:
    """Send ``message`` and wait for its turn to end; the events it appended."""
    before = len(agent.session.events)
    ends = sum(1 for event in agent.session.events if event.type == "turn/end")
    agent.send(message)

    def ended() -> bool:
        count = sum(1 for event in agent.session.events if event.type == "turn/end")
        return count > ends and agent.phase == "idle"

    await wait_until(ended, timeout=timeout)
    return list(agent.session.events[before:])


def fragments(text: str) -> list[str]:
    """The runs of 8 characters of :data:`KEY` that ``text`` holds."""
    return [KEY[at : at + 8] for at in range(len(KEY) - 7) if KEY[at : at + 8] in text]


def of(events: list[Event], kind: str) -> list[Any]:
    return [event.data for event in events if event.type == kind]


def streams(host: LiveHost) -> list[str]:
    """The ``assistant/stream`` texts the host's viewers are sent, collected from now on."""
    pieces: list[str] = []
    host.sessions.subscribe(lambda o: pieces.append(str(o.payload["text"])), Streamed)
    return pieces
