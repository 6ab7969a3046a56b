"""Which bot addresses we may call: URL syntax, then every address the host resolves to.

A bot's URL is user input pointing our servers at the network, so the address is checked
where the connection is made (``bots.transport`` resolves through ``resolve`` and connects to
the addresses it returned, never resolving again). Refused always: link-local (169.254.0.0/16
with the cloud metadata address, fe80::/10), CGNAT (100.64.0.0/10), multicast, reserved,
unspecified, documentation and other special-purpose ranges, and IPv6 forms that embed an IPv4
address (mapped, compatible, 6to4, Teredo, NAT64), whose IPv4 part could be anything. Private
networks and loopback are refused unless ``allow_private`` (``BOTS_ALLOW_PRIVATE``).

IPv4 spellings that ``inet_aton`` accepts (``2130706433``, ``0x7f.1``, ``0177.0.0.1``) are
normalised before the check, so no spelling slips past as a "name".
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2000
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?", re.IGNORECASE)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Allowed only with allow_private: RFC 1918, loopback, IPv6 unique-local.
_PRIVATE = tuple(
    ipaddress.ip_network(net)
    for net in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "127.0.0.0/8",
        "::1/128",
        "fc00::/7",
    )
)
# Never allowed, named so the refusal says why (the final is_global test catches the rest).
_NAMED = (
    ("0.0.0.0/8", "a 'this network' address"),
    ("169.254.0.0/16", "a link-local address (the cloud metadata service lives there)"),
    ("fe80::/10", "a link-local address"),
    ("100.64.0.0/10", "a carrier-grade NAT (shared) address"),
    ("224.0.0.0/4", "a multicast address"),
    ("ff00::/8", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),
    ("fec0::/10", "a site-local address"),
)
_NAMED_NETS = tuple((ipaddress.ip_network(net), why) for net, why in _NAMED)
# IPv6 prefixes whose addresses carry an IPv4 address inside.
_EMBEDS_IPV4 = tuple(
    ipaddress.ip_network(net)
    for net in (
        "::ffff:0:0/96",
        "::/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "2002::/16",
        "2001::/32",
        "::ffff:0:0:0/96",
    )
)

GetAddrInfo = Callable[..., list[tuple[Any, ...]]]

log = logging.getLogger(__name__)


class BadBotUrl(ValueError):
    """The URL itself is unacceptable (syntax, scheme, credentials...)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BlockedAddress(Exception):
    """The host is, or resolves to, an address bots may not live at."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_url(url: str) -> None:
    """Syntax only (no DNS): http or https, a host, no credentials, no fragment, not too long."""
    if not isinstance(url, str) or not url:
        raise BadBotUrl("the URL is empty")
    if len(url) > MAX_URL_LENGTH:
        raise BadBotUrl(f"the URL is longer than {MAX_URL_LENGTH} characters")
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url):
        raise BadBotUrl("the URL contains spaces or control characters")
    if "\\" in url:
        raise BadBotUrl("the URL contains a backslash")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a port that is not 0-65535
    except ValueError as exc:
        raise BadBotUrl(f"the URL is malformed: {exc}") from None
    if parts.scheme.lower() not in {"http", "https"}:
        raise BadBotUrl("the URL must start with http:// or https://")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise BadBotUrl("the URL must not contain credentials (user:password@)")
    if parts.fragment or url.endswith("#"):
        raise BadBotUrl("the URL must not have a #fragment")
    if not parts.hostname:
        raise BadBotUrl("the URL has no host")
    if parse_ip(parts.hostname) is None:
        _check_hostname(parts.hostname)
    if port == 0:
        raise BadBotUrl("the URL's port must be 1-65535")


def _check_hostname(hostname: str) -> None:
    """A DNS name: labels of 1-63 letters, digits, hyphens (IDNA for the rest), 253 in all."""
    try:
        ascii_name = hostname.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        raise BadBotUrl("the URL's host is not a valid name") from None
    labels = ascii_name.split(".")
    if len(ascii_name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise BadBotUrl("the URL's host is not a valid name")


def _parse_ipv4_number(part: str) -> int | None:
    """One ``inet_aton`` component: decimal, ``0x`` hex or ``0``-prefixed octal."""
    if not part or not part.isascii():
        return None
    try:
        if part[:2].lower() == "0x":
            return int(part[2:], 16) if part[2:] else 0
        if len(part) > 1 and part[0] == "0":
            return int(part[1:], 8)
        return int(part, 10) if part.isdigit() else None
    except ValueError:
        return None


def _legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """``a``, ``a.b``, ``a.b.c`` or ``a.b.c.d`` in any base, as ``inet_aton`` reads them."""
    host = host[:-1] if host.endswith(".") else host
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = [_parse_ipv4_number(part) for part in parts]
    if any(n is None for n in numbers):
        return None
    values: list[int] = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        return None
    value = last
    for index, n in enumerate(head):
        value |= n << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def parse_ip(text: str) -> IPAddress | None:
    """An IP address in any accepted spelling (brackets, zone ids, legacy IPv4), else None."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ipaddress.ip_address(text.split("%", 1)[0] if ":" in text else text)
    except ValueError:
        return _legacy_ipv4(text)


def _refusal(ip: IPAddress, *, allow_private: bool) -> str | None:
    """What kind of address ``ip`` is, if bots may not live there; None if they may."""
    if ip.is_unspecified:
        return "the unspecified address"
    embeds = isinstance(ip, ipaddress.IPv6Address) and any(ip in net for net in _EMBEDS_IPV4)
    if embeds and not ip.is_loopback:  # ::1 sits in ::/96 but is plain loopback
        return "an IPv6 form that embeds an IPv4 address"
    for net, why in _NAMED_NETS:
        if ip.version == net.version and ip in net:
            return why
    if ip.is_multicast:
        return "a multicast address"
    if any(ip.version == net.version and ip in net for net in _PRIVATE):
        if allow_private:
            return None
        kind = "loopback" if ip.is_loopback else "private-network"
        return f"a {kind} address (allowed only with BOTS_ALLOW_PRIVATE)"
    if ip.is_reserved or ip.is_link_local or not ip.is_global:
        return "a reserved or special-purpose address"
    return None


def check_ip(ip: str, *, allow_private: bool) -> None:
    """Refuse an address bots may not live at (``BlockedAddress`` with the reason)."""
    parsed = parse_ip(ip)
    if parsed is None:
        raise BlockedAddress(f"{ip!r} is not an IP address")
    reason = _refusal(parsed, allow_private=allow_private)
    if reason is not None:
        raise BlockedAddress(f"{parsed} is {reason}")


def resolve(
    host: str,
    port: int,
    *,
    allow_private: bool,
    getaddrinfo: GetAddrInfo | None = None,
) -> list[str]:
    """Every address ``host`` resolves to, each checked; one bad address refuses them all.

    Refusing the whole name (rather than dropping the bad addresses) keeps a name that answers
    one public and one private address from reaching the private one on a retry or a re-order.
    ``getaddrinfo`` is injectable for tests; it defaults to ``socket.getaddrinfo``. DNS failures
    propagate as ``OSError`` (``socket.gaierror``).
    """
    literal = parse_ip(host)
    if literal is not None:
        check_ip(str(literal), allow_private=allow_private)
        return [str(literal)]
    lookup = getaddrinfo or socket.getaddrinfo
    try:
        infos = lookup(host, port, 0, socket.SOCK_STREAM)
    except UnicodeError as exc:  # a name the IDNA codec refuses cannot be resolved
        raise socket.gaierror(socket.EAI_NONAME, f"{host!r} is not a valid name") from exc
    addresses: list[str] = []
    for family, *_rest, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = str(sockaddr[0])
        parsed = parse_ip(address)
        reason = None if parsed is None else _refusal(parsed, allow_private=allow_private)
        if parsed is None or reason is not None:
            # The address itself stays in the server's log: told to the bot's owner, it would
            # map this network's own names (a bot at http://postgres:5432/ read "172.18.0.3").
            log.info("bot host %r refused: it resolves to %s (%s)", host, address, reason)
            raise BlockedAddress(f"{host!r} resolves to {reason or 'an address that is not IP'}")
        normalised = str(parsed)
        if normalised not in addresses:
            addresses.append(normalised)
    if not addresses:
        raise BlockedAddress(f"{host!r} resolves to no IPv4 or IPv6 address")
    return addresses
