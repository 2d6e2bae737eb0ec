"""Agents: phases, the turn driver, maintenance claims, follow-ups, tools and disposal.

Phases: ``idle`` (nothing owns the Agent), ``maintenance`` (a plugin's short task claimed the idle
phase through :meth:`LiveAgent.run_maintenance`; waking input is parked) and ``running`` (the
driver is running turns from the inbox). Each inbox message becomes exactly one turn::

    turn/start {messageId} -> user/message {text, source?} -> tool/call, tool/result,
    assistant/message ... -> turn/end {outcome: "ok" | "error" | "cancelled", error?}

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

Stopping a turn: :meth:`LiveAgent.cancel_turn` (the browser's Stop) cancels the model turn that
is running; it ends ``turn/end {"outcome": "cancelled"}`` and nothing the model was still
writing is kept (streamed text is ephemeral). A tool call in progress is not interrupted: the
stop takes effect once its ``tool/result`` is recorded, so every ``tool/call`` keeps its result,
and the model takes no further step. The driver then goes straight on with the inbox. The
adapter runs in a task of its own, so a stop is told apart from the driver itself being
cancelled at disposal, which ends the turn ``{"outcome": "error", "error": "turn cancelled"}``.

Interrupted turns: a resumed log whose last turn has a durable ``turn/start`` but no ``turn/end``
(the process died mid-turn) is closed before new input runs: each ``tool/call`` of that turn
without a ``tool/result`` is answered ``{"code": "interrupted", ...}``, then ``turn/end
{"outcome": "error", "error": "interrupted"}``; the next turn waits until that closure is durable.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections import deque
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, TypeVar

import structlog

from dsh_hookspecs import (
    AgentBusyError,
    AgentDisposedError,
    AgentPhase,
    Disposable,
    Event,
    JSONValue,
    ModelAdapter,
    Once,
    TaskSlot,
    TimeContext,
    Tool,
    ToolCall,
)

from .. import _json
from ._disposables import close_disposable
from ._durability import DurabilityGate
from ._inbox import (
    USER_SOURCE,
    InboxMessage,
    UserToolCall,
    interrupted_turn_closure,
    unstarted_followups,
)
from ._session import LiveSession, LiveSessionStore, Remover
from ._tools import ToolLayer, resolve, validate_arguments
from ._turn import LiveTurn

log = structlog.get_logger(__name__)

T = TypeVar("T")

#: The ``turn/end`` of a turn the user stopped (:meth:`LiveAgent.cancel_turn`).
CANCELLED_OUTCOME: dict[str, JSONValue] = {"outcome": "cancelled"}


class _RunningTurn:
    """The model turn the driver runs now: the task running the adapter, the tool calls it has
    in flight and whether the user asked to stop it."""

    __slots__ = ("stop_requested", "task", "tools")

    def __init__(self, task: asyncio.Task[bool]) -> None:
        self.task = task
        self.tools = 0
        self.stop_requested = False

    def tool_done(self) -> None:
        """One tool call has finished: a stop that waited for the calls in flight acts now."""
        self.tools -= 1
        if self.stop_requested and self.tools == 0:
            self.task.cancel()


class LiveAgent:
    """One Agent bound to one live Session (implements :class:`dsh_hookspecs.Agent`)."""

    def __init__(
        self,
        *,
        store: LiveSessionStore,
        global_tools: ToolLayer,
        session: LiveSession,
        parent: LiveAgent | None,
        model: ModelAdapter,
        on_disposed: Callable[[LiveAgent], None],
    ) -> None:
        """``store`` flushes ``session``; ``global_tools`` answer below the Agent's own layer;
        ``on_disposed(agent)`` runs once the Agent is disposed (its registry forgets it)."""
        self._store = store
        self._global_tools = global_tools
        self._on_disposed = on_disposed
        self._session = session
        self._parent = parent
        self._model = model
        self._id = new_id()
        self._gate = DurabilityGate(store, session, self._id)
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
        #: The model turn running now (``None`` outside one).
        self._turn: _RunningTurn | None = None

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
        return self._gate.waiting

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
        message_id = new_id()
        source: dict[str, JSONValue] = {"kind": "plugin", "plugin": plugin}
        record: JSONValue = {"messageId": message_id, "text": text, "source": source}
        # One synchronous, all-or-nothing step: the follow-up's record and the events that
        # belong to it reach storage in one batch or not at all; queued only once in the log.
        appended = self._session.append_all([("agent/followup", record), *with_events])
        # A crash before its turn ends leaves the Session cold with a turn owed: the entry,
        # written in the same batch, makes cold delivery resume it to run the turn.
        self._store.owe_turn(self._session, True)
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
        message = InboxMessage(message_id=new_id(), text=text, time_zone=time_zone)
        self._enqueue(message)
        return message.message_id

    def run_user_tool(self, name: str, arguments: JSONValue) -> QueuedUserTool:
        """Queue the tool ``name`` as the user's own action, in turn with the inbox (after the
        messages queued before this call, before those queued after it): ``tool/call`` (with
        ``"source": {"kind": "user"}``) and ``tool/result``, outside any turn and without the
        model. Awaiting it gives the call id, the tool's value and whether a flush then said
        the call is durable; its ``call_id`` is known at once (for :meth:`withdraw_user_tool`).

        Raises :class:`AgentDisposedError` when the Agent is disposed before the call finished
        (the caller going away does not withdraw it: it still runs, unless the caller takes it
        back with :meth:`withdraw_user_tool` before it started)."""
        self._check_live()
        action = UserToolCall(name, arguments, asyncio.get_running_loop().create_future())
        message = InboxMessage(message_id=new_id(), text="", action=action)
        self._enqueue(message)
        return QueuedUserTool(message.message_id, action)

    def withdraw_user_tool(self, call_id: str) -> bool:
        """Take the user's tool call ``call_id`` (the message id it was queued with) back out of
        the inbox before it started, because its caller stopped waiting: nothing of it is
        logged, it never runs, and awaiting it raises :class:`asyncio.CancelledError`.
        ``False`` when it is not queued (it started, finished or never was): nothing changes."""
        for message in self._inbox:
            if message.message_id == call_id and message.action is not None:
                self._inbox.remove(message)
                message.action.outcome.cancel()
                log.info("agent.user_tool_withdrawn", agent_id=self._id, call_id=call_id)
                return True
        return False

    def cancel_turn(self) -> bool:
        """Stop the model turn that is running (the user's Stop); ``False`` when none is (idle,
        maintenance, a user action, or a turn already finishing): nothing changes then.

        The turn ends ``turn/end {"outcome": "cancelled"}``; a tool call in progress finishes
        and its ``tool/result`` is recorded first. Asking again while the stop is pending
        changes nothing and answers ``True``."""
        turn = self._turn
        if turn is None or turn.task.done():
            return False
        if not turn.stop_requested:
            turn.stop_requested = True
            log.info("agent.turn_cancel_requested", agent_id=self._id, tool_calls=turn.tools)
            if turn.tools == 0:
                turn.task.cancel()
        return True

    @property
    def turn_stop_requested(self) -> bool:
        """The user asked to stop the running turn: it says and streams nothing more."""
        return self._turn is not None and self._turn.stop_requested

    def restore_inbox(self) -> None:
        """After a resume: close an interrupted turn, then re-queue the follow-ups of this
        Session whose turn never started (both from the owned part of the log)."""
        session = self._session
        owned = session.events[session.header.owned_from :]  # a copy: the closure comes after
        self._close_interrupted_turn(owned)
        for message in unstarted_followups(owned):
            log.info("agent.followup_restored", agent_id=self._id, message_id=message.message_id)
            self._enqueue(message)
        if not self._inbox:
            self._store.owe_turn(session, False)  # a closed turn was all it owed

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
            orphan_tool_calls=sum(kind == "tool/result" for kind, _ in closure),
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
                if not await self._gate.until(max(head.durable_through, self._floor)):
                    break  # the Session was detached: nothing more runs on it
                if not self._inbox or self._inbox[0] is not head:
                    continue  # withdrawn meanwhile: the new head waits for its own proof
                message = self._inbox.popleft()
                if message.action is None:
                    await self._run_turn(message)
                else:
                    await self._run_user_tool(message.message_id, message.action)
        finally:
            # Free the slot first: an idle callback below may start the next driver.
            self._driving.release()
            self._phase = "idle"
            if not self._inbox and not self._disposed:
                self._store.owe_turn(self._session, False)  # every owed turn has ended
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
        # The adapter runs in a task of its own: cancel_turn cancels that task, while disposal
        # cancels the driver (and, through the await, that task too).
        task = asyncio.get_running_loop().create_task(self._call_model(message), name="agent.turn")
        turn = self._turn = _RunningTurn(task)
        outcome: dict[str, JSONValue] = {"outcome": "ok"}
        try:
            if not await task:
                return  # the Session was detached: it takes no more appends
        except asyncio.CancelledError:
            if _cancelling():  # the driver itself is stopped (disposal)
                self._end_turn({"outcome": "error", "error": "turn cancelled"})
                raise
            outcome = {"outcome": "error", "error": "turn cancelled"}  # unless the user's stop
        except Exception as exc:
            if not turn.stop_requested:
                log.warning("agent.turn_failed", agent_id=self._id, error=str(exc))
                outcome = {"outcome": "error", "error": str(exc) or type(exc).__name__}
        finally:
            self._turn = None
        if turn.stop_requested:
            log.info("agent.turn_cancelled", agent_id=self._id, session_id=session.id)
            outcome = dict(CANCELLED_OUTCOME)
        self._end_turn(outcome)
        if not self._inbox:
            self._store.owe_turn(session, False)  # cleared in the batch of its turn/end
        await self._checkpoint()

    async def _call_model(self, message: InboxMessage) -> bool:
        """Run the model on ``message``'s turn; ``False`` when the Session was detached first."""
        session = self._session
        # A follow-up's model call waits until its turn/start is durable too: a crash before
        # that re-runs the turn after restart, and the model must not have seen it already.
        if message.durable_through and not await self._gate.until(len(session.events)):
            return False
        time = TimeContext(now_ms=self._store.clock.now_ms(), time_zone=message.time_zone)
        await self._model.run_turn(LiveTurn(self, message, time))
        return True

    async def _run_user_tool(self, call_id: str, action: UserToolCall) -> None:
        outcome = action.outcome
        try:
            value = await self.execute_tool(
                action.name, action.arguments, call_id=call_id, source=USER_SOURCE
            )
            durable = await self._checkpoint()
            outcome.set_result((value, durable))
        except Exception as exc:  # an append refused: nothing of it, or only its call, is logged
            log.warning("agent.user_tool_failed", agent_id=self._id, error=repr(exc))
            outcome.set_exception(exc)
        finally:
            if not outcome.done():  # cancelled: the driver is being stopped (disposal)
                outcome.set_exception(AgentDisposedError(f"agent {self._id} is disposed"))

    def _end_turn(self, outcome: dict[str, JSONValue]) -> None:
        try:
            self._session.append("turn/end", outcome)
        except Exception:
            log.exception("agent.turn_end_failed", agent_id=self._id)

    async def _checkpoint(self) -> bool:
        """Flush the Session; whether storage acknowledged (failures are logged, not raised)."""
        store = self._store
        if not store.is_live(self._session):
            return False
        try:
            durable = await store.flush(self._session)
        except Exception as exc:
            log.warning("agent.checkpoint_failed", agent_id=self._id, error=str(exc))
            return False
        if not durable:
            log.debug("agent.checkpoint_not_durable", agent_id=self._id)
        return durable is True

    def _resolve_idle_waiters(self) -> None:
        waiters, self._idle_waiters = self._idle_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # -- what a turn reads and streams ----------------------------------------------------------
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
    async def turn_tool(
        self, name: str, arguments: JSONValue, *, call_id: str | None = None
    ) -> JSONValue:
        """A tool call of the running turn's model (:meth:`LiveTurn.call_tool`). A stop requested
        while it runs waits for it: once its ``tool/result`` is recorded the turn is cancelled.
        After a stop, a new call is refused with :class:`asyncio.CancelledError`."""
        turn = self._turn
        if turn is None:
            return await self.execute_tool(name, arguments, call_id=call_id)
        if turn.stop_requested:
            raise asyncio.CancelledError("the turn was stopped")
        turn.tools += 1
        try:
            return await self.execute_tool(name, arguments, call_id=call_id)
        finally:
            turn.tool_done()

    async def execute_tool(
        self,
        name: str,
        arguments: JSONValue,
        *,
        call_id: str | None = None,
        source: dict[str, JSONValue] | None = None,
    ) -> JSONValue:
        """Run one tool call through the pipeline, recording ``tool/call`` and ``tool/result``
        (``source``, when given, marks who made the call: ``{"kind": "user"}``)."""
        call_id = call_id or new_id()
        session = self._session
        marked: dict[str, JSONValue] = {} if source is None else {"source": source}
        try:
            call = _json.canonical(
                {"callId": call_id, "name": name, "arguments": arguments, **marked}
            )
        except _json.JSONError as exc:
            # Unstorable arguments (a lone surrogate, nesting beyond 200 levels, ...) are
            # recorded as null and answered with a value, never an exception.
            session.append(
                "tool/call", {"callId": call_id, "name": name, "arguments": None, **marked}
            )
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
        for message in self._inbox:
            if message.action is not None and not message.action.outcome.done():
                message.action.outcome.set_exception(
                    AgentDisposedError(f"agent {self._id} is disposed")
                )
        self._inbox.clear()
        self._idle_callbacks.clear()
        self._resolve_idle_waiters()
        self._on_disposed(self)


class QueuedUserTool:
    """A user's tool call queued by :meth:`LiveAgent.run_user_tool`: awaiting it gives
    ``(call_id, value, durable)``; ``call_id`` names it at once (to withdraw it)."""

    __slots__ = ("_action", "call_id")

    def __init__(self, call_id: str, action: UserToolCall) -> None:
        self.call_id = call_id
        self._action = action

    def __await__(self) -> Generator[Any, None, tuple[str, JSONValue, bool]]:
        return _outcome(self.call_id, self._action).__await__()


async def _outcome(call_id: str, action: UserToolCall) -> tuple[str, JSONValue, bool]:
    value, durable = await asyncio.shield(action.outcome)
    return call_id, value, durable


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not only something it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def new_id() -> str:
    """An Agent, message or call id: 128 random bits as 32 hex digits, like ``uuid4().hex``.

    They name things within a Session's log and are no secret, so they come from the process's
    pseudo-random generator (seeded from the OS, re-seeded in a forked child) instead of a
    system call each time: a herd of deliveries makes several per reminder."""
    return f"{random.getrandbits(128):032x}"
