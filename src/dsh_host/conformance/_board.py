"""The board contract (:meth:`dsh_hookspecs.SessionStore.post` and ``posted``).

A plugin posts rows ``(plugin, key) -> BoardEntry`` for a live Session; a post becomes durable
with the Session's next acknowledged flush (written with the events of that batch, or alone when
none is pending), never before; ``SessionStore.posted`` reads the standing rows, and a resumed
Session starts with the stored ones. Posting the standing row writes nothing; refused posts
change nothing.
"""

from __future__ import annotations

import pytest

from dsh_hookspecs import (
    BOARD_DATA_MAX_BYTES,
    BOARD_KEY_MAX_CHARS,
    WAKE_MAX_MS,
    BoardEntry,
    Session,
    SessionNotLiveError,
)

from ._host import PLUGIN, HostSuite, Rig

__all__ = ["BoardContract"]

#: An instant the suites post (2026-08-05T12:01:00.000Z).
AT = 1_785_931_260_000
#: The row the suites post under :data:`KEY`.
ENTRY = BoardEntry(kind="pending", at_ms=AT, data={"text": "stretch", "n": [1, 2]})
KEY = "row-1"


class BoardContract(HostSuite):
    """What ``SessionStore.post`` and ``posted`` promise, observed by a plugin and on storage."""

    async def test_a_post_is_durable_after_the_acknowledged_flush_and_not_before(
        self, rig: Rig
    ) -> None:
        session, _ = await rig.noted_session()
        rig.host.services.sessions.post(session, PLUGIN, KEY, ENTRY)
        assert dict(rig.host.services.sessions.posted(session)) == {(PLUGIN, KEY): ENTRY}
        flush = await rig.held_flush(session)
        assert await rig.host.storage.stored_board(session.id) == {}
        rig.host.storage.release()
        assert await flush is True
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): ENTRY}
        stored = await rig.host.storage.stored(session.id)
        assert stored is not None
        assert len(stored) == len(session.events)  # the events it came with are stored too

    async def test_a_post_with_no_pending_event_is_written_by_the_next_flush(
        self, rig: Rig
    ) -> None:
        session = await rig.new_session()
        assert await rig.flush(session) is True
        length = len(session.events)
        rig.host.services.sessions.post(session, PLUGIN, KEY, ENTRY)
        assert await rig.flush(session) is True
        assert len(session.events) == length  # the post appended nothing
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): ENTRY}

    async def test_a_later_post_replaces_the_row_and_none_removes_it(self, rig: Rig) -> None:
        session = await rig.new_session()
        sessions = rig.host.services.sessions
        moved = BoardEntry(kind="pending", at_ms=AT + 1, data={"text": "stretch"})
        other = BoardEntry(kind="delivered", at_ms=AT - 1)
        sessions.post(session, PLUGIN, KEY, ENTRY)
        sessions.post(session, PLUGIN, "row-2", other)
        sessions.post(session, PLUGIN, KEY, moved)
        assert dict(sessions.posted(session)) == {(PLUGIN, KEY): moved, (PLUGIN, "row-2"): other}
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_board(session.id) == {
            (PLUGIN, KEY): moved,
            (PLUGIN, "row-2"): other,
        }
        sessions.post(session, PLUGIN, KEY, None)
        assert dict(sessions.posted(session)) == {(PLUGIN, "row-2"): other}
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, "row-2"): other}

    async def test_posting_the_standing_row_writes_nothing(self, rig: Rig) -> None:
        session = await self._posted(rig)
        sessions = rig.host.services.sessions
        sessions.post(
            session,
            PLUGIN,
            KEY,
            BoardEntry(kind=ENTRY.kind, at_ms=ENTRY.at_ms, data={"n": [1, 2], "text": "stretch"}),
        )
        sessions.post(session, PLUGIN, "never-posted", None)
        rig.host.storage.stall()
        assert await rig.flush(session) is True  # nothing pending: no write was needed
        assert rig.host.storage.held == 0

    @pytest.mark.parametrize(
        "key",
        ["", "k" * (BOARD_KEY_MAX_CHARS + 1), 3, None],
        ids=["empty", "too-long", "int", "none"],
    )
    async def test_a_bad_key_is_refused_and_changes_nothing(self, rig: Rig, key: object) -> None:
        session = await self._posted(rig)
        with pytest.raises(ValueError, match="board key"):
            rig.host.services.sessions.post(session, PLUGIN, key, ENTRY)  # type: ignore[arg-type]
        assert dict(rig.host.services.sessions.posted(session)) == {(PLUGIN, KEY): ENTRY}

    async def test_the_key_length_end_is_accepted(self, rig: Rig) -> None:
        session = await rig.new_session()
        key = "k" * BOARD_KEY_MAX_CHARS
        rig.host.services.sessions.post(session, PLUGIN, key, ENTRY)
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, key): ENTRY}

    @pytest.mark.parametrize(
        "entry",
        [
            {"kind": "pending", "at_ms": AT},
            BoardEntry(kind="Pending", at_ms=AT),
            BoardEntry(kind="", at_ms=AT),
            BoardEntry(kind="k" * 33, at_ms=AT),
            BoardEntry(kind="pending", at_ms=True),
            BoardEntry(kind="pending", at_ms=float(AT)),  # type: ignore[arg-type]
            BoardEntry(kind="pending", at_ms=WAKE_MAX_MS + 1),
            BoardEntry(kind="pending", at_ms=AT, data={"text": "x" * BOARD_DATA_MAX_BYTES}),
            BoardEntry(kind="pending", at_ms=AT, data={"bad": {1, 2}}),  # type: ignore[dict-item]
            BoardEntry(kind="pending", at_ms=AT, data=float("nan")),
        ],
        ids=[
            "not-an-entry",
            "kind-case",
            "kind-empty",
            "kind-too-long",
            "at-bool",
            "at-float",
            "at-too-late",
            "data-too-big",
            "data-not-json",
            "data-nan",
        ],
    )
    async def test_a_bad_entry_is_refused_and_changes_nothing(
        self, rig: Rig, entry: object
    ) -> None:
        session = await self._posted(rig)
        with pytest.raises(ValueError, match=r"board entry|wake instant"):
            rig.host.services.sessions.post(session, PLUGIN, KEY, entry)  # type: ignore[arg-type]
        assert dict(rig.host.services.sessions.posted(session)) == {(PLUGIN, KEY): ENTRY}
        rig.host.storage.stall()
        assert await rig.flush(session) is True  # the refusal queued nothing to write
        assert rig.host.storage.held == 0

    async def test_an_unknown_plugin_is_refused_and_changes_nothing(self, rig: Rig) -> None:
        session = await self._posted(rig)
        with pytest.raises(ValueError, match="loaded plugin"):
            rig.host.services.sessions.post(session, PLUGIN + "-unknown", KEY, None)
        assert dict(rig.host.services.sessions.posted(session)) == {(PLUGIN, KEY): ENTRY}
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): ENTRY}

    async def test_a_session_that_is_no_longer_live_is_refused(self, rig: Rig) -> None:
        session = await self._posted(rig)
        await rig.host.close_session(session.id)
        with pytest.raises(SessionNotLiveError):
            rig.host.services.sessions.post(session, PLUGIN, KEY, None)
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): ENTRY}

    async def test_a_resumed_session_starts_with_the_stored_rows(self, rig: Rig) -> None:
        session = await self._posted(rig)
        await rig.host.close_session(session.id)
        resumed = await rig.host.resume_session(session.id)
        assert dict(rig.host.services.sessions.posted(resumed.session)) == {(PLUGIN, KEY): ENTRY}
        created = await rig.new_session()
        assert dict(rig.host.services.sessions.posted(created)) == {}

    async def test_a_failed_write_keeps_the_post_for_the_retry(self, rig: Rig) -> None:
        session, _ = await rig.noted_session()
        rig.host.services.sessions.post(session, PLUGIN, KEY, ENTRY)
        rig.host.storage.fail_next(1)
        with pytest.raises(Exception):  # noqa: B017, PT011 - the host's own storage error
            await rig.flush(session)
        assert await rig.host.storage.stored_board(session.id) == {}
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): ENTRY}

    async def test_a_newer_post_during_a_failed_write_wins_the_retry(self, rig: Rig) -> None:
        session, _ = await rig.noted_session()
        sessions = rig.host.services.sessions
        sessions.post(session, PLUGIN, KEY, ENTRY)
        rig.host.storage.fail_next(1)
        flush = await rig.held_flush(session)
        moved = BoardEntry(kind="pending", at_ms=AT + 5)
        sessions.post(session, PLUGIN, KEY, moved)  # posted while the failing write is held
        rig.host.storage.release()
        with pytest.raises(Exception):  # noqa: B017, PT011 - the host's own storage error
            await flush
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): moved}

    @staticmethod
    async def _posted(rig: Rig) -> Session:
        """A new Session whose durable row :data:`KEY` of the recording plugin is :data:`ENTRY`."""
        session = await rig.new_session()
        rig.host.services.sessions.post(session, PLUGIN, KEY, ENTRY)
        assert await rig.flush(session) is True
        assert await rig.host.storage.stored_board(session.id) == {(PLUGIN, KEY): ENTRY}
        return session
