"""Calendar reminders in Debian's Chromium against a real ``dsh serve``: the Reminders panel says
each rule in the page's words ("Every weekday at 09:00 (Europe/Paris)", "每周一 10:00", "On day 1
of every month at 09:00"; the zone only when it is not the browser's), a reminder by its title
when it has one, and its next occurrence in the browser's zone. Edit opens a small form under a
pending reminder and saves through ``schedule_update`` as the user's action, with ``expected``
= the record the form showed: a weekly reminder gets a new time and another day; a time that
has passed is refused in plain words; a change made meanwhile elsewhere reloads the form with
what the reminder says now; saving nothing closes the form without a call. A daily reminder
delivered on three days shows each delivery's occurrence on its card.

The screens (the panel with the Edit form open, beside those cards) are checked with axe-core
(no serious or critical finding) and saved under ``docs/screenshots/`` as
``{desktop,phone}-{light,dark}-{en,zh}-calendar.png``. The delivered reminder is written before
the server starts by an in-process host on a manual clock, on the same data folder.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.api import history, new_session
from tests.browser.conftest import Server, start_server
from tests.browser.test_board import run_async
from tests.browser.test_product import SCREENSHOTS, axe_violations, open_page
from tests.schedule.harness import boot_sqlite, settle_quiet

pytestmark = pytest.mark.browser

#: The browser's zone (open_page) and the zone of most rules.
ZONE = "Europe/Berlin"
PARIS = "Europe/Paris"
PANEL = "[data-testid=panels] section[data-panel='schedule.reminders']"
CARD = "section[role=note][data-schedule-reminder]"

WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "standup": {
            "prompt": "Read the notes before the stand-up",
            "title": "Stand-up",
            "weekly": {"time": "09:00:00", "time_zone": PARIS, "weekdays": [1, 2, 3, 4, 5]},
        },
        "sync": {
            "prompt": "Team sync",
            "weekly": {"time": "10:00:00", "time_zone": ZONE, "weekdays": [1]},
        },
        "rent": {"prompt": "Pay the rent", "cron": {"expression": "0 9 1 * *", "time_zone": ZONE}},
        "lights": {"prompt": "Lights out", "daily": {"time": "22:00:00", "time_zone": ZONE}},
        "call": {"prompt": "Call mom", "after_seconds": 3 * 3600},
        "session": "Routines",
        "vitamins": "Take the vitamins",
        "lightsNow": "Lights out, phone away",
        "rules": {
            "standup": "Every weekday at 09:00 (Europe/Paris)",
            "sync": "Every Monday at 10:00",
            "rent": "On day 1 of every month at 09:00",
            "lights": "Every day at 22:00",
        },
        "edited": "Every Monday and Wednesday at 10:30",
        "edit": "Edit reminder: {}",
        "save": "Save",
        "close": "Close",
        "text": "Reminder text",
        "time": "Time",
        "date": "Date",
        "wednesday": "Wednesday",
        "past": "Not saved: That time has already passed.",
        "conflict": (
            "This reminder changed meanwhile (it may just have fired). Here is what it says now."
        ),
        "changed": re.compile(r"Reminder changed: Team sync · Every Monday and Wednesday at 10:30"),
        "due": re.compile(r"^Due (yesterday|today|\w{3} \d+ \w{3}) \d\d:\d\d$"),
    },
    "zh": {
        "standup": {
            "prompt": "开站会前看一下笔记",
            "title": "站会",
            "weekly": {"time": "09:00:00", "time_zone": PARIS, "weekdays": [1, 2, 3, 4, 5]},
        },
        "sync": {
            "prompt": "团队同步",
            "weekly": {"time": "10:00:00", "time_zone": ZONE, "weekdays": [1]},
        },
        "rent": {"prompt": "交房租", "cron": {"expression": "0 9 1 * *", "time_zone": ZONE}},
        "lights": {"prompt": "关灯睡觉", "daily": {"time": "22:00:00", "time_zone": ZONE}},
        "call": {"prompt": "给妈妈打电话", "after_seconds": 3 * 3600},
        "session": "日常安排",
        "vitamins": "吃维生素",
        "lightsNow": "关灯睡觉，手机放远",  # noqa: RUF001
        "rules": {
            "standup": "每个工作日 09:00（Europe/Paris）",  # noqa: RUF001
            "sync": "每周一 10:00",
            "rent": "每月 1 日 09:00",
            "lights": "每天 22:00",
        },
        "edited": "每周一、三 10:30",
        "edit": "编辑提醒：{}",  # noqa: RUF001
        "save": "保存",
        "close": "关闭",
        "text": "提醒内容",
        "time": "时间",
        "date": "日期",
        "wednesday": "周三",
        "past": "未保存：这个时间已经过去了。",  # noqa: RUF001
        "conflict": "这条提醒刚刚有了变化（可能刚刚送达）。下面是它现在的内容。",  # noqa: RUF001
        "changed": re.compile(r"已修改提醒：团队同步 · 每周一、三 10:30"),  # noqa: RUF001
        "due": re.compile(r"^到期 (昨天|今天|\d+月\d+日 周.) \d\d:\d\d$"),
    },
}


def user_tool(server: Server, sid: str, name: str, arguments: dict[str, Any]) -> Any:
    """Run a schedule tool as the user's action (as the panel does); its value."""
    response = server.http.post(f"/api/sessions/{sid}/tools/{name}", json={"arguments": arguments})
    assert response.status_code == 200, response.text
    return response.json()["value"]


def create(server: Server, sid: str, arguments: dict[str, Any]) -> dict[str, Any]:
    value = user_tool(server, sid, "schedule_create", arguments)
    assert "code" not in value, value
    return dict(value)


def update_calls(server: Server, sid: str) -> list[dict[str, Any]]:
    return [
        e["event"]["data"]
        for e in history(server, sid)
        if e["event"]["type"] == "tool/call" and e["event"]["data"]["name"] == "schedule_update"
    ]


def berlin_today() -> dt.date:
    return dt.datetime.now(ZoneInfo(ZONE)).date()


# ----------------------------------------------------------------------------------------------
# Edit, end to end


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_panel_says_rules_in_words_and_edit_changes_a_weekly_reminder(
    browser, server, language: str
) -> None:
    w = WORDS[language]
    sid = new_session(server)
    made = {
        key: create(server, sid, w[key]) for key in ("standup", "sync", "rent", "lights", "call")
    }
    context, page, errors = open_page(browser, language, "light", "desktop")
    try:
        page.goto(f"{server.url}/?session={sid}")
        panel = page.locator(PANEL)

        def row(key: str):
            return panel.locator(f"li[data-schedule-id='{made[key]['id']}']")

        def edit_button(key: str, name: str | None = None):
            label = w["edit"].format(name or w[key].get("title") or w[key]["prompt"])
            return row(key).get_by_role("button", name=label, exact=True)

        # Each rule in words; the zone only when it is not the browser's; the title first; the
        # next occurrence as its own instant.
        for key, rule in w["rules"].items():
            expect(row(key).locator(".schedule-panel-rule")).to_have_text(rule)
        expect(row("standup").locator(".schedule-panel-prompt")).to_have_text(w["standup"]["title"])
        expect(row("call").locator(".schedule-panel-rule")).to_have_count(0)
        for key in made:
            expect(row(key).locator("time")).to_have_attribute("datetime", made[key]["scheduledAt"])

        # Failures first. A one-time reminder moved to a day that has passed: plain words, the
        # form stays with what was typed; Close returns the focus to Edit.
        edit_button("call").click()
        form = row("call").locator("form")
        expect(form.get_by_label(w["text"], exact=True)).to_be_focused()
        yesterday = (berlin_today() - dt.timedelta(days=1)).isoformat()
        form.get_by_label(w["date"], exact=True).fill(yesterday)
        form.get_by_role("button", name=w["save"], exact=True).click()
        expect(form.locator(".schedule-edit-notice")).to_have_text(w["past"])
        expect(form.get_by_label(w["date"], exact=True)).to_have_value(yesterday)
        form.get_by_role("button", name=w["close"], exact=True).click()
        expect(form).to_have_count(0)
        expect(edit_button("call")).to_be_focused()

        # Changed elsewhere while the form was open: the row follows, the form keeps what was
        # typed over the record it showed; Save finds it changed and reloads what it says now.
        earlier = len(update_calls(server, sid))
        edit_button("lights").click()
        form = row("lights").locator("form")
        form.get_by_label(w["time"], exact=True).fill("21:00")
        lights = made["lights"]["id"]
        user_tool(server, sid, "schedule_update", {"id": lights, "prompt": w["lightsNow"]})
        expect(row("lights").locator(".schedule-panel-prompt")).to_have_text(w["lightsNow"])
        expect(form.get_by_label(w["time"], exact=True)).to_have_value("21:00")
        form.get_by_role("button", name=w["save"], exact=True).click()
        expect(form.locator(".schedule-edit-notice")).to_have_text(w["conflict"])
        expect(form.get_by_label(w["text"], exact=True)).to_have_value(w["lightsNow"])
        expect(form.get_by_label(w["time"], exact=True)).to_have_value("22:00")
        # The change from elsewhere sent no expectation; the form's sent the record it showed.
        calls = update_calls(server, sid)[earlier:]
        shown = [call["arguments"].get("expected") for call in calls]
        assert [record and record["prompt"] for record in shown] == [None, w["lights"]["prompt"]]
        form.get_by_label(w["time"], exact=True).press("Escape")
        expect(form).to_have_count(0)

        # Saving nothing closes the form without a call.
        before = len(update_calls(server, sid))
        edit_button("rent").click()
        row("rent").get_by_role("button", name=w["save"], exact=True).click()
        expect(row("rent").locator("form")).to_have_count(0)
        expect(edit_button("rent")).to_be_focused()
        assert len(update_calls(server, sid)) == before

        # A weekly reminder: a new time and another day. The form is checked as it shows.
        edit_button("sync").click()
        form = row("sync").locator("form")
        expect(form.get_by_label(w["time"], exact=True)).to_have_value("10:00")
        form.get_by_label(w["time"], exact=True).fill("10:30")
        form.get_by_label(w["wednesday"], exact=True).check()
        assert axe_violations(page) == []
        form.get_by_role("button", name=w["save"], exact=True).click()
        expect(row("sync").locator(".schedule-panel-rule")).to_have_text(w["edited"])
        expect(row("sync").locator("form")).to_have_count(0)
        expect(edit_button("sync")).to_be_focused()
        expect(page.get_by_test_id("transcript").get_by_text(w["changed"])).to_be_visible()
        call = update_calls(server, sid)[-1]
        assert call["source"] == {"kind": "user"}
        sync = made["sync"]
        assert call["arguments"] == {
            "id": sync["id"],
            "weekly": {"time": "10:30:00", "time_zone": ZONE, "weekdays": [1, 3]},
            "expected": {
                "id": sync["id"],
                "kind": "weekly",
                "prompt": w["sync"]["prompt"],
                "time": "10:00:00.000",
                "timeZone": ZONE,
                "weekdays": [1],
                "scheduledAt": sync["scheduledAt"],
            },
        }
        listed = user_tool(server, sid, "schedule_list", {})
        now = next(item for item in listed if item["id"] == sync["id"])
        assert (now["time"], now["weekdays"]) == ("10:30:00.000", [1, 3])
        expect(row("sync").locator("time")).to_have_attribute("datetime", now["scheduledAt"])
        assert errors == []
    finally:
        context.close()


# ----------------------------------------------------------------------------------------------
# the screens, in both languages, light and dark, desktop and phone


def daily_occurrences(now: dt.datetime) -> list[dt.datetime]:
    """Three days at the same local time in Berlin, the last an hour before ``now``."""
    last = (now - dt.timedelta(hours=1)).astimezone(ZoneInfo(ZONE)).replace(second=0, microsecond=0)
    days = [last.replace(tzinfo=None) - dt.timedelta(days=back) for back in (2, 1, 0)]
    return [day.replace(tzinfo=ZoneInfo(ZONE)) for day in days]


async def seed_daily(data: Path, text: str) -> tuple[str, str]:
    """A Session whose daily reminder was delivered on time on three days, the last an hour
    ago: written by an in-process host on a manual clock, then closed. Its id and the time."""
    occurrences = daily_occurrences(dt.datetime.now(dt.UTC))
    first_ms = int(occurrences[0].timestamp() * 1000)
    host, clock = await boot_sqlite(data, first_ms - 3_600_000)
    try:
        agent = await host.create_session()
        time_of_day = occurrences[0].strftime("%H:%M:00")
        _, value, _ = await agent.run_user_tool(
            "schedule_create",
            {"prompt": text, "daily": {"time": time_of_day, "time_zone": ZONE}},
        )
        assert isinstance(value, dict)
        assert value["scheduledAt"] == occurrences[0].astimezone(dt.UTC).strftime(
            "%Y-%m-%dT%H:%M:%S.000Z"
        )
        await settle_quiet(host)
        for occurrence in occurrences:
            clock.advance((occurrence.timestamp() * 1000 - clock.now_ms()) / 1000)
            await settle_quiet(host)
        assert await host.sessions.flush(agent.session)
        return agent.session.id, time_of_day[:5]
    finally:
        await host.close()


@dataclass(frozen=True)
class Seeded:
    server: Server
    language: str
    sid: str
    ids: dict[str, str]
    daily: str


@pytest.fixture(scope="module", params=["en", "zh"])
def seeded(request, tmp_path_factory) -> Iterator[Seeded]:
    w = WORDS[request.param]
    data = tmp_path_factory.mktemp(f"calendar-{request.param}") / "data"
    sid, daily = run_async(lambda: seed_daily(data, w["vitamins"]))
    server = start_server(data)
    try:
        renamed = server.http.post(f"/api/sessions/{sid}/name", json={"name": w["session"]})
        assert renamed.status_code == 200, renamed.text
        ids = {key: create(server, sid, w[key])["id"] for key in ("standup", "sync", "rent")}
        yield Seeded(server, request.param, sid, ids, daily)
    finally:
        server.close()
        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screens(browser, seeded: Seeded, scheme: str, size: str) -> None:
    w = WORDS[seeded.language]
    name = f"{size}-{scheme}-{seeded.language}"
    context, page, errors = open_page(browser, seeded.language, scheme, size)
    try:
        page.goto(f"{seeded.server.url}/?session={seeded.sid}")
        # The delivered daily reminder: its card says which occurrence it was.
        card = page.locator(CARD, has_text=w["vitamins"]).last
        expect(card).to_be_visible(timeout=10_000)
        expect(card.locator(".schedule-card-due")).to_have_text(w["due"])
        expect(card.locator(".schedule-card-due")).to_contain_text(seeded.daily)
        panel = page.locator(PANEL)
        if size == "phone":
            panel.get_by_test_id("panel-summary").click()
        rules = panel.locator(".schedule-panel-rule")
        expect(rules).to_have_count(4)
        for key in ("standup", "sync", "rent"):
            row = panel.locator(f"li[data-schedule-id='{seeded.ids[key]}']")
            expect(row.locator(".schedule-panel-rule")).to_have_text(w["rules"][key])
        # The Edit form of the weekly reminder, open.
        row = panel.locator(f"li[data-schedule-id='{seeded.ids['sync']}']")
        row.get_by_role("button", name=w["edit"].format(w["sync"]["prompt"]), exact=True).click()
        form = row.locator("form")
        expect(form.get_by_label(w["text"], exact=True)).to_be_focused()
        # In view: on a phone (a short panel) with its reminder's name and rule at the top.
        block = "start" if size == "phone" else "nearest"
        row.evaluate(f"(e) => e.scrollIntoView({{block: '{block}'}})")
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        assert not overflow
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"{name}-calendar.png"))
        assert errors == []
    finally:
        context.close()
