"""End to end through real ``dsh serve`` processes with the built-in overlay: a reminder the
Schedule plugin sets shows on the board, still shows after a restart while its Session stays
cold, and goes with its Session when that is deleted."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.api import wait_for
from tests.procs import DshProcess

BOARD = {"plugin": "schedule", "kind": "pending"}


class Serve:
    """One ``dsh serve`` on ``data`` (a free port) with a client for it."""

    def __init__(self, data: Path) -> None:
        self.process = DshProcess(["serve", "--data", str(data), "--port", "0"])
        try:
            url = self.process.wait_for_line(r"listening on (http://[\d.:]+)").group(1)
        except BaseException:
            self.process.close()
            raise
        self.http = httpx.Client(base_url=url, timeout=10)

    def stop(self) -> None:
        self.http.close()
        status = self.process.interrupt()
        self.process.close()
        assert status == 0, self.process.stderr


def test_a_reminder_is_on_the_board_across_a_restart_and_goes_with_its_session(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    first = Serve(data)
    try:
        sid = first.http.post("/api/sessions", json={}).json()["id"]
        said = first.http.post(
            f"/api/sessions/{sid}/messages", json={"text": "remind me in 10 minutes to stretch"}
        )
        assert said.status_code == 202
        rows = wait_for(lambda: first.http.get("/api/board", params=BOARD).json()["rows"])
    finally:
        first.stop()
    (row,) = rows
    assert (row["sessionId"], row["key"], row["kind"], row["data"]) == (
        sid,
        "schedule-1",
        "pending",
        {"text": "stretch"},
    )
    assert row["sessionName"] == "remind me in 10 minutes to stretch"

    second = Serve(data)
    try:
        page = second.http.get("/api/board", params=BOARD).json()
        assert page == {"rows": rows, "next": None}  # read from storage: the Session stays cold
        (listed,) = second.http.get("/api/sessions").json()["sessions"]
        assert (listed["id"], listed["live"]) == (sid, False)
        count = second.http.get("/api/board/count", params={**BOARD, "after": row["atMs"] - 1})
        assert count.json() == {"count": 1}
        deleted = second.http.delete(f"/api/sessions/{sid}")
        assert (deleted.status_code, deleted.json()) == (200, {"deleted": True})
        assert second.http.get("/api/board", params=BOARD).json() == {"rows": [], "next": None}
        assert second.http.get("/api/sessions").json() == {"sessions": [], "next": None}
    finally:
        second.stop()
    assert second.process.plain_stderr()[-1] == "stopped; no reminders are pending"
