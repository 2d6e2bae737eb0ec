"""The JSON API, the page and its assets, over a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import strategies as st
from structlog.testing import capture_logs

from dsh_hookspecs import RendererAsset, hookimpl
from dsh_host import LiveHost
from dsh_host.persistence import MemoryBackend, StorageError
from dsh_host.testing import FaultInjectingBackend
from dsh_host.web import (
    ERROR_CODES,
    MAX_BODY_BYTES,
    Sidecar,
    WebConfigError,
    WebServer,
    create_app,
)

from .support import WAIT, FlushGate, Renderers, append, serve

#: Only the page's own scripts, styles and connections; no inline code, plugins, base or framing.
CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)


@pytest.fixture
async def client(web_host: LiveHost) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(web_host) as (_, http):
        yield http


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.json() == {
        "error": {"code": code, "message": response.json()["error"]["message"]}
    }
    assert isinstance(response.json()["error"]["message"], str)
    assert ERROR_CODES[code] == status


async def _create(client: httpx.AsyncClient) -> str:
    response = await client.post("/api/sessions", json={})
    assert response.status_code == 201
    return response.json()["id"]


# -- success shapes ---------------------------------------------------------------------------


async def test_create_list_fork_resume_flush_history_shapes(
    web_host: LiveHost, client: httpx.AsyncClient
):
    response = await client.post("/api/sessions", json={})
    assert response.status_code == 201
    assert response.headers["cache-control"] == "no-store"
    created = response.json()
    sid = created["id"]
    assert set(created) == {"id", "header"}
    assert created["header"] == {
        "version": 1,
        "id": sid,
        "createdAt": created["header"]["createdAt"],
    }
    assert web_host.agents.for_session(sid) is not None  # live with a root Agent

    session = web_host.sessions.get(sid)
    assert session is not None
    session.append("turn/start", {"messageId": "m"})
    session.append("user/message", {"text": "hi"})
    session.append("turn/end", {"outcome": "ok"})

    response = await client.post(f"/api/sessions/{sid}/fork", json={"boundary": 3})
    assert response.status_code == 201
    child = response.json()
    assert child["header"]["parentSession"] == sid
    assert child["header"]["seedLength"] == 3
    assert web_host.sessions.get(child["id"]) is not None
    # No body at all is the same as {} (the browser's flush and resume send none).
    response = await client.post(f"/api/sessions/{child['id']}/fork")
    assert response.status_code == 201
    assert response.json()["header"]["seedLength"] == 4  # seed + the child's end-seed

    listed = (await client.get("/api/sessions")).json()
    rows = {row["id"]: row for row in listed["sessions"]}
    assert rows[sid] == {"id": sid, "createdAt": created["header"]["createdAt"], "live": True}
    assert rows[child["id"]]["parentSession"] == sid

    response = await client.post(f"/api/sessions/{sid}/resume")
    assert response.json() == {"id": sid, "live": True}
    assert (await client.post(f"/api/sessions/{sid}/resume", json={})).json()["live"] is True

    response = await client.post(f"/api/sessions/{sid}/flush")
    assert response.json() == {"durable": True, "throughSeq": 3}

    response = await client.get(f"/api/sessions/{sid}/history")
    page = response.json()
    assert page["hasMore"] is False
    assert [e["event"]["type"] for e in page["entries"]] == [
        "turn/start",
        "user/message",
        "turn/end",
    ]
    assert page["entries"][1] == {"event": session.events[1].to_json()}


async def test_a_message_resumes_a_cold_session_and_runs_a_turn(
    web_host: LiveHost, client: httpx.AsyncClient
):
    sid = await _create(client)
    await web_host.close_session(sid)
    assert web_host.sessions.get(sid) is None
    response = await client.post(f"/api/sessions/{sid}/messages", json={"text": "hello"})
    assert response.status_code == 202
    assert response.json() == {"accepted": True}
    agent = web_host.agents.for_session(sid)
    assert agent is not None
    async with asyncio.timeout(WAIT):
        await agent.when_idle()
    types = [e.type for e in agent.session.events]
    assert types[:2] == ["turn/start", "user/message"]  # an empty stored log has no seed
    assert types[-1] == "turn/end"


async def test_flush_of_a_cold_session_reports_storage_without_activating(
    web_host: LiveHost, client: httpx.AsyncClient
):
    sid = await _create(client)
    session = web_host.sessions.get(sid)
    assert session is not None
    append(session, "a")
    await web_host.close_session(sid)
    response = await client.post(f"/api/sessions/{sid}/flush")
    assert response.json() == {"durable": True, "throughSeq": 1}
    assert web_host.sessions.get(sid) is None


async def test_flush_reports_an_unacknowledged_flush(
    web_host: LiveHost, gate: FlushGate, client: httpx.AsyncClient
):
    sid = await _create(client)
    gate.auto = "false"
    response = await client.post(f"/api/sessions/{sid}/flush")
    assert response.json() == {"durable": False, "throughSeq": 0}


# -- history paging ---------------------------------------------------------------------------


async def _conversation(web_host: LiveHost, client: httpx.AsyncClient, turns: int) -> str:
    sid = await _create(client)
    session = web_host.sessions.get(sid)
    assert session is not None
    for turn in range(turns):
        session.append("turn/start", {"messageId": str(turn)})
        session.append("user/message", {"text": f"q{turn}"})
        session.append("tool/call", {"callId": str(turn), "name": "t", "arguments": {}})
        session.append("assistant/message", {"text": f"a{turn}"})
        session.append("turn/end", {"outcome": "ok"})
    return sid


async def test_history_pages_walk_back_contiguously(web_host: LiveHost, client: httpx.AsyncClient):
    sid = await _conversation(web_host, client, turns=7)
    session = web_host.sessions.get(sid)
    assert session is not None
    pages: list[list[int]] = []
    before: int | None = None
    while True:
        query = (
            {"maxMessages": "3"} if before is None else {"maxMessages": "3", "beforeSeq": before}
        )
        page = (await client.get(f"/api/sessions/{sid}/history", params=query)).json()
        seqs = [e["event"]["seq"] for e in page["entries"]]
        assert seqs == list(range(seqs[0], seqs[-1] + 1))  # one contiguous raw range
        assert seqs[-1] + 1 == (len(session.events) if before is None else before)
        messages = [e for e in page["entries"] if e["event"]["type"].endswith("/message")]
        assert len(messages) <= 3
        assert page["hasMore"] is (seqs[0] > 0)
        if page["hasMore"]:
            assert len(messages) == 3
            assert page["entries"][0]["event"]["type"].endswith("/message")
        pages.append(seqs)
        if not page["hasMore"]:
            break
        before = seqs[0]
    assert sorted(seq for page in pages for seq in page) == list(range(len(session.events)))
    assert pages[0] == list(range(28, 35))  # a5, turn/end, turn/start, q6, call, a6, turn/end

    default = (await client.get(f"/api/sessions/{sid}/history")).json()
    assert len(default["entries"]) == 35  # 14 messages < the default 50
    assert (await client.get(f"/api/sessions/{sid}/history?beforeSeq=0")).json() == {
        "entries": [],
        "hasMore": False,
    }
    beyond = (await client.get(f"/api/sessions/{sid}/history?beforeSeq=999&maxMessages=1")).json()
    assert [e["event"]["seq"] for e in beyond["entries"]] == [33, 34]
    edge = (await client.get(f"/api/sessions/{sid}/history?maxMessages=500")).json()
    assert len(edge["entries"]) == 35


@pytest.mark.parametrize(
    "query",
    [
        "maxMessages=0",
        "maxMessages=501",
        "maxMessages=abc",
        "maxMessages=1.5",
        "maxMessages=true",
        "maxMessages=",
        "beforeSeq=-1",
        "beforeSeq=1e3",
        "beforeSeq=%EF%BC%91",  # a full-width digit: int() would take it, the API does not
        "beforeSeq=1&beforeSeq=2",
        "before=3",
        "maxMessages=5&x=1",
    ],
)
async def test_history_refuses_bad_queries(client: httpx.AsyncClient, query: str):
    sid = await _create(client)
    _error(await client.get(f"/api/sessions/{sid}/history?{query}"), 422, "invalid_query")


async def test_cold_history_does_not_activate_the_session(
    web_host: LiveHost, client: httpx.AsyncClient
):
    sid = await _conversation(web_host, client, turns=2)
    await web_host.close_session(sid)
    agents = len(web_host.agents.all())
    page = (await client.get(f"/api/sessions/{sid}/history?maxMessages=1")).json()
    assert [e["event"]["type"] for e in page["entries"]] == ["assistant/message", "turn/end"]
    assert page["hasMore"] is True
    assert web_host.sessions.get(sid) is None
    assert web_host.agents.for_session(sid) is None
    assert len(web_host.agents.all()) == agents


# -- errors -----------------------------------------------------------------------------------


async def test_unknown_sessions_are_404_everywhere(web_host: LiveHost, client: httpx.AsyncClient):
    for sid in ("0" * 32, "no-such", "x" * 200, "a b", "é"):
        for method, suffix, body in (
            ("POST", "/fork", {}),
            ("POST", "/resume", None),
            ("POST", "/messages", {"text": "hi"}),
            ("POST", "/flush", None),
            ("GET", "/history", None),
            ("GET", "/events", None),
        ):
            response = await client.request(method, f"/api/sessions/{sid}{suffix}", json=body)
            _error(response, 404, "session_not_found")
    assert web_host.sessions.live() == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{", "invalid_json"),
        (b'{"text": "a", "text": "b"}', "invalid_json"),
        (b'{"text": NaN}', "invalid_json"),
        (b'{"text": Infinity}', "invalid_json"),
        (b'{"text": "a"} {}', "invalid_json"),
        (b'{"text": "lone \\ud800 surrogate"}', "invalid_json"),  # storage could not encode it
        (b'{"text": "a", "n": 1' + b"0" * 4300 + b"}", "invalid_json"),  # past the int limit
        (b"\xff\xfe", "invalid_json"),
        (b"", "invalid_json"),
        (b"[]", "invalid_body"),
        (b'"text"', "invalid_body"),
        (b"{}", "missing_field"),
        (b'{"text": 5}', "invalid_field"),
        (b'{"text": null}', "invalid_field"),
        (b'{"text": "   "}', "invalid_field"),
        (b'{"text": "a", "extra": 1}', "unknown_field"),
    ],
)
async def test_message_bodies_are_strict(
    web_host: LiveHost, client: httpx.AsyncClient, body: bytes, code: str
):
    sid = await _create(client)
    session = web_host.sessions.get(sid)
    assert session is not None
    response = await client.post(
        f"/api/sessions/{sid}/messages", content=body, headers={"Content-Type": "application/json"}
    )
    _error(response, ERROR_CODES[code], code)
    assert len(session.events) == 0


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"boundary": True}, "invalid_field"),
        ({"boundary": 1.0}, "invalid_field"),
        ({"boundary": "1"}, "invalid_field"),
        ({"boundary": None}, "invalid_field"),
        ({"boundary": -1}, "invalid_boundary"),
        ({"boundary": 99}, "invalid_boundary"),
        ({"boundary": 2**70}, "invalid_boundary"),
        ({"boundary": 2}, "invalid_boundary"),  # inside the open turn
        ({"parent": 1}, "unknown_field"),
    ],
)
async def test_fork_boundaries_and_fields(
    web_host: LiveHost, client: httpx.AsyncClient, body: dict, code: str
):
    sid = await _create(client)
    session = web_host.sessions.get(sid)
    assert session is not None
    session.append("note", {})
    session.append("turn/start", {"messageId": "m"})
    session.append("user/message", {"text": "still running"})
    _error(await client.post(f"/api/sessions/{sid}/fork", json=body), 422, code)
    assert len(web_host.sessions.live()) == 1
    # The same refusals for a cold parent, which stays cold.
    await web_host.close_session(sid)
    _error(await client.post(f"/api/sessions/{sid}/fork", json=body), 422, code)
    assert web_host.sessions.live() == []
    # The whole log of a cold parent whose last turn was cut off (as by a crash) forks: the
    # resume closes the interrupted turn first.
    response = await client.post(f"/api/sessions/{sid}/fork", json={})
    assert response.status_code == 201, response.text
    parent = web_host.sessions.get(sid)
    assert parent is not None
    assert (parent.events[-1].type, parent.events[-1].data) == (
        "turn/end",
        {"outcome": "error", "error": "interrupted"},
    )
    assert response.json()["header"]["seedLength"] == len(parent.events)


async def test_other_bodies_take_no_fields(client: httpx.AsyncClient):
    sid = await _create(client)
    for path in ("/api/sessions", f"/api/sessions/{sid}/resume", f"/api/sessions/{sid}/flush"):
        _error(await client.post(path, json={"x": 1}), 422, "unknown_field")
        _error(await client.post(path, json=[]), 422, "invalid_body")
        _error(await client.post(path, content=b"{,}"), 400, "invalid_json")
        response = await client.post(path, content=b"{}", headers={"Content-Type": "text/plain"})
        _error(response, 415, "unsupported_media_type")
        _error(await client.post(f"{path}?x=1", json={}), 422, "invalid_query")


async def test_bodies_over_one_mebibyte_are_refused_while_read(
    web_host: LiveHost, client: httpx.AsyncClient
):
    sid = await _create(client)
    text = "x" * (MAX_BODY_BYTES - len('{"text":""}'))
    exact = json.dumps({"text": text}, separators=(",", ":")).encode()
    assert len(exact) == MAX_BODY_BYTES
    response = await client.post(
        f"/api/sessions/{sid}/messages", content=exact, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 202
    over = exact[:-2] + b'x"}'
    response = await client.post(
        f"/api/sessions/{sid}/messages", content=over, headers={"Content-Type": "application/json"}
    )
    _error(response, 413, "body_too_large")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted while read
        yield b'{"text":"'
        for _ in range(64):
            yield b"y" * 32768
        yield b'"}'

    response = await client.post(f"/api/sessions/{sid}/messages", content=chunks())
    _error(response, 413, "body_too_large")


async def test_routes_and_methods(client: httpx.AsyncClient):
    sid = await _create(client)
    for path in ("/api", "/api/", "/api/nothing", "/api/sessions/", "/x"):
        _error(await client.get(path), 404, "not_found")
    response = await client.get(f"/api/sessions/{sid}")  # a Session is deleted, never read, here
    _error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "DELETE"
    response = await client.delete("/api/sessions")
    _error(response, 405, "method_not_allowed")
    assert "POST" in response.headers["allow"]
    _error(await client.get(f"/api/sessions/{sid}/fork"), 405, "method_not_allowed")
    _error(await client.post(f"/api/sessions/{sid}/history"), 405, "method_not_allowed")
    _error(await client.put("/"), 405, "method_not_allowed")


async def test_storage_failures_are_503(
    web_host: LiveHost, backend: FaultInjectingBackend, client: httpx.AsyncClient
):
    sid = await _create(client)
    await web_host.close_session(sid)
    for method, suffix in (("GET", "/history"), ("POST", "/resume"), ("POST", "/flush")):
        backend.plan.fail_loads = 1
        _error(
            await client.request(method, f"/api/sessions/{sid}{suffix}"), 503, "storage_unavailable"
        )
    backend.plan.fail_appends = 1
    _error(await client.post("/api/sessions", json={}), 503, "storage_unavailable")


async def test_every_storage_failure_is_one_answer_naming_its_operation(
    web_host: LiveHost,
    backend: FaultInjectingBackend,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
):
    """Whichever route meets a storage failure, the client gets the same 503 body, naming the
    operation storage refused, and the operator one ``web.storage_failed`` line saying the same."""
    live = await _create(client)
    cold = await _create(client)
    await web_host.close_session(cold)

    def fail_loads() -> None:
        backend.plan.fail_loads = 1

    def fail_appends() -> None:
        backend.plan.fail_appends = 1

    def fail_live_flush() -> None:
        session = web_host.sessions.get(live)
        assert session is not None
        append(session, "pending")
        backend.plan.fail_appends = 1

    async def failing_list(**_: object) -> list[object]:
        raise StorageError("injected listing failure")

    def fail_list() -> None:
        monkeypatch.setattr(backend, "list_page", failing_list)

    cases = [
        ("list", "GET", "/api/sessions", fail_list),
        ("create", "POST", "/api/sessions", fail_appends),
        ("fork", "POST", f"/api/sessions/{cold}/fork", fail_loads),
        ("resume", "POST", f"/api/sessions/{cold}/resume", fail_loads),
        ("inspect", "POST", f"/api/sessions/{cold}/flush", fail_loads),
        ("flush", "POST", f"/api/sessions/{live}/flush", fail_live_flush),
        ("history", "GET", f"/api/sessions/{cold}/history", fail_loads),
        ("inspect", "GET", f"/api/sessions/{cold}/events", fail_loads),
    ]
    for operation, method, path, arrange in cases:
        arrange()
        with capture_logs() as logs:
            response = await client.request(method, path)
        monkeypatch.undo()
        assert response.status_code == 503, (operation, path, response.text)
        assert response.json() == {
            "error": {
                "code": "storage_unavailable",
                "message": f"storage is unavailable ({operation}); retry later",
            }
        }
        failed = [e for e in logs if e["event"] == "web.storage_failed"]
        assert [e["operation"] for e in failed] == [operation], (path, logs)


async def test_a_token_guards_the_api_but_not_the_page(web_host: LiveHost, tmp_path: Path):
    async with serve(web_host, token="tok-1") as (_, client):
        _error(await client.get("/api/sessions"), 401, "unauthorized")
        for value in ("Bearer tok-2", "Bearer tok-1x", "Basic tok-1", "tok-1", "Bearer"):
            response = await client.get("/api/sessions", headers={"Authorization": value})
            _error(response, 401, "unauthorized")
            assert response.headers["www-authenticate"] == "Bearer"
        _error(await client.get("/api/nothing"), 401, "unauthorized")  # before routing
        good = {"Authorization": "Bearer tok-1"}
        assert (await client.get("/api/sessions", headers=good)).status_code == 200
        assert (
            await client.get("/api/sessions", headers={"Authorization": "bearer tok-1"})
        ).status_code == 200
        # With a token, other origins are fine: they cannot know it.
        response = await client.get(
            "/api/sessions", headers={**good, "Origin": "http://elsewhere.example"}
        )
        assert response.status_code == 200
        assert (await client.get("/?token=tok-1")).status_code == 200
        assert (await client.get("/static/app.js")).status_code == 200


async def test_a_tokenless_server_refuses_other_origins_and_hosts(client: httpx.AsyncClient):
    own = str(client.base_url).rstrip("/")
    assert (await client.post("/api/sessions", json={}, headers={"Origin": own})).status_code == 201
    for origin in ("http://evil.example", "null", own.replace("http", "https"), own + "0"):
        response = await client.post("/api/sessions", json={}, headers={"Origin": origin})
        _error(response, 403, "forbidden_origin")
    response = await client.get("/api/sessions", headers={"Host": "rebound.example:80"})
    _error(response, 403, "forbidden_host")
    assert (await client.get("/api/sessions", headers={"Host": "localhost"})).status_code == 200


def test_binding_off_loopback_requires_a_token(web_host: LiveHost):
    with pytest.raises(WebConfigError, match="without a token"):
        WebServer(web_host, bind_host="0.0.0.0")
    with pytest.raises(WebConfigError):
        WebServer(web_host, bind_host="127.0.0.1", token="")
    WebServer(web_host, bind_host="0.0.0.0", token="t")
    WebServer(web_host, bind_host="::1")
    WebServer(web_host, bind_host="localhost")


@pytest.mark.parametrize("option", ["keepalive", "send_timeout", "body_timeout"])
def test_the_server_and_the_app_refuse_the_same_unusable_options(web_host: LiveHost, option: str):
    """One check serves both: a server refuses at construction what its app would refuse."""
    with pytest.raises(WebConfigError, match="must be positive"):
        WebServer(web_host, **{option: 0})
    sidecar = Sidecar(web_host.sessions, web_host.plugins)
    try:
        with pytest.raises(WebConfigError, match="must be positive"):
            create_app(web_host, sidecar=sidecar, **{option: 0})
        with pytest.raises(WebConfigError, match="token must be a non-empty string"):
            create_app(web_host, sidecar=sidecar, token="")
    finally:
        sidecar.close()


# -- the page and its assets --------------------------------------------------------------------


async def test_the_page_carries_the_renderer_config(web_host: LiveHost, tmp_path: Path):
    module = tmp_path / "row.js"
    module.write_text("export default function register(registry) {}\n")
    web_host.load_plugin("test-renderers", factory=lambda: Renderers(module))
    async with serve(web_host) as (_, client):
        for path in ("/", "/?session=abc&token=t"):
            response = await client.get(path)
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/html; charset=utf-8"
            assert response.headers["cache-control"] == "no-store"
            assert response.headers["referrer-policy"] == "no-referrer"
            assert response.headers["content-security-policy"] == CSP
        html = response.text
        assert "<!--DSH_CONFIG-->" not in html
        assert "</script><script>alert" not in html
        match = re.search(r'<script id="dsh-config" type="application/json">(.*?)</script>', html)
        assert match is not None
        config = json.loads(match.group(1))
        assert config == {
            "renderers": [
                {
                    "plugin": "test-renderers",
                    "url": "/plugins/test-renderers/row.js",
                    "eventTypes": ["test/presentable"],
                },
                {
                    "plugin": "test-renderers",
                    "url": "/plugins/test-renderers/evil.js",
                    "eventTypes": ["</script><script>alert(1)"],
                },
            ]
        }
        asset = await client.get("/plugins/test-renderers/row.js")
        assert asset.status_code == 200
        assert asset.headers["content-type"] == "text/javascript; charset=utf-8"
        assert asset.text == module.read_text()
        for path in (
            "/plugins/test-renderers/row",
            "/plugins/test-renderers/other.js",
            "/plugins/test-presenter/row.js",
            "/plugins/test-renderers/..%2F..%2Fetc%2Fpasswd.js",
        ):
            _error(await client.get(path), 404, "not_found")
        module.unlink()  # registered but gone: still a clean 404
        _error(await client.get("/plugins/test-renderers/row.js"), 404, "not_found")


class _Stylesheet:
    def __init__(self, path: Path) -> None:
        self.path = path

    @hookimpl
    def dsh_renderer_assets(self) -> list[RendererAsset]:
        return [RendererAsset(name="look", path=str(self.path))]


async def test_a_css_asset_is_linked_as_a_stylesheet_and_served_as_css_only(
    web_host: LiveHost, tmp_path: Path
):
    sheet = tmp_path / "look.css"
    sheet.write_text(".card { color: var(--fg); }\n")
    web_host.load_plugin("test-style", factory=lambda: _Stylesheet(sheet))
    async with serve(web_host) as (_, client):
        html = (await client.get("/")).text
        match = re.search(r'<script id="dsh-config" type="application/json">(.*?)</script>', html)
        assert match is not None
        assert json.loads(match.group(1))["renderers"] == [
            {
                "plugin": "test-style",
                "url": "/plugins/test-style/look.css",
                "eventTypes": [],
                "kind": "style",
            }
        ]
        asset = await client.get("/plugins/test-style/look.css")
        assert asset.status_code == 200
        assert asset.headers["content-type"] == "text/css; charset=utf-8"
        assert asset.text == sheet.read_text()
        # A stylesheet is never served as a module.
        _error(await client.get("/plugins/test-style/look.js"), 404, "not_found")


_STATIC_IMPORT = re.compile(r'^import [^;]*? from "\./([\w-]+\.js)";', re.MULTILINE)


async def test_every_module_the_page_imports_is_served_as_javascript(
    client: httpx.AsyncClient,
):
    """The browser client is ES modules without a build step: each one that app.js reaches
    through static imports is served from /static with a JavaScript type."""
    pending, seen = ["app.js"], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        response = await client.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"] == "text/javascript; charset=utf-8", name
        pending += _STATIC_IMPORT.findall(response.text)
    assert {"api.js", "render.js", "session-list.js", "session-view.js", "resume.js"} <= seen


async def test_static_files_have_types_and_no_traversal(client: httpx.AsyncClient):
    for path, content_type in (
        ("/static/app.js", "text/javascript; charset=utf-8"),
        ("/static/sse.js", "text/javascript; charset=utf-8"),
        ("/static/app.css", "text/css; charset=utf-8"),
        ("/static/index.html", "text/html; charset=utf-8"),
    ):
        response = await client.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"] == content_type
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["content-security-policy"] == CSP
    for path in (
        "/static/",
        "/static/missing.js",
        "/static/%2e%2e/_app.py",
        "/static/..%2f_app.py",
        "/static/.hidden",
        "/static/a//b.js",
        "/static/..%5c_app.py",
    ):
        _error(await client.get(path), 404, "not_found")


# -- arbitrary input --------------------------------------------------------------------------

_SEGMENTS = st.sampled_from(
    ["api", "sessions", "fork", "resume", "messages", "flush", "history", "events", "static",
     "plugins", "..", ".", "%2e%2e", "%00", "%ff", "x", "{known}", "{cold}", "{unknown}", ""]
)  # fmt: skip
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_BODIES = st.one_of(
    st.binary(max_size=64),
    _JSON.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({}, optional={"text": _JSON, "boundary": _JSON, "x": _JSON}).map(
        lambda v: json.dumps(v).encode()
    ),
    st.sampled_from([b"{", b'{"a":1,"a":2}', b"[NaN]", b'{"text":"\xff"}', b"\x00"]),
)
_QUERIES = st.lists(
    st.tuples(st.sampled_from(["beforeSeq", "maxMessages", "x", ""]), st.text(max_size=6)),
    max_size=3,
)
_HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "Content-Type": st.sampled_from(
            ["application/json", "text/plain", "application/x-www-form-urlencoded"]
        ),
        "Last-Event-ID": st.sampled_from(["", "-1", "x", "99999999999999999999", "1.5"]),
    },
)


_LIVE_ENDPOINTS = {"fork", "resume", "messages", "flush"}


def _valid(method: str, segments: list[str], body: bytes, query: list, headers: dict) -> bool:
    """Could this request legitimately succeed and change something? Those are skipped."""
    if (
        method != "POST"
        or query
        or headers.get("Content-Type", "application/json") != ("application/json")
    ):
        return False
    try:
        value = json.loads(body) if body else {}
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    if segments == ["api", "sessions"]:
        return not value
    return (
        len(segments) == 4
        and segments[:2] == ["api", "sessions"]
        and segments[2] in ("{known}", "{cold}")
        and segments[3] in _LIVE_ENDPOINTS
    )


def _streams(method: str, segments: list[str], query: list, headers: dict) -> bool:
    """A GET that would open an endless event stream (those are tested in test_sse)."""
    return (
        method == "GET"
        and len(segments) == 4
        and segments[:2] == ["api", "sessions"]
        and segments[2] in ("{known}", "{cold}")
        and segments[3] == "events"
        and not query
        and headers.get("Last-Event-ID", "") == ""
    )


def _snapshot(host: LiveHost, backend: MemoryBackend) -> object:
    live = {s.id: len(s.events) for s in host.sessions.live()}
    stored = {sid: len(entry.events) for sid, entry in backend._sessions.items()}
    return live, stored, len(host.agents.all())


# The arbitrary-request fuzz over these strategies lives in tests/reliability/test_bad_input.py
# (test_any_request_is_answered_below_500_and_changes_nothing), with the Schedule plugins loaded.


async def test_an_event_a_plugin_refuses_is_409_not_500(
    web_host: LiveHost, client: httpx.AsyncClient
):
    from dsh_hookspecs import hookimpl

    class Refuser:
        @hookimpl
        def dsh_event_validate(self, session, event):
            if event.type == "session/end-seed":
                raise ValueError("no seeds here")

    sid = await _create(client)
    session = web_host.sessions.get(sid)
    assert session is not None
    append(session, "a")
    web_host.load_plugin("refuser", factory=Refuser)
    _error(await client.post(f"/api/sessions/{sid}/fork", json={}), 409, "event_rejected")
    await web_host.close_session(sid)
    _error(await client.post(f"/api/sessions/{sid}/resume"), 409, "event_rejected")


async def test_a_create_answered_503_leaves_no_ghost_and_retries_make_no_duplicates(
    web_host: LiveHost, backend: FaultInjectingBackend, client: httpx.AsyncClient
):
    parent = await _create(client)
    backend.plan.fail_appends = 2
    for _ in range(2):  # the storage fails; the user retries once
        _error(await client.post("/api/sessions", json={}), 503, "storage_unavailable")
    backend.plan.fail_appends = 1
    _error(await client.post(f"/api/sessions/{parent}/fork", json={}), 503, "storage_unavailable")
    listed = (await client.get("/api/sessions")).json()["sessions"]
    assert [row["id"] for row in listed] == [parent]
    assert len(web_host.agents.all()) == 1
    child = await _create(client)  # storage recovered
    listed = (await client.get("/api/sessions")).json()["sessions"]
    assert sorted(row["id"] for row in listed) == sorted([parent, child])


@pytest.mark.parametrize(
    "value",
    ["[::1]evil.example", "[::1]:80evil", "127.0.0.1:80:80", "localhost:x", "[::1", "a b", ""],
)
async def test_the_host_header_is_parsed_strictly(client: httpx.AsyncClient, value: str):
    _error(await client.get("/api/sessions", headers={"Host": value}), 403, "forbidden_host")


async def test_well_formed_loopback_hosts_pass(client: httpx.AsyncClient):
    for value in ("[::1]", "[::1]:8080", "127.0.0.1:1", "LOCALHOST"):
        assert (await client.get("/api/sessions", headers={"Host": value})).status_code == 200


@pytest.mark.parametrize(
    "request_bytes",
    [b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"],
)
async def test_malformed_requests_get_a_json_400(web_host: LiveHost, request_bytes: bytes):
    async with serve(web_host) as (server, _):
        assert server.url is not None
        reader, writer = await asyncio.open_connection("127.0.0.1", server.url.rsplit(":", 1)[1])
        try:
            writer.write(request_bytes)
            await writer.drain()
            async with asyncio.timeout(WAIT):
                answer = await reader.read()  # the connection is closed after the answer
        finally:
            writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 "), head
        assert b"content-type: application/json" in head.lower()
        assert b"x-content-type-options: nosniff" in head.lower()
        assert b"content-security-policy: " + CSP.encode() in head.lower()
        error = json.loads(body)["error"]
        assert error["code"] == "bad_request"
        assert isinstance(error["message"], str)


async def test_history_pages_of_a_live_session_prove_the_stored_prefix_once(
    web_host: LiveHost, backend: FaultInjectingBackend, client: httpx.AsyncClient
):
    sid = await _create(client)
    session = web_host.sessions.get(sid)
    assert session is not None
    for index in range(12):
        session.append("user/message", {"text": f"m{index}"})
        append(session, str(index))
    assert (await client.post(f"/api/sessions/{sid}/flush")).json()["durable"] is True
    loads: list[str] = []
    inner_load = backend.load

    async def counting_load(session_id: str) -> object:
        loads.append(session_id)
        return await inner_load(session_id)

    backend.load = counting_load  # type: ignore[method-assign]
    views = []
    before = ""
    for _ in range(4):
        page = (await client.get(f"/api/sessions/{sid}/history?maxMessages=3{before}")).json()
        views += [entry.get("view") for entry in page["entries"]]
        before = f"&beforeSeq={page['entries'][0]['event']['seq']}"
    assert loads == [sid]  # one proof, not one per page
    assert sum(view is not None for view in views) == 12  # every presentable event, once


async def test_a_body_that_never_ends_is_answered_408_and_closed(web_host: LiveHost):
    body_timeout = 0.3
    async with serve(web_host, body_timeout=body_timeout) as (server, _):
        assert server.url is not None
        reader, writer = await asyncio.open_connection("127.0.0.1", server.url.rsplit(":", 1)[1])
        try:
            writer.write(
                b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a": 1,  '
            )
            await writer.drain()
            started = time.monotonic()
            async with asyncio.timeout(WAIT):
                answer = await reader.read()  # then stall: the server must end it
            assert time.monotonic() - started < body_timeout + 2.0
        finally:
            writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), head
        assert json.loads(body)["error"]["code"] == "request_timeout"
        assert (await _list(server)) == []  # nothing was created


async def _list(server: WebServer) -> list[object]:
    async with httpx.AsyncClient(base_url=server.url or "", timeout=WAIT) as client:
        return (await client.get("/api/sessions")).json()["sessions"]
