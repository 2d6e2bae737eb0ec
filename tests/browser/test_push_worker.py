"""Notifications outside the tab in Debian's Chromium: the page's Notifications dialog and the
service worker (``/sw.js``) that shows Web Push notifications and runs their buttons.

The dialog lists the server's channels by their masked labels, sends a test notification that
reaches a local webhook and (once this device is on) a local push service, and says per channel
what happened, in English and Chinese. Turning on this device: a refused permission and a push
service that cannot be reached are said plainly first.

What needs a real push service is replaced here, and only that: a Playwright context is a
private window, where Chromium offers no push subscription, so ``PushManager.subscribe`` is
stubbed to return the subscription of the local push service (the host then encrypts each push
for it, and the test decrypts it). A push reaches the real service worker through the DevTools
protocol (``ServiceWorker.deliverPushMessage``), and a click on a notification's button is a
``notificationclick`` event dispatched inside the worker with the notification the browser shows
(the DevTools protocol cannot click one). The worker then runs the tool with the token the page
gave it, with no page open.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.api import history, new_session, wait_for
from tests.notify.receivers import FakePushService, WebhookReceiver, free_port

from .conftest import Server, start_server
from .test_product import axe_violations

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
TOKEN = "a-token-the-worker-keeps-0123456789"
PASSWORD = "hook-password-9876"
SECRET_PATH = "tok-SECRET-in-the-path"
OCCURRENCE = "2026-08-05T08:01:00.000Z"

WORDS = {
    "en": {
        "locale": "en-US",
        "entry": "Notifications",
        "intro": "Reminders that come due are also sent here:",
        "enable": "Notify me on this device",
        "refused": "The browser refused notifications for this page.",
        "unreachable": "This browser could not reach a push service",
        "on": "This device gets notifications.",
        "stopped": "This device no longer gets notifications.",
        "thisDevice": "Web Push · this device",
        "test": "Send a test notification",
        "delivered": "Delivered",
        "title": "dsh: test notification",
        "buttons": ["Done", "Snooze 10 min"],
        "failed": "That did not work (no such session). Open dsh to try again.",
    },
    "zh": {
        "locale": "zh-CN",
        "entry": "通知",
        "intro": "到时的提醒也会发送到这里：",  # noqa: RUF001
        "enable": "在这台设备上通知我",
        "refused": "浏览器拒绝了此页面的通知。",
        "unreachable": "这个浏览器连接不到推送服务",
        "on": "这台设备会收到通知。",
        "stopped": "这台设备不再接收通知。",
        "thisDevice": "Web Push · 这台设备",
        "test": "发送测试通知",
        "delivered": "已送达",
        "title": "dsh：测试通知",  # noqa: RUF001
        "buttons": ["完成", "10 分钟后提醒"],
        "failed": "操作没有成功（no such session）。请打开 dsh 再试一次。",  # noqa: RUF001
    },
}

#: ``PushManager`` without a push service: ``window.__push`` decides what ``subscribe`` gives
#: (``"fail"``: the browser's own refusal when no push service answers; else the subscription
#: JSON of the local push service).
PUSH_STUB = """
window.__push = "fail";
window.__subscribed = 0;
(() => {
  const proto = globalThis.PushManager && PushManager.prototype;
  if (!proto) return;
  let held = null;
  proto.getSubscription = async function () { return held; };
  proto.subscribe = async function (options) {
    const mode = window.__push;
    if (mode === "fail") {
      throw new DOMException("Registration failed - push service not available", "AbortError");
    }
    window.__subscribed += 1;
    const key = new Uint8Array(options.applicationServerKey).slice().buffer;
    held = {
      endpoint: mode.endpoint,
      options: { userVisibleOnly: options.userVisibleOnly, applicationServerKey: key },
      toJSON: () => mode,
      unsubscribe: async () => { held = null; return true; },
    };
    return held;
  };
})();
"""

NOTIFICATIONS = """async () => {
  const registration = await navigator.serviceWorker.ready;
  return (await registration.getNotifications()).map((n) => ({
    title: n.title, body: n.body, tag: n.tag, lang: n.lang, data: n.data,
    actions: n.actions.map((a) => ({ action: a.action, title: a.title })),
  }));
}"""

#: In the worker: click ``action`` on the notification tagged ``tag`` (the browser's own
#: notification object, in a ``notificationclick`` event the worker's listener handles).
CLICK = """([tag, action]) => (async () => {
  const [shown] = await self.registration.getNotifications({ tag });
  if (!shown) throw new Error(`no notification tagged ${tag}`);
  self.dispatchEvent(new NotificationEvent("notificationclick", { notification: shown, action }));
})()"""

NO_WINDOW = """async () =>
  (await self.clients.matchAll({ type: "window", includeUncontrolled: true })).length === 0"""

WORKER_NOTIFICATIONS = """async () =>
  (await self.registration.getNotifications()).map((n) => ({ tag: n.tag, body: n.body }))"""


@dataclass
class Rig:
    server: Server
    hook: WebhookReceiver
    push: FakePushService


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    port = free_port()
    with WebhookReceiver() as hook, FakePushService() as push:
        url = f"json://user:{PASSWORD}@127.0.0.1:{hook.port}/hook/{SECRET_PATH}"
        server = start_server(
            tmp_path / "data",
            extra=[
                "--port",
                str(port),
                "--public-url",
                f"http://127.0.0.1:{port}",
                "--token",
                TOKEN,
                "--notify-allow-private",
                "127.0.0.1",
            ],
            env={"DSH_NOTIFY_URLS": url},
        )
        server.http.headers["Authorization"] = f"Bearer {TOKEN}"
        try:
            yield Rig(server, hook, push)
        finally:
            server.close()
            shutil.rmtree(tmp_path / "data", ignore_errors=True)


class Browser:
    """One page of a fresh context, its DevTools session and the worker's registrations."""

    def __init__(self, browser: Any, server: Server, language: str) -> None:
        self.server = server
        self.context = browser.new_context(
            locale=WORDS[language]["locale"],
            viewport={"width": 1280, "height": 800},
            timezone_id="Europe/Berlin",
        )
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on(
            "console",
            lambda msg: (
                self.errors.append(f"{msg.type}: {msg.text}")
                if msg.type in ("error", "warning")
                else None
            ),
        )
        self.page.add_init_script(PUSH_STUB)
        self.cdp = self.context.new_cdp_session(self.page)
        self.registrations: list[dict[str, Any]] = []
        self.cdp.on(
            "ServiceWorker.workerRegistrationUpdated",
            lambda event: self.registrations.extend(event["registrations"]),
        )
        #: The registrations whose worker version is activated (a push to a registration whose
        #: worker is still installing may be dropped by the browser).
        self.activated: set[str] = set()
        self.cdp.on(
            "ServiceWorker.workerVersionUpdated",
            lambda event: self.activated.update(
                str(v["registrationId"]) for v in event["versions"] if v["status"] == "activated"
            ),
        )
        self.cdp.send("ServiceWorker.enable")
        self.page.goto(f"{server.url}/?token={TOKEN}")

    def grant_notifications(self) -> None:
        target = self.cdp.send("Target.getTargetInfo")["targetInfo"]
        self.cdp.send(
            "Browser.grantPermissions",
            {
                "permissions": ["notifications"],
                "origin": self.server.url,
                "browserContextId": target["browserContextId"],
            },
        )

    def registration_id(self) -> str:
        """The live registration whose worker is activated (a push to a worker still being
        installed can be dropped: the notification then never shows)."""

        def ready() -> list[dict[str, Any]]:
            # A call into the page also lets Playwright hand this process the DevTools events.
            self.page.evaluate("async () => { await navigator.serviceWorker.ready; }")
            return [
                r
                for r in self.registrations
                if not r["isDeleted"] and str(r["registrationId"]) in self.activated
            ]

        return str(wait_for(ready, timeout=10)[-1]["registrationId"])

    def deliver(self, payload: dict[str, Any]) -> None:
        """A push from the push service, as the browser hands it to the worker."""
        self.cdp.send(
            "ServiceWorker.deliverPushMessage",
            {
                "origin": self.server.url,
                "registrationId": self.registration_id(),
                "data": json.dumps(payload),
            },
        )

    def notifications(self) -> list[dict[str, Any]]:
        return list(self.page.evaluate(NOTIFICATIONS))

    def worker(self) -> Any:
        return wait_for(lambda: self.context.service_workers, timeout=10)[0]

    def close(self) -> None:
        self.context.close()


def open_dialog(page: Any, words: dict[str, Any]) -> Any:
    page.get_by_test_id("notify-entry").click()
    dialog = page.get_by_test_id("notify-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_test_id("notify-intro")).to_have_text(words["intro"])
    return dialog


def turn_on_this_device(browser: Browser, rig: Rig, words: dict[str, Any]) -> None:
    page = browser.page
    dialog = open_dialog(page, words)
    browser.grant_notifications()
    page.evaluate(
        "(subscription) => { window.__push = subscription; }", rig.push.subscription_json()
    )
    dialog.get_by_test_id("notify-push").click()
    expect(dialog.get_by_test_id("notify-push-state")).to_have_text(words["on"])
    dialog.get_by_test_id("notify-close").click()


def actions(*items: tuple[str, str, dict[str, Any]]) -> str:
    """``data.actions`` as the Schedule plugin sends it: a JSON string of buttons."""
    return json.dumps(
        [
            {"action": action, "title": action.title(), "tool": tool, "arguments": arguments}
            for action, tool, arguments in items
        ]
    )


# -- the dialog -------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_dialog_lists_channels_sends_a_test_and_turns_on_this_device(
    browser: Any, rig: Rig, language: str
) -> None:
    words = WORDS[language]
    opened = Browser(browser, rig.server, language)
    page = opened.page
    try:
        expect(page.get_by_test_id("notify-entry")).to_have_text(words["entry"])
        dialog = open_dialog(page, words)
        rows = dialog.locator("li[data-channel-id]")
        expect(rows).to_have_count(1)
        expect(rows.locator(".notify-channel-label")).to_have_text(
            f"json://***:***@127.0.0.1:{rig.hook.port}/hook/..."
        )
        enable = dialog.get_by_test_id("notify-push")
        state = dialog.get_by_test_id("notify-push-state")
        expect(enable).to_have_text(words["enable"])

        # Refusals first: the browser's permission refused (never granted in this context) ...
        enable.click()
        expect(state).to_contain_text(words["refused"])
        # ... then, allowed, no push service answers the subscription.
        opened.grant_notifications()
        enable.click()
        expect(state).to_contain_text(words["unreachable"])
        assert page.evaluate("window.__subscribed") == 0
        assert rig.server.http.get("/api/notify").json()["channels"][1:] == []

        # The push service answers: this device is on, and listed as such.
        page.evaluate("(s) => { window.__push = s; }", rig.push.subscription_json())
        enable.click()
        expect(state).to_have_text(words["on"])
        expect(page.get_by_test_id("enable-notifications")).to_be_hidden()
        expect(rows).to_have_count(2)
        expect(rows.nth(1).locator(".notify-channel-label")).to_have_text("Chrome on Linux")
        expect(rows.nth(1).locator(".notify-channel-service")).to_have_text(words["thisDevice"])

        # A test notification reaches the webhook and this device, in the page's language.
        dialog.get_by_test_id("notify-test").click()
        results = rows.locator(".notify-channel-result")
        expect(results).to_have_text([words["delivered"], words["delivered"]])
        hooked = [request.json() for request in rig.hook.taken()]
        assert [body["title"] for body in hooked] == [words["title"]]
        (pushed,) = rig.push.taken_pushes()
        assert pushed.payload["title"] == words["title"]
        assert rig.push.problems == []

        # Nothing the page shows or was answered holds the channel's secrets.
        shown = dialog.inner_text()
        for secret in (PASSWORD, SECRET_PATH):
            assert secret not in shown
            assert secret not in rig.server.http.get("/api/notify").text
        assert axe_violations(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"desktop-light-{language}-notifications.png"))

        # The push the host sent, shown by the worker with its buttons in the page's language.
        sid = new_session(rig.server)
        opened.deliver(
            {
                **pushed.payload,
                "key": f"{sid}/schedule/r1@{OCCURRENCE}/p-1",
                "data": {
                    "sessionId": sid,
                    "actions": actions(
                        ("done", "schedule_ack", {"id": "r1", "occurrence_at": OCCURRENCE}),
                        (
                            "snooze",
                            "schedule_snooze",
                            {"id": "r1", "occurrence_at": OCCURRENCE, "minutes": 10},
                        ),
                    ),
                },
            }
        )
        (note,) = wait_for(opened.notifications, timeout=30)
        assert (note["title"], note["body"]) == (words["title"], pushed.payload["body"])
        assert [a["title"] for a in note["actions"]] == words["buttons"]
        assert [a["action"] for a in note["actions"]] == ["done", "snooze"]

        # Off again: the server forgets this device, and the page says so.
        enable.click()
        expect(state).to_have_text(words["stopped"])
        expect(enable).to_have_text(words["enable"])
        expect(rows).to_have_count(1)
        assert [c["service"] for c in rig.server.http.get("/api/notify").json()["channels"]] == [
            "JSON"
        ]
        assert opened.errors == []
    finally:
        opened.close()


# -- the service worker -----------------------------------------------------------------------


def test_a_push_shows_a_notification_whose_done_runs_the_tool_with_no_page_open(
    browser: Any, rig: Rig
) -> None:
    words = WORDS["en"]
    opened = Browser(browser, rig.server, "en")
    try:
        turn_on_this_device(opened, rig, words)
        sid = new_session(rig.server)
        done = {"id": "r1", "occurrence_at": OCCURRENCE}
        buttons = actions(
            ("done", "schedule_ack", done),
            ("snooze", "schedule_snooze", {**done, "minutes": 10}),
        )
        # Failure first: a button whose Session is gone says so in the notification's place.
        opened.deliver(
            {
                "title": "Water the plants",
                "body": "the balcony ones",
                "key": "gone/schedule/r9/p-1",
                "url": f"{rig.server.url}/?session=gone",
                "data": {"sessionId": "gone", "actions": buttons},
            }
        )
        wait_for(opened.notifications, timeout=30)
        worker = opened.worker()
        worker.evaluate(CLICK, ["gone/schedule/r9/p-1", "done"])
        failed = wait_for(
            lambda: [n for n in opened.notifications() if n["actions"] == []], timeout=10
        )
        assert [(n["title"], n["body"], n["tag"]) for n in failed] == [
            ("Water the plants", words["failed"], "gone/schedule/r9/p-1")
        ]
        worker.evaluate(
            "async () => (await self.registration.getNotifications()).forEach((n) => n.close())"
        )

        key = f"{sid}/schedule/r1@{OCCURRENCE}/p-1"
        opened.deliver(
            {
                "title": "Water the plants",
                "body": "the balcony ones",
                "key": key,
                "url": f"{rig.server.url}/?session={sid}",
                "data": {"sessionId": sid, "scheduleId": "r1", "actions": buttons},
            }
        )
        (note,) = wait_for(opened.notifications, timeout=30)
        assert (note["title"], note["body"], note["tag"]) == (
            "Water the plants",
            "the balcony ones",
            key,
        )
        assert note["data"]["url"] == f"{rig.server.url}/?session={sid}"
        # The page goes away; "Done" still runs, as the person's action on that Session,
        # signed with the token the page gave the worker.
        opened.page.goto("about:blank")
        assert worker.evaluate(NO_WINDOW) is True
        worker.evaluate(CLICK, [key, "done"])

        def acked() -> list[dict[str, Any]]:
            return [
                entry["event"]["data"]
                for entry in history(rig.server, sid)
                if entry["event"]["type"] == "tool/call"
            ]

        (call,) = wait_for(acked, timeout=10)
        assert call["name"] == "schedule_ack"
        assert call["arguments"] == done
        assert call["source"] == {"kind": "user"}
        # The notification is gone, and no failure took its place.
        wait_for(lambda: worker.evaluate(WORKER_NOTIFICATIONS) == [], timeout=10)
        assert opened.errors == []
    finally:
        opened.close()
