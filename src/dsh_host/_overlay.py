"""The overlay config: which plugins to load, in order, each with its own config table.

Format (TOML)::

    [plugins.first]             # entry-point name in group "dsh.plugins"
    max_items = 60              # this table is the plugin's config

    [plugins.first-ui]          # an empty table loads the plugin with an empty config

(``examples/`` holds a real one.)

Plugins load in file order. Any other top-level key, or a plugin entry that is not a table, is
an error naming the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_hookspecs import JSONValue

from . import _json


class OverlayError(ValueError):
    """The overlay file is unreadable or not in the documented format."""


@dataclass(frozen=True, slots=True)
class PluginEntry:
    name: str
    config: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Overlay:
    plugins: tuple[PluginEntry, ...] = ()
    source: str = "<none>"

    @classmethod
    def load(cls, path: Path) -> Overlay:
        try:
            with path.open("rb") as handle:
                document = tomllib.load(handle)
        except OSError as exc:
            raise OverlayError(f"cannot read overlay {path}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise OverlayError(f"overlay {path} is not valid TOML: {exc}") from None
        return cls.from_document(document, source=str(path))

    @classmethod
    def from_document(cls, document: Mapping[str, Any], *, source: str = "<memory>") -> Overlay:
        unknown = sorted(set(document) - {"plugins"})
        if unknown:
            raise OverlayError(f"overlay {source}: unknown top-level keys {unknown}")
        plugins = document.get("plugins", {})
        if not isinstance(plugins, dict):
            raise OverlayError(f"overlay {source}: 'plugins' must be a table of tables")
        entries = []
        for name, config in plugins.items():
            if not isinstance(config, dict):
                raise OverlayError(f"overlay {source}: plugins.{name} must be a table")
            try:
                canonical = _json.canonical(config)
            except _json.JSONError as exc:
                raise OverlayError(f"overlay {source}: plugins.{name}: {exc}") from None
            assert isinstance(canonical, dict)
            entries.append(PluginEntry(name=name, config=canonical))
        return cls(plugins=tuple(entries), source=source)
