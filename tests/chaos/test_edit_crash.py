"""The edit lane: a real ``dsh serve`` is SIGKILLed at each point of an edit of a reminder's
time (``schedule_update``), restarted, and the reminder then fires exactly once: at its new time
when the edit is on disk (always when the edit was answered), at its old time when it is not,
never at both and never at the old time after a durable edit.

Each scenario is a lane of its own (a data folder, a control block, the chaos plugin of
:mod:`tests.chaos.plugin`), all lanes at once. A daily reminder is made by a user action, then
moved (later: its old time passes during the crash; earlier: the new one comes first) by a user
action that dies at the armed point: after its preflight flush, while its update is validated,
after its barrier flush, right after its answer (an external SIGKILL), or in the due path of
the moved reminder. The restarted server resumes the Session and runs past both times; then it
is stopped and its store read.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_schedule import parse_instant
from tests.procs import LISTENING, DshProcess, serve_command

from .control import ALL_POINTS, FIRED, Control
from .harness import STOPPED_LINE, install_plugin, read_rows, write_overlay

pytestmark = [pytest.mark.chaos, pytest.mark.slow]

#: Seconds from the create to the old and the new time, by direction.
OFFSETS = {"later": (4, 14), "earlier": (20, 8)}
#: Where each scenario dies, and whether the edit is then on disk.
POINTS = {
    "update-preflight": False,
    "update-append": False,
    "update-committed": True,
    "answered": True,  # an external SIGKILL right after the answer arrived
    "dispatch-append": True,  # armed after the answer: the moved reminder's due path
}
#: How long a scenario may wait for a server or for its reminder, at most.
BOUND_S = 60.0


def wall_time(seconds_from_now: float) -> tuple[str, int]:
    """A UTC wall time ``seconds_from_now`` ahead, rounded up to a whole second, as the
    ``daily`` argument wants it, and its epoch ms."""
    instant = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds_from_now + 1)
    instant = instant.replace(microsecond=0)
    return instant.strftime("%H:%M:%S"), int(instant.timestamp() * 1000)


@dataclass
class Scenario:
    point: str
    direction: str
    folder: Path
    env: dict[str, str]

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True)
        self.control_path = self.folder / "control.bin"
        self.control = Control.create(self.control_path)
        self.overlay = write_overlay(self.folder / "overlay.toml", self.control_path)
        self.data = self.folder / "data"
        self.proc: DshProcess | None = None
        self.errors: list[str] = []

    async def start(self) -> str:
        self.control.reset()
        self.proc = DshProcess(serve_command(self.data, overlay=self.overlay), env=self.env)
        match = await asyncio.to_thread(self.proc.wait_for_line, LISTENING, BOUND_S)
        return match[1]

    def reap(self) -> None:
        """Collect what the server logged (an error is a finding), then let it go."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.close()
        proc.proc.wait(timeout=10)
        for line in proc.stderr_lines:
            try:
                entry = json.loads(line)
            except ValueError:
                if line.strip() and not STOPPED_LINE.fullmatch(line.strip()):
                    self.errors.append(line.strip()[:200])
                continue
            if entry.get("level") in ("error", "critical", "exception"):
                self.errors.append(line[:300])

    def changes(self, sid: str) -> list[dict[str, Any]]:
        _, _, rows = read_rows(self.data)[sid]
        return [json.loads(text) for kind, _, text in rows if kind == "schedule/change"]

    def followups(self, sid: str) -> int:
        _, _, rows = read_rows(self.data)[sid]
        return sum(1 for kind, _, text in rows if kind == "agent/followup")

    async def tool(
        self, client: httpx.AsyncClient, sid: str, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        answer = await client.post(
            f"/api/sessions/{sid}/tools/{name}", json={"arguments": arguments}
        )
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    async def run(self) -> None:
        old_after, new_after = OFFSETS[self.direction]
        url = await self.start()
        try:
            async with httpx.AsyncClient(base_url=url, timeout=BOUND_S) as client:
                sid = (await client.post("/api/sessions", json={})).json()["id"]
                old_text, old_ms = wall_time(old_after)
                made = await self.tool(
                    client,
                    sid,
                    "schedule_create",
                    {"prompt": "stretch", "daily": {"time": old_text, "time_zone": "UTC"}},
                )
                assert made["durable"] is True, made
                assert parse_instant(made["value"]["scheduledAt"]) == old_ms, made
                new_text, new_ms = wall_time(new_after)
                if self.point in ALL_POINTS and self.point != "dispatch-append":
                    self.control.arm(self.point, 1)
                edit = {"id": "schedule-1", "daily": {"time": new_text, "time_zone": "UTC"}}
                try:
                    answered = await self.tool(client, sid, "schedule_update", edit)
                except httpx.TransportError:
                    answered = None  # the server died under the request
                if self.point in ("answered", "dispatch-append"):
                    assert answered is not None
                    assert answered["durable"] is True, answered
                    assert parse_instant(answered["value"]["scheduledAt"]) == new_ms
                    if self.point == "answered":
                        assert self.proc is not None
                        self.proc.kill()
                    else:
                        self.control.arm("dispatch-append", 1)
                else:
                    assert answered is None, answered
            assert self.proc is not None
            await asyncio.to_thread(self.proc.proc.wait, BOUND_S)
            fired = self.control.get(FIRED)
            expected_code = ALL_POINTS[self.point][0] if self.point in ALL_POINTS else 0
            assert fired == expected_code, (self.point, fired)
        finally:
            self.reap()

        # The restart: it resumes the Session and runs past both times.
        url = await self.start()
        try:
            async with httpx.AsyncClient(base_url=url, timeout=BOUND_S) as client:
                resumed = await client.post(f"/api/sessions/{sid}/resume")
                assert resumed.status_code == 200, resumed.text
                past = max(old_ms, new_ms) + 3_000
                deadline = time.monotonic() + BOUND_S
                while time.time() * 1000 < past or not self._dispatched(sid):
                    assert time.monotonic() < deadline, f"{self.point}: nothing fired"
                    await asyncio.sleep(0.2)  # polling the store and the clock, bounded
                flushed = await client.post(f"/api/sessions/{sid}/flush")
                assert flushed.status_code == 200, flushed.text
            assert self.proc is not None
            assert await asyncio.to_thread(self.proc.terminate, BOUND_S) == 0
        finally:
            self.reap()
        self._check(sid, old_ms, new_ms)

    def _dispatched(self, sid: str) -> bool:
        return any(change["operation"] == "dispatch" for change in self.changes(sid))

    def _check(self, sid: str, old_ms: int, new_ms: int) -> None:
        changes = self.changes(sid)
        updates = [change for change in changes if change["operation"] == "update"]
        dispatches = [change for change in changes if change["operation"] == "dispatch"]
        durable = POINTS[self.point]
        assert len(updates) == (1 if durable else 0), (self.point, updates)
        # Exactly once: at the new time after a durable edit, else at the old one.
        (dispatch,) = dispatches
        expected = new_ms if durable else old_ms
        assert parse_instant(dispatch["occurrenceAt"]) == expected, (self.point, dispatch)
        assert self.followups(sid) == 1
        assert self.errors == [], self.errors


async def test_an_edit_killed_at_each_point_fires_once_at_the_right_time(tmp_path: Path) -> None:
    plugin_path = install_plugin(tmp_path / "plugin")
    inherited = os.environ.get("PYTHONPATH")
    env = {"PYTHONPATH": os.pathsep.join([str(plugin_path), *([inherited] if inherited else [])])}
    scenarios = [
        Scenario(point, direction, tmp_path / f"{point}-{direction}", env)
        for point in POINTS
        for direction in OFFSETS
    ]
    outcomes = await asyncio.gather(
        *(scenario.run() for scenario in scenarios), return_exceptions=True
    )
    failures = [
        f"{scenario.point} ({scenario.direction}): {outcome!r}"
        for scenario, outcome in zip(scenarios, outcomes, strict=True)
        if isinstance(outcome, BaseException)
    ]
    assert failures == []
