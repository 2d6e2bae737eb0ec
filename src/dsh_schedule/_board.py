"""The plugin's rows on the host's board: every live Session's pending and delivered reminders.

The board (:meth:`~dsh_hookspecs.SessionStore.post`) is the host's durable projection across
Sessions: it answers "every pending reminder, soonest first" and "what fired while you were
away" without loading a cold log. :class:`BoardFiler` keeps this plugin's rows of each live
Session in step with its fold; the fold cache tells it each time the active records move, with
the steps that moved them, so a change costs what it touched (never a walk of the whole log or
of every active record). Rows (plugin ``"schedule"``):

* kind ``"pending"``, key the reminder id, ``at_ms`` its next due instant, data
  ``{"text": ...}`` plus ``"title"`` when the reminder has one, ``"everySeconds"`` for a
  fixed-rate reminder and ``"rule"`` for a calendar one (``{"kind": "daily", "time",
  "timeZone"}``, ``{"kind": "weekly", "time", "timeZone", "weekdays"}`` or ``{"kind": "cron",
  "expression", "timeZone"}``, the record's own fields); a repeating reminder's row moves to its
  next due instant after each delivery, and an edited one's follows the edit;
* kind ``"delivered"``, key ``"<id>@<seq of the dispatch event>"``, ``at_ms`` that event's time,
  data ``{"text": ...}`` plus ``"title"`` (as the reminder read when it was delivered); only the
  newest :data:`DELIVERED_KEPT` (by seq) per Session stay.

``text`` is the reminder's prompt as the Reminders panel shows it, cut to :data:`TEXT_MAX_CHARS`
characters (the last one then ``"…"``). When a fold is built (the Session was opened, or its log
was taken back) the filer reconciles: it compares what the host holds (:meth:`~dsh_hookspecs.
SessionStore.posted`, what storage held for a resumed Session) with what the fold asks for and
posts the difference. A fork's fold starts at its own events, so a fork posts none of its
parent's reminders. Nothing is ever posted for a Session that is not live. A row whose key would
be longer than :data:`~dsh_hookspecs.BOARD_KEY_MAX_CHARS` (an id no tool makes) is not posted.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Final

from dsh_hookspecs import (
    BOARD_KEY_MAX_CHARS,
    WAKE_MAX_MS,
    WAKE_MIN_MS,
    BoardEntry,
    Event,
    Host,
    JSONValue,
    Session,
)

from ._answers import rule_fields
from ._codec import AfterRecord, AtRecord, Dispatch, EveryRecord, Record
from ._fold import IncrementalFold, Step
from ._instants import parse_instant
from ._runtime import PLUGIN_NAME

__all__ = [
    "DELIVERED",
    "DELIVERED_KEPT",
    "PENDING",
    "TEXT_MAX_CHARS",
    "BoardFiler",
    "board_text",
    "delivered_entry",
    "delivered_key",
    "pending_entry",
]

#: The kind of a reminder that is still to come.
PENDING: Final = "pending"
#: The kind of a delivery.
DELIVERED: Final = "delivered"
#: The longest ``text`` of a row.
TEXT_MAX_CHARS: Final = 200
#: How many delivered rows a Session keeps (the newest).
DELIVERED_KEPT: Final = 20


def board_text(prompt: str) -> str:
    """``prompt`` as a row shows it: at most :data:`TEXT_MAX_CHARS` characters, cut with "…"."""
    if len(prompt) <= TEXT_MAX_CHARS:
        return prompt
    return prompt[: TEXT_MAX_CHARS - 1] + "…"


def _text(record: Record) -> dict[str, JSONValue]:
    data: dict[str, JSONValue] = {"text": board_text(record.prompt)}
    if record.title is not None:
        data["title"] = record.title
    return data


def pending_entry(record: Record) -> BoardEntry:
    """The ``pending`` row of the active ``record``."""
    data = _text(record)
    if isinstance(record, EveryRecord):
        data["everySeconds"] = record.every_seconds
    elif not isinstance(record, AfterRecord | AtRecord):
        data["rule"] = {"kind": record.kind, **rule_fields(record)}
    return BoardEntry(kind=PENDING, at_ms=parse_instant(record.scheduled_at), data=data)


def delivered_key(schedule_id: str, seq: int) -> str:
    """The key of the delivery of ``schedule_id`` by the dispatch event at ``seq``."""
    return f"{schedule_id}@{seq}"


def delivered_entry(record: Record, event: Event) -> BoardEntry:
    """The ``delivered`` row of ``record``'s dispatch ``event``."""
    at_ms = min(max(event.time, WAKE_MIN_MS), WAKE_MAX_MS)
    return BoardEntry(kind=DELIVERED, at_ms=at_ms, data=_text(record))


def _deliveries(steps: Iterable[Step]) -> list[tuple[str, BoardEntry]]:
    """The delivered rows of the dispatches among ``steps`` (oldest first), the newest
    :data:`DELIVERED_KEPT` of them with a postable key."""
    rows: deque[tuple[str, BoardEntry]] = deque(maxlen=DELIVERED_KEPT)
    for event, change, record in steps:
        if isinstance(change, Dispatch):
            key = delivered_key(record.id, event.seq)
            if len(key) <= BOARD_KEY_MAX_CHARS:
                rows.append((key, delivered_entry(record, event)))
    return list(rows)


class BoardFiler:
    """Keeps this plugin's board rows of every live Session in step with its fold (a
    :class:`~._fold.FoldWatcher`)."""

    __slots__ = ("_delivered", "host")

    def __init__(self, host: Host) -> None:
        self.host = host
        #: The delivered keys posted for each Session, oldest first (at most DELIVERED_KEPT).
        self._delivered: weakref.WeakKeyDictionary[Session, deque[str]] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(
        self, session: Session, folded: IncrementalFold, steps: Sequence[Step], fresh: bool
    ) -> None:
        if fresh:
            self._reconcile(session, folded.active, steps)
        elif self._live(session):
            self._advance(session, folded, steps)

    def corrupt(self, session: Session) -> None:
        """The owned stream of ``session`` is corrupt: it delivers nothing, so every row of
        this plugin for it goes."""
        self._reconcile(session, (), ())

    def _live(self, session: Session) -> bool:
        return self.host.sessions.get(session.id) is session

    def _reconcile(self, session: Session, active: Iterable[Record], steps: Iterable[Step]) -> None:
        """Post the difference between the standing rows and what the whole fold asks for
        (``active``: its active records; ``steps``: its whole owned stream)."""
        if not self._live(session):
            return
        wanted: dict[str, BoardEntry] = {
            record.id: pending_entry(record)
            for record in active
            if len(record.id) <= BOARD_KEY_MAX_CHARS
        }
        deliveries = _deliveries(steps)
        wanted.update(deliveries)
        if deliveries:
            self._delivered[session] = deque(key for key, _ in deliveries)
        else:  # most Sessions: no queue held for them (an idle owner stays small)
            self._delivered.pop(session, None)
        self._settle(session, wanted)

    def _settle(self, session: Session, wanted: dict[str, BoardEntry]) -> None:
        sessions = self.host.sessions
        posted = sessions.posted(session)
        stale = [key for plugin, key in posted if plugin == PLUGIN_NAME and key not in wanted]
        for key in stale:
            sessions.post(session, PLUGIN_NAME, key, None)
        for key, entry in wanted.items():
            if posted.get((PLUGIN_NAME, key)) != entry:
                sessions.post(session, PLUGIN_NAME, key, entry)

    def _advance(self, session: Session, folded: IncrementalFold, steps: Sequence[Step]) -> None:
        """Post what ``steps`` (just folded) changed: the pending rows of the ids they touched,
        and their deliveries (dropping the oldest beyond :data:`DELIVERED_KEPT`)."""
        sessions = self.host.sessions
        for schedule_id in dict.fromkeys(record.id for _, _, record in steps):
            if len(schedule_id) > BOARD_KEY_MAX_CHARS:
                continue
            record = folded.get(schedule_id)
            # Each step changed its id's row (a standing equal row would be no write anyway).
            sessions.post(
                session, PLUGIN_NAME, schedule_id, None if record is None else pending_entry(record)
            )
        deliveries = _deliveries(steps)
        if not deliveries:
            return
        kept = self._delivered.setdefault(session, deque())
        for _ in range(len(kept) + len(deliveries) - DELIVERED_KEPT):
            sessions.post(session, PLUGIN_NAME, kept.popleft(), None)
        for key, entry in deliveries:
            sessions.post(session, PLUGIN_NAME, key, entry)
            kept.append(key)
