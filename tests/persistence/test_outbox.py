"""The outbox in storage, the same promises on every backend.

:class:`OutboxStorage` holds the cases every backend passes (entries filed with their events or
not at all, one per channel and never twice, withdrawn while pending, claimed earliest first,
settled only under their claim, listed per Session, deleted with it); ``Test<Backend>``
subclasses say how to build each backend, as in test_board.py. The durable ones also say how to
damage a stored notice from outside. The cases that only one backend has follow: SQLite's
migration of a version 4 store and the index a claim reads; PostgreSQL's migration and two hosts
claiming from one database at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

import psycopg
import pytest
from structlog.testing import capture_logs

from dsh_hookspecs import Notice
from dsh_host.conformance import make_events, make_header
from dsh_host.persistence import (
    Backend,
    MemoryBackend,
    OutboxBackend,
    OutboxChange,
    OutboxClaim,
    OutboxRow,
    PostgresBackend,
    Settlement,
    SQLiteBackend,
    StorageConflictError,
    Write,
    idempotency_key,
    opened,
)
from dsh_host.persistence._outbox import ERROR_MAX_CHARS
from dsh_host.persistence.postgres import SCHEMA_VERSION as PG_SCHEMA_VERSION
from dsh_host.persistence.sqlite import SCHEMA_VERSION
from dsh_host.testing import FaultInjectingBackend
from tests.pg import Cluster, pg_cluster  # noqa: F401 - the session's PostgreSQL cluster

DB = "dsh.sqlite3"
PLUGIN = "schedule"
AT = 1_785_931_260_000  # 2026-08-05T12:01:00.000Z
CHANNELS = ("email", "ntfy")


class Store(Backend, OutboxBackend, Protocol):
    """A backend that keeps the outbox (all three here)."""


def notice(title: str = "Stretch", at_ms: int = AT, **extra: object) -> Notice:
    return Notice(title=title, at_ms=at_ms, **extra)  # type: ignore[arg-type]


def filed(
    key: str,
    due_ms: int = AT,
    channels: tuple[str, ...] = CHANNELS,
    title: str = "Stretch",
    plugin: str = PLUGIN,
) -> OutboxChange:
    return OutboxChange(plugin, key, notice(title), channels, due_ms)


def withdrawn(key: str, plugin: str = PLUGIN) -> OutboxChange:
    return OutboxChange(plugin, key, None)


def pending_row(
    sid: str, key: str, channel: str, due_ms: int = AT, title: str = "Stretch"
) -> OutboxRow:
    """An entry as an append files it."""
    return OutboxRow(
        session_id=sid,
        plugin=PLUGIN,
        key=key,
        channel=channel,
        notice=notice(title),
        status="pending",
        attempts=0,
        next_ms=due_ms,
        error=None,
        updated_ms=due_ms,
    )


def states(rows: object) -> list[tuple[str, str, str, str]]:
    """``(session_id, key, channel, status)`` of each row, in order."""
    return [(r.session_id, r.key, r.channel, r.status) for r in rows]  # type: ignore[attr-defined]


def claimed_keys(claims: list[OutboxClaim] | object) -> list[tuple[str, str, str, bool]]:
    return [
        (c.row.session_id, c.row.key, c.row.channel, c.ambiguous)
        for c in claims  # type: ignore[attr-defined]
    ]


class OutboxStorage:
    """What every backend promises of the outbox."""

    def make(self, tmp_path: Path) -> Store:
        raise NotImplementedError

    def reopen(self, closed: Store, tmp_path: Path) -> Store:
        raise NotImplementedError

    @pytest.fixture
    async def backend(self, tmp_path: Path) -> AsyncIterator[Store]:
        backend = self.make(tmp_path)
        assert isinstance(backend, OutboxBackend)
        await backend.open()
        try:
            yield backend
        finally:
            await backend.close()

    async def _reopened(self, backend: Store, tmp_path: Path) -> Store:
        await backend.close()
        again = self.reopen(backend, tmp_path)
        await again.open()
        return again

    async def _created(self, backend: Store, sid: str = "s1", created: int = 1) -> None:
        await backend.append(Write(sid, 0, make_events(0, 1), make_header(sid, created)))

    # -- failure paths first -----------------------------------------------------------------

    async def test_a_conflicting_append_files_no_outbox_entry(self, backend: Store) -> None:
        await backend.append(
            Write("s1", 0, make_events(0, 2), make_header("s1"), outbox=[filed("a")])
        )
        with pytest.raises(StorageConflictError):
            await backend.append(
                Write("s1", 1, make_events(1, 1), outbox=[filed("b"), withdrawn("a")])
            )  # the stored length is 2
        with pytest.raises(StorageConflictError):  # a create of an existing id
            await backend.append(Write("s1", 0, [], make_header("s1"), outbox=[filed("c")]))
        with pytest.raises(StorageConflictError):  # an append to an absent Session
            await backend.append(Write("nope", 0, [], outbox=[filed("d")]))
        assert await backend.outbox_of("s1") == [
            pending_row("s1", "a", "email"),
            pending_row("s1", "a", "ntfy"),
        ]
        assert await backend.outbox_of("nope") == []
        stored = await backend.load("s1")
        assert stored is not None
        assert len(stored.events) == 2

    async def test_malformed_claims_and_settles_are_refused(self, backend: Store) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", channels=("email",))]))
        with pytest.raises(ValueError, match="limit"):
            await backend.claim_outbox(AT, -1, "host-a", AT + 10)
        with pytest.raises(ValueError, match="owner"):
            await backend.claim_outbox(AT, 5, "", AT + 10)
        with pytest.raises(ValueError, match="before now"):
            await backend.claim_outbox(AT, 5, "host-a", AT - 1)
        with pytest.raises(ValueError, match="now_ms"):
            await backend.claim_outbox("soon", 5, "host-a", AT)  # type: ignore[arg-type]
        assert await backend.claim_outbox(AT, 0, "host-a", AT + 10) == []
        (claim,) = await backend.claim_outbox(AT, 5, "host-a", AT + 10)
        with pytest.raises(ValueError, match="pending or a final state"):
            await backend.settle_outbox(claim.row, "host-a", status="sending", now_ms=AT)
        with pytest.raises(ValueError, match="pending or a final state"):
            await backend.settle_outbox(claim.row, "host-a", status="lost", now_ms=AT)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="next_ms"):
            await backend.settle_outbox(claim.row, "host-a", status="pending", now_ms=AT)
        with pytest.raises(ValueError, match="error"):
            await backend.settle_outbox(
                claim.row,
                "host-a",
                status="failed",
                now_ms=AT,
                error=42,  # type: ignore[arg-type]
            )
        for bad_row, owner, now, next_ms, match in (
            ("row", "host-a", AT, None, "OutboxRow"),
            (claim.row, "", AT, None, "owner"),
            (claim.row, "host-a", 1.5, None, "now_ms"),
            (claim.row, "host-a", AT, "later", "next_ms"),
            (claim.row, "host-a", AT, 2**64, "64 bits"),
        ):
            with pytest.raises(ValueError, match=match):
                await backend.settle_outbox(
                    bad_row,  # type: ignore[arg-type]
                    owner,
                    status="failed",
                    now_ms=now,  # type: ignore[arg-type]
                    next_ms=next_ms,  # type: ignore[arg-type]
                )
        (row,) = await backend.outbox_of("s1")
        assert (row.status, row.attempts) == ("sending", 1)  # nothing was settled

    async def test_a_batch_of_settlements_is_fenced_one_by_one_and_refused_whole(
        self, backend: Store
    ) -> None:
        await self._created(backend)
        await backend.append(
            Write("s1", 1, [], outbox=[filed(k, channels=("email",)) for k in ("a", "b", "c")])
        )
        claims = await backend.claim_outbox(AT, 3, "host-a", AT + 10)
        assert len(claims) == 3
        a, b, c = sorted((claim.row for claim in claims), key=lambda row: row.key)
        with pytest.raises(ValueError, match="pending or a final state"):
            await backend.settle_outbox_many(
                [Settlement(a, "host-a", "delivered", AT), Settlement(b, "host-a", "sending", AT)]
            )
        with pytest.raises(ValueError, match="Settlement"):
            await backend.settle_outbox_many([a])  # type: ignore[list-item]
        assert {row.status for row in await backend.outbox_of("s1")} == {"sending"}
        assert await backend.settle_outbox_many([]) == []
        answers = await backend.settle_outbox_many(
            [
                Settlement(a, "host-a", "delivered", AT + 1),
                Settlement(b, "host-b", "delivered", AT + 1),  # not its claim
                Settlement(c, "host-a", "pending", AT + 1, next_ms=AT + 500, error="503"),
            ]
        )
        assert list(answers) == [True, False, True]
        rows = {row.key: row for row in await backend.outbox_of("s1")}
        assert (rows["a"].status, rows["b"].status) == ("delivered", "sending")
        assert (rows["c"].status, rows["c"].next_ms, rows["c"].error) == (
            "pending",
            AT + 500,
            "503",
        )
        assert list(await backend.settle_outbox_many([Settlement(a, "host-a", "failed", AT)])) == [
            False  # settled already
        ]

    async def test_an_id_no_store_holds_lists_nothing_and_settles_nothing(
        self, backend: Store
    ) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("email",))]))
        (claim,) = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert await backend.outbox_of("s\x00") == []
        assert await backend.outbox_of("") == []
        for row in (
            dataclasses.replace(claim.row, session_id="s1\x00"),
            dataclasses.replace(claim.row, channel="sms"),
        ):
            assert not await backend.settle_outbox(row, "host-a", status="failed", now_ms=AT)
        assert not await backend.settle_outbox(claim.row, "host-a\x00", status="failed", now_ms=AT)
        assert await backend.outbox_of("s1") == [claim.row]

    # -- filed with the events ---------------------------------------------------------------

    async def test_entries_are_filed_with_their_events_one_per_channel_and_survive_reopen(
        self, backend: Store, tmp_path: Path
    ) -> None:
        rich = Notice(
            title="héllo — 日本語 🎉",
            body="line one\nline <b>two</b>",
            at_ms=AT,
            not_before_ms=AT - 5,
            expires_ms=AT + 3_600_000,
            data={"reminder": "r1", "action": "snooze"},
        )
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 2),
                make_header("s1"),
                outbox=[OutboxChange(PLUGIN, "r1@1", rich, CHANNELS, AT + 7)],
            ),
        )
        await backend.append(Write("s1", 2, [], outbox=[filed("r2@1", AT + 9, ("webpush",))]))
        again = await self._reopened(backend, tmp_path)
        try:
            rows = await again.outbox_of("s1")
            assert rows == [
                OutboxRow("s1", PLUGIN, "r1@1", "email", rich, "pending", 0, AT + 7, None, AT + 7),
                OutboxRow("s1", PLUGIN, "r1@1", "ntfy", rich, "pending", 0, AT + 7, None, AT + 7),
                pending_row("s1", "r2@1", "webpush", AT + 9),
            ]
            assert dict(rows[0].notice.data) == {"reminder": "r1", "action": "snooze"}
            stored = await again.load("s1")
            assert stored is not None
            assert len(stored.events) == 2
            # A claim and its settle are durable too.
            (claim,) = await again.claim_outbox(AT + 8, 1, "host-a", AT + 100)
            assert await again.settle_outbox(
                claim.row, "host-a", status="delivered", now_ms=AT + 20
            )
        finally:
            await again.close()
        third = self.reopen(again, tmp_path)
        await third.open()
        try:
            assert states(await third.outbox_of("s1")) == [
                ("s1", "r1@1", "email", "delivered"),
                ("s1", "r1@1", "ntfy", "pending"),
                ("s1", "r2@1", "webpush", "pending"),
            ]
        finally:
            await third.close()

    async def test_an_append_of_only_outbox_changes_is_valid_and_checks_the_start(
        self, backend: Store
    ) -> None:
        await backend.append(Write("s1", 0, make_events(0, 2), make_header("s1")))
        await backend.append(Write("s1", 2, [], outbox=[filed("a", channels=("email",))]))
        with pytest.raises(StorageConflictError):
            await backend.append(Write("s1", 1, [], outbox=[filed("b")]))
        assert states(await backend.outbox_of("s1")) == [("s1", "a", "email", "pending")]
        # A notice with no channel files nothing (the host had none configured).
        await backend.append(Write("s1", 2, [], outbox=[filed("c", channels=())]))
        assert len(await backend.outbox_of("s1")) == 1

    async def test_filing_a_stored_key_again_leaves_its_entries_as_they_are(
        self, backend: Store
    ) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("email",))]))
        (claim,) = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert await backend.settle_outbox(claim.row, "host-a", status="delivered", now_ms=AT + 1)
        # The same decision made again (a crash repeated it): a new channel gets an entry, the
        # delivered one stays delivered and keeps its notice.
        await backend.append(
            Write("s1", 1, [], outbox=[filed("a", AT + 50, ("email", "ntfy"), title="Again")])
        )
        email, ntfy = await backend.outbox_of("s1")
        assert (email.status, email.attempts, email.updated_ms) == ("delivered", 1, AT + 1)
        assert email.notice.title == "Stretch"
        assert ntfy == pending_row("s1", "a", "ntfy", AT + 50, title="Again")
        # Within one append the first filing wins, too.
        await backend.append(
            Write("s1", 1, [], outbox=[filed("b", AT), filed("b", AT + 5, title="2")])
        )
        assert [r.notice.title for r in await backend.outbox_of("s1") if r.key == "b"] == [
            "Stretch",
            "Stretch",
        ]

    async def test_a_withdrawal_withdraws_only_the_pending_entries_of_its_key(
        self, backend: Store
    ) -> None:
        await self._created(backend)
        await backend.append(
            Write(
                "s1",
                1,
                [],
                outbox=[
                    filed("a", AT, ("email", "ntfy", "webpush")),
                    filed("b", AT),
                    OutboxChange("other", "a", notice(), ("email",), AT),
                ],
            ),
        )
        claims = await backend.claim_outbox(AT, 2, "host-a", AT + 100)
        assert claimed_keys(claims) == [("s1", "a", "email", False), ("s1", "a", "ntfy", False)]
        assert await backend.settle_outbox(
            claims[0].row, "host-a", status="delivered", now_ms=AT + 1
        )
        await backend.append(Write("s1", 1, [], outbox=[withdrawn("a"), withdrawn("never-filed")]))
        assert states(await backend.outbox_of("s1")) == [
            ("s1", "a", "email", "delivered"),  # already sent: it stays
            ("s1", "a", "ntfy", "sending"),  # under way: it stays
            ("s1", "a", "webpush", "withdrawn"),
            ("s1", "b", "email", "pending"),  # another key
            ("s1", "b", "ntfy", "pending"),
            ("s1", "a", "email", "pending"),  # another plugin's key of the same name
        ]
        # A withdrawn entry is never claimed, and filing its key again does not revive it.
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("webpush",))]))
        assert (await backend.outbox_of("s1"))[2].status == "withdrawn"
        rest = await backend.claim_outbox(AT + 200, 10, "host-a", AT + 300)
        assert [(c.row.plugin, c.row.key, c.row.channel) for c in rest] == [
            (PLUGIN, "a", "ntfy"),  # its claim expired
            (PLUGIN, "b", "email"),
            (PLUGIN, "b", "ntfy"),
            ("other", "a", "email"),
        ]

    async def test_changes_apply_in_their_order_within_an_append_and_a_group(
        self, backend: Store
    ) -> None:
        for sid in ("s1", "s2", "s3"):
            await self._created(backend, sid)
        # Filed then withdrawn in one append: stored withdrawn. Withdrawn then filed: pending.
        await backend.append(Write("s1", 1, [], outbox=[filed("a"), withdrawn("a")]))
        await backend.append(
            Write("s1", 1, [], outbox=[withdrawn("b"), filed("b", channels=("x",))])
        )
        assert states(await backend.outbox_of("s1")) == [
            ("s1", "a", "email", "withdrawn"),
            ("s1", "a", "ntfy", "withdrawn"),
            ("s1", "b", "x", "pending"),
        ]
        # Appends committed together (one group, where a backend groups them), in order.
        outcomes = await asyncio.gather(
            backend.append(Write("s2", 1, [], outbox=[filed("a", channels=("email",))])),
            backend.append(Write("s2", 1, [], outbox=[withdrawn("a")])),
            backend.append(Write("s2", 1, [], outbox=[filed("a", channels=("email", "ntfy"))])),
            backend.append(Write("s3", 1, [], outbox=[filed("z", channels=("email",))])),
            backend.append(Write("s3", 0, [], outbox=[withdrawn("z")])),  # a conflict: not applied
            return_exceptions=True,
        )
        assert outcomes[:4] == [None] * 4
        assert isinstance(outcomes[4], StorageConflictError)
        assert states(await backend.outbox_of("s2")) == [
            ("s2", "a", "email", "withdrawn"),
            ("s2", "a", "ntfy", "pending"),
        ]
        assert states(await backend.outbox_of("s3")) == [("s3", "z", "email", "pending")]

    # -- claims --------------------------------------------------------------------------------

    async def test_a_claim_takes_due_entries_earliest_first_up_to_its_limit(
        self, backend: Store
    ) -> None:
        await self._created(backend, "s1")
        await self._created(backend, "s2", 2)
        await backend.append(
            Write("s1", 1, [], outbox=[filed("late", AT + 30, ("email",)), filed("tie", AT + 10)])
        )
        await backend.append(
            Write("s2", 1, [], outbox=[filed("first", AT, ("email",)), filed("future", AT + 99)])
        )
        assert await backend.claim_outbox(AT - 1, 10, "host-a", AT + 1_000) == []
        claims = await backend.claim_outbox(AT + 30, 3, "host-a", AT + 1_000)
        assert claimed_keys(claims) == [
            ("s2", "first", "email", False),
            ("s1", "tie", "email", False),  # ties on next_ms in the order they were filed
            ("s1", "tie", "ntfy", False),
        ]
        first = claims[0].row
        assert first == OutboxRow(
            "s2", PLUGIN, "first", "email", notice(), "sending", 1, AT, None, AT + 30
        )
        assert idempotency_key(first.session_id, first.plugin, first.key, first.channel) == (
            "s2/schedule/first/email"
        )
        # What was claimed is not claimed again while its claim holds; the rest is.
        rest = await backend.claim_outbox(AT + 30, 10, "host-b", AT + 1_000)
        assert claimed_keys(rest) == [("s1", "late", "email", False)]
        assert await backend.claim_outbox(AT + 98, 10, "host-b", AT + 2_000) == []
        assert states(await backend.outbox_of("s2")) == [
            ("s2", "first", "email", "sending"),
            ("s2", "future", "email", "pending"),
            ("s2", "future", "ntfy", "pending"),
        ]

    async def test_an_expired_claim_is_claimed_again_as_ambiguous(self, backend: Store) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("email",))]))
        (first,) = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert (first.ambiguous, first.row.attempts) == (False, 1)
        # Not before the claim ran out: at its very end it still holds.
        assert await backend.claim_outbox(AT + 100, 5, "host-b", AT + 200) == []
        (again,) = await backend.claim_outbox(AT + 101, 5, "host-b", AT + 200)
        assert again.ambiguous is True
        assert (again.row.status, again.row.attempts, again.row.updated_ms) == (
            "sending",
            2,
            AT + 101,
        )
        # The first host's late outcome is refused: the entry is host-b's now.
        assert not await backend.settle_outbox(
            first.row, "host-a", status="delivered", now_ms=AT + 102
        )
        (row,) = await backend.outbox_of("s1")
        assert (row.status, row.attempts, row.updated_ms) == ("sending", 2, AT + 101)
        assert await backend.settle_outbox(again.row, "host-b", status="unknown", now_ms=AT + 103)
        assert not await backend.settle_outbox(  # settled once: a second settle is refused
            again.row, "host-b", status="delivered", now_ms=AT + 104
        )
        (row,) = await backend.outbox_of("s1")
        assert (row.status, row.updated_ms) == ("unknown", AT + 103)
        assert await backend.claim_outbox(AT + 10_000, 5, "host-b", AT + 20_000) == []

    async def test_a_settle_is_fenced_by_its_owner(self, backend: Store) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("email",))]))
        pending = (await backend.outbox_of("s1"))[0]
        # Never claimed: nobody may settle it.
        assert not await backend.settle_outbox(pending, "host-a", status="delivered", now_ms=AT)
        (claim,) = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert not await backend.settle_outbox(
            claim.row, "host-b", status="failed", now_ms=AT + 1, error="not mine"
        )
        assert await backend.outbox_of("s1") == [claim.row]  # nothing written
        assert await backend.settle_outbox(
            claim.row, "host-a", status="failed", now_ms=AT + 2, error="refused: 410 Gone"
        )
        (row,) = await backend.outbox_of("s1")
        assert (row.status, row.error, row.attempts, row.updated_ms) == (
            "failed",
            "refused: 410 Gone",
            1,
            AT + 2,
        )

    async def test_a_retry_is_claimable_again_only_at_its_next_ms(self, backend: Store) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("email",))]))
        (claim,) = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert await backend.settle_outbox(
            claim.row,
            "host-a",
            status="pending",
            now_ms=AT + 3,
            next_ms=AT + 60_000,
            error="timed out",
        )
        (row,) = await backend.outbox_of("s1")
        assert row == OutboxRow(
            "s1", PLUGIN, "a", "email", notice(), "pending", 1, AT + 60_000, "timed out", AT + 3
        )
        assert await backend.earliest_outbox() == AT + 60_000
        assert await backend.claim_outbox(AT + 59_999, 5, "host-a", AT + 70_000) == []
        (retry,) = await backend.claim_outbox(AT + 60_000, 5, "host-b", AT + 70_000)
        assert (retry.ambiguous, retry.row.attempts, retry.row.error) == (False, 2, "timed out")
        assert await backend.settle_outbox(
            retry.row, "host-b", status="delivered", now_ms=AT + 60_001
        )
        (row,) = await backend.outbox_of("s1")
        assert (row.status, row.error, row.next_ms) == ("delivered", None, AT + 60_000)

    async def test_a_stored_error_is_one_line_cut_to_its_limit(self, backend: Store) -> None:
        await self._created(backend)
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("email", "ntfy"))]))
        long_claim, odd_claim = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert await backend.settle_outbox(
            long_claim.row, "host-a", status="failed", now_ms=AT, error="é" * (ERROR_MAX_CHARS + 50)
        )
        assert await backend.settle_outbox(
            odd_claim.row, "host-a", status="failed", now_ms=AT, error="bad\nthing\x00 \ud800 here"
        )
        long_row, odd_row = await backend.outbox_of("s1")
        assert long_row.error == "é" * ERROR_MAX_CHARS
        assert odd_row.error == "bad thing ? here"

    async def test_earliest_outbox_says_when_the_worker_next_has_work(self, backend: Store) -> None:
        assert await backend.earliest_outbox() is None
        await self._created(backend)
        await backend.append(
            Write(
                "s1", 1, [], outbox=[filed("a", AT + 50, ("email",)), filed("b", AT + 20, ("x",))]
            )
        )
        assert await backend.earliest_outbox() == AT + 20
        (claim,) = await backend.claim_outbox(AT + 20, 1, "host-a", AT + 40)
        assert await backend.earliest_outbox() == AT + 40  # the claim's end
        assert await backend.settle_outbox(claim.row, "host-a", status="delivered", now_ms=AT)
        assert await backend.earliest_outbox() == AT + 50
        await backend.append(Write("s1", 1, [], outbox=[withdrawn("a")]))
        assert await backend.earliest_outbox() is None  # final entries ask for nothing

    async def test_a_sessions_entries_are_listed_in_the_order_they_were_filed(
        self, backend: Store
    ) -> None:
        await self._created(backend, "s1")
        await self._created(backend, "s2", 2)
        await backend.append(Write("s1", 1, [], outbox=[filed("z", AT + 90, ("b", "a"))]))
        await backend.append(Write("s2", 1, [], outbox=[filed("y", AT)]))
        await backend.append(Write("s1", 1, [], outbox=[filed("a", AT, ("c",))]))
        assert [(r.key, r.channel) for r in await backend.outbox_of("s1")] == [
            ("z", "b"),
            ("z", "a"),
            ("a", "c"),
        ]
        assert [(r.key, r.channel) for r in await backend.outbox_of("s2")] == [
            ("y", "email"),
            ("y", "ntfy"),
        ]

    # -- delete --------------------------------------------------------------------------------

    async def test_delete_removes_the_sessions_entries_and_leaves_a_fork_and_the_others(
        self, backend: Store, tmp_path: Path
    ) -> None:
        await backend.append(
            Write(
                "s1",
                0,
                make_events(0, 3),
                make_header("s1", 1),
                outbox=[filed("a", AT, ("email",))],
            )
        )
        fork = make_header("f1", 2, parent_session="s1", seed_length=3)
        await backend.append(
            Write("f1", 0, make_events(0, 3), fork, outbox=[filed("a", AT, ("email",))])
        )
        await backend.append(Write("s2", 0, [], make_header("s2", 3), outbox=[filed("b", AT + 5)]))
        claims = await backend.claim_outbox(AT, 5, "host-a", AT + 100)
        assert claimed_keys(claims) == [("s1", "a", "email", False), ("f1", "a", "email", False)]
        assert await backend.delete("s1") is True
        assert await backend.outbox_of("s1") == []
        # A claim of a deleted Session's entry settles nothing.
        assert not await backend.settle_outbox(
            claims[0].row, "host-a", status="delivered", now_ms=AT + 1
        )
        assert await backend.settle_outbox(
            claims[1].row, "host-a", status="delivered", now_ms=AT + 1
        )
        assert states(await backend.outbox_of("f1")) == [("f1", "a", "email", "delivered")]
        assert len(await backend.outbox_of("s2")) == 2
        assert await backend.earliest_outbox() == AT + 5
        # Filed in the group of a delete (which a backend may commit request by request).
        await self._created(backend, "s3", 4)
        outcomes = await asyncio.gather(
            backend.append(Write("s2", 0, [], outbox=[filed("c", AT + 1), withdrawn("c")])),
            backend.append(Write("s2", 0, [], outbox=[filed("d", AT + 5, ("x",))])),
            backend.delete("s3"),
        )
        assert outcomes == [None, None, True]
        assert states(await backend.outbox_of("s2"))[2:] == [
            ("s2", "c", "email", "withdrawn"),
            ("s2", "c", "ntfy", "withdrawn"),
            ("s2", "d", "x", "pending"),
        ]
        again = await self._reopened(backend, tmp_path)
        try:
            assert await again.outbox_of("s1") == []
            # The id is free again: a new Session of that id starts with no entry, and the
            # key it files is new.
            await again.append(
                Write("s1", 0, [], make_header("s1", 9), outbox=[filed("a", AT, ("x",))])
            )
            assert states(await again.outbox_of("s1")) == [("s1", "a", "x", "pending")]
        finally:
            await again.close()


class TestMemoryOutbox(OutboxStorage):
    def make(self, tmp_path: Path) -> Store:
        return MemoryBackend()

    def reopen(self, closed: Store, tmp_path: Path) -> Store:
        return closed  # the data lives in the object


class TestFaultInjectingOutbox(OutboxStorage):
    """The test wrapper with no fault planned forwards the outbox like the rest."""

    def make(self, tmp_path: Path) -> Store:
        return FaultInjectingBackend(SQLiteBackend(tmp_path / "data"))

    def reopen(self, closed: Store, tmp_path: Path) -> Store:
        return FaultInjectingBackend(SQLiteBackend(tmp_path / "data"))


class DamagedNotices(OutboxStorage):
    """The durable backends: a notice damaged from outside hides or blocks no other entry."""

    def damage_notice(self, tmp_path: Path, session_id: str, key: str) -> None:
        raise NotImplementedError

    async def test_a_damaged_notice_fails_alone_in_a_claim_and_is_skipped_by_a_listing(
        self, backend: Store, tmp_path: Path
    ) -> None:
        await self._created(backend)
        await backend.append(
            Write(
                "s1",
                1,
                [],
                outbox=[
                    filed("bad", AT, ("email",)),
                    filed("good", AT + 1, ("email",)),
                    filed("also", AT + 2, ("email",)),
                ],
            ),
        )
        self.damage_notice(tmp_path, "s1", "bad")
        with capture_logs() as logs:
            listed = await backend.outbox_of("s1")
        assert [r.key for r in listed] == ["good", "also"]
        (damaged,) = [e for e in logs if e["event"] == "storage.outbox_entry_damaged"]
        assert (damaged["session_id"], damaged["key"]) == ("s1", "bad")
        # The damaged entry took the first place of the claim: it is failed and the claim
        # still fills its limit with the others.
        claims = await backend.claim_outbox(AT + 5, 2, "host-a", AT + 100)
        assert claimed_keys(claims) == [
            ("s1", "good", "email", False),
            ("s1", "also", "email", False),
        ]
        assert await backend.claim_outbox(AT + 5, 5, "host-a", AT + 100) == []
        assert await backend.earliest_outbox() == AT + 100  # the failed one asks for nothing
        status, error = self.stored_state(tmp_path, "s1", "bad")
        assert (status, error) == ("failed", "damaged notice")
        assert await backend.delete("s1") is True  # a damaged entry is deleted with its Session

    def stored_state(self, tmp_path: Path, session_id: str, key: str) -> tuple[str, str]:
        raise NotImplementedError


class TestSQLiteOutbox(DamagedNotices):
    def make(self, tmp_path: Path) -> Store:
        return SQLiteBackend(tmp_path / "data")

    def reopen(self, closed: Store, tmp_path: Path) -> Store:
        return SQLiteBackend(tmp_path / "data")

    def damage_notice(self, tmp_path: Path, session_id: str, key: str) -> None:
        outside = sqlite3.connect(tmp_path / "data" / DB, isolation_level=None)
        try:
            outside.execute(
                "UPDATE outbox SET notice = '{not json' WHERE session_id = ? AND key = ?",
                (session_id, key),
            )
        finally:
            outside.close()

    def stored_state(self, tmp_path: Path, session_id: str, key: str) -> tuple[str, str]:
        outside = sqlite3.connect(tmp_path / "data" / DB)
        try:
            sql = "SELECT status, error FROM outbox WHERE session_id = ? AND key = ?"
            (row,) = outside.execute(sql, (session_id, key)).fetchall()
        finally:
            outside.close()
        return row


class TestPostgresOutbox(DamagedNotices):
    """A fresh database of the session's throwaway cluster per test (tests/pg.py)."""

    @pytest.fixture(autouse=True)
    def _database(self, pg_cluster: Cluster) -> None:  # noqa: F811 - the imported fixture
        self.cluster = pg_cluster
        self.url = pg_cluster.new_database()

    def make(self, tmp_path: Path) -> Store:
        return PostgresBackend(self.url)

    def reopen(self, closed: Store, tmp_path: Path) -> Store:
        return PostgresBackend(self.url)

    def damage_notice(self, tmp_path: Path, session_id: str, key: str) -> None:
        self.cluster.execute(
            self.url,
            "UPDATE outbox SET notice = '{\"title\": 7}' WHERE session_id = %s AND key = %s",
            session_id,
            key,
        )

    def stored_state(self, tmp_path: Path, session_id: str, key: str) -> tuple[str, str]:
        with psycopg.connect(self.url) as conn:
            sql = "SELECT status, error FROM outbox WHERE session_id = %s AND key = %s"
            (row,) = conn.execute(sql, (session_id, key)).fetchall()
        return row  # type: ignore[return-value]


# == SQLite: a version 4 store, and the index a claim reads ===================================


def run_sql(db: Path, *statements: str) -> None:
    outside = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in statements:
            outside.execute(statement)
    finally:
        outside.close()


async def test_a_version_4_store_gains_an_empty_outbox_without_a_board_rebuild(
    tmp_path: Path,
) -> None:
    async with opened(SQLiteBackend(tmp_path)) as backend:
        await backend.append(Write("s1", 0, make_events(0, 3), make_header("s1"), name="One"))
    run_sql(tmp_path / DB, "DROP TABLE outbox", "PRAGMA user_version = 4")
    with capture_logs() as logs:
        async with opened(SQLiteBackend(tmp_path)) as backend:
            assert backend.needs_board_rebuild is False  # its board and names are whole
            assert await backend.outbox_of("s1") == []
            assert await backend.earliest_outbox() is None
            await backend.append(Write("s1", 3, [], outbox=[filed("a", AT, ("email",))]))
            assert claimed_keys(await backend.claim_outbox(AT, 5, "h", AT + 1)) == [
                ("s1", "a", "email", False)
            ]
    (migrated,) = [e for e in logs if e["event"] == "storage.migrated"]
    assert migrated["from_version"] == 4
    outside = sqlite3.connect(tmp_path / DB)
    try:
        assert outside.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        plan = outside.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM outbox WHERE status = 'pending' AND next_ms <= ? "
            "ORDER BY next_ms, id LIMIT 5",
            (AT,),
        ).fetchall()
    finally:
        outside.close()
    details = " | ".join(str(row[-1]) for row in plan)
    assert "outbox_due" in details, details
    assert "TEMP B-TREE" not in details, details  # the index gives the order
    # Opened again it is a current store: no second migration, the entry is still there.
    with capture_logs() as logs:
        async with opened(SQLiteBackend(tmp_path)) as backend:
            assert states(await backend.outbox_of("s1")) == [("s1", "a", "email", "sending")]
    assert not [e for e in logs if e["event"] == "storage.migrated"]


async def test_a_version_4_store_with_a_foreign_outbox_is_not_migrated(tmp_path: Path) -> None:
    async with opened(SQLiteBackend(tmp_path)) as backend:
        await backend.append(Write("s1", 0, make_events(0, 1), make_header("s1")))
    run_sql(
        tmp_path / DB,
        "DROP TABLE outbox",
        "CREATE TABLE outbox (x INTEGER)",
        "PRAGMA user_version = 4",
    )
    before = (tmp_path / DB).read_bytes()
    with pytest.raises(Exception, match="is not a dsh store"):
        await SQLiteBackend(tmp_path).open()
    assert (tmp_path / DB).read_bytes() == before


# == PostgreSQL: an older database, and two hosts claiming at once ==============================


@pytest.fixture
def url(pg_cluster: Cluster) -> str:  # noqa: F811 - the imported fixture
    return pg_cluster.new_database()


async def test_a_version_3_postgres_database_gains_an_empty_outbox_without_a_rebuild(
    pg_cluster: Cluster,  # noqa: F811 - the imported fixture
    url: str,
) -> None:
    async with opened(PostgresBackend(url)) as first:
        await first.append(Write("s1", 0, make_events(0, 2), make_header("s1"), name="One"))
    for sql in ("DROP TABLE outbox", "UPDATE dsh_schema SET version = 3"):
        pg_cluster.execute(url, sql)
    with capture_logs() as logs:
        async with opened(PostgresBackend(url)) as backend:
            assert backend.needs_board_rebuild is False  # its board and names are whole
            assert await backend.outbox_of("s1") == []
            await backend.append(Write("s1", 2, [], outbox=[filed("a", AT, ("email",))]))
    (migrated,) = [e for e in logs if e["event"] == "storage.migrated"]
    assert migrated["from_version"] == 3
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM dsh_schema").fetchall() == [(PG_SCHEMA_VERSION,)]
    async with opened(PostgresBackend(url)) as backend:
        assert states(await backend.outbox_of("s1")) == [("s1", "a", "email", "pending")]


async def test_two_hosts_claiming_at_once_share_the_entries_and_never_take_one_twice(
    url: str,
) -> None:
    a = PostgresBackend(url, owner="host-a", pool_size=4)
    b = PostgresBackend(url, owner="host-b", pool_size=4)
    await a.open()
    await b.open()
    try:
        for s in range(4):
            sid = f"s{s}"
            await a.append(Write(sid, 0, [], make_header(sid, s)))
            changes = [filed(f"k{k}", AT + k, ("email",)) for k in range(50)]
            await a.append(Write(sid, 0, [], outbox=changes))
        everything = {(f"s{s}", f"k{k}") for s in range(4) for k in range(50)}

        async def drain(host: PostgresBackend, owner: str) -> list[OutboxClaim]:
            taken: list[OutboxClaim] = []
            while batch := await host.claim_outbox(AT + 100, 7, owner, AT + 10_000):
                taken.extend(batch)
            return taken

        drains = await asyncio.gather(
            drain(a, "host-a"), drain(b, "host-b"), drain(a, "host-a"), drain(b, "host-b")
        )
        claims = [claim for drained in drains for claim in drained]
        keys = [(c.row.session_id, c.row.key) for c in claims]
        assert len(keys) == len(set(keys)) == 200  # disjoint, and every entry
        assert set(keys) == everything
        assert not any(c.ambiguous for c in claims)
        assert all(c.row.attempts == 1 for c in claims)
        # Each claimed entry is its claimant's to settle, and only its claimant's.
        owners = ["host-a", "host-b", "host-a", "host-b"]
        drained, owner = next((d, o) for d, o in zip(drains, owners, strict=True) if d)
        other = "host-b" if owner == "host-a" else "host-a"
        row = drained[0].row
        assert await b.settle_outbox(row, other, status="delivered", now_ms=AT) is False
        assert await b.settle_outbox(row, owner, status="delivered", now_ms=AT) is True
    finally:
        await a.close()
        await b.close()
