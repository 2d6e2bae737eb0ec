"""Cold delivery: the host resumes cold Sessions whose wake entry is due (docs/always-on.md).

One timer is armed for the earliest wake of the durable index. Waits are bounded segments
(:func:`~dsh_hookspecs.segment_wait`: at most ``max_segment`` seconds of loop time) and every
wake re-reads the wall clock, like the Schedule owner. When entries are due, their cold Sessions
are resumed through the host's ordinary resume (``LiveHost.resume_session``), so the plugins' own
resume path runs; a live Session is skipped (its plugins own their wakes while it is live). On a
backend several hosts share, the backend lists only the entries of Sessions no other live host
leases, and the resume takes the lease first, skipping a Session another host is claiming at
that instant (``SKIP LOCKED``), so hosts share due wakes and a dead host's are taken over once
its leases run out; as other hosts file entries too, a shared service looks again at least every
segment even when none stands.

An entry that stays due after its Session was resumed is not claimed again while that Session
stays live; once it is cold again, it is retried with a back-off
(:class:`~dsh_hookspecs.BackOff`: 1 s doubling to ``max_segment``) and logged once. Storage
failures in the timer path are logged once and retried with the same back-off; they never
escape. The timer is re-armed at start-up, when a request makes an earlier wake, and when a
Session with standing entries goes cold.

A deleted Session (``LiveHost.delete_session``) is forgotten (:meth:`WakeService.forget`): its
claims go, and a pass that listed its entries before the delete finds it gone (the resume
answers :class:`KeyError`) and treats the entries like delivered ones, never as a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import cast

import structlog

from dsh_hookspecs import BackOff, Clock, TaskSlot, TimerHandle, segment_wait

from .._observations import Detached, WakeChanged
from ..persistence import Backend, DueWake, SessionLiveElsewhereError
from ._session import TURNS_WAKE, LiveSession, LiveSessionStore, NothingDueError
from ._settle import Settler

log = structlog.get_logger(__name__)


#: How many plugins' entries due in one page make a herd (see :attr:`WakeService.delivering`).
HERD = 64
#: The longest owed turns wait for the outbox to send (seconds), and how often they look again.
TURNS_HELD_SECONDS = 30.0
TURNS_HELD_POLL = 0.2


async def bounded(
    items: Sequence[tuple[str, list[DueWake]]],
    limit: int,
    run: Callable[[str, list[DueWake]], Awaitable[None]],
) -> None:
    """``run`` each of ``items``, at most ``limit`` at once: that many workers take the next one
    in order (a task per item waiting on a semaphore would cost a herd a task and a wake-up
    each)."""
    pending = iter(items)

    async def worker() -> None:
        for session_id, keys in pending:
            await run(session_id, keys)

    await asyncio.gather(*(worker() for _ in range(min(limit, len(items)))))


@dataclass(slots=True)
class _Claim:
    """What the service did with one due entry ``(session, plugin, at_ms)``."""

    #: The delays of its retries (a failed or still-due claim), doubling to the segment.
    retries: BackOff
    #: Wall ms before which the entry is not claimed again; ``None``: its Session was resumed.
    not_before: int | None = None
    logged: bool = False

    def back_off(self, now_ms: int) -> None:
        self.not_before = now_ms + round(self.retries.next() * 1000)


class WakeService:
    """Arms one timer for the earliest wake and resumes the cold Sessions that are due."""

    def __init__(
        self,
        *,
        backend: Backend,
        sessions: LiveSessionStore,
        clock: Clock,
        resume: Callable[[str], Awaitable[object]],
        max_segment: float = 60.0,
        batch: int = 1024,
        concurrency: int = 16,
        plan_concurrency: int = 256,
        settler: Settler | None = None,
        shared: bool = False,
        plan: Callable[[str, list[DueWake]], Awaitable[bool]] | None = None,
        sending: Callable[[], bool] = lambda: False,
    ) -> None:
        """``shared``: other hosts file wakes in the same index, so the service never stops
        looking (a pass at least every ``max_segment`` seconds, even with nothing standing).
        ``concurrency``: how many cold Sessions are resumed at once; ``plan_concurrency``: how
        many plans are read and stored at once (they share reads and commits). ``settler``:
        makes the Sessions this service woke cold again once they are quiet, and bounds how many
        of them are live (resumes wait for room). ``plan``: stores a cold Session's due entries
        without making it live (:meth:`~._cold.ColdPlans.deliver`); ``False`` and the Session is
        resumed."""
        self.backend, self.sessions, self.clock = backend, sessions, clock
        self._plan = plan
        self.shared = shared
        #: The longest wait (seconds of loop time) before the wall clock is read again.
        self.max_segment = max_segment
        #: How many due entries one index query reads (the page grows past skipped ones).
        self.batch = batch
        self.concurrency = concurrency
        self.plan_concurrency = plan_concurrency
        self.settler = settler
        #: While true (the outbox sends a herd's notices), owed turns wait (see
        #: :meth:`_holds_turns`); ``_turns_held``: they do in the pass under way.
        self.sending = sending
        self._held_since: int | None = None
        self._turns_held = False
        self._resume = resume
        self._slot = TaskSlot("host-wakes")
        self._timer: TimerHandle | None = None
        self._armed_for: int | None = None
        self._claims: dict[DueWake, _Claim] = {}
        self._again = False
        #: The last page held a herd of plugins' due entries (see :attr:`delivering`).
        self._delivering = False
        self._requested: int | None = None
        self._paused = 0
        self._started = False
        self._closed = False
        #: The retries of a failed read of the index (``None``: the last one succeeded).
        self._failure: BackOff | None = None
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def armed_for(self) -> int | None:
        """The wall ms the armed timer heads for (its segment may end sooner); ``None``: none."""
        return self._armed_for

    @property
    def busy(self) -> bool:
        """A pass over the due entries is running."""
        return self._slot.busy

    @property
    def delivering(self) -> bool:
        """A herd of plugins' due entries is being delivered (planned, or resumed for): from
        the first page holding at least :data:`HERD` of them to the first that holds fewer.
        Not while only the owed turns that follow deliveries are resumed, nor for a trickle.
        The outbox holds back meanwhile."""
        return self._delivering

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Observe requests and detaches, and look for due entries now."""
        if self._started or self._closed:
            return
        self._started = True
        self._unsubscribe = self.sessions.subscribe(self._observe, (WakeChanged, Detached))
        self.kick()

    async def close(self) -> None:
        """Stop the timer and the running pass (if any); nothing is resumed from now on."""
        self._closed = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._cancel_timer()
        await self._slot.stop()

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """Deliver nothing inside the block (``dsh reindex`` opens Sessions only to refile)."""
        self._paused += 1
        self._cancel_timer()
        try:
            await self._slot.join()  # a running pass resumes nothing more once paused
            yield
        finally:
            self._paused -= 1
            self.kick()

    # -- triggers -------------------------------------------------------------------------------
    def kick(self) -> None:
        """Run one pass over the due entries now (or once more after the running one)."""
        if self._closed or self._paused or not self._started:
            return
        if self._slot.busy:
            self._again = True
            return
        self._cancel_timer()
        self._slot.start(self._run)

    def _observe(self, observation: WakeChanged | Detached) -> None:
        match observation:
            case WakeChanged(at_ms=at_ms):
                self._on_request(at_ms)
            case Detached():
                self._on_detach(observation)

    def _on_request(self, at_ms: int | None) -> None:
        if at_ms is None:
            return
        if self._slot.busy:  # the running pass arms at its end: make it consider this one
            self._requested = at_ms if self._requested is None else min(self._requested, at_ms)
        elif self._armed_for is None or at_ms < self._armed_for:
            self._arm(at_ms)

    def _on_detach(self, detached: Detached) -> None:
        # The store publishes only its own Sessions.
        standing = self.sessions.wakes(cast(LiveSession, detached.session))
        if standing:
            earliest = min(standing.values())
            if earliest <= self.clock.now_ms():
                self.kick()
            elif self._armed_for is None or earliest < self._armed_for:
                self._arm(earliest)

    def forget(self, session_id: str) -> None:
        """``session_id`` was deleted: drop what the service remembers of its entries, and look
        again (the timer may be armed for one of them)."""
        self._claims = {key: c for key, c in self._claims.items() if key[0] != session_id}
        self.kick()

    def _on_timer(self) -> None:
        self._timer = None
        self._armed_for = None
        self.kick()

    # -- the pass -------------------------------------------------------------------------------
    async def _run(self) -> None:
        target: int | None = None
        again = True
        while again:
            self._again = False
            target = await self._pass()
            again = self._again or (target is not None and target <= self.clock.now_ms())
        self._delivering = False
        self._slot.release()  # a kick from here on starts a new pass
        requested, self._requested = self._requested, None
        if requested is not None and (target is None or requested < target):
            target = requested
        if target is None and self.shared:
            target = self.clock.now_ms() + round(self.max_segment * 1000)
        if target is not None and not self._closed and not self._paused:
            self._arm(target)

    async def _pass(self) -> int | None:
        """Resume what is due; return the wall ms of the next pass (``None``: nothing stands)."""
        now = self.clock.now_ms()
        horizon = now + round(self.max_segment * 1000)
        self._turns_held = self._holds_turns()
        try:
            rows, truncated = await self._due(now, horizon)
            if not rows:
                earliest = await self.backend.earliest_wake()
                self._recovered()
                # None due in this window: the next entry (one beyond it, or one of a Session
                # another host leases, claimable once that lease would run out). A backend
                # whose two queries disagree (an entry due now yet not listed) never spins.
                return earliest if earliest is None or earliest > now else horizon
        except Exception as exc:
            return self._storage_failed(now, exc)
        self._recovered()
        candidates: list[int] = []
        due: dict[str, list[DueWake]] = {}
        for row in rows:
            session_id, _, at_ms = row
            if at_ms > now:
                candidates.append(at_ms)
                break  # rows are earliest first: the first future one is the next wake
            if self._claimable(row, now, candidates):
                due.setdefault(session_id, []).append(row)
        due_keys = itertools.chain.from_iterable(due.values())
        self._delivering = sum(plugin != TURNS_WAKE for _, plugin, _ in due_keys) >= HERD
        unplanned: list[tuple[str, list[DueWake]]] = []

        async def plan(session_id: str, keys: list[DueWake]) -> None:
            if self._closed or self._paused or self.sessions.get(session_id) is not None:
                return
            if not await self._planned(session_id, keys):
                unplanned.append((session_id, keys))
            elif (retry := self._claims[keys[0]].not_before) is not None:
                candidates.append(retry)  # held elsewhere: look again after the back-off

        async def claim(session_id: str, keys: list[DueWake]) -> None:
            settler = self.settler
            if settler is not None:
                await settler.reserve()
            woke = False
            try:
                if self._closed or self._paused or self.sessions.get(session_id) is not None:
                    return
                if not await self._attempt(session_id, keys):
                    candidates.append(self._claims[keys[0]].not_before or now)
                woke = self.sessions.get(session_id) is not None
            finally:
                if settler is not None and woke:
                    settler.add(session_id)
                elif settler is not None:
                    settler.release()

        if self._turns_held:
            # A herd's notices go out before the turns its deliveries owe: those wait a little.
            owed = [sid for sid, keys in due.items() if all(k[1] == TURNS_WAKE for k in keys)]
            for sid in owed:
                del due[sid]
            if owed:
                candidates.append(now + round(TURNS_HELD_POLL * 1000))
        claims = list(due.items())
        if self.shared:
            # Hosts sharing the index read the same page: each takes it in an order of its own,
            # so they do not race for the same Sessions in lockstep.
            random.shuffle(claims)
        if self._plan is not None:
            # Plans first (cheap, no Session made live), then what has none: the turns they owe
            # and the Sessions whose plugin answered no plan are resumed once the plans of this
            # page are stored, so a herd's dispatches never wait behind its follow-up turns.
            await bounded(claims, self.plan_concurrency, plan)
            claims = unplanned
        await bounded(claims, self.concurrency, claim)
        if self._closed or self._paused:
            return None
        if not truncated:
            seen = set(rows)
            self._claims = {key: c for key, c in self._claims.items() if key in seen}
        elif due:
            return now  # more may be due beyond this page
        return min(candidates) if candidates else horizon

    async def _due(self, now: int, horizon: int) -> tuple[Sequence[DueWake], bool]:
        """The entries due by ``horizon``; the page grows while it holds only skipped ones."""
        limit = self.batch
        while True:
            rows = await self.backend.due_wakes(horizon, limit)
            truncated = len(rows) >= limit
            if not truncated or rows[-1][2] > now or any(self._open_to(row, now) for row in rows):
                return rows, truncated
            limit *= 2

    def _open_to(self, row: DueWake, now: int) -> bool:
        """Whether ``row`` could be claimed now (a read-only :meth:`_claimable`; an owed turn
        held back is not, so a page of them grows past them to what is due after)."""
        if self.sessions.get(row[0]) is not None or (self._turns_held and row[1] == TURNS_WAKE):
            return False
        claim = self._claims.get(row)
        return claim is None or (claim.not_before is not None and claim.not_before <= now)

    def _claimable(self, row: DueWake, now: int, candidates: list[int]) -> bool:
        if self.sessions.get(row[0]) is not None:
            return False  # live: its plugins own the entry
        claim = self._claims.get(row)
        if claim is None:
            return True
        if claim.not_before is None:  # resumed, cold again, and still due
            claim.back_off(now)
            if not claim.logged:
                claim.logged = True
                log.warning("host.wake_still_due", session_id=row[0], plugin=row[1], at_ms=row[2])
        assert claim.not_before is not None
        if claim.not_before <= now:
            return True
        candidates.append(claim.not_before)
        return False

    async def _attempt(self, session_id: str, keys: list[DueWake]) -> bool:
        """Resume ``session_id`` for its due ``keys``; ``False`` (backed off) when that
        failed."""
        try:
            await self._resume(session_id)
        except KeyError as exc:
            # Deleted since the index was read (its entries went with it), or delivered by
            # another host meanwhile (nothing of it is due any more).
            if isinstance(exc, NothingDueError):
                log.info("host.wake_delivered_elsewhere", session_id=session_id)
            else:
                log.info("host.wake_session_gone", session_id=session_id)
            for key in keys:
                self._claim(key).not_before = None
            return True
        except SessionLiveElsewhereError:
            self._elsewhere(session_id, keys)
            return False
        except Exception as exc:
            now = self.clock.now_ms()
            for key in keys:
                claim = self._claim(key)
                claim.back_off(now)
                if not claim.logged:
                    claim.logged = True
                    log.error("host.wake_resume_failed", session_id=session_id, error=repr(exc))
            return False
        log.info("host.wake_delivered", session_id=session_id, plugins=[k[1] for k in keys])
        for key in keys:
            self._claim(key).not_before = None
        return True

    async def _planned(self, session_id: str, keys: list[DueWake]) -> bool:
        assert self._plan is not None
        try:
            planned = await self._plan(session_id, keys)
        except SessionLiveElsewhereError:
            # Not a failure, and no resume either (it would be refused the same way).
            self._elsewhere(session_id, keys)
            return True
        except Exception as exc:  # a storage failure: the resume path decides and reports
            log.warning("host.wake_plan_failed", session_id=session_id, error=repr(exc))
            return False
        if planned:
            log.info("host.wake_planned", session_id=session_id, plugins=[k[1] for k in keys])
            for key in keys:
                self._claim(key).not_before = None
            self._again = True  # the turn it owes is due now: the next pass resumes it
        return planned

    def _elsewhere(self, session_id: str, keys: list[DueWake]) -> None:
        """Another host holds or is claiming ``session_id`` (shared storage): that host delivers
        it; its entries are looked at again after a back-off (the host may die)."""
        log.info("host.wake_live_elsewhere", session_id=session_id)
        now = self.clock.now_ms()
        for key in keys:
            self._claim(key).back_off(now)

    def _holds_turns(self) -> bool:
        """Whether owed turns wait now: while the outbox is sending (a herd's notices), for at
        most :data:`TURNS_HELD_SECONDS` (a slow receiver never starves the turns)."""
        if not self.sending():
            self._held_since = None
            return False
        now = self.clock.now_ms()
        started = self._held_since = self._held_since or now
        return now - started < TURNS_HELD_SECONDS * 1000

    def _claim(self, key: DueWake) -> _Claim:
        claim = self._claims.get(key)
        if claim is None:
            claim = self._claims[key] = _Claim(BackOff(self.max_segment))
        return claim

    def _storage_failed(self, now: int, exc: Exception) -> int:
        failure = self._failure
        if failure is None:
            failure = self._failure = BackOff(self.max_segment)
            log.error("host.wakes_unreadable", error=repr(exc))
        return now + round(failure.next() * 1000)

    def _recovered(self) -> None:
        if self._failure is not None:
            self._failure = None
            log.info("host.wakes_readable_again")

    # -- the timer ------------------------------------------------------------------------------
    def _arm(self, target: int) -> None:
        """Arm one bounded segment towards wall ms ``target`` (at once when it is due)."""
        self._cancel_timer()
        wait = segment_wait(self.clock, target, self.max_segment)
        if wait is None:
            self.kick()
            return
        self._timer = self.clock.call_later(wait, self._on_timer)
        self._armed_for = target

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._armed_for = None
