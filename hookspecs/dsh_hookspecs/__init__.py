"""The host <-> plugin contract of dsh: pluggy project ``"dsh"``.

A plugin package exposes, under the entry-point group :data:`ENTRY_POINT_GROUP`, a factory (a
class or zero-argument callable) whose instance carries ``@hookimpl`` methods. The host creates
one instance per host, registers it under the entry-point name and calls the hooks of
:mod:`dsh_hookspecs._specs`. Services reach the plugin only through what hooks hand it, typed by
the Protocols exported here. The helpers the host and plugins share are exported here too: owned
tasks (:class:`TaskSlot`, :class:`Once`, :class:`TaskSet`) and waits on the host clock
(:class:`BackOff`, :func:`segment_wait`), and what a stored log owes its Agent
(:func:`owes_turn`).

The contract in prose is docs/design.md section 8; docs/plugins.md walks through writing a plugin.
"""

from __future__ import annotations

import pluggy

from . import _specs as hookspecs
from ._models import (
    DEFAULT_MAX_STEPS,
    ModelAdapter,
    ModelAdapterSpec,
    ModelSettings,
    ScriptedPhrase,
    TimeContext,
    Turn,
    TurnInput,
)
from ._protocols import (
    WAKE_MAX_MS,
    WAKE_MIN_MS,
    Agent,
    AgentPhase,
    AgentRegistry,
    Clock,
    Host,
    Session,
    SessionStore,
    TimerHandle,
    Tool,
    ToolCall,
    ToolHandler,
    ToolRegistry,
)
from ._specs import HOOK_NAMES, PROJECT, hookspec
from ._tasks import Once, TaskSet, TaskSlot
from ._turns import owes_turn
from ._types import (
    BOARD_DATA_MAX_BYTES,
    BOARD_KEY_MAX_CHARS,
    NOTICE_BODY_MAX_CHARS,
    NOTICE_DATA_MAX_BYTES,
    NOTICE_TITLE_MAX_CHARS,
    AgentBusyError,
    AgentDisposedError,
    BoardEntry,
    DeliveryPlan,
    Disposable,
    DshError,
    Event,
    EventRejectedError,
    Followup,
    JSONValue,
    Notice,
    RendererAsset,
    SessionHeader,
    SessionNotLiveError,
    StoredWake,
    ToolConflictError,
)
from ._waits import BackOff, segment_wait
from ._zones import InvalidTimeZoneError, canonical_time_zone, load_time_zone

#: Entry-point group under which plugins are published.
ENTRY_POINT_GROUP = "dsh.plugins"

#: Marker for plugin hook implementations.
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = [
    "BOARD_DATA_MAX_BYTES",
    "BOARD_KEY_MAX_CHARS",
    "DEFAULT_MAX_STEPS",
    "ENTRY_POINT_GROUP",
    "HOOK_NAMES",
    "NOTICE_BODY_MAX_CHARS",
    "NOTICE_DATA_MAX_BYTES",
    "NOTICE_TITLE_MAX_CHARS",
    "PROJECT",
    "WAKE_MAX_MS",
    "WAKE_MIN_MS",
    "Agent",
    "AgentBusyError",
    "AgentDisposedError",
    "AgentPhase",
    "AgentRegistry",
    "BackOff",
    "BoardEntry",
    "Clock",
    "DeliveryPlan",
    "Disposable",
    "DshError",
    "Event",
    "EventRejectedError",
    "Followup",
    "Host",
    "InvalidTimeZoneError",
    "JSONValue",
    "ModelAdapter",
    "ModelAdapterSpec",
    "ModelSettings",
    "Notice",
    "Once",
    "RendererAsset",
    "ScriptedPhrase",
    "Session",
    "SessionHeader",
    "SessionNotLiveError",
    "SessionStore",
    "StoredWake",
    "TaskSet",
    "TaskSlot",
    "TimeContext",
    "TimerHandle",
    "Tool",
    "ToolCall",
    "ToolConflictError",
    "ToolHandler",
    "ToolRegistry",
    "Turn",
    "TurnInput",
    "canonical_time_zone",
    "hookimpl",
    "hookspec",
    "hookspecs",
    "load_time_zone",
    "owes_turn",
    "segment_wait",
]
