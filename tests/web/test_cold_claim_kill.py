"""A SIGKILL between a cold wake's claim and its dispatch still gives exactly one delivery
(issue 11 item 2), on SQLite and on PostgreSQL restarted as the same host and as a new one.

Boot 1 creates a reminder and is killed; it falls due while no server runs. Boot 2 claims the
due wake at start-up (it resumes the cold Session, taking its lease on PostgreSQL) and dies by
its own SIGKILL at a kill point of the chaos plugin (tests/chaos/plugin.py) on the due path:
while validating the reminder's follow-up, or with the follow-up in the live log while
validating the dispatch. Nothing of that is durable, so boot 3 claims the wake again and
delivers it: one dispatch and one reminder turn in the stored log, nobody attached throughout.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_schedule import parse_instant
from tests.api import call_tool, dispatches, new_session, wait_for
from tests.api import history as events
from tests.chaos.control import FIRED, POINTS, Control
from tests.chaos.harness import install_plugin
from tests.pg import pg_cluster  # noqa: F401 - the session's cluster, for the postgres cases
from tests.web.lanes import Store, now_ms, store  # noqa: F401 - store is a fixture


@pytest.fixture
def chaos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Control, Path]:
    """The chaos plugin importable by ``dsh serve`` children, its control block, an overlay."""
    plugin = install_plugin(tmp_path / "plugin")
    inherited = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(plugin), *filter(None, [inherited])]))
    control = Control.create(tmp_path / "control")
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(
        f'[plugins.chaos]\ncontrol = "{control.path}"\n\n'
        "[plugins.schedule]\ncold_delivery = true\n\n[plugins.ui-schedule]\n"
    )
    return control, overlay


def _turns(entries: list[dict[str, object]]) -> int:
    return sum(1 for e in entries if e["event"]["type"] == "agent/followup")  # type: ignore[index]


@pytest.mark.parametrize("point", ["followup-append", "dispatch-append"])
def test_a_sigkill_between_claim_and_dispatch_still_delivers_exactly_once(
    store: Store,  # noqa: F811 - the imported fixture
    chaos: tuple[Control, Path],
    point: str,
) -> None:
    control, overlay = chaos
    boot1 = store.serve(overlay=overlay)
    sid = new_session(boot1)
    made = call_tool(boot1, sid, "schedule_create", {"prompt": "p", "after_seconds": 1})
    store.sigkill(boot1)
    due = made["scheduledAt"]
    wait_for(lambda: now_ms() > parse_instant(due))  # due while no server runs

    control.reset()
    control.arm(point, 1)
    boot2 = store.serve(overlay=overlay)  # claims the due wake at start-up ...
    try:
        boot2.process.proc.wait(timeout=30)  # ... and dies on the due path
        assert control.get(FIRED) == POINTS[point][0]
    finally:
        boot2.close()
    store.sigkill(boot2)  # (dead already: waits for its leases as a new host would)

    control.reset()
    boot3 = store.serve(overlay=overlay)
    try:
        wait_for(lambda: dispatches(events(boot3, sid)), timeout=30)
        assert boot3.http.post(f"/api/sessions/{sid}/flush").json()["durable"] is True
        stored = events(boot3, sid)
        assert len(dispatches(stored)) == 1
        assert _turns(stored) == 1
    finally:
        boot3.close()
