"""The product face in Debian's Chromium (issue 13 proof): the main flow in English and Chinese,
light and dark, desktop and phone; a background tab's notification and title count; keyboard-only
create and cancel; axe-core on every combination. The lane saves its screenshots under
``docs/screenshots/`` (the README shows them).

Main flow: type a reminder due in a few seconds and one due in ten minutes; watch the first
one's countdown tick in the Reminders panel; its card arrives, one card per delivery (the
assistant's echo is a line in it, the follow-up a collapsed line in it, never a user bubble with
the framing); cancel the other from the panel: the panel drops it and the transcript says
"Reminder cancelled: stretch" with Undo for a few seconds.

No developer words on a person's screen (issue 25 item 4): no Flush, Fork, cold, live or Resume,
no Session id outside its Details; "Branch" says what it does. The edges a person meets (item
6): refused notifications get a plain sentence, the skip link and the focus after opening a
Session and after Cancel, the phone's one summary line, a long reminder text that never hides
its time.
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
        "edit": "Edit reminder: {}",
        "cancelled": "Reminder cancelled",
        "cancelledNamed": "Reminder cancelled: {}",
        "undo": "Undo cancelling the reminder: {}",
        "handed": "Reminder handed to the assistant",
        "none": re.compile(r"^No pending reminders"),
        "drawer": "Show sessions",
        "branch": "Branch",
        "branchHint": "Start a new conversation from here; reminders stay in this one",
        # The due-soon one may be delivered by the time the line is read.
        "summary": re.compile(r"^(2 reminders · next in \d+ s|1 reminder · in \d+ min)$"),
        "skip": "Skip to message box",
        "notifyOff": "Notifications are off: reminders will show only in this open tab.",
        "developer": re.compile(r"\b(Flush|Fork|cold|live|Resume|Resumed)\b"),
    },
    "zh": {
        "locale": "zh-CN",
        "soon": ("提醒我4秒后检查部署", "检查部署"),
        "later": ("提醒我10分钟后伸展一下", "伸展一下"),
        "title": "提醒",
        "cancel": "取消提醒：{}",
        "edit": "编辑提醒：{}",
        "cancelled": "已取消提醒",
        "cancelledNamed": "已取消提醒：{}",
        "undo": "撤销取消提醒：{}",
        "handed": "提醒已交给助手",
        "none": re.compile(r"^没有待办提醒"),
        "drawer": "显示会话",
        "branch": "分支",
        "branchHint": "从这里开始一段新对话；提醒留在这段对话里",
        "summary": re.compile(r"^(2 条提醒 · 下一条 \d+ 秒后|1 条提醒 · \d+ 分钟后)$"),
        "skip": "跳到输入框",
        "notifyOff": "通知已关闭：提醒只会显示在这个打开的标签页里。",
        "developer": re.compile(r"Flush|Fork|刷写|分叉|冷|在线|恢复"),
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


def assert_no_developer_words(page, words, sid: str) -> None:
    """What a person sees (the rendered text) holds no developer word and no Session id."""
    shown = page.locator("body").inner_text()
    assert not words["developer"].search(shown), words["developer"].search(shown)
    assert sid not in shown


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
        summary = panel.get_by_test_id("panel-summary")
        if size == "phone":
            # The panel is one summary line until tapped.
            expect(summary).to_have_text(words["summary"])
            expect(panel.locator("h2")).to_be_hidden()
            summary.click()
            expect(summary).to_have_attribute("aria-expanded", "true")
        else:
            expect(summary).to_be_hidden()
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
        # One delivery is one card: the assistant's echo is a line in it and the follow-up line
        # a collapsed detail in it; neither stands as a row of its own.
        expect(card.locator("[data-fold-echo]")).to_contain_text(soon)
        expect(card.get_by_text(words["handed"], exact=True)).to_be_visible()
        echo_text = card.locator("[data-fold-echo]").inner_text()
        rows = page.locator("[data-testid=transcript] > [data-kind=assistant]")
        expect(rows.filter(has_text=echo_text)).to_be_hidden()
        expect(rows.filter(has_text=echo_text)).to_have_attribute("data-folded", "")
        expect(page.locator("[data-testid=transcript] > [data-kind=followup]")).to_be_hidden()
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
        expect(panel.locator("p.schedule-panel-empty", has_text=words["none"])).to_be_visible()
        transcript = page.get_by_test_id("transcript")
        expect(transcript.get_by_text(words["cancelledNamed"].format(later))).to_be_visible()
        # Undo is offered for a few seconds (Node tests click it: tests/js/schedule_undo).
        undo = transcript.get_by_role("button", name=words["undo"].format(later), exact=True)
        expect(undo).to_be_visible()
        page.screenshot(path=str(SCREENSHOTS / f"{size}-{scheme}-{language}-cancelled.png"))
        sid = page.get_by_test_id("session-id").text_content()
        # No developer words; the id only in Details; "Branch" explains itself.
        assert_no_developer_words(page, words, sid)
        branch = page.get_by_test_id("fork")
        expect(branch).to_have_text(words["branch"])
        expect(branch).to_have_attribute("title", words["branchHint"])
        expect(branch).to_have_accessible_description(words["branchHint"])
        expect(page.get_by_test_id("flush")).to_be_hidden()
        expect(page.get_by_test_id("session-id")).to_be_hidden()
        page.get_by_test_id("session-details").locator("summary").click()
        expect(page.get_by_test_id("session-id")).to_be_visible()
        expect(page.get_by_test_id("session-id")).to_have_text(sid)
        page.get_by_test_id("session-details").locator("summary").click()
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
            # Tap the backdrop beside the drawer (its middle may lie under the drawer).
            backdrop = page.get_by_test_id("drawer-backdrop")
            box = backdrop.bounding_box()
            assert box is not None
            backdrop.click(position={"x": box["width"] - 8, "y": box["height"] / 2})
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


ACTIVE = "document.activeElement"


def focused(page, expression: str) -> bool:
    return bool(page.evaluate(f"(() => {{ const a = {ACTIVE}; return {expression}; }})()"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_keyboard_only_create_and_cancel(browser, server, language: str) -> None:
    words = WORDS[language]
    cancel_name = words["cancel"]
    context, page, errors = open_page(browser, language, "light", "desktop")
    try:
        page.goto(server.url)

        def tab_to(predicate: str, limit: int = 40) -> None:
            for _ in range(limit):
                page.keyboard.press("Tab")
                if focused(page, predicate):
                    return
            raise AssertionError(f"Tab never reached {predicate}")

        # The first Tab reaches the skip link; it puts the keyboard in the message box.
        page.keyboard.press("Tab")
        assert focused(page, "a?.dataset?.testid === 'skip-link'")
        expect(page.get_by_test_id("skip-link")).to_have_text(words["skip"])
        expect(page.get_by_test_id("skip-link")).to_be_in_viewport()
        page.keyboard.press("Enter")
        wait_for(lambda: focused(page, "a?.dataset?.testid === 'composer'"), timeout=5)
        reminders = ["call mom", "feed the cat"] if language == "en" else ["给妈妈打电话", "喂猫"]
        phrase = {
            "en": "remind me to {} in {} minutes",
            "zh": "提醒我{1}分钟后{0}",
        }[language]
        for minutes, text in zip((10, 20), reminders, strict=True):
            page.keyboard.type(phrase.format(text, minutes))
            page.keyboard.press("Enter")
            expect(page.get_by_test_id("composer")).to_have_value("")
        panel = page.locator(PANEL)
        expect(panel.locator("li[data-schedule-id]")).to_have_count(2)
        first, second = (cancel_name.format(text) for text in reminders)
        tab_to(f"a?.getAttribute('aria-label') === {json.dumps(first)}")
        page.keyboard.press("Enter")
        expect(panel.locator("li[data-schedule-id]")).to_have_count(1)
        # The keyboard stays in the panel: on the next row's first control (its Edit), then
        # its Cancel ...
        edit = words["edit"].format(reminders[1])
        wait_for(lambda: focused(page, f"a?.getAttribute('aria-label') === {json.dumps(edit)}"))
        page.keyboard.press("Tab")
        assert focused(page, f"a?.getAttribute('aria-label') === {json.dumps(second)}")
        page.keyboard.press("Enter")
        expect(panel.locator("p.schedule-panel-empty", has_text=words["none"])).to_be_visible()
        expect(page.get_by_test_id("transcript").get_by_text(words["cancelled"])).to_have_count(2)
        # ... then, none left, on the panel's heading.
        wait_for(
            lambda: focused(
                page, f"a?.tagName === 'H2' && a.textContent === {json.dumps(words['title'])}"
            )
        )
        sid = page.get_by_test_id("session-id").text_content()
        deletes = [e for e in history(server, sid) if e["event"]["type"] == "tool/result"]
        assert json.dumps(deletes[-1]["event"]["data"]["value"]).count('"deleted": true') == 1
        # Opening a Session from the list puts the keyboard in its message box.
        page.get_by_test_id("new-session").click()
        expect(page.get_by_test_id("session-id")).not_to_have_text(sid)
        page.locator(f"li[data-session-id='{sid}'] button").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("session-id")).to_have_text(sid)
        assert focused(page, "a?.dataset?.testid === 'composer'")
        assert axe_violations(page) == []
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_refused_notifications_are_said_in_plain_words(browser, server, language: str) -> None:
    words = WORDS[language]
    context, page, errors = open_page(browser, language, "light", "phone")
    try:
        page.goto(server.url)
        note = page.get_by_test_id("notify-note")
        expect(page.get_by_test_id("enable-notifications")).to_be_visible()
        expect(note).to_be_hidden()
        # Blocked in the browser (this context's setting, through the DevTools protocol): the
        # page says so once it looks again (a reload, a focus).
        cdp = context.new_cdp_session(page)
        target = cdp.send("Target.getTargetInfo")["targetInfo"]
        cdp.send(
            "Browser.setPermission",
            {
                "permission": {"name": "notifications"},
                "setting": "denied",
                "origin": server.url,
                "browserContextId": target["browserContextId"],
            },
        )
        page.reload()
        expect(note).to_have_text(words["notifyOff"])
        expect(note).to_be_visible()
        expect(page.get_by_test_id("enable-notifications")).to_be_hidden()
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"phone-light-{language}-notifications-off.png"))
        assert errors == []
    finally:
        context.close()


def test_a_long_reminder_text_never_hides_its_time(browser, server) -> None:
    context, page, errors = open_page(browser, "en", "light", "phone")
    try:
        page.goto(server.url)
        long_text = "water the plants on the balcony " * 12
        send(page, f"remind me in 10 minutes to {long_text.strip()}")
        panel = page.locator(PANEL)
        panel.get_by_test_id("panel-summary").click()
        row = panel.locator("li[data-schedule-id]")
        expect(row).to_have_count(1)
        prompt = row.locator(".schedule-panel-prompt")
        when = row.locator(".schedule-panel-when time")
        expect(when).to_be_visible()
        expect(when).to_be_in_viewport()
        # The text is cut (an ellipsis after two lines), the time right below it.
        clipped = prompt.evaluate("(e) => e.scrollHeight > e.clientHeight + 1")
        assert clipped
        box, time_box = prompt.bounding_box(), when.bounding_box()
        assert box is not None
        assert time_box is not None
        assert box["height"] < 60
        assert time_box["y"] >= box["y"] + box["height"] - 1
        assert errors == []
    finally:
        context.close()
