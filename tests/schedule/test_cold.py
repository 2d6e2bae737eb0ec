"""Cold delivery, the plugin's half (issue 11 item 2): with ``cold_delivery = true`` the plugin
files each Session's earliest active target with the host's durable wake index (under its own
name), in the same storage batch as the change that moved it; without it nothing is filed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dsh_host import LiveHost, Overlay, PluginLoadError, WakeChanged
from dsh_host.persistence import MemoryBackend, Write
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from dsh_schedule import parse_instant

from .harness import Harness, make_harness, settle_quiet

PLUGIN = "schedule"


@pytest.fixture
async def memory() -> MemoryBackend:
    return MemoryBackend()


async def _harness(memory: MemoryBackend, config: dict) -> Harness:
    return await make_harness(config=config, backend=FaultInjectingBackend(memory))


@pytest.fixture
async def cold(memory: MemoryBackend) -> AsyncIterator[Harness]:
    harness = await _harness(memory, {"cold_delivery": True})
    try:
        yield harness
    finally:
        await harness.host.close()


async def create(h: Harness, agent, after: int) -> tuple[str, int]:
    """Create a reminder due ``after`` seconds from now: its id and its target (epoch ms)."""
    value = await h.call(agent, "schedule_create", {"prompt": "p", "after_seconds": after})
    assert isinstance(value, dict)
    assert "id" in value, value
    await h.settle(agent)
    (record,) = [c["schedule"] for c in h.changes(agent) if c["operation"] == "create"][-1:]
    assert record["id"] == value["id"]
    return str(value["id"]), parse_instant(record["scheduledAt"])


async def delete(h: Harness, agent, schedule_id: str) -> None:
    assert await h.call(agent, "schedule_delete", {"id": schedule_id}) is not None
    await h.settle(agent)


def wakes(h: Harness, agent) -> dict[str, int]:
    return dict(h.host.sessions.wakes(agent.session))


async def stored(memory: MemoryBackend, session_id: str) -> dict[str, int]:
    loaded = await memory.load(session_id)
    assert loaded is not None
    return dict(loaded.wakes)


async def test_without_the_config_no_wake_is_ever_filed(memory):
    h = await _harness(memory, {})
    filed: list[tuple[str, str, int | None]] = []
    h.host.sessions.subscribe(
        lambda o: o.plugin == PLUGIN and filed.append((o.session.id, o.plugin, o.at_ms)),
        WakeChanged,
    )
    try:
        agent = await h.agent()
        first, _ = await create(h, agent, 60)
        await create(h, agent, 30)
        await delete(h, agent, first)
        child = await h.host.fork_session(agent.session.id)
        await create(h, child, 10)
        h.clock.advance(30)
        await wait_until(lambda: len(h.dispatches(agent)) == 1)
        await settle_quiet(h.host)
        sid = agent.session.id
        await h.host.close_session(sid)
        resumed = await h.host.resume_session(sid)
        await settle_quiet(h.host)
        assert filed == []
        assert wakes(h, resumed) == {}
        assert wakes(h, child) == {}
        assert await stored(memory, sid) == {}
        assert await stored(memory, child.session.id) == {}
    finally:
        await h.host.close()


async def test_create_files_the_target_durably_with_the_create(cold, memory):
    agent = await cold.agent()
    _, target = await create(cold, agent, 600)
    assert wakes(cold, agent) == {PLUGIN: target}
    # The tool answered after its barrier flush: the entry is on storage with the create.
    assert await stored(memory, agent.session.id) == {PLUGIN: target}


async def test_an_earlier_create_moves_it_and_a_later_one_does_not(cold, memory):
    agent = await cold.agent()
    _, late = await create(cold, agent, 600)
    _, early = await create(cold, agent, 60)
    assert early < late
    assert wakes(cold, agent) == {PLUGIN: early}
    await create(cold, agent, 900)
    assert wakes(cold, agent) == {PLUGIN: early}
    assert await stored(memory, agent.session.id) == {PLUGIN: early}


async def test_deleting_the_earliest_moves_it_to_the_next_and_the_last_delete_clears_it(
    cold, memory
):
    agent = await cold.agent()
    late, late_at = await create(cold, agent, 600)
    early, _ = await create(cold, agent, 60)
    await delete(cold, agent, early)
    assert wakes(cold, agent) == {PLUGIN: late_at}
    assert await stored(memory, agent.session.id) == {PLUGIN: late_at}
    await delete(cold, agent, late)
    assert wakes(cold, agent) == {}
    assert await stored(memory, agent.session.id) == {}


async def test_the_dispatch_of_the_earliest_moves_it_and_of_the_last_clears_it(cold, memory):
    agent = await cold.agent()
    _, late_at = await create(cold, agent, 120)
    await create(cold, agent, 60)
    cold.clock.advance(60)
    await wait_until(lambda: cold.dispatches(agent) == ["schedule-2"])
    await settle_quiet(cold.host)
    assert wakes(cold, agent) == {PLUGIN: late_at}
    assert await stored(memory, agent.session.id) == {PLUGIN: late_at}
    cold.clock.advance(60)
    await wait_until(lambda: cold.dispatches(agent) == ["schedule-2", "schedule-1"])
    await settle_quiet(cold.host)
    assert wakes(cold, agent) == {}
    assert await stored(memory, agent.session.id) == {}


async def test_resume_files_what_the_fold_says_over_a_stale_stored_entry(cold, memory):
    agent = await cold.agent()
    _, target = await create(cold, agent, 600)
    sid = agent.session.id
    # Storage drifts (an older host, a lost correction): a wrong entry is made durable.
    cold.host.sessions.request_wake(agent.session, PLUGIN, target + 5_000)
    assert await cold.host.sessions.flush(agent.session) is True
    await cold.host.close_session(sid)
    assert await stored(memory, sid) == {PLUGIN: target + 5_000}
    resumed = await cold.host.resume_session(sid)
    assert wakes(cold, resumed) == {PLUGIN: target}
    assert await cold.host.sessions.flush(resumed.session) is True
    assert await stored(memory, sid) == {PLUGIN: target}


async def test_resume_clears_a_stored_entry_when_nothing_is_active(cold, memory):
    agent = await cold.agent()
    sid = agent.session.id
    cold.host.sessions.request_wake(agent.session, PLUGIN, 1_000)
    assert await cold.host.sessions.flush(agent.session) is True
    await cold.host.close_session(sid)
    resumed = await cold.host.resume_session(sid)
    assert wakes(cold, resumed) == {}


async def test_a_resume_that_agrees_files_nothing(cold, memory):
    agent = await cold.agent()
    _, target = await create(cold, agent, 600)
    sid = agent.session.id
    await cold.host.close_session(sid)
    filed: list[object] = []
    cold.host.sessions.subscribe(lambda o: filed.append(o.at_ms), WakeChanged)
    resumed = await cold.host.resume_session(sid)
    assert wakes(cold, resumed) == {PLUGIN: target}
    assert filed == []


async def test_a_fork_files_only_its_own_records(cold, memory):
    parent = await cold.agent()
    _, parent_at = await create(cold, parent, 60)
    child = await cold.host.fork_session(parent.session.id)
    assert wakes(cold, child) == {}  # the inherited record is the parent's, not the fork's
    _, child_at = await create(cold, child, 600)
    assert child_at > parent_at
    assert wakes(cold, child) == {PLUGIN: child_at}
    assert wakes(cold, parent) == {PLUGIN: parent_at}
    assert await stored(memory, child.session.id) == {PLUGIN: child_at}


async def test_a_session_that_is_no_longer_live_files_nothing(cold):
    agent = await cold.agent()
    session = agent.session
    filed: list[object] = []
    cold.host.sessions.subscribe(lambda o: filed.append(o.at_ms), WakeChanged)
    await cold.host.close_session(session.id)
    # Its fold catches up after the close (nothing files, nothing raises).
    cold.plugin.folds._folds.pop(session)  # force a fresh fold
    assert cold.plugin.folds.of(session).active == ()
    assert filed == []


@pytest.mark.parametrize("value", [1, "true", 0, [True]])
async def test_a_non_boolean_cold_delivery_is_refused(value):
    overlay = Overlay.from_document({"plugins": {"schedule": {"cold_delivery": value}}})
    host = LiveHost(backend=MemoryBackend(), clock=ManualClock(), overlay=overlay)
    with pytest.raises(PluginLoadError) as info:
        await host.start()
    assert "cold_delivery must be true or false" in str(info.value)
    assert "plugin 'schedule'" in str(info.value)


async def test_the_web_schedule_example_turns_cold_delivery_on():
    root = Path(__file__).resolve().parents[2]
    overlay = Overlay.load(root / "examples" / "web-schedule" / "overlay.toml")
    (entry,) = [entry for entry in overlay.plugins if entry.name == PLUGIN]
    assert entry.config == {"cold_delivery": True}
    async with LiveHost(backend=MemoryBackend(), clock=ManualClock(), overlay=overlay) as host:
        agent = await host.create_session()
        value = await agent.execute_tool("schedule_create", {"prompt": "p", "after_seconds": 60})
        assert isinstance(value, dict)
        assert value["id"] == "schedule-1"
        assert set(host.sessions.wakes(agent.session)) == {PLUGIN}


async def test_a_corrupt_stream_on_resume_clears_its_stored_entry(cold, memory):
    agent = await cold.agent()
    _, target = await create(cold, agent, 600)
    sid = agent.session.id
    await cold.host.unload_plugin("schedule")  # write a corrupt stream without the companion
    agent.session.append("schedule/change", {"junk": True})
    await cold.host.close_session(sid)
    assert await stored(memory, sid) == {PLUGIN: target}
    cold.host.load_plugin("schedule", {"cold_delivery": True})
    with capture_logs() as logs:
        resumed = await cold.host.resume_session(sid)
    assert [e["plugin"] for e in logs if e["event"] == "session.invalid"] == [PLUGIN]
    assert wakes(cold, resumed) == {}
    assert await cold.host.sessions.flush(resumed.session) is True
    assert await stored(memory, sid) == {}


async def test_a_corrupt_stream_without_the_config_keeps_its_entry(memory):
    h = await _harness(memory, {})
    try:
        agent = await h.agent()
        sid = agent.session.id
        h.host.sessions.request_wake(agent.session, PLUGIN, 1_000)
        await h.host.unload_plugin("schedule")
        agent.session.append("schedule/change", {"junk": True})
        await h.host.close_session(sid)
        h.host.load_plugin("schedule")
        resumed = await h.host.resume_session(sid)
        assert wakes(h, resumed) == {PLUGIN: 1_000}  # nothing is filed without cold_delivery
    finally:
        await h.host.close()


async def test_reindex_refiles_an_entry_storage_lost(cold, memory):
    agent = await cold.agent()
    _, target = await create(cold, agent, 600)
    sid = agent.session.id
    await cold.host.close_session(sid)
    loaded = await memory.load(sid)
    assert loaded is not None
    await memory.append(
        Write(sid, len(loaded.events), [], wakes={PLUGIN: None})
    )  # the entry is lost
    assert await stored(memory, sid) == {}
    rebuilt, entries, failed = await cold.host.reindex()
    assert (rebuilt, entries, failed) == (1, 1, [])
    assert await stored(memory, sid) == {PLUGIN: target}
