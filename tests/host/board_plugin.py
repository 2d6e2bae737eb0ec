"""A tiny plugin that keeps board rows in step with its own events, for host and Web tests.

``test/pin`` ``{"key", "at", "text"}`` pins a row ``("pins", key) -> BoardEntry("pending", at,
{"text"})``; ``test/unpin`` ``{"key"}`` removes it. :meth:`Pins.pin` and :meth:`Pins.unpin`
append the event and post in one step (as a plugin does); on every open the plugin compares
``posted(session)`` with its fold of the Session's own events (a fork inherits none) and posts
the difference, so a resume or ``dsh reindex`` rebuilds the rows from the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_hookspecs import BoardEntry, Event, Host, JSONValue, Session, hookimpl

PLUGIN = "pins"
PIN = "test/pin"
UNPIN = "test/unpin"


def fold(events: Sequence[Event]) -> dict[str, BoardEntry]:
    """The rows ``events`` ask for, by key."""
    rows: dict[str, BoardEntry] = {}
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        if event.type == PIN:
            rows[str(data["key"])] = entry(int(data["at"]), str(data["text"]))
        elif event.type == UNPIN:
            rows.pop(str(data["key"]), None)
    return rows


def entry(at_ms: int, text: str) -> BoardEntry:
    return BoardEntry(kind="pending", at_ms=at_ms, data={"text": text})


class Pins:
    """The plugin (load it as :data:`PLUGIN`)."""

    def __init__(self) -> None:
        self.host: Host | None = None
        #: Every (session id, reason) it saw opened.
        self.opened: list[tuple[str, str]] = []

    @hookimpl
    def dsh_plugin_start(self, host: Host, config: Mapping[str, JSONValue]) -> None:
        del config
        self.host = host

    @hookimpl
    def dsh_session_opened(self, session: Session, reason: str) -> None:
        self.opened.append((session.id, reason))
        sessions = self._host().sessions
        wanted = fold(session.events[session.header.owned_from :])
        posted = {
            key: e for (plugin, key), e in sessions.posted(session).items() if plugin == PLUGIN
        }
        for key in sorted(posted.keys() - wanted.keys()):
            sessions.post(session, PLUGIN, key, None)
        for key, row in sorted(wanted.items()):
            sessions.post(session, PLUGIN, key, row)

    def pin(self, session: Session, key: str, at_ms: int, text: str = "") -> Event:
        event = session.append(PIN, {"key": key, "at": at_ms, "text": text})
        self._host().sessions.post(session, PLUGIN, key, entry(at_ms, text))
        return event

    def unpin(self, session: Session, key: str) -> Event:
        event = session.append(UNPIN, {"key": key})
        self._host().sessions.post(session, PLUGIN, key, None)
        return event

    def _host(self) -> Host:
        assert self.host is not None, "the plugin was not started"
        return self.host


def load_pins(host: Any) -> Pins:
    """Load a :class:`Pins` into ``host`` (a ``LiveHost``) and return it."""
    pins = Pins()
    host.load_plugin(PLUGIN, factory=lambda: pins)
    return pins
