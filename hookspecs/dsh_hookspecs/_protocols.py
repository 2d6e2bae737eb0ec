"""Typed Protocols for every host service a hook hands to a plugin.

The reference host (``dsh_host``) implements them; a plugin types its code against these and
never imports the host.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

from ._types import Event, JSONValue, SessionHeader, Tool, ToolCall

T = TypeVar("T")

AgentPhase = Literal["idle", "maintenance", "running"]


@runtime_checkable
class Session(Protocol):
    """One live, append-only conversation log."""

    @property
    def id(self) -> str: ...

    @property
    def header(self) -> SessionHeader: ...

    @property
    def events(self) -> Sequence[Event]:
        """A read-only live view of the log; ``events[i].seq == i``."""
        ...

    def append(self, type: str, data: JSONValue) -> Event:  # noqa: A002 - wire name
        """Append one event synchronously and return it.

        Every plugin's ``dsh_event_validate`` sees the candidate first; a raise there refuses the
        append with :class:`~dsh_hookspecs.EventRejectedError` and changes nothing. Raises
        :class:`~dsh_hookspecs.SessionNotLiveError` on a detached Session. Appending is not
        durability: only an acknowledged :meth:`SessionStore.flush` is.
        """
        ...


class SessionStore(Protocol):
    """Creates, forks, resumes and checkpoints live Sessions."""

    def get(self, session_id: str) -> Session | None:
        """The live Session of that id, or ``None`` when it is not attached."""
        ...

    async def flush(self, session: Session) -> bool:
        """Checkpoint ``session``.

        Captures ``through_seq = len(session.events)`` at entry, runs every flush listener,
        raises if any failed (after all settled), and returns ``True`` only if some listener
        acknowledged durability with a literal ``True``. On ``True`` it publishes
        ``dsh_session_flushed(session, through_seq)``. No listener, or only observe-only ones,
        returns ``False``.
        """
        ...


class Clock(Protocol):
    """The one time seam: wall clock for persisted instants, loop time only for waits."""

    def now_ms(self) -> int:
        """Wall-clock UTC now, epoch milliseconds."""
        ...

    def time(self) -> float:
        """Wall-clock UTC now, epoch seconds with sub-millisecond precision (for arming waits)."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` on the loop after ``delay`` seconds of loop time."""
        ...


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class ToolRegistry(Protocol):
    """One layer of tools (the global layer or one Agent's layer)."""

    def register(self, tool: Tool) -> Callable[[], None]:
        """Add ``tool``; return an idempotent disposer that removes it.

        Raises :class:`~dsh_hookspecs.ToolConflictError` when the name is already in this layer.
        """
        ...

    def get(self, name: str) -> Tool | None: ...

    def names(self) -> Sequence[str]: ...


class Agent(Protocol):
    """A conversational actor bound to one Session."""

    @property
    def id(self) -> str: ...

    @property
    def session(self) -> Session: ...

    @property
    def parent(self) -> Agent | None:
        """The owning Agent, or ``None`` for a root Agent."""
        ...

    @property
    def phase(self) -> AgentPhase: ...

    @property
    def disposed(self) -> bool: ...

    @property
    def tools(self) -> ToolRegistry:
        """This Agent's own tool layer (it shadows the global layer for this Agent only)."""
        ...

    async def run_maintenance(self, task: Callable[[], T | Awaitable[T]]) -> T:
        """Claim the idle phase for ``task`` and release it when the task settles.

        Fails at once with :class:`~dsh_hookspecs.AgentBusyError` unless the Agent is idle.
        While the task runs, waking input (a message, a follow-up) is parked and starts only
        after the phase is released. The task's result or exception is returned or raised.
        """
        ...

    async def when_idle(self) -> None:
        """Resolve when the Agent is next fully idle (following replacement work)."""
        ...

    def followup(
        self,
        text: str,
        *,
        plugin: str,
        with_events: Sequence[tuple[str, JSONValue]] = (),
    ) -> str:
        """Queue a user-role message that opens its own later turn; return its message id.

        Synchronously appends ``agent/followup`` to the log, and ``with_events`` (``(type,
        data)`` pairs) right after it, all or nothing: every candidate is validated before any
        of them counts as appended, so they reach storage in one batch or not at all, and the
        message is queued only once they are in the log. It never steers a running turn.
        Raises :class:`~dsh_hookspecs.EventRejectedError` (nothing appended, nothing queued).
        """
        ...

    def on_idle(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` on every transition to idle; return an idempotent unsubscriber."""
        ...


class AgentRegistry(Protocol):
    def get(self, agent_id: str) -> Agent | None: ...

    def roots(self) -> Sequence[Agent]:
        """Live root Agents (created without an owning Agent), in publication order."""
        ...


class Host(Protocol):
    """What ``dsh_plugin_start`` hands a plugin: the host's services."""

    @property
    def sessions(self) -> SessionStore: ...

    @property
    def agents(self) -> AgentRegistry: ...

    @property
    def tools(self) -> ToolRegistry:
        """The global tool layer."""
        ...

    @property
    def clock(self) -> Clock: ...


__all__ = [
    "Agent",
    "AgentPhase",
    "AgentRegistry",
    "Clock",
    "Host",
    "Session",
    "SessionStore",
    "TimerHandle",
    "ToolCall",
    "ToolRegistry",
]
