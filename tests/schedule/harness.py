"""A real host with the Schedule plugin, a manual clock and a controllable flush path, plus the
small helpers the Schedule and reliability tests share (boots, quiet checks, spins)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from dsh_hookspecs import JSONValue, ModelAdapter
from dsh_host import LiveAgent, LiveHost, LiveSession
from dsh_host.persistence import MemoryBackend, SQLiteBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from dsh_schedule import MESSAGES

START = "2026-08-05T12:00:00.000Z"

Listener = TypeVar("Listener", bound=Callable[[LiveSession], Awaitable[object]])


async def spin(times: int = 10) -> None:
    """Give the loop ``times`` turns: for absence checks, so that work one or a few ticks away
    has had its chance to run before the test asserts it did not happen."""
    for _ in range(times):
        await asyncio.sleep(0)


def uncertain(operation: str, schedule_id: str | None = None) -> dict[str, JSONValue]:
    """The ``persistence_uncertain`` answer a tool gives for ``operation`` (and ``id``)."""
    value: dict[str, JSONValue] = {
        "code": "persistence_uncertain",
        "message": MESSAGES["persistence_uncertain"],
        "operation": operation,
    }
    if schedule_id is not None:
        value["id"] = schedule_id
    return value


def replace_flush_listener(
    host: LiveHost, make: Callable[[Callable[[LiveSession], Awaitable[bool | None]]], Listener]
) -> Listener:
    """Put ``make(delegate)`` in place of the persistence coordinator's flush listener, where
    ``delegate`` is the coordinator's own listener (so the replacement can still write)."""
    coordinator = host.persistence
    coordinator._unsubscribe[1]()  # the flush listener (see Coordinator.__init__)
    listener = make(coordinator._on_flush)
    host.sessions.add_flush_listener(listener)
    return listener


def quiet(host: LiveHost, agents: Iterable[LiveAgent] | None = None) -> bool:
    """Every Agent (``agents``, or all of the host's) idle with an empty inbox, and no Schedule
    owner (of those Agents, or any) with a run or an idle wait in flight."""
    owners = host.plugins.pm.get_plugin("schedule").owners
    if agents is None:
        chosen = list(host.agents.all())
        watched = list(owners.values())
    else:
        chosen = list(agents)
        watched = [owners[agent] for agent in chosen]
    return all(a.phase == "idle" and not a.inbox for a in chosen) and all(
        o._run is None and o._idle_wait is None for o in watched
    )


async def settle_quiet(
    host: LiveHost, agents: Iterable[LiveAgent] | None = None, *, timeout: float = 5.0
) -> None:
    """Bounded wait until :func:`quiet` holds: everything started has finished."""
    chosen = None if agents is None else list(agents)
    await wait_until(lambda: quiet(host, chosen), timeout=timeout)


async def boot_sqlite(
    data: Path,
    wall_ms: int,
    *,
    model: str | ModelAdapter = "scripted",
    plugins: Sequence[object] = (),
) -> tuple[LiveHost, ManualClock]:
    """A started host on SQLite in ``data``, on a ManualClock at ``wall_ms``, with the Schedule
    plugin and then ``plugins`` (loaded as ``test-0``, ``test-1``, ...)."""
    clock = ManualClock(wall_ms)
    host = LiveHost(backend=SQLiteBackend(data), clock=clock, model=model)
    await host.start()
    try:
        host.load_plugin("schedule")
        for index, plugin in enumerate(plugins):
            host.load_plugin(f"test-{index}", factory=lambda plugin=plugin: plugin)
    except BaseException:
        await host.close()
        raise
    return host, clock


@dataclass
class FlushControl:
    """Stands in front of the persistence coordinator's flush listener.

    ``mode``: ``"ok"`` delegates (durable ``True``), ``"raise"`` fails, ``"false"`` answers
    without acknowledging, ``"gate"`` waits for :attr:`gate` and then delegates. ``before``
    runs at the start of each flush (a seam for races). ``count`` counts flushes.
    """

    delegate: Callable[..., object]
    mode: str = "ok"
    count: int = 0
    once: list[str] = field(default_factory=list)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    before: Callable[[int], None] | None = None
    log: list[str] = field(default_factory=list)

    async def __call__(self, session) -> bool | None:
        self.count += 1
        self.log.append("flush")
        if self.before is not None:
            self.before(self.count)
        mode = self.once.pop(0) if self.once else self.mode
        if mode == "raise":
            raise OSError("injected flush failure")
        if mode == "false":
            return None
        if mode == "gate":
            await self.gate.wait()
        return await self.delegate(session)  # type: ignore[misc]


class Harness:
    def __init__(self, host: LiveHost, clock: ManualClock, flush: FlushControl) -> None:
        self.host, self.clock, self.flush = host, clock, flush

    @property
    def plugin(self):
        return self.host.plugins.pm.get_plugin("schedule")

    async def agent(self) -> LiveAgent:
        return await self.host.create_session()

    def owner(self, agent):
        return self.plugin.owners[agent]

    async def call(self, agent: LiveAgent, name: str, arguments: JSONValue) -> JSONValue:
        return await agent.execute_tool(name, arguments)

    async def flushes(self, agent, name, arguments) -> tuple[JSONValue, int]:
        await self.settle(agent)
        before = self.flush.count
        value = await self.call(agent, name, arguments)
        return value, self.flush.count - before

    async def settle(self, agent: LiveAgent) -> None:
        """Wait (bounded) until the owner has no run in flight and the Agent is idle."""
        owner = self.owner(agent) if agent in self.plugin.owners else None
        await wait_until(lambda: agent.phase == "idle" and (owner is None or owner._run is None))

    def segments(self, agent) -> list[float]:
        """The remaining loop-time delay of the owner's armed timer (empty when none)."""
        timer = self.owner(agent)._timer
        return [] if timer is None or timer.cancelled else [timer.deadline - self.clock.loop_time]

    def changes(self, agent) -> list[dict]:
        return [e.data for e in agent.session.events if e.type == "schedule/change"]

    def dispatches(self, agent) -> list[str]:
        return [c["id"] for c in self.changes(agent) if c["operation"] == "dispatch"]

    def followups(self, agent) -> list[dict]:
        return [e.data for e in agent.session.events if e.type == "agent/followup"]


async def make_harness(*, model="scripted", config=None, backend=None, cold_plans=True):
    clock = ManualClock()
    backend = backend or FaultInjectingBackend(MemoryBackend())
    host = LiveHost(backend=backend, clock=clock, model=model, cold_plans=cold_plans)
    await host.start()
    flush = replace_flush_listener(host, lambda delegate: FlushControl(delegate=delegate))
    host.load_plugin("schedule", config or {})
    return Harness(host, clock, flush)
