"""What the real-process lanes share: the two storage backends a ``dsh serve`` runs on, and
reads over its HTTP API that never touch one Session (so nobody is attached to it).

Import :func:`data` and ``tests.pg.pg_cluster`` into a test module: ``data`` is a fresh data
folder (SQLite) or a fresh database of the session's throwaway PostgreSQL cluster, which starts
only when a PostgreSQL case runs.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from dsh_schedule import parse_instant


@pytest.fixture(params=["sqlite", "postgres"])
def data(request: pytest.FixtureRequest, tmp_path) -> str:
    """``dsh serve --data`` for one test: a folder, or a ``postgresql://`` URL."""
    if request.param == "sqlite":
        return str(tmp_path / "data")
    return request.getfixturevalue("pg_cluster").new_database()


def live(server, sid: str) -> bool:
    """Whether ``sid`` is live, from the Sessions listing (a read of no single Session)."""
    sessions = server.http.get("/api/sessions").json()["sessions"]
    return next(s for s in sessions if s["id"] == sid)["live"]


def now_ms() -> float:
    return time.time() * 1000


def lag_ms(entry: dict[str, Any], scheduled_at: str) -> int:
    """How long after its target instant a dispatch history entry was appended (host time)."""
    return int(entry["event"]["time"]) - parse_instant(scheduled_at)
