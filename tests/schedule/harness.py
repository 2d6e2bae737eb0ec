"""A real host with the Schedule plugin, a manual clock and a controllable flush path."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from dsh_hookspecs import JSONValue
from dsh_host import Host, LiveAgent
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until

START = "2026-08-05T12:00:00.000Z"


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
    def __init__(self, host: Host, clock: ManualClock, flush: FlushControl) -> None:
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


async def make_harness(*, model="scripted", config=None, backend=None):
    clock = ManualClock()
    backend = backend or FaultInjectingBackend(MemoryBackend())
    host = Host(backend=backend, clock=clock, model=model)
    await host.start()
    coordinator = host.persistence
    remove = coordinator._unsubscribe[2]
    remove()
    flush = FlushControl(delegate=coordinator._on_flush)
    host.sessions.add_flush_listener(flush)
    host.load_plugin("schedule", config or {})
    return Harness(host, clock, flush)
