"""dsh_host: the reference host for dsh plugins.

Sessions with the flush contract and one subscription API for what happens to them
(:mod:`dsh_host._observations`), the persistence coordinator and its backends, Agents with
idle / maintenance / running phases, the tool registry, model adapters, the plugin loader and
the ``dsh`` CLI. Plugins never import this package; they receive its services through hooks.
"""

from __future__ import annotations

from ._json import JSONError
from ._observations import (
    Appended,
    BoardChanged,
    Detached,
    Flushed,
    Notified,
    Observation,
    Opened,
    Streamed,
    WakeChanged,
)
from ._overlay import Overlay, OverlayError, PluginEntry
from .core import (
    INTERRUPTED_RESULT,
    ForkBoundaryError,
    InboxMessage,
    LiveAgent,
    LiveAgentRegistry,
    LiveHost,
    LiveSession,
    LiveSessionStore,
    LiveTurn,
    PluginLoadError,
    PluginManager,
    SchemaError,
    SessionHooks,
    SystemClock,
    ToolLayer,
    validate_arguments,
)
from .models import NoModel, ScriptedModel, UnknownModelError, choose_model, make_model

__all__ = [
    "INTERRUPTED_RESULT",
    "Appended",
    "BoardChanged",
    "Detached",
    "Flushed",
    "ForkBoundaryError",
    "InboxMessage",
    "JSONError",
    "LiveAgent",
    "LiveAgentRegistry",
    "LiveHost",
    "LiveSession",
    "LiveSessionStore",
    "LiveTurn",
    "NoModel",
    "Notified",
    "Observation",
    "Opened",
    "Overlay",
    "OverlayError",
    "PluginEntry",
    "PluginLoadError",
    "PluginManager",
    "SchemaError",
    "ScriptedModel",
    "SessionHooks",
    "Streamed",
    "SystemClock",
    "ToolLayer",
    "UnknownModelError",
    "WakeChanged",
    "choose_model",
    "make_model",
    "validate_arguments",
]
