"""The host's clock: wall clock for persisted instants, the event loop's clock for waits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from dsh_hookspecs import TimerHandle


class SystemClock:
    """Real time: ``time.time()`` for the wall clock, ``loop.call_later`` for waits."""

    __slots__ = ()

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback)
