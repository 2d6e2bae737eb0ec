"""dsh_host: the reference host for dsh plugins.

Sessions with the flush contract, the persistence coordinator and its backends, Agents with
idle / maintenance / running phases, the tool registry, model adapters, the plugin loader and
the ``dsh`` CLI. Plugins never import this package; they receive its services through hooks.
"""

from __future__ import annotations

from ._agent import AgentRegistry, InboxMessage, LiveAgent, ModelAdapter, Turn
from ._clock import SystemClock
from ._host import Host
from ._models import NoModel, ScriptedModel, make_model
from ._overlay import Overlay, OverlayError, PluginEntry
from ._plugins import PluginLoadError, PluginManager
from ._session import ForkBoundaryError, LiveSession, SessionStore
from ._tools import ToolLayer

__all__ = [
    "AgentRegistry",
    "ForkBoundaryError",
    "Host",
    "InboxMessage",
    "LiveAgent",
    "LiveSession",
    "ModelAdapter",
    "NoModel",
    "Overlay",
    "OverlayError",
    "PluginEntry",
    "PluginLoadError",
    "PluginManager",
    "ScriptedModel",
    "SessionStore",
    "SystemClock",
    "ToolLayer",
    "Turn",
    "make_model",
]
