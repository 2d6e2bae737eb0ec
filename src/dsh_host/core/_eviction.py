"""Idle eviction: live Sessions nobody uses are detached to cold (docs/always-on.md).

A live Session is *busy* while one of its Agents is not idle or has queued input, while an event
stream is attached to it (:meth:`Evictor.attach`), or while it has an Agent that is not a root
(a sub-agent's Session lives as long as its parent's turn). One periodic check (every
``min(idle_seconds, 60)`` s of host-clock time) records when each Session was last seen busy and
evicts those idle for at least ``idle_seconds``: a flush, then the host's dispose + flush +
detach. A flush that fails keeps the Session live (it is logged and tried again at the next
check). Evicted Sessions keep their durable wake entries, so cold delivery still fires them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from dsh_hookspecs import Clock, TaskSlot, TimerHandle

from .._observations import Opened
from ._agent import LiveAgent
from ._session import LiveSession, LiveSessionStore

log = structlog.get_logger(__name__)

#: The longest interval (seconds) between two checks.
MAX_INTERVAL = 60.0


@dataclass(slots=True)
class _Seen:
    """When (host-clock seconds) a live Session was last busy, and its attached streams."""

    busy_at: float
    streams: int = 0


class Evictor:
    """Detaches live Sessions idle for ``idle_seconds`` (0: never)."""

    def __init__(
        self,
        *,
        sessions: LiveSessionStore,
        agents: Callable[[], Sequence[LiveAgent]],
        clock: Clock,
        evict: Callable[[LiveSession], Awaitable[bool | None]],
        idle_seconds: float = 0,
    ) -> None:
        """``evict(session)`` makes it cold and answers whether it did (False: storage did not
        take its flush; None: its Agent became busy meanwhile, so it stays live quietly)."""
        if idle_seconds < 0:
            raise ValueError("evict_idle_seconds must be >= 0")
        self.sessions, self.clock, self.idle_seconds = sessions, clock, idle_seconds
        self._agents = agents
        self._evict = evict
        self._seen: dict[str, _Seen] = {}
        self._slot = TaskSlot("host-eviction")
        self._timer: TimerHandle | None = None
        self._closed = False
        self._remove: Callable[[], None] | None = None

    @property
    def enabled(self) -> bool:
        return self.idle_seconds > 0

    @property
    def interval(self) -> float:
        return min(self.idle_seconds, MAX_INTERVAL)

    @property
    def busy(self) -> bool:
        """A check is running."""
        return self._slot.busy

    def start(self) -> None:
        if self.enabled and not self._closed and self._timer is None:
            self._remove = self.sessions.subscribe(self._on_open, Opened)
            self._arm()

    def _on_open(self, opened: Opened) -> None:
        self._seen.setdefault(opened.session.id, _Seen(0)).busy_at = self.clock.time()

    async def close(self) -> None:
        self._closed = True
        if self._remove is not None:
            self._remove()
            self._remove = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self._slot.stop()

    def attached(self, session_id: str) -> int:
        """How many event streams are attached to ``session_id`` now."""
        seen = self._seen.get(session_id)
        return 0 if seen is None else seen.streams

    def attach(self, session_id: str) -> Callable[[], None]:
        """Count one attached event stream on ``session_id``; call the result to release it."""
        seen = self._seen.setdefault(session_id, _Seen(self.clock.time()))
        seen.streams += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            seen.streams -= 1
            seen.busy_at = self.clock.time()  # idle from the moment the last viewer left

        return release

    # -- the periodic check ---------------------------------------------------------------------
    def _arm(self) -> None:
        self._timer = self.clock.call_later(self.interval, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._closed:
            return
        if not self._slot.busy:
            self._slot.start(self._check)
        self._arm()

    async def _check(self) -> None:
        await self.check()

    async def check(self) -> list[str]:
        """One pass: evict every live Session idle long enough; returns the evicted ids."""
        now = self.clock.time()
        busy = self._busy_sessions()
        live = {session.id: session for session in self.sessions.live()}
        for sid in [
            sid for sid, seen in self._seen.items() if sid not in live and not seen.streams
        ]:
            del self._seen[sid]  # went cold some other way; forget it
        due: list[tuple[LiveSession, float]] = []
        for sid, session in live.items():
            seen = self._seen.setdefault(sid, _Seen(now))
            if seen.streams or sid in busy:
                seen.busy_at = now
            elif now - seen.busy_at >= self.idle_seconds:
                due.append((session, now - seen.busy_at))
        evicted = []
        for session, idle in due:
            if self._closed:
                break
            if self._seen[session.id].streams:
                continue  # a stream attached while an earlier one was evicted
            if await self._evict_one(session, idle):
                evicted.append(session.id)
        return evicted

    def _busy_sessions(self) -> set[str]:
        busy: set[str] = set()
        for agent in self._agents():
            if agent.parent is not None or agent.phase != "idle" or agent.inbox:
                busy.add(agent.session.id)
            if agent.parent is not None:
                busy.add(agent.parent.session.id)
        return busy

    async def _evict_one(self, session: LiveSession, idle: float) -> bool:
        try:
            done = await self._evict(session)
        except Exception as exc:
            done, error = False, str(exc)
        else:
            error = "storage did not acknowledge the flush"
        if done is None:
            return False
        if not done:
            log.error("host.session_evict_failed", session_id=session.id, error=error)
            return False
        if not self._seen[session.id].streams:
            del self._seen[session.id]
        log.info("host.session_evicted", session_id=session.id, idle_seconds=round(idle, 3))
        return True
