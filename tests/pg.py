"""A throwaway PostgreSQL cluster for the tests: Debian's binaries, loopback, a temporary folder.

:func:`pg_cluster` is a session-scoped fixture (import it into a test module); every module that
imports it shares the one cluster of the process, stopped when the last user's session ends.
:meth:`Cluster.new_database` gives each test a fresh database (from ``template0``).

PostgreSQL refuses to run as root, and CI runs as root: then the server runs as ``nobody``
(``runuser``) in a folder owned by it. Without PostgreSQL on the machine the fixture fails
with a message saying how to install it (``scripts/system-deps``); it never skips.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

USER = "dsh"


def bindir(root: Path = Path("/usr/lib/postgresql")) -> Path:
    """The newest Debian PostgreSQL's binaries under ``root``; a clear failure without one."""
    found = sorted(root.glob("*/bin/initdb"), key=lambda p: (len(p.parts[-3]), p.parts[-3]))
    if not found:
        pytest.fail(
            "PostgreSQL is not installed: /usr/lib/postgresql/*/bin/initdb is missing; "
            "run scripts/system-deps (installs Debian's postgresql package)",
            pytrace=False,
        )
    return found[-1].parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """One running PostgreSQL server on 127.0.0.1 with a trusted superuser :data:`USER`."""

    def __init__(self) -> None:
        binaries = bindir()
        self.root = Path(tempfile.mkdtemp(prefix="dsh-pg-"))
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            self._as_user = ["runuser", "-u", "nobody", "--"]
            shutil.chown(self.root, "nobody", "nogroup")
        self.root.chmod(0o700)
        self._pg_ctl = str(binaries / "pg_ctl")
        self.data = self.root / "data"
        self._names = itertools.count()
        self._run(str(binaries / "initdb"), "-D", str(self.data), "-U", USER, "--auth=trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")  # fmt: skip
        for attempt in range(3):  # a free port may be taken before the server binds it
            self.port = _free_port()
            options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root}"
            # -w: pg_ctl itself waits (bounded by -t) until the server accepts connections.
            if self._run(self._pg_ctl, "start", "-w", "-t", "60", "-D", str(self.data),
                         "-l", str(self.root / "server.log"), "-o", options,
                         final=attempt == 2):  # fmt: skip
                break

    def _run(self, *args: str, final: bool = True) -> bool:
        """Run ``args`` as the server's user; on failure ``False``, or (``final``) fail."""
        done = subprocess.run(
            [*self._as_user, *args], cwd=self.root, capture_output=True, text=True, check=False
        )
        if done.returncode == 0:
            return True
        if final:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            pytest.fail(f"{args[0]} failed:\n{done.stdout}{done.stderr}\n{tail}", pytrace=False)
        return False

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        auth = USER if password is None else f"{USER}:{password}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8'")
        return self.url(name)

    def execute(self, url: str, sql: str, *params: object) -> None:
        """Run ``sql`` on the database ``url`` from outside any backend."""
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql, params)  # type: ignore[arg-type]

    def stop(self) -> None:
        try:
            self._run(self._pg_ctl, "stop", "-m", "fast", "-w", "-t", "60", "-D", str(self.data))
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


_lock = threading.Lock()
_cluster: Cluster | None = None
_users = 0


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    global _cluster, _users  # noqa: PLW0603 - one cluster per process, shared by modules
    with _lock:
        if _cluster is None:
            _cluster = Cluster()
        _users += 1
        cluster = _cluster
    try:
        yield cluster
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                _cluster = None
                cluster.stop()
