"""The two-host lane of the chaos run (issue 11 proof): two real ``dsh serve`` processes on one
PostgreSQL database with 2 s leases, a workload of reminders over many Sessions routed sticky by
Session id, and faults: SIGKILL of one host or both (each restarted after a short random delay,
as a new lease holder or under its slot's stable ``--host-id``) and SIGSTOP/SIGCONT freezes
longer than a lease. :meth:`TwoHosts.audit` reads every stored log straight from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

from dsh_host.persistence import PostgresBackend, opened
from tests.api import wait_for
from tests.browser.conftest import Server, start_server

LEASE = 2  # seconds
SCHEDULE_SOURCE = {"kind": "plugin", "plugin": "schedule"}


@dataclass
class Slot:
    """One host position: the running server (or none while it is dead) and every boot's
    process (their output is kept to count the refused appends)."""

    index: int
    url: str
    server: Server | None = None
    processes: list[Any] = field(default_factory=list)

    def boot(self, *, stable: bool, evict: bool) -> str:
        """Start this slot's host; which restart mode it was."""
        extra: list[str] = ["--lease-seconds", str(LEASE)]
        if stable:
            extra += ["--host-id", f"chaos-slot-{self.index}"]
        if evict:
            extra += ["--evict-idle", "1"]
        self.server = start_server(self.url, extra=tuple(extra))
        self.server.http.timeout = httpx.Timeout(5.0)
        self.processes.append(self.server.process)
        return "stable host id" if stable else "new lease holder"

    def kill(self) -> None:
        if self.server is not None:
            self.server.process.kill()  # SIGKILL (also ends a frozen process)
            self.server.close()
            self.server = None

    def signal(self, number: signal.Signals) -> None:
        if self.server is not None:
            os.kill(self.server.process.proc.pid, number)

    def logged(self, event: str) -> int:
        """How many times this slot's boots logged ``event`` (e.g. ``storage.append_fenced``)."""
        return sum(len(p.logged(event)) for p in self.processes)


@dataclass
class TwoHosts:
    url: str
    rng: random.Random
    sessions: int = 50
    slots: list[Slot] = field(init=False)
    #: Session id -> the slot it was last answered by (sticky routing).
    home: dict[str, int] = field(default_factory=dict)
    #: (session id, schedule id) -> scheduledAt of every acknowledged (durable) create.
    acked: dict[tuple[str, str], str] = field(default_factory=dict)
    figures: Counter[str] = field(default_factory=Counter)
    frozen: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.slots = [Slot(0, self.url), Slot(1, self.url)]

    # -- routing ---------------------------------------------------------------------------

    def request(self, sid: str, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        """``method path`` for Session ``sid``: its home host first, then the other one on a
        409 session_live_elsewhere or a connection error; ``None`` when neither answered."""
        first = self.home.get(sid, self.rng.randrange(2))
        for index in (first, 1 - first):
            server = self.slots[index].server
            if server is None or index in self.frozen:
                continue
            try:
                response = server.http.request(method, path, **kwargs)
            except httpx.HTTPError:
                self.figures["connection errors"] += 1
                continue
            if response.status_code == 409:
                self.figures["409 answers"] += 1
                continue
            self.home[sid] = index
            return response
        return None

    def up(self) -> list[Server]:
        return [s.server for s in self.slots if s.server is not None and s.index not in self.frozen]

    def new_session(self) -> str:
        server = self.up()[0]
        response = server.http.post("/api/sessions", json={})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    # -- workload --------------------------------------------------------------------------

    def create(self, sid: str, after: int) -> None:
        """Ask for a reminder; acknowledged once its tool result is seen and a flush said
        durable (what a user relies on). A fault in between leaves it unacknowledged."""
        text = "/tool schedule_create " + json.dumps(
            {"prompt": f"r{self.figures['creates sent']}", "after_seconds": after}
        )
        self.figures["creates sent"] += 1
        response = self.request(sid, "POST", f"/api/sessions/{sid}/messages", json={"text": text})
        if response is None or response.status_code != 202:
            return
        marker = json.loads(text.split(" ", 2)[2])["prompt"]

        def result() -> dict[str, Any] | None:
            got = self.request(sid, "GET", f"/api/sessions/{sid}/history",
                               params={"maxMessages": 500})  # fmt: skip
            if got is None or got.status_code != 200:
                return None
            for entry in got.json()["entries"]:
                event = entry["event"]
                value = event["data"].get("value") if isinstance(event["data"], dict) else None
                if (
                    event["type"] == "tool/result"
                    and isinstance(value, dict)
                    and value.get("prompt") == marker
                ):
                    return value
            return None

        try:
            value = wait_for(result, timeout=5)
        except TimeoutError:
            return
        flushed = self.request(sid, "POST", f"/api/sessions/{sid}/flush")
        if (
            flushed is None
            or flushed.status_code != 200
            or flushed.json().get("durable") is not True
        ):
            return
        if value.get("state") == "scheduled":
            self.acked[sid, str(value["id"])] = str(value["scheduledAt"])
            self.figures["creates acknowledged"] += 1

    def message(self, sid: str) -> bool:
        """Send a user message; whether a host took it."""
        response = self.request(sid, "POST", f"/api/sessions/{sid}/messages", json={"text": "hi"})
        if response is not None and response.status_code == 202:
            self.figures["user messages"] += 1
            return True
        return False

    # -- faults ----------------------------------------------------------------------------

    def boot(self, slot: Slot) -> str:
        return slot.boot(stable=self.rng.random() < 0.4, evict=self.rng.random() < 0.5)

    def kill(self, slots: list[Slot]) -> None:
        for slot in slots:
            slot.kill()
            self.figures["kills"] += 1
        time.sleep(self.rng.uniform(0.0, 1.5))  # pacing of the fault plan, not a wait
        for slot in slots:
            self.figures[f"restarts ({self.boot(slot)})"] += 1

    def freeze(self, chosen: Slot, sids: list[str]) -> None:
        """SIGSTOP ``slot`` past its lease while reminders of its Sessions fall due; the other
        host takes them over; then SIGCONT, and wait (bounded) until the woken host has found
        a lease gone (on renewal, on a refused append or on release): it must notice. A host
        frozen inside a write transaction holds its Session rows locked, so the other waits
        for it and nothing is taken over: counted apart. A host
        live for no Session (the other one holds them all) is not worth freezing: the other is
        frozen then."""
        slot, held = chosen, self._hold(chosen, sids)
        if not held:
            slot = self.slots[1 - chosen.index]
            held = self._hold(slot, sids)
        before = slot.logged("storage.lease_lost")
        slot.signal(signal.SIGSTOP)
        self.frozen.add(slot.index)
        self.figures["freezes"] += 1
        expired = time.monotonic() + LEASE + 0.5
        until = expired + self.rng.uniform(1.5, 2.5)
        taken = False
        while time.monotonic() < until:
            sid = self.rng.choice(held if held and time.monotonic() > expired else sids)
            taken |= sid in held and self.message(sid) and self.home[sid] != slot.index
            time.sleep(0.05)  # pacing of the workload, not a wait
        slot.signal(signal.SIGCONT)
        self.frozen.discard(slot.index)
        if taken:  # (none when the host froze inside a transaction: its row lock held them off)
            self.figures["freezes taken over"] += 1
            wait_for(lambda: slot.logged("storage.lease_lost") > before, timeout=10)
            self.figures["freezes noticed"] += 1

    def _hold(self, slot: Slot, sids: list[str]) -> list[str]:
        """Up to four Sessions ``slot`` is live for, each with a turn just started (its appends
        come after the freeze): its own first, then any it can take (a cold one)."""
        held: list[str] = []
        server = slot.server
        if server is None:
            return held
        mine = [s for s in sids if self.home.get(s) == slot.index]
        for sid in mine[:4] + self.rng.sample(sids, len(sids)):
            if len(held) == 4:
                break
            with contextlib.suppress(httpx.HTTPError):
                answer = server.http.post(f"/api/sessions/{sid}/messages", json={"text": "now"})
                if answer.status_code == 202 and sid not in held:
                    held.append(sid)
                    self.home[sid] = slot.index
        return held

    def stop(self) -> None:
        for slot in self.slots:
            slot.signal(signal.SIGCONT)
            slot.kill()

    # -- end checks ------------------------------------------------------------------------

    def audit(self, sids: list[str]) -> dict[str, Any]:
        """Every stored log, decoded from the database: per acknowledged create exactly one
        dispatch, at most one reminder follow-up per dispatch, contiguous seq, no lost one."""
        logs = asyncio.run(_load_all(self.url, sids))
        with psycopg.connect(self.url) as conn:
            rows = conn.execute("SELECT id, epoch FROM sessions").fetchall()
        epochs: dict[str, int] = {str(sid): int(epoch) for sid, epoch in rows}
        dispatched: Counter[tuple[str, str]] = Counter()
        followups: Counter[tuple[str, str]] = Counter()
        problems: list[str] = []
        for sid, events in logs.items():
            if [e.seq for e in events] != list(range(len(events))):
                problems.append(f"{sid}: seq not contiguous")
            times = [e.time for e in events]
            if times != sorted(times):
                problems.append(f"{sid}: event times go back")
            for event in events:
                data = event.data if isinstance(event.data, dict) else {}
                if event.type == "schedule/change" and data.get("operation") == "dispatch":
                    dispatched[sid, str(data.get("id"))] += 1
                elif event.type == "agent/followup" and data.get("source") == SCHEDULE_SOURCE:
                    followups[sid, str(data.get("messageId"))] += 1
        lost = [i for i in self.acked if dispatched[i] == 0]
        duplicated = [i for i, n in dispatched.items() if n > 1]
        duplicated_followups = [m for m, n in followups.items() if n > 1]
        return {
            "logs decoded": len(logs),
            "delivered": sum(1 for i in self.acked if dispatched[i] == 1),
            "dispatches stored": sum(dispatched.values()),
            "lost": lost,
            "duplicated": duplicated,
            "follow-up turns": sum(followups.values()),
            "follow-ups beyond dispatches": max(
                0, sum(followups.values()) - sum(dispatched.values())
            ),
            "duplicated follow-ups": duplicated_followups,
            "takeovers (Sessions with epoch > 1)": len([e for e in epochs.values() if e > 1]),
            "max epoch": max(epochs.values(), default=0),
            "problems": problems,
        }


async def _load_all(url: str, sids: list[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    async with opened(PostgresBackend(url)) as backend:
        for sid in sids:
            stored = await backend.load(sid)
            assert stored is not None, sid
            out[sid] = list(stored.events)
    return out
