"""Which addresses a notice may reach: one case per class of address that is refused."""

from __future__ import annotations

import ipaddress

import pytest

from dsh_host.notify._guard import AddressPolicy, AddressRefusedError, Resolver, refusal


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata
        ("fe80::1", "link-local"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.10", "private"),  # documentation range
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:10.0.0.1", "private"),
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::", "link-local"),  # 6to4 of 169.254.169.254
    ],
)
def test_each_class_of_local_or_private_address_is_refused(address: str, why: str) -> None:
    assert refusal(ipaddress.ip_address(address)) == why


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_a_public_address_is_not_refused(address: str) -> None:
    assert refusal(ipaddress.ip_address(address)) is None


async def test_a_name_is_refused_for_what_it_resolves_to() -> None:
    with pytest.raises(AddressRefusedError, match="loopback"):
        await Resolver(AddressPolicy()).address("localhost", 80)


async def test_the_owner_allows_a_host_by_its_name_or_every_host() -> None:
    assert await Resolver(AddressPolicy.of(["LOCALHOST"])).address("localhost", 80) in (
        "127.0.0.1",
        "::1",
    )
    assert await Resolver(AddressPolicy.of(["*"])).address("10.0.0.7", 80) == "10.0.0.7"
    assert await Resolver(AddressPolicy.of(["[::1]"])).address("[::1]", 80) == "::1"
    with pytest.raises(AddressRefusedError, match="private"):
        await Resolver(AddressPolicy.of(["10.0.0.8", " "])).address("10.0.0.7", 80)


async def test_an_answer_is_reused_for_a_while_then_looked_up_again(monkeypatch) -> None:
    resolver = Resolver(AddressPolicy.of(["*"]), ttl=60)
    calls: list[str] = []

    async def lookup(host, port, **_):
        calls.append(host)
        return [(2, 1, 6, "", ("10.9.8.7", port))]

    import asyncio

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", lookup)
    assert await resolver.address("hooks.example", 443) == "10.9.8.7"
    assert await resolver.address("HOOKS.example", 443) == "10.9.8.7"
    assert calls == ["hooks.example"]
    resolver.ttl = 0
    resolver._cache.clear()
    assert await resolver.address("hooks.example", 443) == "10.9.8.7"
    assert calls == ["hooks.example", "hooks.example"]


async def test_a_name_with_no_address_is_an_os_error(monkeypatch) -> None:
    import asyncio

    async def nothing(host, port, **_):
        return []

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", nothing)
    with pytest.raises(OSError, match="no address"):
        await Resolver(AddressPolicy()).address("empty.example", 80)
