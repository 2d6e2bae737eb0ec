"""Value types that cross the host <-> plugin boundary.

They are stdlib frozen dataclasses (this package depends on nothing but pluggy and the standard
library) so that the host and every plugin share one definition of an event, a Session header,
a tool and a tool call.

Error hierarchy (everything a plugin may need to catch without importing the host)::

    DshError
    ├── AgentBusyError          run_maintenance() while a turn or maintenance owns the Agent
    ├── AgentDisposedError      the Agent is gone
    ├── EventRejectedError      a plugin's dsh_event_validate refused a candidate event
    ├── SessionNotLiveError     flush/append on a detached or unknown Session
    └── ToolConflictError       a tool name already registered in that layer
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

#: A JSON value as the host stores it: dicts with str keys, lists, str, int, finite float, bool,
#: None. Plugins must treat event data as read-only.
JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"

#: What a plugin hands back for anything it started: a zero-argument callable, sync or async.
#: The host calls it exactly once, when the owning scope (an Agent, the plugin, the host) ends.
Disposable: TypeAlias = Callable[[], Awaitable[None] | None]


class DshError(Exception):
    """Base class of every error the dsh contract defines."""


class AgentBusyError(DshError):
    """``run_maintenance`` found the Agent running a turn or another maintenance task."""


class AgentDisposedError(DshError):
    """The Agent was disposed; it accepts no more work."""


class EventRejectedError(DshError):
    """A candidate event was refused before it entered the log.

    ``plugin`` names the plugin whose ``dsh_event_validate`` raised and ``event`` is the refused
    candidate (``None`` when unknown); ``__cause__`` holds the plugin's exception.
    """

    def __init__(self, message: str, *, plugin: str, event: Event | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.event = event


class SessionNotLiveError(DshError):
    """The Session object is not the live, attached Session of its id."""


class ToolConflictError(DshError):
    """A tool with that name is already registered in the same layer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One entry of a Session's append-only log: ``{seq, type, time, data}``.

    ``seq`` is the 0-based contiguous log index, ``time`` epoch milliseconds at append and
    ``data`` a strict JSON value.
    """

    seq: int
    type: str
    time: int
    data: JSONValue

    def to_json(self) -> dict[str, JSONValue]:
        return {"seq": self.seq, "type": self.type, "time": self.time, "data": self.data}


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionHeader:
    """Durable Session metadata, outside the log.

    ``seed_length`` is the number of events a fork inherited from its parent (its owned stream
    starts there); ``None`` on a Session that was not forked.
    """

    version: int
    id: str
    created_at: int
    cwd: str | None = None
    parent_session: str | None = None
    seed_length: int | None = None
    origin: Literal["subagent"] | None = None
    delegation_depth: int | None = None

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "version": self.version,
            "id": self.id,
            "createdAt": self.created_at,
        }
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.parent_session is not None:
            out["parentSession"] = self.parent_session
        if self.seed_length is not None:
            out["seedLength"] = self.seed_length
        if self.origin is not None:
            out["origin"] = self.origin
        if self.delegation_depth is not None:
            out["delegationDepth"] = self.delegation_depth
        return out

    @property
    def owned_from(self) -> int:
        """Index of the first event this Session owns (``seedLength`` or 0)."""
        return self.seed_length or 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardEntry:
    """One row a plugin posts to the host's board (:meth:`~dsh_hookspecs.SessionStore.post`).

    The board is a durable projection across Sessions: the host answers "what is coming up on
    every Session" from it without loading a cold log. ``kind`` groups rows a reader asks for
    together (1 to 32 characters of ``a-z``, ``0-9``, ``_``); ``at_ms`` orders them (wall-clock
    epoch milliseconds in ``[WAKE_MIN_MS, WAKE_MAX_MS]``); ``data`` is what a reader shows (JSON
    of at most :data:`BOARD_DATA_MAX_BYTES` bytes once encoded).

    .. versionadded:: 0.4
    """

    kind: str
    at_ms: int
    data: JSONValue = None


#: The largest ``data`` of a :class:`BoardEntry`, in bytes of compact UTF-8 JSON.
BOARD_DATA_MAX_BYTES = 4096
#: The longest key of a board entry, in characters.
BOARD_KEY_MAX_CHARS = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """A message a plugin asks the host to send outside the page
    (:meth:`~dsh_hookspecs.SessionStore.notify`): to each notification channel the person
    configured (e-mail, ntfy, a webhook, a browser's Web Push subscription...).

    ``title`` (1 to :data:`NOTICE_TITLE_MAX_CHARS` characters) and ``body`` (at most
    :data:`NOTICE_BODY_MAX_CHARS`) are plain text: every channel shows them as text, escaping its
    own markup. ``at_ms`` is the instant the notice is about (a reminder's due time), in
    ``[WAKE_MIN_MS, WAKE_MAX_MS]``. ``not_before_ms``: the host sends no earlier (``None``: at
    once). ``expires_ms``: once reached, a notice not yet delivered is given up (``None``: never;
    a reminder's next occurrence, say). ``data`` is a small JSON object (at most
    :data:`NOTICE_DATA_MAX_BYTES` bytes once encoded) of string values handed to receivers that
    take structured data (a webhook's payload keys, a Web Push notification's actions).

    .. versionadded:: 0.5
    """

    title: str
    body: str = ""
    at_ms: int
    not_before_ms: int | None = None
    expires_ms: int | None = None
    data: Mapping[str, str] = field(default_factory=dict)


#: The longest ``title`` of a :class:`Notice`, in characters.
NOTICE_TITLE_MAX_CHARS = 200
#: The longest ``body`` of a :class:`Notice`, in characters.
NOTICE_BODY_MAX_CHARS = 2000
#: The largest ``data`` of a :class:`Notice`, in bytes of compact UTF-8 JSON.
NOTICE_DATA_MAX_BYTES = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredWake:
    """A due wake entry of a cold Session, with what is stored of that Session
    (:func:`~dsh_hookspecs.hookspecs.dsh_wake_due`).

    ``events`` is the stored log whole (``header.owned_from`` tells a fork's own events from its
    copied prefix); ``board`` holds the plugin's own stored board rows by key; ``at_ms`` is the
    plugin's due entry and ``now_ms`` the host's wall clock when it read them (``at_ms <=
    now_ms``).

    .. versionadded:: 0.6
    """

    session_id: str
    header: SessionHeader
    events: Sequence[Event]
    board: Mapping[str, BoardEntry] = field(default_factory=dict)
    at_ms: int
    now_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Followup:
    """One follow-up message a :class:`DeliveryPlan` owes its Session: what a live Agent's
    :meth:`~dsh_hookspecs.Agent.followup` queues, with ``events`` (``(type, data)`` pairs) appended
    right after its ``agent/followup`` in the same write.

    .. versionadded:: 0.6
    """

    text: str
    events: Sequence[tuple[str, JSONValue]] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryPlan:
    """What a due wake means, decided from what is stored (:class:`StoredWake`) without making
    the Session live; the host stores all of it in one durable write, or none of it.

    The events it appends are laid out from the stored length ``L`` on, all at ``now_ms``: for
    each of ``followups`` in order, its ``agent/followup`` (``{"messageId", "text", "source":
    {"kind": "plugin", "plugin": <the plugin>}}``, the id the host's) and then its ``events``. So
    the first follow-up is seq ``L``, its first event ``L + 1``, the next follow-up ``L + 1 +
    len(events)``... A plugin that names an event by its seq (a board key, say) computes it from
    that layout. ``board`` posts the plugin's rows (key -> entry, ``None`` removes one), as
    :meth:`~dsh_hookspecs.SessionStore.post` would; ``notices`` files or withdraws notices (key ->
    notice or ``None``), as :meth:`~dsh_hookspecs.SessionStore.notify` would; ``wake_at_ms`` is the
    plugin's next standing wake entry (``None`` removes it). The host owes the follow-ups a turn:
    they run later through the same path as a live Session's, never before the write is durable.

    .. versionadded:: 0.6
    """

    followups: Sequence[Followup] = ()
    board: Mapping[str, BoardEntry | None] = field(default_factory=dict)
    notices: Sequence[tuple[str, Notice | None]] = ()
    wake_at_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RendererAsset:
    """A browser ES module (or stylesheet) a plugin contributes to the Web client.

    ``path`` is the module file on disk; the host serves it and the client imports it. The
    module's default export is ``register(registry)``, which adds renderers keyed by durable event
    type (and tool summaries, follow-up lines and Session-view panels). ``event_types`` lists the
    types it renders (used to order and to report conflicts). A ``path`` ending in ``.css`` is a
    stylesheet instead: the page links it (it should use only the host's theme custom properties).

    .. versionchanged:: 0.3 stylesheets.
    """

    name: str
    path: str
    event_types: Sequence[str] = field(default_factory=tuple)
