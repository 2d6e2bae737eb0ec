"""Web Push: the host's VAPID key, the browsers subscribed to it, and one push to one of them.

:class:`PushKeys` is the host's VAPID key pair (RFC 8292), made on first use and kept in
``vapid.pem`` (mode 0600) in a folder; its :attr:`PushKeys.application_server_key` is what a
page passes to ``PushManager.subscribe``. :class:`Subscriptions` keeps the subscriptions a page
sends back in a JSON file beside it. :func:`send_push` encrypts one :class:`Message` for one
subscription (RFC 8291, ``aes128gcm``) with pywebpush and says what happened as an
:class:`Outcome`. A push service drops a repeat that carries the same ``Topic`` while the first is
still waiting for the device, so the Topic is a hash of the message's key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02, VapidException
from pywebpush import WebPusher

from ._quiet import quiet
from ._send import (
    DELIVERED,
    UNREACHABLE,
    Message,
    Outcome,
    outcome_for_error_text,
    status_text,
)

KEY_FILE = "vapid.pem"
SUBSCRIPTIONS_FILE = "push-subscriptions.json"

#: The largest payload we encrypt, in bytes: a push message may be 4096 bytes encrypted, of which
#: the aes128gcm header, padding delimiter and tag take 103.
MAX_PAYLOAD = 3900

#: How long a VAPID token we sign stays valid (RFC 8292 allows at most 24 hours).
VAPID_LIFETIME_SECONDS = 12 * 60 * 60

_ELLIPSIS = "\u2026"
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_MAX_ENDPOINT = 2048


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _write_private(path: Path, data: bytes) -> Path:
    """Write ``data`` to a new temporary file beside ``path``, mode 0600; return its path."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    return temporary


class PushKeys:
    """The host's VAPID key pair; use :meth:`load_or_create`."""

    def __init__(self, vapid: Vapid02) -> None:
        self._vapid = vapid
        public = vapid.public_key.public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        #: The public key, base64url without padding, for ``PushManager.subscribe``.
        self.application_server_key: str = _b64url(public)

    def __repr__(self) -> str:
        return f"PushKeys(application_server_key={self.application_server_key!r})"

    @classmethod
    def load_or_create(cls, folder: Path) -> PushKeys:
        """The key pair in ``folder/vapid.pem``, made (mode 0600) when there is none.

        Safe when several processes start at once: the file appears whole, and the first one
        written wins. Raises :class:`ValueError` when the file is not a private key.
        """
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / KEY_FILE
        if not path.exists():
            vapid = Vapid02()
            vapid.generate_keys()
            temporary = _write_private(path, vapid.private_pem())
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process made it first; use theirs
            finally:
                temporary.unlink()
        try:
            return cls(Vapid02.from_pem(path.read_bytes()))
        except (ValueError, TypeError, VapidException) as error:
            raise ValueError(f"the Web Push key file {path} is not a private key") from error

    def vapid_headers(self, endpoint: str, subject: str, now: float) -> dict[str, str]:
        """The ``Authorization`` header for a push to ``endpoint`` (RFC 8292, ``vapid t=, k=``).

        ``subject`` is the contact a push service may use: ``mailto:...`` or ``https://...``.
        """
        parts = urlsplit(endpoint)
        claims = {
            "sub": subject,
            "aud": f"{parts.scheme}://{parts.netloc}",
            "exp": int(now) + VAPID_LIFETIME_SECONDS,
        }
        try:
            headers: dict[str, str] = self._vapid.sign(claims)
        except VapidException as error:
            raise ValueError("the Web Push subject must be a mailto: or https: address") from error
        return headers


@dataclass(frozen=True)
class Subscription:
    """One browser's push subscription.

    ``id`` is ``"p-"`` and 12 hex digits of the endpoint's SHA-256. ``endpoint`` and ``keys``
    (``p256dh``, ``auth``) are secrets: whoever holds them can push to the browser. ``label`` is
    for a person ("Chrome on Linux", or the push service's host).
    """

    id: str
    endpoint: str
    keys: Mapping[str, str]
    label: str
    created_ms: int

    def __repr__(self) -> str:
        return f"Subscription(id={self.id!r}, label={self.label!r}, created_ms={self.created_ms})"


def subscription_id(endpoint: str) -> str:
    """The id of the subscription with ``endpoint`` (see :class:`Subscription`)."""
    return "p-" + hashlib.sha256(endpoint.encode()).hexdigest()[:12]


_BROWSERS = (
    ("Edg", "Edge"),
    ("OPR/", "Opera"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
)
_SYSTEMS = (
    ("Android", "Android"),
    ("iPhone", "iOS"),
    ("iPad", "iPadOS"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Macintosh", "macOS"),
    ("Linux", "Linux"),
)


def label_for(user_agent: str, endpoint: str) -> str:
    """A name a person recognises: "Firefox on Windows" from the user agent, else the push host.

    Only names from a fixed list are used, never text from the user agent itself.
    """
    browser = next((name for token, name in _BROWSERS if token in user_agent), None)
    system = next((name for token, name in _SYSTEMS if token in user_agent), None)
    if browser and system:
        return f"{browser} on {system}"
    return browser or system or (urlsplit(endpoint).hostname or "a push service")


def _endpoint_ok(endpoint: str) -> bool:
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname
    except ValueError:
        return False
    if not host or len(endpoint) > _MAX_ENDPOINT:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and host in _LOCAL_HOSTS)


def _key_ok(text: str, size: int, first: int | None = None) -> bool:
    try:
        raw = _unb64url(text)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == size and (first is None or raw[0] == first)


def _subscription(record: Mapping[str, Any], user_agent: str | None, now_ms: int) -> Subscription:
    """Check a subscription's JSON (a browser's, or a stored record) and build it."""
    endpoint = record.get("endpoint")
    keys = record.get("keys")
    if not isinstance(endpoint, str) or not _endpoint_ok(endpoint):
        raise ValueError(
            "a push subscription needs an https endpoint (or http on 127.0.0.1 or localhost)"
        )
    p256dh, auth = (keys.get("p256dh"), keys.get("auth")) if isinstance(keys, Mapping) else (0, 0)
    if not (isinstance(p256dh, str) and isinstance(auth, str)):
        raise ValueError("a push subscription needs its keys (p256dh and auth)")  # noqa: TRY004
    if not _key_ok(p256dh, 65, 0x04):
        raise ValueError("the subscription's p256dh key is not a P-256 public key")
    if not _key_ok(auth, 16):
        raise ValueError("the subscription's auth secret is not 16 bytes")
    if user_agent is None:
        label, created_ms = record.get("label"), record.get("created_ms")
        if not isinstance(label, str) or not isinstance(created_ms, int):
            raise ValueError("a stored push subscription lacks its label or time")
    else:
        label, created_ms = label_for(user_agent, endpoint), now_ms
    return Subscription(
        id=subscription_id(endpoint),
        endpoint=endpoint,
        keys={"p256dh": p256dh, "auth": auth},
        label=label,
        created_ms=created_ms,
    )


class Subscriptions:
    """The push subscriptions kept in ``folder/push-subscriptions.json`` (mode 0600).

    Every change replaces the file whole (a temporary file, then ``os.replace``), under a lock:
    safe across threads. Reads are served from the last parse while the file's identity (its
    inode, size and modification time) is unchanged, so the outbox asking for the channels at
    every write costs a ``stat``, not a parse; instances on the same folder still agree.
    Raises :class:`ValueError` when the file is damaged.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._path = folder / SUBSCRIPTIONS_FILE
        self._lock = threading.Lock()
        #: ``(identity of the file, what it held)`` as last parsed.
        self._parsed: tuple[tuple[int, int, int] | None, dict[str, Subscription]] | None = None
        with self._lock:
            self._read()

    def _identity(self) -> tuple[int, int, int] | None:
        try:
            stat = self._path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _read(self) -> dict[str, Subscription]:
        """What the file holds (a copy the caller may change)."""
        identity = self._identity()
        if self._parsed is not None and self._parsed[0] == identity:
            return dict(self._parsed[1])
        parsed = self._parse()
        self._parsed = (identity, parsed)
        return dict(parsed)

    def _parse(self) -> dict[str, Subscription]:
        try:
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            records = json.loads(text)["subscriptions"]
            subscriptions = [_subscription(record, None, 0) for record in records]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"the push subscriptions file {self._path} is damaged") from error
        return {subscription.id: subscription for subscription in subscriptions}

    def _write(self, subscriptions: dict[str, Subscription]) -> None:
        records = [
            {
                "id": each.id,
                "endpoint": each.endpoint,
                "keys": dict(each.keys),
                "label": each.label,
                "created_ms": each.created_ms,
            }
            for each in subscriptions.values()
        ]
        data = json.dumps({"version": 1, "subscriptions": records}, indent=1).encode()
        self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_private(self._path, data).replace(self._path)

    def add(
        self, subscription_json: Mapping[str, Any], user_agent: str, now_ms: int
    ) -> Subscription:
        """Keep the browser's subscription (``PushSubscription.toJSON()``); return it.

        A subscription with the same endpoint is replaced. Raises :class:`ValueError`, in plain
        words that never quote the input, when the JSON is not a usable subscription.
        """
        subscription = _subscription(subscription_json, user_agent, now_ms)
        with self._lock:
            subscriptions = self._read()
            subscriptions[subscription.id] = subscription
            self._write(subscriptions)
        return subscription

    def remove(self, sub_id: str) -> bool:
        """Forget the subscription ``sub_id``; whether there was one."""
        with self._lock:
            subscriptions = self._read()
            if subscriptions.pop(sub_id, None) is None:
                return False
            self._write(subscriptions)
            return True

    def all(self) -> tuple[Subscription, ...]:
        """Every subscription, oldest first."""
        with self._lock:
            return tuple(self._read().values())

    def get(self, sub_id: str) -> Subscription | None:
        """The subscription ``sub_id``, or ``None``."""
        with self._lock:
            return self._read().get(sub_id)


def topic_for(key: str) -> str:
    """The Web Push ``Topic`` for idempotency key ``key``: 32 base64url characters of a hash."""
    return _b64url(hashlib.sha256(key.encode()).digest())[:32]


def push_payload(message: Message) -> bytes:
    """The JSON a service worker receives: ``title``, ``body``, ``key``, ``url`` and ``data``.

    The body is shortened (ending in an ellipsis) so the whole fits :data:`MAX_PAYLOAD` bytes.
    """
    body = message.body
    while True:
        fields = {
            "title": message.title,
            "body": body,
            "key": message.key,
            "url": message.link,
            "data": dict(message.data),
        }
        raw = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
        excess = len(raw) - MAX_PAYLOAD
        if excess <= 0 or not body:
            return raw
        encoded = body.encode()
        keep = len(encoded) - excess - len(_ELLIPSIS.encode())
        body = encoded[:keep].decode(errors="ignore") + _ELLIPSIS if keep > 0 else ""


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """A ``Retry-After`` header as seconds from ``now``: delay-seconds or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:  # "-0000": a time in UTC
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - now)


def push_outcome(code: int, retry_after: str | None, now: float) -> Outcome:
    """The outcome of a push service's answer ``code`` (with its ``Retry-After`` header).

    2xx delivered; 404 and 410 failed and gone (the subscription has ended); 408, 429 and 5xx
    retry, with the wait the service asked for; other statuses failed.
    """
    if 200 <= code < 300:
        return DELIVERED
    text = status_text(code)
    if code in (404, 410):
        return Outcome("failed", f"{text} (the subscription has ended)", gone=True)
    if code in (408, 429) or 500 <= code < 600:
        return Outcome("retry", text, retry_after_seconds(retry_after, now))
    if code in (401, 403):
        return Outcome("failed", f"{text} (the push service did not accept our key)")
    if code == 413:
        return Outcome("failed", f"{text} (the message is too large)")
    return Outcome("failed", text)


def send_push(
    sub: Subscription, message: Message, keys: PushKeys, *, subject: str, timeout: float
) -> Outcome:
    """Push ``message`` to ``sub`` once and say what happened. Blocking: run it in a thread.

    Headers: ``Topic`` (:func:`topic_for` the key), ``Urgency: high``, ``TTL`` the message's
    time to live, and VAPID for ``subject``. A refused connection is ``retry``; a timeout after
    the request went is ``unknown`` (the Topic lets the service drop a repeat, so the host may
    send it again). Raises :class:`ValueError` when ``subject`` is not a mailto: or https: address
    or ``timeout`` is not above zero.
    """
    if not timeout > 0:
        raise ValueError("a push needs a timeout above zero")
    now = time.time()
    headers = {"Topic": topic_for(message.key), "Urgency": "high"}
    headers.update(keys.vapid_headers(sub.endpoint, subject, now))
    pusher = WebPusher({"endpoint": sub.endpoint, "keys": dict(sub.keys)})
    with quiet():
        try:
            response = pusher.send(
                push_payload(message),
                headers,
                ttl=message.ttl_seconds,
                content_encoding="aes128gcm",
                timeout=timeout,
            )
        except requests.RequestException as error:
            seen = outcome_for_error_text(f"{type(error).__name__}: {error}")
            return seen or Outcome("retry", UNREACHABLE)
    return push_outcome(response.status_code, response.headers.get("Retry-After"), time.time())
