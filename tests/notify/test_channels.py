"""Notify channels: apprise URLs checked without I/O, named without their secrets."""

from __future__ import annotations

import hashlib
import logging

import pytest

from dsh_host.notify import (
    ENV_VAR,
    Channel,
    ChannelError,
    channel_id,
    mask_url,
    parse_channel,
    parse_channels,
    urls_from_env,
)

TOKEN = "tok3nS3cr3tXYZ"
PASSWORD = "pa55W0rdSecret"


# -- bad URLs: a plain error that never echoes the secret --------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        f"bogus://{TOKEN}@example.com/{TOKEN}",
        "json://",
        f"not a url {TOKEN}",
        f"mailto:{TOKEN}@example.com",
        f"discord://{TOKEN}",
    ],
)
def test_a_url_apprise_cannot_use_is_refused_by_its_masked_form_only(url, caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ChannelError) as caught:
        parse_channels([url])
    message = str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert message == f"notify URL {mask_url(url)!r} is not a valid apprise URL"
    assert "\n" not in message
    assert TOKEN not in message
    assert TOKEN not in caplog.text


def test_one_bad_url_refuses_the_whole_list():
    with pytest.raises(ChannelError, match=r"^notify URL 'bogus://h\.example/\.\.\.'"):
        parse_channels(["json://127.0.0.1:9/ok", "bogus://h.example/secret-path"])


# -- good URLs ----------------------------------------------------------------------------------


def test_a_channel_names_its_service_and_a_stable_id_and_keeps_the_secret_out_of_sight():
    url = f"json://user:{PASSWORD}@127.0.0.1:9/hooks/{TOKEN}?-q={TOKEN}"
    (channel,) = parse_channels([url])
    assert channel.id == "n-" + hashlib.sha256(url.encode()).hexdigest()[:12] == channel_id(url)
    assert channel.service == "JSON"
    assert channel.dedupes is True
    assert channel.url == url
    assert channel.scheme == "json"
    assert channel.label == "json://***:***@127.0.0.1:9/.../..."
    for shown in (channel.label, repr(channel), str(channel)):
        assert TOKEN not in shown
        assert PASSWORD not in shown
    # The same URL parsed again (another host, a restart) is the same channel.
    assert parse_channel(url) == channel


def test_repeats_are_dropped_blanks_skipped_and_order_kept():
    first, second = "json://127.0.0.1:9/a", "ntfy://127.0.0.1:9/topic"
    channels = parse_channels([first, "  ", second, f" {first} ", ""])
    assert [c.url for c in channels] == [first, second]


@pytest.mark.parametrize(
    ("url", "service", "dedupes"),
    [
        ("json://h.example/x", "JSON", True),
        ("jsons://h.example/x", "JSON", True),
        ("form://h.example/x", "Form", True),
        ("xml://h.example/x", "XML", True),
        ("ntfy://ntfy.example/topic", "ntfy", False),
        ("ntfys://ntfy.example/topic", "ntfy", False),
        ("mailto://127.0.0.1:25?to=a@example.com&from=b@example.com", "E-Mail", False),
        ("discord://12345678/abcdefghijklmnop", "Discord", False),
    ],
)
def test_only_receivers_that_can_drop_a_repeat_by_our_key_dedupe(url, service, dedupes):
    (channel,) = parse_channels([url])
    assert (channel.service, channel.dedupes) == (service, dedupes)


def test_a_chat_token_in_the_url_stays_out_of_the_label():
    (channel,) = parse_channels([f"discord://12345678/{TOKEN}"])
    assert TOKEN not in channel.label
    assert channel.label.startswith("discord://")


def test_parsing_does_no_network_io(webhook):
    parse_channels([webhook.url(), webhook.url(scheme="ntfy", path="/topic")])
    assert webhook.taken() == []


def test_a_channel_can_be_built_directly_and_its_url_is_not_in_its_repr():
    channel = Channel(id="n-1", label="json://h/", service="JSON", dedupes=True, url=TOKEN)
    assert TOKEN not in repr(channel)


# -- the environment ----------------------------------------------------------------------------


def test_urls_come_from_the_environment_split_on_whitespace():
    assert urls_from_env({}) == []
    assert urls_from_env({ENV_VAR: "  "}) == []
    environ = {ENV_VAR: " json://a.example/x\n\tntfy://b.example/t  mailto://c.example "}
    assert urls_from_env(environ) == [
        "json://a.example/x",
        "ntfy://b.example/t",
        "mailto://c.example",
    ]
    assert ENV_VAR == "DSH_NOTIFY_URLS"


# -- masking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        (f"json://{TOKEN}@h.example/x", "json://***@h.example/x"),
        (f"json://user:{TOKEN}@h.example/x", "json://***:***@h.example/x"),
        (f"json://h.example/api/{TOKEN}/a", "json://h.example/api/.../a"),
        (f"json://h.example/?token={TOKEN}&b=", "json://h.example/?token=***&b="),
        (f"json://h.example:8080/x?+Authorization=Bearer%20{TOKEN}", None),
        (f"tgram://123456789:{TOKEN}/12345", "tgram://***:***/..."),
        (f"slack://{TOKEN}/B1/C2", "slack://***/B1/C2"),
        ("json://localhost:9/x", "json://localhost:9/x"),
        ("json://[::1]:9/x", "json://[::1]:9/x"),
        (f"json://[::1]:{TOKEN}/x", "json://[::1]:***/x"),
        ("ntfy://abc/x", "ntfy://abc/x"),
        (f"{TOKEN} in plain text", "***"),
        (f"mailto:{TOKEN}@example.com", "mailto:***"),
        (f"JSON://H.example/{TOKEN}%2F", "json://H.example/..."),
    ],
)
def test_mask_url_hides_user_password_long_path_segments_query_values_and_token_hosts(url, masked):
    result = mask_url(url)
    assert TOKEN not in result
    if masked is not None:
        assert result == masked
