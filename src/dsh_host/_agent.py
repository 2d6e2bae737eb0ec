"""Agents: phases, the turn driver, maintenance claims, follow-ups, tools and disposal.

Phases: ``idle`` (nothing owns the Agent), ``maintenance`` (a plugin's short task claimed the idle
phase through :meth:`LiveAgent.run_maintenance`; waking input is parked) and ``running`` (the
driver is running turns from the inbox). Each inbox message becomes exactly one turn::

    turn/start {messageId} -> user/message {text, source?} -> tool/call, tool/result,
    assistant/message ... -> turn/end {outcome, error?}

A follow-up is recorded as ``agent/followup`` the moment it is queued; the ``messageId`` in
``turn/start`` marks it consumed, so a resumed Agent re-queues exactly the follow-ups whose turn
never started.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import structlog

from dsh_hookspecs import (
    AgentBusyError,
    AgentDisposedError,
    AgentPhase,
    Disposable,
    JSONValue,
    ToolCall,
)

from . import _json
from ._session import LiveSession, Remover, SessionStore
from ._tools import ToolLayer, resolve, validate

if TYPE_CHECKING:
    from ._plugins import PluginManager

log = structlog.get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class InboxMessage:
    message_id: str
    text: str
    source: dict[str, JSONValue] | None = None


class ModelAdapter(Protocol):
    """Runs one turn: reads ``turn.message`` and acts through ``turn``'s methods."""

    name: str

    async def run_turn(self, turn: Turn) -> None: ...


class Turn:
    """What a model adapter may do during one turn."""

    __slots__ = ("agent", "message")

    def __init__(self, agent: LiveAgent, message: InboxMessage) -> None:
        self.agent = agent
        self.message = message

    async def call_tool(self, name: str, arguments: JSONValue) -> JSONValue:
        return await self.agent.execute_tool(name, arguments)

    def say(self, text: str) -> None:
        self.agent.session.append("assistant/message", {"text": text})


class LiveAgent:
    """One Agent bound to one live Session (implements :class:`dsh_hookspecs.Agent`)."""

    def __init__(
        self,
        *,
        registry: AgentRegistry,
        session: LiveSession,
        parent: LiveAgent | None,
        model: ModelAdapter,
    ) -> None:
        self._registry = registry
        self._session = session
        self._parent = parent
        self._model = model
        self._id = uuid.uuid4().hex
        self._tools = ToolLayer()
        self._phase: AgentPhase = "idle"
        self._inbox: deque[InboxMessage] = deque()
        self._wake_latched = False
        self._driver: asyncio.Task[None] | None = None
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._idle_callbacks: list[Callable[[], None]] = []
        self._disposables: list[tuple[str, Disposable]] = []
        self._disposed = False
        self._dispose_task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"<LiveAgent {self._id} session={self._session.id} phase={self._phase}>"

    # -- the Agent protocol -------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self._id

    @property
    def session(self) -> LiveSession:
        return self._session

    @property
    def parent(self) -> LiveAgent | None:
        return self._parent

    @property
    def phase(self) -> AgentPhase:
        return self._phase

    @property
    def disposed(self) -> bool:
        return self._disposed

    @property
    def tools(self) -> ToolLayer:
        return self._tools

    @property
    def inbox(self) -> Sequence[InboxMessage]:
        return tuple(self._inbox)

    async def run_maintenance(self, task: Callable[[], T | Awaitable[T]]) -> T:
        if self._disposed:
            raise AgentDisposedError(f"agent {self._id} is disposed")
        if self._phase != "idle":
            raise AgentBusyError(f"agent {self._id} is {self._phase}")
        self._phase = "maintenance"
        try:
            result = task()
            if inspect.isawaitable(result):
                result = await result
            return result
        finally:
            self._phase = "idle"
            if self._wake_latched:
                self._wake_latched = False
                self._start_driver()
            if self._phase == "idle":
                self._resolve_idle_waiters()

    async def when_idle(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._disposed and self._phase != "idle":
            waiter: asyncio.Future[None] = loop.create_future()
            self._idle_waiters.append(waiter)
            await waiter

    def followup(
        self,
        text: str,
        *,
        plugin: str,
        with_events: Sequence[tuple[str, JSONValue]] = (),
    ) -> str:
        self._check_live()
        message = InboxMessage(
            message_id=_new_id(), text=text, source={"kind": "plugin", "plugin": plugin}
        )
        record: JSONValue = {
            "messageId": message.message_id,
            "text": text,
            "source": message.source,
        }
        # One synchronous, all-or-nothing step: the follow-up's record and the events that
        # belong to it reach storage in one batch or not at all; queued only once in the log.
        self._session.append_all([("agent/followup", record), *with_events])
        self._enqueue(message)
        return message.message_id

    def on_idle(self, callback: Callable[[], None]) -> Callable[[], None]:
        self._idle_callbacks.append(callback)
        return Remover(self._idle_callbacks, callback)

    # -- input ----------------------------------------------------------------------------------
    def send(self, text: str) -> str:
        """Queue a user message from a client; it opens its own turn. Returns its message id."""
        self._check_live()
        message = InboxMessage(message_id=_new_id(), text=text)
        self._enqueue(message)
        return message.message_id

    def restore_inbox(self) -> None:
        """Re-queue the follow-ups of this Session whose turn never started (after a resume)."""
        pending: dict[str, InboxMessage] = {}
        events = self._session.events
        for event in events[self._session.header.owned_from :]:
            data = event.data
            if not isinstance(data, dict):
                continue
            message_id = data.get("messageId")
            if not isinstance(message_id, str):
                continue
            if event.type == "agent/followup":
                text, source = data.get("text"), data.get("source")
                if isinstance(text, str) and isinstance(source, dict):
                    pending[message_id] = InboxMessage(message_id, text, source)
            elif event.type == "turn/start":
                pending.pop(message_id, None)
        for message in pending.values():
            log.info("agent.followup_restored", agent_id=self._id, message_id=message.message_id)
            self._enqueue(message)

    def _check_live(self) -> None:
        if self._disposed:
            raise AgentDisposedError(f"agent {self._id} is disposed")

    def _enqueue(self, message: InboxMessage) -> None:
        self._inbox.append(message)
        if self._phase == "idle":
            self._start_driver()
        elif self._phase == "maintenance":
            self._wake_latched = True
        # running: the driver takes it after the current turn.

    # -- the driver -----------------------------------------------------------------------------
    def _start_driver(self) -> None:
        if self._disposed or not self._inbox or self._driver is not None:
            return
        self._phase = "running"
        self._driver = asyncio.get_running_loop().create_task(self._drive())

    async def _drive(self) -> None:
        try:
            while self._inbox and not self._disposed:
                message = self._inbox.popleft()
                await self._run_turn(message)
        finally:
            self._driver = None
            self._phase = "idle"
            self._resolve_idle_waiters()
            if not self._disposed:
                for callback in list(self._idle_callbacks):
                    try:
                        callback()
                    except Exception:
                        log.exception("agent.idle_callback_failed", agent_id=self._id)

    async def _run_turn(self, message: InboxMessage) -> None:
        session = self._session
        try:
            session.append("turn/start", {"messageId": message.message_id})
            user: dict[str, JSONValue] = {"text": message.text}
            if message.source is not None:
                user["source"] = message.source
            session.append("user/message", user)
        except Exception:
            log.exception("agent.turn_start_failed", agent_id=self._id)
            return
        outcome: dict[str, JSONValue] = {"outcome": "ok"}
        try:
            await self._model.run_turn(Turn(self, message))
        except asyncio.CancelledError:
            self._end_turn({"outcome": "error", "error": "turn cancelled"})
            raise
        except Exception as exc:
            log.warning("agent.turn_failed", agent_id=self._id, error=str(exc))
            outcome = {"outcome": "error", "error": str(exc) or type(exc).__name__}
        self._end_turn(outcome)
        await self._checkpoint()

    def _end_turn(self, outcome: dict[str, JSONValue]) -> None:
        try:
            self._session.append("turn/end", outcome)
        except Exception:
            log.exception("agent.turn_end_failed", agent_id=self._id)

    async def _checkpoint(self) -> None:
        store = self._registry.store
        if not store.is_live(self._session):
            return
        try:
            durable = await store.flush(self._session)
        except Exception as exc:
            log.warning("agent.checkpoint_failed", agent_id=self._id, error=str(exc))
        else:
            if not durable:
                log.debug("agent.checkpoint_not_durable", agent_id=self._id)

    def _resolve_idle_waiters(self) -> None:
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- tools ----------------------------------------------------------------------------------
    async def execute_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> JSONValue:
        """Run one tool call through the pipeline, recording ``tool/call`` and ``tool/result``."""
        call_id = call_id or _new_id()
        session = self._session
        try:
            call = _json.canonical({"callId": call_id, "name": name, "arguments": arguments})
        except _json.JSONError as exc:
            # Unstorable arguments (a lone surrogate, nesting beyond 200 levels, ...) are
            # recorded as null and answered with a value, never an exception.
            session.append("tool/call", {"callId": call_id, "name": name, "arguments": None})
            value: JSONValue = {"code": "invalid_arguments", "message": f"$ {exc}"}
        else:
            assert isinstance(call, dict)
            session.append_canonical("tool/call", call)
            value = await self._invoke(call_id, name, call["arguments"])
        # The value is canonical already (_invoke copies what a tool returns): not copied again.
        session.append_canonical("tool/result", {"callId": call_id, "name": name, "value": value})
        return value

    async def _invoke(self, call_id: str, name: str, arguments: JSONValue) -> JSONValue:
        tool = resolve(name, self._tools, self._registry.global_tools)
        if tool is None:
            return {"code": "unknown_tool", "message": f"tool {name!r} is not available here"}
        if not isinstance(arguments, dict):
            return {"code": "invalid_arguments", "message": "$ must be of type object"}
        problem = validate(tool.parameters, arguments)
        if problem is not None:
            return {"code": "invalid_arguments", "message": problem}
        try:
            value = await tool.handler(
                ToolCall(call_id=call_id, name=name, arguments=arguments, agent=self)
            )
            return _json.canonical(value)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("tool.failed", agent_id=self._id, tool=name)
            return {"code": "tool_failed", "message": f"tool {name!r} failed unexpectedly"}

    # -- disposal -------------------------------------------------------------------------------
    def add_disposable(self, plugin: str, disposable: Disposable) -> None:
        self._disposables.append((plugin, disposable))

    async def dispose_plugin(self, plugin: str) -> None:
        """Close what ``plugin`` started on this Agent (its plugin is being unloaded)."""
        mine = [item for item in self._disposables if item[0] == plugin]
        self._disposables = [item for item in self._disposables if item[0] != plugin]
        for name, disposable in reversed(mine):
            await _close(name, disposable, agent_id=self._id)

    async def dispose(self) -> None:
        """Refuse new input, close plugin disposables in reverse order, stop the driver."""
        if self._dispose_task is None:
            self._dispose_task = asyncio.get_running_loop().create_task(self._dispose())
        await asyncio.shield(self._dispose_task)

    async def _dispose(self) -> None:
        self._disposed = True
        disposables, self._disposables = self._disposables, []
        for name, disposable in reversed(disposables):
            await _close(name, disposable, agent_id=self._id)
        driver = self._driver
        if driver is not None:
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)
        self._inbox.clear()
        self._idle_callbacks.clear()
        self._resolve_idle_waiters()
        self._registry._forget(self)  # noqa: SLF001 - registry and agents are one unit


async def _close(plugin: str, disposable: Disposable, *, agent_id: str | None = None) -> None:
    try:
        result = disposable()
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("plugin.dispose_failed", plugin=plugin, agent_id=agent_id)


class AgentRegistry:
    """Live Agents in publication order (implements :class:`dsh_hookspecs.AgentRegistry`)."""

    def __init__(
        self,
        *,
        store: SessionStore,
        plugins: PluginManager,
        global_tools: ToolLayer,
        model: ModelAdapter,
    ) -> None:
        self.store = store
        self.plugins = plugins
        self.global_tools = global_tools
        self.model = model
        self._agents: dict[str, LiveAgent] = {}
        self._roots_by_session: dict[str, LiveAgent] = {}

    def get(self, agent_id: str) -> LiveAgent | None:
        return self._agents.get(agent_id)

    def roots(self) -> Sequence[LiveAgent]:
        return tuple(a for a in self._agents.values() if a.parent is None)

    def all(self) -> Sequence[LiveAgent]:
        return tuple(self._agents.values())

    def for_session(self, session_id: str) -> LiveAgent | None:
        """The live root Agent of that Session, if any."""
        return self._roots_by_session.get(session_id)

    def create(self, session: LiveSession, *, parent: LiveAgent | None = None) -> LiveAgent:
        """Construct and publish an Agent; plugins see it through ``dsh_agent_published``."""
        agent = LiveAgent(registry=self, session=session, parent=parent, model=self.model)
        self._agents[agent.id] = agent
        if parent is None:
            self._roots_by_session.setdefault(session.id, agent)
        for plugin, disposable in self.plugins.agent_published(agent):
            agent.add_disposable(plugin, disposable)
        agent.restore_inbox()
        return agent

    def create_child(self, parent: LiveAgent) -> LiveAgent:
        """A child Agent on a new Session of its own (``origin: subagent``)."""
        depth = (parent.session.header.delegation_depth or 0) + 1
        session = self.store.create(
            cwd=parent.session.header.cwd, origin="subagent", delegation_depth=depth
        )
        return self.create(session, parent=parent)

    def _forget(self, agent: LiveAgent) -> None:
        if self._agents.get(agent.id) is agent:
            del self._agents[agent.id]
        if self._roots_by_session.get(agent.session.id) is agent:
            del self._roots_by_session[agent.session.id]


def _new_id() -> str:
    return uuid.uuid4().hex
