"""The default plugin ``dsh.models``: the ``scripted``, ``none`` and ``openai`` adapters.

The host registers it always, before the overlay's plugins and the same way (as ``llm`` ships
its OpenAI models as a default plugin), and gathers its ``dsh_model_adapters`` with every other
plugin's: a later plugin offering one of these names is a duplicate and is refused. Like any
plugin it knows only :mod:`dsh_hookspecs`; what it needs from the host, the phrases for the
scripted model, it is given when created.
"""

from __future__ import annotations

from collections.abc import Sequence

from dsh_hookspecs import ModelAdapter, ModelAdapterSpec, ModelSettings, hookimpl

from ._none import NoModel
from ._scripted import PhraseSource, ScriptedModel

#: The name the default plugin is registered under.
DEFAULT_MODELS = "dsh.models"


def _openai_model(settings: ModelSettings) -> ModelAdapter:
    """The ``openai`` adapter; its module (and the SDK) loads only when it is chosen."""
    from ._openai import OpenAIModel  # noqa: PLC0415 - lazy: the SDK is heavy to import

    return OpenAIModel(settings)


class DefaultModels:
    """Offers ``scripted`` (its phrases from ``phrases()``), ``none`` and ``openai``."""

    def __init__(self, phrases: PhraseSource = tuple) -> None:
        self._phrases = phrases

    @hookimpl
    def dsh_model_adapters(self) -> Sequence[ModelAdapterSpec]:
        return (
            ModelAdapterSpec(
                name="scripted",
                create=lambda _settings: ScriptedModel(self._phrases),
                description="the keyless deterministic demo model (default)",
            ),
            ModelAdapterSpec(
                name="none",
                create=lambda _settings: NoModel(),
                description="every turn fails visibly",
            ),
            ModelAdapterSpec(
                name="openai",
                create=_openai_model,
                description="any OpenAI-compatible chat-completions server (--model-name, "
                "--base-url)",
            ),
        )
