"""Agents: phases, the turn driver, maintenance claims, follow-ups, tools and disposal.

Phases: ``idle`` (nothing owns the Agent), ``maintenance`` (a plugin's short task claimed the idle
phase through :meth:`LiveAgent.run_maintenance`; waking input is parked) and ``running`` (the
driver is running turns from the inbox). Each inbox message becomes exactly one turn::

    turn/start {messageId} -> user/message {text, source?} -> tool/call, tool/result,
    assistant/message ... -> turn/end {outcome, error?}

A follow-up is recorded as ``agent/followup`` the moment it is queued; the ``messageId`` in
``turn/start`` marks it consumed, so a resumed Agent re-queues exactly the follow-ups whose turn
never started.

Seen at most once: nothing a follow-up causes (its ``turn/start``, the model call, streamed
text) happens before the follow-up's record (and what was appended with it, such as the
plugin's record of its cause) is durable, and its model call waits until its ``turn/start`` is
durable too. The driver proves each with a flush; while storage does not acknowledge, it keeps the
message (the Agent stays ``running``) and tries again after a back-off (1 s doubling to 60 s on
the host clock), or at once when any other flush of the Session succeeds. A crash before the
first proof loses the follow-up together with its cause, which is then delivered again, once;
a crash after the second one leaves a durable ``turn/start``, so the follow-up is never re-run.

Interrupted turns: a resumed log whose last turn has a durable ``turn/start`` but no ``turn/end``
(the process died mid-turn) is closed before new input runs: each ``tool/call`` of that turn
without a ``tool/result`` is answered ``{"code": "interrupted", ...}``, then ``turn/end
{"outcome": "error", "error": "interrupted"}``; the next turn waits until that closure is durable.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import structlog

from dsh_hookspecs import (
    AgentBusyError,
    AgentDisposedError,
    AgentPhase,
    Disposable,
    Event,
    JSONValue,
    Once,
    TaskSlot,
    TimeContext,
    Tool,
    ToolCall,
    hookspecs,
)

from . import _json
from ._disposables import close_disposable
from ._inbox import InboxMessage, interrupted_turn_closure, unstarted_followups
from ._session import LiveSession, Remover, SessionStore
from ._tools import ToolLayer, resolve, validate_arguments
from ._turn import ModelAdapter, Turn

log = structlog.get_logger(__name__)

T = TypeVar("T")

#: Back-off of a turn waiting for its follow-up to become durable: first wait, longest wait.
DURABILITY_RETRY_FIRST = 1.0
DURABILITY_RETRY_MAX = 60.0


class LiveAgent:
    """One Agent bound to one live Session (implements :class:`dsh_hookspecs.Agent`)."""

    def __init__(
        self,
        *,
        store: SessionStore,
        global_tools: ToolLayer,
        session: LiveSession,
        parent: LiveAgent | None,
        model: ModelAdapter,
        on_disposed: Callable[[LiveAgent], None],
        scripted_phrases: Callable[[], Sequence[hookspecs.ScriptedPhrase]] = tuple,
    ) -> None:
        """``store`` flushes ``session``; ``global_tools`` answer below the Agent's own layer;
        ``on_disposed(agent)`` runs once the Agent is disposed (its registry forgets it)."""
        self._store = store
        self._global_tools = global_tools
        self._on_disposed = on_disposed
        self._session = session
        self._parent = parent
        self._model = model
        self._scripted_phrases = scripted_phrases
        self._id = uuid.uuid4().hex
        self._tools = ToolLayer()
        self._phase: AgentPhase = "idle"
        self._inbox: deque[InboxMessage] = deque()
        self._wake_latched = False
        self._driving = TaskSlot("agent.driver")
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._idle_callbacks: list[Callable[[], None]] = []
        self._disposables: list[tuple[str, Disposable]] = []
        self._disposed = False
        self._disposal = Once("agent.dispose")
        #: The log length that must be durable before any next turn starts (an interrupted
        #: turn's closure), on top of each message's own ``durable_through``.
        self._floor = 0
        #: True while the driver waits out a back-off for storage (see ``_until_durable``).
        self._waiting_for_storage = False

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
    def waiting_for_storage(self) -> bool:
        """The driver holds a turn back until storage acknowledges its cause (a back-off)."""
        return self._waiting_for_storage

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
        message_id = _new_id()
        source: dict[str, JSONValue] = {"kind": "plugin", "plugin": plugin}
        record: JSONValue = {"messageId": message_id, "text": text, "source": source}
        # One synchronous, all-or-nothing step: the follow-up's record and the events that
        # belong to it reach storage in one batch or not at all; queued only once in the log.
        appended = self._session.append_all([("agent/followup", record), *with_events])
        # Its turn waits until that batch is durable (see the module docstring).
        self._enqueue(InboxMessage(message_id, text, source, durable_through=appended[-1].seq + 1))
        return message_id

    def on_idle(self, callback: Callable[[], None]) -> Callable[[], None]:
        self._idle_callbacks.append(callback)
        return Remover(self._idle_callbacks, callback)

    # -- input ----------------------------------------------------------------------------------
    def send(self, text: str, *, time_zone: str | None = None) -> str:
        """Queue a user message from a client; it opens its own turn. Returns its message id.

        ``time_zone``: the user's IANA zone sent with this message (already validated); that
        turn's model is told it (:class:`dsh_hookspecs.TimeContext`). Not stored."""
        self._check_live()
        message = InboxMessage(message_id=_new_id(), text=text, time_zone=time_zone)
        self._enqueue(message)
        return message.message_id

    def restore_inbox(self) -> None:
        """After a resume: close an interrupted turn, then re-queue the follow-ups of this
        Session whose turn never started (both from the owned part of the log)."""
        session = self._session
        owned = session.events[session.header.owned_from :]  # a copy: the closure comes after
        self._close_interrupted_turn(owned)
        for message in unstarted_followups(owned):
            log.info("agent.followup_restored", agent_id=self._id, message_id=message.message_id)
            self._enqueue(message)

    def _close_interrupted_turn(self, owned: Sequence[Event]) -> None:
        """Answer the orphan tool calls of an open last turn and end it (``interrupted``)."""
        closure = interrupted_turn_closure(owned)
        if closure is None:
            return
        try:
            appended = self._session.append_all(closure)
        except Exception:
            log.exception("agent.interrupted_turn_close_failed", agent_id=self._id)
            return
        self._floor = appended[-1].seq + 1
        log.info(
            "agent.interrupted_turn_closed",
            agent_id=self._id,
            session_id=self._session.id,
            orphan_tool_calls=len(closure) - 1,  # one tool/result each, then the turn/end
        )

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
        if self._disposed or not self._inbox or self._driving.busy:
            return
        self._phase = "running"
        self._driving.start(self._drive)

    async def _drive(self) -> None:
        try:
            while self._inbox and not self._disposed:
                head = self._inbox[0]
                if not await self._until_durable(max(head.durable_through, self._floor)):
                    break  # the Session was detached: nothing more runs on it
                message = self._inbox.popleft()
                await self._run_turn(message)
        finally:
            # Free the slot first: an idle callback below may start the next driver.
            self._driving.release()
            self._phase = "idle"
            self._resolve_idle_waiters()
            if not self._disposed:
                for callback in list(self._idle_callbacks):
                    try:
                        callback()
                    except Exception:
                        log.exception("agent.idle_callback_failed", agent_id=self._id)

    # -- the durability gate ----------------------------------------------------------------
    async def _until_durable(self, required: int) -> bool:
        """Return once the first ``required`` events of the Session are proven durable.

        Flushes when they are not known to be; while storage does not acknowledge, waits a
        back-off (1 s doubling to 60 s, on the host clock) or until any later flush of the
        Session succeeds, and tries again. The stall is logged once, and its end once.
        ``False`` when the Session is no longer live (it can never be proven then).
        """
        session = self._session
        store = self._store
        delay = 0.0
        while store.durable_length(session) < required:
            if not store.is_live(session):
                return False
            error = "unacknowledged"
            try:
                flushed = await store.flush(session) is True
                if flushed and store.durable_length(session) >= required:
                    break
            except Exception as exc:
                error = repr(exc)
            if not delay:
                log.warning(
                    "agent.turn_waits_for_storage",
                    agent_id=self._id,
                    session_id=session.id,
                    error=error,
                )
            delay = min(delay * 2, DURABILITY_RETRY_MAX) if delay else DURABILITY_RETRY_FIRST
            await self._retry_wait(delay)
        if delay:
            log.info("agent.turn_storage_recovered", agent_id=self._id, session_id=session.id)
        return True

    async def _retry_wait(self, delay: float) -> None:
        """``delay`` seconds on the host clock, cut short by a successful flush of the Session."""
        store = self._store
        session = self._session
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done(*_: object) -> None:
            if not wake.done():
                wake.set_result(None)

        def flushed(flushed_session: object, _through_seq: int) -> None:
            if flushed_session is session:
                done()

        timer = store.clock.call_later(delay, done)
        unsubscribe = store.add_flushed_observer(flushed)
        self._waiting_for_storage = True
        try:
            await wake
        finally:
            self._waiting_for_storage = False
            timer.cancel()
            unsubscribe()

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
            # A follow-up's model call waits until its turn/start is durable too: a crash before
            # that re-runs the turn after restart, and the model must not have seen it already.
            if message.durable_through and not await self._until_durable(len(session.events)):
                return  # the Session was detached: it takes no more appends
            time = TimeContext(now_ms=self._store.clock.now_ms(), time_zone=message.time_zone)
            await self._model.run_turn(Turn(self, message, time))
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
        store = self._store
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

    # -- what a turn reads and streams ----------------------------------------------------------
    def scripted_phrases(self) -> Sequence[hookspecs.ScriptedPhrase]:
        """The phrases the loaded plugins offer a scripted model (``dsh_scripted_phrases``)."""
        return self._scripted_phrases()

    def available_tools(self) -> list[Tool]:
        """The tools this Agent can call: its own layer, then the global ones it does not shadow."""
        tools = [tool for name in self._tools.names() if (tool := self._tools.get(name))]
        shadowed = {tool.name for tool in tools}
        for name in self._global_tools.names():
            tool = self._global_tools.get(name)
            if tool is not None and name not in shadowed:
                tools.append(tool)
        return tools

    def stream_text(self, message_id: str, text: str) -> None:
        """Ephemeral assistant text of the turn answering ``message_id`` (never logged)."""
        self._store.publish_stream(
            self._session, {"type": "assistant/stream", "messageId": message_id, "text": text}
        )

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
        tool = resolve(name, self._tools, self._global_tools)
        if tool is None:
            return {"code": "unknown_tool", "message": f"tool {name!r} is not available here"}
        if not isinstance(arguments, dict):
            return {"code": "invalid_arguments", "message": "$ must be of type object"}
        problem = validate_arguments(tool.parameters, arguments)
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
            await close_disposable(name, disposable, agent_id=self._id)

    async def dispose(self) -> None:
        """Refuse new input, close plugin disposables in reverse order, stop the driver."""
        await self._disposal.run(self._dispose)

    async def _dispose(self) -> None:
        self._disposed = True
        disposables, self._disposables = self._disposables, []
        for name, disposable in reversed(disposables):
            await close_disposable(name, disposable, agent_id=self._id)
        await self._driving.stop()
        self._inbox.clear()
        self._idle_callbacks.clear()
        self._resolve_idle_waiters()
        self._on_disposed(self)


def _new_id() -> str:
    return uuid.uuid4().hex
