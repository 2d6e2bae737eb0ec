"""Model adapters: choosing one by name, and the keyless ``scripted`` and ``none`` adapters.

The host offers ``scripted``, ``none`` and ``openai`` itself (:data:`BUILTIN_ADAPTERS`); plugins
add more through ``dsh_model_adapters``; :func:`choose_model` builds the one a name selects.

``scripted`` is deterministic and knows no plugin:

* ``/tool NAME {json}`` calls that tool with those arguments, then replies with the result;
* otherwise the first phrase a plugin offers (``dsh_scripted_phrases``) that matches the message
  answers it: it may call a tool and word the result, or present a plugin's follow-up;
* anything else gets a short help text naming what it understands.

``none`` fails every turn with a visible error.

``openai`` talks to any OpenAI-compatible chat-completions server (:mod:`._openai`, imported
only when chosen): ``model_name`` is required, the key comes from ``settings.environ``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import structlog

from dsh_hookspecs import JSONValue, ModelAdapter, ModelAdapterSpec, ModelSettings, Turn, hookspecs

from . import _json

log = structlog.get_logger(__name__)


class ModelUnavailableError(RuntimeError):
    """The ``none`` adapter: no model is configured."""


class NoModel:
    name = "none"

    async def run_turn(self, turn: Turn) -> None:  # noqa: ARG002 - the adapter protocol
        raise ModelUnavailableError("no model is configured (--model none); this turn cannot run")


_TOOL = re.compile(r"^/tool\s+(?P<name>[A-Za-z0-9_.\-]+)(?:\s+(?P<args>.*))?$", re.DOTALL)


def help_text(phrases: Sequence[hookspecs.ScriptedPhrase]) -> str:
    """What the scripted model answers a message no phrase matches."""
    tries = [f'"{phrase.example}"' for phrase in phrases if phrase.example is not None]
    tool = '"/tool NAME {json}"'
    return (
        f"I am the scripted demo model. Try {', '.join([*tries, f'or {tool}']) if tries else tool}."
    )


class ScriptedModel:
    name = "scripted"

    async def run_turn(self, turn: Turn) -> None:
        text = turn.input.text
        match = _TOOL.match(text.strip())
        if match:
            raw = (match["args"] or "{}").strip()
            try:
                arguments = _json.loads(raw)
            except _json.JSONError as exc:
                turn.say(f"Those tool arguments are not valid JSON: {exc}")
                return
            value = await turn.call_tool(match["name"], arguments)
            turn.say(_json.dumps(value))
            return
        phrases = turn.scripted_phrases()
        for phrase in phrases:
            found = phrase.pattern.match(text)
            if found is None:
                continue
            result: JSONValue = None
            if phrase.tool is not None:
                if phrase.timed_arguments is not None:
                    arguments = phrase.timed_arguments(found, turn.time)
                else:
                    arguments = {} if phrase.arguments is None else phrase.arguments(found)
                result = await turn.call_tool(phrase.tool, arguments)
            turn.say(phrase.reply(found, result))
            return
        turn.say(help_text(phrases))


def _openai_model(settings: ModelSettings) -> ModelAdapter:
    """The ``openai`` adapter; its module (and the SDK) loads only when it is chosen."""
    from ._openai import OpenAIModel  # noqa: PLC0415 - lazy: the SDK is heavy to import

    return OpenAIModel(settings)


#: The adapters the host offers itself, before any plugin's.
BUILTIN_ADAPTERS: tuple[ModelAdapterSpec, ...] = (
    ModelAdapterSpec(
        name="scripted",
        create=lambda _settings: ScriptedModel(),
        description="the keyless deterministic demo model (default)",
    ),
    ModelAdapterSpec(
        name="none", create=lambda _settings: NoModel(), description="every turn fails visibly"
    ),
    ModelAdapterSpec(
        name="openai",
        create=_openai_model,
        description="any OpenAI-compatible chat-completions server (--model-name, --base-url)",
    ),
)


def is_builtin(name: str) -> bool:
    """Whether the host offers the adapter ``name`` itself."""
    return any(spec.name == name for spec in BUILTIN_ADAPTERS)


class UnknownModelError(ValueError):
    """No adapter of that name is offered, or it refused its settings."""


def offered_adapters(
    plugins: Sequence[tuple[str, ModelAdapterSpec]] = (),
) -> dict[str, ModelAdapterSpec]:
    """Adapter name -> spec: the host's own first, then each plugin's new names in order."""
    offered = {spec.name: spec for spec in BUILTIN_ADAPTERS}
    for plugin, spec in plugins:
        if spec.name in offered:
            log.error("plugin.duplicate_model_adapter", plugin=plugin, adapter=spec.name)
            continue
        offered[spec.name] = spec
    return offered


def choose_model(
    name: str,
    settings: ModelSettings | None = None,
    plugins: Sequence[tuple[str, ModelAdapterSpec]] = (),
) -> ModelAdapter:
    """Build the adapter ``name`` selects; :class:`UnknownModelError` with a plain message."""
    offered = offered_adapters(plugins)
    spec = offered.get(name)
    if spec is None:
        raise UnknownModelError(
            f"unknown model adapter {name!r} (offered: {', '.join(sorted(offered))})"
        )
    try:
        return spec.create(settings or ModelSettings())
    except ValueError as exc:
        raise UnknownModelError(f"model adapter {name!r}: {exc}") from None


def make_model(name: str) -> ModelAdapter:
    """The host's own adapter ``name`` with default settings (kept for callers of 0.2)."""
    return choose_model(name)
