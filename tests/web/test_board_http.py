"""The board over HTTP (``GET /api/board``, ``GET /api/board/count``) and deleting a Session
(``DELETE /api/sessions/{id}``), through a real server on 127.0.0.1."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_host import LiveHost
from dsh_host._names import RENAME
from dsh_host.persistence import SQLiteBackend
from dsh_host.testing import ManualClock, wait_until
from tests.host.board_plugin import PLUGIN, Pins, load_pins
from tests.host.models import GatedModel

from .support import WAIT, serve, stream

AT = 1_785_931_260_000


@pytest.fixture
async def board_host(clock: ManualClock, tmp_path: Path) -> AsyncIterator[LiveHost]:
    model = GatedModel()
    async with LiveHost(backend=SQLiteBackend(tmp_path / "data"), clock=clock, model=model) as host:
        host.test_model = model  # type: ignore[attr-defined]
        yield host
        for gate in model.release.values():
            gate.set()


@pytest.fixture
def pins(board_host: LiveHost) -> Pins:
    return load_pins(board_host)


@pytest.fixture
async def client(board_host: LiveHost) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(board_host) as (_, http):
        yield http


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text


async def _named(host: LiveHost, name: str | None) -> Any:
    session = (await host.create_session()).session
    if name is not None:
        session.append(RENAME, {"name": name})
    return session


async def _page(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/api/board", params={"plugin": PLUGIN, **params})
    assert response.status_code == 200, response.text
    return response.json()


# -- GET /api/board ---------------------------------------------------------------------------


async def test_a_page_lists_every_sessions_rows_soonest_first_and_pages_with_next(
    board_host: LiveHost, pins: Pins, client: httpx.AsyncClient
) -> None:
    groceries = await _named(board_host, "Groceries")
    untitled = await _named(board_host, None)
    pins.pin(groceries, "milk", AT + 20, "buy milk")
    pins.pin(untitled, "stretch", AT + 10, "<b>stretch</b>")
    pins.pin(groceries, "eggs", AT + 30, "buy eggs")
    pins.pin(untitled, "later", AT + 40, "later")
    for session in (groceries, untitled):
        assert await board_host.sessions.flush(session) is True
    first = await _page(client, kind="pending", limit=3)
    assert first["rows"] == [
        {
            "sessionId": untitled.id,
            "sessionName": None,
            "key": "stretch",
            "kind": "pending",
            "atMs": AT + 10,
            "data": {"text": "<b>stretch</b>"},
        },
        {
            "sessionId": groceries.id,
            "sessionName": "Groceries",
            "key": "milk",
            "kind": "pending",
            "atMs": AT + 20,
            "data": {"text": "buy milk"},
        },
        {
            "sessionId": groceries.id,
            "sessionName": "Groceries",
            "key": "eggs",
            "kind": "pending",
            "atMs": AT + 30,
            "data": {"text": "buy eggs"},
        },
    ]
    assert isinstance(first["next"], str)
    second = await _page(client, kind="pending", limit=3, after=first["next"])
    assert [row["key"] for row in second["rows"]] == ["later"]
    assert second["next"] is None
    whole = await _page(client, kind="pending")  # the default limit holds them all
    assert [row["key"] for row in whole["rows"]] == ["stretch", "milk", "eggs", "later"]
    assert whole["next"] is None
    one = await _page(client, kind="pending", session=groceries.id)
    assert [row["key"] for row in one["rows"]] == ["milk", "eggs"]
    assert (await _page(client, kind="delivered"))["rows"] == []
    assert (await _page(client, kind="pending", session="no-such-session"))["rows"] == []
    other = await client.get("/api/board", params={"plugin": "nobody", "kind": "pending"})
    assert other.json() == {"rows": [], "next": None}


async def test_a_page_shows_only_what_a_flush_made_durable(
    board_host: LiveHost, pins: Pins, client: httpx.AsyncClient
) -> None:
    session = await _named(board_host, "Groceries")
    assert await board_host.sessions.flush(session) is True
    pins.pin(session, "milk", AT, "buy milk")  # the batching window never fires on this clock
    assert (await _page(client, kind="pending"))["rows"] == []
    assert await board_host.sessions.flush(session) is True
    assert [row["key"] for row in (await _page(client, kind="pending"))["rows"]] == ["milk"]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"kind": "pending"}, "invalid_query"),
        ({"plugin": PLUGIN}, "invalid_query"),
        ({"plugin": "", "kind": "pending"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "Pending"}, "invalid_query"),
        ({"plugin": "p" * 201, "kind": "pending"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "limit": "0"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "limit": "201"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "limit": "ten"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "session": "a b"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "sort": "desc"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "after": "not a cursor"}, "bad_cursor"),
        ({"plugin": PLUGIN, "kind": "pending", "after": "e30"}, "bad_cursor"),  # "{}"
        ({"plugin": PLUGIN, "kind": "pending", "after": "x" * 1025}, "bad_cursor"),
        ({"plugin": PLUGIN, "kind": "pending", "since": "-1"}, "invalid_query"),
        ({"plugin": PLUGIN, "kind": "pending", "since": "1", "after": "e30"}, "bad_cursor"),
    ],
    ids=[
        "no-plugin",
        "no-kind",
        "empty-plugin",
        "kind-case",
        "plugin-too-long",
        "limit-0",
        "limit-201",
        "limit-text",
        "session-malformed",
        "unknown-parameter",
        "cursor-garbage",
        "cursor-not-ours",
        "cursor-too-long",
        "since-negative",
        "since-and-a-bad-cursor",
    ],
)
async def test_a_malformed_page_request_is_refused(
    client: httpx.AsyncClient, params: dict[str, str], code: str
) -> None:
    _error(await client.get("/api/board", params=params), 422, code)


@pytest.mark.parametrize(
    "cursor",
    [
        [1.5, "s", "k"],
        [True, "s", "k"],
        [2**63, "s", "k"],
        [1, 2, "k"],
        [1, "s"],
        {"at": 1},
    ],
    ids=["float", "bool", "too-big", "id-not-text", "short", "object"],
)
async def test_a_cursor_the_server_did_not_make_is_bad_cursor(
    client: httpx.AsyncClient, cursor: object
) -> None:
    text = base64.urlsafe_b64encode(json.dumps(cursor).encode()).decode().rstrip("=")
    params = {"plugin": PLUGIN, "kind": "pending", "after": text}
    _error(await client.get("/api/board", params=params), 422, "bad_cursor")


async def test_since_starts_at_the_first_row_after_that_instant(
    board_host: LiveHost, pins: Pins, client: httpx.AsyncClient
) -> None:
    one = await _named(board_host, None)
    two = await _named(board_host, None)
    for session, key, at in ((one, "a", AT), (two, "b", AT), (one, "c", AT + 1)):
        pins.pin(session, key, at)
    for session in (one, two):
        assert await board_host.sessions.flush(session) is True

    async def keys(**params: Any) -> list[str]:
        answer = await client.get(
            "/api/board", params={"plugin": PLUGIN, "kind": "pending", **params}
        )
        assert answer.status_code == 200, answer.text
        return [row["key"] for row in answer.json()["rows"]]

    assert sorted(await keys(since=AT - 1)) == ["a", "b", "c"]
    assert await keys(since=AT) == ["c"]
    assert await keys(since=AT + 1) == []
    assert await keys(since=10**18 - 1) == []  # past every instant: nothing, not an error
    first = {"plugin": PLUGIN, "kind": "pending", "limit": "1"}
    cursor = (await client.get("/api/board", params=first)).json()["next"]
    both = {**first, "since": "0", "after": cursor}
    _error(await client.get("/api/board", params=both), 422, "invalid_query")


# -- GET /api/board/count --------------------------------------------------------------------


async def test_count_answers_how_many_rows_are_after_an_instant(
    board_host: LiveHost, pins: Pins, client: httpx.AsyncClient
) -> None:
    one = await _named(board_host, None)
    two = await _named(board_host, None)
    for session, key, at in ((one, "a", AT), (one, "b", AT + 10), (two, "c", AT + 20)):
        pins.pin(session, key, at)
    for session in (one, two):
        assert await board_host.sessions.flush(session) is True

    async def count(**params: Any) -> int:
        response = await client.get("/api/board/count", params={"plugin": PLUGIN, **params})
        assert response.status_code == 200, response.text
        return int(response.json()["count"])

    assert await count(kind="pending") == 3
    assert await count(kind="pending", after=AT) == 2
    assert await count(kind="pending", after=AT + 20) == 0
    assert await count(kind="pending", session=one.id) == 2
    assert await count(kind="delivered") == 0
    _error(await client.get("/api/board/count", params={"plugin": PLUGIN}), 422, "invalid_query")
    bad = {"plugin": PLUGIN, "kind": "pending", "after": "-1"}
    _error(await client.get("/api/board/count", params=bad), 422, "invalid_query")
    limited = {"plugin": PLUGIN, "kind": "pending", "limit": "5"}
    _error(await client.get("/api/board/count", params=limited), 422, "invalid_query")


# -- DELETE /api/sessions/{id} -------------------------------------------------------------------


async def test_delete_stops_a_live_session_ends_its_streams_and_a_second_answers_404(
    board_host: LiveHost, pins: Pins, client: httpx.AsyncClient
) -> None:
    model: GatedModel = board_host.test_model  # type: ignore[attr-defined]
    kept = await _named(board_host, "Kept")
    pins.pin(kept, "k", AT, "kept")
    agent = await board_host.create_session()
    session = agent.session
    pins.pin(session, "a", AT + 1, "deleted")
    assert await board_host.sessions.flush(session) is True
    assert await board_host.sessions.flush(kept) is True
    async with stream(client, session.id, last_event_id=0) as events:
        response = await client.post(f"/api/sessions/{session.id}/messages", json={"text": "hi"})
        assert response.status_code == 202
        await wait_until(lambda: model.started == ["hi"], timeout=WAIT)
        response = await client.delete(f"/api/sessions/{session.id}")
        assert (response.status_code, response.json()) == (200, {"deleted": True})
        await events.until_end()  # the stream ended
    assert agent.disposed
    rows = (await client.get("/api/sessions")).json()["sessions"]
    assert [row["id"] for row in rows] == [kept.id]
    assert [row["key"] for row in (await _page(client, kind="pending"))["rows"]] == ["k"]
    _error(await client.delete(f"/api/sessions/{session.id}"), 404, "session_not_found")
    _error(await client.get(f"/api/sessions/{session.id}/history"), 404, "session_not_found")
    _error(await client.post(f"/api/sessions/{session.id}/resume"), 404, "session_not_found")
    reconnect = await client.get(f"/api/sessions/{session.id}/events")
    _error(reconnect, 404, "session_not_found")


async def test_delete_of_a_cold_session_and_its_fork_keeps_working(
    board_host: LiveHost, pins: Pins, client: httpx.AsyncClient
) -> None:
    parent = await _named(board_host, "Parent")
    pins.pin(parent, "p", AT, "parent")
    child = (await board_host.fork_session(parent.id)).session
    await board_host.close_session(parent.id)
    response = await client.delete(f"/api/sessions/{parent.id}")
    assert (response.status_code, response.json()) == (200, {"deleted": True})
    assert (await _page(client, kind="pending"))["rows"] == []
    flushed = await client.post(f"/api/sessions/{child.id}/flush")
    assert flushed.status_code == 200
    assert flushed.json()["durable"] is True
    rows = (await client.get("/api/sessions")).json()["sessions"]
    assert [(row["id"], row.get("parentSession")) for row in rows] == [(child.id, parent.id)]


async def test_delete_of_an_unknown_or_malformed_id_is_404_and_get_is_405(
    client: httpx.AsyncClient,
) -> None:
    _error(await client.delete("/api/sessions/no-such-session"), 404, "session_not_found")
    _error(await client.delete("/api/sessions/a%20b"), 404, "session_not_found")
    _error(await client.delete("/api/sessions/x?force=1"), 422, "invalid_query")
    response = await client.get("/api/sessions/no-such-session")
    _error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "DELETE"
