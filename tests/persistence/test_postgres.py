"""What the PostgreSQL backend promises beyond the shared contract (test_backend_contract.py).

Every test runs on a fresh database of the session's throwaway cluster (tests/pg.py): the
schema is versioned and a newer one refused, a refused connection is one plain line without the
password, appends are committed in groups, two processes on one database serialize in the
database, and ``dsh serve --data postgresql://...`` keeps its Sessions across a SIGKILL.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from structlog.testing import capture_logs

from dsh_host import LiveHost
from dsh_host.conformance import assert_stored, make_events, make_header
from dsh_host.persistence import (
    PostgresBackend,
    StorageConflictError,
    StorageCorruptError,
    StorageError,
    Write,
    is_postgres_url,
    opened,
    redacted,
)
from dsh_host.persistence.postgres import SCHEMA_VERSION
from dsh_host.testing import ManualClock
from tests.api import wait_for
from tests.pg import USER, Cluster, bindir, pg_cluster  # noqa: F401 - the session's cluster
from tests.procs import LISTENING, DshProcess, run_dsh

SECRET = "s3cret-Pw-42"  # a password that must never be printed


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


def _version(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT version FROM dsh_schema").fetchall()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the schema ------------------------------------------------------------------------------


async def test_first_open_creates_the_versioned_schema_once_even_when_hosts_start_together(
    url: str,
) -> None:
    backends = [PostgresBackend(url) for _ in range(4)]
    await asyncio.gather(*(b.open() for b in backends))
    try:
        assert _version(url) == [(SCHEMA_VERSION,)]
        await backends[0].append(Write("s1", 0, make_events(0, 2), make_header("s1")))
        assert_stored(await backends[3].load("s1"), make_header("s1"), make_events(0, 2))
    finally:
        await asyncio.gather(*(b.close() for b in backends))


async def test_a_database_of_a_newer_schema_version_is_refused_and_left_alone(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    backend = PostgresBackend(url)
    await backend.open()
    await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
    await backend.close()
    pg_cluster.execute(url, "UPDATE dsh_schema SET version = %s", SCHEMA_VERSION + 1)
    newer = PostgresBackend(url)
    newer_than = f"schema version {SCHEMA_VERSION + 1}, newer than the version {SCHEMA_VERSION}"
    with pytest.raises(StorageError, match=newer_than) as err:
        await newer.open()
    assert "\n" not in str(err.value)
    assert _version(url) == [(SCHEMA_VERSION + 1,)]
    with pytest.raises(StorageError, match="not open"):
        await newer.load("s1")
    await newer.close()


# -- connection failures ---------------------------------------------------------------------


async def test_a_refused_connection_is_one_plain_storage_error_without_the_password() -> None:
    port = _closed_port()
    backend = PostgresBackend(
        f"postgresql://{USER}:{SECRET}@127.0.0.1:{port}/nowhere", connect_timeout=5
    )
    with pytest.raises(StorageError) as err:
        await backend.open()
    message = str(err.value)
    assert message.startswith(f"cannot connect to PostgreSQL postgresql://{USER}:***@127.0.0.1:")
    assert SECRET not in message
    assert "\n" not in message
    assert SECRET not in repr(backend)
    await backend.close()  # never opened: a no-op


async def test_a_missing_database_is_a_storage_error_naming_it(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    backend = PostgresBackend(pg_cluster.url("no_such_db", password=SECRET))
    with pytest.raises(StorageError, match="no_such_db") as err:
        await backend.open()
    assert SECRET not in str(err.value)


def test_redacted_hides_only_the_password() -> None:
    assert redacted(f"postgresql://me:{SECRET}@db.example:5433/dsh?sslmode=require") == (
        "postgresql://me:***@db.example:5433/dsh?sslmode=require"
    )
    assert redacted("postgresql://me@[::1]:5432/dsh") == "postgresql://me@[::1]:5432/dsh"
    assert redacted(f"postgres://:{SECRET}@[::1]/dsh") == "postgres://:***@[::1]/dsh"
    assert is_postgres_url("postgresql://x/y")
    assert is_postgres_url("postgres://x/y")
    assert not is_postgres_url("./postgresql")


# -- writes ----------------------------------------------------------------------------------


async def test_concurrent_appends_share_transactions(url: str) -> None:
    async with opened(PostgresBackend(url)) as backend:
        ids = [f"s{i:02d}" for i in range(40)]
        await asyncio.gather(
            *(
                backend.append(Write(sid, 0, make_events(0, 2), make_header(sid, i)))
                for i, sid in enumerate(ids)
            )
        )
        assert backend.appends == 40
        assert backend.commits < backend.appends  # grouped, not one transaction per append
        assert [s.length for s in await backend.list_sessions()] == [2] * 40


async def test_two_processes_on_one_database_serialize_in_the_database(url: str) -> None:
    # Two backends stand for two hosts: each has its own writer and connections.
    one, two = PostgresBackend(url), PostgresBackend(url)
    await one.open()
    await two.open()
    try:
        created = await asyncio.gather(
            one.append(Write("s1", 0, make_events(0, 1, "one"), make_header("s1", 1))),
            two.append(Write("s1", 0, make_events(0, 1, "two"), make_header("s1", 2))),
            return_exceptions=True,
        )
        assert created.count(None) == 1
        assert isinstance(next(r for r in created if r is not None), StorageConflictError)
        first = "one" if created[0] is None else "two"
        raced = await asyncio.gather(
            one.append(Write("s1", 1, make_events(1, 2, "one"))),
            two.append(Write("s1", 1, make_events(1, 2, "two"))),
            return_exceptions=True,
        )
        assert raced.count(None) == 1
        assert isinstance(next(r for r in raced if r is not None), StorageConflictError)
        second = "one" if raced[0] is None else "two"
        header = make_header("s1", 1 if first == "one" else 2)
        want = [*make_events(0, 1, first), *make_events(1, 2, second)]
        assert_stored(await one.load("s1"), header, want)
        assert_stored(await two.load("s1"), header, want)
    finally:
        await one.close()
        await two.close()


async def test_an_append_after_close_is_refused_and_close_waits_for_queued_appends(
    url: str,
) -> None:
    backend = PostgresBackend(url)
    await backend.open()
    appends = [
        backend.append(Write(f"s{i}", 0, make_events(0, 1), make_header(f"s{i}"))) for i in range(5)
    ]
    # gather starts them in order: every append is queued before close() begins.
    assert await asyncio.gather(*appends, backend.close()) == [None] * 6
    with pytest.raises(StorageError, match="not open"):
        await backend.append(Write("s9", 0, [], make_header("s9")))
    again = PostgresBackend(url)
    await again.open()
    try:
        assert len(await again.list_sessions()) == 5
    finally:
        await again.close()


# -- dsh serve --data postgresql://... -------------------------------------------------------


class _Recorded(DshProcess):
    """A ``dsh`` process whose every stdout line is also kept (to search for the password)."""

    def __init__(self, args: list[str]) -> None:
        self.seen: list[str] = []
        super().__init__(args)

    def _pump(self, stream, is_stdout: bool) -> None:  # type: ignore[no-untyped-def]
        for line in stream:
            if is_stdout:
                self.seen.append(line)
                self.lines.put(line.rstrip("\n"))
            else:
                self.stderr_lines.append(line)
        stream.close()

    @property
    def output(self) -> str:
        return "".join(self.seen) + self.stderr


def _turn_ended(client: httpx.Client, sid: str) -> bool:
    response = client.get(f"/api/sessions/{sid}/history", params={"maxMessages": 500})
    response.raise_for_status()
    return any(e["event"]["type"] == "turn/end" for e in response.json()["entries"])


def _serve(data: str) -> tuple[_Recorded, str]:
    server = _Recorded(["serve", "--data", data, "--port", "0", "--log-level", "debug"])
    return server, server.wait_for_line(LISTENING).group(1)


@pytest.mark.slow
def test_serve_on_postgresql_keeps_sessions_across_a_sigkill_and_never_prints_the_password(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
) -> None:
    data = pg_cluster.new_database().replace(f"{USER}@", f"{USER}:{SECRET}@")
    server, url = _serve(data)
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            created = client.post("/api/sessions", json={})
            assert created.status_code == 201, created.text
            sid = created.json()["id"]
            assert (
                client.post(f"/api/sessions/{sid}/messages", json={"text": "hello"}).status_code
                == 202
            )
            wait_for(lambda: _turn_ended(client, sid))
            flushed = client.post(f"/api/sessions/{sid}/flush").json()
            assert flushed["durable"] is True
            before = client.get(f"/api/sessions/{sid}/history").json()["entries"]
        server.kill()  # no orderly close: what was acknowledged is in the database
    finally:
        server.close()
    listed = run_dsh(["sessions", "--data", data, "--json"])
    assert listed.returncode == 0, listed.stderr
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (row["id"], row["length"]) == (sid, flushed["throughSeq"])
    again, url = _serve(data)
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            after = client.get(f"/api/sessions/{sid}/history").json()["entries"]
            assert after == before
            assert [s["id"] for s in client.get("/api/sessions").json()["sessions"]] == [sid]
        assert again.terminate(timeout=10) == 0
    finally:
        again.close()
    for process in (server, again):
        assert "postgresql://" in process.output  # the address is logged, redacted
        assert SECRET not in process.output
    assert SECRET not in listed.stdout + listed.stderr


def test_serve_and_sessions_on_an_unreachable_database_exit_1_with_one_plain_line() -> None:
    data = f"postgresql://{USER}:{SECRET}@127.0.0.1:{_closed_port()}/dsh"
    for args in (["serve", "--data", data, "--port", "0"], ["sessions", "--data", data]):
        result = run_dsh(args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "dsh: cannot connect to PostgreSQL postgresql://dsh:***@127.0.0.1:" in result.stderr
        assert SECRET not in result.stdout + result.stderr


# -- damage and outages ----------------------------------------------------------------------


async def test_a_damaged_event_row_fails_only_the_load_of_its_session(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with opened(PostgresBackend(url)) as backend:
        for sid in ("s1", "s2"):
            await backend.append(Write(sid, 0, make_events(0, 3), make_header(sid)))
        pg_cluster.execute(
            url, "UPDATE events SET data = '{bad' WHERE session_id = 's1' AND seq = 1"
        )
        with pytest.raises(StorageCorruptError, match=r"seq 1 of session 's1'"):
            await backend.load("s1")
        pg_cluster.execute(url, "DELETE FROM events WHERE session_id = 's2' AND seq = 2")
        with pytest.raises(StorageCorruptError, match=r"'s2' records length 3 but has 2"):
            await backend.load("s2")
        assert [s.length for s in await backend.list_sessions()] == [3, 3]
        assert await backend.load("nul\x00id") is None


async def test_connections_the_server_dropped_are_replaced_before_the_next_append(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with opened(PostgresBackend(url)) as backend:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
        dbname = url.rsplit("/", 1)[1]
        # Waits (up to 10 s each) until every connection of the backend has ended.
        pg_cluster.execute(
            pg_cluster.url(),
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            dbname,
        )
        await backend.append(Write("s1", 1, make_events(1, 2)))
        assert_stored(await backend.load("s1"), make_header("s1"), make_events(0, 3))


async def test_one_bad_request_of_a_batch_fails_alone(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with opened(PostgresBackend(url)) as backend:
        for sid in ("bad", "good"):
            await backend.append(Write(sid, 0, make_events(0, 3), make_header(sid)))
        # Outside damage: "bad" records 1 event but holds 3, so writing seq 1 breaks the key.
        pg_cluster.execute(url, "UPDATE sessions SET length = 1 WHERE id = 'bad'")
        commits = backend.commits
        results = await asyncio.gather(
            backend.append(Write("bad", 1, make_events(1, 1, "new"))),
            backend.append(Write("good", 3, make_events(3, 1), wakes={"p": 5})),
            backend.append(Write("fresh", 0, make_events(0, 1), make_header("fresh"))),
            backend.append(Write("nul\x00id", 0, [], make_header("nul\x00id"))),
            return_exceptions=True,
        )
        assert isinstance(results[0], StorageCorruptError)
        assert "'bad'" in str(results[0])
        assert results[1:3] == [None, None]
        assert isinstance(results[3], StorageError)
        assert "cannot hold NUL" in str(results[3])
        assert backend.commits == commits + 1  # the good requests still shared one transaction
        good = await backend.load("good")
        assert_stored(good, make_header("good"), make_events(0, 4))
        assert good is not None
        assert good.wakes == {"p": 5}
        assert_stored(await backend.load("fresh"), make_header("fresh"), make_events(0, 1))
        assert await backend.load("nul\x00id") is None


async def test_hosts_committing_overlapping_batches_never_deadlock(url: str) -> None:
    hosts = [PostgresBackend(url) for _ in range(3)]
    await asyncio.gather(*(h.open() for h in hosts))
    try:
        ids = [f"s{i:02d}" for i in range(30)]
        await hosts[0].append(Write(ids[0], 0, [], make_header(ids[0])))
        # Every host creates or appends to every Session, in a different order: each Session
        # is created once and every position is won exactly once.
        for round_ in range(3):
            orders = [ids, ids[::-1], ids[10:] + ids[:10]]
            results = await asyncio.gather(
                *(
                    host.append(
                        Write(
                            sid,
                            round_,
                            make_events(round_, 1),
                            None if round_ else make_header(sid),
                        )
                    )
                    for host, order in zip(hosts, orders, strict=True)
                    for sid in order
                ),
                return_exceptions=True,
            )
            assert all(r is None or isinstance(r, StorageConflictError) for r in results), results
        listed = await hosts[1].list_sessions()
        assert sorted(s.header.id for s in listed) == ids
        for summary in listed:
            stored = await hosts[2].load(summary.header.id)
            assert stored is not None
            assert [e.seq for e in stored.events] == list(range(summary.length))
    finally:
        await asyncio.gather(*(h.close() for h in hosts))


def test_reindex_on_postgresql_rebuilds_the_wake_index(url: str) -> None:
    async def store() -> None:
        async with opened(PostgresBackend(url)) as backend:
            await backend.append(
                Write("s1", 0, [], make_header("s1"), wakes={"gone": 1_785_931_260_000})
            )

    async def earliest() -> int | None:
        async with opened(PostgresBackend(url)) as backend:
            return await backend.earliest_wake()

    asyncio.run(store())
    # No plugin (--overlay none): none files an entry again, so the stale one is cleared.
    result = run_dsh(["reindex", "--data", url, "--overlay", "none"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "reindexed 1 sessions: 0 wake entries"
    assert asyncio.run(earliest()) is None


async def test_a_second_open_while_opening_or_open_is_refused(url: str) -> None:
    backend = PostgresBackend(url)
    results = await asyncio.gather(backend.open(), backend.open(), return_exceptions=True)
    try:
        assert results[0] is None
        assert isinstance(results[1], StorageError)
        assert "already open" in str(results[1])
        with pytest.raises(StorageError, match="already open"):
            await backend.open()
        await backend.append(Write("s1", 0, [], make_header("s1")))
    finally:
        await backend.close()
    again = PostgresBackend(url)
    await again.open()  # a closed backend's store opens again
    await again.close()


def test_without_postgresql_the_cluster_fails_saying_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"scripts/system-deps"):
        bindir(tmp_path)
    for version in ("9", "15", "13"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    assert bindir(tmp_path) == tmp_path / "15" / "bin"


async def test_a_database_with_synchronous_commit_off_is_used_with_a_warning(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    for setting, warned in (("on", False), ("off", True)):
        dbname = url.rsplit("/", 1)[1]
        pg_cluster.execute(url, f"ALTER DATABASE {dbname} SET synchronous_commit = {setting}")
        backend = PostgresBackend(url)
        with capture_logs() as logs:
            await backend.open()
        await backend.close()
        events = [entry["event"] for entry in logs]
        assert ("storage.synchronous_commit_off" in events) is warned, events


# -- a host on PostgreSQL --------------------------------------------------------------------


async def test_a_host_on_postgresql_keeps_sessions_forks_and_wakes_across_a_restart(
    url: str,
) -> None:
    plugin, at = "waker", 1_785_931_260_000
    clock = ManualClock()
    async with LiveHost(backend=PostgresBackend(url), clock=clock, model="scripted") as host:
        host.load_plugin(plugin, factory=object)
        session = (await host.create_session()).session
        host.sessions.request_wake(session, plugin, at)
        child = (await host.fork_session(session.id)).session
        # Not flushed by hand: the host's close writes everything with its final flush.
    async with LiveHost(backend=PostgresBackend(url), clock=clock, model="scripted") as host:
        resumed = (await host.resume_session(session.id)).session
        assert dict(host.sessions.wakes(resumed)) == {plugin: at}
        assert await host.backend.due_wakes(at, 10) == [(session.id, plugin, at)]
        forked = await host.inspect(child.id)
        assert forked is not None
        assert forked.header.parent_session == session.id
        assert forked.wakes == {}
        listed = await host.backend.list_sessions()
        assert {s.header.id for s in listed} == {session.id, child.id}
