"""Woken Sessions go cold again once their delivery is over (cold delivery's bound on the live set).

The wake service resumes a cold Session only so that its plugins deliver what is due. Left to
idle eviction (minutes by default), a herd of thousands of reminders due at one instant would
keep thousands of Sessions live. :class:`Settler` holds the Sessions the wake service woke and,
every ``interval`` seconds of loop time, asks the host what each one is doing:

* ``"gone"``: cold already, or a person attached an event stream to it (it is theirs now: idle
  eviction decides) — it is forgotten;
* ``"busy"``: an Agent runs or has input queued — it is asked again later;
* ``"due"``: idle, but a standing wake entry is still due (its plugin has not acted yet) — it is
  asked again, and forgotten once it was woken ``grace`` seconds ago (a plugin that keeps an entry
  due is left to idle eviction, as before: the wake service does not claim it while it is live);
* ``"quiet"``: idle with nothing due — it is evicted (flush, dispose, flush, detach).

An eviction that fails or is refused leaves the Session to idle eviction (it is forgotten here, so
a failing store never turns into a busy loop of retries). :meth:`reserve` waits while
``max_live`` woken Sessions are live (or being resumed), which bounds the live set a herd can
build.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal

import structlog

from dsh_hookspecs import Clock, TaskSet, TimerHandle

log = structlog.get_logger(__name__)

#: What a woken Session is doing (see the module docstring).
WokenState = Literal["gone", "busy", "due", "quiet"]


class Settler:
    """Evicts the Sessions the wake service woke as soon as they are quiet."""

    def __init__(
        self,
        *,
        clock: Clock,
        state: Callable[[str], WokenState],
        evict: Callable[[str], Awaitable[bool | None]],
        max_live: int = 256,
        interval: float = 0.05,
        grace: float = 30.0,
    ) -> None:
        """``state(session_id)`` says what a woken Session is doing; ``evict(session_id)`` makes
        it cold (True), or answers why not (False: storage refused a flush; None: it became
        busy)."""
        if max_live < 1:
            raise ValueError("max_live must be >= 1")
        self.clock = clock
        self.max_live, self.interval, self.grace = max_live, interval, grace
        self._state = state
        self._evict = evict
        #: session id -> loop time it was woken.
        self._woken: dict[str, float] = {}
        self._evicting: set[str] = set()
        self._reserved = 0
        self._tasks = TaskSet("host-settle")
        self._timer: TimerHandle | None = None
        self._room = asyncio.Event()
        self._room.set()
        self._closed = False

    def __len__(self) -> int:
        """How many woken Sessions are held (live, or being evicted)."""
        return len(self._woken)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._woken

    async def reserve(self) -> None:
        """Wait until fewer than ``max_live`` woken Sessions are held or reserved, and reserve
        room for one; the caller then :meth:`add` s the Session it woke, or :meth:`release` s
        the room."""
        while self._held() >= self.max_live and not self._closed:
            self._room.clear()
            await self._room.wait()
        self._reserved += 1
        self._update_room()

    def release(self) -> None:
        """Give back a reservation that woke nothing."""
        self._reserved -= 1
        self._update_room()

    def add(self, session_id: str) -> None:
        """``session_id`` was just woken for a delivery (in the room reserved for it)."""
        self._reserved -= 1
        if not self._closed:
            self._woken.setdefault(session_id, self.clock.time())
            if self._timer is None:
                self._timer = self.clock.call_later(self.interval, self._tick)
        self._update_room()

    def _held(self) -> int:
        return len(self._woken) + self._reserved

    async def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._room.set()
        await self._tasks.stop()

    def _forget(self, session_id: str) -> None:
        self._woken.pop(session_id, None)
        self._update_room()

    def _update_room(self) -> None:
        if self._held() < self.max_live:
            self._room.set()
        else:
            self._room.clear()

    def _tick(self) -> None:
        self._timer = None
        if self._closed:
            return
        now = self.clock.time()
        for session_id, since in list(self._woken.items()):
            if session_id in self._evicting:
                continue
            state = self._state(session_id)
            if state == "gone" or (state == "due" and now - since >= self.grace):
                self._forget(session_id)
            elif state == "quiet":
                self._evicting.add(session_id)
                self._tasks.spawn(self._settle(session_id))
        if self._woken:
            self._timer = self.clock.call_later(self.interval, self._tick)

    async def _settle(self, session_id: str) -> None:
        try:
            done = await self._evict(session_id)
        except Exception as exc:
            done, error = False, repr(exc)
        else:
            error = "storage did not acknowledge the flush"
        finally:
            self._evicting.discard(session_id)
        if done is None:
            return  # it became busy: asked again at the next tick
        if not done:
            log.error("host.woken_evict_failed", session_id=session_id, error=error)
        else:
            log.info("host.session_evicted", session_id=session_id, reason="delivered")
        self._forget(session_id)
