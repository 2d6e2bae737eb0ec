"""Waits on the host clock: the one back-off and the one segmented wait of dsh.

Beside :mod:`._tasks` (which owns the tasks), two shapes cover every wait for time in dsh:

* :class:`BackOff`: what is retried after a failure (an unacknowledged flush, a storage read, a
  resume) waits ``first`` seconds (1 s), then twice as long each time, up to a ``ceiling``.
  :attr:`BackOff.stalled` tells the first failure from the later ones (a stall is logged once),
  :meth:`BackOff.reset` says whether one ended (its end is logged once). :meth:`BackOff.wait`
  waits the next delay on a :class:`~dsh_hookspecs.Clock`; :meth:`BackOff.cut_short` ends that
  wait at once (a later durable flush of the same Session, for example).
* :func:`segment_wait`: a wait for a wall-clock instant is armed as segments of loop time of at
  most ``max_segment`` seconds, and the wall clock is read again at the end of each one. A clock
  set back never fires a wait early; a clock moved forward is honoured within one segment.

Both only read the clock they are handed; neither starts a task.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._protocols import Clock

__all__ = ["BackOff", "segment_wait"]


def _positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


class BackOff:
    """The delays between retries: ``first`` seconds, doubling to ``ceiling`` (both seconds).

    The first delay is ``first`` or ``ceiling``, whichever is shorter; no delay is ever longer
    than ``ceiling``. Raises :class:`ValueError` unless both are positive numbers.
    """

    __slots__ = ("_wake", "ceiling", "delay", "first")

    def __init__(self, ceiling: float, *, first: float = 1.0) -> None:
        self.first = _positive("first", first)
        self.ceiling = _positive("ceiling", ceiling)
        #: The last delay :meth:`next` handed out; ``0.0`` while not stalled.
        self.delay = 0.0
        self._wake: asyncio.Future[None] | None = None

    def __repr__(self) -> str:
        return f"<BackOff delay={self.delay} first={self.first} ceiling={self.ceiling}>"

    @property
    def stalled(self) -> bool:
        """A delay was handed out since the start or the last :meth:`reset`."""
        return self.delay > 0

    @property
    def waiting(self) -> bool:
        """A :meth:`wait` is in progress."""
        return self._wake is not None

    def next(self) -> float:
        """The next delay (seconds): ``first`` after a start or reset, then twice the last one,
        never more than ``ceiling``."""
        delay = self.delay * 2 if self.delay else self.first
        self.delay = min(delay, self.ceiling)
        return self.delay

    def reset(self) -> bool:
        """Start again from ``first``; ``True`` when this ends a stall (:attr:`stalled` was)."""
        stalled = self.delay > 0
        self.delay = 0.0
        return stalled

    async def wait(self, clock: Clock) -> float:
        """Wait :meth:`next` seconds of ``clock``'s loop time, or until :meth:`cut_short`;
        return the delay.

        One wait at a time: raises :class:`RuntimeError` while another is in progress.
        """
        if self._wake is not None:
            raise RuntimeError("a back-off wait is already in progress")
        delay = self.next()
        wake = asyncio.get_running_loop().create_future()
        self._wake = wake
        timer = clock.call_later(delay, self.cut_short)
        try:
            await wake
        finally:
            self._wake = None
            timer.cancel()
        return delay

    def cut_short(self) -> None:
        """End the :meth:`wait` in progress now (nothing when none is)."""
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)


def segment_wait(clock: Clock, target_ms: int, max_segment: float) -> float | None:
    """The next segment of a wait for the wall-clock instant ``target_ms`` (epoch ms).

    Returns how many seconds of loop time to wait now (at most ``max_segment``), or ``None`` when
    ``clock`` has reached ``target_ms``. Arm a timer for that long, and when it fires call this
    again: it re-reads the wall clock (sub-millisecond :meth:`~dsh_hookspecs.Clock.time`, so a
    wait armed from a floored millisecond never fires late). Raises :class:`ValueError` unless
    ``max_segment`` is positive.
    """
    if not max_segment > 0:
        raise ValueError(f"max_segment must be a positive number of seconds, got {max_segment!r}")
    remaining = target_ms / 1000 - clock.time()
    if remaining <= 0:
        return None
    return min(remaining, max_segment)
