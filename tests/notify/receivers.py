"""Real receivers on 127.0.0.1 for the notify tests: a webhook (and ntfy), SMTP and a push service.

Each is a context manager that starts a server on a free port and stops it on exit. They record
what arrived and answer as the test scripts them; nothing here sleeps for an outcome
(:func:`wait_until` polls a condition with a bound).
"""

from __future__ import annotations

import base64
import email
import email.policy
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import http_ece
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import jwt as vapid_jwt

HOST = "127.0.0.1"
#: How long a hanging receiver holds a request before giving up on the test (it is released
#: when the receiver stops, so this only bounds a test that forgets to).
HANG_BOUND = 30.0


def wait_until(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    """Return once ``predicate()`` is true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s: {what or predicate}")
        pause.wait(0.01)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Request:
    """One HTTP request a receiver took."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    #: The client's address and port: one connection's requests share it.
    peer: tuple[str, int] = ("", 0)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class _Script:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    trickle: bool = False


class _HttpReceiver:
    """A threaded HTTP server that records requests and answers as scripted."""

    default_status = 200

    def __init__(self) -> None:
        self.port = free_port()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._script = _Script(status=self.default_status)
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------

    def answer(self, status: int, **headers: str) -> None:
        """Answer every request from now on with ``status`` and ``headers`` (``Retry_After``
        becomes ``Retry-After``)."""
        with self._lock:
            self._script = _Script(status, {k.replace("_", "-"): v for k, v in headers.items()})

    def hang(self) -> None:
        """Take each request from now on and never answer it (until the receiver stops)."""
        with self._lock:
            self._script = _Script(hang=True)

    def trickle(self) -> None:
        """Answer each request from now on one byte at a time, never finishing (until the
        receiver stops): every read the client makes succeeds, so only an overall bound ends
        its wait."""
        with self._lock:
            self._script = _Script(trickle=True)

    def go_down(self) -> None:
        """Close the listening socket: connections are refused until :meth:`come_up`."""
        self._stop_server()

    def come_up(self) -> None:
        """Listen again on the same port."""
        self._start_server()

    # -- what arrived ----------------------------------------------------------------------

    def taken(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    # -- the server ------------------------------------------------------------------------

    def respond(self, handler: BaseHTTPRequestHandler, request: Request) -> tuple[int, bytes]:
        """The status and body to answer ``request`` with (after recording it)."""
        return self._script.status, b"{}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _take(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = Request(
                    self.command,
                    self.path,
                    dict(self.headers.items()),
                    self.rfile.read(length),
                    (str(self.client_address[0]), int(self.client_address[1])),
                )
                with receiver._lock:
                    receiver.requests.append(request)
                    script = receiver._script
                if script.hang:
                    receiver._released.wait(HANG_BOUND)
                    self.close_connection = True
                    return
                if script.trickle:
                    self._trickle()
                    return
                status, body = receiver.respond(self, request)
                self.send_response(status)
                for name, value in script.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _trickle(self) -> None:
                self.close_connection = True
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                deadline = time.monotonic() + HANG_BOUND
                while not receiver._released.wait(0.05) and time.monotonic() < deadline:
                    try:
                        self.wfile.write(b"z")
                        self.wfile.flush()
                    except OSError:
                        return

            def do_POST(self) -> None:
                self._take()

            def do_PUT(self) -> None:
                self._take()

            def do_GET(self) -> None:
                self._take()

            def log_message(self, fmt: str, *args: Any) -> None:
                pass

        return Handler

    def _start_server(self) -> None:
        server = ThreadingHTTPServer((HOST, self.port), self._handler())
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def _stop_server(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            assert self._thread is not None
            self._thread.join(5)
            self._server = None

    def __enter__(self) -> Self:
        self._start_server()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        self._stop_server()


class WebhookReceiver(_HttpReceiver):
    """A webhook receiver (apprise's json://, form://, xml://) that is also ntfy-compatible.

    ntfy's apprise plugin posts JSON to ``/`` with the topic inside (or to ``/<topic>``); a
    200 answer carries an ntfy-like message body.
    """

    def url(self, scheme: str = "json", path: str = "/hook", query: str = "") -> str:
        return f"{scheme}://{HOST}:{self.port}{path}" + (f"?{query}" if query else "")

    def respond(self, handler: BaseHTTPRequestHandler, request: Request) -> tuple[int, bytes]:
        status = self._script.status
        if status == 200:
            return status, json.dumps({"id": secrets.token_hex(6), "event": "message"}).encode()
        return status, json.dumps({"code": status, "http": status, "error": "scripted"}).encode()

    def unique_keys(self) -> set[str]:
        """The distinct ``X-Idempotency-Key`` values that arrived (a receiver's dedupe)."""
        return {key for request in self.taken() if (key := request.header("X-Idempotency-Key"))}


class SmtpReceiver:
    """An SMTP server (aiosmtpd) on a free port that keeps every message it accepts.

    With ``password`` set, it checks ``AUTH`` against user ``reminders`` and that password,
    refusing other credentials with 535. (It does not insist on AUTH: aiosmtpd warns about
    required AUTH without TLS, and the tests' clients always log in when given a password.)
    """

    USER = "reminders"

    def __init__(self, password: str | None = None) -> None:
        self.port = free_port()
        self.password = password
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self._lock = threading.Lock()
        self._controller: Controller | None = None

    def url(self, to: str = "me@example.com", sender: str = "dsh@example.com") -> str:
        auth = f"{self.USER}:{self.password}@" if self.password else ""
        return f"mailto://{auth}{HOST}:{self.port}?to={to}&from={sender}"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        with self._lock:
            self.messages.append(message)
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 OK"

    def _authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
    ) -> AuthResult:
        login = getattr(auth_data, "login", b"") or b""
        password = getattr(auth_data, "password", b"") or b""
        ok = login == self.USER.encode() and password == (self.password or "").encode()
        return AuthResult(success=ok, handled=False)

    def taken(self) -> list[EmailMessage]:
        with self._lock:
            return list(self.messages)

    def __enter__(self) -> Self:
        kwargs: dict[str, Any] = {}
        if self.password:
            kwargs = {"authenticator": self._authenticate, "auth_require_tls": False}
        self._controller = Controller(self, hostname=HOST, port=self.port, **kwargs)
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._controller is not None
        self._controller.stop()


@dataclass(frozen=True)
class Push:
    """One push the fake service accepted and decrypted."""

    headers: dict[str, str]
    claims: dict[str, Any]
    payload: dict[str, Any]

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)


_VAPID = re.compile(r"^vapid t=([A-Za-z0-9_.-]+),\s*k=([A-Za-z0-9_-]+)$")


class FakePushService(_HttpReceiver):
    """A push service for one browser: checks VAPID, decrypts with the browser's keys.

    :meth:`subscription_json` is what that browser's ``PushSubscription.toJSON()`` would give. A
    push whose VAPID header or encryption is wrong is answered 400 and its problem kept in
    :attr:`problems`; a good one is decrypted into :attr:`pushes` and answered as scripted
    (201 by default).
    """

    default_status = 201

    def __init__(self) -> None:
        super().__init__()
        self._ua_key = ec.generate_private_key(ec.SECP256R1())
        self._auth = secrets.token_bytes(16)
        self._token = secrets.token_urlsafe(16)
        self.pushes: list[Push] = []
        self.problems: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}/push/{self._token}"

    def subscription_json(self) -> dict[str, Any]:
        public = self._ua_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": b64url(public), "auth": b64url(self._auth)},
        }

    def _problem(self, request: Request) -> tuple[str | None, Push | None]:
        if request.path != f"/push/{self._token}":
            return "unknown subscription", None
        match = _VAPID.match(request.header("Authorization") or "")
        if match is None:
            return "no VAPID authorization", None
        try:
            claims = vapid_jwt.decode(match.group(1), match.group(2))
        except Exception:
            return "bad VAPID signature", None
        if claims.get("aud") != f"http://{HOST}:{self.port}":
            return "wrong VAPID audience", None
        if not (time.time() < claims.get("exp", 0) <= time.time() + 24 * 3600):
            return "VAPID expiry out of range", None
        if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            return "no VAPID subject", None
        if request.header("Content-Encoding") != "aes128gcm":
            return "not aes128gcm", None
        try:
            plain = http_ece.decrypt(
                request.body,
                private_key=self._ua_key,
                auth_secret=self._auth,
                version="aes128gcm",
            )
        except Exception:
            return "cannot decrypt", None
        return None, Push(request.headers, claims, json.loads(plain))

    def respond(self, handler: BaseHTTPRequestHandler, request: Request) -> tuple[int, bytes]:
        problem, push = self._problem(request)
        with self._lock:
            if problem is not None:
                self.problems.append(problem)
                return 400, b"{}"
            assert push is not None
            self.pushes.append(push)
        return self._script.status, b"{}"

    def taken_pushes(self) -> list[Push]:
        with self._lock:
            return list(self.pushes)
