"""What the real-process lanes share: the two stores a ``dsh serve`` runs on, and reads over its
HTTP API that never touch one Session (so nobody is attached to it).

Import :func:`store` and ``tests.pg.pg_cluster`` into a test module: a :class:`Store` on a fresh
data folder (SQLite) or a fresh database of the session's throwaway PostgreSQL cluster, which
starts only when a PostgreSQL case runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest

from dsh_schedule import parse_instant
from tests.api import wait_for
from tests.browser.conftest import Server, start_server


@dataclass(frozen=True, slots=True)
class Store:
    """``dsh serve --data`` for one test: a folder, or a ``postgresql://`` URL."""

    data: str
    #: ``--lease-seconds`` of every boot (PostgreSQL); 0: the store has no leases.
    lease_seconds: int = 0

    def serve(self, *, extra: tuple[str, ...] = (), **options: Any) -> Server:
        """A ``dsh serve`` on this store (``options`` as :func:`start_server` takes them)."""
        if self.lease_seconds:
            extra = ("--lease-seconds", str(self.lease_seconds), *extra)
        return start_server(self.data, extra=extra, **options)

    def sigkill(self, server: Server) -> None:
        """SIGKILL ``server``; then wait until the leases it held can no longer be renewed by
        anyone, i.e. have run out, so the next boot owns its Sessions as a survivor would."""
        server.process.kill()
        server.close()
        killed = now_ms()
        wait_for(lambda: now_ms() > killed + self.lease_seconds * 1000)


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path) -> Store:
    if request.param == "sqlite":
        return Store(str(tmp_path / "data"))
    return Store(request.getfixturevalue("pg_cluster").new_database())


def live(server, sid: str) -> bool:
    """Whether ``sid`` is live, from the Sessions listing (a read of no single Session)."""
    sessions = server.http.get("/api/sessions").json()["sessions"]
    return next(s for s in sessions if s["id"] == sid)["live"]


def now_ms() -> float:
    return time.time() * 1000


def lag_ms(entry: dict[str, Any], scheduled_at: str) -> int:
    """How long after its target instant a dispatch history entry was appended (host time)."""
    return int(entry["event"]["time"]) - parse_instant(scheduled_at)
