"""``dsh serve``'s channels: a URL that cannot be a channel refuses start-up with one plain line
naming it masked, wherever it came from (``--notify``, ``DSH_NOTIFY_URLS``, the overlay's
``[notify] urls``), and nothing is created; ``--public-url`` must be https (or http on
localhost)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.procs import DSH, ROOT

SECRET = "tok-9c1e5SECRET"
BAD = f"notaservice://{SECRET}@example.com/x"


def serve(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DSH, "serve", "--data", str(tmp_path / "data"), "--port", "0", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "DSH_NOTIFY_URLS": "", **(env or {})},
    )


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert SECRET not in done.stderr
    return line


def test_a_bad_notify_flag_is_refused_with_the_url_masked(tmp_path: Path) -> None:
    line = refused(serve(tmp_path, "--notify", BAD))
    assert line == "dsh: notify URL 'notaservice://***@example.com/x' is not a valid apprise URL"
    assert not (tmp_path / "data").exists()


def test_a_bad_url_in_the_environment_is_refused_the_same_way(tmp_path: Path) -> None:
    good = "json://127.0.0.1:9/hook"
    line = refused(serve(tmp_path, env={"DSH_NOTIFY_URLS": f"{good}\n  {BAD} "}))
    assert line.startswith("dsh: notify URL 'notaservice://***@")


def test_a_bad_url_in_the_overlay_is_refused_and_a_bad_table_named(tmp_path: Path) -> None:
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(f'[plugins.schedule]\n\n[notify]\nurls = ["{BAD}"]\n')
    assert refused(serve(tmp_path, "--overlay", str(overlay))).startswith("dsh: notify URL")
    overlay.write_text(f'[notify]\nurls = "{BAD}"\n')
    line = refused(serve(tmp_path, "--overlay", str(overlay)))
    assert line == f"dsh: overlay {overlay}: notify.urls must be a list of strings"
    overlay.write_text('[notify]\nurl = ["x"]\n')
    line = refused(serve(tmp_path, "--overlay", str(overlay)))
    assert line == f"dsh: overlay {overlay}: unknown keys in [notify] ['url']"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("http://reminders.example.com", "must be https"),
        ("ftp://localhost/", "must be an http(s) URL"),
        ("https://example.com/?a=1", "must not carry a query or fragment"),
    ],
)
def test_a_public_url_browsers_would_refuse_push_on_is_refused(
    tmp_path: Path, value: str, why: str
) -> None:
    done = serve(tmp_path, "--public-url", value)
    assert done.returncode == 2
    assert why in done.stderr
