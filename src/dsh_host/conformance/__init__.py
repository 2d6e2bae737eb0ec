"""The dsh contract suites, as pytest classes another host or backend subclasses.

docs/design.md section 8.6: the plugins run on any host that keeps the contract; these suites are
that contract, executable. Each is a class whose name does not start with ``Test`` (so pytest
does not collect it where it is defined); a test module subclasses it under a ``Test...`` name
and provides a factory:

* :class:`BackendContract` (``make(tmp_path)`` and ``reopen(closed, tmp_path)``): append
  positions and conflicts, cursor recovery, divergent requests, malformed requests, listing,
  strict JSON, concurrency, reopen and close, the wake entries (stored with their batch,
  replaced, cleared, absent after a refused append, ``due_wakes`` in time order, kept across a
  reopen), the board rows and names (stored with their batch, ``board_page`` ordered by
  instant, Session and key after a cursor, ``board_count``), ``delete`` (everything of the
  Session goes, a fork stays) and the Session list a page at a time (``session_page``: newest
  first after a cursor, with stored names, ``session_count``; through the backend's own
  ``list_page`` when it offers :class:`~dsh_host.persistence.PagedBackend`);
  :class:`DamagedRowContract` (``make`` and ``damage_header(tmp_path, session_id)``) for a
  durable store: an undecodable row is listed as damaged, keeps its place in a page and never
  hides the others.
* :class:`FlushContract`, :class:`AgentPhaseContract`, :class:`PublicationContract`,
  :class:`WakeContract`, :class:`BoardContract`, or all five as :class:`HostContract` (``async
  start_host(plugins, turns, tmp_path) -> HostUnderTest``): the flush contract, the Agent
  phases, publication and disposal, the durable wake index of ``SessionStore.request_wake`` and
  the board of ``SessionStore.post``. They drive a host only through
  :mod:`dsh_hookspecs` (what plugins are handed, by the :class:`Recorder` plugin they load) and
  the few operations of :class:`HostUnderTest`.
* :class:`ReferenceHostContract` (``make_backend(tmp_path)``): the host suites against
  :class:`dsh_host.LiveHost` over your backend.

Example (a backend)::

    from pathlib import Path

    from dsh_host.conformance import BackendContract, ReferenceHostContract
    from dsh_host.persistence import Backend, SQLiteBackend


    class TestMyBackend(BackendContract):
        def make(self, tmp_path: Path) -> Backend:
            return SQLiteBackend(tmp_path / "store")

        def reopen(self, closed: Backend, tmp_path: Path) -> Backend:
            return SQLiteBackend(tmp_path / "store")


    class TestMyBackendInTheHost(ReferenceHostContract):
        def make_backend(self, tmp_path: Path) -> Backend:
            return SQLiteBackend(tmp_path / "store")

This is a test-support module: importing it needs pytest and pytest-asyncio (the ``test``
extra). Every case is an ``async`` test marked ``asyncio`` and every async fixture is a
``pytest_asyncio`` fixture, so the suites run whether or not your project sets
``asyncio_mode = "auto"``.
"""

# ruff: noqa: E402 - the suites are imported after their asserts are registered for rewriting

from __future__ import annotations

import pytest

# The cases live here, not in the consumer's test module: let pytest rewrite their asserts so
# that a failing case reports its values. Must run before the modules below are imported.
_CASES = (
    "_agents",
    "_backend",
    "_board",
    "_flush",
    "_host",
    "_publication",
    "_reference",
    "_wakes",
)
pytest.register_assert_rewrite(*(f"{__name__}.{module}" for module in _CASES))

from ._agents import AgentPhaseContract
from ._backend import (
    AWKWARD,
    BackendContract,
    DamagedRowContract,
    assert_stored,
    make_event,
    make_events,
    make_header,
)
from ._board import BoardContract
from ._flush import FlushContract
from ._host import (
    PLUGIN,
    REFUSED_TYPE,
    HostSuite,
    HostUnderTest,
    Journal,
    Recorder,
    Rig,
    StorageControl,
    TurnGate,
)
from ._publication import PublicationContract
from ._reference import HostContract, ReferenceHost, ReferenceHostContract
from ._wakes import WakeContract

__all__ = [
    "AWKWARD",
    "PLUGIN",
    "REFUSED_TYPE",
    "AgentPhaseContract",
    "BackendContract",
    "BoardContract",
    "DamagedRowContract",
    "FlushContract",
    "HostContract",
    "HostSuite",
    "HostUnderTest",
    "Journal",
    "PublicationContract",
    "Recorder",
    "ReferenceHost",
    "ReferenceHostContract",
    "Rig",
    "StorageControl",
    "TurnGate",
    "WakeContract",
    "assert_stored",
    "make_event",
    "make_events",
    "make_header",
]
