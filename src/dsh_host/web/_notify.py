"""The page's notification settings, Web Push subscriptions and a Session's notices.

Routes::

    GET    /api/notify                 the channels and whether Web Push is offered
    POST   /api/notify/test            send a test message on every channel now
    POST   /api/notify/push            add this browser's Web Push subscription
    DELETE /api/notify/push/{id}       remove one
    GET    /api/sessions/{id}/notices  the Session's outbox entries

``GET /api/notify`` answers ``{"channels": [{"id", "label", "service"}], "push": {"available",
"applicationServerKey"}}``: every configured channel and every Web Push subscription, each by its
masked label (a channel's address holds its secrets and is never answered); Web Push is
``available`` when the host has a public URL and its key pair is loaded, and
``applicationServerKey`` is then the key ``PushManager.subscribe`` takes (``null`` otherwise).

``POST /api/notify/test`` takes ``{"title"?, "body"?}`` (the page sends them in its language)
and sends them on every channel at once, outside the outbox, answering ``{"results": [{"id",
"label", "service", "status", "reason"}]}``: ``status`` is ``delivered``, ``retry`` (not
delivered for now), ``failed`` or ``unknown`` (sent, no answer), ``reason`` plain words or
``null``. 409 ``no_channels`` when there is none. A subscription its push service says is gone
is removed.

``POST /api/notify/push`` takes ``{"subscription": <PushSubscription.toJSON()>, "userAgent"?}``
and answers 201 ``{"id", "label"}`` (the same id again for the same endpoint): 409 ``push_off``
when Web Push is not available, 422 ``invalid_subscription`` (plain words) for one the push layer
refuses. ``DELETE /api/notify/push/{id}`` answers 204, or 404 ``subscription_not_found``.

``GET /api/sessions/{id}/notices`` answers ``{"notices": [{"key", "channel", "label",
"service", "status", "attempts", "error", "updatedAt"}]}``, oldest first, read from the outbox
without loading the Session: ``key`` is the entry's idempotency key (what the receiver saw),
``updatedAt`` the ISO UTC instant of its last change. A channel no longer configured is labelled
so. No entry and no such Session: 404 ``session_not_found`` as on the other Session routes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Mapping
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import NOTICE_BODY_MAX_CHARS, NOTICE_TITLE_MAX_CHARS, JSONValue

from ..notify import Channels
from ..persistence import OutboxBackend, OutboxRow, idempotency_key
from ._errors import ApiError, json_response
from ._handlers import Routes
from ._requests import fields, query

#: What a test message says when the page sends no words of its own.
TEST_TITLE: Final = "dsh: test notification"
TEST_BODY: Final = "If you can read this, reminders reach you here."
#: The longest ``userAgent`` kept (it only names the device in its label).
MAX_USER_AGENT_CHARS: Final = 500
#: How a notice's channel that is no longer configured is shown.
GONE_LABEL: Final = "a channel no longer configured"

_NO_QUERY: Final = frozenset[str]()
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_PUSH_OFF: Final = (
    "Web Push is off on this server: it needs a public address (dsh serve --public-url)"
)


def iso_utc(ms: int) -> str:
    """``ms`` (wall epoch milliseconds) as ``YYYY-MM-DDTHH:MM:SS.sssZ``."""
    when = _EPOCH + dt.timedelta(milliseconds=ms)
    return f"{when:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _text(body: Mapping[str, object], name: str, default: str, limit: int) -> str:
    value = body.get(name, default)
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        raise ApiError("invalid_field", f"{name} must be a string of at most {limit} characters")
    return value


class Notify(Routes):
    """The route handlers; one instance per app."""

    @property
    def channels(self) -> Channels | None:
        return self.host.channels

    def _push_key(self) -> str | None:
        """The application server key when Web Push is available, else ``None``."""
        channels = self.channels
        if (
            self.host.public_url is None
            or channels is None
            or channels.push_keys is None
            or channels.subscriptions is None
        ):
            return None
        return channels.push_keys.application_server_key

    async def _described(self) -> list[dict[str, str]]:
        """Every channel as the page shows it (the subscriptions are read from their file)."""
        channels = self.channels
        return [] if channels is None else await asyncio.to_thread(channels.describe)

    async def settings(self, request: Request) -> Response:
        query(request, _NO_QUERY)
        key = self._push_key()
        channels: list[JSONValue] = [dict(shown) for shown in await self._described()]
        return json_response(
            {
                "channels": channels,
                "push": {"available": key is not None, "applicationServerKey": key},
            }
        )

    async def test(self, request: Request) -> Response:
        query(request, _NO_QUERY)
        body = await self.api.read_body(request, required=False)
        fields(body, ("title", "body"))
        title = _text(body, "title", TEST_TITLE, NOTICE_TITLE_MAX_CHARS)
        if not title.strip():
            raise ApiError("invalid_field", "title must not be blank")
        text = _text(body, "body", TEST_BODY, NOTICE_BODY_MAX_CHARS)
        sender, channels = self.host.sender, self.channels
        if sender is None or channels is None or not channels.ids():
            raise ApiError(
                "no_channels",
                "no notification channel is configured on this server "
                "(dsh serve --notify URL, or Web Push on a device)",
            )
        shown = {entry["id"]: entry for entry in await self._described()}
        outcomes = await sender.send_test(title, text)
        results: list[JSONValue] = []
        for channel_id, entry in shown.items():
            outcome = outcomes.get(channel_id)
            if outcome is None:  # removed while the test ran
                continue
            if outcome.gone:
                await asyncio.to_thread(channels.forget, channel_id)
            results.append({**entry, "status": outcome.status, "reason": outcome.reason})
        return json_response({"results": results})

    async def subscribe(self, request: Request) -> Response:
        query(request, _NO_QUERY)
        body = await self.api.read_body(request, required=True)
        fields(body, ("subscription", "userAgent"))
        if "subscription" not in body:
            raise ApiError("missing_field", "subscription is required")
        subscription = body["subscription"]
        if not isinstance(subscription, dict):
            raise ApiError(
                "invalid_subscription",
                "subscription must be an object like PushSubscription.toJSON() gives",
            )
        agent = body.get("userAgent", request.headers.get("user-agent", ""))
        if not isinstance(agent, str):
            raise ApiError("invalid_field", "userAgent must be a string")
        agent = agent[:MAX_USER_AGENT_CHARS]
        channels = self.channels
        if self._push_key() is None or channels is None or channels.subscriptions is None:
            raise ApiError("push_off", _PUSH_OFF)
        subscriptions = channels.subscriptions
        now = self.host.clock.now_ms()
        try:
            added = await asyncio.to_thread(subscriptions.add, subscription, agent, now)
        except ValueError as exc:
            raise ApiError("invalid_subscription", str(exc)) from None
        return json_response({"id": added.id, "label": added.label}, 201)

    async def unsubscribe(self, request: Request) -> Response:
        query(request, _NO_QUERY)
        sub_id: str = request.path_params["id"]
        channels = self.channels
        subscriptions = None if channels is None else channels.subscriptions
        if subscriptions is None or not await asyncio.to_thread(subscriptions.remove, sub_id):
            raise ApiError("subscription_not_found", "no such push subscription")
        return Response(status_code=204)

    async def notices(self, request: Request) -> Response:
        sid = self.api.session_request(request)
        backend = self.host.backend
        deadline = self.api.storage.deadline()  # one storage wait for both reads
        rows: tuple[OutboxRow, ...] = ()
        if isinstance(backend, OutboxBackend):
            rows = tuple(
                await self.api.storage.run("notices", backend.outbox_of(sid), deadline=deadline)
            )
        # Entries go with their Session: with none, tell "no notice yet" from "no Session".
        if not rows and self.host.sessions.get(sid) is None:
            await self.api.stored_session(sid, "notices", deadline=deadline)
        shown = {entry["id"]: entry for entry in await self._described()}
        return json_response({"notices": [_notice(row, shown) for row in rows]})


def _notice(row: OutboxRow, shown: Mapping[str, Mapping[str, str]]) -> JSONValue:
    channel = shown.get(row.channel)
    return {
        "key": idempotency_key(row.session_id, row.plugin, row.key, row.channel),
        "channel": row.channel,
        "label": GONE_LABEL if channel is None else channel["label"],
        "service": None if channel is None else channel["service"],
        "status": row.status,
        "attempts": row.attempts,
        "error": row.error,
        "updatedAt": iso_utc(row.updated_ms),
    }
