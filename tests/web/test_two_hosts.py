"""Two real ``dsh serve`` processes on one PostgreSQL database (issue 11 items 5 and 6).

The short two-host lane of ``make test``: hosts A and B share a database with 2 s leases. A
Session live on A answers 409 ``session_live_elsewhere`` on B for writes and streams while its
history reads on both. A is frozen with SIGSTOP past its lease: B takes the Session over and
delivers its reminder; A, resumed with SIGCONT, has lost it (the database refuses whatever it
still writes) and drops the Session, so it answers 409 in turn. Then B is killed with SIGKILL
holding a Session whose reminder falls due while it is dead: A delivers it once B's lease
has run out. Every reminder is dispatched exactly once.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from dsh_schedule import parse_instant
from tests.api import call_tool, dispatches, history, new_session, wait_for
from tests.browser.conftest import Server, start_server
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster

LEASE = 2  # seconds


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


@pytest.fixture
def hosts(url: str) -> Iterator[tuple[Server, Server]]:
    a = start_server(url, extra=("--lease-seconds", str(LEASE)))
    try:
        b = start_server(url, extra=("--lease-seconds", str(LEASE)))
    except BaseException:
        a.close()
        raise
    try:
        yield a, b
    finally:
        for server in (a, b):
            if server.process.proc.poll() is None:
                os.kill(server.process.proc.pid, signal.SIGCONT)  # never leave one frozen
            server.close()


def _elsewhere(response) -> bool:
    return (
        response.status_code == 409 and response.json()["error"]["code"] == "session_live_elsewhere"
    )


def _message(server: Server, sid: str, text: str = "hello"):
    return server.http.post(f"/api/sessions/{sid}/messages", json={"text": text})


def _stream_status(server: Server, sid: str) -> int:
    with server.http.stream("GET", f"/api/sessions/{sid}/events") as response:
        status = response.status_code
        if status == 409:
            response.read()
            assert response.json()["error"]["code"] == "session_live_elsewhere"
        return status


def test_one_live_owner_across_two_hosts_through_a_freeze_and_a_kill(
    hosts: tuple[Server, Server],
) -> None:
    a, b = hosts
    sid = new_session(a)
    made = call_tool(a, sid, "schedule_create", {"prompt": "stretch", "after_seconds": 4})
    assert made["state"] == "scheduled"

    # Live on A: B refuses writes and streams, and reads history.
    assert _elsewhere(_message(b, sid))
    assert _stream_status(b, sid) == 409
    assert _elsewhere(b.http.post(f"/api/sessions/{sid}/resume", json={}))
    assert len(history(b, sid)) == len(history(a, sid))

    # A freezes past its lease; B takes the Session over and delivers the reminder.
    os.kill(a.process.proc.pid, signal.SIGSTOP)
    frozen_at = time.monotonic()
    wait_for(lambda: _message(b, sid, "are you there").status_code == 202, timeout=30)
    assert time.monotonic() - frozen_at >= LEASE - 0.5  # not before A's lease ran out
    wait_for(lambda: dispatches(history(b, sid)), timeout=30)
    os.kill(a.process.proc.pid, signal.SIGCONT)

    # A comes back, finds the Session gone to B and drops it without writing.
    wait_for(lambda: a.process.logged("host.session_dropped", session_id=sid), timeout=30)
    assert a.process.logged("storage.lease_lost", session_id=sid)
    assert _elsewhere(_message(a, sid))
    assert _stream_status(a, sid) == 409
    assert b.http.post(f"/api/sessions/{sid}/flush").json()["durable"] is True
    assert len(dispatches(history(a, sid))) == 1

    # B dies holding a Session whose reminder falls due meanwhile: A delivers it once B's
    # lease has run out (cold delivery on the survivor).
    second = new_session(b)
    later = call_tool(b, second, "schedule_create", {"prompt": "water", "after_seconds": 1})
    assert _elsewhere(_message(a, second))
    b.process.kill()  # SIGKILL: B never releases its leases
    killed_at = time.monotonic()
    wait_for(lambda: dispatches(history(a, second)), timeout=30)
    assert time.monotonic() - killed_at >= LEASE - 1.5  # the lease stood until it ran out
    assert a.http.post(f"/api/sessions/{second}/flush").json()["durable"] is True
    entries = dispatches(history(a, second))
    assert len(entries) == 1
    assert parse_instant(later["scheduledAt"]) <= entries[0]["event"]["time"]
    assert len(dispatches(history(a, sid))) == 1
