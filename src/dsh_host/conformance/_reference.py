"""The reference host (:class:`dsh_host.LiveHost`) as a :class:`HostUnderTest`.

:class:`ReferenceHostContract` runs every host suite against ``dsh_host.LiveHost`` over the
backend a subclass makes: a backend author gets the backend suite *and* the host suites from two
small subclasses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import cast

from dsh_hookspecs import Agent, BoardEntry, Event, Host, JSONValue, Turn

from ..core import LiveHost
from ..persistence import Backend
from ..testing import FaultInjectingBackend, ManualClock
from ._agents import AgentPhaseContract
from ._board import BoardContract
from ._flush import FlushContract
from ._host import TurnGate
from ._publication import PublicationContract
from ._wakes import WakeContract

__all__ = ["HostContract", "ReferenceHost", "ReferenceHostContract"]


class HostContract(
    FlushContract, AgentPhaseContract, PublicationContract, WakeContract, BoardContract
):
    """Every host suite: the flush contract, the Agent phases, publication and disposal, the
    durable wake index and the board."""


class _GatedModel:
    """A model adapter that runs each turn through the suite's :class:`TurnGate`."""

    name = "conformance"

    def __init__(self, turns: TurnGate) -> None:
        self._turns = turns

    async def run_turn(self, turn: Turn) -> None:
        turn.say(await self._turns.run(turn.input.text))


class _Storage:
    """:class:`~dsh_host.conformance.StorageControl` over a :class:`FaultInjectingBackend`."""

    def __init__(self, backend: FaultInjectingBackend) -> None:
        self._backend = backend
        self._mark: int | None = None

    def stall(self) -> None:
        self._backend.plan.gate = asyncio.Event()
        self._mark = len(self._backend.plan.append_calls)

    def release(self) -> None:
        gate, self._backend.plan.gate = self._backend.plan.gate, None
        if gate is not None:
            gate.set()
        self._mark = None

    @property
    def held(self) -> int:
        if self._mark is None:
            return 0
        return len(self._backend.plan.append_calls) - self._mark

    def fail_next(self, count: int) -> None:
        self._backend.plan.fail_appends += count

    async def stored(self, session_id: str) -> Sequence[Event] | None:
        stored = await self._backend.inner.load(session_id)
        return None if stored is None else stored.events

    async def stored_wakes(self, session_id: str) -> Mapping[str, int] | None:
        stored = await self._backend.inner.load(session_id)
        return None if stored is None else stored.wakes

    async def stored_board(self, session_id: str) -> Mapping[tuple[str, str], BoardEntry] | None:
        stored = await self._backend.inner.load(session_id)
        return None if stored is None else stored.board


def _returning(plugin: object) -> Callable[[], object]:
    """A plugin factory that hands the host this very instance."""
    return lambda: plugin


class ReferenceHost:
    """A started :class:`dsh_host.LiveHost` behind the :class:`HostUnderTest` operations."""

    def __init__(self, host: LiveHost, backend: FaultInjectingBackend) -> None:
        self.host = host
        self._storage = _Storage(backend)

    @classmethod
    async def start(
        cls, backend: Backend, plugins: Sequence[tuple[str, object]], turns: TurnGate
    ) -> ReferenceHost:
        faulty = FaultInjectingBackend(backend)
        host = LiveHost(backend=faulty, clock=ManualClock(), model=_GatedModel(turns))
        await host.start()
        try:
            for name, plugin in plugins:
                host.load_plugin(name, factory=_returning(plugin))
        except BaseException:
            await host.close()
            raise
        return cls(host, faulty)

    @property
    def services(self) -> Host:
        # Cast: the host's LiveSessionStore types flush() for its own LiveSession, narrower than
        # the Protocol's Session, so the structural check cannot pass as typed today.
        return cast("Host", self.host)

    @property
    def storage(self) -> _Storage:
        return self._storage

    async def create_session(self) -> Agent:
        return await self.host.create_session()

    def send(self, agent: Agent, text: str) -> None:
        live = self.host.agents.get(agent.id)
        if live is None:
            raise LookupError(f"agent {agent.id} is not live")
        live.send(text)

    def load_plugin(self, name: str, plugin: object, config: Mapping[str, JSONValue]) -> None:
        self.host.load_plugin(name, dict(config), factory=_returning(plugin))

    async def unload_plugin(self, name: str) -> None:
        await self.host.unload_plugin(name)

    async def close_session(self, session_id: str) -> None:
        await self.host.close_session(session_id)

    async def resume_session(self, session_id: str) -> Agent:
        return await self.host.resume_session(session_id)

    async def close(self) -> None:
        await self.host.close()


class ReferenceHostContract(HostContract):
    """Every host suite against :class:`dsh_host.LiveHost` over the backend of
    :meth:`make_backend`."""

    def make_backend(self, tmp_path: Path) -> Backend:
        """A fresh, unopened backend storing under ``tmp_path`` (the host opens and closes it)."""
        raise NotImplementedError

    async def start_host(
        self, plugins: Sequence[tuple[str, object]], turns: TurnGate, tmp_path: Path
    ) -> ReferenceHost:
        return await ReferenceHost.start(self.make_backend(tmp_path), plugins, turns)
