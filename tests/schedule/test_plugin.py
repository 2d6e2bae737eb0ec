"""The plugin: loader-safe entry point, installation on future roots only, unwinding, config."""

from __future__ import annotations

import importlib.metadata

import pytest

from dsh_hookspecs import ENTRY_POINT_GROUP, Event
from dsh_host import LiveHost, Overlay, PluginLoadError
from dsh_host.persistence import MemoryBackend
from dsh_host.testing import ManualClock
from dsh_schedule import SchedulePlugin

TOOLS = {
    "schedule_create",
    "schedule_list",
    "schedule_update",
    "schedule_delete",
    "schedule_ack",
    "schedule_snooze",
}


def test_entry_point_is_loader_safe():
    (entry_point,) = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name="schedule")
    assert entry_point.load() is SchedulePlugin
    plugin = SchedulePlugin()  # a fresh instance per host, no module-global state
    assert plugin.owners == {}
    assert plugin.host is None


async def test_installs_only_on_roots_published_after_it_loaded():
    async with LiveHost(backend=MemoryBackend(), clock=ManualClock()) as host:
        before = await host.create_session()
        host.load_plugin("schedule")
        after = await host.create_session()
        child = host.agents.create_child(after)
        plugin = host.plugins.pm.get_plugin("schedule")
        assert set(after.tools.names()) == TOOLS
        assert before.tools.names() == ()
        assert child.tools.names() == ()
        assert host.tools.names() == ()
        assert set(plugin.owners) == {after}
        assert (await before.execute_tool("schedule_list", {}))["code"] == "unknown_tool"


async def test_unwinds_on_agent_disposal_and_on_plugin_unload():
    clock = ManualClock()
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        host.load_plugin("schedule")
        plugin = host.plugins.pm.get_plugin("schedule")
        one = await host.create_session()
        two = await host.create_session()
        await one.execute_tool("schedule_create", {"prompt": "a", "after_seconds": 500})
        await two.execute_tool("schedule_create", {"prompt": "b", "after_seconds": 500})
        await one.dispose()
        assert one.tools.names() == ()
        assert set(plugin.owners) == {two}
        await host.unload_plugin("schedule")
        assert two.tools.names() == ()
        assert plugin.owners == {}
        assert plugin.stopping
        assert [d for d in clock.pending_delays() if d > 1] == []  # every owner timer is gone
        # Durable records are untouched by teardown.
        kinds = [e.data["operation"] for e in two.session.events if e.type == "schedule/change"]
        assert kinds == ["create"]


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"max_segment": 5}, "unknown config keys ['max_segment']"),
        ({"max_segment_seconds": 0}, "max_segment_seconds must be a positive number"),
        ({"max_active": True}, "max_active must be a positive integer"),
        ({"max_prompt_chars": "5"}, "max_prompt_chars must be a positive integer"),
        # Fails before this fix: fractions were truncated (0.5 became 0, refusing every create).
        ({"max_active": 0.5}, "max_active must be a positive integer"),
        ({"max_prompt_chars": 10.0}, "max_prompt_chars must be a positive integer"),
        ({"max_active": 0}, "max_active must be a positive integer"),
    ],
)
async def test_bad_config_stops_start_up_naming_the_plugin(config, fragment):
    overlay = Overlay.from_document({"plugins": {"schedule": config}})
    host = LiveHost(backend=MemoryBackend(), clock=ManualClock(), overlay=overlay)
    with pytest.raises(PluginLoadError) as info:
        await host.start()
    assert "plugin 'schedule'" in str(info.value)
    assert fragment in str(info.value)


async def test_publication_guards(h):
    agent = await h.agent()
    plugin = h.plugin
    assert plugin.dsh_agent_published(agent) is None  # already installed
    fresh = SchedulePlugin()
    assert fresh.dsh_agent_published(agent) is None  # not started: no host
    other = await h.host.create_session()
    await other.dispose()
    assert plugin.dsh_agent_published(other) is None  # no longer the published Agent
    plugin.stopping = True
    third = await h.agent()
    assert third.tools.names() == ()
    plugin.stopping = False


async def test_cleanup_is_idempotent(h):
    agent = await h.agent()
    cleanup = h.plugin._cleanups[agent]
    await cleanup()
    await cleanup()
    assert agent not in h.plugin.owners


async def test_presentation_hook_only_answers_for_dispatches(h):
    agent = await h.agent()
    await agent.execute_tool("schedule_create", {"prompt": "Check the deploy", "after_seconds": 1})
    await h.settle(agent)
    h.clock.advance(1)
    from dsh_host.testing import wait_until

    await wait_until(lambda: h.dispatches(agent) == ["schedule-1"])
    events = agent.session.events
    views = {
        e.seq: h.plugin.dsh_event_present(
            events=events, seq=e.seq, seed_length=0, session=agent.session
        )
        for e in events
    }
    stored = list(events)  # the same log as read from storage: no live Session to key by
    assert views == {
        e.seq: h.plugin.dsh_event_present(events=stored, seq=e.seq, seed_length=0, session=None)
        for e in stored
    }
    dispatch = next(
        e.seq for e in events if e.type == "schedule/change" and e.data["operation"] == "dispatch"
    )
    presented = {seq: view for seq, view in views.items() if view is not None}
    assert list(presented.values()) == [
        {
            "scheduleId": "schedule-1",
            "prompt": "Check the deploy",
            "occurrenceAt": "2026-08-05T12:00:01.000Z",
            "deliveryMode": "session-local",
        }
    ]
    assert list(presented) == [dispatch]
    assert isinstance(events[0], Event)
