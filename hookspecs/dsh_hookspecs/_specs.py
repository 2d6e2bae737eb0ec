"""The dsh hook specifications.

Calling convention (the host's, for every hook): the host calls each plugin's implementation
itself, in pluggy's order (last registered first), with keyword arguments, isolates a failing
plugin (logs it and goes on) unless the hook says a raise means something, and awaits nothing:
every hook here is synchronous. Nothing is ``historic``: a plugin sees only what happens after it
loaded. Nothing is ``firstresult`` unless stated.

A returned :data:`~dsh_hookspecs.Disposable` is a zero-argument callable (sync or async) that the
host calls exactly once when the named scope ends; its failures are logged and contained.

Services are not hooks: a plugin that wants its Session made live at an instant files a wake
request with the host (:meth:`dsh_hookspecs.SessionStore.request_wake`, one standing entry per
plugin per Session, durable with the events that caused it); see :func:`dsh_session_opened` for
reading the entries back after a resume, and :func:`dsh_wake_due` for answering a due entry of
a cold Session without making it live.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import pluggy

from ._models import ModelAdapterSpec, ScriptedPhrase
from ._protocols import Agent, Host, Session
from ._types import DeliveryPlan, Disposable, Event, JSONValue, RendererAsset, StoredWake

__all__ = [
    "HOOK_NAMES",
    "PROJECT",
    "ModelAdapterSpec",
    "ScriptedPhrase",
    "dsh_agent_published",
    "dsh_event_present",
    "dsh_event_validate",
    "dsh_model_adapters",
    "dsh_plugin_start",
    "dsh_renderer_assets",
    "dsh_scripted_phrases",
    "dsh_session_flushed",
    "dsh_session_opened",
    "dsh_session_views",
    "dsh_wake_due",
    "hookspec",
]

PROJECT = "dsh"
hookspec = pluggy.HookspecMarker(PROJECT)


@hookspec
def dsh_plugin_start(host: Host, config: Mapping[str, JSONValue]) -> Disposable | None:
    """Start a plugin that has just been loaded.

    When: once per plugin, right after the loader registered it and ``check_pending()`` passed;
    only the newly loaded plugin's implementation is called, with its own overlay config table.

    Result: a disposable the host closes when the plugin is unloaded or the host stops (after
    the plugin's per-Agent disposables). A raise aborts start-up with a message naming the
    plugin. Synchronous.

    .. versionadded:: 0.1
    """


@hookspec
def dsh_agent_published(agent: Agent) -> Disposable | None:
    """A root or child Agent was published.

    When: once per Agent, after it is fully constructed and before it takes any input. Not
    historic: Agents published before the plugin loaded are never replayed to it. Root Agents
    have ``agent.parent is None``.

    Result: a disposable the host closes (in reverse publication order, awaited) when the Agent
    is disposed or the plugin is unloaded, whichever comes first. A raise is logged and contained;
    the Agent is still published. Synchronous.

    .. versionadded:: 0.1
    """


@hookspec
def dsh_session_opened(session: Session, reason: Literal["created", "forked", "resumed"]) -> None:
    """A Session became live: newly created, forked from a parent, or resumed from storage.

    When: once per live Session object, after its construction events (``session/end-seed``)
    were appended and before any Agent uses it.

    Result: ``None``. A raise reports that the Session's log is invalid for that plugin (for
    example a corrupt owned Schedule stream); the host logs it as ``session.invalid`` naming the
    plugin and keeps the Session readable. Synchronous.

    The durable wake index (:meth:`~dsh_hookspecs.SessionStore.request_wake`): for a resumed
    Session, ``host.sessions.wakes(session)`` already holds the entries stored with its log; a
    plugin that files wakes compares its own entry with what its fold asks for and corrects it
    (the index is derived state: a request equal to the standing entry writes nothing). Created
    and forked Sessions start with no entry (a fork's child does not inherit its parent's).
    ``dsh reindex`` relies on this: it opens every cold Session with no entry (``reason`` is
    ``"resumed"``, no Agent is published, nothing is delivered), and an entry the plugin does
    not file again here is cleared. A plugin that files wakes therefore files them from its
    fold in this hook.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
       Wake entries are readable here (docs/always-on.md, "The durable wake index").
    """


@hookspec
def dsh_wake_due(plugin: str, wake: StoredWake) -> DeliveryPlan | None:
    """Say what a due wake entry of a cold Session means, from what is stored.

    When: a wake entry that plugin ``plugin`` filed
    (:meth:`~dsh_hookspecs.SessionStore.request_wake`) is due while its Session is cold; only that
    plugin's implementation is called (a plugin answers its own wakes only, and ``plugin`` is its
    loaded name). No Session is live and no Agent exists: ``wake`` is what storage holds.

    Result: a :class:`~dsh_hookspecs.DeliveryPlan`, which the host stores in one durable write
    with its follow-ups, board rows, notices and next wake entry, fenced on the log's stored
    length (a Session that was written, or made live, since it was read is read again and asked
    again, never written twice); or ``None``, and the host resumes the Session as it always has
    (a plugin without this hook is resumed too). A raise is logged and the Session is resumed.
    The host asks only while no other loaded plugin implements :func:`dsh_event_validate` (which
    needs a live Session): a plan's events never escape another plugin's veto; the plugin decides
    them by the same rules its live Sessions run. Synchronous, and pure: the same stored Session
    and instant give the same plan.

    .. versionadded:: 0.6
    """


@hookspec
def dsh_event_validate(session: Session, event: Event) -> None:
    """Validate a candidate event before it is appended to ``session``.

    When: on every append, with the event exactly as it would be stored (its ``seq`` is the next
    index). The log does not contain it yet.

    Result: ``None`` accepts. A raise rejects the append: the host raises
    :class:`~dsh_hookspecs.EventRejectedError` (naming the plugin) to the appender and nothing
    changes. Synchronous, and on the hot path: return quickly for event types you do not own.

    .. versionadded:: 0.1
    """


@hookspec
def dsh_session_flushed(session: Session, through_seq: int) -> None:
    """A flush of ``session`` was acknowledged as durable.

    When: after ``SessionStore.flush`` returned ``True``; ``through_seq`` is the exclusive
    boundary captured when that flush was entered (events ``[0, through_seq)`` are on storage).
    Concurrent flushes may be observed out of order: keep a maximum, never move a boundary back.

    Result: ignored; a raise is logged and contained. Synchronous.

    .. versionadded:: 0.1
    """


@hookspec
def dsh_event_present(
    events: Sequence[Event], seq: int, seed_length: int, session: Session | None
) -> JSONValue | None:
    """Derive a presentation view for the committed event ``events[seq]``.

    When: by the Web host, for each event newly covered by an acknowledged flush, and for history
    entries inside a stored prefix proven identical to the live Session (or every stored event of
    a cold Session). ``events`` is the full log the event belongs to; ``seed_length`` its
    Session's ``seedLength`` (0 when not forked); ``session`` the live Session whose
    ``events`` that is, or ``None`` for a log read from storage (a plugin may keep what it
    derives from a live Session's log keyed by the Session, and must not touch it).

    Result: the first non-``None`` view (in the host's call order) is attached to the event as
    ``{"for": "event", "view": ...}``; ``None`` means "not mine". A raise is logged and the event
    is served raw. Synchronous and pure: it must not touch the log.

    .. versionadded:: 0.1
    """


@hookspec
def dsh_session_views(
    events: Sequence[Event], seed_length: int, session: Session | None
) -> Mapping[str, JSONValue] | None:
    """Derive read-only views of one Session from its committed log.

    When: by the Web host, for ``GET /api/sessions/{id}/views``, for the event stream (after its
    replay and after every acknowledged flush that moves the committed length), and for the
    Session list's badges. ``events`` is only the committed prefix of the log (a live Session's
    durable events, or a cold Session's stored log); ``seed_length`` its ``seedLength`` (0 when
    not forked); ``session`` the live Session, or ``None`` for a stored log.

    Result: ``{view_name: view}`` with names namespaced by the plugin (``"schedule.reminders"``),
    or ``None``. A view that is an object may carry an integer ``"badge"`` (>= 0) the session
    list shows. The host merges every plugin's mapping; when two name one view, the one called
    first (pluggy calls the most recently loaded plugin first) keeps it and the clash is logged.
    A raise is logged and that plugin contributes nothing. Synchronous and pure: it must not
    touch the log.

    .. versionadded:: 0.3
    """


@hookspec
def dsh_renderer_assets() -> Sequence[RendererAsset]:
    """Browser renderer modules this plugin contributes.

    When: once, when the Web host starts (and again if it lists assets after a plugin loads).

    Result: collected from every plugin; each asset's module is served to the browser, imported,
    and its default export ``register(registry)`` called. A raise is logged and the plugin
    contributes nothing. Synchronous.

    .. versionadded:: 0.1
    """


@hookspec
def dsh_scripted_phrases() -> Sequence[ScriptedPhrase]:
    """Phrases this plugin teaches the host's keyless ``scripted`` demo model.

    When: each time the scripted model runs a turn (so it follows plugins loaded and unloaded).
    A host without such a model never calls it.

    Result: collected from every plugin, in the host's call order. The model tries its own
    ``/tool NAME {json}`` first, then each offered phrase in that order: the first whose
    pattern matches answers the message (a ``respond`` phrase may pass it on); with none, the
    model answers a help text, in the message's language, quoting three of the phrases'
    ``example`` and ``examples`` that fit it. A raise, or an item that is not a
    :class:`ScriptedPhrase`, is logged and skipped. Synchronous.

    .. versionadded:: 0.2
    """


@hookspec
def dsh_model_adapters() -> Sequence[ModelAdapterSpec]:
    """Model adapters this plugin offers (:class:`ModelAdapterSpec`).

    When: while a host starts: the host builds the adapter its configuration names (``dsh
    serve --model NAME``) with ``spec.create(settings)`` once a loaded plugin offers that
    name, at the latest after every plugin of its overlay is loaded. The reference host offers
    ``scripted``, ``none`` and ``openai`` through this hook too, from a default plugin it
    registers before any other.

    Result: collected from every plugin. A name offered twice, a raise, or an item that is not
    a :class:`ModelAdapterSpec` is logged and skipped (the first offer of a name wins: a
    host's default plugins come first). Synchronous.

    .. versionadded:: 0.3
    """


HOOK_NAMES: tuple[str, ...] = (
    "dsh_plugin_start",
    "dsh_agent_published",
    "dsh_session_opened",
    "dsh_event_validate",
    "dsh_session_flushed",
    "dsh_event_present",
    "dsh_session_views",
    "dsh_wake_due",
    "dsh_renderer_assets",
    "dsh_scripted_phrases",
    "dsh_model_adapters",
)
