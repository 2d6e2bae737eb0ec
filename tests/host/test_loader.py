"""The loader: overlay config, entry points, isolation, clear errors, late plugins, unload."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from dsh_hookspecs import hookimpl
from dsh_host import LiveHost, Overlay, OverlayError, PluginLoadError
from dsh_host.persistence import MemoryBackend

PLUGINS = {
    "dshtest_good": """
        from dsh_hookspecs import hookimpl

        class Plugin:
            instances = []

            def __init__(self):
                self.config = None
                self.agents = []
                self.closed = []
                Plugin.instances.append(self)

            @hookimpl
            def dsh_plugin_start(self, host, config):
                self.config = dict(config)
                self.host = host
                return lambda: self.closed.append("plugin")

            @hookimpl
            def dsh_agent_published(self, agent):
                self.agents.append(agent)
                return lambda: self.closed.append(agent.id)
    """,
    "dshtest_import_error": """
        raise ImportError("dependency dshtest_missing is not installed")
    """,
    "dshtest_bad_hook": """
        from dsh_hookspecs import hookimpl

        class Plugin:
            @hookimpl
            def dsh_agent_publishd(self, agent):  # typo: no such hookspec
                return None
    """,
    "dshtest_bad_args": """
        from dsh_hookspecs import hookimpl

        class Plugin:
            @hookimpl
            def dsh_agent_published(self, agent, not_an_argument):
                return None
    """,
    "dshtest_start_fails": """
        from dsh_hookspecs import hookimpl

        class Plugin:
            @hookimpl
            def dsh_plugin_start(self, host, config):
                raise RuntimeError("missing required config 'x'")
    """,
}

ENTRY_POINTS = {
    "good": "dshtest_good:Plugin",
    "import-error": "dshtest_import_error:Plugin",
    "bad-hook": "dshtest_bad_hook:Plugin",
    "bad-args": "dshtest_bad_args:Plugin",
    "start-fails": "dshtest_start_fails:Plugin",
}


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real installed distribution (dist-info on sys.path) publishing test entry points."""
    for module, source in PLUGINS.items():
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    info = tmp_path / "dshtest_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dshtest-plugins\nVersion: 1.0\n")
    lines = "\n".join(f"{name} = {target}" for name, target in ENTRY_POINTS.items())
    (info / "entry_points.txt").write_text(f"[dsh.plugins]\n{lines}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for module in PLUGINS:
        sys.modules.pop(module, None)


def overlay(text: str, tmp_path: Path) -> Overlay:
    path = tmp_path / "overlay.toml"
    path.write_text(textwrap.dedent(text))
    return Overlay.load(path)


async def test_good_overlay_loads_in_order_with_per_plugin_config(plugin_dist, clock):
    ov = overlay(
        """
        [plugins.good]
        greeting = "hi"
        limits = { max = 3 }
        """,
        plugin_dist,
    )
    async with LiveHost(backend=MemoryBackend(), clock=clock, overlay=ov) as host:
        assert host.plugins.names == ["good"]
        plugin = host.plugins.pm.get_plugin("good")
        assert plugin.config == {"greeting": "hi", "limits": {"max": 3}}
        assert plugin.host is host
        agent = await host.create_session()
        assert plugin.agents == [agent]
    assert plugin.closed == [agent.id, "plugin"]


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("nonexistent", "no such plugin in entry-point group 'dsh.plugins'"),
        ("import-error", "import failed"),
        ("bad-hook", "hook validation failed"),
        ("bad-args", "hook validation failed"),
        ("start-fails", "missing required config 'x'"),
    ],
)
async def test_a_bad_plugin_stops_start_up_with_one_message_naming_it(
    plugin_dist, clock, name, fragment
):
    ov = overlay(f'[plugins.good]\n[plugins."{name}"]\n', plugin_dist)
    backend = MemoryBackend()
    host = LiveHost(backend=backend, clock=clock, overlay=ov)
    with pytest.raises(PluginLoadError) as info:
        await host.start()
    message = str(info.value)
    assert message.startswith(f"plugin {name!r}:")
    assert fragment in message
    assert info.value.plugin == name
    # Start-up failed cleanly: the good plugin was unloaded again, nothing is left registered.
    assert host.plugins.names == []
    assert host.plugins.pm.get_plugin(name) is None


async def test_late_plugin_does_not_see_earlier_agents(plugin_dist, clock):
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        early = await host.create_session()
        host.load_plugin("good")
        plugin = host.plugins.pm.get_plugin("good")
        late = await host.create_session()
        assert plugin.agents == [late]
        assert early not in plugin.agents


async def test_unloading_a_plugin_disposes_everything_it_started(plugin_dist, clock):
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        host.load_plugin("good")
        plugin = host.plugins.pm.get_plugin("good")
        one = await host.create_session()
        two = await host.create_session()
        await host.unload_plugin("good")
        assert sorted(plugin.closed[:2]) == sorted([one.id, two.id])
        assert plugin.closed[2] == "plugin"
        assert host.plugins.names == []
        await host.create_session()
        assert len(plugin.agents) == 2  # unregistered: no more publications reach it
        # Disposing the Agents later does not close the plugin's disposables twice.
    assert len(plugin.closed) == 3


class NewStyleWrapper:
    @hookimpl(wrapper=True)
    def dsh_session_flushed(self, session, through_seq):
        return (yield)


class OldStyleWrapper:
    @hookimpl
    def dsh_agent_published(self, agent):
        return None

    @hookimpl(hookwrapper=True)
    def dsh_event_present(self, events, seq, seed_length):
        yield


class Recorder:
    def __init__(self):
        self.flushed: list[int] = []

    @hookimpl
    def dsh_session_flushed(self, session, through_seq):
        self.flushed.append(through_seq)


@pytest.mark.parametrize(
    ("factory", "hook", "kind"),
    [
        (NewStyleWrapper, "dsh_session_flushed", "wrapper=True"),
        (OldStyleWrapper, "dsh_event_present", "hookwrapper=True"),
    ],
)
async def test_a_wrapper_implementation_is_refused_at_load_naming_plugin_and_hook(
    clock, factory, hook, kind
):
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        host.load_plugin("recorder", factory=Recorder)
        recorder = host.plugins.pm.get_plugin("recorder")
        with pytest.raises(PluginLoadError) as refused:
            host.load_plugin("wrapping", factory=factory)
        assert str(refused.value).startswith("plugin 'wrapping': ")
        assert f"{hook} is a {kind} implementation" in str(refused.value)
        assert refused.value.plugin == "wrapping"
        # The host is as before: the refused plugin left nothing behind, the others still work.
        assert host.plugins.names == ["recorder"]
        assert host.plugins.pm.get_plugin("wrapping") is None
        agent = await host.create_session()  # its first flush: through_seq 0
        agent.session.append("test/plain", {})
        assert await host.sessions.flush(agent.session) is True
        assert recorder.flushed == [0, 1]
        host.load_plugin("wrapping", factory=Recorder)  # the name is free again
        assert host.plugins.names == ["recorder", "wrapping"]


async def test_loading_the_same_plugin_twice_is_refused(plugin_dist, clock):
    async with LiveHost(backend=MemoryBackend(), clock=clock) as host:
        host.load_plugin("good")
        with pytest.raises(PluginLoadError, match="already loaded"):
            host.load_plugin("good")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("plugins = 3\n", "'plugins' must be a table"),
        ("[other]\n", "unknown top-level keys ['other']"),
        ("[plugins]\nschedule = 1\n", "plugins.schedule must be a table"),
        ("[plugins.x\n", "not valid TOML"),
    ],
)
def test_malformed_overlays_are_reported_with_the_file(tmp_path, text, fragment):
    path = tmp_path / "overlay.toml"
    path.write_text(text)
    with pytest.raises(OverlayError) as info:
        Overlay.load(path)
    assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_missing_overlay_file_is_reported(tmp_path):
    with pytest.raises(OverlayError, match="cannot read overlay"):
        Overlay.load(tmp_path / "absent.toml")


def test_the_example_overlay_names_the_schedule_plugins():
    root = Path(__file__).resolve().parents[2]
    ov = Overlay.load(root / "examples" / "web-schedule" / "overlay.toml")
    assert [entry.name for entry in ov.plugins] == ["schedule", "ui-schedule"]
