"""Send one reminder on one apprise channel and say plainly what happened.

:func:`send` makes one attempt (the host's outbox owns retries) and returns an :class:`Outcome`:
``delivered``, ``retry`` (the receiver did not take it and may later), ``failed`` (it will not
take it; trying again will not help) or ``unknown`` (the request may have arrived: a timeout or a
dropped connection after it was sent). The reason is plain words for a person and never holds the
URL or any part of it.

apprise reports only success or failure, with per-attempt log lines. The HTTP status and the kind
of network error are read from those lines: each plugin logs ``error=<status>`` when the receiver
answers with an error, and ``Socket Exception: <error>`` when the request fails. To see the
latter (a debug line) without letting it reach the host's logs, each send gives the apprise
plugin a private logger that only apprise's per-attempt capture listens to, and
:func:`dsh_host.notify._quiet.quiet` keeps apprise's and urllib3's own loggers silent for the
send. A failure these lines do not explain counts as ``retry``. A receiver's ``Retry-After`` is
not visible through apprise, so ``Outcome.retry_after`` is always ``None`` here (Web Push, sent
without apprise, reports it).
"""

from __future__ import annotations

import http
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Literal
from urllib.parse import quote

from apprise import Apprise, AppriseAsset, NotifyFormat
from apprise.result import AppriseResultStatus

from ._channels import DEDUPING_SCHEMES, Channel
from ._markup import neutralise
from ._quiet import quiet

Status = Literal["delivered", "retry", "failed", "unknown"]

#: The payload keys a webhook receives from apprise or from us; ``Message.data`` cannot use them.
RESERVED_DATA_KEYS = frozenset({"version", "title", "message", "attachments", "type", "key", "at"})
_DATA_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")

NTFY_SCHEMES = frozenset({"ntfy", "ntfys"})
MAIL_SCHEMES = frozenset({"mailto", "mailtos"})
IDEMPOTENCY_HEADER = "X-Idempotency-Key"

COULD_NOT_CONNECT = "could not connect"
TIMED_OUT_AFTER_SEND = "timed out after the request was sent"
LOST_AFTER_SEND = "the connection was lost after the request was sent"
UNREACHABLE = "the service refused or could not be reached"
CHECK_ADDRESS = " (check the address)"


@dataclass(frozen=True)
class Message:
    """One reminder to send.

    ``key`` is the idempotency key: the same on every attempt at the same reminder, so a
    receiver that sees it twice can drop the repeat. ``at_ms`` is when the reminder was due (ms
    since the epoch, UTC). ``link`` opens the Session. ``data`` holds extra payload keys for
    webhooks and Web Push (names like identifiers, not one of :data:`RESERVED_DATA_KEYS`).
    ``ttl_seconds`` is how long a push service may hold the message for an offline device.
    """

    title: str
    body: str
    key: str
    at_ms: int
    link: str | None = None
    data: Mapping[str, str] = field(default_factory=dict, hash=False)
    ttl_seconds: int = 86400

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("a message needs an idempotency key")
        if not (self.title or self.body):
            raise ValueError("a message needs a title or a body")
        if self.ttl_seconds < 0:
            raise ValueError("a message's time to live cannot be negative")
        for name, value in self.data.items():
            if name in RESERVED_DATA_KEYS or not _DATA_KEY.fullmatch(name):
                raise ValueError(f"{name!r} cannot be a message data key")
            if not isinstance(value, str):
                raise TypeError(f"message data {name!r} must be text")
        object.__setattr__(self, "data", MappingProxyType(dict(self.data)))

    @property
    def at_iso(self) -> str:
        """``at_ms`` as ISO 8601 in UTC, to the millisecond (``2026-01-02T03:04:05.678Z``)."""
        moment = datetime.fromtimestamp(self.at_ms / 1000, tz=UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Outcome:
    """What one attempt at one channel came to.

    ``reason`` is plain words for a person (never the URL or a secret); ``retry_after`` is the
    wait in seconds the receiver asked for, when it said and we could see it; ``gone`` means a
    Web Push subscription is dead and should be pruned.
    """

    status: Status
    reason: str | None = None
    retry_after: float | None = None
    gone: bool = False


DELIVERED = Outcome("delivered")


def status_text(code: int) -> str:
    """``"503 Service Unavailable"``: the status code and its standard phrase."""
    try:
        return f"{code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP status {code}"


def outcome_for_status(code: int, retry_after: float | None = None) -> Outcome:
    """The outcome of an HTTP answer ``code`` from a notify receiver.

    2xx delivered; 408, 429 and 5xx retry; any other status failed (401 and 403 add "check the
    address"). ntfy's five-digit error codes (``42901``) count as their first three digits.
    """
    if code >= 1000:
        code = int(str(code)[:3])
    if 200 <= code < 300:
        return DELIVERED
    text = status_text(code)
    if code in (408, 429) or 500 <= code < 600:
        return Outcome("retry", text, retry_after)
    if code in (401, 403):
        return Outcome("failed", text + CHECK_ADDRESS)
    return Outcome("failed", text)


# Markers in the text of a network error, in lower case. A connection that never opened (refused,
# no such host, a connect timeout, a TLS failure) means nothing was sent: retry. A timeout or a
# dropped connection after it opened means the request may have arrived: unknown.
_NOT_CONNECTED = (
    "connection refused",
    "newconnectionerror",
    "failed to establish a new connection",
    "nameresolutionerror",
    "failed to resolve",
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "no address associated",
    "getaddrinfo failed",
    "connecttimeout",
    "connect timeout=",
    "no route to host",
    "network is unreachable",
    "host is unreachable",
    "sslerror",
    "[ssl",
    "certificate verify failed",
    "wrong version number",
    "starttls",
)
_TIMED_OUT = ("timed out", "timeout")
_LOST = (
    "connection aborted",
    "remotedisconnected",
    "connection reset",
    "broken pipe",
    "incompleteread",
    "badstatusline",
    "connection unexpectedly closed",
    "server not connected",
    "protocolerror",
)


def outcome_for_error_text(text: str) -> Outcome | None:
    """The outcome a network error's text shows, or ``None`` when it shows none of the kinds."""
    lowered = text.lower()
    if any(marker in lowered for marker in _NOT_CONNECTED):
        return Outcome("retry", COULD_NOT_CONNECT)
    if any(marker in lowered for marker in _TIMED_OUT):
        return Outcome("unknown", TIMED_OUT_AFTER_SEND)
    if any(marker in lowered for marker in _LOST):
        return Outcome("unknown", LOST_AFTER_SEND)
    return None


def _smtp_outcome(code: int) -> Outcome:
    if code in (530, 534, 535):
        return Outcome("failed", "the mail server refused the login" + CHECK_ADDRESS)
    if 400 <= code < 500:
        return Outcome("retry", f"the mail server asked to try again later ({code})")
    return Outcome("failed", f"the mail server refused the message ({code})")


# A plugin's warning when the receiver answered with an error: "..., error=503."
_HTTP_ERROR = re.compile(r"\berror=(\d{3,5})\b")
# apprise's warning for a refused e-mail recipient: "SMTP recipient x was refused: 550 ..."
_SMTP_REFUSED = re.compile(r"was refused: ([45]\d\d)\b")
# smtplib's errors read "(535, b'5.7.8 ...')".
_SMTP_REPLY = re.compile(r"\(([45]\d\d), b['\"]")
_WARNINGS = frozenset({"WARNING", "ERROR", "CRITICAL"})
_ERROR_LINES = ("Socket Exception", "I/O Exception")


def outcome_from_logs(entries: Iterable[tuple[str, str]]) -> Outcome:
    """The outcome a failed apprise attempt's ``(level, message)`` log lines show.

    Only warning lines are read for a status (debug lines can quote the message text), and only
    ``Socket Exception`` lines for a network error. What they do not explain is ``retry``.
    """
    http_code: int | None = None
    smtp_code: int | None = None
    errors: list[str] = []
    for level, message in entries:
        if level in _WARNINGS:
            if found := _HTTP_ERROR.search(message):
                http_code = int(found.group(1))
            elif found := _SMTP_REFUSED.search(message):
                smtp_code = int(found.group(1))
        if message.startswith(_ERROR_LINES):
            errors.append(message)
            if found := _SMTP_REPLY.search(message):
                smtp_code = int(found.group(1))
    if http_code is not None:
        return outcome_for_status(http_code)
    if smtp_code is not None:
        return _smtp_outcome(smtp_code)
    for error in errors:
        if (outcome := outcome_for_error_text(error)) is not None:
            return outcome
    return Outcome("retry", UNREACHABLE)


def compose(channel: Channel, message: Message) -> tuple[str, str]:
    """The ``(title, body)`` apprise sends on ``channel``.

    The body is the message's body, then its link (ntfy gets the link as its click action
    instead), then for e-mail a footer line ``Reminder key: <key>``; parts are separated by a
    blank line. Chat services get the title and body neutralised (see :mod:`._markup`).
    """
    title = neutralise(message.title, channel.service)
    parts = [neutralise(message.body, channel.service)]
    if message.link and channel.scheme not in NTFY_SCHEMES:
        parts.append(message.link)
    if channel.scheme in MAIL_SCHEMES:
        parts.append(f"Reminder key: {message.key}")
    body = "\n\n".join(part for part in parts if part)
    return title, body or title


def _encode(text: str) -> str:
    # apprise decodes these URL arguments twice (once parsing the query, once in the plugin).
    return quote(quote(text, safe=""), safe="")


def message_url(channel: Channel, message: Message) -> str:
    """``channel.url`` with this message's arguments added (the URL stays a secret).

    Webhooks (json, form, xml) get payload keys ``key``, ``at`` and ``message.data`` and the
    ``X-Idempotency-Key`` header; ntfy gets the ``alarm_clock`` tag, no icon and the link as its
    click action; e-mail gets the ``X-Idempotency-Key`` header. Later arguments win over the
    URL's own.
    """
    scheme = channel.scheme
    args: list[tuple[str, str, str]]
    if scheme in DEDUPING_SCHEMES:
        args = [
            (":", "key", message.key),
            (":", "at", message.at_iso),
            *((":", name, value) for name, value in message.data.items()),
            ("+", IDEMPOTENCY_HEADER, message.key),
        ]
    elif scheme in NTFY_SCHEMES:
        args = [("", "xtags", "alarm_clock"), ("", "image", "no")]
        if message.link:
            args.append(("", "click", message.link))
    elif scheme in MAIL_SCHEMES:
        args = [("+", IDEMPOTENCY_HEADER, message.key)]
    else:
        return channel.url
    query = "&".join(f"{prefix}{_encode(name)}={_encode(value)}" for prefix, name, value in args)
    return channel.url + ("&" if "?" in channel.url else "?") + query


def _attempt_logger() -> logging.Logger:
    # Unregistered and without a parent: only apprise's per-attempt capture (a handler it adds
    # for the attempt) sees what the plugin logs, debug lines included.
    logger = logging.Logger("dsh_host.notify.attempt", logging.DEBUG)  # noqa: LOG001
    logger.propagate = False
    logger.addHandler(logging.NullHandler())
    return logger


def send(channel: Channel, message: Message, *, timeout: float = 10.0) -> Outcome:
    """Send ``message`` on ``channel`` once and say what happened. Blocking: run it in a thread.

    One :class:`apprise.Apprise` per call, apprise's retries off, plain-text body. ``timeout``
    bounds connecting and each wait for the receiver; apprise gives up on the whole attempt after
    three times that (``unknown``). Never raises for a receiver's failure; see the module doc for
    how the outcome is read. Raises :class:`ValueError` for a ``timeout`` that is not above zero.
    """
    if not timeout > 0:
        raise ValueError("a send needs a timeout above zero")
    title, body = compose(channel, message)
    asset = AppriseAsset(
        storage_mode="memory",
        service_timeout=timeout * 3,
        image_url_mask="",
        image_url_logo="",
        interpret_emojis=False,
    )
    with quiet() as stash:
        plugin = Apprise.instantiate(message_url(channel, message), asset=asset)
        if plugin is None:
            return Outcome("failed", "the notify address could not be used")
        plugin.retry = 0
        plugin.socket_connect_timeout = timeout
        plugin.socket_read_timeout = timeout
        plugin.logger = _attempt_logger()
        apobj = Apprise(asset=asset)
        apobj.add(plugin)
        with apobj.notify(
            body=body, title=title, body_format=NotifyFormat.TEXT, log_level=logging.DEBUG
        ) as result:
            if result:
                return DELIVERED
            if any(each.status == AppriseResultStatus.TIMEOUT for each in result):
                return Outcome("unknown", TIMED_OUT_AFTER_SEND)
            entries = [(entry.level, entry.message) for entry in result.logs()]
        entries += stash
    return outcome_from_logs(entries)
