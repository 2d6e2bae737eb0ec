"""The guard in front of every route: authentication, anti-forgery, security headers.

Everything under ``/api`` passes it first. With a token: ``Authorization: Bearer <token>``,
compared in constant time. Without one the server listens on loopback only, and two browser
attacks remain, both refused here: another site's page posting to it (cross-site request
forgery: refused by ``Origin``) and another site's name resolving to 127.0.0.1 (DNS rebinding:
refused by ``Host``). The page, ``/sw.js``, ``/static`` and ``/plugins`` need no token: scripts
cannot send headers, and the page reads its token from ``?token=`` (then keeps it for the tab and
takes it out of the address bar).

:func:`token_problem` is the rule a token must meet before a server starts with it: not empty, no
whitespace around it (an incoming token is compared trimmed, so nobody could ever sign in), and
off loopback at least :data:`MIN_REMOTE_TOKEN_CHARS` characters.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Callable, Mapping
from typing import Final

from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._errors import error_response

#: The page runs only its own code: scripts, styles, fetches and the event stream from this
#: origin, no inline script, handler or ``style=`` attribute (the client sets styles through the
#: CSSOM, and its ``dsh-config`` block is JSON data, never run), no plugins, no ``<base>``, no
#: form posts elsewhere, never framed. ``data:`` images serve the empty favicon. A Session string
#: that slipped past the client's text-only rendering would still not run.
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)

#: Set on every response that does not set them itself (assets choose their own Cache-Control):
#: nothing may be cached, sniffed or framed, and the page URL's ``?token=`` never leaks through a
#: Referer header.
RESPONSE_HEADERS: Final[Mapping[str, str]] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


#: The fewest characters of a token that guards a server other machines can reach.
MIN_REMOTE_TOKEN_CHARS: Final = 16


def token_problem(
    token: str, bind_host: str | None = None, *, what: str = "the token"
) -> str | None:
    """Why ``token`` cannot guard a server bound to ``bind_host``, in plain words naming it
    ``what``; ``None`` when it can. ``bind_host=None``: judge only what holds on any bind."""
    if not token:
        return f"{what} is empty"
    if token != token.strip():
        return f"{what} has spaces around it, so nobody could sign in with it"
    if not all("!" <= char <= "~" for char in token):
        return (
            f"{what} may hold only visible ASCII characters (letters, digits, punctuation), "
            "the only ones a browser can send in a header"
        )
    if bind_host is not None and not is_loopback(bind_host) and len(token) < MIN_REMOTE_TOKEN_CHARS:
        return (
            f"{what} must be at least {MIN_REMOTE_TOKEN_CHARS} characters with no surrounding "
            f"spaces to listen on {bind_host} (it has {len(token)})"
        )
    return None


def _is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _header(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address, IPv6 optionally in brackets) is this machine only."""
    if host.lower() == "localhost":
        return True
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: A ``Host`` value: a name or IPv4 address, or ``[IPv6]``, then an optional ``:port`` of digits.
_AUTHORITY: Final = re.compile(r"(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::[0-9]{1,5})?")


def _host_name(authority: str) -> str | None:
    """The host part of a ``Host`` header value (``[::1]:80`` -> ``::1``); ``None`` if malformed."""
    match = _AUTHORITY.fullmatch(authority)
    if match is None:
        return None
    return match.group(1) or match.group(2)


class Guard:
    """Authentication, anti-forgery and security headers, before any route runs.

    ``token``: the bearer token (``None``: a loopback-only server, guarded by ``Host`` and
    ``Origin`` instead). ``closing()``: true once the server stops taking API requests.
    """

    def __init__(self, app: ASGIApp, token: bytes | None, closing: Callable[[], bool]) -> None:
        self.app = app
        self.token = token
        self.closing = closing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_response_headers(send)
        if _is_api(scope["path"]):
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        if self.closing():
            return error_response("shutting_down", "the server is stopping")
        if self.token is not None:
            values = _header(scope, b"authorization")
            if len(values) != 1 or not _bearer_matches(values[0], self.token):
                return error_response(
                    "unauthorized",
                    "this server requires Authorization: Bearer <token>",
                    {"WWW-Authenticate": "Bearer"},
                )
            return None
        # Token-less servers listen on loopback only; keep other sites' pages out of them.
        hosts = _header(scope, b"host")
        authority = hosts[0].decode("latin-1") if hosts else None
        name = None if authority is None else _host_name(authority)
        if len(hosts) > 1 or (authority is not None and (name is None or not is_loopback(name))):
            return error_response("forbidden_host", "the Host header must name a loopback address")
        # Browsers send Origin on every cross-origin request (and on same-origin POSTs). This
        # server speaks plain HTTP, so its own pages have exactly the origin http://<Host>.
        own = None if authority is None else f"http://{authority}".lower()
        for origin in _header(scope, b"origin"):
            if origin.decode("latin-1").lower() != own:
                return error_response(
                    "forbidden_origin", "requests from other origins are not accepted"
                )
        return None


def _bearer_matches(value: bytes, token: bytes) -> bool:
    scheme, _, credentials = value.strip().partition(b" ")
    # Compare even on a wrong scheme so the timing says nothing about which part was wrong.
    matches = hmac.compare_digest(credentials.strip(), token)
    return scheme.lower() == b"bearer" and matches


def _with_response_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in RESPONSE_HEADERS.items():
                headers.setdefault(name, value)
        await send(message)

    return wrapped
