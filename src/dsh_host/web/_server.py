"""Run the app with uvicorn inside the host's own event loop.

``uvicorn.Server.serve()`` is not used: on the main thread it installs its own SIGINT/SIGTERM
handlers and re-raises the captured signal after shutdown, which would turn the CLI's clean
"exit 0 on SIGTERM" into a signal death. Instead this module drives the server's pieces itself
(``startup`` on a socket it bound, ``main_loop`` as an owned task, ``shutdown``) and leaves the
signals to the CLI.

Stopping with streams open: ``uvicorn`` waits for every in-flight response before it closes, and
an event stream never ends by itself. So :meth:`WebServer.stop` first refuses new API requests
and ends every stream through the sidecar (each finishes its response at once), then lets uvicorn
close the listener and the now idle connections. A client stuck in a write is cut off by the
graceful-shutdown bound, so stopping never hangs.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from typing import Final

import structlog
import uvicorn
from starlette.applications import Starlette

from dsh_hookspecs import TaskSlot

from ..core import LiveHost
from ._app import check_options, create_app
from ._errors import DEFAULT_STORAGE_WAIT, WebConfigError
from ._guard import is_loopback
from ._protocol import Protocol
from ._sidecar import DEFAULT_QUEUE_SIZE, Sidecar

log = structlog.get_logger(__name__)

#: Seconds uvicorn may spend finishing in-flight requests on stop before it cancels them.
GRACEFUL_SHUTDOWN_SECONDS: Final = 3


def _bind(host: str, port: int) -> socket.socket:
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    if address.lower() == "localhost":
        address, family = "127.0.0.1", socket.AF_INET
    # proto must be IPPROTO_TCP explicitly (socket.create_server leaves it 0): accepted sockets
    # inherit it, and asyncio disables Nagle only on sockets that say they are TCP. Without
    # that, each response written in two parts waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


class WebServer:
    """The HTTP + SSE server of one :class:`~dsh_host.LiveHost`.

    ``await start()`` binds (``port=0`` picks a free port) and returns the URL;
    ``await stop()`` ends every stream, closes the listener and waits for in-flight requests.
    Binding anything but a loopback address requires ``token``. ``storage_wait``: seconds a
    request waits for storage before it answers 503 ``storage_unavailable`` (``dsh serve`` runs
    with the default, 5 s).
    """

    def __init__(
        self,
        host: LiveHost,
        *,
        bind_host: str = "127.0.0.1",
        port: int = 8765,
        token: str | None = None,
        keepalive: float = 15.0,
        send_timeout: float = 30.0,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        body_timeout: float = 10.0,
        storage_wait: float = DEFAULT_STORAGE_WAIT,
    ) -> None:
        check_options(
            token=token,
            keepalive=keepalive,
            send_timeout=send_timeout,
            body_timeout=body_timeout,
            storage_wait=storage_wait,
        )
        if token is None and not is_loopback(bind_host):
            raise WebConfigError(
                f"refusing to listen on {bind_host} without a token: anyone who can reach "
                "that address could drive every Session (pass a token, or bind 127.0.0.1)"
            )
        if type(port) is not int or not 0 <= port <= 65535:
            raise WebConfigError("port must be an integer in [0, 65535]")
        self.host = host
        self.bind_host = bind_host
        self.port = port
        self.token = token
        self.queue_size = queue_size
        #: The app for a sidecar; built on start, when the sidecar starts observing the host.
        self._new_app = functools.partial(
            create_app,
            host,
            token=token,
            keepalive=keepalive,
            send_timeout=send_timeout,
            body_timeout=body_timeout,
            storage_wait=storage_wait,
        )
        self.url: str | None = None
        self.sidecar: Sidecar | None = None
        self._server: uvicorn.Server | None = None
        self._socket: socket.socket | None = None
        self._main_loop = TaskSlot("dsh-web-main-loop")
        self._app: Starlette | None = None
        self._stopped = False

    @property
    def connection_count(self) -> int:
        """How many client connections are open now (0 before start and after stop)."""
        server = self._server
        return 0 if server is None else len(server.server_state.connections)

    @property
    def storage_pending(self) -> int:
        """Storage operations whose request stopped waiting (its storage wait ran out) and that
        have not ended yet (0 before start)."""
        app = self._app
        return 0 if app is None else app.state.web.storage.pending

    async def start(self) -> str:
        """Bind and serve; returns ``http://HOST:PORT``. Raises :class:`OSError` on bind errors."""
        if self._server is not None or self._stopped:
            raise RuntimeError("a WebServer starts once")
        sidecar = Sidecar(self.host.sessions, self.host.plugins, queue_size=self.queue_size)
        if self.host.leases is not None:
            self.host.leases.on_lost(sidecar.end_streams)
        app = self._new_app(sidecar=sidecar)
        config = uvicorn.Config(
            app,
            host=self.bind_host,
            port=self.port,
            http=Protocol,
            ws="none",
            lifespan="off",
            # None: uvicorn must not reconfigure the process's logging.
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        )
        config.load()
        server = uvicorn.Server(config)
        # Server.serve() would create this; startup() and shutdown() use it.
        server.lifespan = config.lifespan_class(config)
        try:
            sock = _bind(self.bind_host, self.port)
        except BaseException:
            sidecar.close()
            raise
        try:
            await server.startup(sockets=[sock])
        except BaseException:
            sock.close()
            sidecar.close()
            raise
        self.sidecar, self._server, self._socket, self._app = sidecar, server, sock, app
        self._main_loop.start(server.main_loop, on_done=_log_main_loop_failure)
        port = sock.getsockname()[1]
        shown = f"[{self.bind_host.strip('[]')}]" if ":" in self.bind_host else self.bind_host
        self.url = f"http://{shown}:{port}"
        log.info("web.listening", url=self.url, token=self.token is not None)
        return self.url

    async def stop(self) -> None:
        """End every stream, stop accepting, finish in-flight requests. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        server, sidecar, app = self._server, self.sidecar, self._app
        if server is None or sidecar is None or app is None:
            return
        # New API requests are refused from here on (a stream opened now would outlive us).
        app.state.web.closing = True
        sidecar.close()
        server.should_exit = True
        await self._main_loop.join()  # returns within one 0.1 s tick of should_exit
        await server.shutdown(sockets=[self._socket] if self._socket is not None else None)
        log.info("web.stopped", url=self.url)


def _log_main_loop_failure(task: asyncio.Task[None]) -> None:
    # A failed main loop still lets stop() close the listener; the failure is logged once.
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("web.main_loop_failed", exc_info=exc)
