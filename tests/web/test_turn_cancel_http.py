"""``POST /api/sessions/{id}/turn/cancel`` (issue 23 item 2): the browser's Stop, through the real
HTTP server. It answers ``{"cancelled": true|false}``, never resumes a cold Session, answers an
unknown Session 404 and a Session another live host holds 409, like the other writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend, SessionLiveElsewhereError
from dsh_host.testing import ManualClock, wait_until
from tests.host.models import GatedModel

from .support import serve


@pytest.fixture
async def gated(clock: ManualClock) -> AsyncIterator[LiveHost]:
    model = GatedModel()
    async with LiveHost(backend=MemoryBackend(), clock=clock, model=model) as host:
        host.test_model = model  # type: ignore[attr-defined]
        yield host


def cancel(client: httpx.AsyncClient, sid: str, **kw: Any):
    return client.post(f"/api/sessions/{sid}/turn/cancel", **kw)


def error_code(answer: httpx.Response) -> tuple[int, str]:
    return answer.status_code, answer.json()["error"]["code"]


async def entries(client: httpx.AsyncClient, sid: str) -> list[dict[str, Any]]:
    answer = await client.get(f"/api/sessions/{sid}/history")
    assert answer.status_code == 200, answer.text
    return [entry["event"] for entry in answer.json()["entries"]]


async def test_refusals_change_nothing(gated: LiveHost):
    async with serve(gated) as (_, client):
        assert error_code(await cancel(client, "no-such-session")) == (404, "session_not_found")
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        before = await entries(client, sid)
        refused = await cancel(client, sid, json={"turn": 1})
        assert error_code(refused) == (422, "unknown_field")
        refused = await client.post(f"/api/sessions/{sid}/turn/cancel?now=1")
        assert error_code(refused) == (422, "invalid_query")
        refused = await client.get(f"/api/sessions/{sid}/turn/cancel")
        assert error_code(refused) == (405, "method_not_allowed")
        assert await entries(client, sid) == before


async def test_a_running_turn_is_stopped_and_nothing_else_is(gated: LiveHost):
    model: GatedModel = gated.test_model  # type: ignore[attr-defined]
    async with serve(gated) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        idle = await cancel(client, sid)
        assert idle.status_code == 200
        assert idle.json() == {"cancelled": False}  # nothing runs

        sent = await client.post(f"/api/sessions/{sid}/messages", json={"text": "slow"})
        assert sent.status_code == 202
        await wait_until(lambda: model.started == ["slow"])
        stopped = await cancel(client, sid)
        assert stopped.status_code == 200
        assert stopped.json() == {"cancelled": True}
        agent = gated.agents.for_session(sid)
        assert agent is not None
        await agent.when_idle()
        events = await entries(client, sid)
        assert [e["type"] for e in events[-3:]] == ["turn/start", "user/message", "turn/end"]
        assert events[-1]["data"] == {"outcome": "cancelled"}
        assert not any(e["type"] == "assistant/message" for e in events)
        assert (await cancel(client, sid)).json() == {"cancelled": False}  # it has ended


async def test_a_cold_session_is_answered_false_and_stays_cold(gated: LiveHost):
    async with serve(gated) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        await gated.close_session(sid)
        before = await entries(client, sid)
        answer = await cancel(client, sid)
        assert answer.status_code == 200
        assert answer.json() == {"cancelled": False}
        assert gated.sessions.get(sid) is None  # not resumed
        assert await entries(client, sid) == before


class ForeignLeases:
    """Leases as a host sees them while another live host holds ``taken``."""

    renew_interval = 60.0

    def __init__(self, taken: str) -> None:
        self.taken = taken

    async def acquire(self, session_id: str, *, skip_locked: bool = False) -> None:
        if session_id == self.taken:
            raise SessionLiveElsewhereError(f"session {session_id} is live on another host")

    async def release(self, session_id: str) -> None:
        pass

    async def live_elsewhere(self, session_id: str) -> bool:
        return session_id == self.taken


async def test_a_session_live_on_another_host_is_answered_409_like_other_writes(gated: LiveHost):
    async with serve(gated) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        await gated.close_session(sid)
        gated.leases = ForeignLeases(sid)  # type: ignore[assignment]
        try:
            answer = await cancel(client, sid)
            assert error_code(answer) == (409, "session_live_elsewhere")
            write = await client.post(f"/api/sessions/{sid}/messages", json={"text": "hi"})
            assert error_code(write) == (409, "session_live_elsewhere")
            assert gated.sessions.get(sid) is None
        finally:
            gated.leases = None
