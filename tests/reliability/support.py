"""A real in-process host (Schedule plugin, manual clock) on real SQLite, behind every fault
injector the reliability tests use, plus the audit that counts the reminders a log lost,
duplicated or corrupted."""

from __future__ import annotations

import errno
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_hookspecs import Event, JSONValue
from dsh_host import LiveAgent, LiveHost
from dsh_host.persistence import SQLiteBackend, events_identical
from dsh_host.testing import FaultInjectingBackend, ManualClock
from dsh_schedule import SCHEDULE_CHANGE, ScheduleLogError, fold, parse_instant
from tests.chaos.harness import analyse
from tests.schedule.harness import Harness, boot_sqlite, make_harness, settle_quiet

#: What :func:`audit_events` finds in a sound log.
CLEAN = {"lost": 0, "duplicated": 0, "corrupted": 0}

#: One-shot faults, each hitting exactly one flush.
FAULTS = {
    "write-fails": "the SQLite append raises before writing (FaultInjectingBackend)",
    "commit-unacked": "the write commits, then the append raises anyway (acknowledgement lost)",
    "enospc": "the SQLite writer thread raises OSError(ENOSPC) for the whole group commit",
    "flush-raises": "the flush listener rejects (raises)",
    "flush-unacked": "the flush listener answers without acknowledging (not True)",
}


@dataclass
class Rig:
    h: Harness
    backend: FaultInjectingBackend
    sqlite: SQLiteBackend
    data: Path
    injected: Counter[str] = field(default_factory=Counter)
    failed_flushes: int = 0
    uncertain_answers: int = 0
    enospc_left: int = 0
    _targets: list[tuple[int, str]] = field(default_factory=list)

    @property
    def host(self) -> LiveHost:
        return self.h.host

    @property
    def clock(self) -> ManualClock:
        return self.h.clock

    # -- faults -----------------------------------------------------------------------------------
    def inject(self, kind: str) -> None:
        """Arm one fault of ``kind`` for the very next flush."""
        self.injected[kind] += 1
        if kind == "write-fails":
            self.backend.plan.fail_appends += 1
        elif kind == "commit-unacked":
            self.backend.plan.fail_after_commit += 1
        elif kind == "enospc":
            self.enospc_left += 1
        elif kind == "flush-raises":
            self.h.flush.once.append("raise")
        elif kind == "flush-unacked":
            self.h.flush.once.append("false")
        else:  # pragma: no cover - a typo in a test
            raise ValueError(kind)

    def at_flush(self, n: int, kind: str) -> None:
        """Inject ``kind`` into the ``n``-th flush from now (1 = the next one)."""
        self._targets.append((self.h.flush.count + n, kind))

    def _before_flush(self, count: int) -> None:
        for target in [t for t in self._targets if t[0] == count]:
            self._targets.remove(target)
            self.inject(target[1])

    def pending_faults(self) -> bool:
        plan = self.backend.plan
        return bool(
            self._targets
            or plan.fail_appends
            or plan.fail_after_commit
            or self.enospc_left
            or self.h.flush.once
        )

    # -- tools ------------------------------------------------------------------------------------
    async def call(self, agent: LiveAgent, name: str, arguments: JSONValue) -> JSONValue:
        value = await self.h.call(agent, name, arguments)
        if isinstance(value, dict) and value.get("code") == "persistence_uncertain":
            self.uncertain_answers += 1
        return value

    async def create(self, agent: LiveAgent, prompt: str, after: int) -> str:
        value = await self.call(
            agent, "schedule_create", {"prompt": prompt, "after_seconds": after}
        )
        assert isinstance(value, dict), value
        assert "id" in value, value
        await self.h.settle(agent)
        return str(value["id"])

    # -- the audit --------------------------------------------------------------------------------
    async def audit(self, agent: LiveAgent, dispatched: list[str]) -> dict[str, int]:
        """After recovery: storage holds exactly the live log, and it dispatched exactly
        ``dispatched``, in that order. Returns what :func:`audit_events` counts in the stored
        log (the callers assert it is :data:`CLEAN`)."""
        await self.h.settle(agent)
        assert await self.host.sessions.flush(agent.session) is True
        stored = await self.host.inspect(agent.session.id)
        assert stored is not None
        live = agent.session.events
        assert len(stored.events) == len(live)
        assert all(events_identical(a, b) for a, b in zip(stored.events, live, strict=True))
        events = list(stored.events)
        assert dispatch_ids(events) == dispatched
        return audit_events(
            events, agent.session.header.owned_from, dispatched, now_ms=self.clock.now_ms()
        )

    async def reboot_delivers_nothing_new(self, agent: LiveAgent) -> None:
        """A new host on the same folder resumes the Session and delivers nothing again."""
        session_id = agent.session.id
        wall = self.clock.now_ms()
        before = await self.host.inspect(session_id)
        assert before is not None
        await self.host.close()
        host, clock = await boot_sqlite(self.data, wall + 1000)
        try:
            resumed = await host.resume_session(session_id)
            await settle_quiet(host, [resumed])
            clock.advance(3600)
            await settle_quiet(host, [resumed])
            events = resumed.session.events
            # Only the resume's own session/end-seed was appended.
            assert [e.type for e in events[len(before.events) :]] == ["session/end-seed"]
        finally:
            await host.close()


def dispatch_ids(events: Sequence[Event]) -> list[str]:
    """The schedule ids of the log's dispatches, in log order."""
    return [
        str(e.data["id"])
        for e in events
        if e.type == SCHEDULE_CHANGE
        and isinstance(e.data, dict)
        and e.data.get("operation") == "dispatch"
    ]


def audit_events(
    events: Sequence[Event],
    owned_from: int,
    dispatched: Collection[str] = (),
    *,
    now_ms: int | None = None,
) -> dict[str, int]:
    """Count, never assert, what one stored log got wrong about its reminders (owned part):

    * ``lost``: reminders that were owed and never delivered - a create whose ``tool/result``
      was a success view (or a create in the log) with neither a dispatch nor a delete, once it
      is due at ``now_ms`` (``None``: every create must have ended); a success view whose create
      is not in the log; an id of ``dispatched`` that was not dispatched; a dispatched reminder
      none of whose follow-ups started a turn;
    * ``duplicated``: reminders with more than one follow-up, more than one dispatch or delete,
      or a follow-up whose turn started more than once;
    * ``corrupted``: the log does not decode or fold (counted once), plus every follow-up
      without its dispatch, dispatch without its follow-up, unreadable reminder follow-up and
      end without a create (:func:`tests.chaos.harness.analyse`).
    """
    corrupted = 0
    try:
        fold(events, owned_from)
    except ScheduleLogError:
        corrupted += 1
    analysis = analyse(events, owned_from)
    corrupted += sum(1 for category, _ in analysis.problems if category == "corrupted")

    duplicated: set[str] = set()
    for schedule_id, message_ids in analysis.followups_by_id.items():
        if len(message_ids) > 1:
            duplicated.add(schedule_id)
    for schedule_id, ends in analysis.terminals.items():
        if len(ends) > 1:
            duplicated.add(schedule_id)
    for message_id, (_, schedule_id) in analysis.followups.items():
        if len(analysis.turn_starts.get(message_id, ())) > 1:
            duplicated.add(schedule_id)

    lost: set[str] = set()
    for schedule_id, (_, record) in analysis.creates.items():
        if schedule_id in analysis.terminals:
            continue
        due = record.get("scheduledAt")
        if now_ms is None or not isinstance(due, str) or parse_instant(due) <= now_ms:
            lost.add(schedule_id)
    for schedule_id in _created_ids(events, owned_from):
        if schedule_id not in analysis.creates:
            lost.add(schedule_id)
    delivered = set(analysis.dispatched())
    lost.update(schedule_id for schedule_id in dispatched if schedule_id not in delivered)
    for schedule_id in delivered:
        message_ids = analysis.followups_by_id.get(schedule_id, [])
        if message_ids and not any(analysis.turn_starts.get(m) for m in message_ids):
            lost.add(schedule_id)
    return {"lost": len(lost), "duplicated": len(duplicated), "corrupted": corrupted}


def _created_ids(events: Sequence[Event], owned_from: int) -> list[str]:
    """The ids of the owned ``schedule_create`` calls whose ``tool/result`` was a success view."""
    ids = []
    for event in events[owned_from:]:
        data = event.data
        if event.type != "tool/result" or not isinstance(data, dict):
            continue
        value = data.get("value")
        if (
            data.get("name") == "schedule_create"
            and isinstance(value, dict)
            and "code" not in value
            and isinstance(value.get("id"), str)
        ):
            ids.append(str(value["id"]))
    return ids


async def make_rig(tmp_path: Path, *, config: dict[str, JSONValue] | None = None) -> Rig:
    data = tmp_path / "data"
    sqlite = SQLiteBackend(data)
    backend = FaultInjectingBackend(sqlite)
    h = await make_harness(backend=backend, config=config)
    rig = Rig(h=h, backend=backend, sqlite=sqlite, data=data)
    h.flush.before = rig._before_flush
    delegate = h.flush.delegate

    async def counted(session: Any) -> object:
        try:
            return await delegate(session)  # type: ignore[misc]
        except Exception:
            rig.failed_flushes += 1
            raise

    h.flush.delegate = counted
    write_batch = sqlite._write_batch

    def full_disk(batch: list[Any]) -> Any:
        # Runs on the SQLite writer thread, like a real write hitting a full disk.
        if rig.enospc_left:
            rig.enospc_left -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        return write_batch(batch)

    sqlite._write_batch = full_disk  # type: ignore[method-assign]
    return rig


async def close_rig(rig: Rig) -> None:
    rig._targets.clear()
    rig.backend.plan.fail_appends = rig.backend.plan.fail_after_commit = 0
    rig.enospc_left = 0
    rig.h.flush.mode = "ok"
    rig.h.flush.once.clear()
    rig.h.flush.gate.set()
    if rig.backend.plan.gate is not None:
        rig.backend.plan.gate.set()  # let waiting writes through before the final flushes
    await rig.host.close()
