"""Deleting a Session on a PostgreSQL database two hosts share: a Session live on one host is
refused to the other (its log, rows and lease untouched); the holder deletes it, lease and all,
and neither host hears of a lost lease afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from dsh_host import LiveHost
from dsh_host.persistence import PostgresBackend, SessionLiveElsewhereError
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's cluster

from .board_plugin import PLUGIN, entry, load_pins
from .board_support import agrees

AT = 1_785_931_260_000


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


@pytest.fixture
async def two(url: str) -> AsyncIterator[tuple[LiveHost, LiveHost]]:
    def make(owner: str) -> LiveHost:
        return LiveHost(backend=PostgresBackend(url, owner=owner, lease_seconds=30), model="none")

    async with make("host-1") as one, make("host-2") as other:
        yield one, other


async def test_a_session_live_elsewhere_is_refused_and_its_holder_deletes_it(
    two: tuple[LiveHost, LiveHost],
) -> None:
    one, other = two
    pins = load_pins(one)
    session = (await one.create_session()).session
    pins.pin(session, "a", AT, "stretch")
    assert await one.sessions.flush(session) is True
    with pytest.raises(SessionLiveElsewhereError):
        await other.delete_session(session.id)
    assert await agrees(one.backend, session.id) == {"a": entry(AT, "stretch")}
    assert one.sessions.is_live(session)
    with capture_logs() as logs:
        assert await one.delete_session(session.id) is True
        assert one.leases is not None
        assert not one.leases.held(session.id)
        assert await one.leases.renew() == []  # its lease went with it: nothing is lost
    assert not [e for e in logs if e["log_level"] in ("warning", "error")]
    assert await other.backend.load(session.id) is None
    assert await other.backend.board_page(PLUGIN, "pending", limit=5) == []
    assert await other.delete_session(session.id) is False
