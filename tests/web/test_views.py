"""Plugin Session views over HTTP and the event stream, Session names, and the list's badges."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Event, JSONValue, hookimpl
from dsh_host import LiveHost

from .support import PRESENTABLE, FlushGate, append, serve, stream


class Counter:
    """Views: how many ``test/presentable`` events the committed log holds (the badge)."""

    @hookimpl
    def dsh_session_views(self, events: Sequence[Event], seed_length: int) -> JSONValue:
        labels = [e.data["label"] for e in events if e.type == PRESENTABLE]  # type: ignore[index]
        return {"test.count": {"badge": len(labels), "labels": labels, "seed": seed_length}}


class Broken:
    """A plugin whose views fail, clash or are not JSON: none of it reaches a client."""

    @hookimpl
    def dsh_session_views(self, events: Sequence[Event]) -> JSONValue:
        if any(e.type == "test/explode" for e in events):
            raise RuntimeError("views failed on purpose")
        return {"test.count": {"badge": 99}, "test.bad": {"x": float("nan")}, "": 1}


@pytest.fixture
async def views_host(web_host: LiveHost) -> LiveHost:
    # The host calls the newest plugin first: the counter's views win over the broken ones.
    web_host.load_plugin("test-broken", factory=Broken)
    web_host.load_plugin("test-counter", factory=Counter)
    return web_host


async def _live(host: LiveHost) -> tuple[str, object]:
    agent = await host.create_session()
    return agent.session.id, agent.session


async def test_views_come_from_the_committed_prefix_only(views_host: LiveHost, gate: FlushGate):
    sid, session = await _live(views_host)
    append(session, "a")  # type: ignore[arg-type]
    async with serve(views_host) as (_, client):
        before = (await client.get(f"/api/sessions/{sid}/views")).json()
        assert before == {
            "views": {"test.count": {"badge": 0, "labels": [], "seed": 0}},
            "name": None,
            "throughSeq": 0,
        }
        gate.auto = "ok"
        assert await views_host.sessions.flush(session) is True  # type: ignore[arg-type]
        after = (await client.get(f"/api/sessions/{sid}/views")).json()
    assert after == {
        "views": {"test.count": {"badge": 1, "labels": ["a"], "seed": 0}},
        "name": None,
        "throughSeq": 1,
    }


async def test_a_failing_clashing_or_non_json_view_is_logged_and_left_out(views_host: LiveHost):
    sid, session = await _live(views_host)
    async with serve(views_host) as (_, client):
        with capture_logs() as logs:
            views = (await client.get(f"/api/sessions/{sid}/views")).json()["views"]
        assert set(views) == {"test.count"}
        assert views["test.count"]["badge"] == 0  # the first plugin to name it keeps it
        events = {entry["event"] for entry in logs}
        assert {
            "plugin.session_view_clash",
            "web.bad_session_view",
            "plugin.bad_session_views",
        } <= events
        session.append("test/explode", {})  # type: ignore[attr-defined]
        await views_host.sessions.flush(session)  # type: ignore[arg-type]
        with capture_logs() as logs:
            views = (await client.get(f"/api/sessions/{sid}/views")).json()["views"]
        assert set(views) == {"test.count"}
        assert any(entry["event"] == "plugin.hook_failed" for entry in logs)


async def test_reading_views_never_activates_a_cold_session(views_host: LiveHost):
    sid, session = await _live(views_host)
    append(session, "a")  # type: ignore[arg-type]
    await views_host.sessions.flush(session)  # type: ignore[arg-type]
    await views_host.close_session(sid)
    assert views_host.sessions.get(sid) is None
    async with serve(views_host) as (_, client):
        answer = await client.get(f"/api/sessions/{sid}/views")
        assert answer.status_code == 200
        assert answer.json()["views"]["test.count"]["labels"] == ["a"]
        assert views_host.sessions.get(sid) is None
        missing = await client.get("/api/sessions/nope/views")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "session_not_found"
        bad = await client.get(f"/api/sessions/{sid}/views?x=1")
        assert bad.status_code == 422


async def test_the_stream_sends_views_after_the_replay_and_after_flushes_that_change_them(
    views_host: LiveHost, gate: FlushGate
):
    sid, session = await _live(views_host)
    gate.auto = "ok"
    async with (
        serve(views_host) as (_, client),
        stream(client, sid, params={"views": "1"}) as reader,
    ):
        first = await reader.next()
        assert first is not None
        assert (first.event, first.id) == ("views", None)
        assert first.data["views"]["test.count"]["badge"] == 0
        event = append(session, "a")  # type: ignore[arg-type]
        assert (await reader.next()).seq == event.seq  # type: ignore[union-attr]
        await views_host.sessions.flush(session)  # type: ignore[arg-type]
        late, pushed = await reader.frames(2)
        assert (late.seq, late.view is not None) == (event.seq, True)  # the presenter's late view
        assert (pushed.event, pushed.id) == ("views", None)
        assert pushed.data == {
            "views": {"test.count": {"badge": 1, "labels": ["a"], "seed": 0}},
            "name": None,
            "throughSeq": 1,
        }
        # A flush that leaves the views as they were pushes nothing.
        note = session.append("note", {})  # type: ignore[attr-defined]
        await views_host.sessions.flush(session)  # type: ignore[arg-type]
        later = append(session, "b")  # type: ignore[arg-type]
        frames = await reader.frames(2)
        assert [f.seq for f in frames] == [note.seq, later.seq]
        await views_host.sessions.flush(session)  # type: ignore[arg-type]
        late, pushed = await reader.frames(2)
        assert (late.seq, pushed.data["views"]["test.count"]["badge"]) == (later.seq, 2)
        # A committed first message that made sense (its turn ran a tool that succeeded) names
        # the Session: pushed though the views did not change.
        typed = session.append("user/message", {"text": "check the deploy"})  # type: ignore[attr-defined]
        session.append("tool/call", {"callId": "c1", "name": "t", "arguments": {}})  # type: ignore[attr-defined]
        result = session.append("tool/result", {"callId": "c1", "name": "t", "value": {}})  # type: ignore[attr-defined]
        await views_host.sessions.flush(session)  # type: ignore[arg-type]
        *shown, named = await reader.frames(4)
        assert ([f.seq for f in shown], named.event) == (
            [typed.seq, typed.seq + 1, result.seq],
            "views",
        )
        assert named.data["name"] == "check the deploy"
        assert named.data["views"] == pushed.data["views"]


async def test_without_asking_a_stream_gets_no_views_frames(views_host: LiveHost, gate: FlushGate):
    sid, session = await _live(views_host)
    gate.auto = "ok"
    async with serve(views_host) as (_, client):
        refused = await client.get(f"/api/sessions/{sid}/events?views=2")
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "invalid_query"
        async with stream(client, sid) as reader:
            first = append(session, "a")  # type: ignore[arg-type]
            await views_host.sessions.flush(session)  # type: ignore[arg-type]
            second = append(session, "b")  # type: ignore[arg-type]
            frames = await reader.frames(3)
    # The event, its late view after the flush, the next event: never a views frame.
    assert [(f.event, f.seq) for f in frames] == [
        (None, first.seq),
        (None, first.seq),
        (None, second.seq),
    ]


async def test_list_rows_carry_names_and_badges_and_cold_logs_are_read_once_per_length(
    views_host: LiveHost, gate: FlushGate, monkeypatch: pytest.MonkeyPatch
):
    gate.auto = "ok"
    sid, session = await _live(views_host)
    plain, _ = await _live(views_host)
    session.append("user/message", {"text": "  check   the\ndeploy  "})  # type: ignore[attr-defined]
    session.append("tool/call", {"callId": "c1", "name": "t", "arguments": {}})  # type: ignore[attr-defined]
    session.append("tool/result", {"callId": "c1", "name": "t", "value": {}})  # type: ignore[attr-defined]
    append(session, "a")  # type: ignore[arg-type]
    await views_host.sessions.flush(session)  # type: ignore[arg-type]
    await views_host.close_session(sid)
    reads: list[str] = []
    inspect = views_host.inspect

    async def counting(session_id: str):  # type: ignore[no-untyped-def]
        reads.append(session_id)
        return await inspect(session_id)

    monkeypatch.setattr(views_host, "inspect", counting)
    async with serve(views_host) as (_, client):
        for _ in range(2):
            rows = {r["id"]: r for r in (await client.get("/api/sessions")).json()["sessions"]}
            assert rows[sid]["name"] == "check the deploy"
            assert rows[sid]["badges"] == {"test.count": 1}
            assert "name" not in rows[plain]
            assert "badges" not in rows[plain]
        assert reads == [sid]  # the second listing used what the first derived


async def test_a_rename_is_an_event_that_survives_and_bad_names_change_nothing(
    views_host: LiveHost, gate: FlushGate
):
    gate.auto = "ok"
    sid, session = await _live(views_host)
    await views_host.sessions.flush(session)  # type: ignore[arg-type]
    await views_host.close_session(sid)
    async with serve(views_host) as (_, client):
        for body, code in (
            ({}, "missing_field"),
            ({"name": "   "}, "invalid_field"),
            ({"name": 5}, "invalid_field"),
            ({"name": "x" * 121}, "invalid_field"),
            ({"name": "\u200b\u0007\u202e"}, "invalid_field"),  # nothing visible left
            ({"name": "ok", "extra": 1}, "unknown_field"),
        ):
            refused = await client.post(f"/api/sessions/{sid}/name", json=body)
            assert refused.status_code == 422, body
            assert refused.json()["error"]["code"] == code, body
        assert views_host.sessions.get(sid) is None  # nothing was resumed
        answer = await client.post(f"/api/sessions/{sid}/name", json={"name": "  Deploy watch "})
        assert answer.status_code == 200
        assert answer.json() == {"id": sid, "name": "Deploy watch", "durable": True}
        live = views_host.sessions.get(sid)
        assert live is not None
        assert live.events[-1].type == "session/rename"
        assert live.events[-1].data == {"name": "Deploy watch"}
        length = len(live.events)
        again = await client.post(f"/api/sessions/{sid}/name", json={"name": "Deploy watch"})
        assert again.json() == {"id": sid, "name": "Deploy watch", "durable": True}
        assert len(live.events) == length  # a retried rename (after a 503, say) adds nothing
        child = (await client.post(f"/api/sessions/{sid}/fork", json={})).json()["id"]
        rows = {r["id"]: r for r in (await client.get("/api/sessions")).json()["sessions"]}
        assert rows[sid]["name"] == "Deploy watch"
        assert rows[child]["name"] == "Deploy watch"  # a fork inherits it with its seed
        assert rows[child]["seedLength"] == len(live.events)
        missing = await client.post("/api/sessions/nope/name", json={"name": "x"})
        assert missing.status_code == 404
