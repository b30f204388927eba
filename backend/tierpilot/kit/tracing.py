"""Where one request's time goes: a per-request phase recorder of a few monotonic-ns stamps.

The gateway stamps the moments it passes (a slot given by backpressure, headers parsed, caller authenticated,
flow admission asked and granted, the last body byte received, the response started, the request over) and adds
up the time its flow made it wait (``waited``); ``phases`` turns the stamps into contiguous phases that add up to the
request's total. No allocation until a request is finished, and then only a tuple per phase.
"""

from __future__ import annotations

import time
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

        Each phase runs from the end of the one before to its own stamp, clamped to the request's end; a phase
        whose stamp is unset (0) or not past the one before is left out. Limiter waits are spread over the
        transfer; they are shown as one phase at its start.
        """
        end = self.end or now_ns()
        resp = self.resp_start or end
        authed = self.authed or end
        body_end = self.body_end
        writing = body_end != 0 and body_end >= (self.admit_end or self.authed)
        out: list[tuple[str, int, int]] = []
        t0 = self.t0
        if not self.admit_start:  # no flow asked: HEAD, metadata, errors (one walk, its most common shape)
            _walk(out, t0, t0, end, (("queue", self.queued), ("headers", self.parsed or end), ("auth", authed),
                                     ("transfer", body_end if writing else 0), ("lookup", resp), ("response", end)))
            return out
        cursor = _walk(out, t0, t0, end, (("queue", self.queued), ("headers", self.parsed or end),
                                          ("auth", authed), ("lookup", self.admit_start),
                                          ("admission", self.admit_end or end)))
        if writing:
            wait = min(self.waited, max(0, body_end - cursor))
            _walk(out, t0, cursor, end, (("limiter_wait", cursor + wait), ("transfer", body_end), ("commit", resp),
                                         ("response", end)))
        else:
            cursor = _walk(out, t0, cursor, end, (("tier_open", resp),))
            wait = min(self.waited, max(0, end - cursor))
            _walk(out, t0, cursor, end, (("limiter_wait", cursor + wait), ("transfer", end)))
        return out


def _walk(out: list[tuple[str, int, int]], t0: int, cursor: int, end: int, marks: tuple[tuple[str, int], ...]
          ) -> int:
    """Append the phases ending at ``marks`` (name, stamp) from ``cursor`` on; the cursor where they end."""
    for name, until in marks:
        if until > end:
            until = end
        if until > cursor:
            out.append((name, cursor - t0, until - cursor))
            cursor = until
    return cursor


current: ContextVar[Recorder | None] = ContextVar("tierpilot_trace", default=None)
