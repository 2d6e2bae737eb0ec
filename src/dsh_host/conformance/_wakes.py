"""The wake-index contract (:meth:`dsh_hookspecs.SessionStore.request_wake`; docs/always-on.md).

A plugin files one standing wake request per Session; it becomes durable with the Session's next
acknowledged flush (written with the events of that batch, or alone when none is pending), never
before; ``SessionStore.wakes`` reads the standing entries, and a resumed Session starts with the
stored ones. Refused requests change nothing.
"""

from __future__ import annotations

import pytest

from dsh_hookspecs import WAKE_MAX_MS, WAKE_MIN_MS, Session, SessionNotLiveError

from ._host import PLUGIN, HostSuite, Rig

__all__ = ["WakeContract"]

#: An instant the suites file (2026-08-05T12:01:00.000Z).
AT = 1_785_931_260_000


class WakeContract(HostSuite):
    """What ``SessionStore.request_wake`` promises, observed by a plugin and on storage."""

    async def test_a_request_is_durable_after_the_acknowledged_flush_and_not_before(
        self, rig: Rig
    ) -> None:
        session, _ = await rig.noted_session()
        rig.host.services.sessions.request_wake(session, PLUGIN, AT)
        assert dict(rig.host.services.sessions.wakes(session)) == {PLUGIN: AT}
        flush = await rig.held_flush(session)
        assert await rig.host.storage.stored_wakes(session.id) == {}
        rig.host.storage.release()
        assert await flush is True
        assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: AT}
        stored = await rig.host.storage.stored(session.id)
        assert stored is not None
        assert len(stored) == len(session.events)  # the events it came with are stored too

    async def test_a_request_with_no_pending_event_is_written_by_the_next_flush(
        self, rig: Rig
    ) -> None:
        session = await rig.new_session()
        assert await rig.flush(session) is True
        length = len(session.events)
        rig.host.services.sessions.request_wake(session, PLUGIN, AT)
        assert await rig.flush(session) is True
        assert len(session.events) == length  # the request appended nothing
        assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: AT}

    async def test_a_later_request_replaces_and_none_clears_the_entry(self, rig: Rig) -> None:
        session = await rig.new_session()
        sessions = rig.host.services.sessions
        sessions.request_wake(session, PLUGIN, AT)
        sessions.request_wake(session, PLUGIN, AT + 1)
        assert dict(sessions.wakes(session)) == {PLUGIN: AT + 1}
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: AT + 1}
        sessions.request_wake(session, PLUGIN, None)
        assert dict(sessions.wakes(session)) == {}
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_wakes(session.id) == {}

    async def test_an_unchanged_request_writes_nothing(self, rig: Rig) -> None:
        session = await rig.new_session()
        sessions = rig.host.services.sessions
        sessions.request_wake(session, PLUGIN, AT)
        assert await rig.flush(session) is True
        sessions.request_wake(session, PLUGIN, AT)
        rig.host.storage.stall()
        assert await rig.flush(session) is True  # nothing pending: no write was needed
        assert rig.host.storage.held == 0

    @pytest.mark.parametrize(
        "at_ms",
        [True, 1.0, "1785931260000", WAKE_MIN_MS - 1, WAKE_MAX_MS + 1],
        ids=["bool", "float", "text", "too-early", "too-late"],
    )
    async def test_an_instant_outside_the_range_is_refused_and_changes_nothing(
        self, rig: Rig, at_ms: object
    ) -> None:
        session = await self._filed(rig)
        with pytest.raises(ValueError, match="wake instant"):
            rig.host.services.sessions.request_wake(session, PLUGIN, at_ms)  # type: ignore[arg-type]
        assert dict(rig.host.services.sessions.wakes(session)) == {PLUGIN: AT}

    async def test_the_range_ends_are_accepted(self, rig: Rig) -> None:
        session = await rig.new_session()
        for at_ms in (WAKE_MIN_MS, WAKE_MAX_MS):
            rig.host.services.sessions.request_wake(session, PLUGIN, at_ms)
            assert await rig.flush(session) is True
            assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: at_ms}

    async def test_an_unknown_plugin_is_refused_and_changes_nothing(self, rig: Rig) -> None:
        session = await self._filed(rig)
        with pytest.raises(ValueError, match="loaded plugin"):
            rig.host.services.sessions.request_wake(session, PLUGIN + "-unknown", AT)
        assert dict(rig.host.services.sessions.wakes(session)) == {PLUGIN: AT}
        assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: AT}

    async def test_a_session_that_is_no_longer_live_is_refused(self, rig: Rig) -> None:
        session = await self._filed(rig)
        await rig.host.close_session(session.id)
        with pytest.raises(SessionNotLiveError):
            rig.host.services.sessions.request_wake(session, PLUGIN, AT + 5)
        assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: AT}

    async def test_a_resumed_session_starts_with_the_stored_entries(self, rig: Rig) -> None:
        session = await self._filed(rig)
        await rig.host.close_session(session.id)
        resumed = await rig.host.resume_session(session.id)
        assert dict(rig.host.services.sessions.wakes(resumed.session)) == {PLUGIN: AT}
        created = await rig.new_session()
        assert dict(rig.host.services.sessions.wakes(created)) == {}

    async def test_a_failed_write_keeps_the_request_for_the_retry(self, rig: Rig) -> None:
        session, _ = await rig.noted_session()
        rig.host.services.sessions.request_wake(session, PLUGIN, AT)
        rig.host.storage.fail_next(1)
        with pytest.raises(Exception):  # noqa: B017, PT011 - the host's own storage error
            await rig.flush(session)
        assert await rig.host.storage.stored_wakes(session.id) == {}
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_wakes(session.id) == {PLUGIN: AT}

    @staticmethod
    async def _filed(rig: Rig) -> Session:
        """A new Session whose durable entry for the recording plugin is :data:`AT`."""
        session = await rig.new_session()
        rig.host.services.sessions.request_wake(session, PLUGIN, AT)
        assert await rig.flush(session) is True
        return session
