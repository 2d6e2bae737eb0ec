"""``POST /api/sessions/{id}/tools/{name}``: the browser runs an Agent tool as a user action."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ._errors import ApiError
from ._handlers import Settings


class UserTools:
    """The route handler; one instance per app."""

    def __init__(self, settings: Settings) -> None:
        self.s = settings

    async def run(self, request: Request) -> Response:
        del request
        raise ApiError("not_found", "no such route")
