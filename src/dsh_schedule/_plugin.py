"""The Schedule plugin: tools and one owner on every root Agent published after it loaded.

It also implements the invariant companion (``dsh_event_validate`` refuses a ``schedule/change``
candidate that would corrupt the owned stream; ``dsh_session_opened`` reports a Session whose
owned stream is already corrupt), the presentation hook for ``schedule/change`` dispatches, and
the reminder phrases of a host's ``scripted`` demo model (``dsh_scripted_phrases``). It is the
one core module that wires in :mod:`dsh_schedule.language`, the scripted assistant's language.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal

import structlog

from dsh_hookspecs import (
    Agent,
    DeliveryPlan,
    Event,
    Host,
    JSONValue,
    Session,
    StoredWake,
    hookimpl,
    hookspecs,
)

from ._board import BoardFiler
from ._codec import (
    MAX_EVERY_SECONDS,
    MIN_EVERY_SECONDS,
    MIN_EVERY_SECONDS_FLOOR,
    ScheduleLogError,
    parse_instant,
)
from ._cold import plan_wake
from ._fold import SCHEDULE_CHANGE, FoldCache, IncrementalFold, Step, earliest
from ._panel import VIEW_NAME, reminders_view
from ._receipts import Receipts, ReminderView
from ._runtime import PLUGIN_NAME, ScheduleOwner
from ._tools import MAX_ACTIVE, MAX_PROMPT_CHARS, ScheduleTools
from .language import PHRASES

log = structlog.get_logger(__name__)


class ConfigError(ValueError):
    """The plugin's overlay config table is invalid."""


def _positive(config: Mapping[str, JSONValue], key: str, default: float) -> float:
    value = config.get(key, default)
    if type(value) not in (int, float) or not value > 0:  # type: ignore[operator]
        raise ConfigError(f"{key} must be a positive number")
    return value  # type: ignore[return-value]


def _positive_int(config: Mapping[str, JSONValue], key: str, default: int) -> int:
    value = config.get(key, default)
    if type(value) is not int or value <= 0:
        raise ConfigError(f"{key} must be a positive integer")
    return value


def _flag(config: Mapping[str, JSONValue], key: str) -> bool:
    value = config.get(key, False)
    if type(value) is not bool:
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value


class _WakeFiler:
    """Files a Session's earliest active target with the host's durable wake index (the
    ``cold_delivery`` mode): told by the fold cache each time a Session's active records move,
    and on every open. It files only a change, and never for a Session that is not live."""

    __slots__ = ("host",)

    def __init__(self, host: Host) -> None:
        self.host = host

    def __call__(
        self, session: Session, folded: IncrementalFold, steps: Sequence[Step], fresh: bool
    ) -> None:
        del steps, fresh
        record = earliest(folded.active)
        self.file(session, None if record is None else parse_instant(record.scheduled_at))

    def corrupt(self, session: Session) -> None:
        """The owned stream of ``session`` is corrupt: it delivers nothing, so it needs no wake."""
        self.file(session, None)

    def file(self, session: Session, target: int | None) -> None:
        """Make ``target`` this plugin's standing entry for ``session`` (a change only)."""
        sessions = self.host.sessions
        if sessions.get(session.id) is not session:
            return
        if sessions.wakes(session).get(PLUGIN_NAME) != target:
            sessions.request_wake(session, PLUGIN_NAME, target)


class _Installation:
    """What one root Agent got (tools, idle subscription, owner) and its idempotent undo.

    A slotted callable rather than a closure: one of these lives per installed Agent.
    """

    __slots__ = ("_done", "_undo", "agent", "owner", "plugin")

    def __init__(
        self,
        plugin: SchedulePlugin,
        agent: Agent,
        owner: ScheduleOwner,
        undo: tuple[Callable[[], None], ...],
    ) -> None:
        self.plugin = plugin
        self.agent = agent
        self.owner = owner
        self._undo = undo
        self._done = False

    async def __call__(self) -> None:
        if self._done:
            return
        self._done = True
        for step in reversed(self._undo):
            step()
        await self.owner.dispose()
        self.plugin.owners.pop(self.agent, None)
        self.plugin._cleanups.pop(self.agent, None)  # noqa: SLF001 - the plugin's own record


class SchedulePlugin:
    """Entry point ``schedule`` in group ``dsh.plugins``.

    Config (all optional): ``max_segment_seconds`` (default 60), ``max_prompt_chars`` (4000),
    ``max_active`` (1000), ``min_every_seconds`` (300, never below 60: the shortest
    ``every_seconds``), ``cold_delivery`` (``false``; ``true`` files each Session's earliest
    active target with the host's wake index, so the host resumes a cold Session when it is due).
    Whatever the config, every live Session's pending and delivered reminders are kept on the
    host's board, and each delivery is filed as a notice for the host's notification channels
    (:mod:`._board`).
    """

    def __init__(self) -> None:
        self.host: Host | None = None
        self.folds = FoldCache()
        self.receipts = Receipts()
        self.owners: dict[Agent, ScheduleOwner] = {}
        #: Owners whose preflight or barrier failed, by Session id (re-driven on a flush).
        self.stalled: dict[str, ScheduleOwner] = {}
        self.stopping = False
        self.max_segment = 60.0
        self.tools = ScheduleTools(self.owners)
        #: What the fold cache tells (the board filer, and with cold_delivery the wake filer).
        self.filers: tuple[BoardFiler | _WakeFiler, ...] = ()
        self._cleanups: dict[Agent, _Installation] = {}

    @hookimpl
    def dsh_plugin_start(self, host: Host, config: Mapping[str, JSONValue]) -> Callable[[], object]:
        known = {
            "max_segment_seconds",
            "max_prompt_chars",
            "max_active",
            "min_every_seconds",
            "cold_delivery",
        }
        unknown = set(config) - known
        if unknown:
            raise ConfigError(f"unknown config keys {sorted(unknown)}")
        self.max_segment = _positive(config, "max_segment_seconds", 60.0)
        min_every = config.get("min_every_seconds", MIN_EVERY_SECONDS)
        if (
            type(min_every) is not int
            or not MIN_EVERY_SECONDS_FLOOR <= min_every <= MAX_EVERY_SECONDS
        ):
            raise ConfigError(
                f"min_every_seconds must be an integer of at least {MIN_EVERY_SECONDS_FLOOR}"
            )
        self.tools.configure(
            max_prompt=_positive_int(config, "max_prompt_chars", MAX_PROMPT_CHARS),
            max_active=_positive_int(config, "max_active", MAX_ACTIVE),
            min_every=min_every,
        )
        self.filers = (BoardFiler(host),)
        if _flag(config, "cold_delivery"):
            self.filers += (_WakeFiler(host),)
        self.folds.watchers = self.filers
        self.host = host
        return self.stop

    async def stop(self) -> None:
        """Plugin disposal: stop installing, unwind every installed Agent (all settle)."""
        self.stopping = True
        cleanups = list(self._cleanups.values())
        await asyncio.gather(*(cleanup() for cleanup in cleanups), return_exceptions=True)

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> Callable[[], Awaitable[None]] | None:
        host = self.host
        if host is None or self.stopping or agent.parent is not None or agent in self.owners:
            return None
        if host.agents.get(agent.id) is not agent:
            return None
        owner = ScheduleOwner(
            agent, host, self.folds, max_segment=self.max_segment, stalled=self.stalled
        )
        undo = (*self.tools.register(agent), agent.on_idle(owner.request_drive))
        self.owners[agent] = owner
        installation = _Installation(self, agent, owner, undo)
        self._cleanups[agent] = installation
        owner.start()
        return installation

    @hookimpl
    def dsh_session_opened(
        self, session: Session, reason: Literal["created", "forked", "resumed"]
    ) -> None:
        # Raises ScheduleLogError for a corrupt owned stream; the host reports it. The fold
        # cache reconciles the Session's board rows here, and with cold_delivery files its wake
        # (every reason: a resumed Session's stored rows and entry are corrected from its fold;
        # `dsh reindex` relies on it).
        del reason
        try:
            self.folds.of(session)
        except ScheduleLogError:
            # A corrupt stream delivers nothing: a stored wake for it would only wake it again,
            # and its stored rows would announce reminders that never come.
            for filer in self.filers:
                filer.corrupt(session)
            raise

    @hookimpl
    def dsh_wake_due(self, plugin: str, wake: StoredWake) -> DeliveryPlan | None:
        # Only the wake this plugin files, and only while it files them (cold_delivery).
        if plugin != PLUGIN_NAME or not any(isinstance(f, _WakeFiler) for f in self.filers):
            return None
        return plan_wake(wake, PLUGIN_NAME)

    @hookimpl
    def dsh_event_validate(self, session: Session, event: Event) -> None:
        if event.type != SCHEDULE_CHANGE:
            return
        self.folds.of(session).check(event)

    @hookimpl
    def dsh_session_flushed(self, session: Session, through_seq: int) -> None:
        del through_seq
        owner = self.stalled.get(session.id)
        if owner is not None and owner.agent.session is session:
            owner.session_flushed()

    @hookimpl
    def dsh_event_present(
        self, events: Sequence[Event], seq: int, seed_length: int, session: Session | None
    ) -> ReminderView | None:
        if events[seq].type != SCHEDULE_CHANGE:
            return None
        return self.receipts.present(events, seq, seed_length, session)

    @hookimpl
    def dsh_session_views(
        self, events: Sequence[Event], seed_length: int, session: Session | None
    ) -> Mapping[str, JSONValue]:
        del session  # derived from the committed events alone
        return {VIEW_NAME: reminders_view(events, seed_length)}

    @hookimpl
    def dsh_scripted_phrases(self) -> Sequence[hookspecs.ScriptedPhrase]:
        return PHRASES
