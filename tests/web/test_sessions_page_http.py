"""``GET /api/sessions`` a page at a time: newest first, ``limit`` and an opaque ``after``
cursor, strict parameters, and no cold log read beyond the page, through a real server."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from dsh_hookspecs import Event, JSONValue, hookimpl
from dsh_host import LiveHost
from dsh_host._names import RENAME
from dsh_host.persistence import SQLiteBackend, StoredSession
from dsh_host.testing import ManualClock
from dsh_host.web._viewdata import RowSummaries

from .support import PRESENTABLE, Presenter, serve


class Counter:
    """Each Session's presentable events as a view with a badge (the list's badges)."""

    @hookimpl
    def dsh_session_views(self, events: Sequence[Event]) -> JSONValue:
        return {"test.count": {"badge": sum(1 for e in events if e.type == PRESENTABLE)}}


@pytest.fixture
async def sqlite_host(clock: ManualClock, tmp_path: Path) -> AsyncIterator[LiveHost]:
    async with LiveHost(
        backend=SQLiteBackend(tmp_path / "data"), clock=clock, model="scripted"
    ) as host:
        host.load_plugin("test-presenter", factory=Presenter)
        host.load_plugin("test-counter", factory=Counter)
        yield host


@pytest.fixture
async def client(sqlite_host: LiveHost) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(sqlite_host) as (_, http):
        yield http


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, response.text
    return str(error["message"])


async def _page(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/api/sessions", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"sessions", "next"}
    return body


async def _created(
    host: LiveHost, clock: ManualClock, count: int, *, step_ms: int = 1
) -> list[str]:
    """``count`` Sessions created ``step_ms`` apart (0: all at one instant); their ids."""
    ids = []
    for _ in range(count):
        ids.append((await host.create_session()).session.id)
        clock.set_wall(clock.now_ms() + step_ms)
    return ids


def _cursor(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


# -- refused before anything is read ---------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"limit": "0"}, "invalid_query"),
        ({"limit": "201"}, "invalid_query"),
        ({"limit": "-1"}, "invalid_query"),
        ({"limit": "ten"}, "invalid_query"),
        ({"limit": ""}, "invalid_query"),
        ({"sort": "desc"}, "invalid_query"),
        ({"before": "x"}, "invalid_query"),
        ({"after": ""}, "bad_cursor"),
        ({"after": "not a cursor"}, "bad_cursor"),
        ({"after": "e30"}, "bad_cursor"),  # "{}"
        ({"after": "x" * 1025}, "bad_cursor"),
        ({"after": _cursor([1, "s", "k"])}, "bad_cursor"),  # a board cursor
        ({"after": _cursor([1.5, "s"])}, "bad_cursor"),
        ({"after": _cursor([True, "s"])}, "bad_cursor"),
        ({"after": _cursor([2**63, "s"])}, "bad_cursor"),
        ({"after": _cursor([1, 2])}, "bad_cursor"),
        ({"after": _cursor([1, "a\u0000b"])}, "bad_cursor"),
        ({"after": _cursor({"createdAt": 1, "id": "s"})}, "bad_cursor"),
    ],
    ids=[
        "limit-0",
        "limit-201",
        "limit-negative",
        "limit-text",
        "limit-empty",
        "unknown-parameter",
        "unknown-before",
        "cursor-empty",
        "cursor-spaces",
        "cursor-object-text",
        "cursor-too-long",
        "cursor-of-the-board",
        "cursor-float",
        "cursor-bool",
        "cursor-too-big",
        "cursor-id-not-text",
        "cursor-id-with-nul",
        "cursor-object",
    ],
)
async def test_a_malformed_page_request_is_refused(
    client: httpx.AsyncClient, params: dict[str, str], code: str
) -> None:
    message = _error(await client.get("/api/sessions", params=params), 422, code)
    if code == "bad_cursor":
        assert message == "after is not a cursor this server made; start from the top"


async def test_a_repeated_parameter_or_a_query_on_create_is_refused(
    client: httpx.AsyncClient, sqlite_host: LiveHost
) -> None:
    _error(await client.get("/api/sessions?limit=2&limit=3"), 422, "invalid_query")
    _error(await client.post("/api/sessions?limit=2", json={}), 422, "invalid_query")
    assert await _page(client) == {"sessions": [], "next": None}  # nothing was created


# -- pages -----------------------------------------------------------------------------------


async def test_pages_list_every_session_newest_first_exactly_once(
    sqlite_host: LiveHost, clock: ManualClock, client: httpx.AsyncClient
) -> None:
    ids = await _created(sqlite_host, clock, 3)
    ids += await _created(sqlite_host, clock, 4, step_ms=0)  # four at one instant: by id
    clock.set_wall(clock.now_ms() + 1)
    ids += await _created(sqlite_host, clock, 2)
    created = {row["id"]: row["createdAt"] for row in (await _page(client, limit=200))["sessions"]}
    expected = sorted(ids, key=lambda sid: (created[sid], sid), reverse=True)
    seen: list[str] = []
    params: dict[str, Any] = {"limit": 2}
    pages = 0
    while True:
        page = await _page(client, **params)
        pages += 1
        assert len(page["sessions"]) <= 2
        seen += [row["id"] for row in page["sessions"]]
        if page["next"] is None:
            break
        assert isinstance(page["next"], str)
        params = {"limit": 2, "after": page["next"]}
    assert seen == expected
    assert pages == 5
    whole = await _page(client, limit=9)
    assert [row["id"] for row in whole["sessions"]] == expected
    assert whole["next"] is None  # nothing follows: no cursor to a page that is empty


async def test_the_default_page_holds_fifty_and_the_most_is_two_hundred(
    sqlite_host: LiveHost, clock: ManualClock, client: httpx.AsyncClient
) -> None:
    ids = await _created(sqlite_host, clock, 203)
    newest_first = list(reversed(ids))
    first = await _page(client)
    assert [row["id"] for row in first["sessions"]] == newest_first[:50]
    rest = await _page(client, limit=200, after=first["next"])
    assert [row["id"] for row in rest["sessions"]] == newest_first[50:203]
    assert rest["next"] is None
    most = await _page(client, limit=200)
    assert len(most["sessions"]) == 200
    last = await _page(client, after=most["next"])
    assert [row["id"] for row in last["sessions"]] == newest_first[200:]


async def test_a_page_continues_after_its_cursor_whatever_changed_in_between(
    sqlite_host: LiveHost, clock: ManualClock, client: httpx.AsyncClient
) -> None:
    ids = await _created(sqlite_host, clock, 6)
    first = await _page(client, limit=2)
    assert [row["id"] for row in first["sessions"]] == [ids[5], ids[4]]
    # A new Session and a deleted one between two pages: the next page neither repeats nor
    # skips what was already shown, and shows neither.
    newer = await _created(sqlite_host, clock, 1)
    assert (await client.delete(f"/api/sessions/{ids[4]}")).status_code == 200
    assert (await client.delete(f"/api/sessions/{ids[3]}")).status_code == 200
    second = await _page(client, limit=2, after=first["next"])
    assert [row["id"] for row in second["sessions"]] == [ids[2], ids[1]]
    again = await _page(client, limit=3)
    assert [row["id"] for row in again["sessions"]] == [newer[0], ids[5], ids[2]]


async def test_rows_carry_live_names_badges_and_forks_and_read_only_their_own_logs(
    sqlite_host: LiveHost,
    clock: ManualClock,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = await _created(sqlite_host, clock, 30)
    named = sqlite_host.sessions.get(ids[29])
    assert named is not None
    named.append(RENAME, {"name": "<b>Groceries</b>"})
    named.append(PRESENTABLE, {"label": "x"})
    assert await sqlite_host.sessions.flush(named) is True
    cold = sqlite_host.sessions.get(ids[27])
    assert cold is not None
    for label in ("a", "b"):
        cold.append(PRESENTABLE, {"label": label})
    assert await sqlite_host.sessions.flush(cold) is True
    for sid in ids[:-1]:
        await sqlite_host.close_session(sid)
    child = (await sqlite_host.fork_session(ids[28])).session
    reads: list[str] = []
    load = sqlite_host.backend.load

    async def counting(session_id: str) -> StoredSession | None:
        reads.append(session_id)
        return await load(session_id)

    monkeypatch.setattr(sqlite_host.backend, "load", counting)
    page = await _page(client, limit=4)
    rows = page["sessions"]
    assert [row["id"] for row in rows] == [child.id, ids[29], ids[28], ids[27]]
    assert rows[0]["live"] is True
    assert rows[0]["parentSession"] == ids[28]
    assert rows[0]["seedLength"] == child.header.seed_length == 0  # its parent's log was empty
    assert rows[1] == {
        "id": ids[29],
        "createdAt": rows[1]["createdAt"],
        "live": True,
        "name": "<b>Groceries</b>",  # text: the client shows it as text
        "badges": {"test.count": 1},
    }
    assert rows[2]["live"] is True  # the fork resumed its parent
    assert rows[3] == {
        "id": ids[27],
        "createdAt": rows[3]["createdAt"],
        "live": False,
        "badges": {"test.count": 2},  # from its stored log, read without resuming it
    }
    assert sqlite_host.sessions.get(ids[27]) is None
    # Only the page's cold rows were read, once each; the same page again reads nothing.
    assert sorted(reads) == [ids[27]]
    await _page(client, limit=4)
    assert sorted(reads) == [ids[27]]
    deeper = await _page(client, limit=3, after=page["next"])
    assert [row["id"] for row in deeper["sessions"]] == [ids[26], ids[25], ids[24]]
    assert sorted(reads) == sorted([ids[27], ids[26], ids[25], ids[24]])


async def test_a_damaged_row_keeps_its_place_in_its_page(
    sqlite_host: LiveHost, clock: ManualClock, tmp_path: Path
) -> None:
    ids = await _created(sqlite_host, clock, 3)
    for sid in ids:
        await sqlite_host.close_session(sid)
    outside = sqlite3.connect(tmp_path / "data" / "dsh.sqlite3", isolation_level=None)
    try:
        outside.execute("UPDATE sessions SET header = '{not json' WHERE id = ?", (ids[1],))
    finally:
        outside.close()
    async with serve(sqlite_host) as (_, client):
        first = await _page(client, limit=2)
        assert [row["id"] for row in first["sessions"]] == [ids[2], ids[1]]
        damaged = first["sessions"][1]
        assert damaged.pop("error").startswith("the stored header is invalid")
        assert damaged == {
            "id": ids[1],
            "createdAt": first["sessions"][0]["createdAt"] - 1,
            "live": False,
            "damaged": True,
        }
        second = await _page(client, limit=2, after=first["next"])
        assert [row["id"] for row in second["sessions"]] == [ids[0]]
        assert second["next"] is None


async def test_row_summaries_remember_only_the_rows_listed_lately(
    sqlite_host: LiveHost, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = await _created(sqlite_host, clock, 3)
    for sid in ids:
        await sqlite_host.close_session(sid)
    reads: list[str] = []
    load = sqlite_host.backend.load

    async def counting(session_id: str) -> StoredSession | None:
        reads.append(session_id)
        return await load(session_id)

    monkeypatch.setattr(sqlite_host.backend, "load", counting)
    summaries = RowSummaries(sqlite_host, remember=2)
    lengths = dict.fromkeys(ids, 0)

    async def annotate(*listed: str) -> None:
        await summaries.annotate([{"id": sid} for sid in listed], lengths)

    await annotate(*ids)
    assert reads == ids
    await annotate(ids[1], ids[2])  # the two listed last: remembered
    assert reads == ids
    await annotate(ids[0])  # the least recently listed was forgotten: read again
    assert reads == [*ids, ids[0]]
    summaries.forget(ids[0])  # deleted: forgotten at once
    await annotate(ids[0])
    assert reads == [*ids, ids[0], ids[0]]
