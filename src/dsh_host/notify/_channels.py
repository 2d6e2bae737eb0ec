"""Notify channels: apprise URLs, checked once, named without their secrets.

A :class:`Channel` is one apprise URL the host may send reminders to. The URL is a secret (it
can hold a token, a password or a private topic), so everything a person or a log sees is the
:attr:`Channel.label` (apprise's masked form, masked again by :func:`mask_url`) or the
:attr:`Channel.id` (a hash of the URL). :func:`parse_channels` checks each URL with apprise
without any network I/O and names a bad one only by its masked form.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from apprise import Apprise, AppriseAsset

from ._quiet import quiet

#: The environment variable that lists notify URLs, separated by whitespace.
ENV_VAR = "DSH_NOTIFY_URLS"

#: Schemes whose receiver gets our idempotency key as the ``X-Idempotency-Key`` header (and in
#: the payload), so it can drop a repeat. apprise's ntfy plugin cannot carry a sequence id, and
#: e-mail has no standard way to drop a repeat (the key is in its footer for a person or a
#: filter), so neither is listed.
DEDUPING_SCHEMES = frozenset({"json", "jsons", "form", "forms", "xml", "xmls"})


def _preload_imghdr() -> None:
    # apprise's e-mail plugin imports imghdr (for PGPy), which warns on import since Python 3.11
    # and is gone in 3.13 (apprise then installs a shim). Import it once here with that warning
    # ignored, so loading the plugin later warns nothing: not even where warnings are errors.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "'imghdr' is deprecated", DeprecationWarning)
        with contextlib.suppress(ImportError):
            importlib.import_module("imghdr")


_preload_imghdr()

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")
_SHOWN_SEGMENT = 4
_MASK = "***"
_HIDDEN_SEGMENT = "..."


class ChannelError(ValueError):
    """A notify URL apprise cannot use; ``str(e)`` is one line naming only the masked URL."""


@dataclass(frozen=True)
class Channel:
    """One notify URL the host can send to.

    ``id`` is ``"n-"`` and 12 hex digits of the URL's SHA-256: the same URL has the same id on
    every host and after every restart. ``label`` and ``service`` are safe to show, log and store;
    ``url`` is the secret and is left out of ``repr`` and ``str``.
    """

    id: str
    label: str
    service: str
    dedupes: bool
    url: str = field(repr=False)

    @property
    def scheme(self) -> str:
        """The URL's scheme in lower case (``json``, ``ntfys``, ``mailto``...)."""
        return self.url.split(":", 1)[0].lower()


def channel_id(url: str) -> str:
    """The stable, secret-free id of the notify URL ``url`` (see :class:`Channel`)."""
    return "n-" + hashlib.sha256(url.encode()).hexdigest()[:12]


def _mask_host(hostport: str) -> str:
    if hostport.startswith("["):
        host, _, rest = hostport.partition("]")
        host += "]"
        port = rest[1:] if rest.startswith(":") else ""
        colon = ":" if rest.startswith(":") else ""
    else:
        host, colon, port = hostport.partition(":")
        readable = "." in host or host.lower() == "localhost" or len(host) <= _SHOWN_SEGMENT
        host = host if readable else _MASK
    if port and not port.isdigit():
        port = _MASK
    return host + colon + port


def _mask_segment(segment: str) -> str:
    return segment if len(unquote(segment)) <= _SHOWN_SEGMENT else _HIDDEN_SEGMENT


def _mask_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    return name + (equals + _MASK if value else equals)


def mask_url(url: str) -> str:
    """``url`` with anything that may be secret hidden, for messages and labels.

    Kept: the scheme, a host that looks like a host name or address, a numeric port, path
    segments of at most four characters and query names. Hidden: the user and password, a host
    that looks like a token, a port that is not a number, longer path segments (``...``) and
    every query value. Text without a scheme is hidden whole. Works on URLs apprise cannot parse.
    """
    url = url.strip()
    match = _SCHEME.match(url)
    if match is None:
        return _MASK
    scheme = match.group(1).lower()
    if match.group(2) is None:
        return f"{scheme}:{_MASK}"
    rest, question, query = url[match.end() :].partition("?")
    netloc, slash, path = rest.partition("/")
    userinfo, at, hostport = netloc.rpartition("@")
    parts = [scheme, "://"]
    if at:
        parts.append(_MASK + (":" + _MASK if ":" in userinfo else "") + "@")
    parts.append(_mask_host(hostport))
    if slash:
        parts.append("/" + "/".join(_mask_segment(segment) for segment in path.split("/")))
    if question:
        parts.append("?" + "&".join(_mask_pair(pair) for pair in query.split("&") if pair))
    return "".join(parts)


def _asset() -> AppriseAsset:
    # Memory-only storage: parsing a URL must not touch the disk or the network.
    return AppriseAsset(storage_mode="memory")


def parse_channel(url: str) -> Channel:
    """Check one notify URL with apprise (no network I/O) and describe it.

    Raises :class:`ChannelError`, naming only the masked URL, when apprise does not know the
    scheme or cannot use the URL (a missing token, a bad port...).
    """
    url = url.strip()
    with quiet():
        plugin = Apprise.instantiate(url, asset=_asset())
    if plugin is None:
        raise ChannelError(f"notify URL {mask_url(url)!r} is not a valid apprise URL")
    masked: str = plugin.url(privacy=True)  # type: ignore[no-untyped-call]
    label = mask_url(masked.partition("?")[0])
    scheme = url.split(":", 1)[0].lower()
    return Channel(
        id=channel_id(url),
        label=label,
        service=str(plugin.service_name),
        dedupes=scheme in DEDUPING_SCHEMES,
        url=url,
    )


def parse_channels(urls: Iterable[str]) -> tuple[Channel, ...]:
    """The channels of ``urls`` in order, blank entries skipped and repeats (same id) dropped.

    Raises :class:`ChannelError` for the first URL apprise cannot use (see
    :func:`parse_channel`).
    """
    channels: dict[str, Channel] = {}
    for url in urls:
        if not url.strip():
            continue
        channel = parse_channel(url)
        channels.setdefault(channel.id, channel)
    return tuple(channels.values())


def urls_from_env(environ: Mapping[str, str]) -> list[str]:
    """The notify URLs in ``environ[DSH_NOTIFY_URLS]``, split on whitespace (none when unset)."""
    return environ.get(ENV_VAR, "").split()
