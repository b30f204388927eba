"""Due dates: S3 counts days from creation and rounds up to the next midnight UTC."""

from __future__ import annotations

from datetime import UTC, datetime

from tierpilot.lifecycle.dates import created_threshold, due_at


def test_due_date_rounds_up_to_the_next_midnight_utc() -> None:
    created = datetime(2026, 1, 10, 15, 0, tzinfo=UTC)
    assert due_at(created, 30) == datetime(2026, 2, 10, tzinfo=UTC)
    assert due_at(datetime(2026, 1, 10, tzinfo=UTC), 1) == datetime(2026, 1, 11, tzinfo=UTC)
    # the threshold form the sweep queries with agrees with due_at on both sides of the boundary
    for now in (datetime(2026, 2, 9, 23, 59, 59, tzinfo=UTC), datetime(2026, 2, 10, tzinfo=UTC)):
        threshold = created_threshold(now, 30, None)
        assert threshold is not None
        assert (created <= threshold) == (due_at(created, 30) <= now)


def test_a_date_action_applies_to_every_object_once_the_date_passed() -> None:
    now = datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert created_threshold(now, None, datetime(2026, 3, 1, tzinfo=UTC)) == now
    assert created_threshold(now, None, datetime(2026, 3, 2, tzinfo=UTC)) is None
