"""The Agent registry: live Agents in publication order, created, published and forgotten here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dsh_hookspecs import Disposable, ModelAdapter

from ._agent import LiveAgent
from ._session import LiveSession, LiveSessionStore
from ._tools import ToolLayer


class LiveAgentRegistry:
    """Live Agents in publication order (implements :class:`dsh_hookspecs.AgentRegistry`)."""

    def __init__(
        self,
        *,
        store: LiveSessionStore,
        publish: Callable[[LiveAgent], Sequence[tuple[str, Disposable]]],
        global_tools: ToolLayer,
        model: ModelAdapter,
    ) -> None:
        """``publish(agent)`` tells the plugins of a new Agent and returns the disposables they
        handed back, as ``(plugin, disposable)`` pairs (the plugin layer above provides it)."""
        self.store = store
        self._publish = publish
        self.global_tools = global_tools
        self.model = model
        self._agents: dict[str, LiveAgent] = {}
        self._roots_by_session: dict[str, LiveAgent] = {}

    def get(self, agent_id: str) -> LiveAgent | None:
        return self._agents.get(agent_id)

    def roots(self) -> Sequence[LiveAgent]:
        return tuple(a for a in self._agents.values() if a.parent is None)

    def all(self) -> Sequence[LiveAgent]:
        return tuple(self._agents.values())

    def for_session(self, session_id: str) -> LiveAgent | None:
        """The live root Agent of that Session, if any."""
        return self._roots_by_session.get(session_id)

    def create(self, session: LiveSession, *, parent: LiveAgent | None = None) -> LiveAgent:
        """Construct and publish an Agent; plugins see it through ``dsh_agent_published``."""
        agent = LiveAgent(
            store=self.store,
            global_tools=self.global_tools,
            session=session,
            parent=parent,
            model=self.model,
            on_disposed=self._forget,
        )
        self._agents[agent.id] = agent
        if parent is None:
            self._roots_by_session.setdefault(session.id, agent)
        for plugin, disposable in self._publish(agent):
            agent.add_disposable(plugin, disposable)
        agent.restore_inbox()
        return agent

    def create_child(self, parent: LiveAgent) -> LiveAgent:
        """A child Agent on a new Session of its own (``origin: subagent``)."""
        depth = (parent.session.header.delegation_depth or 0) + 1
        session = self.store.create(
            cwd=parent.session.header.cwd, origin="subagent", delegation_depth=depth
        )
        return self.create(session, parent=parent)

    async def dispose_plugin(self, plugin: str) -> None:
        """Close what ``plugin`` started on every live Agent (it is being unloaded)."""
        for agent in self.all():
            await agent.dispose_plugin(plugin)

    def _forget(self, agent: LiveAgent) -> None:
        if self._agents.get(agent.id) is agent:
            del self._agents[agent.id]
        if self._roots_by_session.get(agent.session.id) is agent:
            del self._roots_by_session[agent.session.id]
