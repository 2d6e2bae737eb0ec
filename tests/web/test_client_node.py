"""Run the browser client's pure-logic suite with Node's built-in test runner."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MIN_NODE_MAJOR = 20


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (v20 or newer) is required for the browser client tests")
    result = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    match = re.match(r"v(\d+)\.", result.stdout.strip())
    if result.returncode != 0 or match is None:
        pytest.fail(f"cannot read the node version: {result.stdout!r} {result.stderr!r}")
    if int(match.group(1)) < MIN_NODE_MAJOR:
        pytest.fail(f"node {result.stdout.strip()} is older than v{MIN_NODE_MAJOR}")
    return node


def test_client_unit_suite() -> None:
    node = _node()
    result = subprocess.run(
        [node, "--test", "tests/js/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(
            f"node --test tests/js/ exited with {result.returncode}\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}",
            pytrace=False,
        )
    assert re.search(r"^# fail 0$", result.stdout, re.MULTILINE), result.stdout
