"""The page's notification API through a real server on 127.0.0.1: the channels and Web Push
(``GET /api/notify``), a test notification (``POST /api/notify/test``), Web Push subscriptions
(``POST /api/notify/push``, ``DELETE /api/notify/push/{id}``) and a Session's notices read from
the SQLite outbox (``GET /api/sessions/{id}/notices``) without loading the Session.

Every answer is searched for the channel's secrets (a password and a token in its URL): none may
ever carry them."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from dsh_hookspecs import Notice
from dsh_host import LiveHost
from dsh_host.notify import parse_channels
from dsh_host.notify._sender import Channels
from dsh_host.persistence import OutboxChange, SQLiteBackend, Write
from dsh_host.testing import ManualClock, wait_until
from dsh_host.web._notify import GONE_LABEL, TEST_BODY, TEST_TITLE, iso_utc

from .support import WAIT, serve

PASSWORD = "s3cr3t-pass-word"
TOKEN = "tok-ABCDEF-0123456789"
CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/156.0 Safari/537.36"
OCCURRENCE = "2026-08-05T08:01:00.000Z"
#: A test in the page's other language (a title and body the page sends in Chinese).
ZH_TITLE = "dsh：测试通知"  # noqa: RUF001
ZH_BODY = "看到了吗？"  # noqa: RUF001


class Receiver:
    """A webhook and push service on 127.0.0.1: records each request; ``/push-gone...`` answers
    410 (a subscription that has ended), other ``/push...`` paths 201, the rest 200."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received.append((self.path, self.rfile.read(length)))
                status = 200
                if self.path.startswith("/push"):
                    status = 410 if self.path.startswith("/push-gone") else 201
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                del args

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def subscription(endpoint: str) -> dict[str, Any]:
    """What ``PushSubscription.toJSON()`` gives for a browser's fresh key pair."""
    public = ec.generate_private_key(ec.SECP256R1()).public_key()
    raw = public.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return {
        "endpoint": endpoint,
        "expirationTime": None,
        "keys": {"p256dh": _b64url(raw), "auth": _b64url(os.urandom(16))},
    }


class Answers:
    """Every answer's text, for the check that no secret ever leaves the server."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.texts: list[str] = []

    async def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        response = await self.client.request(method, path, **kw)
        self.texts.append(f"{response.headers}\n{response.text}")
        return response

    def assert_no_secret(self) -> None:
        assert self.texts
        for text in self.texts:
            assert PASSWORD not in text
            assert TOKEN not in text


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def _hook_url(receiver: Receiver) -> str:
    return f"json://user:{PASSWORD}@127.0.0.1:{receiver.port}/hook/{TOKEN}"


@pytest.fixture
async def notify_host(
    clock: ManualClock, tmp_path: Path, receiver: Receiver
) -> AsyncIterator[LiveHost]:
    channels = Channels(
        parse_channels([_hook_url(receiver)]),
        push_folder=tmp_path / "webpush",
        allow_private=["127.0.0.1"],
    )
    channels.open_push()
    async with LiveHost(
        backend=SQLiteBackend(tmp_path / "data"),
        clock=clock,
        model="scripted",
        channels=channels,
        public_url="http://127.0.0.1:8765",
        notify_timeout=WAIT,
    ) as host:
        yield host


@pytest.fixture
async def answers(notify_host: LiveHost) -> AsyncIterator[Answers]:
    async with serve(notify_host) as (_, client):
        checked = Answers(client)
        yield checked
        checked.assert_no_secret()


@pytest.fixture
async def bare(host: LiveHost) -> AsyncIterator[httpx.AsyncClient]:
    """A server whose host has no channel and no public URL (and storage with no outbox)."""
    async with serve(host) as (_, client):
        yield client


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, response.text
    assert isinstance(error["message"], str)
    assert error["message"]
    return str(error["message"])


# -- refusals first ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "status", "code"),
    [
        (b"{", 400, "invalid_json"),
        (b"[]", 422, "invalid_body"),
        (b'{"title": "a", "url": "x"}', 422, "unknown_field"),
        (b'{"title": 3}', 422, "invalid_field"),
        (b'{"title": "   "}', 422, "invalid_field"),
        (b'{"title": "' + b"t" * 201 + b'"}', 422, "invalid_field"),
        (b'{"body": null}', 422, "invalid_field"),
        (b'{"body": "' + b"b" * 2001 + b'"}', 422, "invalid_field"),
    ],
)
async def test_a_test_notification_refuses_a_bad_body_before_sending_anything(
    answers: Answers, receiver: Receiver, content: bytes, status: int, code: str
) -> None:
    headers = {"Content-Type": "application/json"}
    response = await answers.request("POST", "/api/notify/test", content=content, headers=headers)
    _error(response, status, code)
    assert receiver.requests == []


async def test_without_channels_the_settings_are_empty_and_a_test_is_refused(
    bare: httpx.AsyncClient,
) -> None:
    settings = await bare.get("/api/notify")
    assert settings.status_code == 200
    assert settings.json() == {
        "channels": [],
        "push": {"available": False, "applicationServerKey": None},
    }
    _error(await bare.get("/api/notify?x=1"), 422, "invalid_query")
    message = _error(await bare.post("/api/notify/test", json={}), 409, "no_channels")
    assert "--notify" in message
    _error(await bare.post("/api/notify/test?x=1", json={}), 422, "invalid_query")
    # No Web Push here: subscribing is refused as off, and there is nothing to remove.
    sub = subscription("https://push.example/abc")
    message = _error(
        await bare.post("/api/notify/push", json={"subscription": sub}), 409, "push_off"
    )
    assert "--public-url" in message
    _error(await bare.delete("/api/notify/push/p-000000000000"), 404, "subscription_not_found")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (None, "invalid_json"),
        ({}, "missing_field"),
        ({"subscription": {}, "extra": 1}, "unknown_field"),
        ({"subscription": "https://push.example/abc"}, "invalid_subscription"),
        ({"subscription": subscription("https://push.example/a"), "userAgent": 7}, "invalid_field"),
    ],
)
async def test_a_subscription_refuses_a_bad_body(
    answers: Answers, body: dict[str, Any] | None, code: str
) -> None:
    content = b"" if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    response = await answers.request("POST", "/api/notify/push", content=content, headers=headers)
    status = {"invalid_json": 400}.get(code, 422)
    _error(response, status, code)
    listed = (await answers.request("GET", "/api/notify")).json()["channels"]
    assert [channel["service"] for channel in listed] == ["JSON"]


@pytest.mark.parametrize(
    ("sub", "words"),
    [
        (subscription("http://push.example/abc"), "https endpoint"),
        ({"endpoint": "https://push.example/abc"}, "keys"),
        (
            {**subscription("https://push.example/a"), "keys": {"p256dh": "x", "auth": "y"}},
            "p256dh",
        ),
    ],
)
async def test_a_subscription_a_browser_could_not_have_made_is_refused_in_plain_words(
    answers: Answers, sub: dict[str, Any], words: str
) -> None:
    response = await answers.request("POST", "/api/notify/push", json={"subscription": sub})
    assert words in _error(response, 422, "invalid_subscription")


async def test_notices_of_an_unknown_or_malformed_session_are_404(answers: Answers) -> None:
    for sid in ("no-such-session", "a%20b", "x" * 200):
        response = await answers.request("GET", f"/api/sessions/{sid}/notices")
        _error(response, 404, "session_not_found")
    response = await answers.request("GET", "/api/sessions/no-such/notices?since=1")
    _error(response, 422, "invalid_query")


# -- the settings, a test notification, Web Push ----------------------------------------------


async def test_settings_list_masked_channels_and_offer_web_push_with_the_hosts_key(
    notify_host: LiveHost, answers: Answers, receiver: Receiver
) -> None:
    assert notify_host.channels is not None
    assert notify_host.channels.push_keys is not None
    key = notify_host.channels.push_keys.application_server_key
    (hook,) = notify_host.channels.configured
    settings = await answers.request("GET", "/api/notify")
    assert settings.status_code == 200
    assert settings.json() == {
        "channels": [{"id": hook.id, "label": hook.label, "service": "JSON"}],
        "push": {"available": True, "applicationServerKey": key},
    }
    assert f"127.0.0.1:{receiver.port}" in hook.label


async def test_a_test_notification_reaches_every_channel_and_says_what_happened(
    notify_host: LiveHost, answers: Answers, receiver: Receiver
) -> None:
    assert notify_host.channels is not None
    (hook,) = notify_host.channels.configured
    added = await answers.request(
        "POST",
        "/api/notify/push",
        json={"subscription": subscription(receiver.url("/push/device-1")), "userAgent": CHROME},
    )
    assert added.status_code == 201, added.text
    device = added.json()
    assert device["label"] == "Chrome on Linux"
    # The same endpoint again is the same subscription.
    again = await answers.request(
        "POST",
        "/api/notify/push",
        json={"subscription": subscription(receiver.url("/push/device-1")), "userAgent": CHROME},
    )
    assert (again.status_code, again.json()) == (201, device)
    # Without a userAgent the request's own names the device.
    gone = await answers.request(
        "POST",
        "/api/notify/push",
        json={"subscription": subscription(receiver.url("/push-gone/device-2"))},
        headers={"User-Agent": "Mozilla/5.0 (Windows NT 10.0) Firefox/140.0"},
    )
    assert gone.status_code == 201, gone.text
    assert gone.json()["label"] == "Firefox on Windows"
    listed = (await answers.request("GET", "/api/notify")).json()["channels"]
    assert [(c["id"], c["service"]) for c in listed] == [
        (hook.id, "JSON"),
        (device["id"], "Web Push"),
        (gone.json()["id"], "Web Push"),
    ]

    sent = await answers.request(
        "POST", "/api/notify/test", json={"title": ZH_TITLE, "body": ZH_BODY}
    )
    assert sent.status_code == 200, sent.text
    assert sent.json() == {
        "results": [
            {
                "id": hook.id,
                "label": hook.label,
                "service": "JSON",
                "status": "delivered",
                "reason": None,
            },
            {
                "id": device["id"],
                "label": "Chrome on Linux",
                "service": "Web Push",
                "status": "delivered",
                "reason": None,
            },
            {
                "id": gone.json()["id"],
                "label": "Firefox on Windows",
                "service": "Web Push",
                "status": "failed",
                "reason": sent.json()["results"][2]["reason"],
            },
        ]
    }
    assert "ended" in sent.json()["results"][2]["reason"]
    hooked = [json.loads(body) for path, body in receiver.requests if path.startswith("/hook")]
    assert [(m["title"], m["message"]) for m in hooked] == [(ZH_TITLE, ZH_BODY)]
    # The push service said that subscription has ended: it is no longer listed.
    listed = (await answers.request("GET", "/api/notify")).json()["channels"]
    assert [c["id"] for c in listed] == [hook.id, device["id"]]

    # Without words of its own the page gets the host's.
    default = await answers.request("POST", "/api/notify/test")
    assert [r["status"] for r in default.json()["results"]] == ["delivered", "delivered"]
    hooked = [json.loads(body) for path, body in receiver.requests if path.startswith("/hook")]
    assert (hooked[-1]["title"], hooked[-1]["message"]) == (TEST_TITLE, TEST_BODY)

    removed = await answers.request("DELETE", f"/api/notify/push/{device['id']}")
    assert (removed.status_code, removed.content) == (204, b"")
    again = await answers.request("DELETE", f"/api/notify/push/{device['id']}")
    _error(again, 404, "subscription_not_found")
    listed = (await answers.request("GET", "/api/notify")).json()["channels"]
    assert [c["id"] for c in listed] == [hook.id]
    sent = await answers.request("POST", "/api/notify/test", json={})
    assert [r["id"] for r in sent.json()["results"]] == [hook.id]


async def test_web_push_is_off_without_a_public_url(
    clock: ManualClock, tmp_path: Path, receiver: Receiver
) -> None:
    channels = Channels(
        parse_channels([_hook_url(receiver)]),
        push_folder=tmp_path / "webpush",
        allow_private=["127.0.0.1"],
    )
    channels.open_push()
    async with (
        LiveHost(backend=SQLiteBackend(tmp_path / "data"), clock=clock, channels=channels) as host,
        serve(host) as (_, client),
    ):
        checked = Answers(client)
        settings = await checked.request("GET", "/api/notify")
        assert settings.json()["push"] == {"available": False, "applicationServerKey": None}
        sub = subscription(receiver.url("/push/x"))
        refused = await checked.request("POST", "/api/notify/push", json={"subscription": sub})
        _error(refused, 409, "push_off")
        checked.assert_no_secret()


# -- notices ----------------------------------------------------------------------------------


async def test_notices_of_a_cold_session_are_read_from_the_outbox_without_loading_it(
    notify_host: LiveHost, answers: Answers, clock: ManualClock, receiver: Receiver
) -> None:
    assert notify_host.channels is not None
    assert notify_host.sender is not None
    (hook,) = notify_host.channels.configured
    session = (await notify_host.create_session()).session
    sid = session.id
    assert await notify_host.sessions.flush(session) is True
    await notify_host.close_session(sid)
    # No notice yet: an empty list (the Session exists), and it stays cold.
    empty = await answers.request("GET", f"/api/sessions/{sid}/notices")
    assert (empty.status_code, empty.json()) == (200, {"notices": []})
    assert notify_host.sessions.get(sid) is None

    stored = await notify_host.inspect(sid)
    assert stored is not None
    now = clock.now_ms()
    later = now + 3_600_000
    notice = Notice(title="Water the plants", body="the balcony ones", at_ms=now)
    await notify_host.backend.append(
        Write(
            sid,
            len(stored.events),
            [],
            outbox=[
                # Due now on the webhook and on a channel this host no longer has ...
                OutboxChange(
                    "schedule", f"r1@{OCCURRENCE}", notice, (hook.id, "n-0123456789ab"), now
                ),
                # ... and a re-notification due in an hour.
                OutboxChange("schedule", f"r1@{OCCURRENCE}#1", notice, (hook.id,), later),
            ],
        ),
    )
    notify_host.sender.kick()

    async def settled() -> list[dict[str, Any]] | None:
        response = await answers.request("GET", f"/api/sessions/{sid}/notices")
        assert response.status_code == 200, response.text
        notices: list[dict[str, Any]] = response.json()["notices"]
        return notices if [n["status"] for n in notices][:2] == ["delivered", "failed"] else None

    await wait_until(settled, timeout=WAIT)
    notices = await settled()
    assert notices is not None
    first, gone, pending = notices
    assert first == {
        "key": f"{sid}/schedule/r1@{OCCURRENCE}/{hook.id}",
        "channel": hook.id,
        "label": hook.label,
        "service": "JSON",
        "status": "delivered",
        "attempts": 1,
        "error": None,
        "updatedAt": first["updatedAt"],
    }
    assert gone == {
        "key": f"{sid}/schedule/r1@{OCCURRENCE}/n-0123456789ab",
        "channel": "n-0123456789ab",
        "label": GONE_LABEL,
        "service": None,
        "status": "failed",
        "attempts": 1,
        "error": "the channel is no longer configured",
        "updatedAt": gone["updatedAt"],
    }
    assert pending == {
        "key": f"{sid}/schedule/r1@{OCCURRENCE}#1/{hook.id}",
        "channel": hook.id,
        "label": hook.label,
        "service": "JSON",
        "status": "pending",
        "attempts": 0,
        "error": None,
        "updatedAt": iso_utc(later),
    }
    assert first["updatedAt"] == iso_utc(clock.now_ms())
    hooked = [json.loads(body) for path, body in receiver.requests if path.startswith("/hook")]
    link = f"http://127.0.0.1:8765/?session={sid}"
    assert [(m["title"], m["message"]) for m in hooked] == [
        ("Water the plants", f"the balcony ones\n\n{link}")
    ]
    # Reading notices never loaded the Session.
    assert notify_host.sessions.get(sid) is None
    assert notify_host.agents.for_session(sid) is None

    # A deleted Session takes its notices with it.
    assert (await answers.request("DELETE", f"/api/sessions/{sid}")).status_code == 200
    _error(await answers.request("GET", f"/api/sessions/{sid}/notices"), 404, "session_not_found")


async def test_a_live_session_without_notices_and_a_host_without_an_outbox_answer_an_empty_list(
    notify_host: LiveHost, answers: Answers, host: LiveHost, bare: httpx.AsyncClient
) -> None:
    live = (await notify_host.create_session()).session
    response = await answers.request("GET", f"/api/sessions/{live.id}/notices")
    assert (response.status_code, response.json()) == (200, {"notices": []})
    # A backend that keeps no outbox (the test double) has no notice for any Session.
    other = (await host.create_session()).session
    response = await bare.get(f"/api/sessions/{other.id}/notices")
    assert (response.status_code, response.json()) == (200, {"notices": []})
    _error(await bare.get("/api/sessions/no-such/notices"), 404, "session_not_found")


def test_instants_are_iso_utc_with_milliseconds() -> None:
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"
    assert iso_utc(1_785_931_260_007) == "2026-08-05T12:01:00.007Z"
