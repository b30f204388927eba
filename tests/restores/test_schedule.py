"""The poll schedule on a simulated clock: exact poll instants per speed, defaults and per-tier ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tierpilot.restores.schedule import (
    PollSchedule,
    default_schedule,
    next_poll_at,
    parse_override,
    poll_times,
    schedule_for_known_delay,
    tier_schedules,
)

T0 = datetime(2026, 11, 22, 13, 7, 41, 250000, tzinfo=UTC)


def at(**offset: float) -> datetime:
    return T0 + timedelta(**offset)


def test_standard_polls_nothing_for_an_hour_then_hourly_then_every_five_minutes_after_three_hours() -> None:
    times = poll_times(T0, at(hours=3, minutes=20), default_schedule("standard"))
    assert times == [at(hours=1), at(hours=2), at(hours=3), at(hours=3, minutes=5), at(hours=3, minutes=10),
                     at(hours=3, minutes=15), at(hours=3, minutes=20)]


def test_expedited_polls_every_minute_from_the_first() -> None:
    assert poll_times(T0, at(minutes=5, seconds=30), default_schedule("expedited")) == [
        at(minutes=m) for m in range(1, 6)]


def test_bulk_waits_five_hours_then_hourly_then_every_five_minutes_after_six() -> None:
    times = poll_times(T0, at(hours=6, minutes=15), default_schedule("bulk"))
    assert times == [at(hours=5), at(hours=6), at(hours=6, minutes=5), at(hours=6, minutes=10),
                     at(hours=6, minutes=15)]


def test_next_poll_stays_on_the_grid_when_a_sweep_runs_late() -> None:
    standard = default_schedule("standard")
    # a sweep that looked 17 minutes late still polls next at the following grid point, not 1 h later
    assert next_poll_at(T0, at(hours=1, minutes=17), standard) == at(hours=2)
    assert next_poll_at(T0, at(hours=2, minutes=59, seconds=59), standard) == at(hours=3)
    assert next_poll_at(T0, at(hours=3, minutes=1), standard) == at(hours=3, minutes=5)
    # the phase change wins over a later grid point of the slower phase
    assert next_poll_at(T0, at(hours=2, minutes=30), standard) == at(hours=3)
    assert next_poll_at(T0, T0, standard) == at(hours=1)
    assert next_poll_at(T0, at(seconds=10), default_schedule("expedited")) == at(minutes=1)


def test_first_poll_at_or_after_a_completion_time_is_when_the_batch_is_seen_ready() -> None:
    standard = default_schedule("standard")
    assert standard.first_offset_at_or_after(200 * 60) == 200 * 60  # Glacier's measured 200 min: on the grid
    assert standard.first_offset_at_or_after(202 * 60) == 205 * 60
    assert standard.first_offset_at_or_after(10) == 3600
    assert standard.first_offset_at_or_after(7200) == 7200
    assert default_schedule("bulk").first_offset_at_or_after(330 * 60) == 6 * 3600


def test_a_known_delay_is_polled_from_the_delay_at_a_tenth_of_it() -> None:
    five = schedule_for_known_delay(5)
    assert poll_times(T0, at(seconds=8.5), five) == [at(seconds=5), at(seconds=6), at(seconds=7), at(seconds=8)]
    thirty = schedule_for_known_delay(30)
    assert poll_times(T0, at(seconds=45), thirty) == [at(seconds=30), at(seconds=33), at(seconds=36),
                                                      at(seconds=39), at(seconds=42), at(seconds=45)]
    assert schedule_for_known_delay(3600).phases == ((3600.0, 300.0),)  # at most every 5 minutes
    assert five.max_s == 70


def test_tier_schedules_use_the_override_then_known_delays_then_defaults() -> None:
    override = {"standard": {"phases": [[10, 5], [60, 1]], "max_s": 600}}
    posix = tier_schedules("posix", {"expedited": 2, "standard": 4, "bulk": 8}, override)
    assert posix["standard"] == PollSchedule(((10.0, 5.0), (60.0, 1.0)), 600.0)
    assert poll_times(T0, at(seconds=62), posix["standard"]) == [
        at(seconds=s) for s in (10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 61, 62)]
    assert posix["bulk"] == schedule_for_known_delay(8)
    s3 = tier_schedules("s3", {}, None)
    assert s3 == {"expedited": default_schedule("expedited"), "standard": default_schedule("standard"),
                  "bulk": default_schedule("bulk")}


@pytest.mark.parametrize("bad, message", [
    ({"fast": {"phases": [[1, 1]], "max_s": 10}}, "unknown speed"),
    ({"standard": {"phases": [[1, 1]]}}, "max_s"),
    ({"standard": {"phases": [[10, 1], [5, 1]], "max_s": 100}}, "increase"),
    ({"standard": {"phases": [[1, 0.5]], "max_s": 100}}, "once a second"),
    ({"standard": {"phases": [[100, 10]], "max_s": 50}}, "max_s"),
    ({"standard": {"phases": [["x"]], "max_s": 50}}, "pairs"),
])
def test_bad_overrides_are_refused_with_a_message(bad: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_override(bad)  # type: ignore[arg-type]
