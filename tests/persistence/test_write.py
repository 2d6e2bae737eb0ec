"""One durable write is one value: :class:`~dsh_host.persistence.Write` checks itself where it is
made, so no backend ever sees a malformed one. Tested here once, with no backend; each backend's
suite tests what only a store can decide (a conflict with what is stored writes nothing)."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from dsh_hookspecs import BOARD_DATA_MAX_BYTES, BoardEntry, Notice
from dsh_host._json import JSONError
from dsh_host._records import RecordError
from dsh_host.conformance import make_event, make_events, make_header
from dsh_host.persistence import NO_POSTS, NO_WAKES, OutboxChange, Write

PLUGIN = "schedule"
AT = 1_785_931_260_000  # 2026-08-05T12:01:00.000Z
CHANNELS = ("email", "ntfy")


def notice(title: str = "Stretch", at_ms: int = AT, **extra: object) -> Notice:
    return Notice(title=title, at_ms=at_ms, **extra)  # type: ignore[arg-type]


def filed(key: str) -> OutboxChange:
    return OutboxChange(PLUGIN, key, notice(), CHANNELS, AT)


def entry(kind: str, at_ms: object, data: object = None) -> BoardEntry:
    return BoardEntry(kind=kind, at_ms=at_ms, data=data)  # type: ignore[arg-type]


def pending(at_ms: int) -> BoardEntry:
    return entry("pending", at_ms, {"text": "stretch"})


# -- failure paths first ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("session_id", "start", "events", "header", "error", "match"),
    [
        pytest.param("", 0, [], None, ValueError, "session id", id="empty-id"),
        pytest.param(7, 0, [], None, ValueError, "session id", id="id-not-text"),
        pytest.param("s1", -1, [], None, ValueError, "start", id="negative-start"),
        pytest.param("s1", True, [], None, ValueError, "start", id="start-a-bool"),
        pytest.param("s1", 0, [make_event(1)], make_header("s1"), ValueError, "seq", id="seq-gap"),
        pytest.param(
            "s1", 0, [make_event(0), make_event(2)], None, ValueError, "seq", id="seq-jump"
        ),
        pytest.param("s1", 0, [], make_header("other"), ValueError, "header id", id="header-id"),
        pytest.param("s1", 0, [make_event(0, float("nan"))], None, JSONError, "NaN|JSON", id="nan"),
        pytest.param("s1", 0, [make_event(0, "\ud800 lone")], None, JSONError, "UTF-8", id="utf8"),
        pytest.param("s1", 0, [make_event(0, etype="")], None, RecordError, "type", id="type"),
        pytest.param(
            "s1", 2**63, [make_event(2**63)], None, RecordError, "64 bits", id="seq-64-bits"
        ),
    ],
)
def test_a_malformed_log_or_header_is_refused_where_the_write_is_made(  # noqa: PLR0917 - the table's columns
    session_id: object,
    start: object,
    events: list[object],
    header: object,
    error: type[Exception],
    match: str,
) -> None:
    with pytest.raises(error, match=match):
        Write(session_id, start, events, header)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "wakes",
    [
        pytest.param({"a": True}, id="bool"),
        pytest.param({"a": 1.0}, id="float"),
        pytest.param({"a": 2**63}, id="64-bits"),
        pytest.param({"": 1}, id="empty-plugin"),
        pytest.param({"a": 253_402_300_800_000}, id="after-9999"),
    ],
)
def test_a_malformed_wake_entry_is_refused(wakes: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"wake (instant|entry)"):
        Write("s1", 2, make_events(2, 1), wakes=wakes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("board", "name", "match"),
    [
        pytest.param({(PLUGIN, "k"): entry("Bad-Kind", AT)}, None, "kind", id="kind"),
        pytest.param({(PLUGIN, "k"): entry("pending", 1.5)}, None, "instant", id="at"),
        pytest.param(
            {(PLUGIN, "k"): entry("pending", AT, "x" * BOARD_DATA_MAX_BYTES)},
            None,
            "at most",
            id="data-size",
        ),
        pytest.param(
            {(PLUGIN, "k"): entry("pending", AT, {"x": float("nan")})},
            None,
            "JSON",
            id="data-json",
        ),
        pytest.param({(PLUGIN, ""): pending(AT)}, None, "key", id="empty-key"),
        pytest.param({(PLUGIN, "k" * 201): pending(AT)}, None, "key", id="long-key"),
        pytest.param({("", "k"): pending(AT)}, None, "plugin", id="empty-plugin"),
        pytest.param({PLUGIN: pending(AT)}, None, "pair", id="not-a-pair"),
        pytest.param({(PLUGIN, "k"): "row"}, None, "BoardEntry", id="not-an-entry"),
        pytest.param({}, "", "name", id="empty-name"),
        pytest.param({}, 7, "name", id="name-not-text"),
        pytest.param({}, "\ud800", "UTF-8", id="name-surrogate"),
    ],
)
def test_a_malformed_board_change_or_name_is_refused(
    board: dict[object, object], name: object, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        Write(
            "s1",
            1,
            make_events(1, 1),
            board={(PLUGIN, "good"): pending(AT), **board},  # type: ignore[dict-item]
            name=name,  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    ("change", "match"),
    [
        pytest.param("not a change", "OutboxChange", id="not-a-change"),
        pytest.param(OutboxChange("", "k", notice(), CHANNELS, AT), "plugin", id="plugin"),
        pytest.param(OutboxChange(PLUGIN, "", notice(), CHANNELS, AT), "key", id="empty-key"),
        pytest.param(OutboxChange(PLUGIN, "k" * 201, notice(), CHANNELS, AT), "key", id="long-key"),
        pytest.param(OutboxChange(PLUGIN, "k", notice(""), CHANNELS, AT), "title", id="title"),
        pytest.param(
            OutboxChange(PLUGIN, "k", notice(at_ms=1.5), CHANNELS, AT),  # type: ignore[arg-type]
            "at_ms",
            id="at",
        ),
        pytest.param(
            OutboxChange(PLUGIN, "k", notice(data={"a": 1}), CHANNELS, AT), "data", id="data"
        ),
        pytest.param(
            OutboxChange(PLUGIN, "k", "text", CHANNELS, AT),  # type: ignore[arg-type]
            "Notice",
            id="not-a-notice",
        ),
        pytest.param(OutboxChange(PLUGIN, "k", notice(), ("",), AT), "channels", id="chan"),
        pytest.param(
            OutboxChange(PLUGIN, "k", notice(), ("email", "email"), AT), "distinct", id="twice"
        ),
        pytest.param(
            OutboxChange(PLUGIN, "k", notice(), ["email"], AT),  # type: ignore[arg-type]
            "channels",
            id="list",
        ),
        pytest.param(OutboxChange(PLUGIN, "k", notice(), CHANNELS, 10**20), "due_ms", id="due"),
        pytest.param(
            OutboxChange(PLUGIN, "k", notice("\ud800"), CHANNELS, AT), "UTF-8", id="surrogate"
        ),
    ],
)
def test_a_malformed_outbox_change_is_refused(change: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Write("s1", 1, make_events(1, 1), outbox=[filed("good"), change])  # type: ignore[list-item]


@pytest.mark.parametrize("outbox", [filed("x"), "text"], ids=["one-change", "text"])
def test_outbox_changes_come_as_a_sequence(outbox: object) -> None:
    with pytest.raises(ValueError, match="sequence"):
        Write("s1", 1, [], outbox=outbox)  # type: ignore[arg-type]


# -- what a made write holds -----------------------------------------------------------------


def test_a_write_is_frozen_and_keeps_what_it_was_given_when_the_caller_changes_it() -> None:
    events = make_events(0, 2)
    wakes: dict[str, int | None] = {"b": AT, "a": None}
    board: dict[tuple[str, str], BoardEntry | None] = {(PLUGIN, "k"): pending(AT)}
    outbox = [filed("k")]
    write = Write("s1", 0, events, make_header("s1"), wakes, board=board, name="N", outbox=outbox)
    events.append(make_event(2))
    wakes["c"] = 1
    board[PLUGIN, "other"] = None
    outbox.append(filed("other"))
    assert write.events == tuple(make_events(0, 2))
    assert dict(write.wakes) == {"b": AT, "a": None}
    assert dict(write.board) == {(PLUGIN, "k"): pending(AT)}
    assert write.outbox == (filed("k"),)
    assert isinstance(write.wakes, MappingProxyType)
    with pytest.raises(dataclasses.FrozenInstanceError):
        write.start = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        write.wakes["d"] = 1  # type: ignore[index]


def test_the_encoded_form_is_what_a_backend_stores() -> None:
    header = make_header("s1")
    write = Write(
        "s1",
        0,
        [make_event(0, {"b": 1, "a": "é"})],
        header,
        {"b": AT, "a": None},
        board={(PLUGIN, "z"): None, (PLUGIN, "k"): pending(AT)},
        name="Standup",
        outbox=[filed("k"), OutboxChange(PLUGIN, "old", None)],
    )
    encoded = write.encoded
    assert encoded.header == dataclasses.replace(header, delegation_depth=0)  # its stored form
    assert encoded.header_json is not None
    assert '"id":"s1"' in encoded.header_json
    assert encoded.data_json == ('{"b":1,"a":"é"}',)  # compact, strict, in its own order
    assert encoded.wakes == (("a", None), ("b", AT))  # sorted by plugin
    assert [(post.plugin, post.key, post.data_json) for post in encoded.board] == [
        (PLUGIN, "k", '{"text":"stretch"}'),
        (PLUGIN, "z", None),
    ]
    assert encoded.name == "Standup"
    assert [(n.key, n.channels, n.due_ms) for n in encoded.outbox] == [
        ("k", CHANNELS, AT),
        ("old", (), 0),
    ]


def test_a_write_that_changes_nothing_but_its_position_is_valid_and_empty() -> None:
    write = Write("s1", 4)
    assert write.events == ()
    assert write.wakes is NO_WAKES
    assert write.board is NO_POSTS
    assert (write.header, write.name, write.outbox) == (None, None, ())
    assert write.encoded.data_json == ()
    assert write == Write("s1", 4, [], None, {})
    assert write != Write("s1", 5)
