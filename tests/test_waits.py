"""The waits every host and plugin wait goes through (dsh_hookspecs._waits): the one back-off and
the one segmented wait for a wall-clock instant. Time is a ManualClock; nothing sleeps."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

import pytest

from dsh_hookspecs import BackOff, TimerHandle, segment_wait
from dsh_host.testing import ManualClock, wait_until


def test_a_back_off_starts_at_one_second_and_doubles_to_its_ceiling() -> None:
    backoff = BackOff(60.0)
    assert (backoff.stalled, backoff.delay) == (False, 0.0)
    assert [backoff.next() for _ in range(9)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert backoff.stalled
    assert backoff.reset() is True  # it ended a stall
    assert (backoff.stalled, backoff.reset()) == (False, False)
    assert backoff.next() == 1.0  # from the start again


def test_no_delay_is_longer_than_the_ceiling_not_even_the_first() -> None:
    assert [BackOff(0.25).next() for _ in range(2)] == [0.25, 0.25]
    backoff = BackOff(5, first=0.5)
    assert [backoff.next() for _ in range(6)] == [0.5, 1, 2, 4, 5, 5]
    assert repr(backoff) == "<BackOff delay=5.0 first=0.5 ceiling=5.0>"


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, True, "1", None])
def test_a_back_off_needs_positive_seconds(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^ceiling must be a positive number of seconds, got "):
        BackOff(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^first must be a positive number of seconds, got "):
        BackOff(60.0, first=bad)  # type: ignore[arg-type]


async def test_a_wait_lasts_the_next_delay_of_loop_time(clock: ManualClock) -> None:
    backoff = BackOff(60.0)
    first = asyncio.create_task(backoff.wait(clock))
    await wait_until(lambda: backoff.waiting)
    assert clock.pending_delays() == [1.0]
    clock.advance(0.999)
    await asyncio.sleep(0)
    assert not first.done()
    clock.advance(0.001)
    assert await first == 1.0
    assert not backoff.waiting
    second = asyncio.create_task(backoff.wait(clock))
    await wait_until(lambda: backoff.waiting)
    assert clock.pending_delays() == [2.0]  # doubled
    clock.advance(2)
    assert await second == 2.0


async def test_cutting_a_wait_short_ends_it_now_and_disarms_its_timer(clock: ManualClock) -> None:
    backoff = BackOff(60.0)
    backoff.cut_short()  # no wait: nothing to end, nothing changes
    assert (backoff.stalled, backoff.waiting) == (False, False)
    waiting = asyncio.create_task(backoff.wait(clock))
    await wait_until(lambda: backoff.waiting)
    backoff.cut_short()
    backoff.cut_short()  # twice is once
    assert await waiting == 1.0
    assert clock.pending_delays() == []
    assert backoff.delay == 1.0  # the next wait is still longer


async def test_one_wait_at_a_time_and_a_cancelled_wait_leaves_no_timer(
    clock: ManualClock,
) -> None:
    backoff = BackOff(60.0)
    waiting = asyncio.create_task(backoff.wait(clock))
    await wait_until(lambda: backoff.waiting)
    with pytest.raises(RuntimeError, match="already in progress"):
        await backoff.wait(clock)
    assert clock.pending_delays() == [1.0]  # the refused wait armed nothing, took no delay
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert (backoff.waiting, clock.pending_delays()) == (False, [])


class _Wall:
    """A Clock whose wall time has sub-millisecond precision (arming only reads ``time``)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def now_ms(self) -> int:
        return math.floor(self.seconds * 1000)

    def time(self) -> float:
        return self.seconds

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        raise AssertionError("segment_wait arms nothing")


def test_a_segment_is_at_most_max_segment_and_none_once_the_target_is_reached() -> None:
    wall = _Wall(1_000.0)
    assert segment_wait(wall, 1_000_000 + 90_000, 60.0) == 60.0  # far: one whole segment
    assert segment_wait(wall, 1_000_000 + 20_000, 60.0) == 20.0  # near: the rest
    wall.seconds = 1_000.0004  # a floored millisecond would fire 0.4 ms late: the rest is read
    assert segment_wait(wall, 1_000_001, 60.0) == pytest.approx(0.0006)
    assert segment_wait(wall, 1_000_000, 60.0) is None  # reached
    wall.seconds = 900.0  # the wall clock was set back: never early, still one segment at most
    assert segment_wait(wall, 1_000_000, 60.0) == 60.0
    wall.seconds = 2_000.0  # moved forward past the target
    assert segment_wait(wall, 1_000_000, 60.0) is None


@pytest.mark.parametrize("bad", [0.0, -5.0, math.nan])
def test_a_segment_needs_a_positive_length(bad: float) -> None:
    with pytest.raises(ValueError, match=r"^max_segment must be a positive number of seconds"):
        segment_wait(_Wall(0.0), 1_000, bad)
