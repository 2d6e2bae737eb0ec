"""IANA time zones, read from the ``tzdata`` package only.

Hosts and plugins validate a user's zone name with :func:`canonical_time_zone` and load it with
:func:`load_time_zone`. Zone data never comes from the system's zone files (``TZPATH``): it is
read from the installed ``tzdata`` package, so every machine with the same ``tzdata`` gives the
same answers, one without ``/usr/share/zoneinfo`` included.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import zoneinfo
from typing import Final

__all__ = ["InvalidTimeZoneError", "canonical_time_zone", "load_time_zone"]

#: The message of every refusal of a zone that is a string.
_INVALID: Final = "time_zone must be UTC or a valid IANA Area/Location name."
_NOT_A_STRING: Final = "time_zone must be a string."

# Exactly ``UTC``, or Area/Location: an ASCII letter, then ASCII letters, digits and ``_+.-``,
# then one or more ``/segment`` of the same characters. Used with ``fullmatch`` (``$`` would
# allow a trailing newline).
_SHAPE: Final = re.compile(r"UTC|[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+")
_PACKAGE: Final = "tzdata.zoneinfo"


class InvalidTimeZoneError(ValueError):
    """A zone name that is not a string, not UTC / Area/Location-shaped, or not in ``tzdata``.

    ``message`` is the user-facing sentence (a fixed text: it never echoes the input).
    """

    code: Final = "invalid_time_zone"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def canonical_time_zone(name: object) -> str:
    """The zone name to compute with, or :class:`InvalidTimeZoneError`.

    Accepted: exactly ``UTC``, or an Area/Location name (``America/New_York``, ``Etc/GMT+8``)
    that ``tzdata`` ships a zone file for. Refused: a non-string ("time_zone must be a
    string."), and anything else ("time_zone must be UTC or a valid IANA Area/Location name."):
    ``''``, padded or lower-case names, abbreviations and POSIX rules (``CST``, ``GMT``,
    ``EST5EDT``), offsets (``+08:00``), ``.``/``..`` segments and unknown names.

    The name is returned as given: ``zoneinfo`` cannot map an alias such as ``US/Eastern`` to
    its canonical zone (``America/New_York``), so aliases that ``tzdata`` ships are accepted as
    they are. That is harmless because only the computed UTC instant is ever stored.
    """
    if not isinstance(name, str):
        raise InvalidTimeZoneError(_NOT_A_STRING)
    load_time_zone(name)
    return name


def load_time_zone(name: str) -> zoneinfo.ZoneInfo:
    """The ``tzdata`` zone ``name`` (validated as :func:`canonical_time_zone` does), cached.

    Raises :class:`InvalidTimeZoneError` for a name that is not a string, not UTC or
    Area/Location-shaped, has no zone file in ``tzdata``, or whose file is not a zone.
    """
    if not isinstance(name, str):
        raise InvalidTimeZoneError(_NOT_A_STRING)
    return _load(name)


@functools.lru_cache(maxsize=512)  # bounded: refusals are not cached, so junk cannot grow it
def _load(name: str) -> zoneinfo.ZoneInfo:
    if _SHAPE.fullmatch(name) is None:
        raise InvalidTimeZoneError(_INVALID)
    node = importlib.resources.files(_PACKAGE)
    for segment in name.split("/"):
        # Compare with the directory's real entries, so a case-insensitive file system cannot
        # accept ``america/new_york`` where another machine refuses it, and ``.``/``..`` never
        # name a file.
        entries = {entry.name: entry for entry in node.iterdir()} if node.is_dir() else {}
        if segment not in entries:
            raise InvalidTimeZoneError(_INVALID)
        node = entries[segment]
    if not node.is_file():
        raise InvalidTimeZoneError(_INVALID)
    try:
        with node.open("rb") as stream:
            return zoneinfo.ZoneInfo.from_file(stream, key=name)
    except (OSError, ValueError):  # not a TZif file (``America/__init__.py``), or unreadable
        raise InvalidTimeZoneError(_INVALID) from None
