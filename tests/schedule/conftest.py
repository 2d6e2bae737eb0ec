from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .harness import Harness, make_harness


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    harness = await make_harness()
    try:
        yield harness
    finally:
        harness.flush.mode = "ok"
        harness.flush.once.clear()
        harness.flush.gate.set()
        await harness.host.close()
