"""Web Push: the VAPID key, the subscription file, and a push to a fake push service."""

from __future__ import annotations

import base64
import json
import logging
import re
import stat
import threading
from datetime import UTC, datetime
from email.utils import format_datetime
from http import HTTPStatus

import pytest

from dsh_host.notify import (
    Message,
    Outcome,
    PushKeys,
    Subscription,
    Subscriptions,
    push_outcome,
    push_payload,
    retry_after_seconds,
    send_push,
    subscription_id,
    topic_for,
)
from dsh_host.notify._webpush import MAX_PAYLOAD, label_for

from .receivers import FakePushService, free_port

SUBJECT = "mailto:reminders@example.com"
CHROME_LINUX = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36"
)

FIREFOX_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0"
SAFARI_MAC = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Safari/605.1.15"
)
CHROME_ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0 Mobile Safari/537.36"
)
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, "
    "like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
EDGE_WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0 Safari/537.36 Edg/124.0"
)


def message(**changes) -> Message:
    fields = {
        "title": "Tea is ready",
        "body": "Steep for 3 minutes",
        "key": "r1/2026-01-02T03:00",
        "at_ms": 1_767_322_800_123,
        "link": "http://127.0.0.1:8000/s/kitchen",
        "data": {"session": "kitchen"},
        "ttl_seconds": 600,
    }
    return Message(**{**fields, **changes})


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def keys(tmp_path) -> PushKeys:
    return PushKeys.load_or_create(tmp_path / "push")


@pytest.fixture
def subscription(tmp_path, push_service) -> Subscription:
    return Subscriptions(tmp_path / "push").add(push_service.subscription_json(), CHROME_LINUX, 5)


# -- the VAPID key --------------------------------------------------------------------------------


def test_a_damaged_key_file_is_refused_in_plain_words(tmp_path):
    (tmp_path / "vapid.pem").write_text("not a key")
    with pytest.raises(ValueError, match="is not a private key"):
        PushKeys.load_or_create(tmp_path)


def test_the_key_is_made_once_kept_private_and_the_same_on_every_load(tmp_path):
    folder = tmp_path / "data" / "push"
    first = PushKeys.load_or_create(folder)
    assert mode(folder / "vapid.pem") == 0o600
    assert mode(folder) == 0o700
    again = PushKeys.load_or_create(folder)
    assert again.application_server_key == first.application_server_key
    raw = base64.urlsafe_b64decode(first.application_server_key + "==")
    assert len(raw) == 65
    assert raw[0] == 4
    assert re.fullmatch(r"[A-Za-z0-9_-]+", first.application_server_key)
    assert "PRIVATE" not in repr(first)
    assert [p.name for p in folder.iterdir()] == ["vapid.pem"]


def test_processes_starting_together_agree_on_one_key(tmp_path):
    folder = tmp_path / "push"
    made: list[str] = []
    start = threading.Barrier(8)

    def load() -> None:
        start.wait()
        made.append(PushKeys.load_or_create(folder).application_server_key)

    threads = [threading.Thread(target=load) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(made) == 8
    assert len(set(made)) == 1
    assert [p.name for p in folder.iterdir()] == ["vapid.pem"]


def test_a_subject_that_is_not_a_contact_or_a_timeout_not_above_zero_is_refused(
    keys, push_service, subscription
):
    with pytest.raises(ValueError, match="mailto: or https:"):
        send_push(subscription, message(), keys, subject="nobody", timeout=5)
    with pytest.raises(ValueError, match="timeout above zero"):
        send_push(subscription, message(), keys, subject=SUBJECT, timeout=0)
    assert push_service.taken() == []


# -- subscriptions ----------------------------------------------------------------------------


def good() -> dict:
    return FakePushService().subscription_json()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"endpoint": None}, "https endpoint"),
        ({"endpoint": "ftp://push.example/x"}, "https endpoint"),
        ({"endpoint": "http://push.example/x"}, "https endpoint"),
        ({"endpoint": "https:///x"}, "https endpoint"),
        ({"endpoint": "https://[bad/x"}, "https endpoint"),
        ({"endpoint": "https://push.example/" + "x" * 2100}, "https endpoint"),
        ({"keys": None}, "needs its keys"),
        ({"keys": {"p256dh": "AAAA"}}, "needs its keys"),
        ({"keys": {"p256dh": "!!!", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "P-256 public key"),
        ({"keys": {"p256dh": "AAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "P-256 public key"),
        ({"keys": {"p256dh": "A", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "P-256 public key"),
        ({"keys": {"p256dh": "\u00e9", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "P-256 public key"),
    ],
)
def test_a_subscription_that_cannot_be_used_is_refused_without_quoting_it(tmp_path, change, words):
    subscriptions = Subscriptions(tmp_path)
    bad = {**good(), **change}
    with pytest.raises(ValueError, match=words) as caught:
        subscriptions.add(bad, CHROME_LINUX, 1)
    assert "push.example" not in str(caught.value)
    assert subscriptions.all() == ()


def test_a_bad_auth_secret_is_refused(tmp_path):
    bad = good()
    bad["keys"]["auth"] = "AAAA"
    with pytest.raises(ValueError, match="auth secret is not 16 bytes"):
        Subscriptions(tmp_path).add(bad, CHROME_LINUX, 1)


def test_a_damaged_subscriptions_file_is_refused_in_plain_words(tmp_path):
    path = tmp_path / "push-subscriptions.json"
    for text in ("{", "[]", '{"subscriptions": [{"endpoint": "https://a.example/x"}]}'):
        path.write_text(text)
        with pytest.raises(ValueError, match=r"push subscriptions file .* is damaged"):
            Subscriptions(tmp_path)
    stored = {**good(), "label": "x"}  # no time
    path.write_text(json.dumps({"subscriptions": [stored]}))
    with pytest.raises(ValueError, match="is damaged"):
        Subscriptions(tmp_path)


def test_subscriptions_are_kept_in_a_private_file_that_survives_reopening(tmp_path):
    folder = tmp_path / "push"
    subscriptions = Subscriptions(folder)
    assert subscriptions.all() == ()
    first = subscriptions.add(good(), CHROME_LINUX, 10)
    second = subscriptions.add(good(), "curl/8", 20)
    assert first.id == subscription_id(first.endpoint)
    assert first.label == "Chrome on Linux"
    assert second.label == "127.0.0.1"
    assert first.created_ms == 10
    assert mode(folder / "push-subscriptions.json") == 0o600
    assert first.endpoint not in repr(first)
    reopened = Subscriptions(folder)
    assert reopened.all() == (first, second)
    assert reopened.get(first.id) == first
    assert reopened.get("p-none") is None
    assert reopened.remove(first.id) is True
    assert reopened.remove(first.id) is False
    assert subscriptions.all() == (second,)
    assert [p.name for p in folder.iterdir()] == ["push-subscriptions.json"]


def test_the_same_endpoint_subscribing_again_replaces_the_old_one(tmp_path):
    subscriptions = Subscriptions(tmp_path)
    once = good()
    subscriptions.add(once, CHROME_LINUX, 1)
    again = {**once, "keys": good()["keys"]}
    newer = subscriptions.add(again, CHROME_LINUX, 2)
    assert subscriptions.all() == (newer,)
    assert newer.keys == again["keys"]


def test_subscriptions_added_from_many_threads_are_all_kept(tmp_path):
    subscriptions = Subscriptions(tmp_path)
    wanted = [good() for _ in range(16)]
    threads = [
        threading.Thread(target=subscriptions.add, args=(each, CHROME_LINUX, 1)) for each in wanted
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert {s.endpoint for s in Subscriptions(tmp_path).all()} == {w["endpoint"] for w in wanted}


@pytest.mark.parametrize(
    ("agent", "label"),
    [
        (CHROME_LINUX, "Chrome on Linux"),
        (FIREFOX_WINDOWS, "Firefox on Windows"),
        (SAFARI_MAC, "Safari on macOS"),
        (CHROME_ANDROID, "Chrome on Android"),
        (SAFARI_IPHONE, "Safari on iOS"),
        (EDGE_WINDOWS, "Edge on Windows"),
        ("Mozilla/5.0 (X11; CrOS x86_64 14541.0.0)", "ChromeOS"),
        ("<script>alert(1)</script> Firefox/1", "Firefox"),
        ("", "fcm.googleapis.com"),
    ],
)
def test_a_subscription_is_labelled_from_a_fixed_list_of_names(agent, label):
    assert label_for(agent, "https://fcm.googleapis.com/fcm/send/abc") == label


# -- a push ---------------------------------------------------------------------------------------


def test_a_push_decrypts_to_the_payload_with_topic_ttl_urgency_and_vapid(
    keys, push_service, subscription
):
    sent = message()
    assert send_push(subscription, sent, keys, subject=SUBJECT, timeout=5) == Outcome("delivered")
    assert push_service.problems == []
    (push,) = push_service.taken_pushes()
    assert push.payload == {
        "title": "Tea is ready",
        "body": "Steep for 3 minutes",
        "key": sent.key,
        "url": "http://127.0.0.1:8000/s/kitchen",
        "data": {"session": "kitchen"},
    }
    assert push.header("Topic") == topic_for(sent.key)
    assert push.header("TTL") == "600"
    assert push.header("Urgency") == "high"
    assert push.claims["sub"] == SUBJECT
    assert push.header("Authorization").endswith(",k=" + keys.application_server_key)


def test_the_fake_service_reads_only_pushes_encrypted_for_its_browser(keys, push_service):
    # The round trip above proves something only if the fake can refuse: here the keys are
    # another browser's, so the payload cannot be decrypted.
    other = FakePushService().subscription_json()["keys"]
    wrong = Subscription("p-x", push_service.endpoint, other, "x", 1)
    outcome = send_push(wrong, message(), keys, subject=SUBJECT, timeout=5)
    assert outcome == Outcome("failed", "400 Bad Request")
    assert push_service.problems == ["cannot decrypt"]
    assert push_service.taken_pushes() == []


def test_the_topic_is_short_url_safe_and_the_same_for_the_same_key():
    topic = topic_for("r1/2026-01-02T03:00")
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", topic)
    assert topic == topic_for("r1/2026-01-02T03:00")
    assert topic != topic_for("r1/2026-01-02T03:01")


def test_a_push_with_a_key_the_service_does_not_know_is_refused(
    tmp_path, push_service, subscription
):
    other = PushKeys.load_or_create(tmp_path / "other")
    push_service.answer(403)
    outcome = send_push(subscription, message(), other, subject=SUBJECT, timeout=5)
    assert outcome == Outcome("failed", "403 Forbidden (the push service did not accept our key)")


@pytest.mark.parametrize("code", [404, 410])
def test_an_ended_subscription_is_gone(keys, push_service, subscription, code):
    push_service.answer(code)
    outcome = send_push(subscription, message(), keys, subject=SUBJECT, timeout=5)
    assert outcome.status == "failed"
    assert outcome.gone is True
    assert outcome.reason.endswith("(the subscription has ended)")


def test_429_waits_as_long_as_the_service_says_in_seconds(keys, push_service, subscription):
    push_service.answer(429, Retry_After="12")
    outcome = send_push(subscription, message(), keys, subject=SUBJECT, timeout=5)
    assert outcome == Outcome("retry", "429 Too Many Requests", retry_after=12.0)


def test_503_waits_until_the_date_the_service_gives(keys, push_service, subscription):
    later = datetime.now(UTC).replace(microsecond=0).timestamp() + 3600
    push_service.answer(503, Retry_After=format_datetime(datetime.fromtimestamp(later, UTC), True))
    outcome = send_push(subscription, message(), keys, subject=SUBJECT, timeout=5)
    assert outcome.status == "retry"
    assert outcome.retry_after is not None
    assert 3500 < outcome.retry_after <= 3600


def test_a_refused_connection_is_retry(keys, push_service, subscription):
    push_service.go_down()
    outcome = send_push(subscription, message(), keys, subject=SUBJECT, timeout=5)
    assert outcome == Outcome("retry", "could not connect")


def test_a_service_that_never_answers_is_unknown(keys, push_service, subscription):
    push_service.hang()
    outcome = send_push(subscription, message(), keys, subject=SUBJECT, timeout=0.3)
    assert outcome == Outcome("unknown", "timed out after the request was sent")
    assert len(push_service.taken()) == 1


def test_the_endpoint_never_reaches_the_logs(keys, push_service, subscription, caplog):
    caplog.set_level(logging.DEBUG)
    send_push(subscription, message(), keys, subject=SUBJECT, timeout=5)
    push_service.go_down()
    send_push(subscription, message(), keys, subject=SUBJECT, timeout=5)
    assert subscription.endpoint.rsplit("/", 1)[1] not in caplog.text


def test_a_push_to_nowhere_is_retry(keys, tmp_path):
    dead = Subscriptions(tmp_path).add(
        {**good(), "endpoint": f"http://127.0.0.1:{free_port()}/push/x"}, "", 1
    )
    outcome = send_push(dead, message(), keys, subject=SUBJECT, timeout=5)
    assert outcome == Outcome("retry", "could not connect")


# -- the payload and the answers ------------------------------------------------------------------


def test_a_long_body_is_shortened_to_fit_a_push():
    raw = push_payload(message(body="\u2615" * 5000, title="t"))
    assert len(raw) <= MAX_PAYLOAD
    body = json.loads(raw)["body"]
    assert body.endswith("\u2026")
    assert len(body) > 1000
    short = json.loads(push_payload(message(link=None)))
    assert short["body"] == "Steep for 3 minutes"
    assert short["url"] is None


def test_a_payload_that_cannot_fit_keeps_an_empty_body():
    raw = push_payload(message(body="b" * 10, title="t" * 5000))
    assert json.loads(raw)["body"] == ""


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (201, Outcome("delivered")),
        (202, Outcome("delivered")),
        (400, Outcome("failed", "400 Bad Request")),
        (401, Outcome("failed", "401 Unauthorized (the push service did not accept our key)")),
        (413, Outcome("failed", f"413 {HTTPStatus(413).phrase} (the message is too large)")),
        (408, Outcome("retry", "408 Request Timeout", 5.0)),
        (500, Outcome("retry", "500 Internal Server Error", 5.0)),
        (410, Outcome("failed", "410 Gone (the subscription has ended)", gone=True)),
    ],
)
def test_push_service_answers(code, expected):
    assert push_outcome(code, "5", now=0.0) == expected


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        ("120", 120.0),
        (" 0 ", 0.0),
        ("Thu, 01 Jan 1970 00:01:40 GMT", 60.0),
        ("Thu, 01 Jan 1970 00:01:40 -0000", 60.0),
        ("Thu, 01 Jan 1970 00:00:10 GMT", 0.0),
        ("soon", None),
        ("-5", None),
    ],
)
def test_retry_after_in_seconds_or_as_a_date(value, seconds):
    assert retry_after_seconds(value, now=40.0) == seconds
