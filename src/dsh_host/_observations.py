"""What a Session store tells its subscribers, and in which order: the one subscription API.

A component asks :meth:`LiveSessionStore.subscribe <dsh_host.LiveSessionStore.subscribe>` for the
kinds of observation it wants and gets one handle back::

    unsubscribe = store.subscribe(self._observe, (Opened, Appended))
    ...
    unsubscribe()  # idempotent

``kinds`` is one observation class or a tuple of them; ``callback(observation)`` receives a
frozen instance of one of them, whose ``session`` is the live Session object. The kinds:

* :class:`Opened` ``(session, reason, stored_length)``: a Session became live in this store
  (``reason``: ``"created"``, ``"forked"`` or ``"resumed"``; ``stored_length``: the events storage
  held when a resumed Session was loaded, 0 for a created or forked one);
* :class:`Appended` ``(session, event)``: ``event`` entered the log;
* :class:`Flushed` ``(session, through_seq)``: a flush captured at ``through_seq`` was
  acknowledged durable;
* :class:`WakeChanged` ``(session, plugin, at_ms)``: the standing wake entry of ``plugin``
  changed (``at_ms`` ``None``: it was cleared);
* :class:`BoardChanged` ``(session, plugin, key, entry)``: the standing board row ``(plugin,
  key)`` changed (``entry`` ``None``: it was removed);
* :class:`Notified` ``(session, plugin, key, notice)``: a plugin filed a notice for the outbox
  (``notice`` ``None``: withdrew the key's unsent entries);
* :class:`Detached` ``(session)``: the Session went cold;
* :class:`Streamed` ``(session, payload)``: ephemeral output of a live Session (streamed
  assistant text), never logged and never replayed.

Flush *listeners* (``LiveSessionStore.add_flush_listener``) are not subscribers: they take part in
a flush and answer whether it is durable (the flush contract of :mod:`dsh_host.core._session`).

The ordering rules, in this one place (``tests/host/test_observations.py`` has a test for each):

1. **Subscription order.** The subscribers of a kind are called one at a time, in the order
   they subscribed. The host subscribes its persistence coordinator (the one authority on what
   is committed) when it builds the store, before anything else does, so the coordinator has
   taken in each observation before any other subscriber hears of it: at :class:`Opened` of a
   resumed Session, ``store.durable_length(session)`` already answers the stored length.
2. **Opened comes first.** A Session's :class:`Opened` is delivered before anything else about
   it: before its first :class:`Appended` (the ``session/end-seed`` a fork or resume appends) and
   before the plugins' ``dsh_session_opened``.
3. **Appended after admission.** An event is published once it is in the log for good: the
   events of one ``append_all`` are published in ``seq`` order after every one of them was
   validated and appended (a subscriber of the first already sees the whole batch in
   ``session.events``); a refused batch publishes nothing.
4. **Durable before Flushed.** :class:`Flushed` is published only for a flush some listener
   acknowledged with a literal ``True``. The store's
   :class:`~dsh_host.persistence.Durability` recorded the acknowledgement before the first
   subscriber runs (``store.durable_length`` already counts ``through_seq``), and the plugins'
   ``dsh_session_flushed`` runs after the last one.
5. **WakeChanged and BoardChanged after the change.** Published only when a request or post
   changed the standing entry (repeating the standing value publishes nothing), once
   ``store.wakes(session)`` / ``store.posted(session)`` reads the new value. :class:`Notified`
   is published for every accepted notice (the outbox, not the host, drops a repeated key).
6. **Detached after leaving.** Published once the Session left the live set: ``store.is_live``
   is false and appends are refused, while ``store.wakes(session)`` still reads its standing
   entries.
7. **Streamed only while live.** A payload for a Session that is not live in this store is
   dropped before anyone hears of it.
8. **Failures are contained.** An :class:`Exception` raised by a callback is logged (as
   ``session.<kind>_observer_failed``, e.g. ``session.append_observer_failed``); the other
   subscribers are still called and the store's operation goes on as if it had returned.
9. **Deliveries nest.** An observation caused inside a callback (say, the callback appends) is
   delivered to every subscriber before the outer delivery moves on, so a subscriber later in
   the order may hear of it first. Callbacks therefore only record and schedule: none appends,
   detaches or requests a wake itself.
10. **Changes during a delivery.** A callback subscribed during a delivery first hears the next
    publication; one unsubscribed during a delivery is not called again, not even by the
    delivery in progress.

Appends are hot: the store builds an observation only for a kind somebody subscribed to
(``Publisher._wants``), one small object per event then, shared by every subscriber.

This module sits below the Sessions (the persistence coordinator subscribes too), so it names
the live Session type for the type checker only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, overload

import structlog

from dsh_hookspecs import BoardEntry, Event, JSONValue, Notice, Session

log = structlog.get_logger(__name__)

OpenReason = Literal["created", "forked", "resumed"]


@dataclass(frozen=True, slots=True)
class Observation:
    """What every observation carries: the live Session it is about."""

    #: What is logged when a subscriber of this kind raises (rule 8).
    failure_event: ClassVar[str]
    session: Session


@dataclass(frozen=True, slots=True)
class Opened(Observation):
    """``session`` became live in this store (rule 2: before anything else about it)."""

    failure_event: ClassVar[str] = "session.open_observer_failed"
    reason: OpenReason
    #: The events storage held when a resumed Session was loaded; 0 for created and forked.
    stored_length: int


@dataclass(frozen=True, slots=True)
class Appended(Observation):
    """``event`` entered the log of ``session`` (rule 3: after the whole batch was admitted)."""

    failure_event: ClassVar[str] = "session.append_observer_failed"
    event: Event


@dataclass(frozen=True, slots=True)
class Flushed(Observation):
    """A flush captured at ``through_seq`` was acknowledged durable (rule 4)."""

    failure_event: ClassVar[str] = "session.flushed_observer_failed"
    through_seq: int


@dataclass(frozen=True, slots=True)
class WakeChanged(Observation):
    """The standing wake entry of ``plugin`` became ``at_ms`` (``None``: cleared; rule 5)."""

    failure_event: ClassVar[str] = "session.wake_observer_failed"
    plugin: str
    at_ms: int | None


@dataclass(frozen=True, slots=True)
class BoardChanged(Observation):
    """The standing board row ``(plugin, key)`` became ``entry`` (``None``: removed; rule 5)."""

    failure_event: ClassVar[str] = "session.board_observer_failed"
    plugin: str
    key: str
    entry: BoardEntry | None


@dataclass(frozen=True, slots=True)
class Notified(Observation):
    """A plugin filed (or, ``notice`` ``None``, withdrew) the notice ``(plugin, key)``: the
    persistence coordinator writes it to the outbox with the Session's next batch (rule 5)."""

    failure_event: ClassVar[str] = "session.notice_observer_failed"
    plugin: str
    key: str
    notice: Notice | None


@dataclass(frozen=True, slots=True)
class Detached(Observation):
    """``session`` went cold (rule 6: after it left the live set)."""

    failure_event: ClassVar[str] = "session.detach_observer_failed"


@dataclass(frozen=True, slots=True)
class Streamed(Observation):
    """Ephemeral output of a live Session (rule 7), never logged, never replayed."""

    failure_event: ClassVar[str] = "session.stream_observer_failed"
    payload: Mapping[str, JSONValue]


#: Every kind a subscriber may ask for.
KINDS: tuple[type[Observation], ...] = (
    Opened,
    Appended,
    Flushed,
    WakeChanged,
    BoardChanged,
    Notified,
    Detached,
    Streamed,
)

_O1 = TypeVar("_O1", bound=Observation)
_O2 = TypeVar("_O2", bound=Observation)
_O3 = TypeVar("_O3", bound=Observation)
_O4 = TypeVar("_O4", bound=Observation)
_O5 = TypeVar("_O5", bound=Observation)


class Unsubscribe:
    """The one handle :meth:`Publisher.subscribe` returns: calling it ends the subscription.

    Idempotent; from the call on, the callback is not called again (rule 10)."""

    __slots__ = ("_publisher", "active", "callback", "kinds")

    def __init__(
        self,
        publisher: Publisher,
        callback: Callable[[Any], object],
        kinds: tuple[type[Observation], ...],
    ) -> None:
        self._publisher = publisher
        self.callback = callback
        self.kinds = kinds
        self.active = True

    def __call__(self) -> None:
        if self.active:
            self.active = False
            self._publisher._remove(self)  # noqa: SLF001 - the handle and its registry are one unit


class Publisher:
    """The subscribers of a Session store, by kind, and their delivery by the rules above.

    The host's ``LiveSessionStore`` is one: it publishes, everybody else subscribes."""

    __slots__ = ("_by_kind",)

    def __init__(self) -> None:
        #: Kind -> its subscribers in subscription order; replaced, never changed in place, so
        #: a delivery in progress keeps the tuple it started with (rule 10).
        self._by_kind: dict[type[Observation], tuple[Unsubscribe, ...]] = {}

    @overload
    def subscribe(self, callback: Callable[[_O1], object], kinds: type[_O1]) -> Unsubscribe: ...
    @overload
    def subscribe(
        self, callback: Callable[[_O1], object], kinds: tuple[type[_O1]]
    ) -> Unsubscribe: ...
    @overload
    def subscribe(
        self, callback: Callable[[_O1 | _O2], object], kinds: tuple[type[_O1], type[_O2]]
    ) -> Unsubscribe: ...
    @overload
    def subscribe(
        self,
        callback: Callable[[_O1 | _O2 | _O3], object],
        kinds: tuple[type[_O1], type[_O2], type[_O3]],
    ) -> Unsubscribe: ...
    @overload
    def subscribe(
        self,
        callback: Callable[[_O1 | _O2 | _O3 | _O4], object],
        kinds: tuple[type[_O1], type[_O2], type[_O3], type[_O4]],
    ) -> Unsubscribe: ...
    @overload
    def subscribe(
        self,
        callback: Callable[[_O1 | _O2 | _O3 | _O4 | _O5], object],
        kinds: tuple[type[_O1], type[_O2], type[_O3], type[_O4], type[_O5]],
    ) -> Unsubscribe: ...
    @overload
    def subscribe(
        self, callback: Callable[[Observation], object], kinds: tuple[type[Observation], ...]
    ) -> Unsubscribe: ...
    def subscribe(
        self,
        callback: Callable[[Any], object],
        kinds: type[Observation] | tuple[type[Observation], ...],
    ) -> Unsubscribe:
        """Call ``callback(observation)`` for each observation of ``kinds`` from now on.

        ``kinds``: one of :data:`KINDS` or a non-empty tuple of them. Anything else raises
        :class:`TypeError` and subscribes nothing. Returns the one handle that unsubscribes."""
        wanted = kinds if isinstance(kinds, tuple) else (kinds,)
        if not wanted or any(kind not in KINDS for kind in wanted):
            names = ", ".join(kind.__name__ for kind in KINDS)
            raise TypeError(f"kinds must be one or more of {names}, got {kinds!r}")
        if not callable(callback):
            raise TypeError(f"callback must be callable, got {callback!r}")
        handle = Unsubscribe(self, callback, tuple(dict.fromkeys(wanted)))
        for kind in handle.kinds:
            self._by_kind[kind] = (*self._by_kind.get(kind, ()), handle)
        return handle

    def _remove(self, handle: Unsubscribe) -> None:
        for kind in handle.kinds:
            left = tuple(other for other in self._by_kind[kind] if other is not handle)
            if left:
                self._by_kind[kind] = left
            else:
                del self._by_kind[kind]

    def _wants(self, kind: type[Observation]) -> bool:
        """Somebody subscribed to ``kind`` (else the store need not build its observation)."""
        return kind in self._by_kind

    def _publish(self, observation: Observation) -> None:
        """Deliver ``observation`` to the subscribers of its kind (rules 1, 8, 9 and 10)."""
        for handle in self._by_kind.get(type(observation), ()):
            if not handle.active:
                continue  # unsubscribed by an earlier subscriber of this very delivery
            try:
                handle.callback(observation)
            except Exception:
                log.exception(observation.failure_event, session_id=observation.session.id)
