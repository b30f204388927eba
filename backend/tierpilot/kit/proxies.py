"""The client's address behind reverse proxies trusted by configuration, and only those.

``X-Forwarded-For`` is whatever the client wrote, plus one address appended by each proxy on the way.
Only a proxy we were told to trust may speak for the client: when the peer is one, the header is read
from the right, skipping trusted proxies, and the first address that is not one is the client (what a
client wrote further left is never believed). With no trusted proxy (the default) the header is ignored.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]  # any ASGI app: the API (Starlette) or the raw gateway


def parse_networks(value: str) -> tuple[Network, ...]:
    """Comma-separated addresses or CIDR networks (``10.0.0.5, 172.18.0.0/16, fd00::/8``); ValueError if bad."""
    out = []
    for item in (part.strip() for part in value.split(",")):
        if item:
            try:
                out.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"not an address or network: {item!r}") from None
    return tuple(out)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as proxies write it (``1.2.3.4``, ``1.2.3.4:5678``, ``[::1]:80``, ``::1``), mapped IPv4 unwrapped."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _trusted(addr: ipaddress.IPv4Address | ipaddress.IPv6Address, networks: tuple[Network, ...]) -> bool:
    return any(addr.version == net.version and addr in net for net in networks)


def client_address(peer: str, forwarded_for: list[str], trusted: tuple[Network, ...]) -> str:
    """The client's address: the peer, or when the peer is a trusted proxy the right-most untrusted
    ``X-Forwarded-For`` entry (every header line, in order). A malformed entry ends the walk at the proxy
    that passed it on."""
    current = _address(peer)
    if current is None or not trusted:
        return peer
    client = current
    hops = [hop for line in forwarded_for for hop in line.split(",")]
    while _trusted(client, trusted) and hops:
        previous = _address(hops.pop())
        if previous is None:
            break
        client = previous
    return str(client)


class TrustedProxies:
    """ASGI middleware: ``scope["client"]`` becomes the client's address as ``client_address`` finds it."""

    def __init__(self, app: ASGIApp, trusted: str) -> None:
        self.app = app
        self.trusted = parse_networks(trusted)

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        peer = scope.get("client")
        if self.trusted and scope["type"] in ("http", "websocket") and peer:
            lines = [v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"x-forwarded-for"]
            host = client_address(peer[0], lines, self.trusted)
            if host != peer[0]:
                scope = dict(scope, client=(host, 0))
        await self.app(scope, receive, send)
