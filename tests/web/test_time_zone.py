"""``POST /api/sessions/{id}/messages`` with ``timeZone`` (issue 12 item 3): the browser's IANA
zone reaches that message's turn only, a refused zone changes nothing (a cold Session stays
cold), and the zone is stored nowhere."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from dsh_hookspecs import Turn
from dsh_host import LiveHost
from dsh_host.testing import FaultInjectingBackend, ManualClock, wait_until
from dsh_host.web import ERROR_CODES

from .support import WAIT, serve

INVALID = "timeZone must be UTC or a valid IANA Area/Location name."


class ZoneRecorder:
    """A model adapter that records the zone each turn was told, then answers."""

    name = "zone-recorder"

    def __init__(self) -> None:
        self.zones: list[str | None] = []

    async def run_turn(self, turn: Turn) -> None:
        self.zones.append(turn.time.time_zone)
        turn.say(f"your local time is {turn.time.local().isoformat()}")


@pytest.fixture
def model() -> ZoneRecorder:
    return ZoneRecorder()


@pytest.fixture
async def zone_host(
    clock: ManualClock, backend: FaultInjectingBackend, model: ZoneRecorder
) -> AsyncIterator[LiveHost]:
    async with LiveHost(backend=backend, clock=clock, model=model) as running:
        yield running


@pytest.fixture
async def client(zone_host: LiveHost) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(zone_host) as (_, http):
        yield http


async def _create(client: httpx.AsyncClient) -> str:
    response = await client.post("/api/sessions", json={})
    assert response.status_code == 201
    return str(response.json()["id"])


async def _send(client: httpx.AsyncClient, sid: str, body: dict[str, object]) -> httpx.Response:
    return await client.post(f"/api/sessions/{sid}/messages", json=body)


async def _stored_text(host: LiveHost, sid: str) -> str:
    """The stored header and every stored event of ``sid`` as one JSON text."""
    stored = await host.inspect(sid)
    assert stored is not None
    return json.dumps([stored.header.to_json(), *(event.to_json() for event in stored.events)])


@pytest.mark.parametrize("zone", ["Asia/Kathmandu", "US/Eastern", "UTC", "Etc/GMT+8"])
async def test_a_valid_zone_reaches_that_turn_and_is_stored_nowhere(
    zone_host: LiveHost, client: httpx.AsyncClient, model: ZoneRecorder, zone: str
):
    sid = await _create(client)
    response = await _send(client, sid, {"text": "what time is it?", "timeZone": zone})
    assert response.status_code == 202
    assert response.json() == {"accepted": True}
    agent = zone_host.agents.for_session(sid)
    assert agent is not None
    await wait_until(lambda: model.zones and agent.phase == "idle", timeout=WAIT)
    assert model.zones == [zone]  # an alias (US/Eastern) is taken as the browser sent it

    # The next message without a zone reads UTC: the zone was that request's only.
    assert (await _send(client, sid, {"text": "and now?"})).status_code == 202
    await wait_until(lambda: len(model.zones) == 2 and agent.phase == "idle", timeout=WAIT)
    assert model.zones == [zone, None]

    assert (await client.post(f"/api/sessions/{sid}/flush")).json()["durable"] is True
    live = json.dumps([event.to_json() for event in agent.session.events])
    stored = await _stored_text(zone_host, sid)
    assert '"assistant/message"' in stored  # the turns are there, the zone is not
    assert zone not in live
    assert zone not in stored


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (" UTC", INVALID),
        ("UTC ", INVALID),
        ("CST", INVALID),
        ("GMT", INVALID),
        ("utc", INVALID),
        ("america/new_york", INVALID),
        ("Not/A_Real_Zone", INVALID),
        ("+08:00", INVALID),
        ("", INVALID),
        ("../../etc/passwd", INVALID),
        (42, "timeZone must be a string."),
        (None, "timeZone must be a string."),
        (["UTC"], "timeZone must be a string."),
    ],
)
async def test_a_refused_zone_is_400_and_changes_nothing(
    zone_host: LiveHost, client: httpx.AsyncClient, model: ZoneRecorder, value: object, message: str
):
    live_sid = await _create(client)
    cold_sid = await _create(client)
    await zone_host.close_session(cold_sid)
    assert zone_host.sessions.get(cold_sid) is None
    cold_before = await _stored_text(zone_host, cold_sid)

    for sid in (live_sid, cold_sid):
        response = await _send(client, sid, {"text": "hello", "timeZone": value})
        assert response.status_code == 400, response.text
        assert response.json() == {"error": {"code": "invalid_time_zone", "message": message}}
    assert ERROR_CODES["invalid_time_zone"] == 400

    live = zone_host.sessions.get(live_sid)
    assert live is not None
    assert len(live.events) == 0  # nothing appended, no turn
    assert zone_host.sessions.get(cold_sid) is None  # the cold Session was not resumed
    assert await _stored_text(zone_host, cold_sid) == cold_before
    assert model.zones == []


async def test_a_cold_session_resumed_by_a_message_gets_the_zone(
    zone_host: LiveHost, client: httpx.AsyncClient, model: ZoneRecorder
):
    sid = await _create(client)
    await zone_host.close_session(sid)
    response = await _send(client, sid, {"text": "hi", "timeZone": "Australia/Lord_Howe"})
    assert response.status_code == 202
    agent = zone_host.agents.for_session(sid)
    assert agent is not None
    await wait_until(lambda: model.zones and agent.phase == "idle", timeout=WAIT)
    assert model.zones == ["Australia/Lord_Howe"]


async def test_the_text_is_still_checked_first(zone_host: LiveHost, client: httpx.AsyncClient):
    sid = await _create(client)
    response = await _send(client, sid, {"text": " ", "timeZone": "nope"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_field"
    response = await _send(client, sid, {"timeZone": "UTC"})
    assert response.json()["error"]["code"] == "missing_field"
