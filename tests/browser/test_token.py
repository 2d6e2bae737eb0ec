"""A token-protected server in Debian's Chromium (issue 23 item 5): the page opened as
``/?token=T&session=ID`` keeps the token for the tab, takes it out of the address bar (the
Session and the hash stay), and signs every API call with it, also after a reload."""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import expect

from tests.api import new_session, wait_for

from .conftest import start_server

pytestmark = pytest.mark.browser

TOKEN = "a-token-kept-for-this-tab-only-0123456789"


def _typed(server, sid: str) -> list[str]:
    entries = server.http.get(f"/api/sessions/{sid}/history").json()["entries"]
    return [e["event"]["data"]["text"] for e in entries if e["event"]["type"] == "user/message"]


def _say(page, text: str) -> None:
    composer = page.get_by_test_id("composer")
    composer.fill(text)
    composer.press("Enter")
    expect(page.get_by_test_id("transcript")).to_contain_text(text)


def test_the_token_leaves_the_address_bar_and_the_tab_stays_signed_in(tmp_path, page) -> None:
    server = start_server(tmp_path / "data", extra=["--token", TOKEN])
    try:
        assert server.http.get("/api/sessions").status_code == 401
        server.http.headers["Authorization"] = f"Bearer {TOKEN}"
        sid = new_session(server)
        said = server.http.post(f"/api/sessions/{sid}/messages", json={"text": "first words"})
        assert said.status_code == 202
        cleaned = f"{server.url}/?session={sid}#latest"
        p = page.page
        p.goto(f"{server.url}/?token={TOKEN}&session={sid}#latest")
        transcript = p.get_by_test_id("transcript")
        expect(transcript).to_contain_text("first words")  # the Session opened
        # Fails before the fix: the address bar kept ?token= (and so did the history entry).
        assert p.evaluate("location.href") == cleaned
        assert p.evaluate("sessionStorage.getItem('dsh.token')") == TOKEN
        _say(p, "sent after the token left the URL")  # an API call still signed in
        p.reload()
        assert p.evaluate("location.href") == cleaned
        expect(transcript).to_contain_text("sent after the token left the URL")
        _say(p, "sent after a reload")
        wait_for(lambda: _typed(server, sid)[-1:] == ["sent after a reload"])
        assert page.errors == []
    finally:
        server.close()
        shutil.rmtree(tmp_path / "data", ignore_errors=True)
