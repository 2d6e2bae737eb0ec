"""JSON webhooks sent by the host itself: apprise's request, on one pooled async HTTP client.

apprise opens a new connection for every message and spends about 3 ms of CPU on each, so a
herd of ten thousand reminders due at nine would reach a webhook over half a minute late. A
``json://`` or ``jsons://`` channel is therefore read by apprise once (:func:`prepare`: its
parser, so the URL means exactly what it means to apprise: method, credentials, ``+Header``,
``-param``, ``:payload`` arguments, ``verify=no``) and each message is then sent as apprise would
send it (the same payload, headers and query; a test compares the two requests byte for byte)
through one pooled :class:`aiohttp.ClientSession` (:class:`Webhooks`), after its host was
checked by :class:`~._guard.Resolver` and pinned to the checked address (the URL's host kept as
the ``Host`` header and the TLS server name). Redirects are not
followed (one could point at an internal address): a 3xx is a failure.

A URL whose request apprise shapes in ways this module does not reproduce (another format than
plain text, a user without a password) is not prepared (``None``) and goes through apprise.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode

import aiohttp
import yarl
from apprise import Apprise, AppriseAsset, NotifyFormat, NotifyType
from apprise.plugins.custom_json import NotifyJSON

from ._channels import Channel
from ._guard import AddressPolicy, AddressRefusedError, Resolver
from ._quiet import quiet
from ._send import (
    COULD_NOT_CONNECT,
    IDEMPOTENCY_HEADER,
    LOST_AFTER_SEND,
    TIMED_OUT_AFTER_SEND,
    UNREACHABLE,
    Message,
    Outcome,
    compose,
    outcome_for_status,
)

__all__ = ["PreparedWebhook", "Webhooks", "prepare", "request_of"]

JSON_SCHEMES: Final = frozenset({"json", "jsons"})
#: Connections kept open to receivers, across every channel (more requests wait for one).
MAX_CONNECTIONS: Final = 32


@dataclass(frozen=True, slots=True)
class PreparedWebhook:
    """What apprise read from one ``json://`` URL (no message in it yet)."""

    method: str
    secure: bool
    host: str
    port: int | None
    path: str
    params: Mapping[str, str]
    headers: Mapping[str, str]
    extras: Mapping[str, str]
    auth: tuple[str, str] | None
    verify: bool
    version: str
    user_agent: str


def prepare(channel: Channel) -> PreparedWebhook | None:
    """``channel`` read by apprise's JSON plugin, or ``None`` when it is not a JSON webhook this
    module sends the way apprise would (see the module docstring)."""
    if channel.scheme not in JSON_SCHEMES:
        return None
    with quiet():
        plugin = Apprise.instantiate(channel.url, asset=AppriseAsset(storage_mode="memory"))
    if not isinstance(plugin, NotifyJSON):
        return None
    if plugin.resolve_format(NotifyFormat.TEXT) != NotifyFormat.TEXT:
        return None
    user, password = plugin.user, plugin.password
    if user and password is None:
        return None
    try:
        f"{user or ''}:{password or ''}".encode("latin-1")
    except UnicodeEncodeError:
        return None  # apprise's client decides how such credentials are written
    return PreparedWebhook(
        method=str(plugin.method),
        secure=bool(plugin.secure),
        host=str(plugin.host),
        port=plugin.port if isinstance(plugin.port, int) else None,
        path=str(plugin.fullpath),
        params=dict(plugin.params),
        headers=dict(plugin.headers),
        extras=dict(plugin.payload_extras),
        auth=(str(user), str(password)) if user else None,
        verify=bool(plugin.verify_certificate),
        version=str(plugin.json_version),
        user_agent=str(plugin.app_id),
    )


def request_of(
    hook: PreparedWebhook, channel: Channel, message: Message
) -> tuple[dict[str, str], bytes]:
    """The headers and body apprise would send for ``message`` (title and body composed as for
    apprise, our key, instant and data as payload arguments, the key as a header)."""
    title, body = compose(channel, message)
    payload: dict[str, object] = {
        "version": hook.version,
        "title": title,
        "message": body,
        "attachments": [],
        "type": NotifyType.INFO.value,
    }
    extras = {**hook.extras, "key": message.key, "at": message.at_iso, **message.data}
    for name, value in extras.items():
        if name in payload:  # apprise's renaming (or dropping) of its own fields
            if value:
                payload[value] = payload[name]
            del payload[name]
        else:
            payload[name] = value
    headers = {
        "User-Agent": hook.user_agent,
        "Content-Type": "application/json",
        **hook.headers,
        IDEMPOTENCY_HEADER: message.key,
    }
    return headers, json.dumps(payload).encode()


def outcome_of_error(exc: BaseException) -> Outcome:
    """What a failed request came to: nothing sent (``retry``) or maybe arrived (``unknown``)."""
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        return Outcome("retry", COULD_NOT_CONNECT)
    if isinstance(exc, TimeoutError):  # aiohttp's read timeouts are TimeoutErrors too
        return Outcome("unknown", TIMED_OUT_AFTER_SEND)
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | OSError):
        return Outcome("unknown", LOST_AFTER_SEND)
    return Outcome("retry", UNREACHABLE)


class Webhooks:
    """Sends prepared webhooks on pooled connections (one :class:`aiohttp.ClientSession`)."""

    def __init__(self, policy: AddressPolicy | None = None) -> None:
        self.resolver = Resolver(policy or AddressPolicy())
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, use_dns_cache=False)
            self._session = aiohttp.ClientSession(
                connector=connector, auto_decompress=False, skip_auto_headers=("User-Agent",)
            )
        return self._session

    async def send(
        self, hook: PreparedWebhook, channel: Channel, message: Message, *, timeout: float
    ) -> Outcome:
        """Send ``message`` once and say what happened (never raises for the receiver's
        failure; a refused address is ``failed``)."""
        if not timeout > 0:
            raise ValueError("a send needs a timeout above zero")
        port = hook.port or (443 if hook.secure else 80)
        try:
            address = await self.resolver.address(hook.host, port)
        except AddressRefusedError as exc:
            return Outcome("failed", str(exc))
        except OSError:
            return Outcome("retry", COULD_NOT_CONNECT)
        headers, body = request_of(hook, channel, message)
        scheme = "https" if hook.secure else "http"
        default = port == (443 if hook.secure else 80)
        named = f"[{hook.host}]" if ":" in hook.host else hook.host
        headers["Host"] = named if default else f"{named}:{port}"
        pinned = f"[{address}]" if ":" in address else address
        query = urlencode(hook.params)  # as requests encodes it (apprise's client)
        url = yarl.URL(
            f"{scheme}://{pinned}:{port}{hook.path}" + (f"?{query}" if query else ""),
            encoded=True,
        )
        if hook.auth is not None:  # as requests writes it (latin-1, like HTTP/1.1 headers)
            user, password = hook.auth
            token = base64.b64encode(f"{user}:{password}".encode("latin-1")).decode()
            headers["Authorization"] = f"Basic {token}"
        try:
            async with self._client().request(
                hook.method,
                url,
                data=body,
                headers=headers,
                allow_redirects=False,
                ssl=bool(hook.verify),
                server_hostname=hook.host if hook.secure else None,
                timeout=aiohttp.ClientTimeout(
                    total=timeout * 3, sock_connect=timeout, sock_read=timeout
                ),
            ) as response:
                await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return outcome_of_error(exc)
        return outcome_for_status(status)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
