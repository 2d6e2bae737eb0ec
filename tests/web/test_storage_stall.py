"""Storage that stops answering (issue 23 item 6): fast, clear answers over HTTP.

Every process of the test cluster is frozen with SIGSTOP (it keeps its connections open and
answers neither a connection nor a query). Through a real HTTP server with a 1.5 s storage wait:
list, create, a cold Session's history and a user action each answer 503
``storage_unavailable`` with ``Retry-After`` within the wait; user actions queued behind an
accepted message are withdrawn and answer too. After SIGCONT the same requests succeed without
a restart, and no withdrawn action is in the Session's log. The same for a SQLite file another
connection holds a write lock on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_host import LiveHost
from dsh_host.persistence import PostgresBackend, SQLiteBackend
from dsh_host.testing import wait_until
from tests.host.test_user_tools import counter_tool
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster

from .support import serve

STORAGE_WAIT = 1.5
MARGIN = 3.0  # seconds on top of the wait: a loaded machine, never a tight timing


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


def _cluster_pids(data: Path) -> list[int]:
    """The postmaster (first) and every process it started."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The command may hold spaces: the fields after its closing parenthesis count.
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                children.append(int(stat.parent.name))
    return [postmaster, *children]


@contextlib.contextmanager
def frozen(cluster: Cluster) -> Iterator[None]:
    """Every process of ``cluster`` stopped (SIGSTOP) inside the block, continued after."""
    pids = _cluster_pids(cluster.data)
    assert len(pids) > 1, pids
    stopped: list[int] = []
    try:
        for pid in pids:  # the postmaster first: it starts no new process meanwhile
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
        yield
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def _timed(call: Any) -> tuple[httpx.Response, float]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    answer = await call
    return answer, loop.time() - start


def _user_calls(host: LiveHost, sid: str) -> list[Any]:
    live = host.sessions.get(sid)
    assert live is not None
    return [e for e in live.events if e.type == "tool/call" and "source" in e.data]


def _unavailable(answer: httpx.Response, elapsed: float, says: str) -> None:
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "storage_unavailable"
    assert says in answer.json()["error"]["message"], answer.text
    assert answer.headers["Retry-After"] == "2"
    assert elapsed < STORAGE_WAIT + MARGIN, elapsed


async def test_a_frozen_database_gets_503_within_the_wait_and_everything_resumes_after(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with (
        LiveHost(backend=PostgresBackend(url), model="scripted") as host,
        serve(host, storage_wait=STORAGE_WAIT) as (server, client),
    ):
        calls: list[Any] = []
        host.tools.register(counter_tool(calls))
        ids = [(await client.post("/api/sessions", json={})).json()["id"] for _ in range(3)]
        cold, busy, idle = ids
        await host.close_session(cold)  # cold from now on: its reads go to storage
        tool = "/api/sessions/{}/tools/count"

        with frozen(pg_cluster):
            # The message is accepted (a live Session); its turn then waits for storage.
            sent = await client.post(f"/api/sessions/{busy}/messages", json={"text": "hi"})
            assert sent.status_code == 202, sent.text
            live = host.sessions.get(busy)
            assert live is not None
            await wait_until(lambda: any(e.type == "turn/end" for e in live.events))
            answers = await asyncio.gather(
                _timed(client.get("/api/sessions")),
                _timed(client.post("/api/sessions", json={})),
                _timed(client.get(f"/api/sessions/{cold}/history")),
                _timed(client.post(tool.format(cold), json={})),
                _timed(client.post(tool.format(idle), json={"arguments": {"by": 9}})),
                *(_timed(client.post(tool.format(busy), json={})) for _ in range(4)),
            )
            listing, create, history, cold_tool, started, *queued = answers
            _unavailable(*listing, "(list); retry later")
            _unavailable(*create, "the session may still be created")
            _unavailable(*history, "(history); retry later")
            _unavailable(*cold_tool, "the action was not run")
            _unavailable(*started, "its outcome is not known yet")
            for answer, elapsed in queued:
                _unavailable(answer, elapsed, "the action was not run")
            # Set aside and still waiting: all but the withdrawn actions, which ended at once.
            await wait_until(lambda: server.storage_pending == len(answers) - len(queued))

        # Storage is back: what was set aside ends, and the same requests succeed.
        await wait_until(lambda: server.storage_pending == 0, timeout=30)
        listed = await client.get("/api/sessions")
        assert listed.status_code == 200, listed.text
        created = await client.post("/api/sessions", json={})
        assert created.status_code == 201, created.text
        assert (await client.get(f"/api/sessions/{cold}/history")).status_code == 200
        for sid in (cold, busy):
            answer = await client.post(tool.format(sid), json={"arguments": {"by": 1}})
            assert answer.status_code == 200, answer.text
            assert answer.json()["durable"] is True
        # Nothing withdrawn ran or was logged; the call that had started ran exactly once.
        assert [c[0] for c in calls] == [{"by": 9}, {"by": 1}, {"by": 1}]
        assert [c.data["arguments"] for c in _user_calls(host, busy)] == [{"by": 1}]
        assert [c.data["arguments"] for c in _user_calls(host, cold)] == [{"by": 1}]
        assert [c.data["arguments"] for c in _user_calls(host, idle)] == [{"by": 9}]
        stored, live_idle = await host.inspect(idle), host.sessions.get(idle)
        assert stored is not None
        assert live_idle is not None
        assert len(stored.events) == len(live_idle.events)  # all of it stored
        rows = (await client.get("/api/sessions")).json()["sessions"]
        listed_ids = [row["id"] for row in rows]
        assert len(listed_ids) == len(set(listed_ids))
        assert {*ids, created.json()["id"]} <= set(listed_ids)


async def test_a_sqlite_file_another_connection_holds_locked_gets_503_within_the_wait(
    tmp_path: Path,
) -> None:
    # SQLite waits for a write lock (busy_timeout 5 s): a create waits for storage and gets
    # 503. Reads run on a connection of their own, so the list still answers meanwhile, from
    # what is committed (the waiting create is not in it).
    backend = SQLiteBackend(tmp_path)
    async with (
        LiveHost(backend=backend, model="scripted") as host,
        serve(host, storage_wait=STORAGE_WAIT) as (server, client),
    ):
        before = (await client.post("/api/sessions", json={})).json()["id"]
        locker = sqlite3.connect(backend.path, isolation_level=None)
        try:
            locker.execute("BEGIN IMMEDIATE")  # holds the write lock
            create = await _timed(client.post("/api/sessions", json={}))
            _unavailable(*create, "the session may still be created")
            listing = await client.get("/api/sessions")
            assert listing.status_code == 200, listing.text
            assert [row["id"] for row in listing.json()["sessions"]] == [before]
        finally:
            locker.rollback()
            locker.close()
        await wait_until(lambda: server.storage_pending == 0, timeout=30)
        rows = (await client.get("/api/sessions")).json()["sessions"]
        # The late create completed once the lock was gone, as its answer said it might.
        assert len(rows) == 2
        assert before in {row["id"] for row in rows}
