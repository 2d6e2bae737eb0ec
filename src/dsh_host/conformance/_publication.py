"""Publication and disposal (docs/design.md section 8.3, the hook docs of
``dsh_plugin_start`` and ``dsh_agent_published``).

Publication is never historic: a plugin sees only the Agents published after it loaded. Every
disposable a plugin hands back is closed exactly once, in reverse publication order, awaited
and contained: on Agent disposal, on plugin unload (that plugin's only, its start disposable
last) and on host shutdown.
"""

from __future__ import annotations

from ._host import PLUGIN, HostSuite, Recorder, Rig

__all__ = ["PublicationContract"]


def _disposals(rig: Rig, agent_id: str) -> list[str]:
    """The plugins whose disposable for ``agent_id`` was closed, in closing order."""
    return [entry[1] for entry in rig.journal.of("dispose") if entry[2] == agent_id]


class PublicationContract(HostSuite):
    """Root Agents after load only; disposables closed in reverse order."""

    async def test_a_loaded_plugin_is_started_once_with_its_config_and_the_host_services(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        late = Recorder("late", rig.journal)
        rig.host.load_plugin("late", late, {"limit": 3, "mode": "x"})
        assert rig.journal.of("start") == [("start", PLUGIN), ("start", "late", "limit", "mode")]
        services = late.host
        assert services is not None
        assert services.sessions.get(agent.session.id) is agent.session
        assert [a.id for a in services.agents.roots()] == [agent.id]
        assert services.clock.now_ms() >= 0
        assert isinstance(list(services.tools.names()), list)

    async def test_root_agents_are_published_only_to_plugins_loaded_before_them(
        self, rig: Rig
    ) -> None:
        first = await rig.new_agent()
        late = Recorder("late", rig.journal)
        rig.host.load_plugin("late", late, {})
        assert late.agents == []  # not historic: nothing is replayed on load
        second = await rig.new_agent()
        assert [a.id for a in late.agents] == [second.id]
        assert [a.id for a in rig.recorder.agents] == [first.id, second.id]
        assert all(a.parent is None for a in rig.recorder.agents)
        # Published fully constructed, before it took any input.
        assert rig.recorder.phases_at_publication == ["idle", "idle"]
        assert late.agent_of(second.session) is second

    async def test_agent_disposal_closes_disposables_in_reverse_publication_order(
        self, rig: Rig
    ) -> None:
        rig.host.load_plugin("a", Recorder("a", rig.journal, async_disposal=True), {})
        rig.host.load_plugin("b", Recorder("b", rig.journal, failing_disposal=True), {})
        rig.host.load_plugin("c", Recorder("c", rig.journal, async_disposal=True), {})
        agent = await rig.new_agent()
        published = [entry[1] for entry in rig.journal.of("published") if entry[2] == agent.id]
        assert sorted(published) == sorted([PLUGIN, "a", "b", "c"])
        await rig.host.close_session(agent.session.id)  # b's failure is contained
        assert agent.disposed
        # Each closed once, in reverse publication order; async ones awaited on the way.
        assert _disposals(rig, agent.id) == list(reversed(published))
        assert rig.journal.of("stop") == []

    async def test_unloading_a_plugin_closes_only_its_disposables_then_its_start_disposable(
        self, rig: Rig
    ) -> None:
        late = Recorder("late", rig.journal, async_disposal=True)
        rig.host.load_plugin("late", late, {})
        first, second = await rig.new_agent(), await rig.new_agent()
        mark = len(rig.journal.entries)
        await rig.host.unload_plugin("late")
        closed = [e for e in rig.journal.entries[mark:] if e[0] in ("dispose", "stop")]
        assert sorted(closed[:-1]) == sorted(
            [("dispose", "late", first.id), ("dispose", "late", second.id)]
        )
        assert closed[-1] == ("stop", "late")
        # The Agents live on, with the other plugins' disposables still open.
        assert not first.disposed
        assert not second.disposed
        assert first.phase == "idle"
        assert _disposals(rig, first.id) == ["late"]
        third = await rig.new_agent()
        assert third.id not in [a.id for a in late.agents]
        await rig.host.close_session(first.session.id)
        assert _disposals(rig, first.id) == ["late", PLUGIN]  # late's was not closed twice

    async def test_a_resumed_session_gets_a_root_agent_published_to_the_plugins_loaded_now(
        self, rig: Rig
    ) -> None:
        agent = await rig.new_agent()
        sid = agent.session.id
        await rig.host.close_session(sid)
        late = Recorder("late", rig.journal)
        rig.host.load_plugin("late", late, {})
        resumed = await rig.host.resume_session(sid)
        assert resumed.parent is None
        assert not resumed.disposed
        assert late.agent_of(resumed.session).id == resumed.id
        assert rig.recorder.agent_of(resumed.session).id == resumed.id
        assert resumed.session.id == sid

    async def test_host_shutdown_closes_every_disposable_once(self, rig: Rig) -> None:
        late = Recorder("late", rig.journal)
        rig.host.load_plugin("late", late, {})
        agents = [await rig.new_agent(), await rig.new_agent()]
        await rig.host.close()
        for agent in agents:
            assert agent.disposed
            assert sorted(_disposals(rig, agent.id)) == sorted([PLUGIN, "late"])
        stops = rig.journal.of("stop")
        assert sorted(stops) == sorted([("stop", PLUGIN), ("stop", "late")])
        # A plugin's start disposable is closed after every disposable it handed out.
        entries = rig.journal.entries
        for plugin in (PLUGIN, "late"):
            stop = entries.index(("stop", plugin))
            assert all(i < stop for i, e in enumerate(entries) if e[:2] == ("dispose", plugin))
        await rig.host.close()  # idempotent
        assert rig.journal.of("stop") == stops
