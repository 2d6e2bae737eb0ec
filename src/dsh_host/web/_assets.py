"""The page, the browser client's static files and the renderer modules plugins register.

``GET /`` is ``index.html`` with the renderer list filled in as an inert JSON data block (the
Content-Security-Policy forbids inline script, and this block is never run); ``GET /sw.js`` is
the service worker that shows Web Push notifications (from the root, so that it serves the whole
page); ``GET /static/...``
serves only files of known types from the client folder, never outside it; ``GET /plugins/...``
serves only an asset some plugin registered: an ES module, or a stylesheet when its file ends
in ``.css`` (the page links it; the policy allows no inline style). None of them needs a token
(see :mod:`._guard`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final
from urllib.parse import quote

import structlog
from starlette.requests import Request
from starlette.responses import Response

from dsh_hookspecs import JSONValue

from .. import _json
from ..core import PluginManager
from ._errors import ApiError

log = structlog.get_logger(__name__)

#: The folder of the browser client.
STATIC_DIR: Final = Path(__file__).resolve().parent / "static"
CONFIG_PLACEHOLDER: Final = "<!--DSH_CONFIG-->"

CONTENT_TYPES: Final = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}
#: Asset files may change between runs of a development checkout: always revalidate.
_ASSET_HEADERS: Final = {"Cache-Control": "no-cache"}


class Assets:
    """The page and asset routes of one app."""

    def __init__(self, plugins: PluginManager) -> None:
        self.plugins = plugins
        self.template = (STATIC_DIR / "index.html").read_text(encoding="utf-8")

    async def page(self, request: Request) -> Response:
        del request  # ?session= and ?token= are read by the page itself
        config: JSONValue = {"renderers": self._renderers()}
        tag = f'<script id="dsh-config" type="application/json">{_script_json(config)}</script>'
        html = self.template.replace(CONFIG_PLACEHOLDER, tag, 1)
        return Response(html, media_type="text/html; charset=utf-8")

    def _renderers(self) -> list[JSONValue]:
        out: list[JSONValue] = []
        seen: set[tuple[str, str]] = set()
        for plugin, asset in self.plugins.renderer_assets():
            name = asset.name
            types = list(asset.event_types)
            if (
                not _asset_name_ok(plugin)
                or not _asset_name_ok(name)
                or not all(isinstance(t, str) for t in types)
            ):
                log.error("web.bad_renderer_asset", plugin=plugin, asset=repr(name))
                continue
            if (plugin, name) in seen:
                continue
            seen.add((plugin, name))
            suffix = _suffix(asset.path)
            url = f"/plugins/{quote(plugin, safe='')}/{quote(name, safe='')}{suffix}"
            entry: dict[str, JSONValue] = {"plugin": plugin, "url": url, "eventTypes": list(types)}
            if suffix == ".css":
                entry["kind"] = "style"
            out.append(entry)
        return out

    async def plugin_asset(self, request: Request) -> Response:
        plugin: str = request.path_params["plugin"]
        file: str = request.path_params["file"]
        for suffix in (".js", ".css"):
            if not file.endswith(suffix):
                continue
            name = file[: -len(suffix)]
            for owner, asset in self.plugins.renderer_assets():
                if owner == plugin and asset.name == name and _suffix(asset.path) == suffix:
                    return await _file(Path(asset.path), CONTENT_TYPES[suffix])
        raise ApiError("not_found", "no such renderer asset")

    async def service_worker(self, request: Request) -> Response:
        """``/sw.js``: served from the root so that its scope is the whole page."""
        del request
        return await _file(STATIC_DIR / "sw.js", CONTENT_TYPES[".js"])

    async def static(self, request: Request) -> Response:
        relative: str = request.path_params["path"]
        parts = relative.split("/")
        if any(not part or part.startswith(".") or "\\" in part or "\0" in part for part in parts):
            raise ApiError("not_found", "no such file")
        root = STATIC_DIR
        path = root.joinpath(*parts).resolve()
        content_type = CONTENT_TYPES.get(path.suffix.lower())
        if content_type is None or not path.is_relative_to(root):
            raise ApiError("not_found", "no such file")
        return await _file(path, content_type)


def _suffix(path: str) -> str:
    """A stylesheet asset (its file ends in ``.css``) is served as one; others are modules."""
    return ".css" if str(path).lower().endswith(".css") else ".js"


def _asset_name_ok(name: object) -> bool:
    return isinstance(name, str) and bool(name) and "/" not in name and "\\" not in name


def _script_json(value: JSONValue) -> str:
    # Inside <script> only "</script" or "<!--" could end or confuse the element; JSON never
    # needs a raw "<", ">" or "&", so escaping them keeps the data inert wherever it sits.
    text = _json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


async def _file(path: Path, content_type: str) -> Response:
    try:
        data = await asyncio.to_thread(path.read_bytes)
    except OSError:
        log.info("web.asset_unreadable", path=str(path))
        raise ApiError("not_found", "no such file") from None
    return Response(data, media_type=content_type, headers=_ASSET_HEADERS)
