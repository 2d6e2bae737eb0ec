"""The plugin's rows on the host's board, and its notices: every live Session's pending and
delivered reminders, and each delivery sent outside the page.

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
  data ``{"text", "id", "occurrenceAt"}`` plus ``"title"`` (as the reminder read when it was
  delivered; ``occurrenceAt`` the occurrence it delivered), ``"done": true`` once that
  occurrence was acked and ``"snoozedUntil"`` (the snooze reminder's target) once it was
  snoozed; an ack or a snooze posts the occurrence's kept rows again. Only the newest
  :data:`DELIVERED_KEPT` (by seq) per Session stay.

``text`` is the reminder's prompt as the Reminders panel shows it, cut to :data:`TEXT_MAX_CHARS`
characters (the last one then ``"…"``). When a fold is built (the Session was opened, or its log
was taken back) the filer reconciles: it compares what the host holds (:meth:`~dsh_hookspecs.
SessionStore.posted`, what storage held for a resumed Session) with what the fold asks for and
posts the difference. A fork's fold starts at its own events, so a fork posts none of its
parent's reminders. Nothing is ever posted for a Session that is not live. A row whose key would
be longer than :data:`~dsh_hookspecs.BOARD_KEY_MAX_CHARS` (an id no tool makes) is not posted.

Notices (:meth:`~dsh_hookspecs.SessionStore.notify`, plugin ``"schedule"``) are filed while a
dispatch is folded, so they join the storage batch of the dispatch itself (never while
reconciling: those dispatches filed theirs when they were folded). Each delivery files
:func:`delivery_notice` under the key ``"<id>@<occurrenceAt>"``; a reminder with
``renotifyMinutes`` also files up to :data:`RENOTIFY_COUNT` "Still due" notices
(:func:`renotify_notices`, keys ``"<id>@<occurrenceAt>#1"`` and on) unless the occurrence is
already done or snoozed, and an ack or a snooze of the occurrence withdraws them. A notice whose
key would be too long, or would hold a NUL (an id no tool makes), is not filed.
"""

from __future__ import annotations

import datetime as dt
import json
import weakref
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, NamedTuple

import structlog

from dsh_hookspecs import (
    BOARD_KEY_MAX_CHARS,
    NOTICE_BODY_MAX_CHARS,
    NOTICE_DATA_MAX_BYTES,
    NOTICE_TITLE_MAX_CHARS,
    WAKE_MAX_MS,
    WAKE_MIN_MS,
    BoardEntry,
    Event,
    Host,
    JSONValue,
    Notice,
    Session,
    load_time_zone,
)

from ._codec import (
    MAX_TITLE_CHARS,
    Ack,
    AfterRecord,
    AtRecord,
    Create,
    Dispatch,
    EveryRecord,
    Record,
)
from ._fold import Delivery, IncrementalFold, Step, dispatched
from ._instants import parse_instant
from ._record_fields import rule_fields
from ._runtime import PLUGIN_NAME

__all__ = [
    "DELIVERED",
    "DELIVERED_KEPT",
    "PENDING",
    "RENOTIFY_COUNT",
    "TEXT_MAX_CHARS",
    "BoardFiler",
    "Kept",
    "board_text",
    "delivered_entry",
    "delivered_key",
    "delivery_notice",
    "delivery_notices",
    "kept_deliveries",
    "notice_key",
    "pending_entry",
    "renotify_notices",
    "row_changes",
    "wanted_rows",
]

log = structlog.get_logger(__name__)

#: The kind of a reminder that is still to come.
PENDING: Final = "pending"
#: The kind of a delivery.
DELIVERED: Final = "delivered"
#: The longest ``text`` of a row.
TEXT_MAX_CHARS: Final = 200
#: How many delivered rows a Session keeps (the newest).
DELIVERED_KEPT: Final = 20
#: How many "Still due" notices a delivery of a reminder with ``renotifyMinutes`` files.
RENOTIFY_COUNT: Final = 3
#: The title prefix of a reminder without a title, and of a re-notification.
REMINDER_PREFIX: Final = "Reminder: "
STILL_DUE_PREFIX: Final = "Still due: "
#: The snooze a notification's "Snooze" action asks for, in minutes.
SNOOZE_ACTION_MINUTES: Final = 10


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut with "…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def board_text(prompt: str) -> str:
    """``prompt`` as a row shows it: at most :data:`TEXT_MAX_CHARS` characters, cut with "…"."""
    return _cut(prompt, TEXT_MAX_CHARS)


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


def delivered_entry(
    record: Record, event: Event, occurrence_at: str, delivery: Delivery | None = None
) -> BoardEntry:
    """The ``delivered`` row of ``record``'s dispatch ``event``, which delivered
    ``occurrence_at``; ``delivery`` is that occurrence's state (done, snoozed)."""
    at_ms = min(max(event.time, WAKE_MIN_MS), WAKE_MAX_MS)
    data = _text(record)
    data["id"] = record.id
    data["occurrenceAt"] = occurrence_at
    if delivery is not None:
        if delivery.done:
            data["done"] = True
        if delivery.until is not None:
            data["snoozedUntil"] = delivery.until
    return BoardEntry(kind=DELIVERED, at_ms=at_ms, data=data)


class Kept(NamedTuple):
    """A delivered row: its key, and what it is built from."""

    key: str
    record: Record
    event: Event
    occurrence_at: str

    def entry(self, folded: IncrementalFold) -> BoardEntry:
        delivery = folded.delivery(self.record.id, self.occurrence_at)
        return delivered_entry(self.record, self.event, self.occurrence_at, delivery)


def kept_deliveries(steps: Iterable[Step]) -> list[Kept]:
    """The delivered rows of the dispatches among ``steps`` (oldest first), the newest
    :data:`DELIVERED_KEPT` of them with a postable key."""
    rows: deque[Kept] = deque(maxlen=DELIVERED_KEPT)
    for event, change, record in steps:
        if isinstance(change, Dispatch):
            key = delivered_key(record.id, event.seq)
            if len(key) <= BOARD_KEY_MAX_CHARS:
                rows.append(Kept(key, record, event, dispatched(record, change)[0]))
    return list(rows)


# ---------------------------------------------------------------------------------------------
# Notices


def notice_key(schedule_id: str, occurrence_at: str, renotify: int = 0) -> str | None:
    """The notice key of the delivery of ``occurrence_at`` by ``schedule_id`` (``renotify``
    ``k`` > 0: its ``k``-th re-notification), or ``None`` when the host would refuse it (too
    long, or a NUL in the id)."""
    key = f"{schedule_id}@{occurrence_at}" + (f"#{renotify}" if renotify else "")
    return key if len(key) <= BOARD_KEY_MAX_CHARS and "\x00" not in key else None


def _plain(text: str) -> str:
    """``text`` without NUL characters (no channel can carry them)."""
    return text.replace("\x00", "\ufffd")


def _title(record: Record) -> str:
    if record.title is not None:
        return _plain(record.title)
    first_line = record.prompt.splitlines()[0]
    return _plain(_cut(REMINDER_PREFIX + first_line, MAX_TITLE_CHARS))


def due_text(record: Record, occurrence_at: str) -> str:
    """When ``occurrence_at`` was due, as a person reads it: in the reminder's own time zone
    when it has one (a calendar reminder), else in UTC, e.g. ``"Wed 5 Aug 2026, 12:01 UTC"``."""
    zone_name = getattr(record, "time_zone", None)
    zone = dt.UTC if zone_name is None else load_time_zone(zone_name)
    local = dt.datetime.fromtimestamp(parse_instant(occurrence_at) / 1000, zone)
    where = "UTC" if zone_name is None else f"({zone_name})"
    return f"{local:%a} {local.day} {local:%b %Y, %H:%M} {where}"


def _body(record: Record, occurrence_at: str) -> str:
    """The prompt, cut to leave room for the line saying when it was due."""
    due = f"\n\nDue {due_text(record, occurrence_at)}"
    return _cut(record.prompt, NOTICE_BODY_MAX_CHARS - len(due)) + due


#: The compact encoders a notice's data is measured and its actions written with (made once: a
#: ``json.dumps`` with options builds an encoder per call).
_MEASURE = json.JSONEncoder(separators=(",", ":"))
_ACTIONS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _bytes(data: dict[str, str]) -> int:
    return len(_MEASURE.encode(data))  # ASCII (escaped): one byte per character


def _actions(schedule_id: str, occurrence_at: str) -> str:
    """The notification's actions (Web Push shows them as buttons that work without opening the
    page): Done and Snooze 10 min, each the user action that runs the tool, as a JSON list."""
    occurrence = {"id": schedule_id, "occurrence_at": occurrence_at}
    actions = [
        {"action": "done", "title": "Done", "tool": "schedule_ack", "arguments": occurrence},
        {
            "action": "snooze",
            "title": "Snooze 10 min",
            "tool": "schedule_snooze",
            "arguments": {**occurrence, "minutes": SNOOZE_ACTION_MINUTES},
        },
    ]
    return _ACTIONS.encode(actions)


def delivery_notice(
    session_id: str, record: Record, occurrence_at: str, expires_ms: int | None
) -> Notice | None:
    """The notice of ``record``'s delivery of ``occurrence_at``: its title (or "Reminder: " and
    the prompt's first line, cut to 120 characters), the prompt as the body (cut to
    :data:`~dsh_hookspecs.NOTICE_BODY_MAX_CHARS`), about the occurrence, given up at
    ``expires_ms`` (the reminder's next due instant); ``None`` when its data would be too large
    for the host (an id no tool makes)."""
    data = {"sessionId": session_id, "scheduleId": record.id, "occurrenceAt": occurrence_at}
    with_actions = {**data, "actions": _actions(record.id, occurrence_at)}
    if _bytes(with_actions) <= NOTICE_DATA_MAX_BYTES:
        data = with_actions  # (it holds data: data fits too)
    elif _bytes(data) > NOTICE_DATA_MAX_BYTES:
        return None
    return Notice(
        title=_title(record),
        body=_plain(_body(record, occurrence_at)),
        at_ms=parse_instant(occurrence_at),
        expires_ms=expires_ms,
        data=data,
    )


def renotify_notices(notice: Notice, minutes: int, delivered_ms: int) -> list[Notice]:
    """The "Still due" re-notifications of ``notice`` every ``minutes``: the ``k``-th not
    before ``k * minutes`` after the occurrence (after the delivery, when that was later: a
    late delivery does not send them all at once), those before the notice expires."""
    start = max(notice.at_ms, delivered_ms)
    title = _cut(STILL_DUE_PREFIX + notice.title, NOTICE_TITLE_MAX_CHARS)
    notices: list[Notice] = []
    for k in range(1, RENOTIFY_COUNT + 1):
        not_before = start + k * minutes * 60_000
        if not_before > WAKE_MAX_MS or (
            notice.expires_ms is not None and not_before >= notice.expires_ms
        ):
            break
        notices.append(
            Notice(
                title=title,
                body=notice.body,
                at_ms=notice.at_ms,
                not_before_ms=not_before,
                expires_ms=notice.expires_ms,
                data=notice.data,
            )
        )
    return notices


def delivery_notices(
    session_id: str, folded: IncrementalFold, event: Event, change: Dispatch, record: Record
) -> list[tuple[str, Notice]]:
    """The notices (key, notice) the delivery by ``change`` (the dispatch ``event``, folded into
    ``folded``; ``record``: as it delivered) files: its :func:`delivery_notice` and, with
    ``renotifyMinutes`` and unless the occurrence is already done or snoozed, its "Still due"
    re-notifications. A key the host would refuse files nothing."""
    occurrence_at, successor = dispatched(record, change)
    key = notice_key(record.id, occurrence_at)
    if key is None:
        return []
    expires_ms = None if successor is None else parse_instant(successor.scheduled_at)
    notice = delivery_notice(session_id, record, occurrence_at, expires_ms)
    if notice is None:
        return []
    filed = [(key, notice)]
    delivery = folded.delivery(record.id, occurrence_at)
    assert delivery is not None  # the fold keeps every delivery
    minutes = record.renotify_minutes
    if minutes is None or delivery.done or delivery.snooze is not None:
        return filed
    for k, again in enumerate(renotify_notices(notice, minutes, event.time), start=1):
        again_key = notice_key(record.id, occurrence_at, k)
        if again_key is not None:
            filed.append((again_key, again))
    return filed


def wanted_rows(folded: IncrementalFold, deliveries: Sequence[Kept]) -> dict[str, BoardEntry]:
    """The rows a whole fold asks for: a pending row per active record, and the delivered rows
    of ``deliveries`` (:func:`_deliveries` of its whole owned stream)."""
    wanted = {
        record.id: pending_entry(record)
        for record in folded.active
        if len(record.id) <= BOARD_KEY_MAX_CHARS
    }
    wanted.update((kept.key, kept.entry(folded)) for kept in deliveries)
    return wanted


def row_changes(
    standing: Mapping[str, BoardEntry], wanted: Mapping[str, BoardEntry]
) -> dict[str, BoardEntry | None]:
    """The posts that turn the ``standing`` rows (by key) into the ``wanted`` ones: a removal
    for each stale key, then each wanted row that differs."""
    changes: dict[str, BoardEntry | None] = dict.fromkeys(
        (key for key in standing if key not in wanted), None
    )
    changes.update((key, entry) for key, entry in wanted.items() if standing.get(key) != entry)
    return changes


class BoardFiler:
    """Keeps this plugin's board rows (and notices) of every live Session in step with its
    fold (a :class:`~._fold.FoldWatcher`)."""

    __slots__ = ("_delivered", "host")

    def __init__(self, host: Host) -> None:
        self.host = host
        #: The delivered rows posted for each Session, oldest first (at most DELIVERED_KEPT).
        self._delivered: weakref.WeakKeyDictionary[Session, deque[Kept]] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(
        self, session: Session, folded: IncrementalFold, steps: Sequence[Step], fresh: bool
    ) -> None:
        if fresh:
            self._reconcile(session, folded, steps)
        elif self._live(session):
            self._advance(session, folded, steps)

    def corrupt(self, session: Session) -> None:
        """The owned stream of ``session`` is corrupt: it delivers nothing, so every row of
        this plugin for it goes."""
        self._reconcile(session, None, ())

    def _live(self, session: Session) -> bool:
        return self.host.sessions.get(session.id) is session

    def _reconcile(
        self, session: Session, folded: IncrementalFold | None, steps: Iterable[Step]
    ) -> None:
        """Post the difference between the standing rows and what the whole fold asks for
        (``folded``: the fold, ``None`` for a corrupt one; ``steps``: its whole owned
        stream)."""
        if not self._live(session):
            return
        wanted: dict[str, BoardEntry] = {}
        if folded is not None:
            deliveries = kept_deliveries(steps)
            wanted = wanted_rows(folded, deliveries)
            if deliveries:
                self._delivered[session] = deque(deliveries)
            else:  # most Sessions: no queue held for them (an idle owner stays small)
                self._delivered.pop(session, None)
        else:
            self._delivered.pop(session, None)
        sessions = self.host.sessions
        posted = {
            key: entry
            for (plugin, key), entry in sessions.posted(session).items()
            if plugin == PLUGIN_NAME
        }
        for key, entry in row_changes(posted, wanted).items():
            sessions.post(session, PLUGIN_NAME, key, entry)

    def _advance(self, session: Session, folded: IncrementalFold, steps: Sequence[Step]) -> None:
        """Post what ``steps`` (just folded) changed: the pending rows of the ids they touched,
        their deliveries (dropping the oldest beyond :data:`DELIVERED_KEPT`) and the kept rows
        of the occurrences they acked or snoozed; file the deliveries' notices and withdraw
        the re-notifications of what was acked or snoozed."""
        sessions = self.host.sessions
        touched = dict.fromkeys(
            record.id for _, change, record in steps if not isinstance(change, Ack)
        )
        for schedule_id in touched:
            if len(schedule_id) > BOARD_KEY_MAX_CHARS:
                continue
            record = folded.get(schedule_id)
            # Each step changed its id's row (a standing equal row would be no write anyway).
            sessions.post(
                session, PLUGIN_NAME, schedule_id, None if record is None else pending_entry(record)
            )
        settled: set[tuple[str, str]] = set()
        for event, change, record in steps:
            if isinstance(change, Dispatch):
                self._notify_delivery(session, folded, event, change, record)
            elif isinstance(change, Ack):
                settled.add(self._settled(session, folded, change.id, change.occurrence_at))
            elif isinstance(change, Create) and isinstance(record, AtRecord):
                snoozed = record.snoozed_from
                if snoozed is not None:
                    settled.add(self._settled(session, folded, snoozed.id, snoozed.occurrence_at))
        kept = self._delivered.get(session)
        if settled and kept is not None:
            for row in kept:
                if (row.record.id, row.occurrence_at) in settled:
                    sessions.post(session, PLUGIN_NAME, row.key, row.entry(folded))
        deliveries = kept_deliveries(steps)
        if not deliveries:
            return
        kept = self._delivered.setdefault(session, deque())
        for _ in range(len(kept) + len(deliveries) - DELIVERED_KEPT):
            sessions.post(session, PLUGIN_NAME, kept.popleft().key, None)
        for row in deliveries:
            sessions.post(session, PLUGIN_NAME, row.key, row.entry(folded))
            kept.append(row)

    def _settled(
        self, session: Session, folded: IncrementalFold, schedule_id: str, occurrence_at: str
    ) -> tuple[str, str]:
        """The occurrence was acked or snoozed: withdraw its re-notifications."""
        delivery = folded.delivery(schedule_id, occurrence_at)
        assert delivery is not None  # the fold accepted the ack or snooze
        if delivery.record.renotify_minutes is not None:
            for k in range(1, RENOTIFY_COUNT + 1):
                key = notice_key(schedule_id, occurrence_at, k)
                if key is not None:
                    self._notify(session, key, None)
        return schedule_id, occurrence_at

    def _notify_delivery(
        self,
        session: Session,
        folded: IncrementalFold,
        event: Event,
        change: Dispatch,
        record: Record,
    ) -> None:
        """File the notices of the delivery by ``change`` (``record``: as it delivered)."""
        for key, notice in delivery_notices(session.id, folded, event, change, record):
            self._notify(session, key, notice)

    def _notify(self, session: Session, key: str, notice: Notice | None) -> None:
        """File (or withdraw) one notice; a refusal is logged, never raised: the delivery it
        is about has happened and must stand."""
        try:
            self.host.sessions.notify(session, PLUGIN_NAME, key, notice)
        except ValueError as exc:
            log.warning("board.notice_refused", session_id=session.id, key=key, error=str(exc))
