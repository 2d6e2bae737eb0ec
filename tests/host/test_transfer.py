"""``dsh export``, ``dsh import`` and ``dsh migrate`` (issue 29 items 1-3 and 5), in process.

Round trips of stores the Schedule plugin wrote (forks, delivered and pending reminders of every
selector) through SQLite and PostgreSQL: export, import into an empty store, export again gives
the same file but its first line, and the target's wake index and board are what the source's
were. Then every malformed file, each refused with its line number and reason before anything
is written (the target's digest is compared before and after), a file a plugin refuses, a
conflict, importing twice, and ``dsh migrate``'s refusals and verification.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import tracemalloc
from collections.abc import Callable
from contextlib import aclosing
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_host import LiveAgent, LiveHost, Overlay
from dsh_host.cli._args import parser
from dsh_host.cli._main import main
from dsh_host.cli._transfer import (
    MAX_LINE_BYTES,
    ExportFileError,
    ExportReader,
    Plugins,
    export,
    import_file,
    log_digest,
    migrate,
    session_lines,
    verify,
)
from dsh_host.conformance import make_events, make_header
from dsh_host.persistence import MemoryBackend, PostgresBackend, SQLiteBackend, StoredSession, Write
from dsh_host.testing import ManualClock, wait_until
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster
from tests.schedule.harness import settle_quiet

START = 1_785_931_200_000  # 2026-08-05T12:00:00Z
SCHEDULE = "schedule"
SELECTORS = [
    {"after_seconds": 30},
    {"at": "2026-08-05T13:00:00Z"},
    {"at": {"date": "2026-08-06", "time": "09:30:00", "time_zone": "Europe/Paris"}},
    {"every_seconds": 600},
    {"daily": {"time": "08:00:00", "time_zone": "UTC"}},
    {"weekly": {"time": "07:15:00", "time_zone": "America/New_York", "weekdays": [1, 5]}},
    {"cron": {"expression": "*/20 * * * *", "time_zone": "UTC"}},
]


@pytest.fixture(autouse=True)
def _logging_restored():
    """``main()`` configures structlog to write to the stderr pytest captures for that test
    only; every later test starts from structlog's defaults again."""
    config = structlog.get_config()
    yield
    structlog.configure(**config)


async def _create(agent: LiveAgent, prompt: str, selector: dict) -> str:
    value = await agent.execute_tool("schedule_create", {"prompt": prompt, **selector})
    assert isinstance(value, dict)
    assert "id" in value, value
    return str(value["id"])


def _dispatches(agent: LiveAgent) -> int:
    return sum(
        1
        for e in agent.session.events
        if e.type == "schedule/change" and e.data["operation"] == "dispatch"  # type: ignore[index]
    )


async def build(backend, clock: ManualClock) -> list[str]:
    """A store the Schedule plugin wrote: reminders of every selector, some delivered (one-shot
    and repeating), some pending, a fork with its own, a deleted one and a renamed Session."""
    host = LiveHost(backend=backend, clock=clock, model="none")
    await host.start()
    try:
        host.load_plugin(SCHEDULE, {"cold_delivery": True})
        first = await host.create_session()
        for n, selector in enumerate(SELECTORS):
            await _create(first, f"reminder {n}", selector)
        gone = await _create(first, "deleted", {"after_seconds": 5000})
        assert await first.execute_tool("schedule_delete", {"id": gone}) is not None
        clock.advance(31)  # the 30 s one
        await wait_until(lambda: _dispatches(first) == 1)
        clock.advance(600)  # the every-600 s one's first time (the cron's is at 12:20)
        await wait_until(lambda: _dispatches(first) == 2)
        await settle_quiet(host)  # both delivery turns ran (and failed: no model)
        child = await host.fork_session(first.session.id)
        await _create(child, "the fork's own", {"after_seconds": 7200})
        second = await host.create_session()
        second.session.append("session/rename", {"name": "Errands"})
        await _create(second, "later", {"at": "2027-01-01T00:00:00Z"})
        ids = [first.session.id, child.session.id, second.session.id]
        await settle_quiet(host)
    finally:
        await host.close()
    return ids


async def _export_bytes(backend, ids=None) -> bytes:
    out = io.BytesIO()
    await export(backend, out, ids)
    return out.getvalue()


def _body(data: bytes) -> bytes:
    """An export without its first line (which says when it was written)."""
    return data.split(b"\n", 1)[1]


async def _derived(backend) -> dict[str, tuple[dict, dict]]:
    out = {}
    async with aclosing(backend.export_sessions()) as sessions:
        async for stored in sessions:
            loaded = await backend.load(stored.header.id)
            out[stored.header.id] = (loaded.wakes, loaded.board)
    return out


async def _names(backend) -> dict[str, str | None]:
    return {s.header.id: s.name for s in await backend.list_sessions()}


@pytest.fixture
def postgres_url(request) -> Callable[[], str]:
    def make() -> str:
        cluster: Cluster = request.getfixturevalue("pg_cluster")
        return cluster.new_database()

    return make


@pytest.mark.parametrize("target_kind", ["sqlite", "postgres"])
async def test_round_trip_gives_the_same_file_and_the_same_derived_state(
    tmp_path: Path, target_kind: str, postgres_url
) -> None:
    source = SQLiteBackend(tmp_path / "source")
    ids = await build(source, ManualClock(START))
    first = await _export_bytes(source)
    (tmp_path / "one.jsonl").write_bytes(first)
    assert first.count(b'{"session":') == 3
    target = (
        SQLiteBackend(tmp_path / "target")
        if target_kind == "sqlite"
        else PostgresBackend(postgres_url())
    )
    await source.open()
    await target.open()
    try:
        async with Plugins(Overlay.default()) as plugins:
            counts = await import_file(tmp_path / "one.jsonl", target, plugins)
        assert (counts.imported, counts.unchanged) == (3, 0)
        second = await _export_bytes(target)
        assert first.split(b"\n", 1)[0] != b""
        assert _body(second) == _body(first)
        # Derived state: every wake entry and board row the source's plugins filed, and names.
        assert await _derived(target) == await _derived(source)
        assert await _names(target) == await _names(source)
        due = await target.due_wakes(2**62, 100)
        assert {sid for sid, _, _ in due} == set(ids)
        assert await verify(source, target) is not None
    finally:
        await target.close()
        await source.close()


async def test_export_of_chosen_sessions_and_of_an_empty_store(tmp_path: Path) -> None:
    source = MemoryBackend()
    await source.open()
    for sid, created in (("b", 2), ("a", 1), ("c", 3)):
        await source.append(Write(sid, 0, make_events(0, 2), make_header(sid, created)))
    chosen = await _export_bytes(source, ["c", "a"])
    lines = chosen.splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "dsh-export"
    assert head["version"] == 1
    assert head["exportedAt"].endswith("Z")
    assert [json.loads(x)["session"]["id"] for x in lines if x.startswith(b'{"session"')] == [
        "a",
        "c",
    ]
    assert json.loads(lines[-1]) == {"end": True, "sessions": 2, "events": 4}
    bare = MemoryBackend()
    await bare.open()
    assert _body(await _export_bytes(bare)) == b'{"end":true,"sessions":0,"events":0}\n'


def test_log_digest_is_the_sha256_of_the_session_lines() -> None:
    stored = StoredSession(header=make_header("s"), events=tuple(make_events(0, 2)))
    lines = list(session_lines(stored))
    assert lines[0] == (
        b'{"session":{"version":1,"id":"s","createdAt":1700000000000,"delegationDepth":0},'
        b'"events":2}\n'
    )
    assert lines[1] == (
        b'{"event":{"seq":0,"type":"message","time":1700000000000,"data":{"n":0,"tag":""}}}\n'
    )
    assert log_digest(stored) == hashlib.sha256(b"".join(lines)).hexdigest()


# -- malformed files -------------------------------------------------------------------------


def _valid_lines() -> list[str]:
    """A small valid export: Sessions a (2 events) and b (1 event)."""
    return [
        '{"format":"dsh-export","version":1,"exportedAt":"2026-08-05T12:00:00.000Z"}',
        '{"session":{"version":1,"id":"a","createdAt":1,"delegationDepth":0},"events":2}',
        '{"event":{"seq":0,"type":"note","time":5,"data":{"x":1}}}',
        '{"event":{"seq":1,"type":"note","time":6,"data":null}}',
        '{"session":{"version":1,"id":"b","createdAt":2,"delegationDepth":0},"events":1}',
        '{"event":{"seq":0,"type":"note","time":7,"data":"y"}}',
        '{"end":true,"sessions":2,"events":3}',
    ]


def _changed(at: int, line: str | None) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        if line is None:
            return lines[:at] + lines[at + 1 :]
        return [*lines[:at], line, *lines[at + 1 :]]

    return change


MALFORMED = [
    ("empty", lambda lines: [], "line 1: the file is empty, not a dsh export"),
    (
        "line-1-not-json",
        _changed(0, "dsh export"),
        "line 1: not a dsh export (not JSON: Expecting value: line 1 column 1 (char 0))",
    ),
    (
        "wrong-format",
        _changed(0, '{"format":"tar","version":1,"exportedAt":"x"}'),
        'line 1: not a dsh export: line 1 must name "format": "dsh-export"',
    ),
    (
        "no-format",
        _changed(0, '{"version":1}'),
        'line 1: not a dsh export: line 1 must name "format": "dsh-export"',
    ),
    (
        "version-2",
        _changed(0, '{"format":"dsh-export","version":2,"exportedAt":"x"}'),
        "line 1: format version 2 is not supported: this dsh reads version 1",
    ),
    (
        "version-absent",
        _changed(0, '{"format":"dsh-export","exportedAt":"x"}'),
        "line 1: format version null is not supported: this dsh reads version 1",
    ),
    (
        "corrupt-line",
        _changed(3, '{"event":{"seq":1,"type":"note","time":6,"data":nul'),
        "line 4: not JSON: Expecting value: line 1 column 49 (char 48)",
    ),
    (
        "not-utf8",
        lambda lines: [*lines[:3], "\udcff", *lines[4:]],
        (
            "line 4: not JSON: not UTF-8: 'utf-8' codec can't decode byte 0xff in position 0: "
            "invalid start byte"
        ),
    ),
    (
        "duplicate-key",
        _changed(2, '{"event":{"seq":0,"seq":0,"type":"note","time":5,"data":1}}'),
        "line 3: not JSON: duplicate key 'seq'",
    ),
    (
        "bad-header",
        _changed(1, '{"session":{"version":1,"id":"a","createdAt":1,"x":0},"events":2}'),
        "line 2: the Session header is invalid: header has unknown keys: ['x']",
    ),
    (
        "bad-event",
        _changed(2, '{"event":{"seq":0,"type":"","time":5,"data":1}}'),
        "line 3: the event is invalid: event.type must be a non-empty string",
    ),
    (
        "seq-gap",
        _changed(3, '{"event":{"seq":2,"type":"note","time":6,"data":null}}'),
        "line 4: event seq 2 of session a where 1 belongs",
    ),
    (
        "fewer-events",
        _changed(3, None),
        'line 4: session a declares 2 events but holds 1 (expected an event line {"event": ...})',
    ),
    (
        "more-events",
        _changed(1, '{"session":{"version":1,"id":"a","createdAt":1},"events":1}'),
        'line 4: expected a Session line {"session", "events"} or the end line',
    ),
    (
        "out-of-order",
        lambda lines: [lines[0], *lines[4:6], *lines[1:4], lines[6]],
        (
            "line 4: session a is out of order (or appears twice): sessions are sorted by "
            "createdAt, then id"
        ),
    ),
    (
        "twice",
        lambda lines: [*lines[:6], *lines[4:6], '{"end":true,"sessions":3,"events":4}'],
        (
            "line 7: session b is out of order (or appears twice): sessions are sorted by "
            "createdAt, then id"
        ),
    ),
    (
        "truncated",
        _changed(6, None),
        "line 7: the file ends without its end line: it is truncated",
    ),
    (
        "truncated-in-a-session",
        lambda lines: lines[:5],
        "line 6: the file ends inside session b (0 of its 1 events): it is truncated",
    ),
    (
        "end-counts",
        _changed(6, '{"end":true,"sessions":2,"events":4}'),
        "line 7: the end line counts 2 sessions and 4 events, but the file holds 2 and 3",
    ),
    (
        "after-the-end",
        lambda lines: [*lines, '{"end":true,"sessions":2,"events":3}'],
        "line 8: data after the end line",
    ),
    ("blank-after-the-end", lambda lines: [*lines, ""], "line 8: data after the end line"),
    (
        "too-big-for-storage",
        _changed(2, '{"event":{"seq":0,"type":"note","time":9223372036854775808,"data":1}}'),
        "line 3: cannot be stored: event.time 9223372036854775808 does not fit in 64 bits",
    ),
    (
        "seed-beyond-the-log",
        _changed(4, '{"session":{"version":1,"id":"b","createdAt":2,"seedLength":2},"events":1}'),
        "line 5: session b has seedLength 2 but 1 events",
    ),
    (
        "not-an-object",
        _changed(2, "[1, 2]"),
        "line 3: a line of a dsh export must be a JSON object",
    ),
]


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_bytes(b"".join(line.encode("utf-8", "surrogateescape") + b"\n" for line in lines))
    return path


async def _target_digest(data: Path) -> str:
    """A digest of everything stored in the SQLite folder ``data`` (its export's body)."""
    return hashlib.sha256(_body(await _export_bytes(SQLiteBackend(data)))).hexdigest()


async def _seeded(data: Path) -> str:
    backend = SQLiteBackend(data)
    await backend.open()
    await backend.append(Write("kept", 0, make_events(0, 2), make_header("kept", 0)))
    await backend.close()
    return await _target_digest(data)


@pytest.mark.parametrize(("name", "change", "reason"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_file_is_refused_with_its_line_and_the_target_is_untouched(
    tmp_path: Path, capsys, name: str, change, reason: str
) -> None:
    data = tmp_path / "data"
    before = asyncio.run(_seeded(data))
    wanted = _write_lines(tmp_path / "in.jsonl", change(_valid_lines()))
    capsys.readouterr()
    assert main(["import", str(wanted), "--data", str(data)]) == 1
    said = capsys.readouterr()
    assert said.err == f"dsh: {wanted} line {reason.removeprefix('line ')}\n"
    assert said.out == ""
    assert asyncio.run(_target_digest(data)) == before
    # Into a folder that did not exist: nothing is left behind.
    fresh = tmp_path / "new" / "data"
    assert main(["import", str(wanted), "--data", str(fresh)]) == 1
    assert not (tmp_path / "new").exists()


def test_the_valid_file_of_the_malformed_cases_imports(tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    asyncio.run(_seeded(data))
    wanted = _write_lines(tmp_path / "in.jsonl", _valid_lines())
    capsys.readouterr()
    assert main(["import", str(wanted), "--data", str(data)]) == 0
    assert capsys.readouterr().out == "imported 2 Sessions (3 events), 0 already present\n"


def test_a_line_longer_than_the_limit_is_refused_without_being_held(tmp_path: Path) -> None:
    # A 1 GB line (a sparse file: no disk is spent) after a valid first line.
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as file:
        file.write(_valid_lines()[0].encode() + b'\n{"session":')
        file.truncate(2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ExportFileError) as caught:
            list(ExportReader(path).sessions())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(caught.value) == (
        f"{path} line 2: the line is longer than 67,108,864 bytes, the longest a dsh export holds"
    )
    assert peak < 2 * MAX_LINE_BYTES  # bounded by the limit, never by the line
    # A line at the limit is read; the limit counts bytes without the newline.
    small = _write_lines(tmp_path / "small.jsonl", _valid_lines())
    longest = max(len(line.encode()) for line in _valid_lines())
    assert len(list(ExportReader(small, max_line=longest).sessions())) == 2
    with pytest.raises(ExportFileError, match="line 2: the line is longer than"):
        list(ExportReader(small, max_line=longest - 1).sessions())


def test_a_line_split_across_reads_is_one_line(tmp_path: Path, monkeypatch) -> None:
    import dsh_host.cli._transfer as transfer

    monkeypatch.setattr(transfer, "CHUNK_BYTES", 7)
    path = _write_lines(tmp_path / "in.jsonl", _valid_lines())
    reader = ExportReader(path)
    found = [item.stored.header.id for item in reader.sessions()]
    assert found == ["a", "b"]
    assert reader.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # no newline after the end line
    assert len(list(ExportReader(path).sessions())) == 2


# -- plugins refuse what breaks their invariants ------------------------------------------------


async def _one_reminder_file(tmp_path: Path) -> list[dict]:
    """The lines (parsed) of an export of one Session whose reminder was delivered."""
    source = SQLiteBackend(tmp_path / "plugin-source")
    clock = ManualClock(START)
    host = LiveHost(backend=source, clock=clock, model="none")
    await host.start()
    try:
        host.load_plugin(SCHEDULE, {"cold_delivery": True})
        agent = await host.create_session()
        await _create(agent, "stretch", {"after_seconds": 10})
        clock.advance(11)
        await wait_until(lambda: _dispatches(agent) == 1)
        await settle_quiet(host)
    finally:
        await host.close()
    return [json.loads(line) for line in (await _export_bytes(source)).splitlines()]


def _schedule_seqs(lines: list[dict], operation: str) -> list[int]:
    return [
        line["event"]["seq"]
        for line in lines
        if "event" in line
        and line["event"]["type"] == "schedule/change"
        and line["event"]["data"]["operation"] == operation
    ]


@pytest.mark.parametrize("breach", ["dispatch-without-create", "reused-id"])
def test_a_file_a_plugin_refuses_is_refused_with_the_events_line(
    tmp_path: Path, capsys, breach: str
) -> None:
    lines = asyncio.run(_one_reminder_file(tmp_path))
    (create,) = _schedule_seqs(lines, "create")
    (dispatch,) = _schedule_seqs(lines, "dispatch")
    if breach == "dispatch-without-create":
        lines[2 + create]["event"]["type"] = "note/replaced"
        refused = dispatch
    else:  # a later event becomes a second create of the same id
        later = dispatch + 1
        lines[2 + later]["event"] = {**lines[2 + create]["event"], "seq": later}
        refused = later
    path = tmp_path / "breach.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = tmp_path / "data"
    before = asyncio.run(_seeded(data))
    capsys.readouterr()
    assert main(["import", str(path), "--data", str(data)]) == 1
    said = capsys.readouterr().err
    assert said.startswith(
        f"dsh: {path} line {2 + refused + 1}: schedule/change event rejected by plugin 'schedule': "
    ), said
    assert asyncio.run(_target_digest(data)) == before
    # Without the plugin nothing refuses it (the overlay decides what is checked).
    assert main(["import", str(path), "--data", str(data), "--overlay", "none"]) == 0


# -- the commands -------------------------------------------------------------------------------


def test_import_twice_adds_nothing_and_a_conflict_writes_nothing(tmp_path: Path, capsys) -> None:
    source = tmp_path / "source"
    asyncio.run(build(SQLiteBackend(source), ManualClock(START)))
    out = tmp_path / "all.jsonl"
    assert main(["export", "--data", str(source), "--output", str(out)]) == 0
    assert capsys.readouterr().err.startswith("exported 3 Sessions (")
    data = tmp_path / "data"
    assert main(["import", str(out), "--data", str(data)]) == 0
    first = capsys.readouterr().out
    assert first.startswith("imported 3 Sessions (")
    assert first.endswith(", 0 already present\n")
    digest = asyncio.run(_target_digest(data))
    assert main(["import", str(out), "--data", str(data)]) == 0
    assert capsys.readouterr().out == "imported 0 Sessions (0 events), 3 already present\n"
    assert asyncio.run(_target_digest(data)) == digest
    # A file whose Session shares an id with different content: refused whole.
    lines = out.read_bytes().splitlines()
    session = json.loads(lines[1])
    sid = session["session"]["id"]
    changed = [*lines[:2], lines[2].replace(b'"time":', b'"time":1', 1), *lines[3:]]
    clash = tmp_path / "clash.jsonl"
    clash.write_bytes(b"\n".join(changed) + b"\n")
    assert main(["import", str(clash), "--data", str(data)]) == 1
    assert capsys.readouterr().err == (
        f"dsh: session {sid} is already stored with different content (event 0 differs); "
        "nothing was imported\n"
    )
    assert asyncio.run(_target_digest(data)) == digest


def test_export_to_stdout_to_a_file_and_of_chosen_sessions(tmp_path: Path, capsysbinary) -> None:
    data = tmp_path / "data"
    ids = asyncio.run(build(SQLiteBackend(data), ManualClock(START)))
    assert main(["export", "--data", str(data)]) == 0
    said = capsysbinary.readouterr()
    assert said.err.decode().startswith("exported 3 Sessions (")
    whole = said.out
    assert whole.count(b"\n") == len(whole.splitlines())
    out = tmp_path / "x" / "one.jsonl"
    out.parent.mkdir()
    assert main(["export", "--data", str(data), "--session", ids[2], "--output", str(out)]) == 0
    assert capsysbinary.readouterr().err.decode().startswith("exported 1 Session (")
    assert sorted(p.name for p in out.parent.iterdir()) == ["one.jsonl"]  # no partial file left
    assert out.read_bytes().count(b'{"session"') == 1
    # An unknown id: refused before anything is written; an existing file is left as it was.
    assert main(["export", "--data", str(data), "--session", "nope", "--output", str(out)]) == 1
    said = capsysbinary.readouterr()
    assert said.err.decode() == f"dsh: no session nope is stored in {data.absolute()}/dsh.sqlite3\n"
    assert out.read_bytes().count(b'{"session"') == 1
    assert sorted(p.name for p in out.parent.iterdir()) == ["one.jsonl"]
    assert main(["export", "--data", str(data), "--session", "nope"]) == 1
    assert capsysbinary.readouterr().out == b""
    # Not a data folder: said, and nothing is created.
    assert main(["export", "--data", str(tmp_path / "absent")]) == 2
    assert "no data folder at" in capsysbinary.readouterr().err.decode()
    assert not (tmp_path / "absent").exists()


def test_import_refusals_before_storage(tmp_path: Path, capsys) -> None:
    assert main(["import", str(tmp_path / "none.jsonl"), "--data", str(tmp_path / "d")]) == 2
    assert capsys.readouterr().err == f"dsh: cannot read {tmp_path / 'none.jsonl'}: no such file\n"
    good = _write_lines(tmp_path / "in.jsonl", _valid_lines())
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["import", str(good), "--data", str(a_file)]) == 2
    assert capsys.readouterr().err == f"dsh: {a_file} is not a dsh data folder: it is a file\n"
    assert main(["import", str(good), "--data", str(tmp_path / "d"), "--overlay", "nope"]) == 2
    assert capsys.readouterr().err.startswith("dsh: ")
    assert not (tmp_path / "d").exists()


def test_migrate_refuses_a_non_empty_target_unless_told_to_add(tmp_path: Path, capsys) -> None:
    source, target = tmp_path / "source", tmp_path / "target"
    asyncio.run(build(SQLiteBackend(source), ManualClock(START)))
    asyncio.run(_seeded(target))
    before = asyncio.run(_target_digest(target))
    assert main(["migrate", "--from", str(source), "--to", str(target)]) == 1
    assert capsys.readouterr().err == (
        f"dsh: {target} already holds 1 Session; pass --add to add these to them\n"
    )
    assert asyncio.run(_target_digest(target)) == before
    assert main(["migrate", "--from", str(source), "--to", str(target), "--add"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("migrated 3 Sessions (")
    assert said.endswith(
        f"from {source} to {target}; verified 3 Sessions and "
        f"{said.split('(')[1].split(' ')[0]} events: every log's sha256 is equal\n"
    )
    assert main(["migrate", "--from", str(source), "--to", str(target), "--add"]) == 0
    assert ", 3 already present; verified 3 Sessions" in capsys.readouterr().out
    # The same store twice, and a source that is not a data folder.
    assert main(["migrate", "--from", str(source), "--to", str(source)]) == 2
    assert capsys.readouterr().err == "dsh: --from and --to name the same store\n"
    assert main(["migrate", "--from", str(tmp_path / "no"), "--to", str(target)]) == 2
    assert "no data folder at" in capsys.readouterr().err


async def test_verify_names_a_missing_or_different_session() -> None:
    source, target = MemoryBackend(), MemoryBackend()
    await source.open()
    await target.open()
    for backend in (source, target):
        await backend.append(Write("a", 0, make_events(0, 1), make_header("a", 1)))
    await target.append(Write("extra", 0, [], make_header("extra", 0)))  # the target may hold more
    assert (await verify(source, target)).sessions == 1
    await source.append(Write("b", 0, make_events(0, 1), make_header("b", 2)))
    with pytest.raises(Exception, match="session b is missing from the target"):
        await verify(source, target)
    await target.append(Write("b", 0, make_events(0, 1, tag="other"), make_header("b", 2)))
    with pytest.raises(Exception, match="session b's log differs in the target"):
        await verify(source, target)


async def test_migrate_streams_a_store_into_postgresql_with_its_wake_index(
    tmp_path: Path, postgres_url
) -> None:
    source = SQLiteBackend(tmp_path / "source")
    ids = await build(source, ManualClock(START))
    target = PostgresBackend(postgres_url())
    await target.open()
    await source.open()
    try:
        async with Plugins(Overlay.default()) as plugins:
            done = await migrate(source, target, plugins, target)
        assert (done.counts.imported, done.verified.sessions) == (3, 3)
        assert done.verified.events == done.counts.imported_events
        assert await _derived(target) == await _derived(source)
        assert {sid for sid, _, _ in await target.due_wakes(2**62, 10)} == set(ids)
    finally:
        await source.close()
        await target.close()


def test_every_flag_of_the_transfer_commands_names_its_default() -> None:
    import argparse

    commands = next(
        a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices
    for name in ("export", "import", "migrate"):
        for action in commands[name]._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert "(default: " in action.help, (name, action.dest)
            said = action.help.rsplit("(default: ", 1)[1]
            if action.default not in (None, False):
                assert said.startswith(str(action.default)), (name, action.dest, action.help)


# -- random stores ------------------------------------------------------------------------------

_OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.integers(0, 6), st.integers(0, 2)),
        st.tuples(st.just("advance"), st.sampled_from([31, 600, 3_600, 86_400]), st.just(0)),
        st.tuples(st.just("fork"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("delete"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("new"), st.just(0), st.just(0)),
    ),
    min_size=2,
    max_size=16,
)


async def _random_store(operations: list[tuple[str, int, int]]) -> MemoryBackend:
    """A store the Schedule plugin wrote while ``operations`` ran: creates of every selector,
    clock moves that deliver (one-shot and repeating), forks and deletes."""
    backend = MemoryBackend()
    clock = ManualClock(START)
    host = LiveHost(backend=backend, clock=clock, model="none")
    await host.start()
    try:
        host.load_plugin(SCHEDULE, {"cold_delivery": True})
        agents = [await host.create_session()]
        made: list[str] = []
        for operation, first, second in operations:
            agent = agents[second % len(agents)]
            if operation == "create":  # an "at" in the past is refused (not_future): fine
                value = await agent.execute_tool(
                    "schedule_create", {"prompt": "r", **SELECTORS[first]}
                )
                if isinstance(value, dict) and "id" in value:
                    made.append(str(value["id"]))
            elif operation == "advance":
                clock.advance(first)
            elif operation == "fork":
                await settle_quiet(host)
                agents.append(await host.fork_session(agents[first % len(agents)].session.id))
            elif operation == "delete" and made:
                await agent.execute_tool("schedule_delete", {"id": made[first % len(made)]})
            elif operation == "new":
                agents.append(await host.create_session())
            await settle_quiet(host)
    finally:
        await host.close()
    return backend


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=_OPERATIONS)
def test_random_stores_round_trip_to_the_same_file(tmp_path_factory, operations) -> None:
    async def run() -> None:
        source = await _random_store(operations)
        await source.open()
        first = await _export_bytes(source)
        path = tmp_path_factory.mktemp("random") / "export.jsonl"
        path.write_bytes(first)
        target = MemoryBackend()
        await target.open()
        async with Plugins(Overlay.default()) as plugins:
            counts = await import_file(path, target, plugins)
            assert counts.unchanged == 0
            assert (await import_file(path, target, plugins)).imported == 0
        assert _body(await _export_bytes(target)) == _body(first)
        assert await _derived(target) == await _derived(source)

    asyncio.run(run())


async def test_a_file_that_changes_between_the_two_passes_imports_nothing(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "in.jsonl", _valid_lines())

    class Rewriting(Plugins):
        def validate(self, item, path_given) -> None:
            super().validate(item, path_given)
            # Still a valid file, but not the one the first pass read.
            lines = _valid_lines()
            lines[0] = lines[0].replace("12:00:00.000Z", "13:00:00.000Z")
            _write_lines(path, lines)

    target = SQLiteBackend(tmp_path / "data")
    await target.open()
    try:
        async with Rewriting(Overlay.default()) as plugins:
            with pytest.raises(ExportFileError, match="line 1: the file changed while it was"):
                await import_file(path, target, plugins)
        assert await target.list_sessions() == []
    finally:
        await target.close()
