"""Fixtures for the Web host tests: the real host (manual clock, in-memory storage behind a
fault injector) with the test presenter loaded, and a controllable flush path."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh_host import LiveHost

from .support import FlushGate, Presenter, install_flush_gate


@pytest.fixture
async def web_host(host: LiveHost) -> LiveHost:
    host.load_plugin("test-presenter", factory=Presenter)
    return host


@pytest.fixture
async def gate(web_host: LiveHost) -> AsyncIterator[FlushGate]:
    gate = install_flush_gate(web_host)
    try:
        yield gate
    finally:
        # Let the host's final flushes through whatever the test left behind.
        gate.auto = "ok"
        for future in gate.pending:
            if not future.done():
                future.set_result("ok")
