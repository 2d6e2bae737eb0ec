"""The reference host: one object that wires Sessions, persistence, Agents, tools and plugins.

Use it as an async context manager::

    async with LiveHost(backend=SQLiteBackend(data_dir), overlay=Overlay.load(path)) as host:
        agent = await host.create_session()
        agent.send("hello")

It implements :class:`dsh_hookspecs.Host` (what ``dsh_plugin_start`` receives).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from types import TracebackType
from typing import Any, Self

import structlog

from dsh_hookspecs import (
    Clock,
    JSONValue,
    ModelAdapter,
    ModelSettings,
    SessionHeader,
    TaskSet,
    TaskSlot,
)

from .._overlay import Overlay
from .._records import StoredSession, damaged_sessions
from ..models import DEFAULT_MODELS, DefaultModels, NoModel, choose_model
from ..notify import RETRY_BASE_SECONDS, Channels, OutboxSender
from ..persistence import Backend, Coordinator, OutboxBackend, StorageError, leases_of
from ._agent import LiveAgent, new_id
from ._clock import SystemClock
from ._cold import ColdPlans
from ._eviction import Evictor
from ._plugins import PluginManager
from ._registry import LiveAgentRegistry
from ._session import LiveSession, LiveSessionStore, StoredCheck, check_fork_boundary
from ._settle import Settler, WokenState
from ._tools import ToolLayer
from ._wakeups import WakeService

log = structlog.get_logger(__name__)


class LiveHost:
    """The composition root of the reference host."""

    def __init__(
        self,
        *,
        backend: Backend,
        model: str | ModelAdapter = "scripted",
        model_settings: ModelSettings | None = None,
        clock: Clock | None = None,
        overlay: Overlay | None = None,
        batch_delay: float = 0.005,
        evict_idle_seconds: float = 0,
        channels: Channels | None = None,
        public_url: str | None = None,
        notify_timeout: float = 10.0,
        notify_retry_base: float = RETRY_BASE_SECONDS,
        notify_owner: str | None = None,
        cold_plans: bool = True,
    ) -> None:
        """``model``: an adapter, or the name of one a plugin offers (``dsh_model_adapters``;
        the default plugin ``dsh.models`` offers ``scripted``, ``none`` and ``openai``), built
        with ``model_settings`` as soon as a loaded plugin offers it: here for the default
        plugin's, else once the overlay's plugins are loaded (:meth:`start` raises
        :class:`UnknownModelError` for a name nobody offers).
        ``evict_idle_seconds``: detach live Sessions idle that long (0, the default: never).
        ``channels``: where notices go outside the page (none: plugins' notices file nothing);
        an :class:`~dsh_host.notify._sender.OutboxSender` then sends the outbox (``public_url``
        links each message to its Session; ``notify_*`` tune its sends). ``cold_plans``: a due
        wake of a cold Session is first offered to its plugin's ``dsh_wake_due`` and stored
        without making the Session live (:mod:`._cold`); ``False``: always resumed."""
        self.clock: Clock = clock or SystemClock()
        self.backend = backend
        self.overlay = overlay or Overlay()
        self.plugins = PluginManager(before_unload=self._dispose_plugin)
        # The default plugins, loaded like any other and before the overlay's.
        self.plugins.load(
            DEFAULT_MODELS,
            {},
            self,
            factory=partial(DefaultModels, self.plugins.scripted_phrases),
            default=True,
        )
        self.sessions = LiveSessionStore(
            clock=self.clock, hooks=self.plugins, plugin_names=lambda: self.plugins.loaded
        )
        self.tools = ToolLayer()
        self._model_settings = model_settings or ModelSettings()
        #: An adapter no plugin loaded so far offers is chosen in :meth:`start`, once the
        #: overlay's plugins are loaded; until then turns fail like ``none``.
        self._model_name: str | None = None
        self.model: ModelAdapter = NoModel()
        if not isinstance(model, str):
            self.model = model
        else:
            adapters = self.plugins.model_adapters()
            if any(spec.name == model for _, spec in adapters):
                self.model = choose_model(model, self._model_settings, adapters)
            else:
                self._model_name = model
        self.agents = LiveAgentRegistry(
            store=self.sessions,
            publish=self.plugins.agent_published,
            global_tools=self.tools,
            model=self.model,
        )
        self.persistence = Coordinator(
            self.sessions, backend, clock=self.clock, batch_delay=batch_delay
        )
        #: The notification channels and the outbox's sender (``None`` without channels).
        self.channels = channels
        self.public_url = public_url
        self.sender: OutboxSender | None = None
        if channels is not None and isinstance(backend, OutboxBackend):
            self.sender = OutboxSender(
                backend,
                channels,
                self.clock,
                public_url=public_url,
                timeout=notify_timeout,
                retry_base=notify_retry_base,
                owner=notify_owner,
                defer=lambda: self.wakeups.delivering,
            )
            self.persistence.channels = channels.ids
            self.persistence.outbox_filed = self.sender.kick
        #: The backend's Session leases when several hosts share it (docs/always-on.md), else
        #: ``None``: a Session is made live here only once its lease is held.
        self.leases = leases_of(backend)
        self._renewing = TaskSlot("host.lease_renewal")
        self._dropping = TaskSet("host.lease_lost")
        if self.leases is not None:
            self.leases.on_lost(self._lease_lost)
        #: Cold delivery: resumes cold Sessions whose durable wake entry is due.
        # On a shared database other hosts file wakes too: look again at least once per
        # renewal interval, so a dead host's due wakes are taken over soon after its leases.
        segment = 60.0 if self.leases is None else min(60.0, self.leases.renew_interval)
        #: Sessions cold delivery woke go cold again once quiet (a herd's bound on the live set).
        self.settler = Settler(clock=self.clock, state=self._woken_state, evict=self._evict_woken)
        #: Cold delivery plans (:mod:`._cold`).
        self.cold = ColdPlans(
            backend=backend,
            sessions=self.sessions,
            answers=self.plugins.answers_wakes,
            ask=self.plugins.wake_due,
            outbox=self.persistence.outbox_changes,
            filed=self.persistence.outbox_filed,
            new_id=new_id,
            now_ms=self.clock.now_ms,
        )
        self.wakeups = WakeService(
            backend=backend,
            sessions=self.sessions,
            clock=self.clock,
            resume=self._wake,
            max_segment=segment,
            settler=self.settler,
            shared=self.leases is not None,
            plan=self.cold.deliver if cold_plans else None,
            sending=lambda: self.sender is not None and self.sender.sending,
        )
        #: Idle eviction (docs/always-on.md): live Sessions nobody uses go cold.
        self.evictor = Evictor(
            sessions=self.sessions,
            agents=self.agents.all,
            clock=self.clock,
            evict=self._evict,
            idle_seconds=evict_idle_seconds,
        )
        self._started = False
        self._closed = False

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Open storage and load the overlay's plugins, in order. Fails with a clear error."""
        if self._started:
            return
        await self.backend.open()
        self._started = True
        try:
            for entry in self.overlay.plugins:
                self.plugins.load(entry.name, entry.config, self)
            if self._model_name is not None:
                self.model = choose_model(
                    self._model_name, self._model_settings, self.plugins.model_adapters()
                )
                self.agents.model = self.model
        except BaseException:
            await self.close()
            raise
        self.wakeups.start()  # due wakes at start-up are delivered promptly
        if self.sender is not None:
            self.sender.start()
        self.evictor.start()
        if self.leases is not None:
            self._renewing.start(self._renew)
        log.info(
            "host.started",
            backend=self.backend.name,
            model=self.model.name,
            plugins=self.plugins.names,
        )

    def load_plugin(
        self,
        name: str,
        config: dict[str, JSONValue] | None = None,
        *,
        factory: Callable[[], object] | None = None,
    ) -> None:
        """Load one more plugin at run time (it sees only Agents published from now on)."""
        self.plugins.load(name, config or {}, self, factory=factory)

    async def unload_plugin(self, name: str) -> None:
        await self.plugins.unload(name)

    async def _dispose_plugin(self, name: str) -> None:
        # The plugin manager asks this before unloading ``name``: from above, not a back-door.
        await self.agents.dispose_plugin(name)

    async def close(self) -> None:
        """Dispose every Agent, commit every pending flush, unload plugins, close storage."""
        if self._closed:
            return
        self._closed = True
        await self.wakeups.close()  # nothing is resumed while the host winds down
        if self.sender is not None:  # sends under way end (each bounded); the rest wait
            await self.sender.stop()
        await self.settler.close()
        await self.evictor.close()
        await self._renewing.stop()
        await self._dropping.join()
        for agent in reversed(self.agents.all()):
            await agent.dispose()
        for session in self.sessions.live():
            await self._final_flush(session)
            self.sessions.detach(session)
        await self.plugins.unload_all()
        await _close_model(self.model)
        await self.persistence.close()
        if self._started:
            await self.backend.close()
        log.info("host.closed")

    async def _final_flush(self, session: LiveSession) -> None:
        try:
            await self.sessions.flush(session)
        except Exception as exc:
            log.error("host.final_flush_failed", session_id=session.id, error=str(exc))

    # -- Sessions and their root Agents --------------------------------------------------------
    async def create_session(self, *, cwd: str | None = None) -> LiveAgent:
        """A new live Session with a root Agent; its header is flushed to storage."""
        session = self.sessions.create(cwd=cwd)
        agent = self.agents.create(session)
        await self._first_flush(session, agent)
        return agent

    async def fork_session(self, session_id: str, boundary: int | None = None) -> LiveAgent:
        """Fork a Session (resuming it first when cold); the child gets its own root Agent.

        A cold parent's explicit boundary is checked against its stored log before it is
        resumed, so a refused fork (:class:`ForkBoundaryError`) leaves it cold. The default
        boundary (the whole log) is checked after the resume, which closes a turn the process
        died in: a crash mid-turn never makes a Session un-forkable.
        """
        check = None if boundary is None else partial(check_fork_boundary, boundary=boundary)
        parent = await self._resume(session_id, check=check)
        child = self.sessions.fork(parent.session, boundary)
        agent = self.agents.create(child)
        await self._first_flush(child, agent)
        return agent

    async def _first_flush(self, session: LiveSession, agent: LiveAgent) -> None:
        """Flush a new Session; when that fails, dispose its Agent and detach it, then raise.

        The caller was told the create or fork failed, so nothing of it may stay live or listed
        (a retry would otherwise leave one more "ghost" Session each time).
        """
        try:
            await self.sessions.flush(session)
        except BaseException:
            await agent.dispose()
            self.sessions.detach(session)
            raise

    async def resume_session(self, session_id: str) -> LiveAgent:
        """The root Agent of a live Session, resuming it from storage when cold. Idempotent.

        Raises :class:`KeyError` when no such Session exists.
        """
        return await self._resume(session_id)

    async def _wake(self, session_id: str) -> LiveAgent:
        # Cold delivery shares due Sessions with other hosts: one being claimed is skipped, and
        # one another host delivered since the index was read is not opened (NothingDueError).
        return await self._resume(session_id, skip_locked=True, due_by=self.clock.now_ms())

    async def _resume(
        self,
        session_id: str,
        *,
        check: StoredCheck | None = None,
        skip_locked: bool = False,
        due_by: int | None = None,
    ) -> LiveAgent:
        leases = self.leases
        if leases is not None and self.sessions.get(session_id) is None:
            # Raises SessionLiveElsewhereError while another live host holds it.
            await leases.acquire(session_id, skip_locked=skip_locked)
            try:
                session = await self.sessions.resume(session_id, check=check, due_by=due_by)
            except BaseException:
                if self.sessions.get(session_id) is None:
                    await self._release(session_id)
                raise
        else:
            session = await self.sessions.resume(session_id, check=check, due_by=due_by)
        return self.agents.for_session(session_id) or self.agents.create(session)

    async def _release(self, session_id: str) -> None:
        """Give up the lease of a Session that is cold here (best effort: it runs out)."""
        if self.leases is None:
            return
        try:
            await self.leases.release(session_id)
        except StorageError as exc:
            log.warning("host.lease_release_failed", session_id=session_id, error=str(exc))

    async def _renew(self) -> None:
        """Renew this host's leases every ``renew_interval`` seconds of real time (the lease
        clock is the database's, not the host's)."""
        leases = self.leases
        assert leases is not None
        failing = False
        while True:
            await asyncio.sleep(leases.renew_interval)
            try:
                await leases.renew()  # a lost lease is told to _lease_lost
            except StorageError as exc:
                if not failing:
                    log.error("host.lease_renewal_failed", error=str(exc))
                failing = True
            else:
                if failing:
                    log.info("host.lease_renewal_recovered")
                failing = False

    def _lease_lost(self, session_id: str) -> None:
        """Another host owns ``session_id`` now: drop it here without writing anything."""
        if self.sessions.get(session_id) is not None and not self._closed:
            self._dropping.spawn(self._drop(session_id))

    async def _drop(self, session_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return
        # Detached first: nothing more of it is written (the database would refuse it anyway).
        self.sessions.detach(session)
        agent = self.agents.for_session(session_id)
        if agent is not None:
            await agent.dispose()
        log.warning("host.session_dropped", session_id=session_id, reason="lease lost")

    async def close_session(self, session_id: str) -> None:
        """Make a live Session cold: dispose its Agent, flush, detach."""
        session = self.sessions.get(session_id)
        if session is None:
            return
        agent = self.agents.for_session(session_id)
        if agent is not None:
            await agent.dispose()
        await self._final_flush(session)
        self.sessions.detach(session)
        await self._release(session_id)

    async def delete_session(self, session_id: str) -> bool:
        """Delete a Session for good; ``False`` when no such Session exists.

        A live one is stopped first: its running turn cancelled, its Agent disposed, the
        Session detached, and nothing more of it is written. Then storage removes its header,
        events, wake entries, board rows and name in one transaction (its forks are copies and
        keep working). While this runs the Session cannot be resumed, and a resume already under
        way opens nothing. Raises :class:`StorageError` when storage fails (a live Session
        stays stopped then, its log intact) and :class:`SessionLiveElsewhereError` while another
        live host holds it.
        """
        with self.sessions.deleting(session_id):
            live = await self._stop_for_delete(session_id)
            try:
                deleted = await self.backend.delete(session_id)
            except BaseException:
                if live:
                    await self._release(session_id)
                raise
        self.wakeups.forget(session_id)
        log.info("host.session_deleted", session_id=session_id, live=live, stored=deleted)
        return deleted or live

    async def _stop_for_delete(self, session_id: str) -> bool:
        """Stop the live Session ``session_id`` without writing more of it; whether it was live."""
        agent = self.agents.for_session(session_id)
        if agent is not None:
            agent.cancel_turn()
            await agent.dispose()
        session = self.sessions.get(session_id)
        if session is None:
            return agent is not None
        self.sessions.detach(session)
        await self.persistence.discard(session)
        return True

    def attach(self, session_id: str) -> Callable[[], None]:
        """Count an attached event stream (it keeps the Session from idle eviction); the
        result releases it (idempotent)."""
        return self.evictor.attach(session_id)

    async def _evict(self, session: LiveSession) -> bool | None:
        """Idle eviction: flush, dispose its Agent, flush again, detach. A flush that fails or
        is not acknowledged leaves the Session live (answers False, or raises); an Agent that
        is no longer idle (input arrived meanwhile) leaves it live too (answers None)."""
        if not self.sessions.is_live(session) or self._in_use(session.id):
            return None
        if not await self.sessions.flush(session):
            return False
        if self._in_use(session.id):
            return None
        agent = self.agents.for_session(session.id)
        if agent is not None:
            await agent.dispose()
        if not await self.sessions.flush(session):
            return False
        self.sessions.detach(session)
        await self._release(session.id)
        return True

    def _woken_state(self, session_id: str) -> WokenState:
        """What a Session cold delivery woke is doing (see :class:`Settler`)."""
        session = self.sessions.get(session_id)
        if session is None or self.evictor.attached(session_id):
            return "gone"
        if self._in_use(session_id):
            return "busy"
        now = self.clock.now_ms()
        if any(at_ms <= now for at_ms in self.sessions.wakes(session).values()):
            return "due"
        return "quiet"

    async def _evict_woken(self, session_id: str) -> bool | None:
        session = self.sessions.get(session_id)
        return True if session is None else await self._evict(session)

    def _in_use(self, session_id: str) -> bool:
        agent = self.agents.for_session(session_id)
        return agent is not None and (agent.phase != "idle" or bool(agent.inbox))

    async def reindex(self) -> tuple[int, int, list[str]]:
        """Rebuild the durable wake index, the board and the stored names from the logs
        (``dsh reindex``, and the rebuild at boot of :meth:`rebuild_if_migrated`).

        Every stored Session that is not live is opened without its entries and rows so that
        the loaded plugins file and post them again from their fold in ``dsh_session_opened``
        (no Agent is created, nothing is delivered); entries and rows no plugin files again are
        cleared, and a stored name that is not the log's is replaced; each is flushed and
        detached. Returns ``(sessions rebuilt, entries now standing, ids that failed)``; a
        Session that fails (an unreadable log, a failed write) is logged and skipped. Cold
        delivery is paused meanwhile (it looks for due entries again after).
        """
        async with self.wakeups.paused():
            return await self._reindex()

    async def _reindex(self) -> tuple[int, int, list[str]]:
        rebuilt, entries, failed = 0, 0, []
        for summary in await self.backend.list_sessions():
            session_id = summary.header.id
            if self.sessions.get(session_id) is not None:
                continue
            try:
                session = await self.sessions.rederive_wakes(session_id)
            except Exception as exc:
                log.error("host.reindex_failed", session_id=session_id, error=str(exc))
                failed.append(session_id)
                continue
            self.persistence.stored_name_is(session, summary.name)
            try:
                await self.sessions.flush(session)
            except Exception as exc:
                log.error("host.reindex_failed", session_id=session_id, error=str(exc))
                failed.append(session_id)
                continue
            finally:
                self.sessions.detach(session)
            rebuilt += 1
            entries += len(self.sessions.wakes(session))
        log.info("host.reindexed", sessions=rebuilt, entries=entries, failed=len(failed))
        return rebuilt, entries, failed

    async def rebuild_if_migrated(self) -> bool:
        """Run :meth:`reindex` once when opening storage migrated an older store whose board
        (and names) are therefore empty (``Backend.needs_board_rebuild``); whether it ran.
        ``dsh serve`` calls it after :meth:`start`, before it serves."""
        if not self.backend.needs_board_rebuild:
            return False
        log.info("host.board_rebuild_started")
        rebuilt, entries, failed = await self.reindex()
        log.info("host.board_rebuilt", sessions=rebuilt, wake_entries=entries, failed=len(failed))
        return True

    async def inspect(self, session_id: str) -> StoredSession | None:
        return await self.persistence.inspect(session_id)

    async def list_sessions(self, *, lengths: dict[str, int] | None = None) -> list[dict[str, Any]]:
        """Stored and live Sessions: ``{"id", "createdAt", "live", "parentSession"?,
        "seedLength"?}`` (a fork's ``seedLength``: where its copy of the parent's log ends).

        A stored row that cannot be decoded is listed as ``{"id", "createdAt"?, "live": false,
        "damaged": true, "error"}`` beside the others (a live Session of that id wins).
        ``lengths``, when given, receives each stored Session's stored log length.
        """
        rows: dict[str, dict[str, Any]] = {}
        listing = await self.backend.list_sessions()
        for summary in listing:
            header = summary.header
            rows[header.id] = _row(header, live=False)
            if lengths is not None:
                lengths[header.id] = summary.length
        for damaged in damaged_sessions(listing):
            row: dict[str, Any] = {"id": damaged.id}
            if damaged.created_at is not None:
                row["createdAt"] = damaged.created_at
            rows[damaged.id] = {**row, "live": False, "damaged": True, "error": damaged.error}
        for session in self.sessions.live():
            header = session.header
            rows[header.id] = _row(header, live=True)
        return sorted(rows.values(), key=lambda row: (row.get("createdAt", 0), row["id"]))


def _row(header: SessionHeader, *, live: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"id": header.id, "createdAt": header.created_at, "live": live}
    if header.parent_session is not None:
        row["parentSession"] = header.parent_session
        if header.seed_length is not None:
            row["seedLength"] = header.seed_length
    return row


async def _close_model(model: ModelAdapter) -> None:
    """An adapter that holds connections may offer ``aclose()``; failures are logged."""
    aclose = getattr(model, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception:
        log.exception("host.model_close_failed", model=model.name)
