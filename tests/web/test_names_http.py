"""Session names over HTTP (issue 23 item 4): a typed rename and a first message are shown by
one rule (the table in tests/names.py), in the rename's answer, its event and the session list.
"""

from __future__ import annotations

import pytest

from dsh_host import LiveHost
from tests.names import SHOWN_NAMES

from .support import FlushGate, serve

# A lone surrogate never reaches a name here: a request body or an event holding one is not
# valid Unicode and is refused as such before any name is read (tests/host/test_names.py).
_CASES = [case for case in SHOWN_NAMES if case[0] != "surrogate"]


@pytest.mark.parametrize(
    ("typed", "shown"), [case[1:] for case in _CASES], ids=[case[0] for case in _CASES]
)
async def test_a_typed_rename_and_a_first_message_are_shown_by_one_rule(
    web_host: LiveHost, gate: FlushGate, typed: str, shown: str | None
) -> None:
    # Fails before issue 23 item 4: control characters were refused, while bidi overrides and
    # invisible characters were stored and listed as typed, and a first message kept them all.
    gate.auto = "ok"
    renamed = (await web_host.create_session()).session
    auto = (await web_host.create_session()).session
    # A first message names a Session once it made sense: its turn ran a tool that succeeded.
    auto.append("user/message", {"text": typed})
    auto.append("tool/call", {"callId": "c1", "name": "schedule_list", "arguments": {}})
    auto.append("tool/result", {"callId": "c1", "name": "schedule_list", "value": {"items": []}})
    await web_host.sessions.flush(auto)
    async with serve(web_host) as (_, client):
        answer = await client.post(f"/api/sessions/{renamed.id}/name", json={"name": typed})
        rows = {r["id"]: r for r in (await client.get("/api/sessions")).json()["sessions"]}
    if shown is None:
        assert answer.status_code == 422
        assert answer.json()["error"] == {
            "code": "invalid_field",
            "message": "name must not be blank",
        }
        assert [e.type for e in renamed.events if e.type == "session/rename"] == []
        assert "name" not in rows[renamed.id]
        assert "name" not in rows[auto.id]
        return
    assert answer.status_code == 200
    assert answer.json() == {"id": renamed.id, "name": shown, "durable": True}
    assert renamed.events[-1].data == {"name": shown}  # stored as shown
    assert rows[renamed.id]["name"] == shown
    assert rows[auto.id]["name"] == shown
