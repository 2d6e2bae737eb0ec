"""dsh_host: the reference host for dsh plugins.

Sessions with the flush contract, the persistence coordinator and its backends, Agents with
idle / maintenance / running phases, the tool registry, model adapters, the plugin loader and
the ``dsh`` CLI. Plugins never import this package; they receive its services through hooks.
"""

from __future__ import annotations

from ._agent import LiveAgent
from ._clock import SystemClock
from ._host import Host
from ._inbox import INTERRUPTED_RESULT, InboxMessage
from ._json import JSONError
from ._models import NoModel, ScriptedModel, UnknownModelError, choose_model, make_model
from ._overlay import Overlay, OverlayError, PluginEntry
from ._plugins import PluginLoadError, PluginManager
from ._registry import AgentRegistry
from ._session import ForkBoundaryError, LiveSession, SessionHooks, SessionStore
from ._tools import SchemaError, ToolLayer, validate_arguments
from ._turn import ModelAdapter, Turn

__all__ = [
    "INTERRUPTED_RESULT",
    "AgentRegistry",
    "ForkBoundaryError",
    "Host",
    "InboxMessage",
    "JSONError",
    "LiveAgent",
    "LiveSession",
    "ModelAdapter",
    "NoModel",
    "Overlay",
    "OverlayError",
    "PluginEntry",
    "PluginLoadError",
    "PluginManager",
    "SchemaError",
    "ScriptedModel",
    "SessionHooks",
    "SessionStore",
    "SystemClock",
    "ToolLayer",
    "Turn",
    "UnknownModelError",
    "choose_model",
    "make_model",
    "validate_arguments",
]
