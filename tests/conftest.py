"""Shared fixtures: a manual clock and a real host on an in-memory backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def backend() -> FaultInjectingBackend:
    return FaultInjectingBackend(MemoryBackend())


@pytest.fixture
async def host(clock: ManualClock, backend: FaultInjectingBackend) -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=backend, clock=clock, model="scripted") as running:
        yield running
