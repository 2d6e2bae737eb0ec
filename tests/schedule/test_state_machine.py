"""A reference-model state machine over real hosts with the real Schedule plugin.

Hypothesis drives random creates (``after_seconds``, ``at``, ``every_seconds``, ``daily``,
``weekly`` and ``cron``), deletes and lists through ``agent.execute_tool``, chat turns,
injected flush and storage failures, clock moves (``advance``, wall-clock rollback, suspend),
forks, graceful host restarts and crash restarts, all on one shared in-memory store. A reference
model tracks, per Session, what the tool values promised; after every step (with every owner
settled: no asyncio task left, every Agent idle) it checks that

* no acknowledged record is lost: every create that answered a view and was not deleted is
  active in the live fold (and in ``schedule_list``, checked by the list rule) or has a dispatch
  that came no earlier than its target;
* every (fixed-rate) record stays on its creation anchor: each of its dispatches carries a
  decision time at or after its target and presents the latest occurrence at or before it, the
  fold then holds the next anchor-aligned target, and each batch follow-up is followed by one
  dispatch per listed record, in order, with one shared ``acceptedAt``;
* every calendar record (daily, weekly, cron) stays on its rule: each of its dispatches carries a
  decision time at or after its target, delivers (and presents) the latest occurrence of the rule
  at or before it and no earlier than the target, and freezes the rule's first occurrence after
  it as the next target, which the fold then holds;
* no one-shot id is dispatched twice in one Session's owned stream (one follow-up per dispatch,
  adjacent),
  at most one durable dispatch per id survives any number of crashes, and a reminder is presented
  to the model at most once more than the crashes that lost an undurable reminder turn;
* a record whose delete answered ``deleted: true`` is never dispatched nor presented afterwards;
* an edit that answered a view is in the log right away, in the store after any crash, and the
  record then fires at its new timing only (each dispatch is checked against the version it
  acted on); a text-only edit, or the same timing again, keeps the target, and asking for what
  the record already is writes nothing;
* a Session's fold only ever holds that Session's own records, so a fork never inherits work;
* a record that is due while its Session is live, idle and has had only successful flushes since
  its owner was last triggered is dispatched within one timer segment (60 s) of loop time;
* every stored log folds, every durable schedule follow-up has its dispatch right after it in the
  same stored batch and vice versa, the store holds a prefix of each live log, and no owner
  faulted and nothing logged an error.

Crash restarts. A crash must leave storage exactly as the crashed host had acknowledged it and
leave nothing of that host running. Every boot reaches the shared store through its own
:class:`ProcessStorage` handle. A crash first severs that handle (every later read or write
through it raises, so nothing the abandoned host still does can reach storage, like a killed
process), optionally cancels a create caught in flight at a gated preflight or barrier flush,
and only then tears the abandoned host down with ``LiveHost.close()``: its Agents and owners are
disposed (timers cancelled, runs awaited), its final flushes fail against the severed handle,
its coordinator's background writes are awaited. Each boot also has its own ``ManualClock``
(wall time carried over), so a timer the abandoned host might have leaked could never fire, and
the settle after every step asserts that no asyncio task is left over.

``DSH_STATEFUL_EXAMPLES`` / ``DSH_STATEFUL_STEPS`` override the example count and step count.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from structlog.testing import capture_logs

from dsh_hookspecs import BoardEntry, Event, JSONValue
from dsh_host import LiveAgent, LiveHost, LiveTurn, ScriptedModel
from dsh_host.persistence import (
    DueWake,
    MemoryBackend,
    StorageError,
    StoredSession,
    StoredSummary,
    Write,
)
from dsh_host.testing import FaultInjectingBackend, FaultPlan, ManualClock, wait_until
from dsh_schedule import (
    SCHEDULE_CHANGE,
    Create,
    CronRecord,
    DailyRecord,
    Dispatch,
    EveryRecord,
    IncrementalFold,
    Record,
    SchedulePlugin,
    WeeklyRecord,
    encode_change,
    fold,
    format_instant,
    parse_batch_framing,
    parse_instant,
    parse_reminder_framing,
    present_dispatch,
)
from dsh_schedule._calendar import Wall, cron_wall, latest_due, next_after, weekly_wall
from dsh_schedule._fold import allocate_id, dispatched

from .harness import FlushControl, replace_flush_listener, uncertain

EXAMPLES = int(os.environ.get("DSH_STATEFUL_EXAMPLES", "25"))
STEPS = int(os.environ.get("DSH_STATEFUL_STEPS", "30"))
MAX_SEGMENT = 60.0  # the plugin's default max_segment_seconds
START_WALL = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
SCHEDULE_SOURCE = {"kind": "plugin", "plugin": "schedule"}
MAX_SESSIONS = 5
#: Error-level log events a crash legitimately produces (the abandoned host's final flush).
TOLERATED_ERRORS = frozenset({"host.final_flush_failed"})


# -- the system under test's surroundings ------------------------------------------------------
class BatchRecordingStore(MemoryBackend):
    """The one store that survives restarts; it remembers every committed append batch."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)

    async def append(self, write: Write) -> None:
        await super().append(write)
        self.batches[write.session_id].append((write.start, write.start + len(write.events)))


class ProcessStorage:
    """One host process's handle on the shared store. ``crashed`` cuts the process off: every
    later read or write raises and never reaches the store; ``close`` still releases it (the
    OS drops a dead process's handles)."""

    def __init__(self, inner: BatchRecordingStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.crashed = False

    def _alive(self) -> None:
        if self.crashed:
            raise StorageError("the process that held this storage handle crashed")

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def load(self, session_id: str) -> StoredSession | None:
        self._alive()
        return await self.inner.load(session_id)

    async def list_sessions(self) -> Sequence[StoredSummary]:
        self._alive()
        return await self.inner.list_sessions()

    async def append(self, write: Write) -> None:
        self._alive()
        await self.inner.append(write)

    async def due_wakes(self, now_ms: int, limit: int) -> Sequence[DueWake]:
        self._alive()
        return await self.inner.due_wakes(now_ms, limit)

    async def earliest_wake(self) -> int | None:
        self._alive()
        return await self.inner.earliest_wake()


@dataclass
class RecordingFlush(FlushControl):
    """:class:`FlushControl` that also records each flush's outcome per Session id."""

    outcomes: list[tuple[str, bool]] = field(default_factory=list)

    async def __call__(self, session) -> bool | None:
        try:
            result = await super().__call__(session)
        except BaseException:
            self.outcomes.append((session.id, False))
            raise
        self.outcomes.append((session.id, result is True))
        return result


@dataclass(frozen=True)
class Presentation:
    step: int
    session_id: str
    schedule_id: str
    occurrence_at: str
    prompt: str
    source: JSONValue


class RecordingModel:
    """The scripted model, recording every reminder turn it is asked to run."""

    name = "recording"

    def __init__(self) -> None:
        self.inner = ScriptedModel(SchedulePlugin().dsh_scripted_phrases)
        self.presentations: list[Presentation] = []
        self.step = 0

    async def run_turn(self, turn: LiveTurn) -> None:
        single = parse_reminder_framing(turn.message.text)
        batch = parse_batch_framing(turn.message.text) or ()
        for schedule_id, occurrence_at, prompt in [single] if single is not None else batch:
            self.presentations.append(
                Presentation(
                    self.step,
                    turn.agent.session.id,
                    schedule_id,
                    occurrence_at,
                    prompt,
                    turn.message.source,
                )
            )
        await self.inner.run_turn(turn)


@dataclass
class Generation:
    """One host boot."""

    host: LiveHost
    clock: ManualClock
    flush: RecordingFlush
    faulty: FaultInjectingBackend
    handle: ProcessStorage

    @property
    def plugin(self):
        return self.host.plugins.pm.get_plugin("schedule")

    def agent(self, session_id: str) -> LiveAgent:
        agent = self.host.agents.for_session(session_id)
        assert agent is not None, f"session {session_id} has no live root Agent"
        return agent


# -- the reference model -----------------------------------------------------------------------
#: The calendar rules the machine creates: the tool argument, and the record's rule fields the
#: tool answers with (the time normalised, the canonical cron spelling). Each fires within a day
#: of the machine's clock, most within minutes.
CALENDAR_RULES: tuple[tuple[str, dict[str, JSONValue], dict[str, JSONValue]], ...] = (
    (
        "cron",
        {"expression": "0-55/5 * * * *", "time_zone": "UTC"},
        {"expression": "*/5 * * * *", "timeZone": "UTC"},
    ),
    (
        "cron",
        {"expression": "0,30 * * * *", "time_zone": "Asia/Kolkata"},
        {"expression": "*/30 * * * *", "timeZone": "Asia/Kolkata"},
    ),
    (
        "cron",
        {"expression": "*/10 12-13 * * *", "time_zone": "Europe/Berlin"},
        {"expression": "*/10 12-13 * * *", "timeZone": "Europe/Berlin"},
    ),
    (
        "daily",
        {"time": "12:03:00", "time_zone": "UTC"},
        {"time": "12:03:00.000", "timeZone": "UTC"},
    ),
    (
        "daily",
        {"time": "14:30:00.25", "time_zone": "Europe/Berlin"},
        {"time": "14:30:00.250", "timeZone": "Europe/Berlin"},
    ),
    (
        "daily",
        {"time": "22:15:00", "time_zone": "Australia/Lord_Howe"},
        {"time": "22:15:00.000", "timeZone": "Australia/Lord_Howe"},
    ),
    (
        "weekly",
        {"time": "12:10:00", "time_zone": "UTC", "weekdays": [4, 3]},
        {"time": "12:10:00.000", "timeZone": "UTC", "weekdays": [3, 4]},
    ),
    (
        "weekly",
        {"time": "08:20:00", "time_zone": "America/New_York", "weekdays": [1, 2, 3, 4, 5, 6, 7]},
        {"time": "08:20:00.000", "timeZone": "America/New_York", "weekdays": [1, 2, 3, 4, 5, 6, 7]},
    ),
)
CALENDAR_KINDS = ("daily", "weekly", "cron")


def rule_wall(rule: Mapping[str, JSONValue]) -> tuple[Wall, ZoneInfo]:
    """The engine's walk and the zone of a record's rule fields."""
    zone = ZoneInfo(str(rule["timeZone"]))
    if "expression" in rule:
        return cron_wall(str(rule["expression"])), zone
    time_ms = parse_instant(f"1970-01-01T{rule['time']}Z")
    weekdays = rule.get("weekdays")
    days = None if weekdays is None else frozenset(weekdays)  # type: ignore[arg-type]
    return weekly_wall(time_ms, days), zone


@dataclass
class Version:
    """One version of a record: what its create, or an update, made it."""

    prompt: str
    #: ``afterSeconds`` (after), ``everySeconds`` (every), unused (at, calendar kinds).
    after: int
    #: The version's first target (a create's or an update's ``scheduledAt``).
    at: str
    kind: str = "after"
    #: A calendar record's rule fields, as the record holds them, and the tool argument that
    #: asked for them.
    rule: dict[str, JSONValue] | None = None
    argument: dict[str, JSONValue] | None = None
    title: str | None = None
    #: The seq of the update event that made this version (``None``: the create's).
    seq: int | None = None
    #: The update answered a view (an acknowledged edit must survive any crash).
    acknowledged: bool = False

    @property
    def target(self) -> int:
        return parse_instant(self.at)

    @property
    def recurring(self) -> bool:
        return self.kind not in ("after", "at")

    def targets(self, dispatches: Sequence[Event]) -> list[str]:
        """A recurring version's targets: the first, then the one each of its dispatches leaves
        (an every record's next anchor-aligned target after its ``acceptedAt``, a calendar
        record's ``nextAt``)."""
        found = [self.at]
        if self.rule is not None:
            return found + [event.data["nextAt"] for event in dispatches]
        interval = self.after * 1000
        for event in dispatches:
            accepted = parse_instant(event.data["acceptedAt"])
            found.append(
                format_instant(self.target + ((accepted - self.target) // interval + 1) * interval)
            )
        return found

    def record(self, schedule_id: str, scheduled_at: str | None = None) -> dict[str, JSONValue]:
        """The wire record of this version (at ``scheduled_at``, default its first target)."""
        record: dict[str, JSONValue] = {"id": schedule_id, "kind": self.kind, "prompt": self.prompt}
        if self.kind == "after":
            record["afterSeconds"] = self.after
        elif self.kind == "every":
            record["everySeconds"] = self.after
        elif self.rule is not None:
            record.update(self.rule)
        record["scheduledAt"] = self.at if scheduled_at is None else scheduled_at
        if self.title is not None:
            record["title"] = self.title
        return record


@dataclass
class Rec:
    """A record the model created: its create's version (the fields) and its updates."""

    id: str
    prompt: str
    after: int
    #: The create's ``scheduledAt``.
    at: str
    #: The create answered a view, or a later list / dispatch / storage read proved it exists.
    confirmed: bool
    deleted_step: int | None = None  # the delete answered deleted: true (or proved durable)
    maybe_deleted_step: int | None = None  # the delete answered persistence_uncertain
    order: int = 0
    kind: str = "after"
    rule: dict[str, JSONValue] | None = None
    argument: dict[str, JSONValue] | None = None
    title: str | None = None
    #: The versions updates made, in log order.
    updates: list[Version] = field(default_factory=list)

    @property
    def versions(self) -> list[Version]:
        created = Version(
            self.prompt, self.after, self.at, self.kind, self.rule, self.argument, self.title
        )
        return [created, *self.updates]

    @property
    def current(self) -> Version:
        return self.versions[-1]

    def version_index(self, seq: int) -> int:
        """The index (in :attr:`versions`) of the version a change at ``seq`` acted on."""
        found = 0
        for index, version in enumerate(self.updates, start=1):
            assert version.seq is not None
            if version.seq < seq:
                found = index
        return found

    def version_at(self, seq: int) -> Version:
        return self.versions[self.version_index(seq)]

    def split(self, dispatches: Sequence[Event]) -> list[tuple[Version, list[Event]]]:
        """Each version with its recurring dispatches."""
        out: list[tuple[Version, list[Event]]] = [(version, []) for version in self.versions]
        for event in dispatches:
            out[self.version_index(event.seq)][1].append(event)
        return out

    def current_targets(self, dispatches: Sequence[Event]) -> list[str]:
        """The current version's targets (only its own dispatches move it)."""
        return self.current.targets(self.split(dispatches)[-1][1])

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.id, self.prompt, self.at)

    def version_keys(self) -> set[tuple[str, str, str]]:
        return {(self.id, version.prompt, version.at) for version in self.versions}

    def view(self, now_ms: int, scheduled_at: str | None = None) -> dict[str, JSONValue]:
        current = self.current
        at = current.at if scheduled_at is None else scheduled_at
        view: dict[str, JSONValue] = {"id": self.id, "kind": current.kind, "prompt": current.prompt}
        if current.title is not None:
            view["title"] = current.title
        if current.kind == "after":
            view["afterSeconds"] = current.after
        elif current.kind == "every":
            view["everySeconds"] = current.after
        elif current.rule is not None:
            view.update(current.rule)
        view["scheduledAt"] = at
        view["state"] = "overdue" if now_ms >= parse_instant(at) else "scheduled"
        view["deliveryMode"] = "session-local"
        return view


def receipt_of(
    schedule_id: str, version: Version, occurrence_at: str | None = None
) -> dict[str, JSONValue]:
    receipt: dict[str, JSONValue] = {
        "scheduleId": schedule_id,
        "prompt": version.prompt,
        "occurrenceAt": version.at if occurrence_at is None else occurrence_at,
        "deliveryMode": "session-local",
    }
    if version.title is not None:
        receipt["title"] = version.title
    return receipt


@dataclass
class SessionModel:
    sid: str
    parent: str | None
    recs: dict[str, Rec] = field(default_factory=dict)
    #: Loop time since which the owner is known to be driving (all flushes succeeded since its
    #: last trigger); ``None`` when a flush of this Session failed since.
    armed_at: float | None = None
    #: Loop time at which each active record was first seen due.
    due_since: dict[str, float] = field(default_factory=dict)


@dataclass
class LogFacts:
    dispatches: dict[str, Event]  # one-shot id -> its dispatch
    followups: Counter[str]  # one-shot id -> single follow-ups
    reminder_turns: Counter[tuple[str, str, str]]  # (id, prompt, at) of reminder user/messages
    #: recurring id -> its dispatches (those with acceptedAt), in log order.
    every_dispatches: defaultdict[str, list[Event]] = field(
        default_factory=lambda: defaultdict(list)
    )
    batched: Counter[str] = field(default_factory=Counter)  # recurring id -> batch follow-ups
    deletes: dict[str, int] = field(default_factory=dict)  # id -> seq of its delete


def reminders_of(text: str) -> tuple[tuple[str, str, str], ...]:
    """The ``(id, occurrence_at, prompt)`` items of a single or batch framing (asserted to be
    one of them)."""
    single = parse_reminder_framing(text)
    if single is not None:
        return (single,)
    batch = parse_batch_framing(text)
    assert batch is not None, text
    return batch


def check_batch(events: Sequence[Event], followup: Event) -> list[Event]:
    """A batch follow-up is followed by one dispatch per listed record, in order, all with one
    ``acceptedAt``: those dispatches."""
    items = parse_batch_framing(followup.data["text"])
    assert items is not None
    following = list(events[followup.seq + 1 : followup.seq + 1 + len(items)])
    assert len(following) == len(items), f"batch {followup.seq} lost dispatches"
    accepted = {event.data.get("acceptedAt") for event in following}
    assert len(accepted) == 1, following
    (accepted_at,) = accepted
    assert isinstance(accepted_at, str)
    for (schedule_id, occurrence_at, _), event in zip(items, following, strict=True):
        assert event.type == SCHEDULE_CHANGE, event
        data = dict(event.data)
        if "occurrenceAt" in data:  # a calendar record's: it freezes what it delivered
            assert data.pop("occurrenceAt") == occurrence_at
            assert "nextAt" in data
            data.pop("nextAt")
        assert data == {
            "version": 1,
            "operation": "dispatch",
            "id": schedule_id,
            "acceptedAt": accepted_at,
        }
    return following


def log_facts(events: Sequence[Event], owned: int) -> LogFacts:
    """What the owned suffix says about dispatches, follow-ups and reminder turns."""
    facts = LogFacts({}, Counter(), Counter())
    for event in events[owned:]:
        data = event.data
        if event.type == SCHEDULE_CHANGE and data["operation"] == "dispatch":
            if "acceptedAt" in data:
                facts.every_dispatches[data["id"]].append(event)
                continue
            assert data["id"] not in facts.dispatches, f"{data['id']} dispatched twice"
            facts.dispatches[data["id"]] = event
        elif event.type == SCHEDULE_CHANGE and data["operation"] == "delete":
            facts.deletes[data["id"]] = event.seq
        elif event.type == "agent/followup" and data["source"] == SCHEDULE_SOURCE:
            if data["text"].startswith("[SCHEDULE REMINDER BATCH]"):
                for dispatch in check_batch(events, event):
                    facts.batched[dispatch.data["id"]] += 1
                continue
            parsed = parse_reminder_framing(data["text"])
            assert parsed is not None, data
            facts.followups[parsed[0]] += 1
            assert event.seq + 1 < len(events), f"follow-up {event.seq} has no dispatch after it"
            following = events[event.seq + 1]
            assert following.type == SCHEDULE_CHANGE, event
            assert following.data == {"version": 1, "operation": "dispatch", "id": parsed[0]}
        elif event.type == "user/message" and data.get("source") == SCHEDULE_SOURCE:
            for schedule_id, occurrence_at, prompt in reminders_of(data["text"]):
                facts.reminder_turns[(schedule_id, prompt, occurrence_at)] += 1
    return facts


def board_of(events: Sequence[Event], owned: int) -> dict[str, BoardEntry]:
    """The Schedule plugin's board rows the log asks for (reference): a pending row per active
    record, a delivered row for each of the newest 20 dispatches (the prompts here are shorter
    than the 200-character cut)."""
    folded = IncrementalFold(owned)
    deliveries: list[tuple[str, BoardEntry]] = []
    for event, change in folded.walk(events):
        if isinstance(change, Dispatch):
            record = folded.get(change.id)
            assert record is not None
            data = text_of(record)
            data.update(id=change.id, occurrenceAt=dispatched(record, change)[0])
            entry = BoardEntry(kind="delivered", at_ms=event.time, data=data)
            deliveries.append((f"{change.id}@{event.seq}", entry))
    rows: dict[str, BoardEntry] = {}
    for record in folded.active:
        data = text_of(record)
        if isinstance(record, EveryRecord):
            data["everySeconds"] = record.every_seconds
        elif isinstance(record, DailyRecord):
            data["rule"] = {"kind": "daily", "time": record.time, "timeZone": record.time_zone}
        elif isinstance(record, WeeklyRecord):
            data["rule"] = {
                "kind": "weekly",
                "time": record.time,
                "timeZone": record.time_zone,
                "weekdays": list(record.weekdays),
            }
        elif isinstance(record, CronRecord):
            data["rule"] = {
                "kind": "cron",
                "expression": record.expression,
                "timeZone": record.time_zone,
            }
        rows[record.id] = BoardEntry(
            kind="pending", at_ms=parse_instant(record.scheduled_at), data=data
        )
    rows.update(deliveries[-20:])
    return rows


def text_of(record: Record) -> dict[str, JSONValue]:
    data: dict[str, JSONValue] = {"text": record.prompt}
    if record.title is not None:
        data["title"] = record.title
    return data


def schedule_rows(board: Mapping[tuple[str, str], BoardEntry]) -> dict[str, BoardEntry]:
    return {key: entry for (plugin, key), entry in board.items() if plugin == "schedule"}


def check_stored_pairs(stored: StoredSession, batches: Sequence[tuple[int, int]]) -> None:
    """Every durable schedule follow-up has its dispatch right after it in the same stored
    batch, and every durable dispatch its follow-up right before it."""
    events = stored.events
    owned = stored.header.owned_from

    def same_batch(first: int, second: int) -> bool:
        return any(start <= first and second < end for start, end in batches)

    for event in events[owned:]:
        if event.type == "agent/followup" and event.data["source"] == SCHEDULE_SOURCE:
            if event.data["text"].startswith("[SCHEDULE REMINDER BATCH]"):
                following = check_batch(events, event)
                assert same_batch(event.seq, following[-1].seq), (event.seq, batches)
                continue
            parsed = parse_reminder_framing(event.data["text"])
            assert parsed is not None
            assert event.seq + 1 < len(events), f"stored follow-up {event.seq} lost its dispatch"
            following = events[event.seq + 1]
            assert following.type == SCHEDULE_CHANGE
            assert following.data == {"version": 1, "operation": "dispatch", "id": parsed[0]}
            assert same_batch(event.seq, event.seq + 1), (event.seq, batches)
        elif event.type == SCHEDULE_CHANGE and event.data["operation"] == "dispatch":
            if "acceptedAt" in event.data:
                # A recurring dispatch: a batch follow-up opens the run of dispatches it is in.
                start = event.seq - 1
                while start >= owned and events[start].type == SCHEDULE_CHANGE:
                    start -= 1
                assert start >= owned, f"stored dispatch {event.seq} has no follow-up before it"
                items = parse_batch_framing(events[start].data["text"])
                assert items is not None, f"stored dispatch {event.seq} unpaired"
                assert items[event.seq - start - 1][0] == event.data["id"]
                assert same_batch(start, event.seq), (event.seq, batches)
                continue
            before = events[event.seq - 1]
            assert before.seq >= owned, f"stored dispatch {event.seq} has no follow-up before it"
            assert before.type == "agent/followup", f"stored dispatch {event.seq} unpaired"
            parsed = parse_reminder_framing(before.data["text"])
            assert parsed is not None
            assert parsed[0] == event.data["id"]
            assert same_batch(event.seq - 1, event.seq), (event.seq, batches)


def valid_boundaries(events: Sequence[Event]) -> list[int]:
    """Fork boundaries outside any open turn."""
    depth, valid = 0, [0]
    for index, event in enumerate(events):
        if event.type == "turn/start":
            depth += 1
        elif event.type == "turn/end":
            depth = max(0, depth - 1)
        if depth == 0:
            valid.append(index + 1)
    return valid


#: What an edit changes: the title, the prompt, the same timing again, or a new timing.
edits = st.one_of(
    st.tuples(st.just("title"), st.sampled_from(["Renamed", " Spaced "])),
    st.tuples(st.just("prompt"), st.sampled_from(["again", " edited "])),
    st.tuples(st.just("same"), st.none()),
    st.tuples(st.just("at"), st.integers(1, 10_000)),
    st.tuples(st.just("every"), st.sampled_from([300, 900])),
    st.tuples(st.just("calendar"), st.sampled_from(CALENDAR_RULES)),
)
prompts = st.text(
    alphabet=st.sampled_from(list('ab Z\n\t"\\:{}é日')) | st.characters(codec="utf-8"),
    max_size=12,
)
indexes = st.integers(min_value=0, max_value=2**16)


# -- the machine ---------------------------------------------------------------------------------
class ScheduleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.exit_stack = contextlib.ExitStack()
        self.logs = self.exit_stack.enter_context(capture_logs())
        self.log_mark = 0
        self.store = BatchRecordingStore()
        self.model = RecordingModel()
        self.gen: Generation | None = None
        self.sessions: dict[str, SessionModel] = {}
        #: Every record any Session ever created: (session id, id, prompt, scheduledAt).
        self.ever: set[tuple[str, str, str, str]] = set()
        #: Every every record any Session ever created: (session id, id, prompt) -> (anchor ms,
        #: interval ms).
        self.ever_every: defaultdict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(
            list
        )
        #: Every calendar version any Session ever made: (session id, id, prompt) -> its rules.
        self.ever_calendar: defaultdict[tuple[str, str, str], list[dict[str, JSONValue]]] = (
            defaultdict(list)
        )
        self.step = 0
        self.counter = 0
        self.broken = False  # a step raised: teardown only cleans up

    # -- plumbing -------------------------------------------------------------------------------
    def _run(self, action: Callable[[], Awaitable[None]]) -> None:
        self.step += 1
        self.model.step = self.step
        self.broken = True
        self.loop.run_until_complete(self._step(action))
        self.broken = False

    async def _step(self, action: Callable[[], Awaitable[None]]) -> None:
        gen = self.gen
        mark = len(gen.flush.outcomes) if gen is not None else 0
        await action()
        await self._settle()
        if self.gen is not gen:
            mark = 0
        self._update_health(mark)

    async def _settle(self) -> None:
        """Bounded wait until no task but this one is left and every Agent is idle."""
        me = asyncio.current_task()
        assert self.gen is not None
        agents = self.gen.host.agents

        def settled() -> bool:
            # A driver waiting out a storage back-off holds its turn back: that is a settled
            # state too (its retry timer or a later acknowledged flush moves it on).
            # The model turn runs in a task of its own (so that Stop can end it): a follow-up
            # turn waiting for its turn/start to be durable waits there.
            waiting = set()
            for a in agents.all():
                if a.waiting_for_storage:
                    waiting.add(a._driving.task)
                    if a._turn is not None:
                        waiting.add(a._turn.task)
            return all(task is me or task in waiting for task in asyncio.all_tasks())

        await wait_until(settled, timeout=10)
        for agent in agents.all():
            if not agent.waiting_for_storage:
                assert agent.phase == "idle", agent
                assert not agent.inbox, agent

    def _update_health(self, mark: int) -> None:
        assert self.gen is not None
        outcomes: defaultdict[str, list[bool]] = defaultdict(list)
        for session_id, ok in self.gen.flush.outcomes[mark:]:
            outcomes[session_id].append(ok)
        for session_id, oks in outcomes.items():
            sm = self.sessions.get(session_id)
            if sm is not None:
                sm.armed_at = self.gen.clock.loop_time if all(oks) else None

    async def _boot(self) -> None:
        wall = self.gen.clock.now_ms() if self.gen is not None else START_WALL
        clock = ManualClock(wall)
        handle = ProcessStorage(self.store)
        faulty = FaultInjectingBackend(handle)
        host = LiveHost(backend=faulty, clock=clock, model=self.model)
        await host.start()
        # Put a controllable flush listener in front of the coordinator's (as harness.py does).
        flush = replace_flush_listener(host, lambda delegate: RecordingFlush(delegate=delegate))
        host.load_plugin("schedule")
        self.gen = Generation(host, clock, flush, faulty, handle)

    def _pick(self, index: int) -> SessionModel:
        models = list(self.sessions.values())
        return models[index % len(models)]

    def _new_live(self, known: set[str]) -> list[str]:
        assert self.gen is not None
        return [s.id for s in self.gen.host.sessions.live() if s.id not in known]

    def _adopt_new(self, known: set[str], parent: str | None) -> LiveAgent:
        assert self.gen is not None
        (session,) = [s for s in self.gen.host.sessions.live() if s.id not in known]
        self.sessions[session.id] = SessionModel(session.id, parent)
        return self.gen.agent(session.id)

    def _live_dispatches(self, sm: SessionModel) -> dict[str, Event]:
        assert self.gen is not None
        session = self.gen.agent(sm.sid).session
        return log_facts(session.events, session.header.owned_from).dispatches

    def _remember(self, sm: SessionModel, schedule_id: str, version: Version) -> None:
        """What a presentation of this version may show."""
        key = (sm.sid, schedule_id, version.prompt)
        self.ever.add((*key, version.at))
        if version.kind == "every":
            self.ever_every[key].append((version.target, version.after * 1000))
        if version.rule is not None:
            self.ever_calendar[key].append(version.rule)

    def _new_prompt(self, raw: str) -> str:
        self.counter += 1
        return f"{raw} #{self.counter}"

    async def _resume_all(self) -> None:
        assert self.gen is not None
        for sm in self.sessions.values():
            sm.armed_at = None
            sm.due_since.clear()
            agent = await self.gen.host.resume_session(sm.sid)
            assert agent.session.id == sm.sid

    # -- rules ----------------------------------------------------------------------------------
    @initialize(
        first=st.lists(st.tuples(prompts, st.integers(1, 10_000)), max_size=3),
    )
    def boot(self, first: list[tuple[str, int]]) -> None:
        """The first host with one Session and up to three reminders in it."""

        async def action() -> None:
            await self._boot()
            assert self.gen is not None
            agent = await self.gen.host.create_session()
            self.sessions[agent.session.id] = SessionModel(agent.session.id, None)

        self._run(action)
        for raw, after in first:
            self._create(0, raw, after)

    @precondition(lambda self: len(self.sessions) < MAX_SESSIONS)
    @rule()
    def new_session(self) -> None:
        async def action() -> None:
            assert self.gen is not None
            known = {s.id for s in self.gen.host.sessions.live()}
            # A failing header flush raises, and leaves no live "ghost" Session behind.
            try:
                await self.gen.host.create_session()
            except (OSError, StorageError):
                assert self._new_live(known) == []
                return
            self._adopt_new(known, None)

        self._run(action)

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes, raw=prompts, after=st.integers(1, 10_000))
    def create(self, index: int, raw: str, after: int) -> None:
        self._create(index, raw, after)

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes, raw=prompts, after=st.integers(1, 120))
    def create_soon(self, index: int, raw: str, after: int) -> None:
        self._create(index, raw, after)

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes, raw=prompts, after=st.integers(1, 10_000))
    def create_at(self, index: int, raw: str, after: int) -> None:
        """An absolute target ``after`` seconds from now, as an offset string."""
        self._create(index, raw, after, kind="at")

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes, raw=prompts, seconds=st.sampled_from([300, 301, 900]))
    def create_every(self, index: int, raw: str, seconds: int) -> None:
        self._create(index, raw, seconds, kind="every")

    @precondition(lambda self: bool(self.sessions))
    @rule(
        index=indexes,
        raw=prompts,
        which=st.sampled_from(CALENDAR_RULES),
        title=st.sampled_from([None, "Standup", " Padded "]),
    )
    def create_calendar(
        self,
        index: int,
        raw: str,
        which: tuple[str, dict[str, JSONValue], dict[str, JSONValue]],
        title: str | None,
    ) -> None:
        kind, argument, fields = which
        self._create(index, raw, 0, kind=kind, calendar=(argument, fields), title=title)

    def _create(
        self,
        index: int,
        raw: str,
        after: int,
        kind: str = "after",
        *,
        calendar: tuple[dict[str, JSONValue], dict[str, JSONValue]] | None = None,
        title: str | None = None,
    ) -> None:
        sm = self._pick(index)
        prompt_in = self._new_prompt(raw)

        async def action() -> None:
            assert self.gen is not None
            expected_id = allocate_id(set(sm.recs), len(sm.recs))
            now = self.gen.clock.now_ms()
            at = format_instant(now + after * 1000)
            selector: dict[str, JSONValue]
            if calendar is not None:
                selector = {kind: calendar[0]}
                first = next_after(*rule_wall(calendar[1]), now)
                assert first is not None
                at = format_instant(first)
            elif kind == "at":
                selector = {"at": at.replace("Z", "+00:00")}
            else:
                selector = {"every_seconds" if kind == "every" else "after_seconds": after}
            if title is not None:
                selector["title"] = title
            value = await self.gen.agent(sm.sid).execute_tool(
                "schedule_create", {"prompt": prompt_in, **selector}
            )
            if value == uncertain("create"):
                return  # the preflight failed: nothing was appended (a later list proves it)
            rec = Rec(
                id=expected_id,
                prompt=prompt_in.strip(),
                after=after,
                at=at,
                confirmed=value != uncertain("create", expected_id),
                order=self.counter,
                kind=kind,
                rule=None if calendar is None else calendar[1],
                argument=None if calendar is None else calendar[0],
                title=None if title is None else title.strip(),
            )
            if rec.confirmed:
                assert value == rec.view(now), (value, rec)
                assert value["state"] == "scheduled"
            sm.recs[rec.id] = rec
            self._remember(sm, rec.id, rec.current)

        self._run(action)

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes, which=indexes, change=edits)
    def update(self, index: int, which: int, change: tuple[str, Any]) -> None:
        """Edit a record (or an id that is not active): its title, its prompt, the same timing
        again, or a new ``at``, ``every_seconds`` or calendar rule."""
        sm = self._pick(index)
        candidates = [*sm.recs, "schedule-999"]
        target = candidates[which % len(candidates)]

        async def action() -> None:
            assert self.gen is not None
            agent = self.gen.agent(sm.sid)
            session = agent.session
            before = len(session.events)
            live = fold(session.events, session.header.owned_from)
            current = next((record for record in live.active if record.id == target), None)
            rec = sm.recs.get(target)
            now = self.gen.clock.now_ms()
            arguments, expected = self._edit(rec, current, change, now)
            if arguments is None:
                return
            value = await agent.execute_tool("schedule_update", {"id": target, **arguments})
            appended = [
                event
                for event in session.events[before:]
                if event.type == SCHEDULE_CHANGE and event.data["operation"] == "update"
            ]
            if value == uncertain("update", target):
                # The preflight failed (nothing appended) or the barrier (in the live log).
                if appended:
                    assert rec is not None
                    assert expected is not None
                    self._updated(sm, rec, expected, appended, acknowledged=False)
                return
            if current is None:
                code = "schedule_ended" if target in live.seen_ids else "schedule_not_found"
                assert value == {"id": target, "updated": False, "code": code}, value
                assert appended == []
                return
            assert rec is not None
            assert expected is not None
            rec.confirmed, rec.maybe_deleted_step = True, None  # it is active: not deleted
            if expected.record(target) == encode_change(Create(record=current))["schedule"]:
                assert value == {**rec.view(now, current.scheduled_at), "updated": False}, value
                assert appended == []
                return
            self._updated(sm, rec, expected, appended, acknowledged=True)
            assert value == rec.view(now), (value, rec)

        self._run(action)

    def _edit(
        self, rec: Rec | None, current: Record | None, change: tuple[str, Any], now: int
    ) -> tuple[dict[str, JSONValue] | None, Version | None]:
        """The arguments of an edit and the version it should leave (``None`` when there is
        nothing active to edit; ``(None, None)``: nothing to ask)."""
        how, what = change
        if rec is None or current is None:
            return {"prompt": "x"}, None
        version = rec.current
        base = dataclasses.replace(version, at=current.scheduled_at, seq=None, acknowledged=False)
        if how == "title":
            return {"title": what}, dataclasses.replace(base, title=what.strip())
        if how == "prompt":
            prompt = self._new_prompt(what)
            return {"prompt": prompt}, dataclasses.replace(base, prompt=prompt.strip())
        if how == "same":
            if version.kind == "after":
                return None, None  # an update takes no after_seconds
            if version.kind == "at":
                return {"at": current.scheduled_at}, base
            if version.kind == "every":
                return {"every_seconds": version.after}, base
            assert version.argument is not None
            return {version.kind: version.argument}, base
        if how == "at":
            at = format_instant(now + what * 1000)
            if version.kind == "at" and at == current.scheduled_at:
                return {"at": at}, base
            fresh = Version(base.prompt, what, at, "at", title=base.title)
            return {"at": at}, fresh
        if how == "every":
            if version.kind == "every" and version.after == what:
                return {"every_seconds": what}, base
            at = format_instant(now + what * 1000)
            return {"every_seconds": what}, Version(
                base.prompt, what, at, "every", title=base.title
            )
        kind, argument, fields = what
        if version.kind == kind and version.rule == fields:
            return {kind: argument}, base
        first = next_after(*rule_wall(fields), now)
        assert first is not None
        fresh = Version(base.prompt, 0, format_instant(first), kind, fields, argument, base.title)
        return {kind: argument}, fresh

    def _updated(
        self,
        sm: SessionModel,
        rec: Rec,
        version: Version,
        appended: Sequence[Event],
        *,
        acknowledged: bool,
    ) -> None:
        """The edit's update event is in the live log: ``version`` is the record's now."""
        (event,) = appended
        assert event.data == {
            "version": 1,
            "operation": "update",
            "id": rec.id,
            "schedule": version.record(rec.id),
        }, (event, version)
        version.seq, version.acknowledged = event.seq, acknowledged
        rec.updates.append(version)
        self._remember(sm, rec.id, version)

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes, which=indexes)
    def delete(self, index: int, which: int) -> None:
        sm = self._pick(index)
        candidates = [*sm.recs, "schedule-999", "custom"]
        target = candidates[which % len(candidates)]

        async def action() -> None:
            assert self.gen is not None
            value = await self.gen.agent(sm.sid).execute_tool("schedule_delete", {"id": target})
            rec = sm.recs.get(target)
            dispatched = target in self._live_dispatches(sm)
            if value == {"id": target, "deleted": True}:
                assert rec is not None, value
                assert rec.deleted_step is None, value
                assert not dispatched, value
                rec.deleted_step, rec.maybe_deleted_step = self.step, None
                rec.confirmed = True
            elif value == {"id": target, "deleted": False, "code": "schedule_not_found"}:
                if rec is None or rec.deleted_step is not None:
                    return
                if dispatched:
                    rec.confirmed, rec.maybe_deleted_step = True, None
                else:
                    # Not active and not dispatched: only an earlier uncertain delete explains it.
                    assert rec.maybe_deleted_step is not None, f"{target} was lost"
                    rec.deleted_step, rec.maybe_deleted_step = rec.maybe_deleted_step, None
                    rec.confirmed = True
            else:
                assert value == uncertain("delete", target), value
                if rec is not None and rec.deleted_step is None and not dispatched:
                    rec.maybe_deleted_step = rec.maybe_deleted_step or self.step

        self._run(action)

    @precondition(lambda self: bool(self.sessions))
    @rule(index=indexes)
    def list_reminders(self, index: int) -> None:
        sm = self._pick(index)

        async def action() -> None:
            assert self.gen is not None
            value = await self.gen.agent(sm.sid).execute_tool("schedule_list", {})
            if value == uncertain("list"):
                return
            assert isinstance(value, list), value
            now = self.gen.clock.now_ms()
            dispatches = self._live_dispatches(sm)
            session = self.gen.agent(sm.sid).session
            every = log_facts(session.events, session.header.owned_from).every_dispatches
            listed: dict[str, Rec] = {}
            for item in value:
                rec = sm.recs.get(item["id"])
                assert rec is not None, f"listed a record nobody created: {item}"
                assert rec.deleted_step is None, f"listed a deleted record: {item}"
                if rec.current.recurring:
                    # The next target left by the dispatches the list saw (some of this one's).
                    assert item["scheduledAt"] in rec.current_targets(every[rec.id]), (item, rec)
                    assert item == rec.view(now, item["scheduledAt"]), (item, rec)
                else:
                    assert item == rec.view(now), (item, rec)
                assert rec.id not in dispatches
                listed[rec.id] = rec
            orders = [rec.order for rec in listed.values()]
            assert orders == sorted(orders), "not in creation order"
            for rec in sm.recs.values():
                if rec.id in listed or rec.id in dispatches:
                    rec.confirmed, rec.maybe_deleted_step = True, None
                elif rec.deleted_step is None:
                    assert rec.maybe_deleted_step is not None, f"{rec.id} was lost: {value}"
                    rec.deleted_step, rec.maybe_deleted_step = rec.maybe_deleted_step, None
                    rec.confirmed = True

        self._run(action)

    @precondition(lambda self: bool(self.sessions))
    @rule(
        index=indexes, text=st.sampled_from(["list reminders", "hello"]), seconds=st.integers(0, 90)
    )
    def chat(self, index: int, text: str, seconds: int) -> None:
        """A user turn (busy Agent) while the clock may move under it."""
        sm = self._pick(index)

        async def action() -> None:
            assert self.gen is not None
            self.gen.agent(sm.sid).send(text)
            if seconds:
                self.gen.clock.advance(seconds)

        self._run(action)

    @rule(
        failure=st.one_of(
            st.tuples(
                st.just("flush"),
                st.lists(st.sampled_from(["ok", "raise", "false"]), min_size=1, max_size=4).filter(
                    lambda modes: any(mode != "ok" for mode in modes)
                ),
            ),
            st.tuples(st.sampled_from(["append", "after_commit"]), st.integers(1, 3)),
        )
    )
    def inject_failure(self, failure: tuple[str, list[str] | int]) -> None:
        """The next flushes fail (raise, or answer without acknowledging: preflight or barrier,
        whoever flushes next), or the next storage writes fail (before or after committing)."""
        kind, what = failure

        async def action() -> None:
            assert self.gen is not None
            if kind == "flush":
                assert isinstance(what, list)
                self.gen.flush.once.extend(what)
            elif kind == "append":
                assert isinstance(what, int)
                self.gen.faulty.plan.fail_appends += what
            else:
                assert isinstance(what, int)
                self.gen.faulty.plan.fail_after_commit += what

        self._run(action)

    @rule(
        move=st.one_of(
            st.tuples(
                st.just("advance"), st.sampled_from([1, 59, 60, 61]) | st.integers(1, 12_000)
            ),
            st.tuples(st.just("rollback"), st.integers(1, 3_600)),
            st.tuples(st.just("suspend"), st.integers(1, 86_400)),
        )
    )
    def clock(self, move: tuple[str, int]) -> None:
        """Real time passes (loop + wall), the wall clock is set back up to an hour, or the
        machine sleeps up to a day (the wall clock jumps, loop timers stall)."""
        kind, seconds = move

        async def action() -> None:
            assert self.gen is not None
            clock = self.gen.clock
            if kind == "advance":
                clock.advance(seconds)
            elif kind == "rollback":
                clock.set_wall(clock.now_ms() - seconds * 1000)
            else:
                clock.suspend(seconds)

        self._run(action)

    @precondition(lambda self: 0 < len(self.sessions) < MAX_SESSIONS)
    @rule(index=indexes, boundary=st.none() | indexes)
    def fork(self, index: int, boundary: int | None) -> None:
        parent = self._pick(index)

        async def action() -> None:
            assert self.gen is not None
            host = self.gen.host
            events = self.gen.agent(parent.sid).session.events
            if boundary is not None:
                valid = valid_boundaries(events)
                at: int | None = valid[boundary % len(valid)]
            else:
                at = None
            known = {s.id for s in host.sessions.live()}
            # A failing first flush of the child raises, and leaves no live child behind.
            try:
                await host.fork_session(parent.sid, at)
            except (OSError, StorageError):
                assert self._new_live(known) == []
                return
            child = self._adopt_new(known, parent.sid)
            assert child.session.header.parent_session == parent.sid
            owned = child.session.header.owned_from
            assert fold(child.session.events, owned).active == ()
            assert self.gen.plugin.folds.of(child.session).active == ()
            value = await child.execute_tool("schedule_list", {})
            assert value == [] or value == uncertain("list"), value

        self._run(action)

    @precondition(lambda self: bool(self.sessions))
    @rule(
        kind=st.sampled_from(
            [
                "graceful",
                "crash",
                "crash_in_create",
                "crash_in_create_barrier",
                "crash_in_update",
                "crash_in_update_barrier",
                "crash_in_dispatch",
            ]
        ),
        raw=prompts,
        index=indexes,
    )
    def restart(self, kind: str, raw: str, index: int) -> None:
        if kind == "graceful":
            self._graceful_restart()
        else:
            self._crash_restart(kind, raw, index)

    def _graceful_restart(self) -> None:
        """Close the host (final flushes on healthy storage), boot a new one, resume all."""

        async def action() -> None:
            gen = self.gen
            assert gen is not None
            # A graceful shutdown runs on healthy storage: its final flush commits everything.
            gen.flush.once.clear()
            gen.faulty.plan = FaultPlan()
            live = {sid: gen.agent(sid).session for sid in self.sessions}
            await gen.host.close()
            await self._boot()
            assert self.gen is not None
            for sid, session in live.items():
                stored = await self.gen.host.inspect(sid)
                assert stored is not None, sid
                assert stored.events == tuple(session.events), "graceful close lost events"
            await self._resume_all()

        self._run(action)

    def _crash_restart(self, kind: str, raw: str, index: int) -> None:
        """Abandon the host without its final flush. ``crash`` dies at a settled point;
        ``crash_in_create`` / ``crash_in_create_barrier`` die while a create waits in its
        preflight / barrier flush, ``crash_in_update`` / ``crash_in_update_barrier`` while an
        edit of a reminder's time does; ``crash_in_dispatch`` dies after a reminder was
        dispatched while every flush since (the barrier, the turn's durability proof) still
        hangs."""

        async def action() -> None:
            gen = self.gen
            assert gen is not None
            sm = self._pick(index)
            task = None
            if kind in ("crash_in_create", "crash_in_create_barrier"):
                task = await self._create_in_flight(gen, sm, raw, kind == "crash_in_create_barrier")
            elif kind in ("crash_in_update", "crash_in_update_barrier"):
                task = await self._update_in_flight(gen, sm, kind == "crash_in_update_barrier")
            elif kind == "crash_in_dispatch":
                await self._dispatch_in_flight(gen, sm)
            gen.handle.crashed = True  # from here on nothing this host does reaches storage
            if task is not None:
                task.cancel()  # the process died: the tool call never answers
                await asyncio.gather(task, return_exceptions=True)
            gen.flush.gate.set()  # flushes still hanging now fail against the dead handle
            live = {sid: gen.agent(sid).session for sid in self.sessions}
            await gen.host.close()  # disposes Agents and owners; its final flushes fail
            await self._boot()
            assert self.gen is not None
            await self._resync_after_crash({sid: tuple(s.events) for sid, s in live.items()})
            await self._resume_all()

        self._run(action)

    async def _create_in_flight(
        self, gen: Generation, sm: SessionModel, raw: str, at_barrier: bool
    ) -> asyncio.Task[JSONValue]:
        gen.flush.once[:] = ["ok", "gate"] if at_barrier else ["gate"]
        gen.faulty.plan = FaultPlan()
        before = gen.flush.count
        task = asyncio.get_running_loop().create_task(
            gen.agent(sm.sid).execute_tool(
                "schedule_create", {"prompt": self._new_prompt(raw), "after_seconds": 5}
            )
        )
        await wait_until(lambda: gen.flush.count >= before + 1 + at_barrier)
        for _ in range(20):
            await asyncio.sleep(0)
        assert not task.done()
        if at_barrier:
            # The record is in the log and only its barrier hangs: any other flush of the
            # Session (a turn's checkpoint, say) may still make it durable before the crash.
            # Nobody was told either way, so it is an uncertain create, settled by the resync.
            session = gen.agent(sm.sid).session
            change = next(
                event.data
                for event in reversed(session.events)
                if event.type == SCHEDULE_CHANGE and event.data["operation"] == "create"
            )
            record = change["schedule"]
            rec = Rec(
                id=record["id"],
                prompt=record["prompt"],
                after=record["afterSeconds"],
                at=record["scheduledAt"],
                confirmed=False,
                order=self.counter,
            )
            sm.recs[rec.id] = rec
            self.ever.add((sm.sid, *rec.key))
        return task

    async def _update_in_flight(
        self, gen: Generation, sm: SessionModel, at_barrier: bool
    ) -> asyncio.Task[JSONValue] | None:
        """An edit moving the first active reminder to 30 s from now, caught in its preflight or
        barrier flush (``None``: nothing is active, an ordinary crash)."""
        session = gen.agent(sm.sid).session
        active = fold(session.events, session.header.owned_from).active
        if not active:
            return None
        current = active[0]
        rec = sm.recs[current.id]
        arguments, expected = self._edit(rec, current, ("at", 30), gen.clock.now_ms())
        assert arguments is not None
        assert expected is not None
        gen.flush.once[:] = ["ok", "gate"] if at_barrier else ["gate"]
        gen.faulty.plan = FaultPlan()
        before, length = gen.flush.count, len(session.events)
        task = asyncio.get_running_loop().create_task(
            gen.agent(sm.sid).execute_tool("schedule_update", {"id": rec.id, **arguments})
        )
        await wait_until(lambda: gen.flush.count >= before + 1 + at_barrier)
        for _ in range(20):
            await asyncio.sleep(0)
        assert not task.done()
        appended = [
            event
            for event in session.events[length:]
            if event.type == SCHEDULE_CHANGE and event.data["operation"] == "update"
        ]
        if (
            at_barrier
            and expected.record(rec.id) != encode_change(Create(record=current))["schedule"]
        ):
            # The update is in the live log and only its barrier hangs: nobody was told, so
            # the crash may keep it or not; the resync settles which.
            self._updated(sm, rec, expected, appended, acknowledged=False)
        else:
            assert appended == []
        return task

    async def _dispatch_in_flight(self, gen: Generation, sm: SessionModel) -> None:
        session = gen.agent(sm.sid).session
        active = fold(session.events, session.header.owned_from).active
        if not active:
            return  # nothing to dispatch: an ordinary crash

        def count() -> int:
            facts = log_facts(session.events, session.header.owned_from)
            return len(facts.dispatches) + sum(map(len, facts.every_dispatches.values()))

        dispatched = count()
        target = min(parse_instant(record.scheduled_at) for record in active)
        gen.flush.once[:] = ["ok"] + ["gate"] * 32  # the owner's preflight passes, then all hang
        gen.faulty.plan = FaultPlan()
        gen.clock.suspend(max(0, target - gen.clock.now_ms()) / 1000)
        gen.clock.advance(MAX_SEGMENT)  # the owner's segment timer fires: it is due

        def dispatched_more() -> bool:
            return count() > dispatched

        def reminder_turn_started() -> bool:
            """The newest dispatch's reminder turn has a ``turn/start`` in the live log."""
            events = session.events
            last = max(
                i
                for i, e in enumerate(events)
                if e.type == SCHEDULE_CHANGE and e.data["operation"] == "dispatch"
            )
            while events[last].type != "agent/followup":  # the batch's dispatches precede
                last -= 1
            message_id = events[last].data["messageId"]
            return any(
                e.type == "turn/start" and e.data == {"messageId": message_id} for e in events
            )

        # Another Session's owner may take the one passing flush: then nothing is dispatched.
        with contextlib.suppress(TimeoutError):
            await wait_until(dispatched_more, timeout=0.5)
        if dispatched_more():
            # Seen once: while every flush since the dispatch hangs, its reminder turn does not
            # start (nothing reaches the model or the stream before the dispatch is durable).
            presented = len(self.model.presentations)
            for _ in range(50):
                await asyncio.sleep(0)
            assert not reminder_turn_started(), "a reminder turn started before its dispatch"
            assert len(self.model.presentations) == presented

    async def _resync_after_crash(self, live_logs: dict[str, tuple[Event, ...]]) -> None:
        """Only what the crashed host had acknowledged survives: check the acknowledged part,
        and settle every uncertain answer against what storage holds."""
        assert self.gen is not None
        for sid, sm in list(self.sessions.items()):
            live = live_logs[sid]
            stored = await self.gen.host.inspect(sid)
            if stored is None:
                assert not any(rec.confirmed for rec in sm.recs.values()), (
                    f"session {sid} acknowledged reminders but never reached storage"
                )
                del self.sessions[sid]
                continue
            assert stored.events == live[: len(stored.events)], "storage is not a live prefix"
            owned = stored.header.owned_from
            creates: dict[str, dict] = {}
            deletes: set[str] = set()
            updated: defaultdict[str, list[int]] = defaultdict(list)
            for event in stored.events[owned:]:
                if event.type != SCHEDULE_CHANGE:
                    continue
                if event.data["operation"] == "create":
                    creates[event.data["schedule"]["id"]] = event.data["schedule"]
                elif event.data["operation"] == "delete":
                    deletes.add(event.data["id"])
                elif event.data["operation"] == "update":
                    updated[event.data["id"]].append(event.seq)
            for rec in list(sm.recs.values()):
                record = creates.get(rec.id)
                durable = record is not None and (record["prompt"], record["scheduledAt"]) == (
                    rec.prompt,
                    rec.at,
                )
                if rec.confirmed:
                    assert durable, f"acknowledged create {rec.key} lost in a crash"
                elif durable:
                    rec.confirmed = True
                else:
                    del sm.recs[rec.id]  # an uncertain create that never became durable
                    continue
                # Only the durable edits stay; an acknowledged one always is.
                for version in rec.updates:
                    assert version.seq is not None
                    durable_edit = version.seq < len(stored.events)
                    assert durable_edit or not version.acknowledged, (
                        f"acknowledged edit of {rec.id} at seq {version.seq} lost in a crash"
                    )
                rec.updates = [
                    version
                    for version in rec.updates
                    if version.seq is not None and version.seq < len(stored.events)
                ]
                assert updated.pop(rec.id, []) == [v.seq for v in rec.updates], (
                    f"storage holds edits of {rec.id} nobody asked for"
                )
                if rec.deleted_step is not None:
                    assert rec.id in deletes, f"acknowledged delete of {rec.id} lost in a crash"
                elif rec.maybe_deleted_step is not None:
                    if rec.id in deletes:
                        rec.deleted_step = rec.maybe_deleted_step
                    rec.maybe_deleted_step = None
            phantom = set(creates) - set(sm.recs)
            assert not phantom, f"storage holds creates nobody was told about: {phantom}"
            assert not updated, f"storage holds edits nobody asked for: {dict(updated)}"

    # -- invariants -----------------------------------------------------------------------------
    @invariant()
    def reference_model_holds(self) -> None:
        if self.gen is not None:
            self.loop.run_until_complete(self._check())

    async def _check(self) -> None:
        gen = self.gen
        assert gen is not None
        host, plugin = gen.host, gen.plugin
        now, loop_time = gen.clock.now_ms(), gen.clock.loop_time
        # Every wait is a bounded segment (owner timers; the coordinator's batching window).
        assert all(delay <= MAX_SEGMENT for delay in gen.clock.pending_delays())
        for entry in self.logs[self.log_mark :]:
            assert entry["event"] != "owner.faulted", entry
            assert entry["log_level"] not in ("error", "critical") or (
                entry["event"] in TOLERATED_ERRORS
            ), entry
        self.log_mark = len(self.logs)

        for sm in self.sessions.values():
            agent = gen.agent(sm.sid)
            session = agent.session
            assert host.sessions.get(sm.sid) is session
            assert not plugin.owners[agent].faulted
            events, owned = session.events, session.header.owned_from
            reference = fold(events, owned)
            assert plugin.folds.of(session).active == reference.active
            # The board rows are in step with the fold (a fork's start with none).
            assert schedule_rows(host.sessions.posted(session)) == board_of(events, owned)
            active = {record.id: record for record in reference.active}
            facts = log_facts(events, owned)
            assert set(facts.followups) == set(facts.dispatches)
            assert all(count == 1 for count in facts.followups.values()), facts.followups
            assert all(count == 1 for count in facts.reminder_turns.values()), facts
            assert facts.batched == Counter(
                {rid: len(found) for rid, found in facts.every_dispatches.items()}
            )
            # A Session's fold holds only its own records: a fork inherits no active work.
            for record in reference.active:
                rec = sm.recs.get(record.id)
                assert rec is not None, f"{sm.sid} folds a record it never created: {record}"
                expected = rec.current.at
                if rec.current.recurring:
                    # No drift: the next anchor-aligned (or rule) target after the last decision.
                    expected = rec.current_targets(facts.every_dispatches[rec.id])[-1]
                wire = encode_change(Create(record=record))["schedule"]
                assert wire == rec.current.record(rec.id, expected), (record, rec)
                assert rec.deleted_step is None, f"deleted {rec.id} is active again"
            assert set(facts.dispatches) <= set(sm.recs), facts.dispatches
            assert set(facts.every_dispatches) <= set(sm.recs), facts.every_dispatches
            for rec in sm.recs.values():
                self._check_rec(rec, facts, events, owned, rec.id in active)
            for event in events:
                if event.type == SCHEDULE_CHANGE and event.data["operation"] == "dispatch":
                    present_dispatch(events, event.seq, owned)  # inherited ones decode too
            # Liveness: due while live, idle and healthy -> dispatched within one segment.
            due = {
                rid for rid, record in active.items() if parse_instant(record.scheduled_at) <= now
            }
            sm.due_since = {rid: sm.due_since.get(rid, loop_time) for rid in due}
            if sm.armed_at is not None:
                for rid, since in sm.due_since.items():
                    assert loop_time < max(since, sm.armed_at) + MAX_SEGMENT, (
                        f"{rid} due since loop {since} (healthy since {sm.armed_at}) "
                        f"still undispatched at loop {loop_time}"
                    )

        counts: Counter[tuple[str, str, str, str]] = Counter()
        for shown in self.model.presentations:
            key = (shown.session_id, shown.schedule_id, shown.prompt, shown.occurrence_at)
            assert shown.source == SCHEDULE_SOURCE
            occurrence = parse_instant(shown.occurrence_at)
            grids = self.ever_every.get(key[:3], [])
            rules = self.ever_calendar.get(key[:3], [])
            assert (
                key in self.ever
                or any((occurrence - anchor) % interval == 0 for anchor, interval in grids)
                # An occurrence of its rule: never an hour off.
                or any(next_after(*rule_wall(r), occurrence - 1) == occurrence for r in rules)
            ), f"presented a reminder its Session never created: {key}"
            counts[key] += 1
            sm = self.sessions.get(shown.session_id)
            rec = sm.recs.get(shown.schedule_id) if sm is not None else None
            if rec is not None and key[1:] in rec.version_keys() and rec.deleted_step is not None:
                assert shown.step < rec.deleted_step, f"presented {key} after its delete"
        for key, count in counts.items():
            # Seen once: a crash never makes the model present a reminder a second time.
            assert count <= 1, f"{key} presented {count} times"

        for summary in await self.store.list_sessions():
            session_id = summary.header.id
            stored = await self.store.load(session_id)
            assert stored is not None
            fold(stored.events, stored.header.owned_from)  # every stored log folds
            # Storage's board agrees with its log, whatever crashed when.
            assert schedule_rows(stored.board) == board_of(stored.events, stored.header.owned_from)
            check_stored_pairs(stored, self.store.batches[session_id])
            live_session = host.sessions.get(session_id)
            if live_session is not None:
                assert tuple(live_session.events[: len(stored.events)]) == stored.events

    def _check_rec(
        self, rec: Rec, facts: LogFacts, events: Sequence[Event], owned: int, active: bool
    ) -> None:
        """Each dispatch of ``rec`` against the version it acted on: a one-shot's at or after
        its target; an every version's decided at or after its target, presenting the latest
        occurrence at or before it (never a backlog); a calendar version's delivering the rule's
        latest occurrence at or before its decision and no earlier than the target, the rule's
        first occurrence after the decision frozen as the next target. None after a delete; an
        acknowledged record stays active until deleted, delivered for good or ended."""
        deleted = facts.deletes.get(rec.id)
        ended = False
        for version, dispatches in rec.split(facts.every_dispatches.get(rec.id, [])):
            assert not dispatches or version.recurring, (rec.id, dispatches)
            for target, dispatch in zip(version.targets(dispatches), dispatches, strict=False):
                assert target is not None, f"{rec.id} dispatched after its rule ended"
                accepted = parse_instant(dispatch.data["acceptedAt"])
                assert accepted >= parse_instant(target), f"{rec.id} decided before its target"
                if version.rule is None:
                    interval = version.after * 1000
                    occurrence = version.target + (accepted - version.target) // interval * interval
                    assert occurrence >= parse_instant(target)
                else:
                    wall, zone = rule_wall(version.rule)
                    occurrence = latest_due(wall, zone, parse_instant(target), accepted)
                    assert dispatch.data["occurrenceAt"] == format_instant(occurrence), dispatch
                    following = next_after(wall, zone, accepted)
                    assert dispatch.data["nextAt"] == (
                        None if following is None else format_instant(following)
                    ), dispatch
                    ended = following is None
                assert dispatch.time >= occurrence, f"{rec.id} fired early"
                receipt = present_dispatch(events, dispatch.seq, owned)
                assert receipt == receipt_of(rec.id, version, format_instant(occurrence)), receipt
                assert deleted is None or dispatch.seq < deleted, f"deleted {rec.id} was dispatched"
        dispatch = facts.dispatches.get(rec.id)
        if dispatch is not None:
            version = rec.version_at(dispatch.seq)
            assert not version.recurring, (rec.id, dispatch)
            assert dispatch.time >= version.target, f"{rec.id} fired early"
            assert present_dispatch(events, dispatch.seq, owned) == receipt_of(rec.id, version)
            assert rec.deleted_step is None, f"deleted {rec.id} was dispatched"
            ended = True
        if rec.confirmed and rec.maybe_deleted_step is None and rec.deleted_step is None:
            assert active or ended, f"acknowledged {rec.key} was lost"

    def teardown(self) -> None:
        try:
            if self.gen is not None:
                self.loop.run_until_complete(self._shutdown())
        finally:
            try:
                self.loop.run_until_complete(self._cancel_leftovers())
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()
                self.exit_stack.close()

    async def _shutdown(self) -> None:
        assert self.gen is not None
        self.gen.flush.once.clear()
        self.gen.flush.gate.set()
        self.gen.faulty.plan = FaultPlan()
        await self.gen.host.close()
        if not self.broken:
            me = asyncio.current_task()
            assert [task for task in asyncio.all_tasks() if task is not me] == []

    async def _cancel_leftovers(self) -> None:
        me = asyncio.current_task()
        leftovers = [task for task in asyncio.all_tasks() if task is not me]
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)


def test_schedule_state_machine() -> None:
    run_state_machine_as_test(
        ScheduleMachine,
        settings=settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None),
    )


#: One step of a replayed run: a rule of the machine with its arguments bound.
Step = Callable[[ScheduleMachine], None]


def replay(first: list[tuple[str, int]], *steps: Step) -> None:
    """Run one sequence the machine found, as Hypothesis prints it: boot with ``first``, then
    each step, with the reference model checked after the boot and after every step but the
    last, which the teardown follows."""
    state = ScheduleMachine()
    state.boot(first=first)
    state.reference_model_holds()
    *checked, last = steps
    for step in checked:
        step(state)
        state.reference_model_holds()
    last(state)
    state.teardown()


def test_a_create_caught_at_its_barrier_may_still_become_durable_through_another_flush() -> None:
    # Found by the machine: the record is in the log while its barrier hangs, and the earlier
    # turn's checkpoint commits it before the crash. Nobody was told, so it is uncertain, not
    # a phantom.
    replay(
        [],
        partial(ScheduleMachine.list_reminders, index=0),
        partial(ScheduleMachine.restart, index=0, kind="crash", raw=""),
        partial(ScheduleMachine.inject_failure, failure=("flush", ["raise"])),
        partial(ScheduleMachine.chat, index=0, seconds=0, text="hello"),
        partial(ScheduleMachine.restart, index=0, kind="crash_in_create_barrier", raw=""),
    )


def test_a_turn_waiting_for_storage_in_its_own_task_is_settled() -> None:
    # Found by the machine: a follow-up's model call waits for its turn/start in the turn's
    # own task (the one Stop cancels), which is as settled as a driver waiting for storage.
    replay(
        [("", 1)],
        *[partial(ScheduleMachine.new_session)] * 4,
        partial(ScheduleMachine.chat, index=0, seconds=0, text="list reminders"),
        partial(ScheduleMachine.create_every, index=450, raw="", seconds=300),
        partial(ScheduleMachine.inject_failure, failure=("append", 1)),
        partial(ScheduleMachine.inject_failure, failure=("flush", ["ok", "ok", "raise", "ok"])),
        partial(ScheduleMachine.clock, move=("advance", 1)),
    )
