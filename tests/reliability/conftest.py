"""Figures of the reliability tests: each module tallies what it injected, tried and found."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.chaos.figures import record


@pytest.fixture(scope="module")
def tally(request: pytest.FixtureRequest) -> Iterator[Counter[str]]:
    """A module's figures, written (when results are collected) after its last test."""
    counts: Counter[str] = Counter()
    started = time.monotonic()
    yield counts
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    figures: dict[str, float] = dict(sorted(counts.items()))
    figures["seconds"] = round(time.monotonic() - started, 1)
    record("reliability", module, figures)
