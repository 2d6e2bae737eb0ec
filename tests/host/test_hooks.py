"""Every hookspec, exercised through the real host (and the meta-tests that demand it)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import (
    HOOK_NAMES,
    BoardEntry,
    DeliveryPlan,
    EventRejectedError,
    Followup,
    Notice,
    RendererAsset,
    hookimpl,
    hookspecs,
)

TESTS = Path(__file__).resolve().parents[1]


class Spy:
    def __init__(self):
        self.calls: list[tuple] = []
        self.reject_type: str | None = None
        self.opened_fails = False

    @hookimpl
    def dsh_plugin_start(self, host, config):
        self.calls.append(("start", dict(config)))
        return lambda: self.calls.append(("stopped",))

    @hookimpl
    def dsh_agent_published(self, agent):
        self.calls.append(("published", agent.id, agent.parent is None))

    @hookimpl
    def dsh_session_opened(self, session, reason):
        self.calls.append(("opened", session.id, reason))
        if self.opened_fails:
            raise ValueError("corrupt owned stream")

    @hookimpl
    def dsh_event_validate(self, session, event):
        if event.type == self.reject_type:
            raise ValueError(f"{event.type} is not allowed at seq {event.seq}")

    @hookimpl
    def dsh_session_flushed(self, session, through_seq):
        self.calls.append(("flushed", session.id, through_seq))

    @hookimpl
    def dsh_event_present(self, events, seq, seed_length):
        event = events[seq]
        if event.type == "spy/presentable":
            return {"seq": seq, "seedLength": seed_length}
        return None

    @hookimpl
    def dsh_session_views(self, events, seed_length, session):
        return {"spy.count": {"badge": len(events) - seed_length, "live": session is not None}}

    @hookimpl
    def dsh_renderer_assets(self):
        return [RendererAsset(name="spy", path="/x/spy.js", event_types=("spy/presentable",))]


class Broken:
    @hookimpl
    def dsh_session_flushed(self, session, through_seq):
        raise RuntimeError("observer bug")

    @hookimpl
    def dsh_event_present(self, events, seq, seed_length):
        raise RuntimeError("presenter bug")

    @hookimpl
    def dsh_session_views(self, events, seed_length, session):
        raise RuntimeError("views bug")

    @hookimpl
    def dsh_renderer_assets(self):
        raise RuntimeError("assets bug")


@pytest.fixture
def spy(host):
    instance = Spy()
    host.load_plugin("spy", {"k": "v"}, factory=lambda: instance)
    return instance


def names(spy, kind):
    return [call for call in spy.calls if call[0] == kind]


async def test_hook_dsh_plugin_start(host):
    instance = Spy()
    host.load_plugin("spy", {"limit": 3}, factory=lambda: instance)
    assert instance.calls == [("start", {"limit": 3})]
    await host.unload_plugin("spy")
    assert instance.calls[-1] == ("stopped",)


async def test_hook_dsh_agent_published(host, spy):
    root = await host.create_session()
    child = host.agents.create_child(root)
    assert names(spy, "published") == [("published", root.id, True), ("published", child.id, False)]


async def test_hook_dsh_session_opened(host, spy):
    root = await host.create_session()
    fork = await host.fork_session(root.session.id)
    await host.close_session(root.session.id)
    resumed = await host.resume_session(root.session.id)
    assert names(spy, "opened") == [
        ("opened", root.session.id, "created"),
        ("opened", fork.session.id, "forked"),
        ("opened", resumed.session.id, "resumed"),
    ]
    spy.opened_fails = True
    with capture_logs() as logs:
        agent = await host.create_session()
    invalid = [entry for entry in logs if entry["event"] == "session.invalid"]
    assert invalid[0]["plugin"] == "spy"
    assert invalid[0]["session_id"] == agent.session.id
    assert host.sessions.get(agent.session.id) is agent.session  # still live and readable


async def test_hook_dsh_event_validate(host, spy):
    agent = await host.create_session()
    session = agent.session
    before = len(session.events)
    spy.reject_type = "spy/forbidden"
    with pytest.raises(EventRejectedError) as info:
        session.append("spy/forbidden", {})
    assert info.value.plugin == "spy"
    assert "not allowed at seq" in str(info.value)
    assert len(session.events) == before
    session.append("spy/allowed", {})
    assert len(session.events) == before + 1


async def test_hook_dsh_session_flushed(host, spy):
    host.load_plugin("broken", factory=Broken)
    agent = await host.create_session()
    agent.session.append("x/y", {})
    with capture_logs() as logs:
        assert await host.sessions.flush(agent.session) is True
    assert names(spy, "flushed")[-1] == ("flushed", agent.session.id, 1)
    assert any(e["event"] == "plugin.hook_failed" and e["plugin"] == "broken" for e in logs)


class Planner:
    """Files a wake and answers it cold: one follow-up with one event, a board row, a notice."""

    def __init__(self):
        self.asked: list[tuple[str, str, int]] = []

    @hookimpl
    def dsh_wake_due(self, plugin, wake):
        self.asked.append((plugin, wake.session_id, len(wake.events)))
        return DeliveryPlan(
            followups=(Followup(text="it is time", events=(("planner/done", {"n": 1}),)),),
            board={"row": BoardEntry(kind="pending", at_ms=wake.now_ms + 1)},
            notices=(("row", Notice(title="Time", at_ms=wake.now_ms)),),
            wake_at_ms=None,
        )


class BrokenPlanner:
    @hookimpl
    def dsh_wake_due(self, plugin, wake):
        raise RuntimeError("planner bug")


async def test_hook_dsh_wake_due(host, backend, clock):
    planner = Planner()
    host.load_plugin("planner", factory=lambda: planner)
    host.load_plugin("broken-planner", factory=BrokenPlanner)
    agent = await host.create_session()
    sid = agent.session.id
    host.sessions.request_wake(agent.session, "planner", clock.now_ms())
    host.sessions.request_wake(agent.session, "broken-planner", clock.now_ms())
    assert await host.sessions.flush(agent.session) is True
    await host.close_session(sid)
    stored = await backend.load(sid)
    assert stored is not None
    length = len(stored.events)
    with capture_logs() as logs:
        assert await host.cold.deliver(sid, [(sid, "broken-planner", clock.now_ms())]) is False
        assert await host.cold.deliver(sid, [(sid, "planner", clock.now_ms())]) is True
    assert any(e["event"] == "plugin.hook_failed" and e["plugin"] == "broken-planner" for e in logs)
    # Only the plugin whose entry is due was asked, with what storage held.
    assert planner.asked == [("planner", sid, length)]
    after = await backend.load(sid)
    assert after is not None
    followup, done = after.events[length:]
    assert (followup.seq, followup.type, done.seq, done.type) == (
        length,
        "agent/followup",
        length + 1,
        "planner/done",
    )
    assert followup.data["text"] == "it is time"
    assert followup.data["source"] == {"kind": "plugin", "plugin": "planner"}
    assert followup.time == done.time == clock.now_ms()
    assert after.board[("planner", "row")] == BoardEntry(kind="pending", at_ms=clock.now_ms() + 1)
    assert "planner" not in after.wakes
    assert after.wakes["dsh.turns"] == clock.now_ms()  # the follow-up's turn is owed
    assert host.sessions.get(sid) is None  # no Session was made live for it


async def test_hook_dsh_event_present(host, spy):
    host.load_plugin("broken", factory=Broken)
    agent = await host.create_session()
    agent.session.append("spy/presentable", {})
    agent.session.append("other/type", {})
    events = agent.session.events
    with capture_logs() as logs:
        assert host.plugins.event_present(events, 0, 0) == {"seq": 0, "seedLength": 0}
        assert host.plugins.event_present(events, 1, 0) is None
    assert sum(e["event"] == "plugin.hook_failed" for e in logs) == 2


class Clashing:
    @hookimpl
    def dsh_session_views(self, events, seed_length, session):
        return {"spy.count": "mine", "": 1, "clash.own": [seed_length]}


class NotAMapping:
    @hookimpl
    def dsh_session_views(self, events, seed_length, session):
        return ["not", "a", "mapping"]


async def test_hook_dsh_session_views(host, spy):
    host.load_plugin("broken", factory=Broken)
    agent = await host.create_session()
    agent.session.append("x/y", {})
    events = agent.session.events
    with capture_logs() as logs:
        views = host.plugins.session_views(events, 0, agent.session)
    assert views == {"spy.count": {"badge": 1, "live": True}}
    assert host.plugins.session_views(events, 1, None) == {"spy.count": {"badge": 0, "live": False}}
    assert any(e["event"] == "plugin.hook_failed" and e["plugin"] == "broken" for e in logs)
    host.load_plugin("clash", factory=Clashing)
    host.load_plugin("flat", factory=NotAMapping)
    with capture_logs() as logs:
        views = host.plugins.session_views(events, 0, None)
    # The newest plugin is asked first and keeps the name it claims; nameless views are dropped.
    assert views == {"spy.count": "mine", "clash.own": [0]}
    problems = {(e["event"], e["plugin"]) for e in logs if e["event"].startswith("plugin.")}
    assert ("plugin.session_view_clash", "spy") in problems
    assert ("plugin.bad_session_views", "clash") in problems
    assert ("plugin.bad_session_views", "flat") in problems


async def test_hook_dsh_renderer_assets(host, spy):
    host.load_plugin("broken", factory=Broken)
    assets = host.plugins.renderer_assets()
    assert [(plugin, asset.name) for plugin, asset in assets] == [("spy", "spy")]


def test_every_hookspec_is_documented():
    specs = {name for name, _ in inspect.getmembers(hookspecs) if name.startswith("dsh_")}
    assert specs == set(HOOK_NAMES)
    for name in HOOK_NAMES:
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        for required in ("When:", "Result:", "Synchronous", "versionadded"):
            assert required in doc, f"{name} docstring lacks {required!r}"
        assert getattr(hookspecs, name).dsh_spec["historic"] is False, name


def test_every_hookspec_has_a_test():
    defined = set()
    for path in TESTS.rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                defined.add(node.name)
    missing = [name for name in HOOK_NAMES if f"test_hook_{name}" not in defined]
    assert missing == []


async def test_no_plan_is_asked_while_another_plugin_validates_events(host, spy, clock):
    planner = Planner()
    host.load_plugin("planner", factory=lambda: planner)
    agent = await host.create_session()
    sid = agent.session.id
    host.sessions.request_wake(agent.session, "planner", clock.now_ms())
    assert await host.sessions.flush(agent.session) is True
    await host.close_session(sid)
    # The spy validates events: the plan's events would escape it, so the host resumes instead.
    assert await host.cold.deliver(sid, [(sid, "planner", clock.now_ms())]) is False
    assert planner.asked == []
