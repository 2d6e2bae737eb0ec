"""A store of many Sessions from the command line: ``dsh sessions`` prints a page (the newest
first) and says how many more there are; ``dsh serve`` boots without reading every stored
Session when the store was closed cleanly, and checks it whole when it was not."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from dsh_hookspecs import SessionHeader
from dsh_host.persistence import SQLiteBackend, Write, opened
from tests.api import wait_for
from tests.procs import LISTENING, DshProcess, run_dsh

CREATED = 1_700_000_000_000


def _store(data: Path, count: int) -> list[str]:
    """A closed store holding ``count`` empty Sessions ``s000``.. (the last is the newest); their
    ids, newest first."""

    async def write() -> None:
        async with opened(SQLiteBackend(data)) as backend:
            await asyncio.gather(
                *(
                    backend.append(
                        Write(
                            f"s{n:03d}",
                            0,
                            [],
                            SessionHeader(version=1, id=f"s{n:03d}", created_at=CREATED + n),
                        ),
                    )
                    for n in range(count)
                )
            )

    asyncio.run(write())
    return [f"s{n:03d}" for n in reversed(range(count))]


def _ids(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines() if line.startswith("s")]


def test_sessions_refuses_a_limit_that_is_not_a_positive_number_or_given_with_all(tmp_path):
    data = tmp_path / "data"
    _store(data, 1)
    for args in (["--limit", "0"], ["--limit", "-3"], ["--limit", "many"], ["--limit", "2.5"]):
        refused = run_dsh(["sessions", "--data", str(data), *args])
        assert refused.returncode == 2, (args, refused.stdout)
        assert "--limit" in refused.stderr
        assert refused.stdout == ""
    both = run_dsh(["sessions", "--data", str(data), "--limit", "5", "--all"])
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr


def test_sessions_prints_the_newest_fifty_and_says_how_many_more(tmp_path):
    data = tmp_path / "data"
    newest_first = _store(data, 53)
    listed = run_dsh(["sessions", "--data", str(data)])
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert _ids(listed.stdout) == newest_first[:50]
    assert lines[-1] == "\u2026 and 3 more; use --limit or --all"
    assert lines[0].startswith("s052  2023-11-14T22:13:20Z  0 events  no reminders pending")
    # --limit N: N rows, then the rest counted.
    two = run_dsh(["sessions", "--data", str(data), "--limit", "2"])
    assert _ids(two.stdout) == newest_first[:2]
    assert two.stdout.splitlines()[-1] == "\u2026 and 51 more; use --limit or --all"
    # Exactly as many as there are: no line about more.
    exact = run_dsh(["sessions", "--data", str(data), "--limit", "53"])
    assert _ids(exact.stdout) == newest_first
    assert "more" not in exact.stdout
    # --all: everything, page after page of storage's index.
    every = run_dsh(["sessions", "--data", str(data), "--all"])
    assert _ids(every.stdout) == newest_first
    assert "more" not in every.stdout


def test_sessions_json_keeps_stdout_to_json_lines_and_says_more_on_stderr(tmp_path):
    data = tmp_path / "data"
    newest_first = _store(data, 4)
    listed = run_dsh(["sessions", "--data", str(data), "--json", "--limit", "3"])
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [row["id"] for row in rows] == newest_first[:3]
    assert rows[0]["createdAt"] == CREATED + 3
    assert "\u2026 and 1 more; use --limit or --all" in listed.stderr


def test_sessions_beside_a_running_server_pages_the_same_way(tmp_path):
    data = tmp_path / "data"
    newest_first = _store(data, 7)
    server = DshProcess(["serve", "--data", str(data), "--port", "0", "--overlay", "none"])
    try:
        server.wait_for_line(LISTENING)
        listed = run_dsh(["sessions", "--data", str(data), "--limit", "5"])
        assert listed.returncode == 0, listed.stderr
        assert "warning" not in listed.stderr
        assert _ids(listed.stdout) == newest_first[:5]
        assert listed.stdout.splitlines()[-1] == "\u2026 and 2 more; use --limit or --all"
        every = run_dsh(["sessions", "--data", str(data), "--all"])
        assert _ids(every.stdout) == newest_first
        assert server.terminate(timeout=10) == 0
    finally:
        server.close()


def _boot(data: Path) -> tuple[DshProcess, str]:
    server = DshProcess(["serve", "--data", str(data), "--port", "0", "--overlay", "none"])
    return server, server.wait_for_line(LISTENING).group(1)


def test_serve_checks_a_store_whole_after_a_crash_and_trusts_only_a_clean_close(tmp_path):
    data = tmp_path / "data"
    newest_first = _store(data, 3)
    seal = data / "dsh.sqlite3.clean"
    assert seal.is_file()  # the writer closed it cleanly
    # A crash: the server held the store and was killed. No seal: the next boot checks it all.
    crashed, _ = _boot(data)
    try:
        wait_for(lambda: crashed.logged("storage.sealed_open"))  # stderr is read on a thread
        assert not seal.exists()  # taken at open: it vouches for one open only
        assert crashed.kill() < 0
    finally:
        crashed.close()
    assert not seal.exists()
    checked, _ = _boot(data)
    try:
        wait_for(lambda: checked.logged("storage.opened"))  # its open is logged by now
        assert not checked.logged("storage.sealed_open")  # quick_check and the count ran
        assert checked.terminate(timeout=10) == 0
    finally:
        checked.close()
    # A clean stop seals it again, and the store reads the same either way.
    assert seal.is_file()
    trusted, url = _boot(data)
    try:
        wait_for(lambda: trusted.logged("storage.sealed_open"))
        with httpx.Client(base_url=url, timeout=10) as client:
            page = client.get("/api/sessions", params={"limit": 2}).json()
            assert [row["id"] for row in page["sessions"]] == newest_first[:2]
            assert page["next"] is not None
        assert trusted.terminate(timeout=10) == 0
    finally:
        trusted.close()
