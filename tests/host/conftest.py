"""Fixtures shared by the host tests."""

from __future__ import annotations

import pytest

from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend

from .models import GatedModel


@pytest.fixture
async def gated_host(clock):
    """A host on in-memory storage whose model holds each turn until the test releases it
    (``host.test_model``, a :class:`~tests.host.models.GatedModel`)."""
    model = GatedModel()
    async with LiveHost(backend=MemoryBackend(), clock=clock, model=model) as host:
        host.test_model = model  # type: ignore[attr-defined]
        yield host
