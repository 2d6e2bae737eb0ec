"""Blocking helpers over a real server's HTTP API (browser and restart lanes)."""

from __future__ import annotations

import json
import time
from typing import Any


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.05) -> Any:
    """Poll ``predicate`` (real time, bounded) until it returns something truthy; return it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(interval)


def history(server, sid: str) -> list[dict[str, Any]]:
    response = server.http.get(f"/api/sessions/{sid}/history", params={"maxMessages": 500})
    response.raise_for_status()
    return response.json()["entries"]


def dispatches(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e
        for e in entries
        if e["event"]["type"] == "schedule/change" and e["event"]["data"]["operation"] == "dispatch"
    ]


def tool_values(server, sid: str, name: str) -> list[Any]:
    return [
        e["event"]["data"]["value"]
        for e in history(server, sid)
        if e["event"]["type"] == "tool/result" and e["event"]["data"]["name"] == name
    ]


def call_tool(server, sid: str, name: str, arguments: dict[str, Any]) -> Any:
    """Send ``/tool NAME {json}`` to the scripted model and wait for that call's result value."""
    before = len(tool_values(server, sid, name))
    text = f"/tool {name} {json.dumps(arguments)}"
    response = server.http.post(f"/api/sessions/{sid}/messages", json={"text": text})
    assert response.status_code == 202, response.text
    return wait_for(lambda: tool_values(server, sid, name)[before:])[0]


def new_session(server) -> str:
    response = server.http.post("/api/sessions", json={})
    assert response.status_code == 201, response.text
    return response.json()["id"]
