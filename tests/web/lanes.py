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
    #: PostgreSQL: every boot's ``--host-id`` (a stable name: a restart takes its Sessions back
    #: at once); ``None``: each boot is a new lease holder.
    host_id: str | None = None
    #: PostgreSQL: every boot's ``--lease-seconds``; 0: the server's default (or no leases).
    lease_seconds: int = 0

    def serve(self, *, extra: tuple[str, ...] = (), **options: Any) -> Server:
        """A ``dsh serve`` on this store (``options`` as :func:`start_server` takes them)."""
        if self.host_id is not None:
            extra = ("--host-id", self.host_id, *extra)
        if self.lease_seconds:
            extra = ("--lease-seconds", str(self.lease_seconds), *extra)
        return start_server(self.data, extra=extra, **options)

    def sigkill(self, server: Server) -> None:
        """SIGKILL ``server``. When the next boot is a new lease holder, wait until the leases
        the killed one held have run out (nobody renews them), so the next boot owns its
        Sessions as a survivor would."""
        server.process.kill()
        server.close()
        killed = now_ms()
        orphaned = self.lease_seconds * 1000 if self.host_id is None else 0
        wait_for(lambda: now_ms() > killed + orphaned)


#: The stores a lane runs on: SQLite; PostgreSQL restarted as the same host (a stable
#: ``--host-id``); PostgreSQL restarted as a new host (the default: a new lease holder per start,
#: here with 1 s leases so it need not wait the default 15 s).
STORES = ["sqlite", "postgres", "postgres-new-host"]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path) -> Store:
    if request.param == "sqlite":
        return Store(str(tmp_path / "data"))
    url = request.getfixturevalue("pg_cluster").new_database()
    if request.param == "postgres":
        return Store(url, host_id="lane-host")
    return Store(url, lease_seconds=1)


def live(server, sid: str) -> bool:
    """Whether ``sid`` is live, from the Sessions listing (a read of no single Session)."""
    sessions = server.http.get("/api/sessions").json()["sessions"]
    return next(s for s in sessions if s["id"] == sid)["live"]


def now_ms() -> float:
    return time.time() * 1000


def lag_ms(entry: dict[str, Any], scheduled_at: str) -> int:
    """How long after its target instant a dispatch history entry was appended (host time)."""
    return int(entry["event"]["time"]) - parse_instant(scheduled_at)


def wait_logged(
    server: Server, event: str, *, count: int = 1, timeout: float = 20.0, **fields: object
) -> list[dict[str, object]]:
    """Wait (bounded) until ``server`` has logged ``event`` with ``fields`` ``count`` times; on
    a timeout the error carries the server's log."""

    def enough() -> list[dict[str, object]]:
        found = server.process.logged(event, **fields)
        return found if len(found) >= count else []

    try:
        return wait_for(enough, timeout=timeout)
    except TimeoutError:
        tail = server.process.stderr[-4000:]
        raise TimeoutError(f"{event} {fields} not logged {count}x; server log:\n{tail}") from None
