"""When to poll a restore: a pure function of the request time, the clock and the tier's schedule.

A schedule is a list of phases ``(from_s, every_s)`` counted from the moment the tier accepted the
request: nothing is polled before the first phase starts; inside a phase, polls fall on the grid
``from_s + k * every_s``. Grid points do not drift when a sweep runs late, so poll times are exact
and a restarted worker polls at the same instants as one that never stopped.

Defaults follow the field experience with archive classes (restores of Glacier Standard took about
200 minutes, Bulk about 330, independent of size): poll Standard first after one hour, then hourly,
and every 5 minutes once 3 hours have passed; Bulk the same from 5 hours (every 5 minutes after 6);
Expedited every minute. A tier whose recall delays are known (an offline posix tier) is polled from
its delay on, at a tenth of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tierpilot.drivers.offline import DEFAULT_RESTORE_DELAYS
from tierpilot.drivers.registry import TierLike
from tierpilot.pricing.restores import RestorePricing, typical_hours
from tierpilot.restores.models import SPEEDS

MINUTE = 60.0
HOUR = 3600.0


@dataclass(frozen=True)
class PollSchedule:
    """Poll phases ``(from_s, every_s)`` with increasing ``from_s``; ``max_s`` flags a stuck restore."""

    phases: tuple[tuple[float, float], ...]
    max_s: float

    def __post_init__(self) -> None:
        if not self.phases:
            raise ValueError("a schedule needs at least one phase")
        starts = [start for start, _ in self.phases]
        if any(start < 0 for start in starts) or any(a >= b for a, b in zip(starts, starts[1:], strict=False)):
            raise ValueError("phase starts must be non-negative and increase")
        if any(every <= 0 for _, every in self.phases):
            raise ValueError("poll intervals must be positive")
        if self.max_s <= starts[0]:
            raise ValueError("max_s must come after the first poll")

    @property
    def first_s(self) -> float:
        return self.phases[0][0]

    def next_offset(self, elapsed_s: float) -> float:
        """The first poll offset strictly after ``elapsed_s`` seconds (the first phase start before it)."""
        if elapsed_s < self.first_s:
            return self.first_s
        for index, (start, every) in enumerate(self.phases):
            following = self.phases[index + 1][0] if index + 1 < len(self.phases) else math.inf
            if elapsed_s >= following:
                continue
            candidate = start + (math.floor((elapsed_s - start) / every) + 1) * every
            return min(candidate, following)
        raise AssertionError("unreachable: the last phase is unbounded")

    def first_offset_at_or_after(self, offset_s: float) -> float:
        """The first poll at or after ``offset_s``: when a recall done at that offset is seen ready."""
        if offset_s <= self.first_s:
            return self.first_s
        for index, (start, every) in enumerate(self.phases):
            following = self.phases[index + 1][0] if index + 1 < len(self.phases) else math.inf
            if offset_s < following:
                return min(start + math.ceil((offset_s - start) / every) * every, following)
        raise AssertionError("unreachable: the last phase is unbounded")

    def to_json(self) -> dict[str, Any]:
        return {"phases": [list(p) for p in self.phases], "max_s": self.max_s}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PollSchedule:
        phases = tuple((float(a), float(b)) for a, b in data["phases"])
        return cls(phases=phases, max_s=float(data["max_s"]))


def next_poll_at(requested_at: datetime, now: datetime, schedule: PollSchedule) -> datetime:
    """The next poll after ``now`` of a restore the tier accepted at ``requested_at``."""
    elapsed = (now - requested_at).total_seconds()
    return requested_at + timedelta(seconds=schedule.next_offset(elapsed))


def poll_times(requested_at: datetime, until: datetime, schedule: PollSchedule) -> list[datetime]:
    """Every poll from the request up to ``until`` (what a simulated clock sees)."""
    horizon = (until - requested_at).total_seconds()
    times: list[datetime] = []
    offset = schedule.first_s
    while offset <= horizon:
        times.append(requested_at + timedelta(seconds=offset))
        offset = schedule.next_offset(offset)
    return times


# Measured/typical recall times of archive classes (AWS Glacier Flexible Retrieval), hours.
_ARCHIVE_DEFAULTS: dict[str, PollSchedule] = {
    "expedited": PollSchedule(phases=((1 * MINUTE, 1 * MINUTE),), max_s=1 * HOUR),
    "standard": PollSchedule(phases=((1 * HOUR, 1 * HOUR), (3 * HOUR, 5 * MINUTE)), max_s=12 * HOUR),
    "bulk": PollSchedule(phases=((5 * HOUR, 1 * HOUR), (6 * HOUR, 5 * MINUTE)), max_s=48 * HOUR),
}


def default_schedule(speed: str) -> PollSchedule:
    return _ARCHIVE_DEFAULTS[speed]


def schedule_for_known_delay(delay_s: float) -> PollSchedule:
    """A tier that says how long a recall takes: first poll at the delay, then every tenth of it.

    The interval stays within [1 s, 5 min]; a recall taking more than twice its delay plus a minute
    is stuck.
    """
    every = min(max(delay_s / 10.0, 1.0), 5 * MINUTE)
    return PollSchedule(phases=((max(delay_s, 0.0), every),), max_s=2 * delay_s + MINUTE)


def tier_schedules(driver: str, restore_delays: Mapping[str, Any] | None,
                   override: Mapping[str, Any] | None) -> dict[str, PollSchedule]:
    """The schedule per speed of one tier: its override, else its known delays (posix), else defaults."""
    out: dict[str, PollSchedule] = {}
    for speed in SPEEDS:
        if override and speed in override:
            out[speed] = PollSchedule.from_json(override[speed])
        elif driver == "posix" and restore_delays and speed in restore_delays:
            out[speed] = schedule_for_known_delay(float(restore_delays[speed]))
        else:
            out[speed] = default_schedule(speed)
    return out


def parse_override(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Validate a per-tier override (API input); ValueError with a message on bad input."""
    out: dict[str, dict[str, Any]] = {}
    for speed, spec in data.items():
        if speed not in SPEEDS:
            raise ValueError(f"unknown speed {speed!r} (expedited, standard or bulk)")
        if not isinstance(spec, Mapping) or "phases" not in spec or "max_s" not in spec:
            raise ValueError(f"{speed}: give phases [[from_s, every_s], ...] and max_s")
        phases, max_s = spec["phases"], spec["max_s"]
        if not isinstance(phases, list) or not all(
                isinstance(p, list | tuple) and len(p) == 2 and all(_is_number(x) for x in p) for p in phases):
            raise ValueError(f"{speed}: phases must be pairs of numbers [from_s, every_s]")
        if not _is_number(max_s):
            raise ValueError(f"{speed}: max_s must be a number of seconds")
        try:
            schedule = PollSchedule.from_json(spec)
        except ValueError as exc:
            raise ValueError(f"{speed}: {exc}") from None
        if any(every < 1 for _, every in schedule.phases):
            raise ValueError(f"{speed}: polls at most once a second")
        out[speed] = schedule.to_json()
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# when a restore is expected ready --------------------------------------------------------------------

# Field measurements of archive restores (Glacier: Standard ≈ 200 min, Bulk ≈ 330 min); expedited as
# AWS documents it (1-5 minutes). Used when a tier has neither known delays nor a price sheet.
MEASURED_TYPICAL_S: dict[str, float] = {"expedited": 5 * 60.0, "standard": 200 * 60.0, "bulk": 330 * 60.0}


def typical_seconds(tier: TierLike, pricing: RestorePricing, speed: str) -> float:
    """How long a recall usually takes on this tier: its configured delay (offline posix), else its
    price sheet's typical time, else the field measurements."""
    if tier.driver == "posix":
        delays: dict[str, float] = {str(k): v for k, v in DEFAULT_RESTORE_DELAYS.items()}
        delays.update(tier.restore_delays or {})
        return float(delays[speed])
    hours = typical_hours(pricing, speed)
    if hours is not None:
        return float(hours) * 3600.0
    return MEASURED_TYPICAL_S[speed]


def expected_ready_s(tier: TierLike, pricing: RestorePricing, schedules: Mapping[str, PollSchedule],
                     speed: str) -> float:
    """Seconds from the request until the poll that sees a typical recall finished."""
    return schedules[speed].first_offset_at_or_after(typical_seconds(tier, pricing, speed))
