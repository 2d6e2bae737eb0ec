"""Fixtures: the loopback receivers of :mod:`tests.notify.receivers`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .receivers import FakePushService, SmtpReceiver, WebhookReceiver


@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def smtp() -> Iterator[SmtpReceiver]:
    with SmtpReceiver() as receiver:
        yield receiver


@pytest.fixture
def push_service() -> Iterator[FakePushService]:
    with FakePushService() as service:
        yield service
