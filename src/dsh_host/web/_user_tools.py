"""``POST /api/sessions/{id}/tools/{name}``: the browser runs an Agent tool as a user action.

The body is ``{"arguments": {...}}`` (an object; ``{}`` when absent). Everything a client can get
wrong is refused before anything is logged: the body's shape first (before the Session is
touched), then, on the resumed Agent, the tool's existence (404 ``tool_not_found``) and its JSON
schema (422 ``invalid_arguments``). The call then waits its turn in the Agent's inbox (after the
messages queued before it, so it never runs inside a model's turn), is logged as ``tool/call``
with ``"source": {"kind": "user"}`` and ``tool/result``, and is flushed. The answer is
``{"callId", "name", "value", "durable"}``: ``value`` is what the tool returned (a tool's own
refusal, such as ``{"code": "not_found"}`` for a reminder that already fired, is a value, not
an HTTP error, exactly as the model would see it).

Storage that does not answer (the request's storage wait, :class:`~._errors.StorageWait`, runs
out while the call waits its turn or its flush): a call that has not started yet is withdrawn
from the inbox (nothing of it is logged, it never runs) and answered 503 ``storage_unavailable``
saying it was not run; one that started is answered 503 saying its outcome is not known yet and
will show in the Session.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..core import LiveAgent, resolve, validate_arguments
from ._errors import ApiError, json_response
from ._handlers import Routes, session_refusals
from ._requests import brief

_NOT_RUN = "the action was not run; retry later"
_STARTED = "the action has started and its outcome is not known yet; it will show in the session"


class UserTools(Routes):
    """The route handler; one instance per app."""

    async def run(self, request: Request) -> Response:
        name: str = request.path_params["name"]
        sid, body = await self.api.session_post(request, ("arguments",))
        arguments = body.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ApiError("invalid_field", "arguments must be an object")
        deadline = self.api.storage.deadline()  # one storage wait for the resume and the call
        agent = await self.api.resume_live(sid, deadline=deadline, late=_NOT_RUN)
        tool = resolve(name, agent.tools, self.host.tools)
        if tool is None:
            raise ApiError("tool_not_found", f"this session has no tool {brief(name)}")
        problem = validate_arguments(tool.parameters, arguments)
        if problem is not None:
            raise ApiError("invalid_arguments", problem)
        with session_refusals():
            queued = agent.run_user_tool(name, arguments)
            call_id, value, durable = await self.api.storage.run(
                "tool", queued, deadline=deadline, late=lambda: _withdrawn(agent, queued.call_id)
            )
        return json_response({"callId": call_id, "name": name, "value": value, "durable": durable})


def _withdrawn(agent: LiveAgent, call_id: str) -> str:
    """What became of a call whose storage wait ran out: withdrawn, or already under way."""
    return _NOT_RUN if agent.withdraw_user_tool(call_id) else _STARTED
