"""A real in-process host (Schedule plugin, manual clock) on real SQLite, behind every fault
injector the reliability tests use, plus the audit that says whether a reminder was lost,
duplicated or corrupted."""

from __future__ import annotations

import errno
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_hookspecs import JSONValue
from dsh_host import Host, LiveAgent
from dsh_host._records import events_identical
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from dsh_schedule import MESSAGES, fold
from tests.chaos.harness import analyse
from tests.schedule.harness import Harness, make_harness

UNCERTAIN = MESSAGES["persistence_uncertain"]

#: One-shot faults, each hitting exactly one flush.
FAULTS = {
    "write-fails": "the SQLite append raises before writing (FaultInjectingBackend)",
    "commit-unacked": "the write commits, then the append raises anyway (acknowledgement lost)",
    "enospc": "the SQLite writer thread raises OSError(ENOSPC) for the whole group commit",
    "flush-raises": "the flush listener rejects (raises)",
    "flush-unacked": "the flush listener answers without acknowledging (not True)",
}


def uncertain(operation: str, schedule_id: str | None = None) -> dict[str, JSONValue]:
    value: dict[str, JSONValue] = {
        "code": "persistence_uncertain",
        "message": UNCERTAIN,
        "operation": operation,
    }
    if schedule_id is not None:
        value["id"] = schedule_id
    return value


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
    def host(self) -> Host:
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
        """After recovery: storage holds exactly the live log, which decodes and folds, and every
        reminder in ``dispatched`` was delivered exactly once (one follow-up next to its dispatch,
        one turn). Returns the lost/duplicated/corrupted counts (all asserted 0)."""
        await self.h.settle(agent)
        assert await self.host.sessions.flush(agent.session) is True
        stored = await self.host.inspect(agent.session.id)
        assert stored is not None
        live = agent.session.events
        assert len(stored.events) == len(live)
        assert all(events_identical(a, b) for a, b in zip(stored.events, live, strict=True))
        return audit_events(list(stored.events), agent.session.header.owned_from, dispatched)

    async def reboot_delivers_nothing_new(self, agent: LiveAgent) -> None:
        """A new host on the same folder resumes the Session and delivers nothing again."""
        session_id = agent.session.id
        wall = self.clock.now_ms()
        before = await self.host.inspect(session_id)
        assert before is not None
        await self.host.close()
        clock = ManualClock(wall + 1000)
        host = Host(backend=SQLiteBackend(self.data), clock=clock)
        await host.start()
        try:
            host.load_plugin("schedule")
            resumed = await host.resume_session(session_id)
            plugin = host.plugins.pm.get_plugin("schedule")
            owner = plugin.owners[resumed]
            await wait_until(lambda: resumed.phase == "idle" and owner._run is None)
            clock.advance(3600)
            await wait_until(lambda: resumed.phase == "idle" and owner._run is None)
            events = resumed.session.events
            # Only the resume's own session/end-seed was appended.
            assert [e.type for e in events[len(before.events) :]] == ["session/end-seed"]
        finally:
            await host.close()


def audit_events(events: list[Any], owned_from: int, dispatched: list[str]) -> dict[str, int]:
    fold(events, owned_from)  # decodes and folds (raises ScheduleLogError otherwise)
    analysis = analyse(events, owned_from)
    assert analysis.problems == []
    got = [
        e.data["id"]
        for e in events
        if e.type == "schedule/change" and e.data["operation"] == "dispatch"
    ]
    assert got == dispatched
    for message_id in analysis.followups:
        assert len(analysis.turn_starts.get(message_id, ())) == 1
    return {"lost": 0, "duplicated": 0, "corrupted": 0}


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
