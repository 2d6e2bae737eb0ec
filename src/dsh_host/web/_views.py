"""Per-Session views plugins derive from the committed log, and Session names."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ._errors import ApiError
from ._handlers import Settings


class SessionViews:
    """The route handlers; one instance per app."""

    def __init__(self, settings: Settings) -> None:
        self.s = settings

    async def views(self, request: Request) -> Response:
        del request
        raise ApiError("not_found", "no such route")

    async def rename(self, request: Request) -> Response:
        del request
        raise ApiError("not_found", "no such route")
