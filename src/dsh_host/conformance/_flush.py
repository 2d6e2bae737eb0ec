"""The flush contract (docs/design.md section 3.6, :meth:`dsh_hookspecs.SessionStore.flush`).

``flush(session)`` captures ``through_seq = len(session.events)`` when it is entered, returns
``True`` only once storage acknowledged the write, then publishes ``dsh_session_flushed(session,
through_seq)``; a failed flush raises and publishes nothing; a Session that is no longer live
cannot be flushed (nor appended to).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from dsh_hookspecs import Event, SessionNotLiveError

from ._host import HostSuite, Rig

__all__ = ["FlushContract"]


def _same(stored: Sequence[Event], live: Sequence[Event]) -> bool:
    return [(e.seq, e.type, e.data) for e in stored] == [(e.seq, e.type, e.data) for e in live]


class FlushContract(HostSuite):
    """What ``SessionStore.flush`` promises, observed by a plugin and on storage."""

    async def test_an_acknowledged_flush_is_true_stored_and_published_with_its_boundary(
        self, rig: Rig
    ) -> None:
        session = await rig.new_session()
        rig.note(session, 1)
        rig.note(session, 2)
        boundary = len(session.events)
        assert await rig.flush(session) is True
        assert rig.recorder.flushed[-1] == (session.id, boundary)
        stored = await rig.host.storage.stored(session.id)
        assert stored is not None
        assert _same(stored[:boundary], session.events[:boundary])

    async def test_the_boundary_is_captured_at_entry_while_a_suffix_is_appended(
        self, rig: Rig
    ) -> None:
        session = await rig.new_session()
        rig.note(session, 1)
        boundary = len(session.events)
        flush = await rig.held_flush(session)
        rig.note(session, 2)  # appended while the flush waits for storage
        rig.host.storage.release()
        assert await flush is True
        assert rig.recorder.flushed[-1] == (session.id, boundary)
        assert len(session.events) == boundary + 1

    async def test_true_comes_only_after_storage_acknowledged_and_before_that_nothing_is_published(
        self, rig: Rig
    ) -> None:
        session, published = await rig.noted_session()
        flush = await rig.held_flush(session)
        assert not flush.done()
        assert len(rig.recorder.flushed) == published
        rig.host.storage.release()
        assert await flush is True
        assert rig.recorder.flushed[published:] == [(session.id, len(session.events))]

    async def test_a_failed_write_fails_the_flush_publishes_nothing_and_a_retry_writes_once(
        self, rig: Rig
    ) -> None:
        session, published = await rig.noted_session()
        rig.host.storage.fail_next(1)
        with pytest.raises(Exception):  # noqa: B017, PT011 - the host's own storage error
            await rig.flush(session)
        assert len(rig.recorder.flushed) == published
        rig.note(session, 2)
        assert await rig.flush(session) is True
        assert rig.recorder.flushed[published:] == [(session.id, len(session.events))]
        stored = await rig.host.storage.stored(session.id)
        assert stored is not None
        assert _same(stored, session.events)  # the retry wrote what was missing, once

    async def test_concurrent_flushes_each_publish_their_own_entry_boundary(self, rig: Rig) -> None:
        session, published = await rig.noted_session()
        boundaries = [len(session.events)]
        first = await rig.held_flush(session)
        rig.note(session, 2)
        boundaries.append(len(session.events))
        second = rig.flush(session)
        rig.host.storage.release()
        assert list(await asyncio.gather(first, second)) == [True, True]
        # In either order of completion; a consumer keeps the maximum.
        observed = sorted(seq for sid, seq in rig.recorder.flushed[published:] if sid == session.id)
        assert observed == boundaries

    async def test_a_session_that_is_no_longer_live_cannot_be_flushed_or_appended_to(
        self, rig: Rig
    ) -> None:
        session = await rig.new_session()
        rig.note(session, 1)
        await rig.host.close_session(session.id)
        assert rig.host.services.sessions.get(session.id) is None
        published = len(rig.recorder.flushed)
        with pytest.raises(SessionNotLiveError):
            await rig.flush(session)
        with pytest.raises(SessionNotLiveError):
            rig.note(session, 2)
        assert len(rig.recorder.flushed) == published
        # Resumed, the Session is live again as a new object; the old one stays refused.
        resumed = await rig.host.resume_session(session.id)
        assert resumed.session is not session
        assert await rig.flush(resumed.session) is True
        with pytest.raises(SessionNotLiveError):
            await rig.flush(session)
