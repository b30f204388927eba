"""Admission control: unit cases and properties over random booking sequences."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tierpilot.reservations.admission import (
    Booking,
    bookable_bps,
    earliest_start,
    fits,
    load_steps,
    max_rate_that_fits,
    peak_load,
)

T0 = datetime(2026, 12, 1, tzinfo=UTC)
BOOKABLE = 270


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def booking(start: int, end: int, rate: int) -> Booking:
    return Booking(at(start), at(end), rate)


def load_at(bookings: list[Booking], t: datetime) -> int:
    return sum(b.rate_bps for b in bookings if b.start <= t < b.end)


def test_bookable_keeps_the_unbookable_share_back():
    assert bookable_bps(300_000_000, 0.1) == 270_000_000
    assert bookable_bps(150_000_000, 0.0) == 150_000_000


def test_edge_touching_windows_do_not_overlap():
    first = [booking(0, 60, BOOKABLE)]
    assert fits(first, BOOKABLE, at(60), at(120), BOOKABLE)
    assert fits(first, BOOKABLE, at(-60), at(0), BOOKABLE)
    assert not fits(first, BOOKABLE, at(59), at(120), 1)


def test_overbooking_returns_largest_rate_that_fits():
    existing = [booking(0, 60, 100), booking(30, 90, 50)]
    # the window sees 100 + 50 booked from minute 30 to 60
    assert max_rate_that_fits(existing, BOOKABLE, at(10), at(80)) == 120
    assert max_rate_that_fits(existing, BOOKABLE, at(60), at(80)) == 220
    assert max_rate_that_fits(existing, BOOKABLE, at(90), at(100)) == BOOKABLE


def test_earliest_start_is_after_the_blocking_booking():
    existing = [booking(0, 60, 200), booking(60, 120, 100)]
    # 200 needs a window with at most 70 booked: only after minute 120
    assert earliest_start(existing, BOOKABLE, at(30), timedelta(minutes=30), 200) == at(120)
    # 150 fits from minute 60 (100 booked there)
    assert earliest_start(existing, BOOKABLE, at(30), timedelta(minutes=30), 150) == at(60)
    # a rate that fits where asked keeps the asked start
    assert earliest_start(existing, BOOKABLE, at(30), timedelta(minutes=30), 70) == at(30)


def test_earliest_start_of_a_rate_above_capacity_is_none():
    assert earliest_start([], BOOKABLE, at(0), timedelta(minutes=5), BOOKABLE + 1) is None


def test_load_steps_merge_equal_neighbours_and_start_at_window():
    steps = load_steps([booking(0, 60, 100), booking(60, 120, 100), booking(90, 100, 20)], at(-30), at(150))
    assert [(s.at, s.load_bps) for s in steps] == [
        (at(-30), 0), (at(0), 100), (at(90), 120), (at(100), 100), (at(120), 0)]


def admit(requests: list[tuple[int, int, int]]) -> list[Booking]:
    """Book (start minute, length, rate) requests in order; those that do not fit are refused."""
    accepted: list[Booking] = []
    for start, length, rate in requests:
        b = booking(start, start + length, rate)
        if fits(accepted, BOOKABLE, b.start, b.end, b.rate_bps):
            accepted.append(b)
    return accepted


windows = st.tuples(st.integers(0, 200), st.integers(1, 120), st.integers(1, BOOKABLE))


@settings(max_examples=300, deadline=None)
@given(st.lists(windows, max_size=25))
def test_no_accepted_set_ever_exceeds_bookable_capacity(requests):
    accepted = admit(requests)
    for t in range(0, 330):
        assert load_at(accepted, at(t)) <= BOOKABLE
    assert all(peak_load(accepted, at(t), at(t + 1)) == load_at(accepted, at(t)) for t in range(0, 330, 7))


@settings(max_examples=300, deadline=None)
@given(st.lists(windows, max_size=20), windows)
def test_max_rate_is_exact(existing_spec, asked):
    accepted = admit(existing_spec)
    start, length, _ = asked
    best = max_rate_that_fits(accepted, BOOKABLE, at(start), at(start + length))
    assert best == BOOKABLE - max(load_at(accepted, at(t)) for t in range(start, start + length))
    assert best == 0 or fits(accepted, BOOKABLE, at(start), at(start + length), best)
    assert not fits(accepted, BOOKABLE, at(start), at(start + length), best + 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(windows, max_size=20), windows)
def test_earliest_start_fits_and_nothing_earlier_does(existing_spec, asked):
    accepted = admit(existing_spec)
    start, length, rate = asked
    found = earliest_start(accepted, BOOKABLE, at(start), timedelta(minutes=length), rate)
    assert found is not None
    assert found >= at(start)
    assert fits(accepted, BOOKABLE, found, found + timedelta(minutes=length), rate)
    # every booking boundary is a whole minute, so checking whole minutes before it is exhaustive
    minute = int((found - T0).total_seconds() // 60)
    for earlier in range(start, minute):
        assert not fits(accepted, BOOKABLE, at(earlier), at(earlier + length), rate)


@settings(max_examples=200, deadline=None)
@given(st.lists(windows, min_size=1, max_size=20), st.data())
def test_cancellation_frees_the_window(requests, data):
    accepted = admit(requests)
    victim = data.draw(st.sampled_from(accepted))
    remaining = list(accepted)
    remaining.remove(victim)
    assert fits(remaining, BOOKABLE, victim.start, victim.end, victim.rate_bps)
    assert max_rate_that_fits(remaining, BOOKABLE, victim.start, victim.end) >= victim.rate_bps
