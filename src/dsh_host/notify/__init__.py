"""Reminders outside the tab: send one message on one channel and say what happened.

The host's outbox decides what to send and when to try again; this package does one attempt:

* :mod:`._channels`: notify URLs (apprise) checked once and named without their secrets
  (:class:`Channel`, :func:`parse_channels`, :func:`urls_from_env`, :func:`mask_url`);
* :mod:`._send`: one :class:`Message` on one channel through apprise, read back as an
  :class:`Outcome` (:func:`send`);
* :mod:`._webpush`: the host's VAPID key (:class:`PushKeys`), browsers' subscriptions
  (:class:`Subscriptions`) and one push (:func:`send_push`);
* :mod:`._markup`: chat text made inert (:func:`neutralise`);
* :mod:`._sender`: the outbox's send worker (:class:`OutboxSender`), which claims due entries
  from storage, sends each on its :class:`Channels` and settles it.

The channel modules import nothing else from ``dsh_host``, and each send is blocking (run it
in a worker thread); only the sender sits above storage.
"""

from __future__ import annotations

from ._channels import (
    ENV_VAR,
    Channel,
    ChannelError,
    channel_id,
    mask_url,
    parse_channel,
    parse_channels,
    urls_from_env,
)
from ._markup import CHAT_SERVICES, neutralise
from ._send import (
    IDEMPOTENCY_HEADER,
    Message,
    Outcome,
    outcome_for_error_text,
    outcome_for_status,
    outcome_from_logs,
    send,
)
from ._sender import RETRY_BASE_SECONDS, Channels, OutboxSender
from ._webpush import (
    PushKeys,
    Subscription,
    Subscriptions,
    push_outcome,
    push_payload,
    retry_after_seconds,
    send_push,
    subscription_id,
    topic_for,
)

__all__ = [
    "CHAT_SERVICES",
    "ENV_VAR",
    "IDEMPOTENCY_HEADER",
    "RETRY_BASE_SECONDS",
    "Channel",
    "ChannelError",
    "Channels",
    "Message",
    "OutboxSender",
    "Outcome",
    "PushKeys",
    "Subscription",
    "Subscriptions",
    "channel_id",
    "mask_url",
    "neutralise",
    "outcome_for_error_text",
    "outcome_for_status",
    "outcome_from_logs",
    "parse_channel",
    "parse_channels",
    "push_outcome",
    "push_payload",
    "retry_after_seconds",
    "send",
    "send_push",
    "subscription_id",
    "topic_for",
    "urls_from_env",
]
