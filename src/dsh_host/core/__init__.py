"""The host's heart: live Sessions, Agents and what drives them.

What lives here: the Session store with its flush contract and its one subscription API
(``_session``; what it tells subscribers is :mod:`dsh_host._observations`), Agents and their registry (``_agent``, ``_registry``), an
Agent's inbox (``_inbox``), the tool layers (``_tools``), the durability gate of a turn
(``_durability``), the plugin loader and its hook facade (``_plugins``), cold delivery and the
live set's bounds (``_wakeups``, ``_settle``, ``_eviction``), and the host object that wires
them (``_host``). The public names are re-exported by :mod:`dsh_host`; the command line
(:mod:`dsh_host.cli`), the web server (:mod:`dsh_host.web`), storage (:mod:`dsh_host.persistence`)
and notifications (:mod:`dsh_host.notify`) are rooms of their own around it.
"""

from ._agent import LiveAgent
from ._clock import SystemClock
from ._host import LiveHost
from ._inbox import INTERRUPTED_RESULT, InboxMessage
from ._plugins import PluginLoadError, PluginManager
from ._registry import LiveAgentRegistry
from ._session import ForkBoundaryError, LiveSession, LiveSessionStore, SessionHooks
from ._tools import SchemaError, ToolLayer, resolve, validate_arguments
from ._turn import LiveTurn

__all__ = [
    "INTERRUPTED_RESULT",
    "ForkBoundaryError",
    "InboxMessage",
    "LiveAgent",
    "LiveAgentRegistry",
    "LiveHost",
    "LiveSession",
    "LiveSessionStore",
    "LiveTurn",
    "PluginLoadError",
    "PluginManager",
    "SchemaError",
    "SessionHooks",
    "SystemClock",
    "ToolLayer",
    "resolve",
    "validate_arguments",
]
