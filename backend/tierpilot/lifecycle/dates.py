"""When a lifecycle action falls due: S3 counts days from creation and rounds up to midnight UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

DAY = timedelta(days=1)


def midnight(t: datetime) -> datetime:
    """The UTC midnight at or before ``t``."""
    t = t.astimezone(UTC)
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def due_at(created_at: datetime, days: int) -> datetime:
    """When a Days action falls due: creation + days, rounded up to the next midnight UTC (as S3)."""
    t = created_at.astimezone(UTC) + days * DAY
    m = midnight(t)
    return m if m == t else m + DAY


def created_threshold(now: datetime, days: int | None, date: datetime | None) -> datetime | None:
    """The latest creation time for which an action is due at ``now`` (None: nothing is due yet).

    ``due_at(c, days) <= now`` holds exactly when ``c <= midnight(now) - days``; a Date action applies to
    every object (whenever created) once the date has passed, as in S3.
    """
    if days is not None:
        return midnight(now) - days * DAY
    assert date is not None
    return now if date <= now else None
