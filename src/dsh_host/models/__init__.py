"""Model adapters: the turn an adapter acts through, and choosing an adapter by name.

Every adapter is a plugin's, offered through ``dsh_model_adapters``. The host's own ones,
``scripted`` (:mod:`._scripted`), ``none`` (:mod:`._none`) and ``openai`` (:mod:`._openai`,
imported only when chosen; its messages in :mod:`._openai_messages`), come from the default
plugin :class:`DefaultModels` (:mod:`._defaults`), which the host registers before any other.
:func:`choose_model` builds the adapter a name selects among what the plugins offer.
What an adapter sees of one turn is the host's :class:`dsh_host.LiveTurn` (the core's).
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from dsh_hookspecs import ModelAdapter, ModelAdapterSpec, ModelSettings

from ._defaults import DEFAULT_MODELS, DefaultModels
from ._none import ModelUnavailableError, NoModel
from ._scripted import PhraseSource, ScriptedModel, help_text

__all__ = [
    "DEFAULT_MODELS",
    "DefaultModels",
    "ModelUnavailableError",
    "NoModel",
    "PhraseSource",
    "ScriptedModel",
    "UnknownModelError",
    "choose_model",
    "default_adapters",
    "help_text",
    "make_model",
    "offered_adapters",
]

log = structlog.get_logger(__name__)


class UnknownModelError(ValueError):
    """No adapter of that name is offered, or it refused its settings."""


def default_adapters() -> list[tuple[str, ModelAdapterSpec]]:
    """What the default plugin alone offers (its scripted model knows no phrase), as
    ``(plugin, spec)``: the adapters a caller without a host chooses from."""
    return [(DEFAULT_MODELS, spec) for spec in DefaultModels().dsh_model_adapters()]


def offered_adapters(
    plugins: Sequence[tuple[str, ModelAdapterSpec]],
) -> dict[str, ModelAdapterSpec]:
    """Adapter name -> spec, in the plugins' order; a name offered again is logged and ignored."""
    offered: dict[str, ModelAdapterSpec] = {}
    for plugin, spec in plugins:
        if spec.name in offered:
            log.error("plugin.duplicate_model_adapter", plugin=plugin, adapter=spec.name)
            continue
        offered[spec.name] = spec
    return offered


def choose_model(
    name: str,
    settings: ModelSettings | None = None,
    plugins: Sequence[tuple[str, ModelAdapterSpec]] | None = None,
) -> ModelAdapter:
    """Build the adapter ``name`` selects among what ``plugins`` offer, as ``(plugin, spec)``
    (the default plugin's, :func:`default_adapters`, when ``None``); raises
    :class:`UnknownModelError` with a plain message."""
    offered = offered_adapters(default_adapters() if plugins is None else plugins)
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
    """The default plugin's adapter ``name`` with default settings (kept for callers of 0.2)."""
    return choose_model(name)
