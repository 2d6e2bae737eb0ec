"""The outbox's send worker: claims due entries, sends each on its channel, settles it.

Plugins file notices (:meth:`~dsh_hookspecs.SessionStore.notify`); the persistence coordinator
writes them to the outbox with the events that caused them, one entry per configured channel
(:class:`Channels` names them). :class:`OutboxSender` runs beside the host's loop:

* It claims due entries (:meth:`~dsh_host.persistence.OutboxBackend.claim_outbox`) up to its
  free send slots, for a claim that lasts :attr:`OutboxSender.lease_seconds` (six send
  timeouts: room to wait for a thread, then the send): a host that dies mid-send leaves the
  entry to whoever claims it after that. At most ``concurrency`` sends run at once. A JSON
  webhook is sent on the loop through one pooled HTTP client (:mod:`._webhook`: apprise's
  request without apprise's connection per message); every other channel runs apprise (or
  pywebpush) in one of ``threads`` worker threads, so the loop is never blocked by one, and a
  send that waited so long for a thread that its claim would not outlast it is not sent but
  put back (``pending``, due at once).
* It settles what came to an end in batches: one durable write for every send settled while
  the previous write was under way (:meth:`~dsh_host.persistence.OutboxBackend.
  settle_outbox_many`).
* It settles each with what happened: ``delivered``; ``failed`` with a plain reason (refused,
  given up, superseded); ``unknown`` when the request may have arrived and the channel cannot drop
  a repeat; or ``pending`` again after a jittered back-off (about 30 s doubling to an hour, or
  what ``Retry-After`` asked) for a transient failure.
* An entry claimed again after its host died mid-send (:attr:`~dsh_host.persistence.OutboxClaim.
  ambiguous`) is sent again only on a channel whose receiver drops a repeat by key; otherwise it
  is ``unknown``. So e-mail and chat are sent at most once per occurrence.
* It gives up after :data:`MAX_ATTEMPTS` attempts, and once the notice's ``expires_ms`` (the
  reminder's next occurrence) is reached.

It wakes when the coordinator filed entries (:meth:`OutboxSender.kick`), at the earliest due
entry, and every :attr:`OutboxSender.poll_seconds` (entries another host filed). While cold
delivery is delivering plugins' due entries (a herd fell due at once; not while it only resumes
the turns those deliveries owe) it holds back, for at most
:data:`DEFER_SECONDS` and then one send at a time: the deliveries, the durable truth a person
sees first, are not slowed by their own messages, which follow at full speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

import structlog

from dsh_hookspecs import Clock, TaskSet

from ..persistence import OutboxBackend, OutboxClaim, OutboxRow, Settlement, idempotency_key
from ..persistence import OutboxStatus as Status
from ._channels import Channel
from ._guard import AddressPolicy
from ._send import Message, Outcome, send
from ._webhook import PreparedWebhook, Webhooks, prepare
from ._webpush import PushKeys, Subscription, Subscriptions, send_push

_Settled = tuple[Status, int | None, str | None]

__all__ = ["MAX_ATTEMPTS", "Channels", "OutboxSender", "Route", "retry_delay"]

log = structlog.get_logger("dsh_host.outbox")

#: Attempts of one entry before it is given up.
MAX_ATTEMPTS: Final = 8
#: The first retry waits about this long (seconds); each later one twice as long.
RETRY_BASE_SECONDS: Final = 30.0
#: The longest cold delivery holds the outbox back entirely (seconds); one send at a time after.
DEFER_SECONDS: Final = 30.0
#: How often a held-back sender looks whether cold delivery is done (seconds).
DEFERRED_POLL_SECONDS: Final = 0.2
#: The shortest pause between two passes that found nothing to claim (seconds).
MIN_WAIT_SECONDS: Final = 0.01
#: No retry waits longer (seconds).
RETRY_CAP_SECONDS: Final = 3600.0


def retry_delay(
    attempts: int,
    retry_after: float | None = None,
    *,
    base: float = RETRY_BASE_SECONDS,
    rng: Callable[[], float] = random.random,
) -> float:
    """Seconds before the next attempt after ``attempts`` failed ones: ``base`` doubling per
    attempt up to :data:`RETRY_CAP_SECONDS`, jittered to between half and all of it (so a herd of
    retries spreads), or what the receiver asked with ``Retry-After`` (capped the same way)."""
    if retry_after is not None and retry_after > 0:
        return min(retry_after, RETRY_CAP_SECONDS)
    full = min(base * 2 ** max(attempts - 1, 0), RETRY_CAP_SECONDS)
    return float(full / 2 + full / 2 * rng())


class Sending(Protocol):
    """One way of sending on a channel: blocking, run in a worker thread."""

    def __call__(self, message: Message, *, timeout: float) -> Outcome: ...


class AsyncSending(Protocol):
    """One way of sending on a channel on the host's loop (a pooled HTTP client)."""

    def __call__(self, message: Message, *, timeout: float) -> Awaitable[Outcome]: ...


@dataclass(frozen=True, slots=True)
class Route:
    """A channel the sender can send on: what people see of it, and how to send."""

    id: str
    label: str
    service: str
    dedupes: bool
    send: Sending
    #: Sends on the loop instead (then ``send`` is not used by the outbox).
    send_async: AsyncSending | None = None


class Channels:
    """The channels of this host: the configured apprise URLs and the Web Push subscriptions of
    its browsers (when Web Push is on). Their ids are what outbox entries are filed for."""

    def __init__(
        self,
        channels: Iterable[Channel] = (),
        *,
        push_folder: Path | None = None,
        push_subject: str = "mailto:dsh@localhost",
        allow_private: Iterable[str] = (),
    ) -> None:
        """``allow_private``: the hosts a webhook may reach although they are loopback or
        private addresses (``*``: every host; see :mod:`._guard`)."""
        self.configured: tuple[Channel, ...] = tuple(channels)
        #: The pooled client JSON webhooks are sent on (see :mod:`._webhook`).
        self.webhooks = Webhooks(AddressPolicy.of(allow_private))
        self._prepared: dict[str, PreparedWebhook | None] = {}
        self._by_id: dict[str, Channel] = {channel.id: channel for channel in self.configured}
        self.push_keys: PushKeys | None = None
        self.subscriptions: Subscriptions | None = None
        self._push_folder = push_folder
        self._push_subject = push_subject

    def open_push(self) -> None:
        """Load (or make, at first start) the VAPID keys and the subscriptions (Web Push on)."""
        if self._push_folder is not None and self.push_keys is None:
            self.push_keys = PushKeys.load_or_create(self._push_folder)
            self.subscriptions = Subscriptions(self._push_folder)

    def ids(self) -> tuple[str, ...]:
        """Every channel an entry is filed for now."""
        pushes = () if self.subscriptions is None else self.subscriptions.all()
        return (*self._by_id, *(sub.id for sub in pushes))

    def route(self, channel_id: str) -> Route | None:
        """How to send on ``channel_id``; ``None`` when it is no longer configured."""
        channel = self._by_id.get(channel_id)
        if channel is not None:
            return Route(
                channel.id,
                channel.label,
                channel.service,
                channel.dedupes,
                lambda message, *, timeout: send(channel, message, timeout=timeout),
                self._webhook_sender(channel),
            )
        if self.subscriptions is None or self.push_keys is None:
            return None
        sub = self.subscriptions.get(channel_id)
        if sub is None:
            return None
        return Route(sub.id, sub.label, "Web Push", True, self._push_sender(sub))

    def _webhook_sender(self, channel: Channel) -> AsyncSending | None:
        if channel.id not in self._prepared:
            self._prepared[channel.id] = prepare(channel)
        hook = self._prepared[channel.id]
        if hook is None:
            return None
        webhooks = self.webhooks

        def sending(message: Message, *, timeout: float) -> Awaitable[Outcome]:
            return webhooks.send(hook, channel, message, timeout=timeout)

        return sending

    async def aclose(self) -> None:
        """Close the pooled connections (the sender stopped)."""
        await self.webhooks.aclose()

    def _push_sender(self, sub: Subscription) -> Sending:
        keys, subject = self.push_keys, self._push_subject
        assert keys is not None

        def sending(message: Message, *, timeout: float) -> Outcome:
            return send_push(sub, message, keys, subject=subject, timeout=timeout)

        return sending

    def forget(self, channel_id: str) -> None:
        """A Web Push subscription its push service says is gone: no more entries for it."""
        if self.subscriptions is not None:
            self.subscriptions.remove(channel_id)

    def describe(self) -> list[dict[str, str]]:
        """What the page shows of every channel: id, masked label and service (no secret)."""
        shown = [
            {"id": channel.id, "label": channel.label, "service": channel.service}
            for channel in self.configured
        ]
        if self.subscriptions is not None:
            shown += [
                {"id": sub.id, "label": sub.label, "service": "Web Push"}
                for sub in self.subscriptions.all()
            ]
        return shown


def message_of(row: OutboxRow, public_url: str | None) -> Message:
    """What the receiver of ``row`` gets: the notice's words, its key, a link to its Session."""
    notice = row.notice
    link = None
    if public_url is not None:
        link = f"{public_url.rstrip('/')}/?session={row.session_id}"
    ttl = 86_400
    if notice.expires_ms is not None:
        ttl = max(60, min(ttl, (notice.expires_ms - notice.at_ms) // 1000))
    return Message(
        title=notice.title,
        body=notice.body,
        key=idempotency_key(row.session_id, row.plugin, row.key, row.channel),
        at_ms=notice.at_ms,
        link=link,
        data=notice.data,
        ttl_seconds=ttl,
    )


class OutboxSender:
    """Sends the outbox's due entries (see the module docstring)."""

    def __init__(
        self,
        backend: OutboxBackend,
        channels: Channels,
        clock: Clock,
        *,
        public_url: str | None = None,
        concurrency: int = 64,
        threads: int = 8,
        timeout: float = 10.0,
        poll_seconds: float = 2.0,
        retry_base: float = RETRY_BASE_SECONDS,
        owner: str | None = None,
        defer: Callable[[], bool] = lambda: False,
    ) -> None:
        self.backend = backend
        #: While true (cold delivery is delivering a herd), one send at a time: the deliveries
        #: themselves come first, and their messages follow at full speed once they are done.
        self.defer = defer
        self._deferred_since: float | None = None
        self.defer_seconds = DEFER_SECONDS
        self.channels = channels
        self.clock = clock
        self.public_url = public_url
        self.concurrency = concurrency
        self.timeout = timeout
        #: The longest one send can take (apprise gives up on an attempt after three timeouts).
        self.send_budget = timeout * 3
        #: A claim lasts two sends: one waiting for a thread, then the send itself.
        self.lease_seconds = self.send_budget * 2
        self.poll_seconds = poll_seconds
        self.retry_base = retry_base
        self.owner = owner or f"sender-{uuid.uuid4().hex[:12]}"
        self._kicked = asyncio.Event()
        self._busy = 0
        #: Sends through apprise (blocking) run on this many threads; the rest on the loop.
        self.threads = threads
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix="dsh-outbox")
        self._thread_slots = asyncio.Semaphore(threads)
        #: Settlements waiting for the next batch write, and the task writing them.
        self._settling: list[tuple[Settlement, asyncio.Future[bool]]] = []
        self._settler: asyncio.Task[None] | None = None
        #: The last claim took as many entries as it asked for.
        self._backlog = False
        self._sends = TaskSet("outbox.send")
        self._loop_task: asyncio.Task[None] | None = None
        self._stopping = False

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        if self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop claiming; wait for the sends under way (each bounded by the timeout)."""
        self._stopping = True
        self._kicked.set()
        if self._loop_task is not None:
            await self._loop_task
        await self._sends.join()
        self._threads.shutdown(wait=True)
        await self.channels.aclose()

    @property
    def sending(self) -> bool:
        """Sends are under way or their outcomes wait to be written (the host's owed turns
        wait for a herd's notices meanwhile)."""
        return self._busy > 0 or self._backlog or self._settler is not None

    def kick(self) -> None:
        """Entries were filed: look for due ones now."""
        self._kicked.set()

    # -- the loop -------------------------------------------------------------------------------
    async def _run(self) -> None:
        while not self._stopping:
            try:
                claimed = await self._claim()
            except Exception as exc:  # storage trouble: log, wait a poll, try again
                log.warning("outbox.claim_failed", error=str(exc), error_type=type(exc).__name__)
                claimed = 0
            if claimed and self._busy < self._slots():
                continue  # more may be due at once
            await self._wait()

    def _slots(self) -> int:
        """How many sends may run now: every slot, or, while cold delivery is delivering, none
        for the first :data:`DEFER_SECONDS` of it (its messages follow the deliveries) and
        then one (a steady stream of deliveries never starves the outbox)."""
        if not self.defer():
            self._deferred_since = None
            return self.concurrency
        now = time.monotonic()
        if self._deferred_since is None:
            self._deferred_since = now
        return 0 if now - self._deferred_since < self.defer_seconds else 1

    async def _claim(self) -> int:
        slots = self._slots()
        free = slots - self._busy
        if free <= 0 or (self._busy and free < slots // 4):
            # Claim in pages (each claim is a durable write): while sends are under way, wait
            # until a quarter of the slots is free rather than claiming one entry at a time.
            return 0
        now = self.clock.now_ms()
        until = now + int(self.lease_seconds * 1000)
        claims = await self.backend.claim_outbox(now, free, self.owner, until)
        self._backlog = len(claims) == free  # a full page: more are probably due
        for claim in claims:
            self._busy += 1
            self._sends.spawn(self._settle(claim, until))
        return len(claims)

    async def _wait(self) -> None:
        delay = self.poll_seconds
        if self._deferred_since is not None:  # look again soon: the deliveries may be done
            delay = min(delay, DEFERRED_POLL_SECONDS)
        if self._busy < self._slots():
            try:
                earliest = await self.backend.earliest_outbox()
            except Exception:  # the next pass logs it
                earliest = None
            if earliest is not None:
                # A claim runs out strictly after its instant: look a millisecond later.
                delay = min(delay, (earliest + 1 - self.clock.now_ms()) / 1000)
        self._kicked.clear()
        # Never spin: what is due but could not be claimed this pass is looked at again soon.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._kicked.wait(), max(delay, MIN_WAIT_SECONDS))

    # -- one entry ------------------------------------------------------------------------------
    async def _settle(self, claim: OutboxClaim, until: int) -> None:
        row = claim.row
        try:
            try:
                status, next_ms, error = await self._attempt(claim, until)
            finally:
                # The send is over: its slot is free while its outcome waits for the next
                # batch write (each write is one fsync; settling before freeing the slot
                # would bound the sends by the write rate).
                self._busy -= 1
                self._kicked.set()
            now = self.clock.now_ms()
            settled = await self._settled(
                Settlement(row, self.owner, status, now, next_ms=next_ms, error=error)
            )
            log.info(
                "outbox.settled" if settled else "outbox.claim_lost",
                session_id=row.session_id,
                key=row.key,
                channel=row.channel,
                status=status,
                attempts=row.attempts,
                error=error,
            )
        except Exception as exc:
            log.warning(
                "outbox.settle_failed",
                session_id=row.session_id,
                key=row.key,
                channel=row.channel,
                error=str(exc),
                error_type=type(exc).__name__,
            )

    async def _settled(self, settlement: Settlement) -> bool:
        """Record ``settlement`` with the others that came to an end meanwhile: one write per
        batch (:meth:`~dsh_host.persistence.OutboxBackend.settle_outbox_many`)."""
        settled: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._settling.append((settlement, settled))
        if self._settler is None:
            self._settler = asyncio.get_running_loop().create_task(self._write_settlements())
        return await settled

    async def _write_settlements(self) -> None:
        try:
            while self._settling:
                batch, self._settling = self._settling, []
                try:
                    answers = await self.backend.settle_outbox_many([each for each, _ in batch])
                except Exception as exc:
                    for _, settled in batch:
                        if not settled.done():
                            settled.set_exception(exc)
                    continue
                for (_, settled), answer in zip(batch, answers, strict=True):
                    if not settled.done():
                        settled.set_result(answer)
        finally:
            self._settler = None

    async def _attempt(self, claim: OutboxClaim, until: int) -> _Settled:
        """``(status, next_ms, error)`` of one claimed entry."""
        row = claim.row
        route = self.channels.route(row.channel)
        if route is None:
            return "failed", None, "the channel is no longer configured"
        if self._expired(row):
            return "failed", None, "not sent: the next occurrence was already due"
        if claim.ambiguous and not route.dedupes:
            return "unknown", None, "the host stopped during the send; not sent again"
        message = message_of(row, self.public_url)
        try:
            sent = await self._send(route, message, until=until)
        except Exception as exc:  # a channel library failing in a way it should not
            sent = Outcome(status="retry", reason=f"the sender failed ({type(exc).__name__})")
        if sent is None:
            # It waited for a thread: the rest of its claim may not outlast the send (another
            # host would take it over mid-send). Not sent; again soon.
            return "pending", self.clock.now_ms(), "waited for a free sender"
        outcome = sent
        if outcome.gone:
            self.channels.forget(row.channel)
        return self._judge(row, route, outcome)

    async def _send(
        self, route: Route, message: Message, *, until: int | None = None
    ) -> Outcome | None:
        """One send on ``route``: on the loop, or on one of the worker threads. ``None`` (not
        sent) when it waited for a thread so long that a claim ending at ``until`` would not
        outlast the send."""
        if route.send_async is not None:
            return await route.send_async(message, timeout=self.timeout)
        async with self._thread_slots:
            if until is not None and self.clock.now_ms() + self.send_budget * 1000 > until:
                return None
            return await asyncio.get_running_loop().run_in_executor(
                self._threads, lambda: route.send(message, timeout=self.timeout)
            )

    def _expired(self, row: OutboxRow) -> bool:
        expires = row.notice.expires_ms
        return expires is not None and self.clock.now_ms() >= expires

    def _judge(self, row: OutboxRow, route: Route, outcome: Outcome) -> _Settled:
        status = outcome.status
        reason = outcome.reason
        if status == "delivered":
            return "delivered", None, None
        if status == "failed":
            return "failed", None, reason
        if status == "unknown" and not route.dedupes:
            return "unknown", None, reason
        # retry (or an ambiguous send the receiver can drop a repeat of)
        if row.attempts >= MAX_ATTEMPTS:
            return "failed", None, f"gave up after {row.attempts} attempts: {reason}"
        delay = retry_delay(row.attempts, outcome.retry_after, base=self.retry_base)
        next_ms = self.clock.now_ms() + int(delay * 1000)
        expires = row.notice.expires_ms
        if expires is not None and next_ms >= expires:
            return "failed", None, f"not sent before the next occurrence: {reason}"
        return "pending", next_ms, reason

    # -- a test notification ----------------------------------------------------------------------
    async def send_test(self, title: str, body: str) -> Mapping[str, Outcome]:
        """Send one test message on every channel now (not through the outbox)."""
        now = self.clock.now_ms()
        results: dict[str, Outcome] = {}

        async def one(route: Route) -> None:
            message = Message(
                title=title, body=body, key=f"test/{route.id}/{now}", at_ms=now, link=None
            )
            try:
                sent = await self._send(route, message)
                assert sent is not None  # no claim to outlast
                results[route.id] = sent
            except Exception as exc:
                results[route.id] = Outcome(
                    status="failed", reason=f"the sender failed ({type(exc).__name__})"
                )

        routes = [r for r in map(self.channels.route, self.channels.ids()) if r is not None]
        await asyncio.gather(*(one(route) for route in routes))
        return results
