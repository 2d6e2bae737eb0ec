"""A streamed answer appears progressively in Debian's Chromium (issue 12 items 2 and 3).

A real ``dsh serve`` runs the test plugin's ``gated-stream`` model adapter (a plugin's adapter,
offered through ``dsh_model_adapters`` and chosen with ``--model gated-stream``): it streams a
first piece, then waits for the test before streaming the rest and saying the whole text. The
browser runs in the Asia/Shanghai zone, and the adapter records the zone its turn was told.
The person can also press Stop while the answer streams (issue 23 item 2): the turn ends
``cancelled`` and nothing of it is kept.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.api import history, wait_for
from tests.browser.conftest import Page, Server, start_server
from tests.browser.streaming_plugin import FIRST, FULL, NAME

pytestmark = pytest.mark.browser

ZONE = "Asia/Shanghai"
DRAFT = "[data-testid=drafts] [data-kind=assistant-draft]"
ASSISTANT = "[data-testid=transcript] [data-kind=assistant]"


def publish_plugin(folder: Path) -> Path:
    """A ``*.dist-info`` publishing the streaming plugin as entry point ``streamtest``."""
    info = folder / "dshstreamtest-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dshstreamtest\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[dsh.plugins]\nstreamtest = tests.browser.streaming_plugin:StreamingPlugin\n"
    )
    return folder


@pytest.fixture
def control(tmp_path: Path) -> Path:
    folder = tmp_path / "control"
    folder.mkdir()
    return folder


@pytest.fixture
def streaming_server(tmp_path: Path, control: Path) -> Iterator[Server]:
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(f"[plugins.streamtest]\ncontrol = {json.dumps(str(control))}\n")
    inherited = os.environ.get("PYTHONPATH")
    plugin = publish_plugin(tmp_path / "plugin")
    env = {"PYTHONPATH": os.pathsep.join([str(plugin), *filter(None, [inherited])])}
    running = start_server(tmp_path / "data", model=NAME, overlay=overlay, env=env)
    try:
        yield running
    finally:
        running.close()
        shutil.rmtree(tmp_path / "data", ignore_errors=True)


@pytest.fixture
def shanghai_page(browser) -> Iterator[Page]:
    context = browser.new_context(locale="en-US", timezone_id=ZONE)
    try:
        yield Page(context.new_page())
    finally:
        context.close()


def turns(control: Path) -> list[dict[str, str | None]]:
    """What each turn of the adapter was told (one record per turn started)."""
    path = control / "turns.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def assistant_messages(server: Server, sid: str) -> list[str]:
    return [
        e["event"]["data"]["text"]
        for e in history(server, sid)
        if e["event"]["type"] == "assistant/message"
    ]


def open_new_session(page: Page, server: Server) -> str:
    """Create a Session from the page and wait until its event stream is attached."""
    p = page.page
    p.goto(server.url)
    p.get_by_test_id("new-session").click()
    expect(p.get_by_test_id("session-id")).not_to_have_text("")
    expect(p.get_by_test_id("status")).to_have_attribute("data-stream", "open")
    sid = p.get_by_test_id("session-id").text_content()
    assert sid
    return sid


def send(page: Page, text: str) -> None:
    p = page.page
    p.get_by_test_id("composer").fill(text)
    p.get_by_test_id("send").click()
    expect(p.get_by_test_id("composer")).to_have_value("")


def started_turn(control: Path, count: int) -> dict[str, str | None]:
    """The record of turn number ``count`` (1-based), once the adapter has started it."""
    return wait_for(lambda: turns(control)[count - 1 :])[0]


def test_a_streamed_answer_appears_progressively_then_lands_once(
    streaming_server: Server, shanghai_page: Page, control: Path
):
    p = shanghai_page.page
    sid = open_new_session(shanghai_page, streaming_server)
    send(shanghai_page, "tell me something")

    # The first piece is on screen, as text in a busy bubble, before any durable message.
    draft = p.locator(DRAFT)
    expect(draft).to_have_count(1)
    expect(draft).to_contain_text(FIRST)
    expect(draft).to_have_attribute("aria-busy", "true")
    expect(p.locator(ASSISTANT)).to_have_count(0)
    turn = started_turn(control, 1)
    assert assistant_messages(streaming_server, sid) == []  # still only streamed
    # The message the browser sent carried the browser's zone, and the turn was told it.
    assert turn["timeZone"] == ZONE

    (control / f"release-{turn['messageId']}").write_text("go")
    assistant = p.locator(ASSISTANT)
    expect(assistant).to_have_count(1)
    expect(assistant).to_contain_text(FULL)
    expect(draft).to_have_count(0)
    assert wait_for(lambda: assistant_messages(streaming_server, sid)) == [FULL]
    assert p.get_by_text(FULL).count() == 1  # exactly once on the page
    assert shanghai_page.errors == []
    assert shanghai_page.csp_violations() == []


def test_a_reload_mid_stream_shows_the_finished_message_when_it_lands(
    streaming_server: Server, shanghai_page: Page, control: Path
):
    p = shanghai_page.page
    sid = open_new_session(shanghai_page, streaming_server)
    send(shanghai_page, "tell me something")
    expect(p.locator(DRAFT)).to_contain_text(FIRST)
    turn = started_turn(control, 1)

    p.reload()
    expect(p.get_by_test_id("session-id")).to_have_text(sid)
    expect(p.get_by_test_id("status")).to_have_attribute("data-stream", "open")
    transcript = p.get_by_test_id("transcript")
    expect(transcript).to_contain_text("tell me something")  # history is back
    # The pieces already sent are never replayed: no half message after the reload.
    expect(p.locator(DRAFT)).to_have_count(0)
    expect(p.locator(ASSISTANT)).to_have_count(0)
    assert assistant_messages(streaming_server, sid) == []

    (control / f"release-{turn['messageId']}").write_text("go")
    assistant = p.locator(ASSISTANT)
    expect(assistant).to_have_count(1)
    expect(assistant).to_contain_text(FULL)
    expect(p.locator(DRAFT)).to_have_count(0)
    assert wait_for(lambda: assistant_messages(streaming_server, sid)) == [FULL]
    assert p.get_by_text(FULL).count() == 1
    assert shanghai_page.errors == []
    assert shanghai_page.csp_violations() == []


def test_stop_ends_a_streaming_turn_with_no_message_kept(
    streaming_server: Server, shanghai_page: Page, control: Path
):
    """Issue 23 item 2: the person presses Stop while the model streams; the turn ends
    ``cancelled``, shown as one quiet "Stopped" line, and nothing the model wrote is kept."""
    p = shanghai_page.page
    sid = open_new_session(shanghai_page, streaming_server)
    stop = p.get_by_role("button", name="Stop", exact=True)
    expect(stop).to_be_hidden()
    send(shanghai_page, "tell me something slowly")
    expect(p.locator(DRAFT)).to_contain_text(FIRST)
    started_turn(control, 1)  # the model is holding the turn, mid-stream

    expect(stop).to_be_visible()
    expect(stop).to_be_enabled()
    stop.click()

    stopped = p.locator("[data-testid=transcript] [data-kind=turn-cancelled]")
    expect(stopped).to_have_count(1)
    expect(stopped).to_have_text("Stopped")
    expect(stop).to_be_hidden()
    expect(p.locator(DRAFT)).to_have_count(0)
    expect(p.locator(ASSISTANT)).to_have_count(0)
    expect(p.get_by_test_id("transcript")).not_to_contain_text(FIRST)
    ends = [
        e["event"]["data"]
        for e in history(streaming_server, sid)
        if e["event"]["type"] == "turn/end"
    ]
    assert ends == [{"outcome": "cancelled"}]
    assert assistant_messages(streaming_server, sid) == []
    assert shanghai_page.errors == []
    assert shanghai_page.csp_violations() == []
