"""A test-only dsh plugin that SIGKILLs its own ``dsh serve`` process at a chosen kill point.

Loaded by the crash harness through an overlay (entry point ``chaos`` in group ``dsh.plugins``,
published by a generated ``*.dist-info`` on the server's ``PYTHONPATH``); nothing in ``src/``
knows about it. Its config table names the control block (:mod:`tests.chaos.control`) through
which the harness arms a point and reads back what the process was doing when it died.

How each point is reached (see :data:`tests.chaos.control.POINTS`):

* ``dsh_event_validate`` sees every candidate event exactly as it would be stored, before it
  enters the log. The overlay loads this plugin *first*, so its implementation runs *last*,
  after the Schedule plugin accepted the candidate: a kill there is the instant just before the
  append. For a ``schedule/change`` dispatch that instant lies inside the due path, after the
  follow-up was appended in the same synchronous step;
* ``dsh_session_flushed`` runs right after an acknowledged flush (the commit is on disk) and
  before the flusher (a tool's barrier, the owner's dispatch barrier) continues;
* the points of an edit: a user action's ``tool/call`` of ``schedule_update`` opens an edit of
  its Session; the next acknowledged flush of that Session is the edit's preflight
  (``update-preflight``), the validation of its ``schedule/change`` update the instant before
  the append (``update-append``), and the flush covering the update its barrier
  (``update-committed``); its ``tool/result`` closes it;
* the SQLite backend of this process is instrumented on the instance (its private write-batch
  methods are wrapped, on the writer thread): ``txn-mid`` dies between two requests of a group
  commit, inside the open transaction, ``txn-committed`` right after COMMIT returned;
* the stall points slow the storage writer on purpose: ``dispatch-stalled`` picks a reminder's
  follow-up as it is validated (the armed hit), ``reminder-turn-stalled`` a reminder turn's
  ``turn/start``; the writer then holds the write batch that carries the picked event for
  ``STALL_MS`` (everything else of the process keeps running: the event loop appends, streams,
  calls the model) and the process dies at the end of the stall, before that batch commits.
  Whatever the server let a client see during the stall, before that event was durable, is
  exactly what finding 1 of issue 9 is about.

The block also carries live state for external kills: ``IN_TXN`` while a write batch runs and
``DUE_OPEN``, the Sessions whose follow-up was appended but whose dispatch no flush covered yet;
and ``EARLY_TURNS``, the reminder ``turn/start`` events appended while their Session's dispatch
was not durable yet (0 with finding 1 fixed).
"""

from __future__ import annotations

import os
import signal
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from dsh_hookspecs import Event, JSONValue, Session, hookimpl

from .control import (
    ALL_POINTS,
    ARMED_AT,
    ARMED_POINT,
    BATCH_LEN,
    COMMITS,
    DUE_OPEN,
    EARLY_TURNS,
    FIRED,
    FLUSHES,
    GROUP_COMMITS,
    HITS,
    IN_TXN,
    PID,
    POINTS,
    STALL_MS,
    STALLED,
    Control,
)

SCHEDULE_SOURCE = {"kind": "plugin", "plugin": "schedule"}


def _is_reminder_followup(event: Event) -> bool:
    data = event.data
    return (
        event.type == "agent/followup"
        and isinstance(data, dict)
        and data.get("source") == SCHEDULE_SOURCE
        and isinstance(data.get("messageId"), str)
    )


class ChaosPlugin:
    """Entry point ``chaos``. Config: ``control`` (path of the control block)."""

    def __init__(self) -> None:
        self.control: Control | None = None
        #: messageIds of the Schedule follow-ups seen (appended or resumed).
        self.reminder_messages: set[str] = set()
        #: session id -> kind -> seqs appended but not yet covered by an acknowledged flush.
        self.pending: defaultdict[str, defaultdict[str, list[int]]] = defaultdict(
            lambda: defaultdict(list)
        )
        #: session id -> seq of the dispatch whose due path is open (not yet flushed).
        self.due_open: dict[str, int] = {}
        #: (session id, seq) of the event whose write batch a stall point holds, then kills.
        self.stall_target: tuple[str, int] | None = None
        #: Sessions with a turn open (turn/start validated, no turn/end yet).
        self.open_turns: set[str] = set()
        #: Sessions with an edit (a user's schedule_update) running: the seq of its tool/call
        #: until its update entered the log (then ``None``).
        self.edits: dict[str, int | None] = {}

    # -- kill points -----------------------------------------------------------------------------
    def hit(self, point: str) -> None:
        control = self.control
        if control is None:
            return
        code = ALL_POINTS[point][0]
        if control.get(ARMED_POINT) != code:
            return
        if control.add(HITS) >= control.get(ARMED_AT):
            control.set(FIRED, code)
            os.kill(os.getpid(), signal.SIGKILL)

    def pick(self, point: str, session_id: str, seq: int) -> None:
        """A stall point: at its armed hit, mark ``seq`` as the event whose batch is held."""
        control = self.control
        if control is None or self.stall_target is not None:
            return
        if control.get(ARMED_POINT) != POINTS[point][0]:
            return
        if control.add(HITS) >= control.get(ARMED_AT):
            self.stall_target = (session_id, seq)

    # -- hooks -----------------------------------------------------------------------------------
    @hookimpl
    def dsh_plugin_start(self, host: Any, config: Mapping[str, JSONValue]) -> Callable[[], None]:
        path = config.get("control")
        if not isinstance(path, str):
            raise ValueError("chaos: config 'control' must be the path of the control block")
        self.control = Control(path)
        self.control.set(PID, os.getpid())
        self.control.set(IN_TXN, 0)
        self.control.set(DUE_OPEN, 0)
        backend = getattr(host, "backend", None)
        if hasattr(backend, "_write_batch") and hasattr(backend, "_apply_in_savepoint"):
            self._instrument(backend)
        return self.close

    def close(self) -> None:
        if self.control is not None:
            self.control.close()
            self.control = None

    @hookimpl
    def dsh_session_opened(self, session: Session, reason: str) -> None:
        del reason
        for event in session.events:
            if _is_reminder_followup(event):
                self.reminder_messages.add(event.data["messageId"])  # type: ignore[index]

    @hookimpl
    def dsh_event_validate(self, session: Session, event: Event) -> None:
        data = event.data
        if _is_reminder_followup(event):
            self.hit("followup-append")
            self.reminder_messages.add(data["messageId"])  # type: ignore[index]
            self.due_open[session.id] = event.seq + 1
            if session.id not in self.open_turns:
                # An idle Agent: the reminder turn is next, so anything it shows early falls
                # inside the stall (a busy one would first wait for its own turn's checkpoint,
                # which the held batch blocks).
                self.pick("dispatch-stalled", session.id, event.seq + 1)
            self._count_due()
        elif event.type == "schedule/change" and isinstance(data, dict):
            operation = data.get("operation")
            if operation == "create":
                self.hit("create-append")
                self.pending[session.id]["create"].append(event.seq)
            elif operation == "delete":
                self.pending[session.id]["delete"].append(event.seq)
            elif operation == "dispatch":
                self.hit("dispatch-append")
            elif operation == "update":
                self.hit("update-append")
                self.pending[session.id]["update"].append(event.seq)
                self.edits[session.id] = None
        elif (
            event.type in ("tool/call", "tool/result")
            and isinstance(data, dict)
            and data.get("name") == "schedule_update"
        ):
            if event.type == "tool/call":
                self.edits[session.id] = event.seq
            else:
                self.edits.pop(session.id, None)
        if event.type == "turn/start":
            self.open_turns.add(session.id)
        elif event.type == "turn/end":
            self.open_turns.discard(session.id)
        if (
            event.type == "turn/start"
            and isinstance(data, dict)
            and data.get("messageId") in self.reminder_messages
        ):
            self.hit("reminder-turn-start")
            self.pending[session.id]["turn"].append(event.seq)
            if session.id in self.due_open and self.control is not None:
                self.control.add(EARLY_TURNS)
            self.pick("reminder-turn-stalled", session.id, event.seq)

    @hookimpl
    def dsh_session_flushed(self, session: Session, through_seq: int) -> None:
        if self.control is not None:
            self.control.add(FLUSHES)
        self.hit("flushed-n")
        call_seq = self.edits.get(session.id)
        if call_seq is not None and call_seq < through_seq:
            self.edits[session.id] = None  # one preflight per edit
            self.hit("update-preflight")
        dispatch_seq = self.due_open.get(session.id)
        if dispatch_seq is not None and dispatch_seq < through_seq:
            del self.due_open[session.id]
            self._count_due()
            self.hit("dispatch-committed")
        pending = self.pending.get(session.id)
        if pending is None:
            return
        for kind, point in (
            ("create", "create-committed"),
            ("update", "update-committed"),
            ("delete", "delete-committed"),
            ("turn", "reminder-turn-committed"),
        ):
            seqs = pending[kind]
            if seqs and seqs[0] < through_seq:
                pending[kind] = [seq for seq in seqs if seq >= through_seq]
                self.hit(point)

    # -- the SQLite writer -----------------------------------------------------------------------
    def _stall_and_kill(self, requests: list[Any]) -> None:
        """On the writer thread: hold a batch carrying the stall target, then die before it
        is written (slow storage, then a crash at the end of the stall)."""
        target, control = self.stall_target, self.control
        if target is None or control is None:
            return
        session_id, seq = target
        for request in requests:
            start = getattr(request, "start", -1)
            if getattr(request, "session_id", None) == session_id and start <= seq < start + len(
                getattr(request, "rows", ())
            ):
                control.set(STALLED, 1)
                time.sleep(control.get(STALL_MS) / 1000)  # the slow storage being simulated
                control.set(FIRED, control.get(ARMED_POINT))
                os.kill(os.getpid(), signal.SIGKILL)

    def _count_due(self) -> None:
        if self.control is not None:
            self.control.set(DUE_OPEN, len(self.due_open))

    def _instrument(self, backend: Any) -> None:
        """Wrap this backend instance's write batch (it runs on the backend's writer thread)."""
        write_batch = backend._write_batch
        apply_in_savepoint = backend._apply_in_savepoint
        batch = {"size": 0, "applied": 0}

        def wrapped_write_batch(requests: list[Any]) -> Any:
            control = self.control
            self._stall_and_kill(requests)
            batch["size"], batch["applied"] = len(requests), 0
            if control is not None:
                control.set(BATCH_LEN, len(requests))
                control.set(IN_TXN, 1)
            try:
                outcomes = write_batch(requests)
            finally:
                if control is not None:
                    control.set(IN_TXN, 0)
            if control is not None:
                control.add(COMMITS)
                if len(requests) > 1:
                    control.add(GROUP_COMMITS)
            self.hit("txn-committed")
            return outcomes

        def wrapped_apply(conn: Any, request: Any) -> Any:
            outcome = apply_in_savepoint(conn, request)
            batch["applied"] += 1
            if batch["size"] > 1 and batch["applied"] < batch["size"]:
                self.hit("txn-mid")
            return outcome

        backend._write_batch = wrapped_write_batch
        backend._apply_in_savepoint = wrapped_apply
