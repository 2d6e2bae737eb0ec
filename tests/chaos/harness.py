"""The crash matrix: real ``dsh serve`` processes, a reminder workload, SIGKILLs, restarts.

One *lane* is one data folder driven through many boots of ``dsh serve`` (the Schedule overlay
plus the test-only chaos plugin of :mod:`tests.chaos.plugin`). Each boot:

1. starts the server on the lane's folder and reads the SQLite file read-only *before* any
   Session is resumed: that is exactly what the previous boot left on disk (post-crash check);
2. opens one event stream per Session, resumes every Session, waits (bounded) until everything
   that is due is dispatched and every durable, unconsumed follow-up has started its turn, and
   checks again, history views included (settled check);
3. runs the workload (creates of 1-3 s and longer reminders, deletes, lists, over HTTP through
   the scripted model's ``/tool NAME {json}``) on all Sessions at once, and dies: either at an
   armed kill point reached inside the server (the plugin SIGKILLs its own process) or by an
   external SIGKILL at a random moment (half of those delayed to the next instant the server's
   SQLite writer is inside a write batch, read from the control block). A point may be armed
   before the resumes, so that it lands in the due path of an overdue reminder being delivered
   on resume.

After the last kill a final boot resumes everything, waits until no reminder is left active and
every reminder turn has started, and checks the strong, end-state invariants.

What is checked (violations are collected by category; the test asserts there are none):

* corrupted: every stored log decodes and folds (``dsh_schedule.fold``); each Schedule
  ``agent/followup`` is immediately followed by its dispatch and each dispatch immediately
  preceded by its follow-up (same schedule id);
* lost: the stored prefix never changes between checks; every create whose ``tool/result`` was
  seen as a success view is on disk, identical, and finally ends as exactly one dispatch or one
  delete; a receipt (``{"for": "event"}`` view frame on a stream, or a history view) is shown
  only for a dispatch that is on disk; due reminders are dispatched after a restart; every
  dispatched reminder's turn starts;
* duplicated: at most one follow-up per schedule id, at most one ``turn/start`` per follow-up,
  at most one dispatch or delete per create;
* other: a 5xx answer, an error logged by the server, a server that does not stop cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from dsh_hookspecs import Event, SessionHeader
from dsh_host import _json, _records
from dsh_schedule import (
    IncrementalFold,
    ScheduleLogError,
    fold,
    parse_instant,
    parse_reminder_framing,
)
from tests.procs import LISTENING, DshProcess

from .control import (
    BATCH_LEN,
    COMMITS,
    DUE_OPEN,
    EARLY_TURNS,
    FIRED,
    FLUSHES,
    GROUP_COMMITS,
    IN_TXN,
    POINTS,
    STALLED,
    Control,
)

SCHEDULE_SOURCE = {"kind": "plugin", "plugin": "schedule"}
SESSIONS = 20
#: Points that need a reminder falling due; they may be armed before the resumes.
DUE_POINTS = (
    "followup-append",
    "dispatch-append",
    "dispatch-committed",
    "reminder-turn-start",
    "reminder-turn-committed",
    "dispatch-stalled",
    "reminder-turn-stalled",
)
#: How long a stall point holds its write batch before the kill: far longer than the stream
#: needs to show a frame, so whatever the server shows before the batch is durable is seen.
STALL_MS = 300
#: Per-request timeout of the resumes, flushes and history reads after a restart. A killed
#: server fails them at once (the connection drops), so this bounds only a slow answer: twenty
#: Sessions resumed together on a loaded machine can take longer than the client's 10 s, and
#: a slow answer is not a death.
SLOW_ANSWER_S = 60.0
#: Which hit of each point kills (drawn uniformly from 1..N).
HIT_RANGE = {
    "create-append": 40,
    "create-committed": 40,
    "delete-committed": 6,
    "followup-append": 6,
    "dispatch-append": 6,
    "dispatch-committed": 6,
    "reminder-turn-start": 6,
    "reminder-turn-committed": 6,
    "txn-mid": 20,
    "txn-committed": 80,
    "flushed-n": 300,
    "dispatch-stalled": 3,
    "reminder-turn-stalled": 3,
}
EXTERNAL = "external"
#: An external SIGKILL at a random moment, delayed to the next instant the server's SQLite
#: writer is inside a write batch (a group commit when possible): it lands inside a commit.
EXTERNAL_TXN = "external, timed into a write batch"
CATEGORIES = ("lost", "duplicated", "corrupted", "other")


def install_plugin(folder: Path) -> Path:
    """A ``*.dist-info`` publishing the chaos plugin as entry point ``chaos``."""
    info = folder / "dshchaos-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dshchaos\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[dsh.plugins]\nchaos = tests.chaos.plugin:ChaosPlugin\n"
    )
    return folder


def write_overlay(path: Path, control: Path) -> Path:
    # The chaos plugin is loaded first, so its hooks run last (after Schedule validated).
    path.write_text(
        f"[plugins.chaos]\ncontrol = {json.dumps(str(control))}\n\n"
        "[plugins.schedule]\n\n[plugins.ui-schedule]\n"
    )
    return path


# -- the stored logs ----------------------------------------------------------------------------


#: What a `dsh serve` stopped by a signal prints as plain words (docs/design.md section 10).
STOPPED_LINE = re.compile(r"stopped(; .+)?")


class StoreError(Exception):
    """The SQLite file could not be read or holds something that is not a valid log."""


@dataclass
class StoredLog:
    header: SessionHeader
    rows: list[tuple[str, int, str]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    fold: IncrementalFold | None = None


def read_rows(data: Path) -> dict[str, tuple[str, int, list[tuple[str, int, str]]]]:
    """``{session id: (header text, recorded length, [(type, time, data text)])}``, read
    through a read-only connection in one snapshot (safe beside the running server)."""
    path = (data / "dsh.sqlite3").absolute()
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("BEGIN")
        sessions = conn.execute("SELECT id, header, length FROM sessions").fetchall()
        rows = conn.execute(
            "SELECT session_id, seq, type, time, data FROM events ORDER BY session_id, seq"
        ).fetchall()
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()
    out: dict[str, tuple[str, int, list[tuple[str, int, str]]]] = {
        sid: (header, length, []) for sid, header, length in sessions
    }
    for sid, seq, etype, etime, text in rows:
        if sid not in out:
            raise StoreError(f"event of unknown session {sid!r}")
        events = out[sid][2]
        if seq != len(events):
            raise StoreError(f"session {sid}: seq {seq} where {len(events)} belongs")
        events.append((etype, etime, text))
    for sid, (_, length, events) in out.items():
        if length != len(events):
            raise StoreError(f"session {sid}: length {length} but {len(events)} events")
    return out


@dataclass
class Analysis:
    """What one stored log says about its reminders."""

    creates: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    terminals: defaultdict[str, list[tuple[int, str]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: messageId -> (seq, schedule id)
    followups: dict[str, tuple[int, str]] = field(default_factory=dict)
    followups_by_id: defaultdict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    turn_starts: defaultdict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    #: reminder messageIds whose turn started but never ended before the next boot, or was
    #: closed ``interrupted`` on resume
    interrupted: set[str] = field(default_factory=set)
    #: messageIds (any turn) whose turn has a ``turn/end``
    ended: set[str] = field(default_factory=set)
    #: every ``turn/end`` with error ``interrupted`` (a turn a kill cut off, closed on resume)
    interrupted_closures: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)

    def dispatched(self) -> list[str]:
        return [
            sid for sid, ends in self.terminals.items() if any(op == "dispatch" for _, op in ends)
        ]


def analyse(events: Sequence[Event], owned_from: int) -> Analysis:
    out = Analysis()
    open_turn: str | None = None
    for index in range(owned_from, len(events)):
        event = events[index]
        data = event.data
        etype = event.type
        if etype == "agent/followup" and isinstance(data, dict):
            if data.get("source") != SCHEDULE_SOURCE:
                continue
            framing = parse_reminder_framing(str(data.get("text")))
            message_id = data.get("messageId")
            if framing is None or not isinstance(message_id, str):
                out.problems.append(("corrupted", f"seq {index}: unreadable reminder follow-up"))
                continue
            schedule_id = framing[0]
            out.followups[message_id] = (index, schedule_id)
            out.followups_by_id[schedule_id].append(message_id)
            after = events[index + 1] if index + 1 < len(events) else None
            if not _is_dispatch(after, schedule_id):
                out.problems.append(
                    ("corrupted", f"seq {index}: follow-up of {schedule_id} without its dispatch")
                )
        elif etype == "schedule/change" and isinstance(data, dict):
            operation = data.get("operation")
            if operation == "create":
                record = data.get("schedule")
                if isinstance(record, dict):
                    out.creates[str(record.get("id"))] = (index, record)
            elif operation in ("delete", "dispatch"):
                schedule_id = str(data.get("id"))
                out.terminals[schedule_id].append((index, str(operation)))
                if operation == "dispatch":
                    before = events[index - 1] if index > 0 else None
                    if not _is_followup(before, schedule_id):
                        out.problems.append(
                            (
                                "corrupted",
                                f"seq {index}: dispatch of {schedule_id} without follow-up",
                            )
                        )
        elif etype == "turn/start" and isinstance(data, dict):
            if open_turn is not None:
                out.interrupted.add(open_turn)
            message_id = data.get("messageId")
            open_turn = message_id if isinstance(message_id, str) else None
            if isinstance(message_id, str):
                out.turn_starts[message_id].append(index)
        elif etype == "turn/end":
            if open_turn is not None:
                out.ended.add(open_turn)
                if isinstance(data, dict) and data.get("error") == "interrupted":
                    out.interrupted.add(open_turn)
            if isinstance(data, dict) and data.get("error") == "interrupted":
                out.interrupted_closures += 1
            open_turn = None
        elif etype == "session/end-seed" and open_turn is not None:
            # A restart cut the open turn off; its closure (turn/end) may follow on resume.
            out.interrupted.add(open_turn)
    out.interrupted &= out.followups.keys()
    for schedule_id, message_ids in out.followups_by_id.items():
        if len(message_ids) > 1:
            out.problems.append(("duplicated", f"{schedule_id}: {len(message_ids)} follow-ups"))
    for message_id, seqs in out.turn_starts.items():
        if message_id in out.followups and len(seqs) > 1:
            out.problems.append(("duplicated", f"follow-up {message_id}: turns at {seqs}"))
    for schedule_id, ends in out.terminals.items():
        if len(ends) > 1:
            out.problems.append(("duplicated", f"{schedule_id}: ended {len(ends)} times {ends}"))
        if schedule_id not in out.creates:
            out.problems.append(("corrupted", f"{schedule_id}: ended without a create"))
    return out


def _is_dispatch(event: Event | None, schedule_id: str) -> bool:
    return (
        event is not None
        and event.type == "schedule/change"
        and isinstance(event.data, dict)
        and event.data.get("operation") == "dispatch"
        and event.data.get("id") == schedule_id
    )


def _is_followup(event: Event | None, schedule_id: str) -> bool:
    if event is None or event.type != "agent/followup" or not isinstance(event.data, dict):
        return False
    if event.data.get("source") != SCHEDULE_SOURCE:
        return False
    framing = parse_reminder_framing(str(event.data.get("text")))
    return framing is not None and framing[0] == schedule_id


# -- what the client saw --------------------------------------------------------------------------


@dataclass(frozen=True)
class Receipt:
    boot: int
    session_id: str
    event: dict[str, Any]
    view: dict[str, Any]
    source: str  # "stream" or "history"


@dataclass(frozen=True)
class Success:
    boot: int
    session_id: str
    schedule_id: str
    value: dict[str, Any]


@dataclass
class Plan:
    point: str
    at: int
    early: bool


def identity(event: dict[str, Any]) -> str:
    """One occurrence of an event as a user sees it: the same stored event shown again (a
    replay, a history page, a late view) is the same occurrence; an event at the same seq with
    another time or data (the log after a crash went another way) is another one."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"))


@dataclass
class ReminderShown:
    """What the browser showed of one reminder (one schedule id of one Session)."""

    #: messageIds of the follow-ups whose reminder turn was shown
    followups: set[str] = field(default_factory=set)
    #: distinct ``turn/start`` occurrences (a turn re-started after a kill is a second one)
    turns: set[str] = field(default_factory=set)
    #: distinct ``assistant/message`` occurrences inside those turns
    replies: set[str] = field(default_factory=set)
    #: distinct dispatch events shown as a card (a ``{"for": "event"}`` view)
    cards: set[str] = field(default_factory=set)


class BrowserView:
    """Every frame the browser tabs of a lane showed, one tab per Session, across every boot.

    A tab behaves as ``static/sse.js`` and ``static/app.js``: it keeps the largest event id it
    saw and sends it as ``Last-Event-ID`` when it reconnects after a restart, and on every
    (re)connect it re-reads the history (a resync), since frames may have been missed. Its
    *timeline* is the log as the tab holds it now (an event arriving at a seq it holds with other
    content replaces the tail from there: the log after a crash went another way); it tells which
    turn an ``assistant/message`` belongs to. What was shown is kept for good: a frame seen
    before a kill counts even when storage lost it.
    """

    def __init__(self) -> None:
        self.last_ids: dict[str, int] = {}
        self.timelines: defaultdict[str, list[dict[str, Any] | None]] = defaultdict(list)
        #: (session id, messageId) -> schedule id, from every Schedule follow-up shown
        self.reminder_of: dict[tuple[str, str], str] = {}
        #: (session id, messageId) -> turn/start occurrences, in the order first shown
        self.turns: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
        #: turn/start occurrence -> (session id, messageId)
        self.turn_of: dict[str, tuple[str, str]] = {}
        #: turn/start occurrence -> the assistant/message occurrences shown inside that turn
        self.replies: defaultdict[str, set[str]] = defaultdict(set)
        #: (session id, schedule id) -> dispatch occurrences shown as a card
        self.cards: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        self.seen: set[str] = set()
        self.figures: Counter[str] = Counter()

    # -- input ----------------------------------------------------------------------------------
    def frame(self, sid: str, frame_id: str | None, frame: dict[str, Any]) -> None:
        """One frame of the event stream of ``sid`` (raw or late view)."""
        self.figures["frames shown"] += 1
        if frame_id is not None and frame_id.isdigit():
            self.last_ids[sid] = max(self.last_ids.get(sid, -1), int(frame_id))
        self.entry(sid, frame["event"], frame.get("view"))

    def history(self, sid: str, entries: Sequence[dict[str, Any]]) -> None:
        """One history read of ``sid`` (entries in seq order), as a resync shows it."""
        self.figures["history reads"] += 1
        for entry in entries:
            self.entry(sid, entry["event"], entry.get("view"))

    def entry(self, sid: str, event: dict[str, Any], view: Any) -> None:
        key = identity(event)
        self.seen.add(key)
        seq = event.get("seq")
        if not isinstance(seq, int) or seq < 0:
            return
        timeline = self.timelines[sid]
        if seq >= len(timeline):
            timeline.extend([None] * (seq - len(timeline)))  # a gap, if any, stays unknown
            timeline.append(event)
        elif timeline[seq] is None:
            timeline[seq] = event
        elif identity(timeline[seq]) != key:  # type: ignore[arg-type]
            del timeline[seq:]  # the log went another way after a crash
            timeline.append(event)
        if isinstance(view, dict) and view.get("for") == "event":
            shown = view.get("view")
            if isinstance(shown, dict) and isinstance(shown.get("scheduleId"), str):
                self.cards[(sid, shown["scheduleId"])].add(key)
            return
        etype, data = event.get("type"), event.get("data")
        if not isinstance(data, dict):
            return
        if etype == "agent/followup" and data.get("source") == SCHEDULE_SOURCE:
            framing = parse_reminder_framing(str(data.get("text")))
            if framing is not None and isinstance(data.get("messageId"), str):
                self.reminder_of[(sid, data["messageId"])] = framing[0]
        elif etype == "turn/start" and isinstance(data.get("messageId"), str):
            turns = self.turns[(sid, data["messageId"])]
            if key not in turns:
                turns.append(key)
                self.turn_of[key] = (sid, data["messageId"])
        elif etype == "assistant/message":
            turn = self._enclosing_turn(timeline, seq)
            if turn is not None:
                self.replies[turn].add(key)

    @staticmethod
    def _enclosing_turn(timeline: list[dict[str, Any] | None], seq: int) -> str | None:
        for index in range(seq - 1, -1, -1):
            event = timeline[index]
            if event is None:
                return None  # a gap: the tab does not know
            if event.get("type") == "turn/end":
                return None
            if event.get("type") == "turn/start":
                return identity(event)
        return None

    # -- what a user saw, per reminder -------------------------------------------------------------
    def reminders(self) -> dict[tuple[str, str], ReminderShown]:
        out: defaultdict[tuple[str, str], ReminderShown] = defaultdict(ReminderShown)
        for key, turns in self.turns.items():
            schedule_id = self.reminder_of.get(key)
            if schedule_id is None:
                continue  # not a Schedule follow-up's turn
            shown = out[(key[0], schedule_id)]
            shown.followups.add(key[1])
            shown.turns.update(turns)
            for turn in turns:
                shown.replies.update(self.replies.get(turn, ()))
        for key, cards in self.cards.items():
            out[key].cards.update(cards)
        return dict(out)

    def restarted_with_a_reply(self) -> list[tuple[str, str]]:
        """Follow-ups whose turn was shown again after one of its earlier starts already showed
        a reply (the model answered a turn that then ran again)."""
        return [
            key
            for key, turns in self.turns.items()
            if key in self.reminder_of and any(self.replies.get(turn) for turn in turns[:-1])
        ]

    def problems(self, dispatched: dict[tuple[str, str], set[str]] | None) -> list[tuple[str, str]]:
        """User-visible violations: more than one reminder turn (of different follow-ups), reply
        or card per reminder at any time; with ``dispatched`` (the end state: (session id,
        schedule id) -> messageIds whose stored turn was closed ``interrupted``; one key per
        stored dispatch), exactly one of each per stored dispatch (no reply allowed only for an
        interrupted turn) and nothing shown for a reminder that storage never dispatched."""
        out: list[tuple[str, str]] = []
        shown_all = self.reminders()
        for (sid, schedule_id), shown in sorted(shown_all.items()):
            where = f"session {sid}: user saw {schedule_id}"
            if len(shown.followups) > 1:
                out.append(
                    ("duplicated", f"{where}: reminder turns of {len(shown.followups)} follow-ups")
                )
            if len(shown.replies) > 1:
                out.append(("duplicated", f"{where}: {len(shown.replies)} reminder replies"))
            if len(shown.cards) > 1:
                out.append(("duplicated", f"{where}: {len(shown.cards)} cards"))
        for sid, message_id in self.restarted_with_a_reply():
            schedule_id = self.reminder_of[(sid, message_id)]
            out.append(
                ("duplicated", f"session {sid}: user saw {schedule_id}: its turn ran after a reply")
            )
        if dispatched is None:
            return out
        for key, interrupted in sorted(dispatched.items()):
            shown = shown_all.get(key, ReminderShown())
            where = f"session {key[0]}: {key[1]} (dispatched)"
            if len(shown.followups) != 1:
                out.append(("lost", f"{where}: {len(shown.followups)} reminder turns shown"))
            if len(shown.cards) != 1:
                out.append(("lost", f"{where}: {len(shown.cards)} cards shown"))
            if not shown.replies and not shown.followups & interrupted:
                out.append(("lost", f"{where}: no reply shown"))
        for key, shown in sorted(shown_all.items()):
            if key not in dispatched and (shown.turns or shown.replies or shown.cards):
                out.append(("lost", f"session {key[0]}: user saw {key[1]}, never dispatched"))
        return out

    def counts(self) -> Counter[str]:
        """The figures of the audit (duplicates are what a user saw beyond one per reminder)."""
        out: Counter[str] = Counter()
        for shown in self.reminders().values():
            out["user-visible reminder turns"] += len(shown.turns)
            out["user-visible reminder replies"] += len(shown.replies)
            out["user-visible reminder cards"] += len(shown.cards)
            out["user-visible duplicate turns"] += max(0, len(shown.followups) - 1)
            out["user-visible duplicate replies"] += max(0, len(shown.replies) - 1)
            out["user-visible duplicate cards"] += max(0, len(shown.cards) - 1)
            out["reminder turns re-started after a kill (same follow-up, no reply yet)"] += max(
                0, len(shown.turns) - len(shown.followups)
            )
        return out


# -- one lane -------------------------------------------------------------------------------------


class Lane:
    """One data folder, its Sessions, and everything observed across its boots."""

    def __init__(self, index: int, folder: Path, plugin_path: Path, rng: random.Random) -> None:
        self.index = index
        self.rng = rng
        folder.mkdir(parents=True, exist_ok=True)
        self.data = folder / "data"
        self.control_path = folder / "control.bin"
        self.control = Control.create(self.control_path)
        self.overlay = write_overlay(folder / "overlay.toml", self.control_path)
        # The plugin's dist-info first, then whatever the test run was given (a clone's src).
        inherited = os.environ.get("PYTHONPATH")
        self.env = {
            "PYTHONPATH": os.pathsep.join([str(plugin_path), *([inherited] if inherited else [])])
        }
        self.sessions: list[str] = []
        #: Why the server was last found dead while resuming (for the report).
        self.death = "unknown"
        self.logs: dict[str, StoredLog] = {}
        self.analyses: dict[str, Analysis] = {}
        self.successes: dict[tuple[str, str], Success] = {}
        self.receipts: list[Receipt] = []
        self.receipts_checked = 0
        self.stream_followups: dict[tuple[str, str], tuple[int, str]] = {}
        self.stream_turns: set[tuple[str, str]] = set()
        #: the browser tabs (one per Session), kept across every boot
        self.browser = BrowserView()
        self.violations: list[tuple[str, str]] = []
        self._reported: set[tuple[str, str]] = set()
        self.figures: Counter[str] = Counter()
        self.kills: list[dict[str, Any]] = []
        self.boot = 0
        self.proc: DshProcess | None = None
        self.results: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self.prompt_seq = 0
        self.long_range = (4, 12)
        self.server_errors: Counter[str] = Counter()
        #: follow-ups found durable without their turn right after a restart
        self.requeued: set[str] = set()
        self.requeued_seen: set[str] = set()
        self.stopping = False

    def violate(self, category: str, message: str) -> None:
        """Record a violation once (the same finding is seen again by every later check)."""
        assert category in CATEGORIES
        if (category, message) in self._reported:
            return
        self._reported.add((category, message))
        self.violations.append((category, f"lane {self.index} boot {self.boot}: {message}"))

    # -- processes --------------------------------------------------------------------------------
    async def start(self) -> str:
        self.boot += 1
        self.control.reset()
        self.proc = DshProcess(
            [
                "serve",
                "--overlay",
                str(self.overlay),
                "--data",
                str(self.data),
                "--port",
                "0",
                "--model",
                "scripted",
                "--log-level",
                "warning",
            ],
            env=self.env,
        )
        match = await asyncio.to_thread(self.proc.wait_for_line, LISTENING, 30.0)
        return match[1]

    async def wait_exit(self, timeout: float) -> int | None:
        assert self.proc is not None
        try:
            return await asyncio.to_thread(self.proc.proc.wait, timeout)
        except Exception:
            return None

    def reap(self) -> None:
        """Collect what the dead (or stopped) server logged; close the process."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self.figures["reminder turns started before their dispatch was durable (server)"] += (
            self.control.get(EARLY_TURNS)
        )
        proc.close()
        proc.proc.wait(timeout=10)
        for line in proc.stderr_lines:
            try:
                entry = json.loads(line)
            except ValueError:
                # The one human line a stopped `dsh serve` prints ("stopped; no reminders are
                # pending") is expected; anything else unparsed is not.
                if line.strip() and not STOPPED_LINE.fullmatch(line.strip()):
                    self.server_errors["unparsed stderr line"] += 1
                    self.violate("other", f"server stderr: {line.strip()[:200]}")
                continue
            level = entry.get("level")
            if level in ("error", "critical", "exception"):
                self.server_errors[str(entry.get("event"))] += 1
                self.violate("other", f"server logged {level}: {entry.get('event')}: {line[:300]}")
            elif level == "warning":
                self.figures[f"server warning {entry.get('event')}"] += 1

    # -- reading and checking the store ------------------------------------------------------------
    def refresh(self) -> bool:
        """Re-read the store; check the old prefix is unchanged; decode only new rows."""
        try:
            raw = read_rows(self.data)
        except StoreError as exc:
            self.violate("corrupted", str(exc))
            return False
        for sid, (header_text, _, rows) in raw.items():
            log = self.logs.get(sid)
            if log is None:
                try:
                    header = _records.header_from_json(_json.loads(header_text))
                except ValueError as exc:
                    self.violate("corrupted", f"session {sid}: header: {exc}")
                    continue
                log = self.logs[sid] = StoredLog(header, fold=IncrementalFold(header.owned_from))
            old = log.rows
            if len(rows) < len(old) or rows[: len(old)] != old:
                self.violate("lost", f"session {sid}: the stored prefix changed")
                log.rows, log.events = [], []
                log.fold = IncrementalFold(log.header.owned_from)
            for seq in range(len(log.rows), len(rows)):
                etype, etime, text = rows[seq]
                try:
                    event = _records.event_from_json(
                        {"seq": seq, "type": etype, "time": etime, "data": _json.loads(text)}
                    )
                except ValueError as exc:
                    self.violate("corrupted", f"session {sid} seq {seq}: {exc}")
                    return False
                log.events.append(event)
            log.rows = rows
        for sid in self.logs.keys() - raw.keys():
            self.violate("lost", f"session {sid} vanished from storage")
        return True

    def check(self, phase: str) -> None:
        """Every invariant that holds at any instant; ``phase`` names the moment."""
        self.figures[f"checks {phase}"] += 1
        if not self.refresh():
            return
        for sid, log in self.logs.items():
            assert log.fold is not None
            try:
                log.fold.apply(log.events)
            except ScheduleLogError as exc:
                self.violate("corrupted", f"session {sid} does not fold: {exc}")
            analysis = analyse(log.events, log.header.owned_from)
            for category, problem in analysis.problems:
                self.violate(category, f"session {sid}: {problem}")
            self.analyses[sid] = analysis
        for success in self.successes.values():
            self._check_success(success)
        for receipt in self.receipts[self.receipts_checked :]:
            self._check_receipt(receipt)
        self.receipts_checked = len(self.receipts)
        self._check_user_view(final=phase == "final")

    def _check_user_view(self, *, final: bool) -> None:
        """What the browser showed: at most one reminder turn, reply and card per reminder;
        at the end exactly one of each per stored dispatch."""
        dispatched: dict[tuple[str, str], set[str]] | None = None
        if final:
            dispatched = {}
            for sid, analysis in self.analyses.items():
                for schedule_id in analysis.dispatched():
                    dispatched[(sid, schedule_id)] = {
                        m
                        for m in analysis.followups_by_id[schedule_id]
                        if m in analysis.interrupted
                    }
        for category, problem in self.browser.problems(dispatched):
            self.violate(category, problem)

    def _check_success(self, success: Success) -> None:
        analysis = self.analyses.get(success.session_id)
        created = analysis.creates.get(success.schedule_id) if analysis else None
        if created is None:
            self.violate("lost", f"confirmed create {success.schedule_id} is not on disk")
            return
        value = success.value
        record = created[1]
        if (record.get("prompt"), record.get("scheduledAt"), record.get("afterSeconds")) != (
            value.get("prompt"),
            value.get("scheduledAt"),
            value.get("afterSeconds"),
        ):
            self.violate("lost", f"confirmed create {success.schedule_id} differs on disk")

    def _check_receipt(self, receipt: Receipt) -> None:
        log = self.logs.get(receipt.session_id)
        analysis = self.analyses.get(receipt.session_id)
        seq = receipt.event.get("seq")
        where = f"{receipt.source} receipt {receipt.session_id}@{seq} (boot {receipt.boot})"
        if log is None or analysis is None or not isinstance(seq, int) or seq >= len(log.events):
            self.violate("lost", f"{where}: no such event on disk")
            return
        stored = log.events[seq]
        if not _json.identical(stored.to_json(), receipt.event):
            self.violate("lost", f"{where}: the event on disk differs")
            return
        data = stored.data
        view = receipt.view.get("view")
        if (
            receipt.view.get("for") != "event"
            or not isinstance(view, dict)
            or not isinstance(data, dict)
            or stored.type != "schedule/change"
            or data.get("operation") != "dispatch"
            or view.get("scheduleId") != data.get("id")
        ):
            self.violate("lost", f"{where}: not a dispatch of {view!r}")
            return
        created = analysis.creates.get(str(data.get("id")))
        if created is None or (
            created[1].get("prompt"),
            created[1].get("scheduledAt"),
            "session-local",
        ) != (view.get("prompt"), view.get("occurrenceAt"), view.get("deliveryMode")):
            self.violate("lost", f"{where}: the view does not match its create")
            return
        self.figures[f"receipts verified ({receipt.source})"] += 1

    def pending_work(self, due_before_ms: int, strict: bool) -> list[str]:
        """What a settled Session still owes: due records not ended, follow-ups not started.

        ``strict``: every record, due or not (the final wait).
        """
        owed: list[str] = []
        for sid, analysis in self.analyses.items():
            log = self.logs[sid]
            assert log.fold is not None
            with contextlib.suppress(ScheduleLogError):
                for record in log.fold.active:
                    if strict or parse_instant(record.scheduled_at) <= due_before_ms:
                        owed.append(f"{sid}: {record.id} due {record.scheduled_at} not ended")
            for message_id, (seq, schedule_id) in analysis.followups.items():
                if not analysis.turn_starts.get(message_id):
                    owed.append(f"{sid}: follow-up of {schedule_id} at {seq} never started")
                elif strict and message_id not in analysis.ended:
                    owed.append(f"{sid}: the turn of {schedule_id} has not ended")
        return owed

    # -- the client side ------------------------------------------------------------------------
    async def stream(self, client: httpx.AsyncClient, sid: str, ready: asyncio.Event) -> None:
        """The browser tab of ``sid`` in this boot: reconnect with ``Last-Event-ID`` (the
        largest id it saw in any boot), re-read the history (the resync), then read frames."""
        boot = self.boot
        headers = {}
        if sid in self.browser.last_ids:
            headers["Last-Event-ID"] = str(self.browser.last_ids[sid])
        with contextlib.suppress(httpx.HTTPError):
            async with client.stream(
                "GET",
                f"/api/sessions/{sid}/events",
                headers=headers,
                timeout=httpx.Timeout(10.0, read=None),
            ) as response:
                if response.status_code != 200:
                    self.violate("other", f"stream of {sid}: HTTP {response.status_code}")
                    ready.set()
                    return
                entries = await self.read_history(client, sid)
                if entries is not None:
                    self.browser.history(sid, entries)
                ready.set()
                data: str | None = None
                frame_id: str | None = None
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        data = line[6:]
                    elif line.startswith("id: "):
                        frame_id = line[4:]
                    elif line == "" and data is not None:
                        self._on_frame(boot, sid, json.loads(data), frame_id)
                        data = frame_id = None
        ready.set()

    async def read_history(
        self, client: httpx.AsyncClient, sid: str
    ) -> list[dict[str, Any]] | None:
        """Every history entry of ``sid``, page by page (``None``: a page failed)."""
        entries: list[dict[str, Any]] = []
        params: dict[str, int] = {"maxMessages": 500}
        while True:
            answer = await client.get(
                f"/api/sessions/{sid}/history", params=params, timeout=SLOW_ANSWER_S
            )
            if answer.status_code != 200:
                self.violate("other", f"history of {sid}: HTTP {answer.status_code}")
                return None
            page = answer.json()
            entries[:0] = page["entries"]
            if not page["hasMore"] or not page["entries"]:
                return entries
            params = {"maxMessages": 500, "beforeSeq": page["entries"][0]["event"]["seq"]}

    def _on_frame(
        self, boot: int, sid: str, frame: dict[str, Any], frame_id: str | None = None
    ) -> None:
        self.browser.frame(sid, frame_id, frame)
        event = frame["event"]
        data = event.get("data")
        self.figures["frames"] += 1
        if "view" in frame:
            self.receipts.append(Receipt(boot, sid, event, frame["view"], "stream"))
            self.figures["receipts seen (stream)"] += 1
            return
        etype = event.get("type")
        if etype == "tool/result" and isinstance(data, dict):
            self._on_result(boot, sid, data)
        elif etype == "agent/followup" and isinstance(data, dict):
            if data.get("source") == SCHEDULE_SOURCE:
                framing = parse_reminder_framing(str(data.get("text")))
                if framing is not None:
                    self.stream_followups[(sid, str(data.get("messageId")))] = (boot, framing[0])
        elif etype == "turn/start" and isinstance(data, dict):
            key = (sid, str(data.get("messageId")))
            if key in self.stream_followups:
                self.stream_turns.add(key)

    def _on_result(self, boot: int, sid: str, data: dict[str, Any]) -> None:
        name, value = data.get("name"), data.get("value")
        queue = self.results.get(sid)
        if queue is not None:
            queue.put_nowait(data)
        if (
            isinstance(value, dict)
            and isinstance(value.get("code"), str)
            and "deleted" not in value
        ):
            self.figures[f"{name} answered {value['code']}"] += 1
            # interrupted: a call the kill cut off, answered when its Session was resumed.
            if value["code"] not in ("too_many_active", "interrupted"):
                self.violate("other", f"{sid}: {name} answered {value}")
            return
        if name == "schedule_create" and isinstance(value, dict) and "id" in value:
            key = (sid, str(value["id"]))
            self.successes[key] = Success(boot, sid, str(value["id"]), value)
            self.figures["creates confirmed"] += 1
        elif name == "schedule_delete" and isinstance(value, dict):
            self.figures[f"deletes answered deleted={value.get('deleted')}"] += 1
        elif name == "schedule_list":
            self.figures["lists answered"] += 1

    async def workload(self, client: httpx.AsyncClient, sid: str) -> None:
        rng = random.Random(self.rng.random())
        queue = self.results[sid]
        while not self.stopping:
            roll = rng.random()
            mine = [key[1] for key in self.successes if key[0] == sid]
            if roll < 0.55:
                arguments = {"prompt": self._prompt(rng), "after_seconds": rng.randint(1, 3)}
                name = "schedule_create"
            elif roll < 0.72:
                arguments = {
                    "prompt": self._prompt(rng),
                    "after_seconds": rng.randint(*self.long_range),
                }
                name = "schedule_create"
            elif roll < 0.9 and mine:
                arguments = {"id": rng.choice(mine[-8:])}
                name = "schedule_delete"
            elif roll < 0.93:
                arguments = {"id": f"schedule-{rng.randint(1, 9999)}"}
                name = "schedule_delete"
            else:
                arguments = {}
                name = "schedule_list"
            text = f"/tool {name} {json.dumps(arguments)}"
            try:
                response = await client.post(f"/api/sessions/{sid}/messages", json={"text": text})
            except httpx.HTTPError:
                return
            if response.status_code >= 500:
                self.violate("other", f"POST messages: HTTP {response.status_code} {response.text}")
                return
            if response.status_code != 202:
                self.violate("other", f"POST messages: HTTP {response.status_code}")
                return
            self.figures[f"{name} sent"] += 1
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(3.0):
                    while not self.stopping and queue.empty():
                        await asyncio.sleep(0.01)
                    if not queue.empty():
                        queue.get_nowait()
            await asyncio.sleep(rng.uniform(0.02, 0.25))  # pacing, not a wait for an outcome

    def _prompt(self, rng: random.Random) -> str:
        self.prompt_seq += 1
        base = f"lane {self.index} boot {self.boot} #{self.prompt_seq}"
        extra = rng.choice(["", ' "quoted"', "\noccurrence_at: forged", " 提醒", " \\ / tab\t"])
        return base + extra

    # -- one boot -------------------------------------------------------------------------------
    async def run_boot(self, plan: Plan | None, *, final: bool = False) -> None:
        url = await self.start()
        started = time.monotonic()
        self.check("post-crash")
        self._account_crash_window()
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        async with httpx.AsyncClient(base_url=url, timeout=10.0, limits=limits) as client:
            if not self.sessions:
                for _ in range(SESSIONS):
                    response = await client.post("/api/sessions", json={})
                    assert response.status_code == 201, response.text
                    self.sessions.append(response.json()["id"])
            self.results = {sid: asyncio.Queue() for sid in self.sessions}
            tasks: list[asyncio.Task[None]] = []
            try:
                readies = []
                for sid in self.sessions:
                    ready = asyncio.Event()
                    readies.append(ready)
                    tasks.append(asyncio.create_task(self.stream(client, sid, ready)))
                async with asyncio.timeout(15):
                    for ready in readies:
                        await ready.wait()
                if plan is not None and plan.early:
                    self.control.arm(plan.point, plan.at, stall_ms=STALL_MS)
                died = await self._resume_and_settle(client, final=final)
                if final:
                    if died:
                        self.violate(
                            "other", f"the server died during the final boot ({self.death})"
                        )
                    else:
                        await self._final(client)
                    return
                if not died:
                    if plan is not None and not plan.early and plan.point in POINTS:
                        self.control.arm(plan.point, plan.at, stall_ms=STALL_MS)
                    for sid in self.sessions:
                        tasks.append(asyncio.create_task(self.workload(client, sid)))
                await self._die(plan)
            finally:
                # The server is gone: in-flight requests fail on their own; only tasks still
                # pacing or waiting for a result are cancelled (never one inside a request).
                self.stopping = True
                if tasks:
                    await asyncio.wait(tasks, timeout=5.0)
                for task in tasks:
                    task.cancel()
                for outcome in await asyncio.gather(*tasks, return_exceptions=True):
                    if isinstance(outcome, Exception):  # a bug of the harness: never silent
                        self.violate("other", f"a client task failed: {outcome!r}")
                self.stopping = False
                self.reap()
                self.figures["boot seconds x1000"] += round((time.monotonic() - started) * 1000)

    async def _resume_and_settle(self, client: httpx.AsyncClient, *, final: bool) -> bool:
        """Resume every Session and wait for what is due; True when the server died meanwhile."""
        resumed_at = int(time.time() * 1000)
        answers = await asyncio.gather(
            *(
                client.post(f"/api/sessions/{sid}/resume", timeout=SLOW_ANSWER_S)
                for sid in self.sessions
            ),
            return_exceptions=True,
        )
        for answer in answers:
            if isinstance(answer, httpx.HTTPError):
                self.death = f"a resume failed: {answer!r}"
                return True  # an armed kill point fired during the resumes
            if isinstance(answer, BaseException):
                raise answer
            if answer.status_code != 200:
                self.violate("other", f"resume: HTTP {answer.status_code} {answer.text}")
        deadline = time.monotonic() + (60.0 if final else 20.0)
        owed: list[str] = []
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.proc.poll() is not None:
                self.death = f"the process exited with {self.proc.proc.returncode}"
                return True
            self.refresh_light()
            owed = self.pending_work(resumed_at, strict=final)
            if not owed:
                break
            await asyncio.sleep(0.1)
        else:
            self.violate("lost", f"not settled after the restart: {owed[:5]}")
        if self.proc is not None and self.proc.proc.poll() is not None:
            self.death = f"the process exited with {self.proc.proc.returncode} after settling"
            return True
        try:
            for sid in self.sessions:
                answer = await client.post(f"/api/sessions/{sid}/flush", timeout=SLOW_ANSWER_S)
                if answer.status_code != 200 or answer.json().get("durable") is not True:
                    self.violate("other", f"flush of {sid}: {answer.status_code} {answer.text}")
            histories = [await self.read_history(client, sid) for sid in self.sessions]
        except httpx.HTTPError as exc:
            self.death = f"a flush or history read failed: {exc!r}"
            return True
        for sid, history in zip(self.sessions, histories, strict=True):
            if history is None:
                continue
            self.browser.history(sid, history)  # what a reload of the page shows now
            for entry in history:
                if "view" in entry:
                    self.receipts.append(
                        Receipt(self.boot, sid, entry["event"], entry["view"], "history")
                    )
        self.check("settled")
        self._account_settled()
        return False

    def refresh_light(self) -> None:
        """The bounded wait's poll: new rows only, folds and analyses brought up to date."""
        if not self.refresh():
            return
        for sid, log in self.logs.items():
            assert log.fold is not None
            with contextlib.suppress(ScheduleLogError):
                log.fold.apply(log.events)
            self.analyses[sid] = analyse(log.events, log.header.owned_from)

    async def _final(self, client: httpx.AsyncClient) -> None:
        """End state: nothing active, every reminder turn started; then a clean stop."""
        del client
        self.check("final")
        for sid, log in self.logs.items():
            try:
                result = fold(log.events, log.header.owned_from)  # the reference, from scratch
            except ScheduleLogError as exc:
                self.violate("corrupted", f"session {sid}: {exc}")
                continue
            if result.active:
                self.violate("lost", f"session {sid}: still active at the end: {result.active}")
            analysis = self.analyses[sid]
            for schedule_id in analysis.creates:
                if len(analysis.terminals.get(schedule_id, ())) != 1:
                    self.violate("lost", f"session {sid}: {schedule_id} did not end exactly once")
            for message_id, (_, schedule_id) in analysis.followups.items():
                if len(analysis.turn_starts.get(message_id, ())) != 1:
                    self.violate(
                        "lost", f"session {sid}: the turn of {schedule_id} did not run once"
                    )
            self.figures["stored creates"] += len(analysis.creates)
            ends = Counter(op for items in analysis.terminals.values() for _, op in items)
            self.figures["stored dispatches"] += ends["dispatch"]
            self.figures["stored deletes"] += ends["delete"]
            self.figures["reminder turns"] += sum(
                len(analysis.turn_starts.get(m, ())) for m in analysis.followups
            )
            self.figures["stored events"] += len(log.events)
            self.figures["interrupted turns closed on resume"] += analysis.interrupted_closures
        for success in self.successes.values():
            analysis = self.analyses[success.session_id]
            if len(analysis.terminals.get(success.schedule_id, ())) != 1:
                self.violate("lost", f"confirmed {success.schedule_id} did not end exactly once")
        self.figures.update(self.browser.counts())
        self.figures.update(self.browser.figures)
        assert self.proc is not None
        rc = self.proc.terminate(timeout=20)
        if rc != 0:
            self.violate("other", f"the final server stopped with {rc}")

    async def _die(self, plan: Plan | None) -> None:
        """Let the armed point kill the server, or SIGKILL it at a random moment."""
        assert self.proc is not None
        if plan is None or plan.point == EXTERNAL:
            await asyncio.sleep(self.rng.uniform(0.2, 3.0))  # the random moment of the kill
            self._external_kill(EXTERNAL)
            return
        if plan.point == EXTERNAL_TXN:
            await asyncio.sleep(self.rng.uniform(0.2, 2.0))
            await asyncio.to_thread(self._kill_inside_a_batch, self.proc.proc.pid)
            self._external_kill(EXTERNAL_TXN)
            return
        if await self.wait_exit(10.0) is None:
            self._external_kill(f"{plan.point} (not reached)")
            return
        fired = self.control.get(FIRED)
        rc = self.proc.proc.returncode
        expected = POINTS[plan.point][0]
        if fired != expected or rc != -9:
            self.violate("other", f"armed {plan.point}: fired {fired}, exit {rc}")
        self._record_kill(plan.point, plan)

    def _kill_inside_a_batch(self, pid: int) -> None:
        """Poll the control block and SIGKILL the server while its writer is in a batch
        (preferring one of several requests); after 3 s, kill it anyway."""
        started = time.monotonic()
        while time.monotonic() - started < 3.0:
            if self.control.get(IN_TXN) and (
                self.control.get(BATCH_LEN) > 1 or time.monotonic() - started > 1.0
            ):
                break
            time.sleep(0.0001)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def _external_kill(self, label: str) -> None:
        assert self.proc is not None
        if self.proc.proc.poll() is None:
            self.proc.kill()
        self._record_kill(label, None)

    def _record_kill(self, label: str, plan: Plan | None) -> None:
        block = self.control.snapshot()
        kill = {
            "boot": self.boot,
            "point": label,
            "early": bool(plan and plan.early),
            "hit": plan.at if plan else None,
            "in_txn": bool(block[IN_TXN]),
            "batch_len": block[BATCH_LEN] if block[IN_TXN] else 0,
            "due_open": block[DUE_OPEN],
            "commits": block[COMMITS],
            "group_commits": block[GROUP_COMMITS],
            "flushes": block[FLUSHES],
            "stalled": bool(block[STALLED]),
        }
        self.kills.append(kill)
        self.figures["commits"] += block[COMMITS]
        self.figures["group commits"] += block[GROUP_COMMITS]

    # -- figures about the crash windows --------------------------------------------------------
    def _account_crash_window(self) -> None:
        """Right after a restart (before resumes): what the last kill left between the steps."""
        if self.boot == 1:
            return
        for analysis in self.analyses.values():
            for message_id in analysis.followups:
                if (
                    not analysis.turn_starts.get(message_id)
                    and message_id not in self.requeued_seen
                ):
                    self.figures["dispatches durable, turn not started (re-queued on resume)"] += 1
                    self.requeued.add(message_id)
                    self.requeued_seen.add(message_id)
        for (sid, message_id), (boot, _) in self.stream_followups.items():
            if boot != self.boot - 1:
                continue
            analysis = self.analyses.get(sid)
            if analysis is None or message_id not in analysis.followups:
                self.figures["follow-ups seen on a stream, not durable at the kill"] += 1
                if (sid, message_id) in self.stream_turns:
                    self.figures[
                        "reminder turns seen on a stream before their dispatch was durable"
                    ] += 1

    def _account_settled(self) -> None:
        for analysis in self.analyses.values():
            for message_id in list(self.requeued):
                if message_id in analysis.followups:
                    starts = analysis.turn_starts.get(message_id, [])
                    if len(starts) == 1:
                        self.figures["re-queued follow-ups whose turn then ran once"] += 1
                        self.requeued.discard(message_id)

    def interrupted_turns(self) -> int:
        return sum(len(a.interrupted) for a in self.analyses.values())


#: The quick matrix inside ``make test``: the due path, group commits, and random kills first.
QUICK_ORDER = (
    "dispatch-stalled",
    "dispatch-stalled",
    "reminder-turn-stalled",
    "dispatch-append",
    "dispatch-committed",
    "txn-mid",
    EXTERNAL_TXN,
    "reminder-turn-start",
    "create-committed",
    "txn-committed",
    EXTERNAL,
    "followup-append",
    "reminder-turn-committed",
)


def plans(kills: int, rng: random.Random) -> list[Plan]:
    """``kills`` kill plans. Up to ten: :data:`QUICK_ORDER`; more: rounds of every point
    once, three external kills at random moments and three timed into a write batch (about
    a third of all kills are external), shuffled per round."""
    names = list(POINTS)
    order: list[str] = list(QUICK_ORDER) if kills <= len(QUICK_ORDER) else []
    while len(order) < kills:
        cycle = [*names, *([EXTERNAL] * 3), *([EXTERNAL_TXN] * 3)]
        rng.shuffle(cycle)
        order.extend(cycle)
    out = []
    for point in order[:kills]:
        if point in (EXTERNAL, EXTERNAL_TXN):
            out.append(Plan(point, 0, early=False))
        else:
            early = point in DUE_POINTS and rng.random() < 0.3
            out.append(Plan(point, rng.randint(1, HIT_RANGE[point]), early=early))
    return out
