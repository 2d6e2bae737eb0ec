"""``POST /api/sessions/{id}/tools/{name}`` (issue 13 item 3): the Reminders panel's Cancel.

A user action is an Agent tool call recorded like any other (marked as the user's), run in turn
with the inbox; the panel's view and the transcript agree after it. Everything a client can get
wrong is refused with a stable code before anything is logged.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from dsh_host import LiveHost
from dsh_host.testing import wait_until

from .support import serve

VIEW = "schedule.reminders"


async def _reminders(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    answer = await client.get(f"/api/sessions/{sid}/views")
    assert answer.status_code == 200, answer.text
    return answer.json()["views"][VIEW]


async def _create(client: httpx.AsyncClient, sid: str, prompt: str) -> str:
    text = "/tool schedule_create " + json.dumps({"prompt": prompt, "after_seconds": 600})
    sent = await client.post(f"/api/sessions/{sid}/messages", json={"text": text})
    assert sent.status_code == 202

    async def listed() -> bool:
        return any(item["prompt"] == prompt for item in (await _reminders(client, sid))["active"])

    await wait_until(listed)
    view = await _reminders(client, sid)
    return str(next(item for item in view["active"] if item["prompt"] == prompt)["scheduleId"])


async def test_cancel_is_a_user_tool_call_and_the_panel_and_transcript_agree(web_host: LiveHost):
    web_host.load_plugin("schedule")
    async with serve(web_host) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        keep = await _create(client, sid, "Stretch")
        cancel = await _create(client, sid, "Check the deploy")
        assert (await _reminders(client, sid))["badge"] == 2
        answer = await client.post(
            f"/api/sessions/{sid}/tools/schedule_delete", json={"arguments": {"id": cancel}}
        )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["name"] == "schedule_delete"
        assert body["value"] == {"id": cancel, "deleted": True}
        assert body["durable"] is True
        view = await _reminders(client, sid)
        assert view["badge"] == 1
        assert [item["scheduleId"] for item in view["active"]] == [keep]
        history = (await client.get(f"/api/sessions/{sid}/history")).json()["entries"]
        events = [entry["event"] for entry in history]
        call = next(
            e for e in events if e["type"] == "tool/call" and e["data"]["callId"] == body["callId"]
        )
        assert call["data"]["source"] == {"kind": "user"}
        assert call["data"]["arguments"] == {"id": cancel}
        result = next(
            e
            for e in events
            if e["type"] == "tool/result" and e["data"]["callId"] == body["callId"]
        )
        assert result["data"]["value"] == body["value"]
        # A second Cancel (two tabs): the tool's own refusal, as the model would get it.
        again = await client.post(
            f"/api/sessions/{sid}/tools/schedule_delete", json={"arguments": {"id": cancel}}
        )
        assert again.status_code == 200
        assert again.json()["value"]["code"] == "schedule_not_found"
        rows = (await client.get("/api/sessions")).json()["sessions"]
        assert next(r for r in rows if r["id"] == sid)["badges"] == {VIEW: 1}


async def test_bad_requests_are_refused_with_stable_codes_and_change_nothing(web_host: LiveHost):
    web_host.load_plugin("schedule")
    async with serve(web_host) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        await _create(client, sid, "Stretch")
        assert (await client.post(f"/api/sessions/{sid}/flush")).json()["durable"] is True
        await web_host.close_session(sid)
        stored = (await web_host.inspect(sid)).events
        url = f"/api/sessions/{sid}/tools/schedule_delete"
        for kwargs, status, code in (
            ({"json": {"arguments": 3}}, 422, "invalid_field"),
            ({"json": {"arguments": [1]}}, 422, "invalid_field"),
            ({"json": {"arguments": {}, "as": "admin"}}, 422, "unknown_field"),
            ({"json": [1]}, 422, "invalid_body"),
            (
                {"content": b"{", "headers": {"content-type": "application/json"}},
                400,
                "invalid_json",
            ),
        ):
            refused = await client.post(url, **kwargs)
            assert refused.status_code == status, kwargs
            assert refused.json()["error"]["code"] == code, kwargs
        assert web_host.sessions.get(sid) is None  # a refused body resumes nothing
        # The tool and its arguments are checked on the Agent, before anything is logged.
        for path, body, status, code in (
            ("nope", {"arguments": {}}, 404, "tool_not_found"),
            ("schedule_delete", {"arguments": {}}, 422, "invalid_arguments"),
            ("schedule_delete", {"arguments": {"id": 7}}, 422, "invalid_arguments"),
        ):
            refused = await client.post(f"/api/sessions/{sid}/tools/{path}", json=body)
            assert refused.status_code == status, (path, body)
            error = refused.json()["error"]
            assert error["code"] == code, (path, body)
            assert error["message"]
        live = web_host.sessions.get(sid)
        assert live is not None
        # Nothing was logged past what any resume writes (no call of the user's at all).
        assert [e.type for e in live.events[: len(stored)]] == [e.type for e in stored]
        assert not any(e.data.get("source") == {"kind": "user"} for e in live.events)
        assert (await _reminders(client, sid))["badge"] == 1
        missing = await client.post("/api/sessions/nope/tools/schedule_delete", json={})
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "session_not_found"
        wrong_method = await client.get(url)
        assert wrong_method.status_code == 405


async def test_a_body_may_be_left_out_for_a_tool_without_arguments(web_host: LiveHost):
    web_host.load_plugin("schedule")
    async with serve(web_host) as (_, client):
        sid = (await client.post("/api/sessions", json={})).json()["id"]
        answer = await client.post(f"/api/sessions/{sid}/tools/schedule_list")
        assert answer.status_code == 200, answer.text
        assert answer.json()["value"] == []  # no reminders yet
