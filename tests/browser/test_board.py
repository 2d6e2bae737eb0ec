"""One place for every reminder, in Debian's Chromium against a real ``dsh serve`` (issue 25
item 3): "All reminders" beside the Session list lists every pending reminder on the host
soonest first, each with its Session as a link and Cancel (the same user action as the Reminders
panel: the row goes here and from its Session's panel); the start page shows what is coming up
and what was delivered while the page was closed (from the last-seen instant the page keeps);
a Session is deleted from its Details after a confirmation that names it and its pending
reminders, and the page returns to the start page without it.

The screens are checked with axe-core (no serious or critical finding) and saved under
``docs/screenshots/`` in both languages, light and dark, desktop and phone: All reminders, the
start page after time away, and a Session whose repeating reminder was delivered several times
(its cards collapse into "Delivered N times"). That Session is written before the server starts
by an in-process host on a manual clock (a repeat is at least 5 minutes apart), on the same
data folder.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.api import history, new_session, wait_for
from tests.browser.conftest import Server, start_server
from tests.browser.test_product import (
    SCREENSHOTS,
    assert_no_developer_words,
    axe_violations,
    open_page,
)
from tests.browser.test_product import WORDS as PRODUCT_WORDS
from tests.schedule.harness import boot_sqlite, settle_quiet

pytestmark = pytest.mark.browser

ZONE = "Europe/Berlin"
PANEL = "[data-testid=panels] section[data-panel='schedule.reminders']"
CARD = "section[role=note][data-schedule-reminder]"
LQ, RQ = "\u201c", "\u201d"  # the quotation marks the confirmation puts around a name

#: A reminder text too long for two lines on any screen (the board cuts it; its time shows).
LONG_EN = (
    "remind me in 5 hours to call the dentist about the filling, ask which documents to bring "
    "along, check whether the insurance card needs to be renewed before the visit, and book a "
    "cleaning for the whole family while you are at it"
)
LONG_ZH = (
    "提醒我5小时后给牙医打电话，问清楚补牙需要带哪些材料，顺便确认医保卡是否需要在就诊前更新，"  # noqa: RUF001
    "并把结果告诉家里人，另外问一下全家人的洗牙可不可以一起预约，如果可以就顺便约好，"  # noqa: RUF001
    "再问问停车方不方便"
)

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "groceries": "Groceries",
        "mom": ("remind me in 1 hour to call mom", "call mom"),
        "milk": ("remind me in 2 hours to buy milk", "buy milk"),
        "parcel": ("remind me in 3 hours to pick up the parcel", "pick up the parcel"),
        "tomorrow": ("remind me tomorrow at 9am to renew the passport", "renew the passport"),
        "long": (LONG_EN, "call the dentist about the filling"),
        "stretch": ("remind me in 2 seconds to stretch", "stretch"),
        "plants": ("remind me in 3 seconds to water the plants", "water the plants"),
        "repeating": ("every 5 minutes remind me to drink water", "drink water"),
        "all": "All reminders",
        "comingUp": "Coming up",
        "away": "While you were away: {} reminders",
        "awayOne": "While you were away: 1 reminder",
        "cancel": "Cancel reminder: {}",
        "none": re.compile(r"^No pending reminders"),
        "soon": re.compile(r"· in (59 min|1 h)$"),
        "delete": "Delete session",
        "confirm": "Delete",
        "keep": "Cancel",
        "question": f"Delete {LQ}{{}}{RQ}? Its 2 pending reminders will be deleted too.",
        "deleted": f"Deleted {LQ}{{}}{RQ}.",
        "drawer": "Show sessions",
        "repeats": re.compile(r"^Delivered \d+ times"),
        "locale": "en",
    },
    "zh": {
        "groceries": "买菜",
        "mom": ("提醒我1小时后给妈妈打电话", "给妈妈打电话"),
        "milk": ("提醒我2小时后买牛奶", "买牛奶"),
        "parcel": ("提醒我3小时后取快递", "取快递"),
        "tomorrow": ("明天上午9点提醒我续签护照", "续签护照"),
        "long": (LONG_ZH, "给牙医打电话"),
        "stretch": ("提醒我2秒后伸展一下", "伸展一下"),
        "plants": ("提醒我3秒后浇花", "浇花"),
        "repeating": ("每5分钟提醒我喝水", "喝水"),
        "all": "所有提醒",
        "comingUp": "即将到来",
        "away": "你不在时：{} 条提醒",  # noqa: RUF001
        "awayOne": "你不在时：1 条提醒",  # noqa: RUF001
        "cancel": "取消提醒：{}",  # noqa: RUF001
        "none": re.compile(r"^没有待办提醒"),
        "soon": re.compile(r"· (59 分钟|1 小时)后$"),
        "delete": "删除会话",
        "confirm": "删除",
        "keep": "取消",
        "question": f"删除{LQ}{{}}{RQ}？它的 2 条待办提醒也会一并删除。",  # noqa: RUF001
        "deleted": f"已删除{LQ}{{}}{RQ}。",
        "drawer": "显示会话",
        "repeats": re.compile(r"已送达 \d+ 次"),
        "locale": "zh",
    },
}


def now_ms() -> int:
    return int(time.time() * 1000)


def say(server: Server, sid: str, text: str) -> None:
    response = server.http.post(
        f"/api/sessions/{sid}/messages", json={"text": text, "timeZone": ZONE}
    )
    assert response.status_code == 202, response.text


def board(server: Server, kind: str) -> list[dict[str, Any]]:
    response = server.http.get("/api/board", params={"plugin": "schedule", "kind": kind})
    response.raise_for_status()
    return list(response.json()["rows"])


def delivered_after(server: Server, after: int) -> int:
    params = {"plugin": "schedule", "kind": "delivered", "after": after}
    response = server.http.get("/api/board/count", params=params)
    response.raise_for_status()
    return int(response.json()["count"])


def session_with(server: Server, *phrases: tuple[str, str], name: str | None = None) -> str:
    """A Session with a reminder per phrase, each on the board before this returns."""
    sid = new_session(server)
    if name is not None:
        renamed = server.http.post(f"/api/sessions/{sid}/name", json={"name": name})
        assert renamed.status_code == 200, renamed.text
    for text, _ in phrases:
        say(server, sid, text)
    texts = sorted(reminder for _, reminder in phrases)

    def posted() -> bool:
        rows = board(server, "pending") + board(server, "delivered")
        mine = [r["data"]["text"] for r in rows if r["sessionId"] == sid]
        return all(any(t.startswith(text) for t in mine) for text in texts)

    wait_for(posted)
    return sid


def session_name(server: Server, sid: str) -> str:
    rows = server.http.get("/api/sessions").json()["sessions"]
    return str(next(r for r in rows if r["id"] == sid)["name"])


def seen_before(page, last_seen: int) -> None:
    """The page's stored last-seen instant, as if it had been closed then (set before it loads)."""
    page.add_init_script(f"localStorage.setItem('dsh.lastSeen', {json.dumps(str(last_seen))});")


def run_async(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run a coroutine to completion on a loop of its own (Playwright's sync API owns this
    thread's)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(make())
        except BaseException as exc:  # handed to the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the in-process host did not finish"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


async def seed_repeating(data: Path, text: str) -> str:
    """A Session whose every-5-minutes reminder was delivered three times, the last a minute
    ago: written by an in-process host on a manual clock, then closed."""
    host, clock = await boot_sqlite(data, now_ms() - 16 * 60_000)
    try:
        agent = await host.create_session()
        agent.send(text, time_zone=ZONE)
        await settle_quiet(host)
        for _ in range(3):
            clock.advance(300)
            await settle_quiet(host)
        assert await host.sessions.flush(agent.session)
        return agent.session.id
    finally:
        await host.close()


def row_texts(scope) -> list[str]:
    return [text.strip() for text in scope.locator(".schedule-board-text").all_inner_texts()]


# ----------------------------------------------------------------------------------------------
# the whole flow, end to end


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_reminder_in_one_place(browser, server, language: str) -> None:
    w = WORDS[language]
    groceries = session_with(server, w["milk"], w["parcel"], name=w["groceries"])
    errands = session_with(server, w["mom"])
    errands_name = session_name(server, errands)
    before = now_ms()
    away = session_with(server, w["stretch"])
    wait_for(lambda: delivered_after(server, before) == 1)
    context, page, errors = open_page(browser, language, "light", "desktop")
    try:
        seen_before(page, before - 1000)
        page.goto(server.url)
        # The start page: what was delivered while the page was closed, then what is coming up.
        away_section = page.get_by_test_id("home-away")
        expect(away_section.get_by_role("heading")).to_have_text(w["awayOne"])
        expect(away_section.locator(".schedule-board-text")).to_have_text([w["stretch"][1]])
        expect(away_section.get_by_test_id("board-session-link")).to_have_text(
            [session_name(server, away)]
        )
        upcoming = page.get_by_test_id("home-upcoming")
        expect(upcoming.get_by_role("heading")).to_have_text(w["comingUp"])
        soonest = [w["mom"][1], w["milk"][1], w["parcel"][1]]
        expect(upcoming.locator(".schedule-board-text")).to_have_text(soonest)
        assert axe_violations(page) == []

        # All reminders: every pending reminder on the host, soonest first, each linked.
        page.get_by_test_id("board-entries").get_by_role("button", name=w["all"]).click()
        view = page.get_by_test_id("board-view")
        expect(view.get_by_role("heading", name=w["all"])).to_be_focused()
        rows = view.locator("li.board-row")
        expect(rows.locator(".schedule-board-text")).to_have_text(soonest)
        links = [errands_name, w["groceries"], w["groceries"]]
        expect(rows.get_by_test_id("board-session-link")).to_have_text(links)
        expect(rows.first.locator(".schedule-board-when")).to_have_text(w["soon"])
        # The address names the view: a reload shows it again.
        page.reload()
        expect(view.get_by_role("heading", name=w["all"])).to_be_visible()
        expect(rows.locator(".schedule-board-text")).to_have_text(soonest)
        assert axe_violations(page) == []
        assert_no_developer_words(page, PRODUCT_WORDS[language], errands)

        # Cancel there: the row goes, through the same user action as the panel.
        cancel = view.get_by_role("button", name=w["cancel"].format(w["mom"][1]), exact=True)
        cancel.click()
        expect(rows.locator(".schedule-board-text")).to_have_text(soonest[1:])
        calls = [
            e["event"]["data"]
            for e in history(server, errands)
            if e["event"]["type"] == "tool/call" and e["event"]["data"]["name"] == "schedule_delete"
        ]
        assert [call.get("source") for call in calls] == [{"kind": "user"}]
        wait_for(lambda: all(r["sessionId"] != errands for r in board(server, "pending")))
        # ... and from its Session's Reminders panel.
        page.locator(f"li[data-session-id='{errands}'] button").click()
        panel = page.locator(PANEL)
        expect(panel.locator("p.schedule-panel-empty", has_text=w["none"])).to_be_visible()

        # A row's link opens its Session.
        page.get_by_test_id("board-entries").get_by_role("button", name=w["all"]).click()
        rows.first.get_by_test_id("board-session-link").click()
        expect(page.get_by_test_id("session-name")).to_have_text(w["groceries"])
        expect(page.get_by_test_id("composer")).to_be_focused()
        expect(panel.locator("li[data-schedule-id]")).to_have_count(2)

        # Delete it: the confirmation names it and its reminders; Cancel and Escape keep it.
        page.get_by_test_id("session-details").locator("summary").click()
        delete = page.get_by_role("button", name=w["delete"], exact=True)
        delete.click()
        dialog = page.get_by_test_id("delete-dialog")
        expect(dialog).to_be_visible()
        expect(dialog.get_by_test_id("delete-text")).to_have_text(
            w["question"].format(w["groceries"])
        )
        expect(dialog.get_by_role("button", name=w["keep"], exact=True)).to_be_focused()
        assert axe_violations(page) == []
        dialog.get_by_role("button", name=w["keep"], exact=True).click()
        expect(dialog).to_be_hidden()
        expect(delete).to_be_focused()
        page.keyboard.press("Enter")
        expect(dialog).to_be_visible()
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        expect(delete).to_be_focused()
        assert server.http.get(f"/api/sessions/{groceries}/views").status_code == 200
        page.keyboard.press("Enter")
        dialog.get_by_role("button", name=w["confirm"], exact=True).click()
        # Deleted: the start page, the list without it, its reminders gone from the board.
        expect(dialog).to_be_hidden()
        expect(page.get_by_test_id("empty-state")).to_be_visible()
        expect(page.get_by_test_id("status")).to_have_text(w["deleted"].format(w["groceries"]))
        expect(page.locator(f"li[data-session-id='{groceries}']")).to_have_count(0)
        expect(page.locator(f"li[data-session-id='{errands}']")).to_have_count(1)
        expect(page.get_by_test_id("home-upcoming")).to_have_count(0)
        listed = [s["id"] for s in server.http.get("/api/sessions").json()["sessions"]]
        assert groceries not in listed
        assert board(server, "pending") == []
        assert server.http.get(f"/api/sessions/{groceries}/views").status_code == 404
        assert errors == []
    finally:
        context.close()


# ----------------------------------------------------------------------------------------------
# the screens, in both languages, light and dark, desktop and phone


@dataclass(frozen=True)
class Seeded:
    server: Server
    language: str
    repeating: str
    last_seen: int


@pytest.fixture(scope="module", params=["en", "zh"])
def seeded(request, tmp_path_factory) -> Iterator[Seeded]:
    """A host with reminders in several Sessions, two of them delivered after `last_seen`, and a
    Session whose repeating reminder was delivered three times."""
    w = WORDS[request.param]
    data = tmp_path_factory.mktemp(f"board-{request.param}") / "data"
    repeating = run_async(lambda: seed_repeating(data, w["repeating"][0]))
    server = start_server(data)
    try:
        session_with(server, w["milk"], w["tomorrow"], name=w["groceries"])
        session_with(server, w["mom"], w["long"])
        last_seen = now_ms()
        session_with(server, w["stretch"])
        session_with(server, w["plants"])
        wait_for(lambda: delivered_after(server, last_seen) == 2)
        yield Seeded(server, request.param, repeating, last_seen - 1000)
    finally:
        server.close()
        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screens(browser, seeded: Seeded, scheme: str, size: str) -> None:
    language, server = seeded.language, seeded.server
    w = WORDS[language]
    name = f"{size}-{scheme}-{language}"
    context, page, errors = open_page(browser, language, scheme, size)
    try:
        seen_before(page, seeded.last_seen)
        page.goto(server.url)
        # The start page after time away.
        away = page.get_by_test_id("home-away")
        expect(away.get_by_role("heading")).to_have_text(re.compile(w["away"].format(r"\d+")))
        for _, text in (w["stretch"], w["plants"]):
            expect(away.locator("li.board-row", has_text=text)).to_have_count(1)
        upcoming = page.get_by_test_id("home-upcoming")
        expect(upcoming.locator("li.board-row")).to_have_count(5)
        # A long text is cut; its time still shows.
        long_row = upcoming.locator("li.board-row", has_text=w["long"][1])
        long_row.scroll_into_view_if_needed()
        text = long_row.locator(".schedule-board-text")
        when = long_row.locator(".schedule-board-when time").first
        expect(when).to_be_in_viewport()
        clipped = text.evaluate("(e) => e.scrollHeight > e.clientHeight + 1")
        assert clipped, "a long reminder text is cut after two lines"
        text_box, when_box = text.bounding_box(), when.bounding_box()
        assert text_box is not None
        assert when_box is not None
        assert when_box["y"] >= text_box["y"] + text_box["height"] - 1
        page.get_by_test_id("transcript-scroll").evaluate("(e) => e.scrollTo(0, 0)")
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"{name}-start-away.png"))

        # All reminders (on a phone, from the drawer).
        if size == "phone":
            page.get_by_role("button", name=w["drawer"]).click()
        page.get_by_test_id("board-entries").get_by_role("button", name=w["all"]).click()
        view = page.get_by_test_id("board-view")
        expect(view.locator("li.board-row")).to_have_count(5)
        expect(view.get_by_role("heading", name=w["all"])).to_be_visible()
        # No row is wider than the screen.
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        assert not overflow
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"{name}-all-reminders.png"))

        # A Session with a repeating reminder delivered several times: one collapsed card.
        page.goto(f"{server.url}/?session={seeded.repeating}")
        card = page.locator(CARD, has_text=w["repeating"][1]).last
        expect(card).to_be_visible(timeout=10_000)
        repeats = card.locator("[data-fold-part=repeats] summary")
        expect(repeats).to_have_text(w["repeats"])
        expect(page.locator(f"[data-testid=transcript] {CARD}:visible")).to_have_count(1)
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"{name}-repeating.png"))
        assert errors == []
    finally:
        context.close()
