"""The coordinator's per-Session state map holds its keys weakly and by identity."""

from __future__ import annotations

import gc

import pytest

from dsh_host.persistence._coordinator import _ByIdentity


class Key:
    """Equal to every other Key: the map must still tell them apart."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key)

    def __hash__(self) -> int:
        return 0


def test_keys_are_told_apart_by_identity_and_dropped_once_gone() -> None:
    states: _ByIdentity[Key, str] = _ByIdentity()
    first, second = Key(), Key()
    states[first] = "first"
    states[second] = "second"
    states[second] = "second again"  # replacing keeps one entry
    assert (states.get(first), states.get(second)) == ("first", "second again")
    assert sorted(states.values()) == ["first", "second again"]
    del first
    gc.collect()
    assert states.values() == ["second again"]
    assert states.get(Key()) is None
    assert states[second] == "second again"
    with pytest.raises(KeyError):
        states[Key()]
    assert len(states._data) == 1  # nothing of the dead key is kept
