"""Test utilities shipped with the reference host: a manual clock and a fault-injecting backend.

Plugins' test suites use these against the real host; nothing here is used in production paths.
"""

from __future__ import annotations

import asyncio
import heapq
import inspect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ._records import BoardRow, StoredSession, StoredSummary
from .persistence import (
    Backend,
    DueWake,
    OutboxBackend,
    OutboxClaim,
    OutboxRow,
    OutboxStatus,
    SessionCursor,
    SessionRow,
    Settlement,
    StorageError,
    Write,
    session_count,
    session_page,
)


class ManualClock:
    """A clock whose two halves move only when a test says so.

    * ``now_ms()`` is the wall clock (epoch ms, UTC). :meth:`set_wall` moves it alone, forwards or
      backwards, like an administrator changing the system time.
    * ``call_later`` timers run on a private *loop time* that only :meth:`advance` moves.
      :meth:`advance` moves both clocks together, like real time passing; :meth:`suspend` moves
      only the wall clock, like a laptop that slept (loop timers did not notice).

    Timers fire in deadline order (ties in arming order) from inside :meth:`advance`, each as a
    plain callback on the running event loop, exactly like ``loop.call_later`` would. Nothing ever
    waits for real time: a test that forgets to advance simply never fires the timer.
    """

    def __init__(self, wall_ms: int = 1_785_931_200_000) -> None:
        # 2026-08-05T12:00:00.000Z, the instant upstream's runtime tests are pinned to.
        self._wall_ms = wall_ms
        self._loop_time = 0.0
        self._heap: list[tuple[float, int, _ManualTimer]] = []
        self._counter = itertools.count()

    # -- Clock protocol -------------------------------------------------------------------
    def now_ms(self) -> int:
        return self._wall_ms

    def time(self) -> float:
        return self._wall_ms / 1000

    def call_later(self, delay: float, callback: Callable[[], None]) -> _ManualTimer:
        timer = _ManualTimer(self._loop_time + max(0.0, delay), callback)
        heapq.heappush(self._heap, (timer.deadline, next(self._counter), timer))
        return timer

    # -- test controls ----------------------------------------------------------------------
    @property
    def loop_time(self) -> float:
        return self._loop_time

    def pending_delays(self) -> list[float]:
        """Remaining delays (seconds of loop time) of every armed, uncancelled timer."""
        return sorted(t.deadline - self._loop_time for _, _, t in self._heap if not t.cancelled)

    def set_wall(self, wall_ms: int) -> None:
        self._wall_ms = wall_ms

    def suspend(self, seconds: float) -> None:
        """The machine slept: the wall clock jumps, loop time and its timers do not move."""
        self._wall_ms += round(seconds * 1000)

    def advance(self, seconds: float) -> int:
        """Move both clocks by ``seconds``, firing due timers in order; return how many fired."""
        target = self._loop_time + seconds
        wall_end = self._wall_ms + round(seconds * 1000)
        fired = 0
        while self._heap and self._heap[0][0] <= target:
            deadline, _, timer = heapq.heappop(self._heap)
            if timer.cancelled:
                continue
            self._wall_ms += round((deadline - self._loop_time) * 1000)
            self._loop_time = deadline
            timer.fire()
            fired += 1
        self._wall_ms = wall_end
        self._loop_time = target
        return fired


@dataclass(eq=False, slots=True)
class _ManualTimer:
    deadline: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        self.cancelled = True
        self.callback()


@dataclass(slots=True)
class FaultPlan:
    """What :class:`FaultInjectingBackend` does to the next operations.

    ``fail_appends``: that many next appends raise before writing. ``fail_after_commit``: that
    many next appends write, then raise anyway (the commit was reported as a failure).
    ``fail_loads``: that many next loads raise. ``gate``: when set, appends wait on it before
    writing (a slow flush).
    """

    fail_appends: int = 0
    fail_after_commit: int = 0
    fail_loads: int = 0
    gate: asyncio.Event | None = None
    append_calls: list[tuple[str, int, int]] = field(default_factory=list)


class FaultInjectingBackend:
    """Wraps a real backend and injects failures on command (see :class:`FaultPlan`)."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = f"faulty-{inner.name}"
        self.plan = FaultPlan()

    @property
    def needs_board_rebuild(self) -> bool:
        return self.inner.needs_board_rebuild

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def load(self, session_id: str) -> StoredSession | None:
        if self.plan.fail_loads:
            self.plan.fail_loads -= 1
            raise StorageError("injected load failure")
        return await self.inner.load(session_id)

    async def list_sessions(self) -> Sequence[StoredSummary]:
        return await self.inner.list_sessions()

    async def list_page(
        self, *, after: SessionCursor | None = None, limit: int
    ) -> Sequence[SessionRow]:
        return await session_page(self.inner, after=after, limit=limit)

    async def count_sessions(self) -> int:
        return await session_count(self.inner)

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        return await self.inner.due_wakes(now_ms, limit)

    async def earliest_wake(self) -> int | None:
        return await self.inner.earliest_wake()

    async def board_page(
        self,
        plugin: str,
        kind: str,
        *,
        after: tuple[int, str, str] | None = None,
        limit: int,
        session_id: str | None = None,
    ) -> Sequence[BoardRow]:
        return await self.inner.board_page(
            plugin, kind, after=after, limit=limit, session_id=session_id
        )

    async def board_count(
        self, plugin: str, kind: str, *, after_ms: int | None = None, session_id: str | None = None
    ) -> int:
        return await self.inner.board_count(plugin, kind, after_ms=after_ms, session_id=session_id)

    async def delete(self, session_id: str) -> bool:
        return await self.inner.delete(session_id)

    def _outbox(self) -> OutboxBackend:
        if not isinstance(self.inner, OutboxBackend):
            raise StorageError(f"the {self.inner.name} backend keeps no outbox")
        return self.inner

    async def claim_outbox(
        self, now_ms: int, limit: int, owner: str, claim_until_ms: int
    ) -> Sequence[OutboxClaim]:
        return await self._outbox().claim_outbox(now_ms, limit, owner, claim_until_ms)

    async def settle_outbox(
        self,
        row: OutboxRow,
        owner: str,
        *,
        status: OutboxStatus,
        now_ms: int,
        next_ms: int | None = None,
        error: str | None = None,
    ) -> bool:
        return await self._outbox().settle_outbox(
            row, owner, status=status, now_ms=now_ms, next_ms=next_ms, error=error
        )

    async def settle_outbox_many(self, settlements: Sequence[Settlement]) -> Sequence[bool]:
        return await self._outbox().settle_outbox_many(settlements)

    async def outbox_of(self, session_id: str) -> Sequence[OutboxRow]:
        return await self._outbox().outbox_of(session_id)

    async def earliest_outbox(self) -> int | None:
        return await self._outbox().earliest_outbox()

    async def append(self, write: Write) -> None:
        self.plan.append_calls.append((write.session_id, write.start, len(write.events)))
        if self.plan.gate is not None:
            await self.plan.gate.wait()
        if self.plan.fail_appends:
            self.plan.fail_appends -= 1
            raise StorageError("injected write failure")
        await self.inner.append(write)
        if self.plan.fail_after_commit:
            self.plan.fail_after_commit -= 1
            raise StorageError("injected failure after commit")


async def wait_until(predicate: Callable[[], object], *, timeout: float = 5.0) -> None:
    """Wait (real time, bounded) until ``predicate()`` is truthy, yielding to the loop meanwhile.

    ``predicate`` may return an awaitable, which is awaited.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise TimeoutError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.001)
