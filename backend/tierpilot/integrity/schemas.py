from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class FailingObjectOut(BaseModel):
    key: str
    version_id: str
    result: str  # mismatch | missing
    checked_at: datetime
    algorithm: str
    expected: str
    found: str | None


class BucketFixityOut(BaseModel):
    """A bucket's fixity as the Integrity page shows it."""

    bucket: str
    objects: int
    checks: int
    checked_objects: int
    last_check_at: datetime | None
    failures: int  # objects whose latest check failed (mismatch or missing), bytes unchanged since
    failing: list[FailingObjectOut]
