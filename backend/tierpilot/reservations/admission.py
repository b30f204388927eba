"""Admission control as pure functions over half-open windows [start, end).

Booked load is a step function of time: the sum of the rates of the bookings whose window
contains the instant. A new booking fits when, at every instant of its window, that load plus
its rate stays within the bookable capacity. Rates are integers (bytes/s) so sums are exact.
Windows that only touch ([a, b) and [b, c)) never overlap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Booking:
    start: datetime
    end: datetime
    rate_bps: int


@dataclass(frozen=True)
class Step:
    """From ``at`` until the next step, ``load_bps`` is booked."""

    at: datetime
    load_bps: int


def bookable_bps(capacity_bps: int, unbookable_share: float) -> int:
    """The part of a direction's capacity that reservations may claim."""
    return max(0, int(capacity_bps * (1.0 - unbookable_share)))


def overlaps(a_start: datetime, a_end: datetime, b_start: datetime, b_end: datetime) -> bool:
    return a_start < b_end and b_start < a_end


def load_steps(bookings: Iterable[Booking], start: datetime, end: datetime) -> list[Step]:
    """The booked-load step function restricted to [start, end), first step at ``start``."""
    inside = [b for b in bookings if overlaps(b.start, b.end, start, end)]
    deltas: dict[datetime, int] = {start: 0}
    for b in inside:
        s = max(b.start, start)
        deltas[s] = deltas.get(s, 0) + b.rate_bps
        if b.end < end:
            deltas[b.end] = deltas.get(b.end, 0) - b.rate_bps
    steps: list[Step] = []
    load = 0
    for at in sorted(deltas):
        load += deltas[at]
        if steps and steps[-1].load_bps == load:
            continue
        steps.append(Step(at, load))
    return steps


def peak_load(bookings: Iterable[Booking], start: datetime, end: datetime) -> int:
    """The highest booked load at any instant of [start, end)."""
    return max(step.load_bps for step in load_steps(bookings, start, end))


def max_rate_that_fits(bookings: Iterable[Booking], bookable: int, start: datetime, end: datetime) -> int:
    """The largest rate a new booking of [start, end) could get."""
    return max(0, bookable - peak_load(bookings, start, end))


def fits(bookings: Iterable[Booking], bookable: int, start: datetime, end: datetime, rate_bps: int) -> bool:
    return rate_bps <= max_rate_that_fits(bookings, bookable, start, end)


def earliest_start(bookings: Sequence[Booking], bookable: int, not_before: datetime, duration: timedelta,
                   rate_bps: int) -> datetime | None:
    """The earliest start >= ``not_before`` of a window of ``duration`` where ``rate_bps`` fits.

    The feasible starts form left-closed intervals whose left ends are ``not_before`` or the end
    of some booking (sliding a feasible window left only stops where a booking ends), so those
    are the only candidates. None when the rate exceeds the bookable capacity altogether.
    """
    if rate_bps > bookable:
        return None
    candidates = sorted({not_before, *(b.end for b in bookings if b.end > not_before)})
    for at in candidates:
        if fits(bookings, bookable, at, at + duration, rate_bps):
            return at
    raise AssertionError("after the last booking ends the whole capacity is free")
