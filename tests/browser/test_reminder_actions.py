"""Done and Snooze on a delivered reminder, in Debian's Chromium against a real ``dsh serve``
that also sends each reminder to a webhook on 127.0.0.1.

The reminder card says where it was sent ("Sent to <channel>", from the Session's notices) and
offers Done and Snooze ▾: Done records the occurrence done ("Done ✓", the focus on it), a snooze
of 10 minutes creates a new pending reminder that snoozes it ("Snoozed until 18:10") and leaves
the delivered one as it was. The Reminders panel's deliveries offer the same, and the card and
the panel agree, also after a reload (both read what the Session recorded). Both languages; the
screens are checked with axe-core and saved under ``docs/screenshots/``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
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
from tests.notify.receivers import WebhookReceiver

pytestmark = pytest.mark.browser

ZONE = "Europe/Berlin"  # the page's zone (open_page); the reminders are asked for in it too
CARD = "section[role=note][data-schedule-reminder]"
PANEL = "[data-testid=panels] section[data-panel='schedule.reminders']"

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "stretch": ("remind me in 2 seconds to stretch", "stretch"),
        "plants": ("remind me in 3 seconds to water the plants", "water the plants"),
        "done": "Mark as done: {}",
        "snooze": "Snooze: {}",
        "tenMinutes": "10 minutes",
        "doneState": "Done ✓",
        "snoozed": re.compile(r"^Snoozed until \d\d:\d\d$"),
        "sent": "Sent to {}",
        "recent": "Recently delivered",
        "pendingIn": re.compile(r"^in (9|10) min$"),
        "acked": "Done: {}",
        "snoozedRow": re.compile(r"Snoozed: water the plants · until today \d\d:\d\d$"),
    },
    "zh": {
        "stretch": ("提醒我2秒后伸展一下", "伸展一下"),
        "plants": ("提醒我3秒后浇花", "浇花"),
        "done": "标记为完成：{}",  # noqa: RUF001
        "snooze": "推迟：{}",  # noqa: RUF001
        "tenMinutes": "10 分钟后",
        "doneState": "完成 ✓",
        "snoozed": re.compile(r"^已推迟到 \d\d:\d\d$"),
        "sent": "已发送到 {}",
        "recent": "最近送达",
        "pendingIn": re.compile(r"^(9|10) 分钟后$"),
        "acked": "已完成：{}",  # noqa: RUF001
        "snoozedRow": re.compile(r"已推迟：浇花 · 到 今天 \d\d:\d\d$"),  # noqa: RUF001
    },
}


@dataclass(frozen=True)
class Channel:
    server: Server
    hook: WebhookReceiver


@pytest.fixture
def channel(tmp_path) -> Iterator[Channel]:
    """``dsh serve`` sending each reminder to a webhook on 127.0.0.1 too."""
    with WebhookReceiver() as hook:
        running = start_server(
            tmp_path / "data", extra=["--notify", hook.url(), "--notify-allow-private", "127.0.0.1"]
        )
        try:
            yield Channel(running, hook)
        finally:
            running.close()
            shutil.rmtree(tmp_path / "data", ignore_errors=True)


def say(server: Server, sid: str, text: str) -> None:
    response = server.http.post(
        f"/api/sessions/{sid}/messages", json={"text": text, "timeZone": ZONE}
    )
    assert response.status_code == 202, response.text


def changes(server: Server, sid: str) -> list[dict[str, Any]]:
    """The Session's ``schedule/change`` payloads, in order."""
    return [
        entry["event"]["data"]
        for entry in history(server, sid)
        if entry["event"]["type"] == "schedule/change"
    ]


def created(server: Server, sid: str, prompt: str) -> dict[str, Any]:
    """The record of the first reminder created with ``prompt``."""
    return next(
        change["schedule"]
        for change in changes(server, sid)
        if change["operation"] == "create" and change["schedule"]["prompt"] == prompt
    )


def user_calls(server: Server, sid: str, tool: str) -> list[dict[str, Any]]:
    return [
        entry["event"]["data"]
        for entry in history(server, sid)
        if entry["event"]["type"] == "tool/call" and entry["event"]["data"]["name"] == tool
    ]


def recent_row(panel, text: str):
    return panel.locator(".schedule-panel-recent li", has_text=text)


# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "scheme"), [("desktop", "light"), ("phone", "dark")], ids=["desktop", "phone"]
)
@pytest.mark.parametrize("language", ["en", "zh"])
def test_done_and_snooze_from_the_card(
    browser, channel: Channel, language: str, size: str, scheme: str
) -> None:
    server, hook, w = channel.server, channel.hook, WORDS[language]
    sid = new_session(server)
    for text, _ in (w["stretch"], w["plants"]):
        say(server, sid, text)
    stretch, plants = w["stretch"][1], w["plants"][1]
    context, page, errors = open_page(browser, language, scheme, size)
    try:
        page.goto(f"{server.url}/?session={sid}")
        first = page.locator(CARD, has_text=stretch)
        second = page.locator(CARD, has_text=plants)
        expect(first).to_be_visible(timeout=20_000)
        expect(second).to_be_visible(timeout=20_000)

        # Where it was sent: the webhook took it, and the card says so by the channel's name.
        wait_for(lambda: len(hook.taken()) >= 2, timeout=20)
        notices = server.http.get(f"/api/sessions/{sid}/notices").json()["notices"]
        label = notices[0]["label"]  # the channel as the host shows it (secrets masked)
        expect(first.locator(".schedule-card-sent")).to_have_text(
            w["sent"].format(label), timeout=20_000
        )

        # Done: the occurrence is recorded done; the card says so and keeps the keyboard there.
        done = first.get_by_role("button", name=w["done"].format(stretch), exact=True)
        done.click()
        state = first.locator(".schedule-occurrence-state")
        expect(state).to_have_text(w["doneState"])
        expect(state).to_be_focused()
        expect(first.get_by_role("button")).to_have_count(0)
        parent = created(server, sid, stretch)
        occurrence = first.get_attribute("data-fold-at")
        acks = [c for c in changes(server, sid) if c["operation"] == "ack"]
        assert acks == [
            {"version": 1, "operation": "ack", "id": parent["id"], "occurrenceAt": occurrence}
        ]
        assert [c.get("source") for c in user_calls(server, sid, "schedule_ack")] == [
            {"kind": "user"}
        ]
        panel = page.locator(PANEL)
        if size == "phone":
            panel.get_by_test_id("panel-summary").click()
        expect(recent_row(panel, stretch).locator(".schedule-occurrence-state")).to_have_text(
            w["doneState"]
        )

        transcript = page.get_by_test_id("transcript")
        expect(transcript.get_by_text(w["acked"].format(stretch))).to_have_count(1)

        # Snooze 10 minutes: a new pending reminder stands for it; the delivered one is as it was.
        if size == "phone":
            panel.get_by_test_id("panel-summary").click()  # folded again: the cards show
        second.get_by_role("button", name=w["snooze"].format(plants), exact=True).click()
        ten = second.get_by_role("button", name=w["tenMinutes"], exact=True)
        expect(ten).to_be_focused()
        second.scroll_into_view_if_needed()
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"{size}-{scheme}-{language}-snooze-menu.png"))
        ten.click()
        snoozed = second.locator(".schedule-occurrence-state")
        expect(snoozed).to_have_text(w["snoozed"])
        expect(snoozed).to_be_focused()
        expect(transcript.get_by_text(w["snoozedRow"])).to_have_count(1)
        watered = created(server, sid, plants)
        snooze = next(
            c["schedule"]
            for c in changes(server, sid)
            if c["operation"] == "create" and "snoozedFrom" in c["schedule"]
        )
        assert snooze["snoozedFrom"] == {
            "id": watered["id"],
            "occurrenceAt": second.get_attribute("data-fold-at"),
        }
        assert snooze["kind"] == "at"
        assert snooze["prompt"] == plants
        touched = [
            c
            for c in changes(server, sid)
            if c["operation"] in ("update", "delete", "ack") and c["id"] == watered["id"]
        ]
        assert touched == [], "a snooze leaves the delivered reminder as it was"
        if size == "phone":
            panel.get_by_test_id("panel-summary").click()
        pending = panel.locator(f"li[data-schedule-id='{snooze['id']}']")
        expect(pending).to_contain_text(plants)
        expect(pending.locator("time[data-dsh-relative]")).to_have_text(w["pendingIn"])
        expect(recent_row(panel, plants).locator(".schedule-occurrence-state")).to_have_text(
            w["snoozed"]
        )
        assert [c.get("source") for c in user_calls(server, sid, "schedule_snooze")] == [
            {"kind": "user"}
        ]

        assert axe_violations(page) == []
        assert_no_developer_words(page, PRODUCT_WORDS[language], sid)
        if size == "phone":
            panel.get_by_test_id("panel-summary").click()
        second.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"{size}-{scheme}-{language}-done-snooze.png"))
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_done_from_the_panel(browser, tmp_path, language: str) -> None:
    w = WORDS[language]
    server = start_server(tmp_path / "data")
    context, page, errors = open_page(browser, language, "light", "desktop")
    try:
        sid = new_session(server)
        say(server, sid, w["stretch"][0])
        stretch = w["stretch"][1]
        page.goto(f"{server.url}/?session={sid}")
        card = page.locator(CARD, has_text=stretch)
        expect(card).to_be_visible(timeout=20_000)
        panel = page.locator(PANEL)
        row = recent_row(panel, stretch)
        expect(row).to_have_count(1)
        # The snooze menu opens and Escape closes it, the keyboard back on Snooze ▾.
        snooze = row.get_by_role("button", name=w["snooze"].format(stretch), exact=True)
        snooze.click()
        expect(snooze).to_have_attribute("aria-expanded", "true")
        expect(row.get_by_role("button", name=w["tenMinutes"], exact=True)).to_be_focused()
        page.keyboard.press("Escape")
        expect(row.get_by_role("button", name=w["tenMinutes"], exact=True)).to_have_count(0)
        expect(snooze).to_be_focused()

        row.get_by_role("button", name=w["done"].format(stretch), exact=True).click()
        state = row.locator(".schedule-occurrence-state")
        expect(state).to_have_text(w["doneState"])
        # The card agrees: it reads the ack the Session recorded.
        expect(card.locator(".schedule-occurrence-state")).to_have_text(w["doneState"])
        expect(card.get_by_role("button")).to_have_count(0)
        parent = created(server, sid, stretch)
        acks = [c for c in changes(server, sid) if c["operation"] == "ack"]
        assert [(a["id"], a["occurrenceAt"]) for a in acks] == [
            (parent["id"], card.get_attribute("data-fold-at"))
        ]
        # After a reload both still say so: the events and the view are what they read.
        page.reload()
        expect(card.locator(".schedule-occurrence-state")).to_have_text(
            w["doneState"], timeout=20_000
        )
        expect(row.locator(".schedule-occurrence-state")).to_have_text(w["doneState"])
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"desktop-light-{language}-done-panel.png"))
        assert errors == []
    finally:
        context.close()
        server.close()
        shutil.rmtree(tmp_path / "data", ignore_errors=True)
