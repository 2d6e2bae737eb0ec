"""The overlay config: which plugins to load, in order, each with its own config table.

Format (TOML)::

    [plugins.first]             # entry-point name in group "dsh.plugins"
    max_items = 60              # this table is the plugin's config

    [plugins.first-ui]          # an empty table loads the plugin with an empty config

    [host]
    evict_idle_seconds = 600    # detach live Sessions idle that long (0: never); optional

    [notify]                    # optional: where reminders reach you outside the page
    urls = ["ntfy://ntfy.sh/my-topic"]  # apprise URLs (secrets: keep this file private)

(``examples/`` holds a real one.) :meth:`Overlay.default` is the built-in overlay, the file
``default_overlay.toml`` shipped inside this package (the Schedule plugin with cold delivery
and its browser renderers): ``dsh serve``, ``dsh reindex`` and ``dsh sessions`` load it when
no overlay is given.

Plugins load in file order. Any other top-level key, any other ``host`` key, or a plugin entry
that is not a table, is an error naming the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from dsh_hookspecs import JSONValue

from . import _json

#: The built-in overlay's file name inside this package (package data of the wheel).
DEFAULT_OVERLAY_FILE = "default_overlay.toml"
#: How errors and logs name the built-in overlay.
DEFAULT_OVERLAY_SOURCE = "the built-in overlay"


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
    #: ``[host] evict_idle_seconds``; ``None`` when the overlay does not set it.
    evict_idle_seconds: int | None = None
    #: ``[notify] urls``: notification channels in apprise URL syntax (secrets: never echoed).
    notify_urls: tuple[str, ...] = ()

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
    def default(cls) -> Overlay:
        """The built-in overlay (``default_overlay.toml`` in this package): the Schedule plugin
        with ``cold_delivery = true`` and ``ui-schedule``, named by entry point (the host imports
        neither)."""
        text = resources.files("dsh_host").joinpath(DEFAULT_OVERLAY_FILE).read_text("utf-8")
        return cls.from_document(tomllib.loads(text), source=DEFAULT_OVERLAY_SOURCE)

    @classmethod
    def from_document(cls, document: Mapping[str, Any], *, source: str = "<memory>") -> Overlay:
        unknown = sorted(set(document) - {"plugins", "host", "notify"})
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
        evict = _host_table(document.get("host", {}), source)
        urls = _notify_table(document.get("notify", {}), source)
        return cls(
            plugins=tuple(entries), source=source, evict_idle_seconds=evict, notify_urls=urls
        )


def _host_table(table: object, source: str) -> int | None:
    """The ``[host]`` table: only ``evict_idle_seconds``, an integer >= 0."""
    if not isinstance(table, dict):
        raise OverlayError(f"overlay {source}: 'host' must be a table")
    unknown = sorted(set(table) - {"evict_idle_seconds"})
    if unknown:
        raise OverlayError(f"overlay {source}: unknown keys in [host] {unknown}")
    value = table.get("evict_idle_seconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise OverlayError(
            f"overlay {source}: host.evict_idle_seconds must be an integer >= 0, got {value!r}"
        )
    return value


def _notify_table(table: object, source: str) -> tuple[str, ...]:
    """The ``[notify]`` table: only ``urls``, a list of strings (never echoed: they hold
    secrets; the channels layer checks each and names it masked)."""
    if not isinstance(table, dict):
        raise OverlayError(f"overlay {source}: 'notify' must be a table")
    unknown = sorted(set(table) - {"urls"})
    if unknown:
        raise OverlayError(f"overlay {source}: unknown keys in [notify] {unknown}")
    urls = table.get("urls", [])
    if not isinstance(urls, list) or not all(isinstance(url, str) for url in urls):
        raise OverlayError(f"overlay {source}: notify.urls must be a list of strings")
    return tuple(urls)
