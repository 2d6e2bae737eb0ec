"""The host's heart: live Sessions, Agents and what drives them.

What lives here: the Session store with its flush contract (``_session``; what it tells its
subscribers is :mod:`dsh_host._observations`, below storage), Agents and their registry
(``_agent``, ``_registry``), an Agent's inbox (``_inbox``), the tool layers (``_tools``), the
turn a model adapter acts through (``_turn``), the durability gate of a turn (``_durability``),
the plugin loader and its hook facade (``_plugins``), cold delivery and the live set's bounds
(``_wakeups``, ``_settle``, ``_eviction``), the host clock and disposal (``_clock``,
``_disposables``), and the host object that wires them (``_host``). The public names are
re-exported by :mod:`dsh_host`; the command line (:mod:`dsh_host.cli`), the web server
(:mod:`dsh_host.web`) and the conformance suites import the heart through this module only.
Storage (:mod:`dsh_host.persistence`), the model adapters (:mod:`dsh_host.models`) and the
notification channels (:mod:`dsh_host.notify`) sit below it and never import it.
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
