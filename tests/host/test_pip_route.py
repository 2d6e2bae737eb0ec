"""The pip route (issue 25 item 7): the built wheel, installed with pip into a new virtual
environment, runs ``dsh serve`` from a folder outside the repository and delivers a reminder,
with no file of the repository in reach.

The wheel is ``tests/test_packaging.py``'s (its ``wheel`` fixture, built once per module). pip
installs it as a person would, its dependencies included, from the package index this machine's
pip is configured with (PyPI, or a local mirror); a virtual environment borrowing this
checkout's ``.venv`` would also see the editable install of this very repository, which is what
the test must rule out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests import test_packaging
from tests.procs import LISTENING, ROOT, DshProcess

#: The wheel that tests/test_packaging.py's fixture ``wheel`` builds, as a fixture of this name.
built_wheel = test_packaging.wheel

pytestmark = pytest.mark.slow


def _dispatched(client: httpx.Client, sid: str, prompt: str) -> bool:
    entries = client.get(f"/api/sessions/{sid}/history").json()["entries"]
    return any(
        entry["event"]["type"] == "schedule/change"
        and entry["event"]["data"].get("operation") == "dispatch"
        and entry.get("view", {}).get("view", {}).get("prompt") == prompt
        for entry in entries
    )


def test_pip_install_then_dsh_serve_sets_and_delivers_a_reminder(built_wheel: Path, tmp_path: Path):
    # Fails before issue 25 item 7: `dsh serve` loaded no plugin without an overlay (and the
    # example overlay is not in the wheel), so the message got a `/tool NAME {json}` hint.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(built_wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Every package comes from the new environment, none from this checkout.
    code = (
        "import dsh_host, dsh_schedule, dsh_schedule_ui, dsh_hookspecs;"
        "mods = (dsh_host, dsh_schedule, dsh_schedule_ui, dsh_hookspecs);"
        "print('\\n'.join(m.__file__ for m in mods))"
    )
    where = subprocess.run(
        [str(python), "-c", code],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    ).stdout.split()
    assert len(where) == 4
    for path in map(Path, where):
        assert path.is_relative_to(venv), path
        assert not path.is_relative_to(ROOT), path
    server = DshProcess(
        ["serve", "--port", "0", "--data", str(tmp_path / "data")],
        command=[str(venv / "bin" / "dsh")],
        cwd=elsewhere,
        env={"PYTHONPATH": ""},
    )
    try:
        url = server.wait_for_line(LISTENING, timeout=60).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            sent = client.post(
                f"/api/sessions/{sid}/messages", json={"text": "remind me in 2 seconds to stretch"}
            )
            assert sent.status_code == 202, sent.text
            deadline = time.monotonic() + 30
            while not _dispatched(client, sid, "stretch"):
                assert time.monotonic() < deadline, client.get(f"/api/sessions/{sid}/history").text
                assert server.proc.poll() is None, server.stderr
                time.sleep(0.2)  # polling interval of a bounded wait on the condition above
        assert server.interrupt() == 0
        assert server.plain_stderr() == ["stopped; no reminders are pending"]
    finally:
        server.close()
