"""The suites of :mod:`dsh_host.conformance`: our host runs them over both backends, the README's
example runs them as a consumer would (strict asyncio mode), and they fail a host or a backend
that breaks the contract."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_hookspecs import hookimpl
from dsh_host import PluginLoadError
from dsh_host.conformance import (
    BackendContract,
    HostContract,
    ReferenceHost,
    ReferenceHostContract,
    TurnGate,
)
from dsh_host.persistence import Backend, MemoryBackend, SQLiteBackend

ROOT = Path(__file__).resolve().parents[1]


class TestHostOverMemory(ReferenceHostContract):
    def make_backend(self, tmp_path: Path) -> Backend:
        return MemoryBackend()


class TestHostOverSQLite(ReferenceHostContract):
    def make_backend(self, tmp_path: Path) -> Backend:
        return SQLiteBackend(tmp_path / "data")


# -- the suites as a consumer runs them ---------------------------------------------------------


def run_suite(tmp_path: Path, source: str) -> tuple[int, str]:
    """Run ``source`` as a test module with pytest in a fresh folder (no project config, so
    pytest-asyncio is in its default strict mode); return the exit code and the report."""
    (tmp_path / "test_consumer.py").write_text(source)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def case_count(*suites: type) -> int:
    """How many cases pytest collects from ``suites`` (parametrized cases counted)."""
    total = 0
    for suite in suites:
        for name in dir(suite):
            if name.startswith("test_"):
                marks = getattr(getattr(suite, name), "pytestmark", [])
                params = [m for m in marks if m.name == "parametrize"]
                count = 1
                for mark in params:
                    count *= len(mark.args[1])
                total += count
    return total


def readme_example() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Run the conformance suite against your host", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def test_the_readme_example_passes_in_strict_asyncio_mode(tmp_path):
    source = readme_example()
    assert len(source.splitlines()) <= 20
    code, report = run_suite(tmp_path, source)
    assert code == 0, report
    expected = case_count(BackendContract, HostContract)
    assert f"{expected} passed" in report, report


def test_the_readme_names_what_the_module_exports():
    from dsh_host import conformance

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Run the conformance suite against your host", 1)[1]
    section = section.split("\n## ", 1)[0]
    named = set(re.findall(r"`([A-Z][A-Za-z]+)`", section))
    assert named
    assert named <= set(conformance.__all__) | {"Test"}


OVERWRITING_BACKEND = """
from pathlib import Path

from dsh_host.conformance import BackendContract
from dsh_host.persistence import (
    Backend, StorageConflictError, StorageError, StoredSession, StoredSummary,
)


class Overwriting:
    '''Cuts an existing log at whatever start it is given: never a conflict.'''

    name = "overwriting"

    def __init__(self):
        self.logs = {}
        self.is_open = False

    async def open(self):
        self.is_open = True

    async def close(self):
        self.is_open = False

    def _check(self):
        if not self.is_open:
            raise StorageError("closed")

    async def load(self, session_id):
        self._check()
        if session_id not in self.logs:
            return None
        header, events = self.logs[session_id]
        return StoredSession(header=header, events=tuple(events))

    async def list_sessions(self):
        self._check()
        rows = sorted(self.logs.values(), key=lambda row: (row[0].created_at, row[0].id))
        return [StoredSummary(header=header, length=len(events)) for header, events in rows]

    async def append(self, write):
        self._check()
        session_id, start, events = write.session_id, write.start, write.events
        if write.header is not None:
            self.logs[session_id] = (write.header, list(events))
            return
        if session_id not in self.logs:
            raise StorageConflictError(f"session {session_id} does not exist")
        stored = self.logs[session_id][1]
        del stored[start:]
        stored.extend(events)


class TestOverwriting(BackendContract):
    def make(self, tmp_path: Path) -> Backend:
        return Overwriting()

    def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
        return closed
"""


def test_the_backend_suite_fails_a_backend_that_overwrites_its_log(tmp_path):
    code, report = run_suite(tmp_path, OVERWRITING_BACKEND)
    assert code == 1, report
    failed = set(re.findall(r"FAILED \S+::TestOverwriting::(\w+)", report))
    assert "test_a_divergent_request_never_overwrites_the_stored_prefix" in failed, report
    assert "test_a_writer_that_lost_an_acknowledgement_recovers_from_the_stored_cursor" in failed


HISTORIC_HOST = """
from pathlib import Path

from dsh_host.conformance import ReferenceHost, ReferenceHostContract
from dsh_host.persistence import MemoryBackend


class Historic(ReferenceHost):
    '''Replays the Agents published so far to a plugin loaded late (publication is not
    historic in the contract).'''

    def load_plugin(self, name, plugin, config):
        super().load_plugin(name, plugin, config)
        for agent in self.host.agents.roots():
            plugin.dsh_agent_published(agent=agent)


class TestHistoric(ReferenceHostContract):
    async def start_host(self, plugins, turns, tmp_path: Path):
        return await Historic.start(MemoryBackend(), plugins, turns)
"""


def test_the_host_suite_fails_a_host_that_replays_publication(tmp_path):
    code, report = run_suite(tmp_path, HISTORIC_HOST)
    assert code == 1, report
    failed = set(re.findall(r"FAILED \S+::TestHistoric::(\w+)", report))
    assert "test_root_agents_are_published_only_to_plugins_loaded_before_them" in failed, report
    # The suite's asserts are rewritten by pytest: a failing case shows the values it compared.
    assert "Left contains one more item" in report, report


# -- the pieces a host author uses ----------------------------------------------------------------


async def test_a_turn_gate_opened_for_all_lets_later_turns_through_at_once():
    turns = TurnGate()
    turns.open_all()
    assert await turns.run("after teardown began") == TurnGate.reply_to("after teardown began")
    assert turns.started == ["after teardown began"]


async def test_the_reference_adapter_reports_nothing_held_and_refuses_a_gone_agent():
    host = await ReferenceHost.start(MemoryBackend(), [], TurnGate())
    try:
        assert host.storage.held == 0
        host.storage.release()  # nothing stalled: a no-op
        agent = await host.create_session()
        await host.close_session(agent.session.id)
        with pytest.raises(LookupError, match="is not live"):
            host.send(agent, "late")
    finally:
        await host.close()


class FailsToStart:
    @hookimpl
    def dsh_plugin_start(self, host, config):
        raise RuntimeError("no config (conformance)")


async def test_the_reference_adapter_closes_its_host_when_a_plugin_fails_to_load(tmp_path):
    backend = SQLiteBackend(tmp_path / "data")
    with pytest.raises(PluginLoadError, match="broken"):
        await ReferenceHost.start(backend, [("broken", FailsToStart())], TurnGate())
    # The host was closed: its store is free to be opened again.
    again = SQLiteBackend(tmp_path / "data")
    await again.open()
    await again.close()
