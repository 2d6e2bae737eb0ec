"""The host's clock: wall clock for persisted instants, the event loop's clock for waits."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable

from dsh_hookspecs import TimerHandle

# Timer callbacks run in one shared, empty context instead of a copy of the caller's context
# per timer (thousands of idle owners each hold a timer). Callbacks must not set context
# variables; tasks they start get their own copy as usual.
_TIMER_CONTEXT = contextvars.Context()


class SystemClock:
    """Real time: ``time.time()`` for the wall clock, ``loop.call_later`` for waits."""

    __slots__ = ()

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def time(self) -> float:
        return time.time()

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, delay), callback, context=_TIMER_CONTEXT)
