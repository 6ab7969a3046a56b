"""The address guard: URL syntax, every refused range in every spelling, and names that resolve
to refused addresses (a real name, ``localhost``, and an injected resolver for mixed answers)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from bots import guard
from bots.guard import BadBotUrl, BlockedAddress

ALWAYS_REFUSED = [
    # link-local and the cloud metadata address, in several spellings
    "169.254.169.254",
    "169.254.0.1",
    "2852039166",  # 169.254.169.254 as one decimal number
    "0xa9fea9fe",  # ... as one hex number
    "0251.0376.0251.0376",  # ... octal
    "0xa9.0xfe.0xa9.0xfe",
    "169.254.43518",  # a.b.c form
    "fe80::1",
    "fe80::1%eth0",
    # CGNAT
    "100.64.0.1",
    "100.127.255.254",
    # multicast
    "224.0.0.1",
    "239.255.255.250",
    "ff02::1",
    # reserved, broadcast, "this network", unspecified
    "240.0.0.1",
    "255.255.255.255",
    "0.0.0.0",
    "0.1.2.3",
    "0",
    "::",
    "[::]",
    # documentation / benchmarking / other special-purpose ranges
    "192.0.2.10",
    "198.18.0.1",
    "2001:db8::1",
    "fec0::1",
    # IPv6 forms embedding IPv4 (even when the IPv4 part is public)
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:8.8.8.8",
    "[::ffff:7f00:1]",
    "::127.0.0.1",  # IPv4-compatible
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of the metadata address
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
]

PRIVATE = [
    "127.0.0.1",
    "127.1",
    "2130706433",  # 127.0.0.1 in decimal
    "0x7f000001",
    "0x7f.0x0.0x0.0x1",
    "0177.0.0.1",
    "0177.1",
    "127.000.000.001",
    "127.0.0.1.",
    "10.0.0.1",
    "012.0.0.1",  # octal 10.0.0.1
    "167772161",  # 10.0.0.1 in decimal
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "0xc0a80101",
    "::1",
    "[::1]",
    "0:0:0:0:0:0:0:1",
    "fc00::1",
    "fd12:3456::1",
]

PUBLIC = ["8.8.8.8", "1.1.1.1", "134744072", "2606:4700:4700::1111", "172.32.0.1", "100.128.0.1"]


@pytest.mark.parametrize("ip", ALWAYS_REFUSED)
@pytest.mark.parametrize("allow_private", [False, True])
def test_it_refuses_special_addresses_whatever_the_private_setting(
    ip: str, allow_private: bool
) -> None:
    with pytest.raises(BlockedAddress):
        guard.check_ip(ip, allow_private=allow_private)


@pytest.mark.parametrize("ip", PRIVATE)
def test_it_refuses_private_and_loopback_addresses_in_any_spelling(ip: str) -> None:
    with pytest.raises(BlockedAddress, match="BOTS_ALLOW_PRIVATE"):
        guard.check_ip(ip, allow_private=False)


@pytest.mark.parametrize("ip", PRIVATE)
def test_allow_private_lets_private_and_loopback_addresses_through(ip: str) -> None:
    guard.check_ip(ip, allow_private=True)


@pytest.mark.parametrize("ip", PUBLIC)
def test_it_accepts_public_addresses(ip: str) -> None:
    guard.check_ip(ip, allow_private=False)


def test_the_metadata_refusal_says_why() -> None:
    with pytest.raises(BlockedAddress) as refused:
        guard.check_ip("169.254.169.254", allow_private=True)
    assert "metadata" in refused.value.reason


@pytest.mark.parametrize("text", ["example.org", "", "1.2.3.4.5", "256.1.1.1", "0x1g.0.0.1"])
def test_check_ip_refuses_what_is_not_an_address(text: str) -> None:
    with pytest.raises(BlockedAddress):
        guard.check_ip(text, allow_private=True)


# -- resolve ----------------------------------------------------------------------------------


def _answers(*addresses: str) -> Any:
    """A stand-in for socket.getaddrinfo that answers the given addresses for any name."""

    def getaddrinfo(host: str, port: int, *args: Any) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for address in addresses:
            if ":" in address:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return out

    return getaddrinfo


def test_localhost_is_refused_without_allow_private() -> None:
    with pytest.raises(BlockedAddress, match="loopback"):
        guard.resolve("localhost", 80, allow_private=False)


def test_localhost_resolves_to_loopback_with_allow_private() -> None:
    addresses = guard.resolve("localhost", 80, allow_private=True)
    assert addresses and all(a in ("127.0.0.1", "::1") for a in addresses)


def test_a_name_answering_one_public_and_one_private_address_is_refused_whole() -> None:
    with pytest.raises(BlockedAddress, match="private-network") as refused:
        guard.resolve(
            "mixed.example", 443, allow_private=False, getaddrinfo=_answers("8.8.8.8", "10.0.0.5")
        )
    # The kind of address is said, not the address: told to the bot's owner, it would map the
    # server's own network (a bot at http://postgres:5432/ read "172.18.0.3").
    assert "10.0.0.5" not in str(refused.value)


def test_a_name_resolving_to_the_metadata_address_is_refused_even_with_allow_private() -> None:
    lookup = _answers("93.184.216.34", "169.254.169.254")
    with pytest.raises(BlockedAddress, match="link-local"):
        guard.resolve("rebind.example", 80, allow_private=True, getaddrinfo=lookup)


def test_a_name_resolving_to_a_mapped_ipv6_address_is_refused() -> None:
    lookup = _answers("::ffff:10.0.0.1")
    with pytest.raises(BlockedAddress, match="embeds"):
        guard.resolve("mapped.example", 80, allow_private=True, getaddrinfo=lookup)


def test_a_name_with_only_public_addresses_resolves_to_all_of_them() -> None:
    lookup = _answers("8.8.8.8", "2606:4700:4700::1111", "8.8.8.8")
    assert guard.resolve("bot.example", 443, allow_private=False, getaddrinfo=lookup) == [
        "8.8.8.8",
        "2606:4700:4700::1111",
    ]


@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "0177.0.0.1", "127.1", "[::1]"])
def test_numeric_hosts_are_normalised_before_any_lookup(host: str) -> None:
    def no_dns(*args: Any) -> list[tuple[Any, ...]]:
        raise AssertionError("a numeric host must not be looked up")

    with pytest.raises(BlockedAddress):
        guard.resolve(host, 80, allow_private=False, getaddrinfo=no_dns)
    assert guard.resolve(host, 80, allow_private=True, getaddrinfo=no_dns) in (
        ["127.0.0.1"],
        ["::1"],
    )


def test_a_name_that_does_not_resolve_raises_the_dns_error() -> None:
    with pytest.raises(OSError):
        guard.resolve("no-such-host.invalid", 80, allow_private=True)


# -- check_url --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://bot.example/",
        "https://bot.example:8443/uno/turn?key=1",
        "http://127.0.0.1:9001",
        "http://[::1]:9001/",
        "HTTPS://BOT.EXAMPLE/",
        "http://bot_1.example/",
        "http://münchen.example/",
        "http://bot.example./",
    ],
)
def test_check_url_accepts_plain_http_and_https_urls(url: str) -> None:
    guard.check_url(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("", "empty"),
        ("ftp://bot.example/", "http"),
        ("file:///etc/passwd", "http"),
        ("gopher://127.0.0.1:6379/_INFO", "http"),
        ("javascript:alert(1)", "http"),
        ("bot.example/turn", "http"),
        ("http://alice:secret@bot.example/", "credentials"),
        ("http://alice@bot.example/", "credentials"),
        ("http://bot.example/#frag", "fragment"),
        ("http://bot.example/#", "fragment"),
        ("http:///path-only", "no host"),
        ("http://bot.example:0/", "port"),
        ("http://bot.example:70000/", "malformed"),
        ("http://bot.example:port/", "malformed"),
        ("http://bot.example/a b", "spaces"),
        ("http://bot.example/\r\nHost: evil", "control"),
        ("http://bot.example\\@169.254.169.254/", "backslash"),
        ("http://bot.example/" + "a" * 2000, "longer"),
        ("http://a..b/", "not a valid name"),
        ("http://%00/", "not a valid name"),
        ("http://ex%41mple.org/", "not a valid name"),
        ("http://-bot.example/", "not a valid name"),
        ("http://" + "a" * 64 + ".example/", "not a valid name"),
    ],
)
def test_check_url_refuses_what_is_not_a_plain_http_url(url: str, why: str) -> None:
    with pytest.raises(BadBotUrl) as refused:
        guard.check_url(url)
    assert why in refused.value.reason
