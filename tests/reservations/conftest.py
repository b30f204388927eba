from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def soon(minutes: float = 0) -> datetime:
    """A minute-aligned instant from an hour ahead, so windows do not straddle 'now'."""
    base = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(hours=1)
    return base + timedelta(minutes=minutes)


@pytest.fixture
def make_bucket(db: str) -> Callable[[str, int], None]:
    """A bucket row owned by a user (buckets are the gateway's; only ownership matters here)."""

    def make(name: str, owner_id: int) -> None:
        with transaction(write=True) as s:
            tier = s.query(Tier).filter_by(name="t-res").one_or_none()
            if tier is None:
                tier = Tier(name="t-res", driver="posix", config={"path": "/nonexistent"},
                            storage_classes=["STANDARD"])
                s.add(tier)
                s.flush()
            s.add(Bucket(name=name, owner_id=owner_id, tier_id=tier.id))

    return make


@pytest.fixture
def book(client: TestClient, make_bucket: Callable[[str, int], None]) -> Callable[..., Any]:
    """POST a reservation with the given client (admin by default). Without a bucket named, it books
    `bench-<user>`, a bucket of the signed-in user made on first use (the server refuses missing buckets)."""
    made: set[str] = set()

    def _book(c: TestClient | None = None, *, bucket: str | None = None, direction: str = "read",
              rate_mbps: float = 100, start: datetime | None = None, minutes: float = 60, **extra: Any) -> Any:
        c = c or client
        if bucket is None:
            me = c.get("/api/auth/me")
            bucket = f"bench-{me.json()['username']}" if me.status_code == 200 else "bench"
            if me.status_code == 200 and bucket not in made:
                make_bucket(bucket, int(me.json()["id"]))
                made.add(bucket)
        start = start or soon()
        body = {"bucket": bucket, "direction": direction, "rate_mbps": rate_mbps, "start": iso(start),
                "end": iso(start + timedelta(minutes=minutes)), **extra}
        return c.post("/api/reservations", json=body)

    return _book
