"""The token rule in the Web host itself (issue 23 item 5): a token nobody could sign in with
(empty, or with whitespace around it: the guard compares an incoming token trimmed) is refused
by the server and the app alike, before anything listens. The length rule off loopback is the
``dsh`` command's (tests/host/test_cli.py)."""

from __future__ import annotations

import re

import pytest

from dsh_host import LiveHost
from dsh_host.web import Sidecar, WebConfigError, WebServer, create_app
from dsh_host.web._guard import token_problem


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("", "the token is empty"),
        (" ", "the token has spaces around it, so nobody could sign in with it"),
        (" tok-1", "the token has spaces around it, so nobody could sign in with it"),
        ("tok-1\n", "the token has spaces around it, so nobody could sign in with it"),
        ("\ttok-1", "the token has spaces around it, so nobody could sign in with it"),
        ("tök-1", "the token may hold only visible ASCII characters"),
    ],
)
def test_a_token_nobody_could_sign_in_with_is_refused(
    web_host: LiveHost, token: str, message: str
) -> None:
    # Fails before issue 23 item 5 for all but "": the server started and refused every request.
    with pytest.raises(WebConfigError, match=re.escape(message)):
        WebServer(web_host, token=token)
    sidecar = Sidecar(web_host.sessions, web_host.plugins)
    try:
        with pytest.raises(WebConfigError, match=re.escape(message)):
            create_app(web_host, sidecar=sidecar, token=token)
    finally:
        sidecar.close()


def test_the_rule_in_plain_words() -> None:
    assert token_problem("") == "the token is empty"
    assert token_problem(" x", what="DSH_TOKEN") == (
        "DSH_TOKEN has spaces around it, so nobody could sign in with it"
    )
    for foreign in ("pässwörd-long-enough", "two words here ok", "tab\tinside-long-one"):
        assert token_problem(foreign, "127.0.0.1") == (
            "the token may hold only visible ASCII characters (letters, digits, punctuation), "
            "the only ones a browser can send in a header"
        )
    assert token_problem("short") is None  # the bind is not known: only the first rule
    assert token_problem("short", "127.0.0.1") is None
    assert token_problem("short", "localhost") is None
    assert token_problem("x" * 16, "0.0.0.0") is None
    assert token_problem("x" * 15, "192.0.2.1") == (
        "the token must be at least 16 characters with no surrounding spaces to listen on "
        "192.0.2.1 (it has 15)"
    )
