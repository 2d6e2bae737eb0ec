"""The product face in Debian's Chromium (issue 13 proof): the main flow in English and Chinese,
light and dark, desktop and phone; a background tab's notification and title count; keyboard-only
create and cancel; axe-core on every combination. The lane saves its screenshots under
``docs/screenshots/`` (the README shows them).

Main flow: type a reminder due in a few seconds and one due in ten minutes; watch the first
one's countdown tick in the Reminders panel; its card arrives (the follow-up is one collapsed
line, never a user bubble with the framing); cancel the other from the panel: the panel drops
it and the transcript says "Reminder cancelled".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.api import history, wait_for

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
AXE = ROOT / "tests" / "browser" / "vendor" / "axe-core" / "axe.min.js"
CARD = "section[role=note][data-schedule-reminder]"
PANEL = "[data-testid=panels] section[data-panel='schedule.reminders']"
FRAMING = "[SCHEDULE REMINDER]"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}

WORDS = {
    "en": {
        "locale": "en-US",
        "soon": ("remind me in 4 seconds to check the deploy", "check the deploy"),
        "later": ("remind me to stretch in 10 minutes", "stretch"),
        "title": "Reminders",
        "cancel": "Cancel reminder: {}",
        "cancelled": "Reminder cancelled",
        "handed": "Reminder handed to the assistant",
        "none": re.compile(r"^No pending reminders"),
        "drawer": "Show sessions",
    },
    "zh": {
        "locale": "zh-CN",
        "soon": ("提醒我4秒后检查部署", "检查部署"),
        "later": ("提醒我10分钟后伸展一下", "伸展一下"),
        "title": "提醒",
        "cancel": "取消提醒：{}",
        "cancelled": "已取消提醒",
        "handed": "提醒已交给助手",
        "none": re.compile(r"^没有待办提醒"),
        "drawer": "显示会话",
    },
}


def open_page(browser, language: str, scheme: str, size: str, **options):
    context = browser.new_context(
        locale=WORDS[language]["locale"],
        color_scheme=scheme,
        viewport=SIZES[size],
        timezone_id="Europe/Berlin",
        **options,
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on(
        "console",
        lambda msg: (
            errors.append(f"{msg.type}: {msg.text}") if msg.type in ("error", "warning") else None
        ),
    )
    return context, page, errors


def send(page, text: str) -> None:
    composer = page.get_by_test_id("composer")
    composer.fill(text)
    composer.press("Enter")
    expect(composer).to_have_value("")


def axe_violations(page) -> list[dict[str, object]]:
    """axe-core's serious and critical findings on the page as it is (run through the
    DevTools protocol, so the page's Content-Security-Policy stays as it is)."""
    page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        """async () => {
          const result = await axe.run(document, { resultTypes: ["violations"] });
          return result.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target) }));
        }"""
    )
    return list(found)


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_main_flow(browser, server, language: str, scheme: str, size: str) -> None:
    words = WORDS[language]
    context, page, errors = open_page(browser, language, scheme, size)
    try:
        page.goto(server.url)
        # No session yet: the empty state offers examples; typing starts a session.
        expect(page.get_by_test_id("empty-state")).to_be_visible()
        expect(page.get_by_test_id("examples").locator("button")).to_have_count(3)
        soon_text, soon = words["soon"]
        later_text, later = words["later"]
        send(page, soon_text)
        send(page, later_text)
        panel = page.locator(PANEL)
        expect(panel).to_be_visible()
        expect(panel.get_by_role("heading", name=words["title"], exact=True)).to_be_visible()
        # The due-soon reminder's countdown ticks ("in 4 s", "in 3 s", ...).
        soon_row = panel.locator("li[data-schedule-id]", has_text=soon)  # a pending row
        countdown = soon_row.locator("time[data-dsh-relative]")
        first = countdown.inner_text(timeout=10_000)
        wait_for(lambda: countdown.inner_text() != first, timeout=10)
        # Its card arrives; the follow-up is one collapsed line, not a user bubble.
        card = page.locator(CARD, has_text=soon)
        expect(card).to_be_visible(timeout=20_000)
        expect(card.locator(".schedule-reminder-prompt")).to_have_text(soon)
        handed = page.get_by_text(words["handed"], exact=True)
        expect(handed.first).to_be_visible()
        assert page.locator("[data-testid=transcript] details[open]").count() == 0
        bubbles = page.locator("[data-testid=transcript] [data-kind=user]").all_inner_texts()
        assert bubbles, "the typed messages are user bubbles"
        assert not any(FRAMING in text for text in bubbles)
        expect(soon_row).to_have_count(0)  # delivered: no longer pending ...
        expect(panel.locator(".schedule-panel-recent li", has_text=soon)).to_have_count(1)
        # Cancel the other one from the panel: the panel and the transcript agree.
        cancel = panel.get_by_role("button", name=words["cancel"].format(later), exact=True)
        expect(cancel).to_be_visible()
        page.screenshot(path=str(SCREENSHOTS / f"{size}-{scheme}-{language}.png"))
        cancel.click()
        expect(panel.get_by_role("button", name=words["cancel"].format(later))).to_have_count(0)
        expect(panel.get_by_text(words["none"])).to_be_visible()
        expect(page.get_by_test_id("transcript").get_by_text(words["cancelled"])).to_be_visible()
        sid = page.get_by_test_id("session-id").inner_text()
        calls = [
            e["event"]["data"]
            for e in history(server, sid)
            if e["event"]["type"] == "tool/call" and e["event"]["data"]["name"] == "schedule_delete"
        ]
        assert [call.get("source") for call in calls] == [{"kind": "user"}]
        if size == "phone":
            # The session list is a drawer: shown on demand, over the conversation.
            page.get_by_role("button", name=words["drawer"]).click()
            expect(page.get_by_test_id("sessions")).to_be_visible()
            expect(page.get_by_test_id("session-list")).to_contain_text(soon_text[:12])
            page.get_by_test_id("drawer-backdrop").click()
            expect(page.get_by_test_id("drawer-backdrop")).to_be_hidden()
        assert axe_violations(page) == []
        assert errors == []
    finally:
        context.close()


NOTIFICATION_SPY = """
(() => {
  window.__asked = 0;
  window.__notes = [];
  const Real = window.Notification;
  if (typeof Real !== "function") return;
  const ask = Real.requestPermission.bind(Real);
  class Spy extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notes.push({ title, body: options && options.body });
    }
  }
  Spy.requestPermission = (...args) => {
    window.__asked += 1;
    return ask(...args);
  };
  window.Notification = Spy;
})();
"""

HIDE = """(hidden) => {
  const state = hidden ? "hidden" : "visible";
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def test_a_card_arriving_in_a_hidden_tab_raises_a_notification_and_the_title_count(
    browser, server
) -> None:
    # Permission is asked on a click, never on load.
    context, page, errors = open_page(browser, "en", "light", "desktop")
    try:
        page.add_init_script(NOTIFICATION_SPY)
        page.goto(server.url)
        enable = page.get_by_test_id("enable-notifications")
        expect(enable).to_be_visible()
        assert page.evaluate("window.__asked") == 0
        enable.click()
        wait_for(lambda: page.evaluate("window.__asked") == 1, timeout=5)
    finally:
        context.close()
    # Granted through the browser context: a card that lands while the tab is hidden notifies.
    context, page, errors = open_page(browser, "en", "light", "desktop")
    try:
        context.grant_permissions(["notifications"], origin=server.url)
        page.add_init_script(NOTIFICATION_SPY)
        page.goto(server.url)
        send(page, "remind me in 3 seconds to water the plants")
        expect(page.locator(PANEL)).to_contain_text("water the plants")
        page.evaluate(HIDE, True)
        wait_for(lambda: page.evaluate("window.__notes").__len__() == 1, timeout=20)
        assert page.evaluate("window.__notes") == [
            {"title": "Reminder", "body": "water the plants"}
        ]
        assert page.title() == "(1) dsh"
        page.evaluate(HIDE, False)
        wait_for(lambda: page.title() == "dsh", timeout=5)
        assert errors == []
    finally:
        context.close()


def test_keyboard_only_create_and_cancel(browser, server) -> None:
    context, page, errors = open_page(browser, "en", "light", "desktop")
    try:
        page.goto(server.url)

        def tab_to(predicate: str, limit: int = 40) -> None:
            for _ in range(limit):
                page.keyboard.press("Tab")
                if page.evaluate(predicate):
                    return
            raise AssertionError(f"Tab never reached {predicate}")

        tab_to("document.activeElement?.dataset?.testid === 'composer'")
        page.keyboard.type("remind me to call mom in 10 minutes")
        page.keyboard.press("Enter")
        panel = page.locator(PANEL)
        expect(panel).to_contain_text("call mom")
        tab_to("document.activeElement?.getAttribute('aria-label') === 'Cancel reminder: call mom'")
        page.keyboard.press("Enter")
        expect(panel.get_by_text(WORDS["en"]["none"])).to_be_visible()
        expect(page.get_by_test_id("transcript").get_by_text("Reminder cancelled")).to_be_visible()
        # Focus stayed somewhere sensible (the page, not lost with the removed button).
        assert page.evaluate("document.activeElement !== null")
        sid = page.get_by_test_id("session-id").inner_text()
        deletes = [e for e in history(server, sid) if e["event"]["type"] == "tool/result"]
        assert json.dumps(deletes[-1]["event"]["data"]["value"]).count('"deleted": true') == 1
        assert errors == []
    finally:
        context.close()
