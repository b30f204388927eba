"""Waiting on what a test expects instead of for a fixed time: poll a condition until it holds (failing only past a
generous deadline, so a loaded machine is slow, never wrong), watch that one keeps holding, or let select tell
which sockets the other end closed. The only place in the suite that sleeps between looks."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# how long a condition may take to come true before the test fails: minutes of slack on a loaded CI machine,
# and no cost when it holds at once
DEADLINE_S = 60.0
STEP_S = 0.02


def wait_until(predicate: Callable[[], T], timeout: float = DEADLINE_S, step: float = STEP_S,
               message: str | Callable[[], str] = "") -> T:
    """Poll ``predicate`` until it returns something true and return that; fail past ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            said = message() if callable(message) else message
            raise AssertionError(f"condition not met within {timeout} s{': ' + said if said else ''}")
        time.sleep(step)


def holds_for(predicate: Callable[[], bool], seconds: float, step: float = STEP_S * 5) -> None:
    """Assert that ``predicate`` holds at every look during ``seconds`` (what must not happen, given time to)."""
    deadline = time.monotonic() + seconds
    while True:
        assert predicate(), "the condition stopped holding"
        if time.monotonic() >= deadline:
            return
        time.sleep(step)


def closed_sockets(socks: Sequence[socket.socket], deadline: float, enough: int | None = None) -> set[int]:
    """Indexes of the sockets the other end closed, told by select (no polling interval): watch until all are
    closed, ``enough`` of them are, or the monotonic ``deadline`` passes."""
    closed: set[int] = set()
    want = len(socks) if enough is None else enough
    while len(closed) < want and (left := deadline - time.monotonic()) > 0:
        _drain(socks, closed, left)
    _drain(socks, closed, 0.0)  # what else is closed at this moment
    return closed


def _drain(socks: Sequence[socket.socket], closed: set[int], timeout: float) -> None:
    open_ = {id(s): i for i, s in enumerate(socks) if i not in closed}
    if not open_:
        return
    ready, _, _ = select.select([socks[i] for i in open_.values()], [], [], timeout)
    for s in ready:
        try:
            data = s.recv(4096)
        except ConnectionResetError:
            data = b""
        if not data:
            closed.add(open_[id(s)])
