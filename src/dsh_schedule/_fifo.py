"""The Agent's schedule FIFO: the tools and the due transaction hold it from preflight through
barrier, so one Agent's schedule transactions never interleave."""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["Fifo"]


class Fifo:
    """The Agent's schedule FIFO: first come, first served, and nothing allocated while idle.

    (``asyncio.Lock`` keeps a deque for good after its first contention; thousands of idle
    owners should not.) Ownership is handed straight to the next waiter on release, so a later
    arrival can never overtake a queued one.
    """

    __slots__ = ("_busy", "_waiters")

    def __init__(self) -> None:
        self._busy = False
        self._waiters: deque[asyncio.Future[None]] | None = None

    def locked(self) -> bool:
        return self._busy

    async def __aenter__(self) -> None:
        if not self._busy:
            self._busy = True
            return
        if self._waiters is None:
            self._waiters = deque()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # ownership was handed over as we were cancelled: pass it on
            else:
                self._forget(waiter)
            raise

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        waiters = self._waiters
        if waiters is not None and waiter in waiters:
            waiters.remove(waiter)

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # still busy: ownership moves to that waiter
                return
        self._waiters = None
        self._busy = False
