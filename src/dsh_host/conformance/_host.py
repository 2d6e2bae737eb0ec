"""What the host suites drive: the :class:`HostUnderTest` Protocol, the suite's model
(:class:`TurnGate`), the recording plugin the suites load (:class:`Recorder`) and the base class
whose fixture starts a host through the subclass's factory (:class:`HostSuite`).

The suites use nothing of a host but the :mod:`dsh_hookspecs` contract (what a plugin is handed)
and these few operations, so another host passes them by implementing :class:`HostUnderTest`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest
import pytest_asyncio

from dsh_hookspecs import Agent, BoardEntry, Event, Host, JSONValue, Session, hookimpl

from ..testing import wait_until

__all__ = [
    "PLUGIN",
    "REFUSED_TYPE",
    "HostSuite",
    "HostUnderTest",
    "Journal",
    "Recorder",
    "Rig",
    "StorageControl",
    "TurnGate",
]

#: The name under which :class:`HostSuite` loads its :class:`Recorder`.
PLUGIN = "conformance"
#: Every :class:`Recorder` refuses candidate events of this type in ``dsh_event_validate``.
REFUSED_TYPE = "conformance/refused"
#: The event type the suites append to make a log longer.
NOTE_TYPE = "conformance/note"
#: Seconds any bounded wait of the suites may take before a case fails.
BOUND = 10.0


class TurnGate:
    """The model of the host under test, under the suite's control.

    The host's model calls :meth:`run` once per turn with the turn's user-role message text; the
    turn then stays open until the suite calls :meth:`open` with that text (or :meth:`open_all`),
    and its reply is :meth:`reply_to` of the text.
    """

    def __init__(self) -> None:
        #: The message text of every turn started, in order.
        self.started: list[str] = []
        self._gates: dict[str, asyncio.Event] = {}
        self._all_open = False

    def _gate(self, text: str) -> asyncio.Event:
        gate = self._gates.setdefault(text, asyncio.Event())
        if self._all_open:
            gate.set()
        return gate

    def open(self, text: str) -> None:
        """Let the turn(s) of ``text`` finish (now, or as soon as they start)."""
        self._gate(text).set()

    def open_all(self) -> None:
        """Let every turn finish from now on (used at teardown)."""
        self._all_open = True
        for gate in self._gates.values():
            gate.set()

    @staticmethod
    def reply_to(text: str) -> str:
        return f"done: {text}"

    async def run(self, text: str) -> str:
        """One turn: record it, wait until it is opened, return the reply to say."""
        self.started.append(text)
        await self._gate(text).wait()
        return self.reply_to(text)


class StorageControl(Protocol):
    """The host's storage, slowed down or failed on the suite's command."""

    def stall(self) -> None:
        """Hold every write that starts from now on until :meth:`release`."""
        ...

    def release(self) -> None:
        """Let every held write go on; writes are no longer held. Idempotent."""
        ...

    @property
    def held(self) -> int:
        """How many writes are being held by :meth:`stall` right now."""
        ...

    def fail_next(self, count: int) -> None:
        """Make the next ``count`` writes fail without storing anything."""
        ...

    async def stored(self, session_id: str) -> Sequence[Event] | None:
        """The events storage holds for that Session (``None``: no such stored Session)."""
        ...

    async def stored_wakes(self, session_id: str) -> Mapping[str, int] | None:
        """The wake entries storage holds for that Session (``None``: no such stored Session)."""
        ...

    async def stored_board(self, session_id: str) -> Mapping[tuple[str, str], BoardEntry] | None:
        """The board rows storage holds for that Session by ``(plugin, key)`` (``None``: no
        such stored Session)."""
        ...


class HostUnderTest(Protocol):
    """The few operations the host suites need beyond what plugins are handed."""

    @property
    def services(self) -> Host:
        """The host's services, as ``dsh_plugin_start`` hands them to a plugin."""
        ...

    @property
    def storage(self) -> StorageControl: ...

    async def create_session(self) -> Agent:
        """A new live Session with its root Agent (published; its creation is flushed)."""
        ...

    def send(self, agent: Agent, text: str) -> None:
        """A user message from a client to ``agent``: it opens its own turn."""
        ...

    def load_plugin(self, name: str, plugin: object, config: Mapping[str, JSONValue]) -> None:
        """Load ``plugin`` (an instance carrying ``@hookimpl`` methods) at run time."""
        ...

    async def unload_plugin(self, name: str) -> None: ...

    async def close_session(self, session_id: str) -> None:
        """Make the Session cold: dispose its Agents, flush, detach it."""
        ...

    async def resume_session(self, session_id: str) -> Agent:
        """Resume a cold Session from storage; return its (new) root Agent."""
        ...

    async def close(self) -> None:
        """Shut the host down (disposing every Agent and plugin). Idempotent."""
        ...


@dataclass(eq=False)
class Journal:
    """What every :class:`Recorder` of one test saw, in one order."""

    entries: list[tuple[str, ...]] = field(default_factory=list)

    def of(self, kind: str) -> list[tuple[str, ...]]:
        return [entry for entry in self.entries if entry[0] == kind]


class Recorder:
    """A plugin that records the hooks the host calls into a :class:`Journal`.

    ``dsh_plugin_start`` records ``("start", name, config keys)`` and hands back a disposable
    recording ``("stop", name)``; ``dsh_agent_published`` records ``("published", name, agent
    id)`` and hands back a disposable recording ``("dispose", name, agent id)`` (awaited when
    ``async_disposal``, raising after it recorded when ``failing_disposal``);
    ``dsh_session_flushed`` records ``("flushed", name, session id, through_seq)``;
    ``dsh_event_validate`` refuses :data:`REFUSED_TYPE`.
    """

    def __init__(
        self,
        name: str,
        journal: Journal,
        *,
        async_disposal: bool = False,
        failing_disposal: bool = False,
    ) -> None:
        self.name = name
        self.journal = journal
        self.async_disposal = async_disposal
        self.failing_disposal = failing_disposal
        self.host: Host | None = None
        #: Every Agent published to this plugin, in order, with its phase at publication.
        self.agents: list[Agent] = []
        self.phases_at_publication: list[str] = []
        self.flushed: list[tuple[str, int]] = []

    @hookimpl
    def dsh_plugin_start(self, host: Host, config: Mapping[str, JSONValue]) -> Any:
        self.host = host
        self.journal.entries.append(("start", self.name, *sorted(config)))
        return lambda: self.journal.entries.append(("stop", self.name))

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> Any:
        self.agents.append(agent)
        self.phases_at_publication.append(agent.phase)
        self.journal.entries.append(("published", self.name, agent.id))
        entry = ("dispose", self.name, agent.id)

        def dispose() -> None:
            self.journal.entries.append(entry)
            if self.failing_disposal:
                raise RuntimeError(f"{self.name}: disposal bug (conformance)")

        async def dispose_later() -> None:
            # Really asynchronous: finishes only after the loop has run once more.
            later = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(later.set_result, None)
            await later
            dispose()

        return dispose_later if self.async_disposal else dispose

    @hookimpl
    def dsh_session_flushed(self, session: Session, through_seq: int) -> None:
        self.flushed.append((session.id, through_seq))
        self.journal.entries.append(("flushed", self.name, session.id, str(through_seq)))

    @hookimpl
    def dsh_event_validate(self, session: Session, event: Event) -> None:
        del session
        if event.type == REFUSED_TYPE:
            raise ValueError(f"{self.name} refuses {event.type} (conformance)")

    def agent_of(self, session: Session) -> Agent:
        """The last Agent published to this plugin for ``session``."""
        return next(a for a in reversed(self.agents) if a.session.id == session.id)


@dataclass(eq=False)
class Rig:
    """One started host with the suite's model, journal and recording plugin."""

    host: HostUnderTest
    turns: TurnGate
    journal: Journal
    recorder: Recorder

    async def new_agent(self) -> Agent:
        """A new Session's root Agent, as the recording plugin was handed it."""
        created = await self.host.create_session()
        return self.recorder.agent_of(created.session)

    async def new_session(self) -> Session:
        """A new live Session (its root Agent published to the recording plugin)."""
        return (await self.new_agent()).session

    async def noted_session(self) -> tuple[Session, int]:
        """A new live Session with one note appended since its creation was flushed, and how
        many flushes the recording plugin had observed by then."""
        session = await self.new_session()
        published = len(self.recorder.flushed)
        self.note(session, 1)
        return session, published

    def flush(self, session: Session) -> asyncio.Future[bool]:
        """``SessionStore.flush(session)``, started now (through the plugin-facing services)."""
        return asyncio.ensure_future(self.host.services.sessions.flush(session))

    async def held_flush(self, session: Session) -> asyncio.Future[bool]:
        """Stall storage, start a flush of ``session`` and wait until its write is held."""
        self.host.storage.stall()
        flush = self.flush(session)
        await self.until(lambda: self.host.storage.held)
        return flush

    async def idle(self, agent: Agent) -> None:
        """Wait (bounded) until ``agent`` is idle."""
        await asyncio.wait_for(agent.when_idle(), BOUND)

    @staticmethod
    async def until(predicate: Any) -> None:
        await wait_until(predicate, timeout=BOUND)

    @staticmethod
    def note(session: Session, n: int) -> Event:
        return session.append(NOTE_TYPE, {"n": n})


class HostSuite:
    """Base of the host suites: subclasses implement :meth:`start_host`.

    The ``rig`` fixture starts a host with a :class:`Recorder` loaded as :data:`PLUGIN` and
    closes it after the case (opening every turn and releasing storage first).
    """

    pytestmark = pytest.mark.asyncio

    async def start_host(
        self, plugins: Sequence[tuple[str, object]], turns: TurnGate, tmp_path: Path
    ) -> HostUnderTest:
        """Start a host whose model runs every turn through ``turns`` and which has loaded
        ``plugins`` (``(name, instance)`` pairs, in order, each with an empty config) before
        it returns. ``tmp_path`` is a fresh folder the host may store into."""
        raise NotImplementedError

    @pytest_asyncio.fixture
    async def rig(self, tmp_path: Path) -> AsyncIterator[Rig]:
        journal = Journal()
        recorder = Recorder(PLUGIN, journal)
        turns = TurnGate()
        host = await self.start_host([(PLUGIN, recorder)], turns, tmp_path)
        try:
            yield Rig(host=host, turns=turns, journal=journal, recorder=recorder)
        finally:
            turns.open_all()
            host.storage.release()
            await host.close()
