"""Where one request's time goes: a per-request phase recorder of a few monotonic-ns stamps.

The gateway stamps the moments it passes (a slot given by backpressure, headers parsed, caller authenticated,
flow admission asked and granted, the last body byte received, the response started, the request over) and adds
up the time its flow made it wait (``waited``); ``phases`` turns the stamps into contiguous phases that add up to the
request's total. No allocation until a request is finished, and then only a tuple per phase.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar

PHASES = ("queue", "headers", "auth", "lookup", "admission", "tier_open", "limiter_wait", "transfer", "commit",
          "response")
TRACE_HEADER = "x-tierpilot-trace"

now_ns = time.monotonic_ns


class Recorder:
    """The stamps of one request (0 = not reached)."""

    __slots__ = ("admit_end", "admit_start", "authed", "body_end", "end", "parsed", "queued", "resp_start", "t0",
                 "waited")

    def __init__(self) -> None:
        self.t0 = now_ns()
        self.queued = self.parsed = self.authed = self.admit_start = self.admit_end = 0
        self.body_end = self.resp_start = self.end = 0
        self.waited = 0

    def total_ns(self) -> int:
        return (self.end or now_ns()) - self.t0

    def phases(self) -> list[tuple[str, int, int]]:
        """(phase, start, duration) in ns from the request's start; contiguous, summing to the total.

        Limiter waits are spread over the transfer; they are shown as one phase at its start.
        """
        end = self.end or now_ns()
        out: list[tuple[str, int, int]] = []
        cursor = self.t0

        def add(name: str, until: int) -> None:
            nonlocal cursor
            until = max(cursor, min(until, end))
            if until > cursor:
                out.append((name, cursor - self.t0, until - cursor))
            cursor = until

        if self.queued:  # waited for a slot (gateway/admission.py)
            add("queue", self.queued)
        add("headers", self.parsed or end)
        add("auth", self.authed or end)
        resp = self.resp_start or end
        writing = bool(self.body_end) and self.body_end >= (self.admit_end or self.authed)
        if self.admit_start:
            add("lookup", self.admit_start)
            add("admission", self.admit_end or end)
            if writing:
                self._transfer(add, self.body_end, cursor)
                add("commit", resp)
                add("response", end)
            else:
                add("tier_open", resp)
                self._transfer(add, end, cursor)
        else:
            if writing:
                add("transfer", self.body_end)
            add("lookup", resp)
            add("response", end)
        return out

    def _transfer(self, add: Callable[[str, int], None], until: int, cursor: int) -> None:
        wait = min(self.waited, max(0, until - cursor))
        if wait:
            add("limiter_wait", cursor + wait)
        add("transfer", until)


current: ContextVar[Recorder | None] = ContextVar("tierpilot_trace", default=None)
