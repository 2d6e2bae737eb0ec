"""Where the host may send a notice: never to its own machine or a private network, unless allowed.

A notify URL names a host; a webhook sent by the server to that host is a request from inside
the network the server sits in. Whoever can name the URL could make it reach an internal service
(a router's admin page, a cloud metadata endpoint). So before a request goes out, its host is
resolved and every address it resolves to is checked (:func:`refusal`): loopback, private
(RFC 1918, IPv6 unique local), link-local (``169.254.0.0/16``, where cloud metadata answers, and
``fe80::/10``), carrier-grade NAT (``100.64.0.0/10``), multicast, reserved and unspecified
addresses are refused, and so are IPv4 addresses written inside IPv6 (``::ffff:127.0.0.1``,
6to4, Teredo) that are one of those. The request then goes to the address that was checked (the
URL's host name stays the ``Host`` header and the TLS server name), so a second lookup cannot
answer differently (DNS rebinding).

:class:`AddressPolicy` says which hosts are allowed anyway: the names or address literals the
owner listed (``--notify-allow-private HOST``), or every host (``*``, what a test or a home
network with its own receivers uses).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["AddressPolicy", "AddressRefusedError", "Resolver", "refusal"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")

#: How long a checked lookup is reused (seconds): a herd of notices to one receiver resolves once.
RESOLVE_TTL_SECONDS = 30.0


class AddressRefusedError(Exception):
    """A notice was not sent: its host is (or resolves to) an address the policy refuses."""


def _embedded(address: Address) -> Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo), if any."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def refusal(address: Address) -> str | None:
    """Why ``address`` is refused (``"loopback"``, ``"private"``...), or ``None`` when it is a
    public address a notice may go to."""
    inner = _embedded(address)
    if inner is not None and (why := refusal(inner)) is not None:
        return why
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "shared (carrier-grade NAT)"
    if address.is_reserved:
        return "reserved"
    if address.is_private or not address.is_global:
        return "private"
    return None


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """The hosts a notice may reach although they are local or private (see the module doc)."""

    allowed: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, hosts: Iterable[str]) -> AddressPolicy:
        """The policy allowing ``hosts`` (names or address literals, any case; ``*``: all)."""
        return cls(frozenset(host.strip().strip("[]").lower() for host in hosts if host.strip()))

    def allows(self, host: str) -> bool:
        return "*" in self.allowed or host.strip("[]").lower() in self.allowed


class Resolver:
    """Resolves a notify host to one checked address, reusing answers for a short while."""

    def __init__(self, policy: AddressPolicy, *, ttl: float = RESOLVE_TTL_SECONDS) -> None:
        self.policy = policy
        self.ttl = ttl
        self._cache: dict[tuple[str, int], tuple[float, str]] = {}

    async def address(self, host: str, port: int) -> str:
        """The address to connect to for ``host``: checked against the policy. Raises
        :class:`AddressRefusedError` (the reason in plain words) for a refused one and
        :class:`OSError` when the name does not resolve."""
        host = host.strip("[]")
        key = (host.lower(), port)
        cached = self._cache.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        try:
            addresses: list[Address] = [ipaddress.ip_address(host)]
        except ValueError:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
            addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
        if not addresses:
            raise OSError(f"no address associated with {host!r}")
        if not self.policy.allows(host):
            for address in addresses:
                if (why := refusal(address)) is not None:
                    raise AddressRefusedError(
                        f"not sent: the address is {why} (allow it with --notify-allow-private)"
                    )
        chosen = str(addresses[0])
        self._cache[key] = (time.monotonic() + self.ttl, chosen)
        return chosen
