"""Keeps what apprise and urllib3 log during one send out of the host's logs.

A notify URL is a secret (a token in its path, a password, a push endpoint), and apprise and
urllib3 write URLs into their debug and warning lines. While :func:`quiet` is active in a
context, a filter on those libraries' loggers drops their records (and keeps apprise's, for the
caller to read); outside it, their logging is untouched. Nothing else about logging is configured
here. The filter is keyed on a context variable, so a send in one thread never silences another
thread's logging; apprise copies the context into its worker threads, so their records are
dropped too.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The loggers whose records can carry a notify URL. A logger's filters apply to the records
#: logged to that very logger, so each module logger of urllib3 is listed.
QUIET_LOGGERS = (
    "apprise",
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.poolmanager",
    "urllib3.response",
    "urllib3.util.retry",
)

#: At most this many apprise records are kept for one send (enough for any one attempt).
_KEEP = 200

_STASH: contextvars.ContextVar[list[tuple[str, str]] | None] = contextvars.ContextVar(
    "dsh_notify_quiet", default=None
)
_INSTALL_LOCK = threading.Lock()


class _Quiet(logging.Filter):
    """Drops a record logged while :func:`quiet` is active, keeping apprise's as text."""

    def filter(self, record: logging.LogRecord) -> bool:
        stash = _STASH.get()
        if stash is None:
            return True
        if record.name == "apprise" and len(stash) < _KEEP:
            stash.append((record.levelname, record.getMessage()))
        return False


_FILTER = _Quiet()


def _install() -> None:
    with _INSTALL_LOCK:
        for name in QUIET_LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)


@contextmanager
def quiet() -> Iterator[list[tuple[str, str]]]:
    """Silence the :data:`QUIET_LOGGERS` in this context; yield apprise's ``(level, message)``.

    The yielded list fills as apprise logs to its own logger during the block (its plugins'
    records go elsewhere: see :func:`dsh_host.notify.send`).
    """
    _install()
    stash: list[tuple[str, str]] = []
    token = _STASH.set(stash)
    try:
        yield stash
    finally:
        _STASH.reset(token)
