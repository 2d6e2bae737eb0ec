"""The ``dsh`` CLI as real processes."""

from __future__ import annotations

import time

from tests.procs import DshProcess, run_dsh


def test_help_lists_the_commands():
    result = run_dsh(["--help"])
    assert result.returncode == 0
    assert "serve" in result.stdout
    assert "sessions" in result.stdout
    serve = run_dsh(["serve", "--help"])
    for flag in ("--overlay", "--data", "--host", "--port", "--model", "--token"):
        assert flag in serve.stdout


def test_sessions_on_an_empty_data_folder(tmp_path):
    result = run_dsh(["sessions", "--data", str(tmp_path / "data")])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no sessions"


def test_serve_refuses_a_bad_overlay_with_one_clear_message(tmp_path):
    overlay = tmp_path / "overlay.toml"
    overlay.write_text("[plugins.no-such-plugin]\n")
    result = run_dsh(
        ["serve", "--data", str(tmp_path / "d"), "--port", "0", "--overlay", str(overlay)]
    )
    assert result.returncode == 1
    assert "plugin 'no-such-plugin': no such plugin" in result.stderr


def test_serve_exits_zero_on_sigterm_and_a_second_process_is_refused(tmp_path):
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        server.wait_for_line(r"listening on|ready")
        second = run_dsh(["serve", "--data", str(data), "--port", "0"])
        assert second.returncode == 1
        assert "already in use by another dsh process" in second.stderr
        started = time.monotonic()
        assert server.terminate(timeout=5) == 0
        assert time.monotonic() - started < 5
    finally:
        server.close()
