"""The Backend contract (:class:`dsh_host.conformance.BackendContract`) run against every backend.

The suite itself lives in :mod:`dsh_host.conformance` so that other backends can run it too; each
``Test<Backend>`` subclass here only says how to build (and rebuild, for reopen) its backend, and
a durable one how to damage a stored row from outside (:class:`DamagedRowContract`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dsh_host.conformance import BackendContract, DamagedRowContract
from dsh_host.persistence import Backend, MemoryBackend, PostgresBackend, SQLiteBackend
from dsh_host.testing import FaultInjectingBackend
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster


class TestMemoryBackend(BackendContract):
    def make(self, tmp_path: Path) -> Backend:
        return MemoryBackend()

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return closed  # the data lives in the object


class TestSQLiteBackend(BackendContract, DamagedRowContract):
    def make(self, tmp_path: Path) -> Backend:
        return SQLiteBackend(tmp_path / "data")

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return SQLiteBackend(tmp_path / "data")

    def damage_header(self, tmp_path: Path, session_id: str) -> None:
        outside = sqlite3.connect(tmp_path / "data" / "dsh.sqlite3", isolation_level=None)
        try:
            outside.execute("UPDATE sessions SET header = '{not json' WHERE id = ?", (session_id,))
        finally:
            outside.close()


class TestFaultInjectingBackend(BackendContract):
    """The test wrapper with no fault planned is a backend like any other."""

    def make(self, tmp_path: Path) -> Backend:
        return FaultInjectingBackend(SQLiteBackend(tmp_path / "data"))

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return FaultInjectingBackend(SQLiteBackend(tmp_path / "data"))


class TestPostgresBackend(BackendContract, DamagedRowContract):
    """A fresh database of the session's throwaway cluster per test (tests/pg.py)."""

    @pytest.fixture(autouse=True)
    def _database(self, pg_cluster: Cluster) -> None:  # noqa: F811 - the imported fixture
        self.cluster = pg_cluster
        self.url = pg_cluster.new_database()

    def make(self, tmp_path: Path) -> Backend:
        return PostgresBackend(self.url)

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return PostgresBackend(self.url)

    def damage_header(self, tmp_path: Path, session_id: str) -> None:
        self.cluster.execute(
            self.url, "UPDATE sessions SET header = '{not json' WHERE id = %s", session_id
        )
