"""The ``dsh`` CLI and README as a newcomer meets them (issue 13 item 9): ``--version``, help
naming every default, ``dsh sessions`` on paths that are not data folders or are held by a
server, the line ``dsh serve --overlay none`` prints, and a README that opens plainly,
names ``make run``'s variables and lists the scripted phrases."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import queue
import re
import time
from importlib import metadata

import httpx

from dsh_host.cli._main import NO_PLUGINS_LOADED, _parser
from dsh_host.persistence import SQLiteBackend, opened
from dsh_schedule.language import PHRASES
from tests.procs import LISTENING, ROOT, DshProcess, run_dsh


def test_version_prints_the_installed_distribution_version():
    result = run_dsh(["--version"])
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"dsh {metadata.version('dsh-schedule')}\n"
    assert result.stderr == ""


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("dsh has no subcommands")


def _shown(default: object) -> str:
    return f"{default:g}" if isinstance(default, float) else str(default)


def test_every_flag_has_help_that_names_its_default():
    # Fails before this fix: --port and --data said no default, --json and --log-level had no
    # (or hidden) help, and "--version" was unknown.
    top = _parser()
    commands = _subcommands(top)
    assert set(commands) == {
        "serve",
        "sessions",
        "reindex",
        "token",
        "export",
        "import",
        "migrate",
        "backup",
    }
    choices = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    assert all(c.help for c in choices._choices_actions)  # each command says what it does
    checked = 0
    for name, command in commands.items():
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flag = f"dsh {name} {(action.option_strings or [action.metavar])[0]}"
            assert action.help, flag
            assert action.help != argparse.SUPPRESS, flag
            assert "(default: " in action.help, (flag, action.help)
            said = action.help.rsplit("(default: ", 1)[1]
            if action.default not in (None, False):
                assert said.startswith(_shown(action.default)), (flag, action.help)
            checked += 1
    assert checked >= 20
    # The layout a person reads keeps a default whole ("(default: .dsh-data)").
    for name in ("serve", "sessions", "reindex"):  # every command with a --data
        text = run_dsh([name, "--help"]).stdout
        assert " ".join(text.split()).count("(default: .dsh-data)") == 1, name


def test_sessions_never_creates_a_data_folder_and_says_what_a_path_is_not(tmp_path):
    # Fails before this fix: a mistyped path was created (with a fresh empty store in it) and
    # listed as "no sessions".
    missing = tmp_path / "missing" / "data"
    result = run_dsh(["sessions", "--data", str(missing)])
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"dsh: no data folder at {missing}: nothing is stored there (dsh serve creates it)\n"
    )
    assert not (tmp_path / "missing").exists()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    result = run_dsh(["sessions", "--data", str(a_file), "--json"])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"dsh: {a_file} is not a dsh data folder: it is a file\n"
    assert a_file.read_text() == "hello\n"
    folder = tmp_path / "photos"
    folder.mkdir()
    result = run_dsh(["sessions", "--data", str(folder)])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"dsh: {folder} is not a dsh data folder: it holds no dsh.sqlite3\n"
    assert list(folder.iterdir()) == []


def test_sessions_on_an_empty_store(tmp_path):
    data = tmp_path / "data"

    async def create() -> None:
        async with opened(SQLiteBackend(data)):
            pass

    asyncio.run(create())
    assert (data / "dsh.sqlite3").is_file()
    result = run_dsh(["sessions", "--data", str(data)])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no sessions\n"
    assert result.stderr == ""


def test_sessions_reads_a_folder_a_running_server_holds_without_a_warning(tmp_path):
    # Fails before this fix: the listing worked but stderr carried the JSON warning
    # "storage.lock_refused" about the server's lock.
    data = tmp_path / "data"
    server = DshProcess(["serve", "--data", str(data), "--port", "0"])
    try:
        url = server.wait_for_line(LISTENING).group(1)
        with httpx.Client(base_url=url, timeout=10) as client:
            sid = client.post("/api/sessions", json={}).json()["id"]
            assert client.post(f"/api/sessions/{sid}/flush").json()["durable"] is True
        for args in ([], ["--json"]):
            result = run_dsh(["sessions", "--data", str(data), *args])
            assert result.returncode == 0, result.stderr
            assert result.stderr == ""
            assert result.stdout.count("\n") == 1
            assert sid in result.stdout
        assert server.proc.poll() is None  # the server still holds its folder
        assert server.terminate(timeout=5) == 0
    finally:
        server.close()


def _stdout_until_listening(server: DshProcess) -> list[str]:
    """The stdout lines ``dsh serve`` printed up to and including "listening on" (bounded)."""
    deadline = time.monotonic() + 20
    lines: list[str] = []
    while not lines or not LISTENING.search(lines[-1]):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or server.proc.poll() is not None:
            raise AssertionError(f"no 'listening on' line: {lines}; stderr:\n{server.stderr}")
        with contextlib.suppress(queue.Empty):
            lines.append(server.lines.get(timeout=min(remaining, 0.5)))
    return lines


def test_serve_with_overlay_none_says_in_one_line_that_no_plugin_is_loaded(tmp_path):
    # Without --overlay the built-in overlay loads the reminders and nothing more is said;
    # `--overlay none` (issue 25 item 7) is the way to start with no plugin, and says so.
    for args, expected in (
        ([], []),
        (["--overlay", "none"], [NO_PLUGINS_LOADED]),
        (["--overlay", str(ROOT / "examples/web-schedule/overlay.toml")], []),
    ):
        server = DshProcess(["serve", "--data", str(tmp_path / "d"), "--port", "0", *args])
        try:
            lines = _stdout_until_listening(server)
            assert lines[:-1] == expected, lines
            assert server.terminate(timeout=5) == 0
        finally:
            server.close()
    assert NO_PLUGINS_LOADED == (
        "--overlay none: no plugins are loaded; reminders are unavailable "
        "(leave out --overlay for the built-in reminders)"
    )


def _readme_section(title: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_opens_plainly_and_keeps_its_two_set_up_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    opening = readme.split("\n## ", 1)[0]
    assert "](docs/screenshots/desktop-light-en.png)" in opening
    assert "remind me in 10 minutes" in opening
    for internal in ("sidecar", "watermark", "position record", "schedule/change"):
        assert internal not in readme.lower(), internal  # those live in docs/internals.md
        assert internal in (ROOT / "docs/internals.md").read_text(encoding="utf-8").lower()
    setup = _readme_section("Set up")
    blocks = re.findall(r"```sh\n(.*?)```", setup, re.DOTALL)
    commands = [line.split("#", 1)[0].strip() for line in blocks[0].splitlines()]
    assert (len(blocks), commands) == (1, ["make run", "make test"])
    # `make run`'s two variables, with the defaults the Makefile gives them.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    said = " ".join(setup.split())
    for name in ("PORT", "DATA"):
        default = re.search(rf"^{name} \?= (\S+)$", makefile, re.MULTILINE)
        assert default is not None, name
        assert f"`{name}` (default `{default.group(1)}`" in said, name
        assert f"$({name})" in makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]


def test_readme_lists_every_phrase_the_scripted_model_understands():
    listed = " ".join(_readme_section("What the scripted model understands").split())
    examples = [e for p in PHRASES for e in (p.example, *p.examples) if e is not None]
    assert len(examples) >= 8
    for example in examples:
        assert f'"{example}"' in listed, example
    assert "`/tool NAME {json}`" in listed


def test_readme_has_a_pip_install_section_of_two_commands():
    # Fails before issue 25 item 7: the README knew only the repository's `make run`.
    section = _readme_section("pip install")
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1
    assert blocks[0].splitlines() == ["pip install dsh-schedule", "dsh serve"]
