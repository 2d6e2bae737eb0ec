"""Plugin loading and the one typed facade over the pluggy hooks.

Plugins are named by entry-point name (group ``dsh.plugins``) in the overlay config. Each is
loaded in isolation: the entry point is resolved, its factory called to make a fresh instance,
the instance registered under the entry-point name and ``check_pending()`` run; any failure
unregisters it and raises :class:`PluginLoadError` naming the plugin. Then only that plugin's
``dsh_plugin_start`` runs, with its own config table.

Default plugins (:meth:`PluginManager.load` with ``default=True``) are loaded the same way, by
the host, before any other: the default plugin ``dsh.models`` offers the host's own model
adapters through ``dsh_model_adapters`` like any plugin would. They are not the overlay's, so
:attr:`PluginManager.names` leaves them out; :meth:`PluginManager.unload_all` unloads them last.

Every hook is called impl by impl, in pluggy's order (last registered first), so one failing
plugin is logged and never starves the others; nothing else touches ``pm.hook``. Because the host
runs that loop itself, a pluggy wrapper (``@hookimpl(wrapper=True)`` or ``hookwrapper=True``)
would be called as an ordinary implementation: such a plugin is refused at load with a
:class:`PluginLoadError` naming the plugin and the hook.
"""

from __future__ import annotations

import importlib.metadata
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pluggy
import structlog

from dsh_hookspecs import (
    ENTRY_POINT_GROUP,
    PROJECT,
    DeliveryPlan,
    Disposable,
    Event,
    EventRejectedError,
    JSONValue,
    ModelAdapterSpec,
    RendererAsset,
    StoredWake,
    hookspecs,
)

from .._observations import OpenReason
from ._disposables import close_disposable
from ._session import LiveSession, SessionHooks

if TYPE_CHECKING:
    from ._agent import LiveAgent

log = structlog.get_logger(__name__)

_T = TypeVar("_T")


class PluginLoadError(Exception):
    """A plugin named in the overlay could not be loaded; the message names it."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"plugin {plugin!r}: {message}")
        self.plugin = plugin


def _callable_disposable(value: object) -> bool:
    return value is None or callable(value)


class PluginManager(SessionHooks):
    """Owns the pluggy manager, the loaded plugins and their start disposables."""

    def __init__(self, *, before_unload: Callable[[str], Awaitable[None]] | None = None) -> None:
        """``before_unload(name)``: closes what plugin ``name`` started on each Agent (the host
        wires the Agent registry's ``dispose_plugin`` in), before its start disposable."""
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._started: dict[str, Disposable | None] = {}
        #: :attr:`names` as of the last load or unload (``None``: to be computed).
        self._names: tuple[str, ...] | None = None
        self._defaults: set[str] = set()
        self._impl_cache: dict[str, list[pluggy.HookImpl]] = {}
        self._before_unload = before_unload

    # -- loading ------------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The loaded plugins, in load order, default plugins left out."""
        return list(self.loaded)

    @property
    def loaded(self) -> tuple[str, ...]:
        """:attr:`names` as a tuple, kept from one load or unload to the next (read on every
        wake request and board post)."""
        names = self._names
        if names is None:
            names = self._names = tuple(n for n in self._started if n not in self._defaults)
        return names

    @property
    def default_names(self) -> list[str]:
        """The loaded default plugins, in load order."""
        return [name for name in self._started if name in self._defaults]

    def load(
        self,
        name: str,
        config: Mapping[str, JSONValue],
        host: object,
        *,
        factory: Callable[[], object] | None = None,
        default: bool = False,
    ) -> None:
        """Load one plugin by entry-point name (or from ``factory``) and start it; ``default``:
        one of the host's default plugins (not listed in :attr:`names`)."""
        if name in self._started or self.pm.get_plugin(name) is not None:
            raise PluginLoadError(name, "is already loaded")
        if factory is None:
            factory = _resolve_entry_point(name)
        try:
            plugin = factory()
        except Exception as exc:
            raise PluginLoadError(name, f"factory failed: {exc!r}") from exc
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
            _refuse_wrappers(self.pm, plugin)
        except Exception as exc:
            if self.pm.get_plugin(name) is not None:
                self.pm.unregister(name=name)
            raise PluginLoadError(name, f"hook validation failed: {exc}") from exc
        self._impl_cache.clear()
        try:
            disposable = self._start(plugin, config, host)
        except Exception as exc:
            self.pm.unregister(name=name)
            self._impl_cache.clear()
            raise PluginLoadError(name, f"dsh_plugin_start failed: {exc!r}") from exc
        self._started[name] = disposable
        self._names = None
        if default:
            self._defaults.add(name)
        log.info("plugin.loaded", plugin=name)

    def _start(
        self, plugin: object, config: Mapping[str, JSONValue], host: object
    ) -> Disposable | None:
        for impl in self.pm.hook.dsh_plugin_start.get_hookimpls():
            if impl.plugin is plugin:
                result = impl.function(**_args(impl, {"host": host, "config": config}))
                if not _callable_disposable(result):
                    raise TypeError("dsh_plugin_start must return a callable or None")
                return cast("Disposable | None", result)
        return None

    async def unload(self, name: str) -> None:
        """Dispose everything ``name`` started (per-Agent first), then unregister it."""
        if name not in self._started:
            raise KeyError(name)
        if self._before_unload is not None:
            await self._before_unload(name)
        disposable = self._started.pop(name)
        self._names = None
        self._defaults.discard(name)
        if disposable is not None:
            await close_disposable(name, disposable)
        self.pm.unregister(name=name)
        self._impl_cache.clear()
        log.info("plugin.unloaded", plugin=name)

    async def unload_all(self) -> None:
        """Unload every plugin, the last loaded first (so the default plugins last)."""
        for name in reversed(list(self._started)):
            await self.unload(name)

    # -- the facade ---------------------------------------------------------------------------
    def _impls(self, hook: str) -> list[pluggy.HookImpl]:
        impls = self._impl_cache.get(hook)
        if impls is None:
            caller = getattr(self.pm.hook, hook)
            impls = list(reversed(caller.get_hookimpls()))
            self._impl_cache[hook] = impls
        return impls

    def _each(self, hook: str, **kwargs: object) -> Iterator[tuple[str, Any]]:
        """Call every impl of ``hook`` in order; yield ``(plugin, result)``; log failures."""
        for impl in self._impls(hook):
            try:
                result = impl.function(**_args(impl, kwargs))
            except Exception:
                log.exception("plugin.hook_failed", plugin=impl.plugin_name, hook=hook)
                continue
            yield impl.plugin_name, result

    def answers_wakes(self, plugin: str) -> bool:
        """Whether ``plugin``'s due wakes may be answered cold: it implements ``dsh_wake_due``
        and no other plugin validates events (``dsh_event_validate`` needs a live Session, and a
        plan's events must not escape a veto)."""
        return any(impl.plugin_name == plugin for impl in self._impls("dsh_wake_due")) and all(
            impl.plugin_name == plugin for impl in self._impls("dsh_event_validate")
        )

    def wake_due(self, plugin: str, wake: StoredWake) -> DeliveryPlan | None:
        """The plan of ``plugin`` (only its own implementation is called) for its due ``wake``;
        ``None`` when it has none, answered ``None``, or raised (logged)."""
        for impl in self._impls("dsh_wake_due"):
            if impl.plugin_name != plugin:
                continue
            try:
                plan = impl.function(**_args(impl, {"plugin": plugin, "wake": wake}))
            except Exception:
                log.exception("plugin.hook_failed", plugin=plugin, hook="dsh_wake_due")
                return None
            return plan if isinstance(plan, DeliveryPlan) else None
        return None

    def agent_published(self, agent: LiveAgent) -> list[tuple[str, Disposable]]:
        out: list[tuple[str, Disposable]] = []
        for plugin, result in self._each("dsh_agent_published", agent=agent):
            if result is None:
                continue
            if not callable(result):
                log.error("plugin.bad_disposable", plugin=plugin, hook="dsh_agent_published")
                continue
            out.append((plugin, result))
        return out

    def event_validate(self, session: LiveSession, event: Event) -> None:
        for impl in self._impls("dsh_event_validate"):
            try:
                impl.function(**_args(impl, {"session": session, "event": event}))
            except Exception as exc:
                raise EventRejectedError(
                    f"{event.type} event rejected by plugin {impl.plugin_name!r}: {exc}",
                    plugin=impl.plugin_name,
                    event=event,
                ) from exc

    def session_opened(self, session: LiveSession, reason: OpenReason) -> None:
        for impl in self._impls("dsh_session_opened"):
            try:
                impl.function(**_args(impl, {"session": session, "reason": reason}))
            except Exception as exc:
                log.error(
                    "session.invalid",
                    plugin=impl.plugin_name,
                    session_id=session.id,
                    reason=reason,
                    error=str(exc),
                )

    def session_flushed(self, session: LiveSession, through_seq: int) -> None:
        for _ in self._each("dsh_session_flushed", session=session, through_seq=through_seq):
            pass

    def event_present(
        self,
        events: Sequence[Event],
        seq: int,
        seed_length: int,
        session: LiveSession | None = None,
    ) -> JSONValue | None:
        """The first plugin view of ``events[seq]``; ``session``: the live owner of ``events``."""
        for _, view in self._each(
            "dsh_event_present",
            events=events,
            seq=seq,
            seed_length=seed_length,
            session=session,
        ):
            if view is not None:
                return view  # type: ignore[no-any-return]
        return None

    def session_views(
        self,
        events: Sequence[Event],
        seed_length: int,
        session: LiveSession | None = None,
    ) -> dict[str, JSONValue]:
        """Every plugin's views of the committed ``events`` merged; the first to name one wins."""
        merged: dict[str, JSONValue] = {}
        for plugin, views in self._each(
            "dsh_session_views", events=events, seed_length=seed_length, session=session
        ):
            if views is None:
                continue
            if not isinstance(views, Mapping):
                log.error("plugin.bad_session_views", plugin=plugin)
                continue
            for name, view in views.items():
                if not isinstance(name, str) or not name:
                    log.error("plugin.bad_session_views", plugin=plugin, view=repr(name))
                elif name in merged:
                    log.error("plugin.session_view_clash", plugin=plugin, view=name)
                else:
                    merged[name] = view
        return merged

    def renderer_assets(self) -> list[tuple[str, RendererAsset]]:
        return self._collect("dsh_renderer_assets", RendererAsset, "plugin.bad_renderer_asset")

    def scripted_phrases(self) -> list[hookspecs.ScriptedPhrase]:
        offered = self._collect(
            "dsh_scripted_phrases", hookspecs.ScriptedPhrase, "plugin.bad_scripted_phrase"
        )
        return [phrase for _, phrase in offered]

    def model_adapters(self) -> list[tuple[str, ModelAdapterSpec]]:
        """The model adapters plugins offer, as ``(plugin, spec)`` (``dsh_model_adapters``): the
        default plugins' first, so that a name of theirs offered again is the duplicate."""
        offered = self._collect("dsh_model_adapters", ModelAdapterSpec, "plugin.bad_model_adapter")
        return sorted(offered, key=lambda item: item[0] not in self._defaults)

    def _collect(self, hook: str, kind: type[_T], problem: str) -> list[tuple[str, _T]]:
        """The items of every plugin's ``hook`` result that are ``kind`` (others logged)."""
        out: list[tuple[str, _T]] = []
        for plugin, items in self._each(hook):
            for item in items or ():
                if isinstance(item, kind):
                    out.append((plugin, item))
                else:
                    log.error(problem, plugin=plugin)
        return out


def _refuse_wrappers(pm: pluggy.PluginManager, plugin: object) -> None:
    """Raise ``TypeError`` naming the first hook that ``plugin`` implements as a wrapper."""
    for caller in pm.get_hookcallers(plugin) or ():
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper):
                kind = "wrapper=True" if impl.wrapper else "hookwrapper=True"
                raise TypeError(
                    f"{caller.name} is a {kind} implementation; this host calls each "
                    "implementation on its own and does not run wrappers"
                )


def _args(impl: pluggy.HookImpl, kwargs: Mapping[str, object]) -> dict[str, object]:
    return {name: kwargs[name] for name in impl.argnames}


def _resolve_entry_point(name: str) -> Callable[[], object]:
    matches = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name)
    if not matches:
        known = sorted(ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
        raise PluginLoadError(
            name, f"no such plugin in entry-point group {ENTRY_POINT_GROUP!r} (known: {known})"
        )
    (entry_point, *_) = tuple(matches)
    try:
        target = entry_point.load()
    except Exception as exc:
        raise PluginLoadError(name, f"import failed: {exc!r}") from exc
    if inspect.isclass(target) or callable(target):
        return target  # type: ignore[no-any-return]
    return lambda: target
