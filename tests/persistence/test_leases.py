"""Session leases on PostgreSQL (issue 11 item 5): one live owner per Session across hosts.

Two :class:`PostgresBackend` objects on one database stand for two hosts. A lease is taken by
the creator of a Session, refused to another while it is live, handed on once released or run
out, and every append carries its epoch: the database itself (its ``sessions_fenced`` trigger)
refuses a write made under an epoch that is no longer current. Running a lease out is done
either by waiting for a short time to live or, where the test is about what follows, by moving
its expiry into the past from outside (what the database clock would do).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest
from structlog.testing import capture_logs

from dsh_host.conformance import make_events, make_header
from dsh_host.persistence import (
    PostgresBackend,
    SessionLiveElsewhereError,
    StorageError,
    StorageFencedError,
    Write,
    leases_of,
    opened,
)
from dsh_host.persistence.postgres import SCHEMA_VERSION
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


@pytest.fixture
async def hosts(url: str) -> AsyncIterator[tuple[PostgresBackend, PostgresBackend]]:
    a, b = PostgresBackend(url, owner="host-a"), PostgresBackend(url, owner="host-b")
    async with opened(a), opened(b):
        yield a, b


def _row(url: str, sid: str) -> tuple[object, ...]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT owner, epoch, writer, length FROM sessions WHERE id = %s", (sid,)
        ).fetchone()
    assert row is not None
    return row


def _run_out(url: str, sid: str) -> None:
    """The lease of ``sid`` expires (as if its holder stopped renewing long enough ago)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE sessions SET lease_until = 0 WHERE id = %s", (sid,))


async def _created(backend: PostgresBackend, *sids: str) -> None:
    for sid in sids:
        await backend.append(Write(sid, 0, make_events(0, 1), make_header(sid)))


def _lost(backend: PostgresBackend) -> list[str]:
    seen: list[str] = []
    backend.leases.on_lost(seen.append)
    return seen


async def test_a_created_session_is_leased_to_its_creator_and_refused_to_another_host(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await _created(a, "s1")
    assert a.leases.held("s1")
    assert _row(url, "s1")[:2] == ("host-a", 1)
    with pytest.raises(SessionLiveElsewhereError, match=r"live on another host \(host-a\)"):
        await b.leases.acquire("s1")
    assert await b.leases.live_elsewhere("s1")
    assert not await a.leases.live_elsewhere("s1")
    assert not b.leases.held("s1")
    assert leases_of(a) is a.leases


async def test_a_released_lease_goes_to_the_next_host_with_a_larger_epoch(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await _created(a, "s1")
    await a.leases.release("s1")
    assert not a.leases.held("s1")
    assert _row(url, "s1")[0] is None
    await b.leases.acquire("s1")
    assert _row(url, "s1")[:3] == ("host-b", 2, 2)
    await b.append(Write("s1", 1, make_events(1, 1)))
    await b.leases.acquire("s1")  # held already: nothing changes
    assert _row(url, "s1")[1:] == (2, 2, 2)


async def test_closing_a_backend_releases_every_lease_it_holds(url: str) -> None:
    async with opened(PostgresBackend(url, owner="host-a")) as a:
        for sid in ("s1", "s2"):
            await a.append(Write(sid, 0, make_events(0, 1), make_header(sid)))
    assert _row(url, "s1")[0] is None
    assert _row(url, "s2")[0] is None


async def test_a_lease_nobody_renews_runs_out_after_its_time_to_live_a_renewed_one_does_not(
    url: str,
) -> None:
    alive = PostgresBackend(url, owner="alive", lease_seconds=0.6)
    dead = PostgresBackend(url, owner="dead", lease_seconds=0.6)  # never renews
    other = PostgresBackend(url, owner="other")
    async with opened(alive), opened(dead), opened(other):
        assert alive.leases.renew_interval == pytest.approx(0.2)
        await alive.append(Write("kept", 0, make_events(0, 1), make_header("kept")))
        await dead.append(Write("left", 0, make_events(0, 1), make_header("left")))
        with pytest.raises(SessionLiveElsewhereError):
            await other.leases.acquire("left")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while await other.leases.live_elsewhere("left"):  # runs out after its 0.6 s
            assert await alive.leases.renew() == []
            assert loop.time() < deadline, "an unrenewed lease never ran out"
            await asyncio.sleep(alive.leases.renew_interval)  # the renewal cadence
        await other.leases.acquire("left")
        # "kept" is older than "left" and was renewed all along: still alive's.
        with pytest.raises(SessionLiveElsewhereError, match=r"\(alive\)"):
            await other.leases.acquire("kept")
        assert await dead.leases.renew() == ["left"]


async def test_the_database_refuses_an_append_made_under_a_stale_epoch(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    lost = _lost(a)
    await _created(a, "s1", "s2")
    _run_out(url, "s1")  # a was paused past its lease ...
    await b.leases.acquire("s1")  # ... and b took s1 over
    await b.append(Write("s1", 1, make_events(1, 1)))
    # a wakes up and writes both Sessions in one group: s1 alone is refused.
    stale, fine = await asyncio.gather(
        a.append(Write("s1", 2, make_events(2, 1), wakes={"p": 5})),
        a.append(Write("s2", 1, make_events(1, 1))),
        return_exceptions=True,
    )
    assert isinstance(stale, StorageFencedError)
    assert "refused by the database" in str(stale)
    assert fine is None
    assert lost == ["s1"]
    assert a.leases.fenced == 1
    assert not a.leases.held("s1")
    stored = await b.load("s1")
    assert stored is not None
    assert len(stored.events) == 2
    assert stored.wakes == {}
    assert _row(url, "s1") == ("host-b", 2, 2, 2)
    # Having lost it, a claims it on its next write only once the lease is free again.
    with pytest.raises(StorageFencedError):
        await a.append(Write("s1", 2, [], wakes={"p": 5}))
    assert lost == ["s1"]  # told once
    assert a.leases.fenced == 2


async def test_the_fence_is_the_database_s_own_not_the_process_s(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await _created(a, "s1")
    _run_out(url, "s1")
    await b.leases.acquire("s1")
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.RaiseException, match=r"dsh_fenced.*epoch 2.*epoch 1"):
            conn.execute("UPDATE sessions SET length = 1, writer = 1 WHERE id = 's1'")
        with pytest.raises(psycopg.errors.RaiseException, match="cannot go back"):
            conn.execute("UPDATE sessions SET epoch = 1, writer = 1 WHERE id = 's1'")
    assert _row(url, "s1") == ("host-b", 2, 2, 1)


async def test_renewal_reports_a_lease_another_host_took_over(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    lost = _lost(a)
    await _created(a, "s1", "s2")
    assert await a.leases.renew() == []
    _run_out(url, "s1")
    await b.leases.acquire("s1")
    assert await a.leases.renew() == ["s1"]
    assert lost == ["s1"]
    assert a.leases.held("s2")
    assert await b.leases.renew() == []


async def test_releasing_a_lease_another_host_took_over_logs_it_lost_and_leaves_that_host_alone(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await _created(a, "s1", "s2")
    _run_out(url, "s1")  # a was frozen past its lease; b took s1 over
    await b.leases.acquire("s1")
    with capture_logs() as logs:
        await a.leases.release_all()  # a evicts both on waking
    lost = [r for r in logs if r["event"] == "storage.lease_lost"]
    assert [(r["session_id"], r["epoch"], r["fenced"]) for r in lost] == [("s1", 1, False)]
    assert _row(url, "s1")[:2] == ("host-b", 2)  # b still holds it
    assert _row(url, "s2")[0] is None  # s2 was a's and is free now


async def test_due_wakes_of_a_session_another_live_host_leases_wait_for_its_lease_to_run_out(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await a.append(Write("s1", 0, make_events(0, 1), make_header("s1"), wakes={"p": 1000}))
    assert await a.due_wakes(10**13, 10) == [("s1", "p", 1000)]
    assert await b.due_wakes(10**13, 10) == []  # a delivers it
    earliest = await b.earliest_wake()
    assert earliest is not None
    assert earliest > 1000  # just after a's lease would run out
    assert await a.earliest_wake() == 1000
    _run_out(url, "s1")  # a died
    assert await b.due_wakes(10**13, 10) == [("s1", "p", 1000)]
    assert await b.earliest_wake() == 1000


async def test_a_skip_locked_acquire_passes_over_a_session_another_host_is_claiming(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await _created(a, "s1")
    await a.leases.release("s1")
    async with await psycopg.AsyncConnection.connect(url) as other:
        await other.execute("SELECT id FROM sessions WHERE id = 's1' FOR UPDATE")  # claiming
        with pytest.raises(SessionLiveElsewhereError, match="being claimed"):
            await asyncio.wait_for(b.leases.acquire("s1", skip_locked=True), 5)
        waiting = asyncio.ensure_future(b.leases.acquire("s1"))  # waits for the claim
        await asyncio.sleep(0.2)  # gives it time to block; it must not have finished
        assert not waiting.done()
        await other.rollback()  # the other host's claim came to nothing
    await asyncio.wait_for(waiting, 10)
    assert b.leases.held("s1")


async def test_a_write_after_a_restart_claims_the_free_lease_in_its_own_transaction(
    url: str,
) -> None:
    async with opened(PostgresBackend(url, owner="host-a")) as a:
        await _created(a, "s1")
    async with opened(PostgresBackend(url, owner="host-b")) as b:
        assert not b.leases.held("s1")
        await b.append(Write("s1", 1, make_events(1, 1)))
        assert b.leases.held("s1")
        assert _row(url, "s1") == ("host-b", 2, 2, 2)
        async with opened(PostgresBackend(url, owner="host-c")) as c:
            with pytest.raises(StorageFencedError):
                await c.append(Write("s1", 2, make_events(2, 1)))  # b holds it
            assert c.leases.fenced == 1
    assert _row(url, "s1") == (None, 2, 2, 2)


async def test_a_version_1_database_gets_its_leases_and_fence_at_open(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with opened(PostgresBackend(url)) as first:
        await first.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
    for sql in (
        "DROP TABLE board",  # added by version 3
        "DROP TABLE names",
        "DROP TRIGGER sessions_fenced ON sessions",
        "DROP FUNCTION dsh_fence()",
        "ALTER TABLE sessions DROP COLUMN owner, DROP COLUMN lease_until, DROP COLUMN writer",
        "UPDATE sessions SET epoch = 0",
        "UPDATE dsh_schema SET version = 1",
    ):
        pg_cluster.execute(url, sql)
    async with opened(PostgresBackend(url, owner="host-a")) as a:
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT version FROM dsh_schema").fetchall() == [(SCHEMA_VERSION,)]
        await a.append(Write("s1", 1, make_events(1, 1)))
        assert _row(url, "s1") == ("host-a", 1, 1, 2)
        with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.Error):
            conn.execute("UPDATE sessions SET writer = 0 WHERE id = 's1'")


async def test_concurrent_acquires_of_one_session_share_one_epoch(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    a, b = hosts
    await _created(a, "s1")
    await a.leases.release("s1")
    await asyncio.gather(*(b.leases.acquire("s1") for _ in range(5)))
    assert _row(url, "s1")[:2] == ("host-b", 2)  # taken once, not five times
    assert b.leases.epoch("s1") == 2
    await b.append(Write("s1", 1, make_events(1, 1)))  # the epoch recorded is the current one


async def test_releases_asked_for_together_all_hand_their_sessions_on(
    hosts: tuple[PostgresBackend, PostgresBackend], url: str
) -> None:
    # A herd of woken Sessions going cold releases many leases at once: they travel together,
    # each caller returns once its own lease is free, and none is reported lost.
    a, b = hosts
    sids = [f"s{i}" for i in range(40)]
    await _created(a, *sids)
    lost = _lost(a)
    with capture_logs() as logs:
        await asyncio.gather(*(a.leases.release(sid) for sid in sids))
    assert not any(entry["event"] == "storage.lease_lost" for entry in logs)
    assert lost == []
    assert [_row(url, sid)[0] for sid in sids] == [None] * len(sids)
    for sid in sids:
        await b.leases.acquire(sid)  # free at once, no waiting for a lease to run out
    assert all(b.leases.held(sid) for sid in sids)


async def test_a_release_that_fails_is_reported_to_each_of_its_callers(
    hosts: tuple[PostgresBackend, PostgresBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = hosts
    await _created(a, "s1", "s2")

    async def unreachable(*_: object) -> None:
        raise StorageError("the database did not answer")

    monkeypatch.setattr(a.leases, "_borrow", unreachable)
    outcomes = await asyncio.gather(
        a.leases.release("s1"), a.leases.release("s2"), return_exceptions=True
    )
    assert [str(outcome) for outcome in outcomes] == ["the database did not answer"] * 2
    monkeypatch.undo()
    await a.leases.release("s3")  # nothing held: nothing sent, no error
