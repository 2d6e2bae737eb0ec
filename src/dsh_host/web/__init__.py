"""The Web host: the JSON API, Server-Sent Events with commit-gated views, the browser client.

:class:`WebServer` runs it inside the host's event loop; :func:`create_app` builds the ASGI app
alone (tests); :class:`Sidecar` is the append fan-out, late-view publisher and fan-out of the
ephemeral frames (:class:`StreamFrame`: streamed text, no ``id:``) the streams use;
:func:`history_page` is one page of a Session's history (:func:`page_range` its seqs). The
error codes are listed in :mod:`dsh_host.web._errors` (``ERROR_CODES``). What is committed is
the persistence coordinator's answer (``host.persistence``), never this package's.
"""

from __future__ import annotations

from ._app import MAX_BODY_BYTES, create_app
from ._errors import ERROR_CODES, WebConfigError
from ._guard import is_loopback, token_problem
from ._history import history_page, page_range
from ._server import WebServer
from ._sidecar import Frame, Sidecar, StreamFrame, Subscription, SubscriptionClosedError
from ._viewdata import badges

__all__ = [
    "ERROR_CODES",
    "MAX_BODY_BYTES",
    "Frame",
    "Sidecar",
    "StreamFrame",
    "Subscription",
    "SubscriptionClosedError",
    "WebConfigError",
    "WebServer",
    "badges",
    "create_app",
    "history_page",
    "is_loopback",
    "page_range",
    "token_problem",
]
