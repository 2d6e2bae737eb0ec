"""JSON webhooks sent by the host itself: apprise's request, on one pooled async HTTP client.

apprise opens a new connection for every message and spends about 3 ms of CPU on each, so a
herd of ten thousand reminders due at nine would reach a webhook over half a minute late. A
``json://`` or ``jsons://`` channel is therefore read by apprise once (:func:`prepare`: its
parser, so the URL means exactly what it means to apprise: method, credentials, ``+Header``,
``-param``, ``:payload`` arguments, ``verify=no``) and each message is then sent as apprise would
send it (the same payload, headers and query; a test compares the two requests byte for byte)
through the sender's pooled :class:`httpx.AsyncClient` (:class:`Webhooks`), after its host was
checked by :class:`~._guard.Resolver` and pinned to the checked address. Redirects are not
followed (one could point at an internal address): a 3xx is a failure.

A URL whose request apprise shapes in ways this module does not reproduce (another format than
plain text, a user without a password) is not prepared (``None``) and goes through apprise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import httpx
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
#: Connections kept open to receivers, across every channel.
MAX_CONNECTIONS: Final = 64


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


def outcome_of_error(exc: httpx.HTTPError) -> Outcome:
    """What a failed request came to: nothing sent (``retry``) or maybe arrived (``unknown``)."""
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return Outcome("retry", COULD_NOT_CONNECT)
    if isinstance(exc, httpx.TimeoutException):
        return Outcome("unknown", TIMED_OUT_AFTER_SEND)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return Outcome("unknown", LOST_AFTER_SEND)
    return Outcome("retry", UNREACHABLE)


class Webhooks:
    """Sends prepared webhooks on pooled connections (one client per certificate check)."""

    def __init__(self, policy: AddressPolicy | None = None) -> None:
        self.resolver = Resolver(policy or AddressPolicy())
        self._clients: dict[bool, httpx.AsyncClient] = {}

    def _client(self, verify: bool) -> httpx.AsyncClient:
        client = self._clients.get(verify)
        if client is None:
            limits = httpx.Limits(
                max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS
            )
            client = httpx.AsyncClient(verify=verify, limits=limits, follow_redirects=False)
            self._clients[verify] = client
        return client

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
        url = f"{scheme}://{pinned}:{port}{hook.path}"
        extensions = {"sni_hostname": hook.host} if hook.secure else {}
        try:
            response = await self._client(hook.verify).request(
                hook.method,
                url,
                params=dict(hook.params),
                headers=headers,
                content=body,
                auth=hook.auth,
                timeout=httpx.Timeout(timeout),
                extensions=extensions,
            )
        except httpx.HTTPError as exc:
            return outcome_of_error(exc)
        return outcome_for_status(response.status_code)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()
