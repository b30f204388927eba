"""The client's address: X-Forwarded-For believed only from configured proxies, read from the right."""

from __future__ import annotations

import pytest

from tierpilot.kit.proxies import client_address, parse_networks

TRUSTED = parse_networks("10.0.0.0/8, 192.168.1.5, fd00::/8")


@pytest.mark.parametrize(("peer", "header", "trusted", "expected"), [
    ("127.0.0.1", ["1.2.3.4"], (), "127.0.0.1"),  # nothing trusted: the header is ignored
    ("203.0.113.9", ["1.2.3.4"], TRUSTED, "203.0.113.9"),  # an untrusted peer speaks for itself
    ("10.0.0.2", ["1.2.3.4, 198.51.100.7"], TRUSTED, "198.51.100.7"),  # what the proxy saw, not what was written
    ("10.0.0.2", ["198.51.100.7, 192.168.1.5"], TRUSTED, "198.51.100.7"),  # a chain of trusted proxies
    ("10.0.0.2", ["1.2.3.4", "198.51.100.7"], TRUSTED, "198.51.100.7"),  # several header lines, in order
    ("10.0.0.2", ["garbage, 10.0.0.3"], TRUSTED, "10.0.0.3"),  # malformed: stop at the proxy that passed it
    ("10.0.0.2", [], TRUSTED, "10.0.0.2"),
    ("10.0.0.2", ["[2001:db8::1]:443"], TRUSTED, "2001:db8::1"),
    ("10.0.0.2", ["198.51.100.7:5123"], TRUSTED, "198.51.100.7"),
    ("::ffff:10.0.0.2", ["198.51.100.7"], TRUSTED, "198.51.100.7"),  # an IPv4-mapped peer is the IPv4 proxy
    ("fd00::1", ["2001:db8::5"], TRUSTED, "2001:db8::5"),
])
def test_client_address(peer: str, header: list[str], trusted: tuple, expected: str) -> None:  # type: ignore[type-arg]
    assert client_address(peer, header, trusted) == expected


def test_a_malformed_setting_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="not an address"):
        parse_networks("10.0.0.0/8, proxy.internal")
