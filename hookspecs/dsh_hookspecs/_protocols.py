"""Typed Protocols for every host service a hook hands to a plugin, and the tool contract.

The reference host (``dsh_host``) implements them; a plugin types its code against these and
never imports the host.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

from ._types import BoardEntry, Event, JSONValue, Notice, SessionHeader

# -- the tool contract: what a model-facing tool is, and one call of it -----------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One invocation of a tool, after its arguments passed the tool's schema."""

    call_id: str
    name: str
    arguments: dict[str, JSONValue]
    agent: Agent


#: A tool body: receives the validated call, returns the JSON value of the result. A domain error
#: is a value (``{"code": ..., "message": ...}``), not an exception.
ToolHandler: TypeAlias = Callable[[ToolCall], Awaitable[JSONValue]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A model-facing tool.

    ``parameters`` is a JSON Schema object (the subset the host validates: ``type``,
    ``properties``, ``required``, ``additionalProperties``, ``enum``, ``items``,
    ``description``). The host validates arguments against it before ``handler`` runs.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: ToolHandler
    title: str = ""


T = TypeVar("T")

AgentPhase = Literal["idle", "maintenance", "running"]

#: Epoch milliseconds of ``0001-01-01T00:00:00.000Z``: the earliest instant a wake may name.
WAKE_MIN_MS: Final = -62_135_596_800_000
#: Epoch milliseconds of ``9999-12-31T23:59:59.999Z``: the latest instant a wake may name.
WAKE_MAX_MS: Final = 253_402_300_799_999


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

    def request_wake(self, session: Session, plugin: str, at_ms: int | None) -> None:
        """File ``plugin``'s standing request that the host make ``session`` live at ``at_ms``.

        The durable wake index holds at most one entry per plugin per Session: a later request
        replaces the earlier one, ``None`` clears it, and a request equal to the standing one
        changes nothing (and writes nothing). The request is recorded against the Session's
        current length and becomes durable in the same storage batch as the events ``[0,
        len(events))`` that caused it: the next acknowledged :meth:`flush` covers it (a flush
        writes it even when no event is pending), so after any crash the index and the log
        agree. Before that acknowledgement it may or may not be stored.

        ``plugin`` is the caller's own loaded plugin name; ``at_ms`` is wall-clock epoch
        milliseconds in ``[WAKE_MIN_MS, WAKE_MAX_MS]`` (an instant in the past is due at once).
        Raises :class:`~dsh_hookspecs.SessionNotLiveError` on a Session that is not live and
        ``ValueError`` for an unknown plugin or an ``at_ms`` that is not such an integer; a
        refused request changes nothing. Synchronous.
        """
        ...

    def wakes(self, session: Session) -> Mapping[str, int]:
        """The standing wake requests of ``session`` by plugin: what storage held when it was
        resumed (empty for a created or forked Session), then every request since, durable or
        not. A plugin compares its entry with what its fold asks for after a resume (the index
        is derived state) and files a correction with :meth:`request_wake`."""
        ...

    def post(self, session: Session, plugin: str, key: str, entry: BoardEntry | None) -> None:
        """Make ``entry`` ``plugin``'s board row ``key`` for ``session`` (``None`` removes it).

        The board is the host's durable projection across Sessions (:class:`BoardEntry`): a
        reader lists every Session's rows of one kind, ordered by ``at_ms``, without loading a
        cold log. Like :meth:`request_wake`, a post is recorded against the Session's current
        length and becomes durable in the same storage batch as the events that caused it (the
        next acknowledged :meth:`flush` covers it), so after any crash the board and the log
        agree; posting the standing value changes nothing and writes nothing.

        ``plugin`` is the caller's own loaded plugin name; ``key`` is a non-empty string of at
        most :data:`~dsh_hookspecs.BOARD_KEY_MAX_CHARS` characters. Raises
        :class:`~dsh_hookspecs.SessionNotLiveError` on a Session that is not live and
        ``ValueError`` for an unknown plugin, a bad key or a bad entry; a refused post changes
        nothing. Synchronous.

        .. versionadded:: 0.4
        """
        ...

    def posted(self, session: Session) -> Mapping[tuple[str, str], BoardEntry]:
        """The standing board rows of ``session`` by ``(plugin, key)``: what storage held when
        it was resumed (empty for a created or forked Session), then every post since. A plugin
        compares them with what its fold asks for after a resume and posts the difference.

        .. versionadded:: 0.4
        """
        ...

    def notify(self, session: Session, plugin: str, key: str, notice: Notice | None) -> None:
        """Ask the host to send ``notice`` outside the page: one outbox entry per notification
        channel configured when it is filed, keyed by ``(session, plugin, key, channel)``.

        Like :meth:`post`, a notice is recorded against the Session's current length and becomes
        durable in the same storage batch as the events that caused it (the next acknowledged
        :meth:`flush` covers it), so a notice is never lost between the events and the outbox,
        and never sent for events that were not stored. A key already stored for a channel
        changes nothing: a crash that repeats a decision creates nothing twice. Choose keys that
        name the occurrence (``"<reminder id>@<due instant>"``, say). ``None`` withdraws the
        key's entries not yet sent (a pending re-notification, say); one already sent stays.

        The host sends each entry once, from any host sharing the storage, without loading the
        Session; a host with no channel configured files nothing. ``plugin`` is the caller's own
        loaded plugin name; ``key`` a non-empty string of at most
        :data:`~dsh_hookspecs.BOARD_KEY_MAX_CHARS` characters. Raises
        :class:`~dsh_hookspecs.SessionNotLiveError` on a Session that is not live and
        ``ValueError`` for an unknown plugin, a bad key or a bad notice; a refused notice changes
        nothing. Synchronous.

        .. versionadded:: 0.5
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
    "WAKE_MAX_MS",
    "WAKE_MIN_MS",
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
