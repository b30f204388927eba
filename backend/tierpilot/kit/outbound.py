"""Outbound HTTP that cannot be turned against the inside (SSRF): every request tierpilot makes to a URL a
user gave goes through here.

A URL's host is resolved once per check; the request is refused when any address it names is loopback,
private, link-local, multicast, unspecified or reserved (IPv4 and IPv6, IPv4 embedded in IPv6 included),
unless an admin allow-listed the host. Sending checks again and connects to exactly the addresses it just
checked (a second DNS answer can never be used: no rebinding), verifies the peer it reached, keeps the
URL's Host and TLS server name, follows no redirect and uses no proxy. Failures come back as short
summaries ("HTTP 500", "refused: loopback address", "timed out"), never a receiver's body, and a refused
address is refused before any connection, so answers cannot be used to scan its ports.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import socket
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_to_bytes

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the addresses a connection to it would use; tests inject their own
Resolver = Callable[[str, int], Sequence[str]]

_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


class OutboundError(Exception):
    """A request that was not made or got no HTTP answer; ``summary`` is safe to show the user."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


class Refused(OutboundError):
    """The URL may not be requested (bad scheme, port or host, or an address on the inside)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"refused: {reason}")
        self.reason = reason


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the operating system's resolver gives for a TCP connection to host:port."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundError("host not found") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a numeric host spells the way C's inet_aton and browsers' URL parsers read it:
    one to four parts, each decimal, octal (leading 0) or hex (0x), the last filling the remaining bytes
    (``127.1``, ``2130706433``, ``0x7f.1``, ``0177.0.0.1``); None for anything else. Where the two
    readings differ (``0x``) this takes the wider one: more hosts are numbers, none is looked up."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = []
    for part in parts:
        try:
            if part[:2].lower() == "0x":
                value = int(part[2:] or "0", 16)
            elif len(part) > 1 and part.startswith("0"):
                value = int(part, 8)
            else:
                value = int(part, 10) if part.isdigit() else -1
        except ValueError:
            return None
        if value < 0:
            return None
        values.append(value)
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = last
    for i, v in enumerate(head):
        number += v << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def _embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4, Teredo, NAT64), if any."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr.teredo is not None:
        return addr.teredo[1]
    packed = int(addr)
    if any(addr in net for net in _NAT64) or (packed >> 32 == 0 and packed > 1):
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    return None


def address_problem(addr: IPAddress) -> str | None:
    """Why requests may not go to ``addr`` ("loopback address", …), or None for a public address."""
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.scope_id:
            return "scoped address"
        inner = _embedded_ipv4(addr)
        if inner is not None and (problem := address_problem(inner)) is not None:
            return problem
    if addr.is_unspecified:
        return "unspecified address"
    if addr.is_loopback:
        return "loopback address"
    if addr.is_link_local:
        return "link-local address"
    if addr.is_multicast:
        return "multicast address"
    if addr.is_private or (isinstance(addr, ipaddress.IPv4Address) and addr in _CGNAT):
        return "private address"
    if addr.is_reserved or not addr.is_global:
        return "reserved address"
    return None


@dataclass(frozen=True)
class AllowEntry:
    """One allow-list entry: a host name or an address, with or without a port."""

    host: str
    port: int | None = None

    def matches(self, host: str, port: int) -> bool:
        return self.host == host and self.port in (None, port)


def _canonical_host(raw: str) -> str:
    """A host as compared and resolved: lower case, no trailing dot, IP literals in their canonical form."""
    host = raw.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        if "%" in host:
            raise Refused("scoped address")
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError as exc:
            raise Refused("invalid host") from exc
    host = host[:-1] if host.endswith(".") else host
    number = parse_ipv4_number(host)
    if number is not None:
        return str(number)
    # a name whose last label is a number is a malformed address (as browsers read it), never a name
    if not _NAME.match(host) or re.fullmatch(r"0x[0-9a-f]*|[0-9]+", host.rsplit(".", 1)[-1]):
        raise Refused("invalid host")
    return host


def parse_allow_hosts(text: str) -> tuple[AllowEntry, ...]:
    """Comma- or space-separated ``host``, ``host:port``, ``[v6]`` or ``[v6]:port`` entries; ValueError on
    a malformed one."""
    entries = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        match = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?|([^:\[\]]+)(?::(\d+))?", item)
        if match is None:
            raise ValueError(f"allow-list entry {item!r} is not host, host:port, [v6] or [v6]:port")
        host, port_text = (match[1], match[2]) if match[1] else (match[3], match[4])
        port = int(port_text) if port_text else None
        if port is not None and not 1 <= port <= 65535:
            raise ValueError(f"allow-list entry {item!r} has a port outside 1-65535")
        try:
            entries.append(AllowEntry(_canonical_host(host), port))
        except Refused as exc:
            raise ValueError(f"allow-list entry {item!r}: {exc.reason}") from exc
    return tuple(entries)


@dataclass(frozen=True)
class Target:
    """A checked URL: where it may be sent and the addresses a connection may use (in order)."""

    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]
    allowed: bool  # allow-listed: inside addresses are fine


@dataclass(frozen=True)
class Policy:
    """Which URLs outbound requests may reach: public addresses, plus what the allow-list names."""

    allow: tuple[AllowEntry, ...] = ()
    resolver: Resolver = field(default=system_resolver)
    # None: the usual certificate authorities (httpx's); tests hand their own CA
    ssl_context: ssl.SSLContext | None = None

    def check(self, url: str) -> Target:
        """Resolve ``url``'s host and check every address; Refused or OutboundError when it may not be used."""
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError) as exc:
            raise Refused("not a valid URL") from exc
        if parsed.scheme not in _DEFAULT_PORTS:
            raise Refused("only http:// and https:// URLs")
        port = _DEFAULT_PORTS[parsed.scheme] if parsed.port is None else parsed.port
        if not 1 <= port <= 65535:
            raise Refused("port outside 1-65535")
        host = _canonical_host(parsed.raw_host.decode("ascii", "replace"))
        if not host:
            raise Refused("no host")
        allowed = any(entry.matches(host, port) for entry in self.allow)
        if not allowed and (host == "localhost" or host.endswith(".localhost")):
            raise Refused("loopback address")
        literal = _ip_or_none(host)
        answers: Sequence[str] = [host] if literal is not None else self.resolver(host, port)
        addresses = []
        for answer in answers:
            addr = _ip_or_none(answer)
            if addr is None:
                raise OutboundError("host not found")
            addresses.append(addr)
        if not addresses:
            raise OutboundError("host not found")
        if not allowed:
            allowed = all(any(e.matches(str(a), port) for e in self.allow) for a in addresses)
        if not allowed:
            for addr in addresses:
                if (problem := address_problem(addr)) is not None:
                    raise Refused(problem)
        return Target(url, parsed.scheme, host, port, tuple(dict.fromkeys(str(a) for a in addresses)), allowed)

    def permits_peer(self, target: Target, peer: str) -> bool:
        """Whether the address a connection reached is one this check let through."""
        addr = _ip_or_none(peer)
        if addr is None or str(addr) not in target.addresses:
            return False
        return target.allowed or address_problem(addr) is None

    def post(self, url: str, content: bytes, headers: Mapping[str, str], timeout_s: float) -> int:
        """POST ``content`` to ``url`` once, without following redirects; the answer's status code.

        Raises Refused before connecting when the URL may not be used, OutboundError when there was no
        HTTP answer. The answer's body is never read."""
        target = self.check(url)
        backend = _PinnedBackend(self, target)
        headers = dict(headers)
        parsed = httpx.URL(url)
        # the request is built from the very parse that was checked: no second reading of the URL
        request_url = httpcore.URL(scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port,
                                   target=parsed.raw_path)
        userinfo = parsed.userinfo
        if userinfo and not any(k.lower() == "authorization" for k in headers):
            headers["authorization"] = "Basic " + base64.b64encode(unquote_to_bytes(userinfo)).decode()
        timeouts = {"connect": timeout_s, "read": timeout_s, "write": timeout_s, "pool": timeout_s}
        try:
            with httpcore.ConnectionPool(ssl_context=self.ssl_context or _ssl_context(), network_backend=backend,
                                         max_connections=1, retries=0) as pool, \
                    pool.stream("POST", request_url, headers=list(headers.items()), content=content,
                                extensions={"timeout": timeouts}) as response:
                return int(response.status)
        except Refused:
            raise
        except httpcore.TimeoutException as exc:
            raise OutboundError("timed out") from exc
        except httpcore.ConnectError as exc:
            raise OutboundError(backend.failure or "connection failed") from exc
        except httpcore.ProtocolError as exc:
            raise OutboundError("invalid HTTP answer") from exc
        except (httpcore.NetworkError, OSError) as exc:
            raise OutboundError("connection lost") from exc


def _ip_or_none(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


@lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class _PinnedBackend(httpcore.NetworkBackend):
    """Connects to the checked addresses only, whatever host name the request carries (that name still
    goes into the Host header and the TLS server name), and checks the peer it reached."""

    def __init__(self, policy: Policy, target: Target) -> None:
        self._policy = policy
        self._target = target
        self._inner = httpcore.SyncBackend()
        self.failure: str | None = None

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        last: Exception | None = None
        for address in self._target.addresses:
            try:
                stream = self._inner.connect_tcp(address, self._target.port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
                continue
            sock = stream.get_extra_info("socket")
            peer = sock.getpeername()[0] if sock is not None else ""
            if not self._policy.permits_peer(self._target, str(peer)):
                stream.close()
                self.failure = "refused: connected address was not the checked one"
                raise httpcore.ConnectError(self.failure)
            return stream
        if isinstance(last, httpcore.ConnectTimeout):
            raise last
        raise httpcore.ConnectError("connection failed") from last

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not outbound targets")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)

