"""One message on one apprise channel, against real receivers on 127.0.0.1."""

from __future__ import annotations

import logging
import threading
import urllib.parse

import pytest

from dsh_host.notify import (
    IDEMPOTENCY_HEADER,
    Channel,
    Message,
    Outcome,
    neutralise,
    outcome_for_error_text,
    outcome_for_status,
    outcome_from_logs,
    parse_channel,
    send,
)
from dsh_host.notify._markup import ZWJ
from dsh_host.notify._send import compose, message_url

from .receivers import SmtpReceiver, WebhookReceiver, free_port, wait_until

TOKEN = "hookT0kenS3cret"
PASSWORD = "smtpPa55Secret"
AT_MS = 1_767_322_800_123  # 2026-01-02T03:00:00.123Z
LINK = "http://127.0.0.1:8000/s/kitchen?focus=r1"


def message(**changes) -> Message:
    fields = {
        "title": "Tea is ready",
        "body": "Steep for 3 minutes",
        "key": "r1/2026-01-02T03:00",
        "at_ms": AT_MS,
        "link": LINK,
        "data": {"session": "kitchen"},
    }
    return Message(**{**fields, **changes})


def hook_channel(webhook: WebhookReceiver, scheme: str = "json") -> Channel:
    return parse_channel(webhook.url(scheme=scheme, path=f"/hooks/{TOKEN}"))


# -- a message must be sendable ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"key": ""}, "idempotency key"),
        ({"title": "", "body": ""}, "title or a body"),
        ({"ttl_seconds": -1}, "time to live"),
        ({"data": {"title": "x"}}, "'title' cannot be a message data key"),
        ({"data": {"key": "x"}}, "'key' cannot be a message data key"),
        ({"data": {"has space": "x"}}, "cannot be a message data key"),
        ({"data": {"": "x"}}, "cannot be a message data key"),
    ],
)
def test_a_message_that_cannot_be_sent_is_refused(changes, words):
    with pytest.raises(ValueError, match=words):
        message(**changes)


def test_message_data_must_be_text_and_is_frozen():
    with pytest.raises(TypeError, match="must be text"):
        message(data={"n": 1})
    data = {"session": "kitchen"}
    sent = message(data=data)
    data["session"] = "changed"
    assert sent.data == {"session": "kitchen"}
    with pytest.raises(TypeError):
        sent.data["session"] = "x"  # type: ignore[index]
    assert hash(sent) == hash(message())


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan")])
def test_a_send_needs_a_timeout_above_zero(webhook, timeout):
    with pytest.raises(ValueError, match="timeout above zero"):
        send(hook_channel(webhook), message(), timeout=timeout)
    assert webhook.taken() == []


def test_the_due_time_reads_as_iso_utc_to_the_millisecond():
    assert message().at_iso == "2026-01-02T03:00:00.123Z"
    assert message(at_ms=0).at_iso == "1970-01-01T00:00:00.000Z"


# -- failures first: each classification against a real receiver -------------------------------


def test_401_fails_and_says_to_check_the_address(webhook):
    webhook.answer(401)
    outcome = send(hook_channel(webhook), message(), timeout=5)
    assert outcome == Outcome("failed", "401 Unauthorized (check the address)")


def test_404_fails(webhook):
    webhook.answer(404)
    assert send(hook_channel(webhook), message(), timeout=5) == Outcome("failed", "404 Not Found")


def test_503_with_retry_after_is_retry_and_the_wait_is_not_visible_through_apprise(webhook):
    webhook.answer(503, Retry_After="7")
    outcome = send(hook_channel(webhook), message(), timeout=5)
    assert outcome == Outcome("retry", "503 Service Unavailable", retry_after=None)
    assert len(webhook.taken()) == 1  # apprise's own retries are off


def test_429_and_408_are_retry(webhook):
    webhook.answer(429)
    assert send(hook_channel(webhook), message(), timeout=5).status == "retry"
    webhook.answer(408)
    assert send(hook_channel(webhook), message(), timeout=5) == Outcome(
        "retry", "408 Request Timeout"
    )


def test_a_refused_connection_is_retry_and_a_receiver_back_on_its_port_gets_it(webhook):
    channel = hook_channel(webhook)
    webhook.go_down()
    assert send(channel, message(), timeout=5) == Outcome("retry", "could not connect")
    assert webhook.taken() == []
    webhook.come_up()
    assert send(channel, message(), timeout=5) == Outcome("delivered")
    assert len(webhook.taken()) == 1


def test_a_receiver_that_takes_the_request_and_never_answers_is_unknown(webhook):
    webhook.hang()
    outcome = send(hook_channel(webhook), message(), timeout=0.3)
    assert outcome == Outcome("unknown", "timed out after the request was sent")
    assert len(webhook.taken()) == 1


def test_a_receiver_that_answers_too_slowly_to_finish_is_unknown(webhook):
    # Each read gets a byte, so no socket timeout fires; apprise gives up after three timeouts.
    webhook.trickle()
    outcome = send(hook_channel(webhook), message(), timeout=0.2)
    assert outcome == Outcome("unknown", "timed out after the request was sent")
    assert len(webhook.taken()) == 1


def test_a_channel_apprise_no_longer_accepts_fails():
    channel = Channel(id="n-x", label="x", service="JSON", dedupes=True, url="json://")
    assert send(channel, message()) == Outcome("failed", "the notify address could not be used")


def test_no_such_host_is_retry():
    channel = parse_channel("json://no-such-host.invalid/hook")
    assert send(channel, message(), timeout=5) == Outcome("retry", "could not connect")


# -- what the receiver sees ---------------------------------------------------------------------


def test_a_json_webhook_gets_the_text_link_key_time_and_data_and_the_key_header(webhook):
    sent = message(data={"session": "kitchen", "note": "100% sure & ok=1 \u2615"})
    assert send(hook_channel(webhook), sent, timeout=5) == Outcome("delivered")
    (request,) = webhook.taken()
    assert request.method == "POST"
    assert request.path == f"/hooks/{TOKEN}"
    assert request.header(IDEMPOTENCY_HEADER) == sent.key
    payload = request.json()
    assert payload["title"] == "Tea is ready"
    assert payload["message"] == f"Steep for 3 minutes\n\n{LINK}"
    assert payload["key"] == sent.key
    assert payload["at"] == "2026-01-02T03:00:00.123Z"
    assert payload["session"] == "kitchen"
    assert payload["note"] == "100% sure & ok=1 \u2615"


def test_every_attempt_carries_the_same_key_so_the_receiver_can_drop_repeats(webhook):
    channel = hook_channel(webhook)
    for _ in range(3):
        assert send(channel, message(), timeout=5).status == "delivered"
    assert len(webhook.taken()) == 3
    assert webhook.unique_keys() == {message().key}


def test_a_form_webhook_gets_the_key_in_its_fields_and_header(webhook):
    assert send(hook_channel(webhook, "form"), message(), timeout=5).status == "delivered"
    (request,) = webhook.taken()
    fields = urllib.parse.parse_qs(request.body.decode())
    assert fields["key"] == [message().key]
    assert fields["title"] == ["Tea is ready"]
    assert request.header(IDEMPOTENCY_HEADER) == message().key


def test_an_xml_webhook_gets_the_key_time_and_data_as_escaped_elements(webhook):
    sent = message(title="T <x>", data={"session": "a&b"})
    assert send(hook_channel(webhook, "xml"), sent, timeout=5).status == "delivered"
    (request,) = webhook.taken()
    body = request.body.decode()
    assert "<Subject>T &lt;x&gt;</Subject>" in body
    assert f"<key>{sent.key}</key>" in body
    assert "<at>2026-01-02T03:00:00.123Z</at>" in body
    assert "<session>a&amp;b</session>" in body
    assert request.header(IDEMPOTENCY_HEADER) == sent.key


def test_a_message_with_only_a_title_sends_the_title_as_its_text(webhook):
    sent = message(body="", link=None)
    assert send(hook_channel(webhook), sent, timeout=5).status == "delivered"
    assert webhook.taken()[0].json()["message"] == "Tea is ready"


def test_ntfy_gets_the_title_text_tag_and_click_link_and_no_icon(webhook):
    channel = parse_channel(webhook.url(scheme="ntfy", path="/kitchen-reminders"))
    assert send(channel, message(), timeout=5) == Outcome("delivered")
    (request,) = webhook.taken()
    assert request.path == "/"
    assert request.json() == {
        "topic": "kitchen-reminders",
        "title": "Tea is ready",
        "message": "Steep for 3 minutes",
    }
    assert request.header("X-Tags") == "alarm_clock"
    assert request.header("X-Click") == LINK
    assert request.header("X-Icon") is None


def test_ntfy_without_a_link_has_no_click_action(webhook):
    channel = parse_channel(webhook.url(scheme="ntfy", path="/kitchen-reminders"))
    assert send(channel, message(link=None), timeout=5) == Outcome("delivered")
    assert webhook.taken()[0].header("X-Click") is None


def test_ntfy_rate_limits_are_retry(webhook):
    channel = parse_channel(webhook.url(scheme="ntfy", path="/kitchen-reminders"))
    webhook.answer(429)
    assert send(channel, message(), timeout=5) == Outcome("retry", "429 Too Many Requests")


def test_an_email_arrives_with_the_key_in_its_footer_and_header(smtp):
    channel = parse_channel(smtp.url())
    assert send(channel, message(), timeout=5) == Outcome("delivered")
    (mail,) = smtp.taken()
    assert mail["Subject"] == "Tea is ready"
    assert mail["To"] == "me@example.com"
    assert mail[IDEMPOTENCY_HEADER] == message().key
    text = mail.get_content().replace("\r\n", "\n")
    assert text.rstrip("\n").split("\n\n") == [
        "Steep for 3 minutes",
        LINK,
        f"Reminder key: {message().key}",
    ]


def test_an_email_with_the_wrong_login_fails_and_says_to_check_the_address():
    with SmtpReceiver(password=PASSWORD) as smtp:
        wrong = parse_channel(smtp.url().replace(PASSWORD, "not-it"))
        assert send(wrong, message(), timeout=5) == Outcome(
            "failed", "the mail server refused the login (check the address)"
        )
        assert smtp.taken() == []
        assert send(parse_channel(smtp.url()), message(), timeout=5).status == "delivered"
        assert len(smtp.taken()) == 1


def test_an_email_server_that_is_not_there_is_retry():
    channel = parse_channel(
        f"mailto://127.0.0.1:{free_port()}?to=me@example.com&from=d@example.com"
    )
    assert send(channel, message(), timeout=5) == Outcome("retry", "could not connect")


# -- secrets stay secret ------------------------------------------------------------------------


def test_the_url_token_and_password_never_reach_an_outcome_a_label_or_the_logs(webhook, caplog):
    caplog.set_level(logging.DEBUG)
    with SmtpReceiver(password=PASSWORD) as smtp:
        channels = [
            hook_channel(webhook),
            parse_channel(webhook.url(path=f"/hooks/{TOKEN}").replace("//", f"//u:{PASSWORD}@")),
            parse_channel(smtp.url().replace(PASSWORD, PASSWORD + "x")),
        ]
        outcomes = [send(channel, message(), timeout=5) for channel in channels]
        webhook.answer(401)
        outcomes += [send(channel, message(), timeout=5) for channel in channels[:2]]
        webhook.go_down()
        outcomes += [send(channel, message(), timeout=5) for channel in channels[:2]]
        webhook.come_up()
        webhook.hang()
        outcomes.append(send(channels[0], message(), timeout=0.2))
    assert [o.status for o in outcomes] == [
        "delivered",
        "delivered",
        "failed",
        "failed",
        "failed",
        "retry",
        "retry",
        "unknown",
    ]
    shown = [o.reason or "" for o in outcomes]
    shown += [c.label for c in channels] + [repr(c) for c in channels] + [str(c) for c in channels]
    shown.append(caplog.text)
    for text in shown:
        assert TOKEN not in text
        assert PASSWORD not in text


def test_only_the_sending_context_is_silenced(webhook, caplog):
    # A send in progress in one thread leaves another thread's apprise logging alone.
    caplog.set_level(logging.INFO)
    webhook.hang()
    outcomes: list[Outcome] = []
    worker = threading.Thread(
        target=lambda: outcomes.append(send(hook_channel(webhook), message(), timeout=1))
    )
    worker.start()
    try:
        wait_until(lambda: len(webhook.taken()) == 1, what="the request arrived")
        logging.getLogger("apprise").info("a line from elsewhere")
    finally:
        worker.join(10)
    assert outcomes == [Outcome("unknown", "timed out after the request was sent")]
    assert [r.getMessage() for r in caplog.records if r.name == "apprise"] == [
        "a line from elsewhere"
    ]


# -- the reading of apprise's logs (the paths no loopback receiver can produce) ------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (200, Outcome("delivered")),
        (201, Outcome("delivered")),
        (204, Outcome("delivered")),
        (408, Outcome("retry", "408 Request Timeout", 3.0)),
        (429, Outcome("retry", "429 Too Many Requests", 3.0)),
        (500, Outcome("retry", "500 Internal Server Error", 3.0)),
        (599, Outcome("retry", "HTTP status 599", 3.0)),
        (42901, Outcome("retry", "429 Too Many Requests", 3.0)),
        (400, Outcome("failed", "400 Bad Request")),
        (401, Outcome("failed", "401 Unauthorized (check the address)")),
        (403, Outcome("failed", "403 Forbidden (check the address)")),
        (40301, Outcome("failed", "403 Forbidden (check the address)")),
        (301, Outcome("failed", "301 Moved Permanently")),
    ],
)
def test_http_statuses(code, expected):
    # The wait passes through for a retry only.
    assert outcome_for_status(code, retry_after=3.0) == expected


URLLIB3 = "HTTPSConnectionPool(host='h.example', port=443): "
RESET = "Socket Exception: ('Connection aborted.', ConnectionResetError(104, 'Connection reset'))"
CLOSED = "Socket Exception: ('Connection aborted.', RemoteDisconnected('Remote end closed'))"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([("WARNING", "Failed to send JSON POST notification: Bad Gateway, error=502.")],
         Outcome("retry", "502 Bad Gateway")),
        ([("WARNING", "Failed to send ntfy notification to topic 't': error=42901.")],
         Outcome("retry", "429 Too Many Requests")),
        ([("DEBUG", "Socket Exception: " + URLLIB3 + "Max retries exceeded with url: / (Caused "
           "by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] "
           "certificate verify failed')))")],
         Outcome("retry", "could not connect")),
        ([("DEBUG", "Socket Exception: " + URLLIB3 + "Max retries exceeded with url: / (Caused "
           "by NameResolutionError(\"Failed to resolve 'h.example'\"))")],
         Outcome("retry", "could not connect")),
        ([("DEBUG", "Socket Exception: " + URLLIB3 + "Max retries exceeded with url: / (Caused "
           "by ConnectTimeoutError(None, 'Connection to h.example timed out. (connect "
           "timeout=1)'))")],
         Outcome("retry", "could not connect")),
        ([("DEBUG", RESET)],
         Outcome("unknown", "the connection was lost after the request was sent")),
        ([("DEBUG", CLOSED)],
         Outcome("unknown", "the connection was lost after the request was sent")),
        ([("DEBUG", "Socket Exception: timed out")],
         Outcome("unknown", "timed out after the request was sent")),
        ([("DEBUG", "Socket Exception: (454, b'4.7.0 TLS not available')")],
         Outcome("retry", "the mail server asked to try again later (454)")),
        ([("DEBUG", "Socket Exception: (554, b'5.7.1 Relay denied')")],
         Outcome("failed", "the mail server refused the message (554)")),
        ([("DEBUG", "Socket Exception: (530, b'5.7.0 Authentication required')")],
         Outcome("failed", "the mail server refused the login (check the address)")),
        ([("WARNING", "SMTP recipient a@example.com was refused: 550 b'no such user'"),
          ("WARNING", 'Sending email to "a@example.com" failed.')],
         Outcome("failed", "the mail server refused the message (550)")),
        ([("WARNING", "SMTP recipient a@example.com was refused: 452 b'mailbox full'")],
         Outcome("retry", "the mail server asked to try again later (452)")),
        ([("DEBUG", "Socket Exception: STARTTLS extension not supported by server.")],
         Outcome("retry", "could not connect")),
        # The message's own text in a debug line is never read as a status or an error.
        ([("DEBUG", "JSON Payload: {'message': 'error=401, Connection refused'}"),
          ("WARNING", "A Connection error occurred sending JSON notification to h.example.")],
         Outcome("retry", "the service refused or could not be reached")),
        ([("DEBUG", "Socket Exception: something nobody has seen before")],
         Outcome("retry", "the service refused or could not be reached")),
        ([], Outcome("retry", "the service refused or could not be reached")),
    ],
)  # fmt: skip
def test_reading_a_failed_attempts_log_lines(lines, expected):
    assert outcome_from_logs(lines) == expected


def test_error_text_that_shows_no_kind_is_none():
    assert outcome_for_error_text("something else") is None


# -- composing the text -------------------------------------------------------------------------


def chat(service: str) -> Channel:
    return Channel(id="n-x", label="x", service=service, dedupes=False, url="discord://a/b")


def test_chat_services_get_inert_text_and_the_link_as_is():
    sent = message(title="@everyone *now*", body="ping <@123> [x](http://e.example)")
    title, body = compose(chat("Discord"), sent)
    assert title == f"@{ZWJ}everyone \\*now\\*"
    assert body == f"ping \\<@{ZWJ}123\\> \\[x\\]\\(http://e.example\\)\n\n{LINK}"


def test_other_channels_get_the_text_unchanged():
    sent = message(title="@everyone *now*", body="<b>hi</b>")
    assert compose(chat("JSON"), sent) == ("@everyone *now*", f"<b>hi</b>\n\n{LINK}")


def test_the_per_message_url_keeps_the_channels_own_arguments(webhook):
    channel = parse_channel(webhook.url(query="-token=abc"))
    url = message_url(channel, message())
    assert url.startswith(channel.url + "&")
    assert send(channel, message(), timeout=5).status == "delivered"
    assert webhook.taken()[0].path == "/hook?token=abc"


def test_a_channel_with_no_message_arguments_is_sent_as_is():
    channel = chat("Discord")
    assert message_url(channel, message()) == channel.url


# -- neutralising chat text ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "text", "expected"),
    [
        ("Discord", "@everyone @here", f"@{ZWJ}everyone @{ZWJ}here"),
        ("Discord", "<@123> <@&9> <#42> <t:1700000000:R>",
         f"\\<@{ZWJ}123\\> \\<@{ZWJ}&9\\> \\<#42\\> \\<t:1700000000:R\\>"),
        ("Discord", "**b** __u__ ~~s~~ `c` ||spoiler||",
         "\\*\\*b\\*\\* \\_\\_u\\_\\_ \\~\\~s\\~\\~ \\`c\\` \\|\\|spoiler\\|\\|"),
        ("Discord", "# head\n> quote\n- item\n  + sub\n1. first\n2) second\n===",
         "\\# head\n\\> quote\n\\- item\n  \\+ sub\n1\\. first\n2\\) second\n\\==="),
        ("Discord", "a - b # c 3. d", "a - b # c 3. d"),
        ("Discord", "back\\slash", "back\\\\slash"),
        ("Mattermost", "@channel @all [a](b)", f"@{ZWJ}channel @{ZWJ}all \\[a\\]\\(b\\)"),
        ("Slack", "<!channel> @here *b* _i_ ~s~ `c`",
         f"<!channel> @{ZWJ}here {ZWJ}*b{ZWJ}* {ZWJ}_i{ZWJ}_ {ZWJ}~s{ZWJ}~ {ZWJ}`c{ZWJ}`"),
        ("Slack", "> quoted\n  > again", f"{ZWJ}> quoted\n  {ZWJ}> again"),
        ("Telegram", "@channel <b>x</b>", f"@{ZWJ}channel <b>x</b>"),
        ("Matrix", "@room hello", f"@{ZWJ}room hello"),
        ("JSON", "@everyone *x*", "@everyone *x*"),
        ("ntfy", "", ""),
    ],
)  # fmt: skip
def test_neutralise(service, text, expected):
    assert neutralise(text, service) == expected
    assert neutralise(text, service).replace(ZWJ, "").replace("\\", "") == text.replace("\\", "")
