"""Hosts in network namespaces on one switch, for tests of several hosts on one machine.

The switch is a bridge in a namespace of its own (its netfilter settings are that namespace's, not the machine's),
each host a namespace with one veth port on it, and the root namespace a port too (at ``.1``), so the test, and a
load balancer it runs, reach every host. A host is cut off by setting its own end of the cable down, as a pulled
cable or a dead switch port would: its processes keep running and find their peers gone.

Everything is named after a random tag and removed by ``close`` (processes left in a host first), which the
context manager calls however the test ends.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def unavailable() -> str | None:
    """Why namespaces cannot be made here (not root, no ``ip``, refused), or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's ip is not installed"
    probe = f"tp-probe-{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


def _free_subnet() -> str:
    """A 10.213.X prefix no interface or route of the root namespace uses."""
    used = _ip("-o", "addr").stdout + _ip("-o", "route").stdout
    for _ in range(100):
        prefix = f"10.213.{random.randint(1, 254)}"
        if f"{prefix}." not in used:
            return prefix
    raise RuntimeError("no free 10.213.X.0/24 subnet")


@dataclass
class Lan:
    """Hosts (name: address) on a switch the root namespace (``gateway_address``) is attached to."""

    tag: str
    prefix: str
    hosts: dict[str, str] = field(default_factory=dict)
    namespaces: list[str] = field(default_factory=list)

    @property
    def gateway_address(self) -> str:
        return f"{self.prefix}.1"

    @property
    def switch(self) -> str:
        return f"tp-{self.tag}-sw"

    @property
    def uplink(self) -> str:
        return f"tp{self.tag}"

    def namespace(self, host: str) -> str:
        return f"tp-{self.tag}-{host}"

    def run_in(self, host: str, argv: Sequence[str]) -> list[str]:
        """``argv`` as run on ``host``."""
        return ["ip", "netns", "exec", self.namespace(host), *argv]

    def cut(self, host: str) -> None:
        """The host's cable out: nothing reaches it, it reaches nothing (its processes keep running)."""
        _ip("-n", self.namespace(host), "link", "set", "eth0", "down")

    def restore(self, host: str) -> None:
        _ip("-n", self.namespace(host), "link", "set", "eth0", "up")

    def _add_namespace(self, name: str) -> None:
        _ip("netns", "add", name)
        self.namespaces.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def build(self, names: Sequence[str]) -> None:
        self._add_namespace(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        # the root namespace's port
        _ip("link", "add", self.uplink, "type", "veth", "peer", "name", "uplink", "netns", self.switch)
        _ip("-n", self.switch, "link", "set", "uplink", "master", "br0", "up")
        _ip("addr", "add", f"{self.gateway_address}/24", "dev", self.uplink)
        _ip("link", "set", self.uplink, "up")
        for i, name in enumerate(names, start=10):
            ns = self.namespace(name)
            self._add_namespace(ns)
            _ip("-n", self.switch, "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", self.switch, "link", "set", name, "master", "br0", "up")
            address = f"{self.prefix}.{i}"
            _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            self.hosts[name] = address

    def close(self) -> None:
        """Kill what still runs in the hosts (only processes of these namespaces), then remove everything."""
        for ns in reversed(self.namespaces):
            pids = _ip("netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                with suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
        _ip("link", "del", self.uplink, check=False)
        for ns in reversed(self.namespaces):
            _ip("netns", "del", ns, check=False)
        self.namespaces.clear()


@contextmanager
def lan(names: Sequence[str]) -> Iterator[Lan]:
    """Hosts ``names`` (short: they name veth ports) at ``.10``, ``.11``, … of a fresh /24; removed at exit."""
    net = Lan(tag=uuid.uuid4().hex[:6], prefix=_free_subnet())
    try:
        net.build(names)
        yield net
    finally:
        net.close()
