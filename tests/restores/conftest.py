"""Archived objects to restore: an offline posix tier with short recall delays, a hot tier, a bucket of
each user's, objects written through the catalog store (the gateway's write path)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from tests.clocks import WallClock
from tests.drivers.conftest import moto_url  # noqa: F401 - the moto server of the driver tests, shared


@dataclass
class Archive:
    tag: str
    users: dict[str, dict[str, str]]
    tiers: dict[str, int]
    buckets: dict[str, str] = field(default_factory=dict)

    def user(self, name: str) -> Any:
        from tierpilot.auth.models import User
        from tierpilot.kit.db import transaction

        with transaction() as s:
            user = s.get(User, int(self.users[name]["id"]))
            assert user is not None
            s.expunge(user)
            return user

    def put(self, bucket: str, keys: list[str], tier: str = "archive", storage_class: str = "GLACIER",
            size: int = 100) -> None:
        """Write objects through the catalog store onto ``tier``."""
        from tierpilot.catalog import repository as catalog_repository
        from tierpilot.catalog import store
        from tierpilot.catalog.store import NewObject
        from tierpilot.kit.db import transaction
        from tierpilot.tiers.models import Tier

        with transaction() as s:
            b = catalog_repository.get_bucket_by_name(s, bucket)
            t = s.get(Tier, self.tiers[tier])
            assert b is not None and t is not None
            s.expunge_all()
        for key in keys:
            body = (key.encode() * (size // max(len(key), 1) + 1))[:size]
            store.put_object(b, key, iter([body]), NewObject(tier=t, storage_class=storage_class))


def _delays(expedited: float, standard: float, bulk: float) -> Any:
    from tierpilot.tiers.schemas import RestoreDelays

    return RestoreDelays(expedited=expedited, standard=standard, bulk=bulk)


def build_archive(users: dict[str, dict[str, str]], delays: tuple[float, float, float] = (1, 2, 3),
                  price_ref: dict[str, str] | None = None) -> Archive:
    """Users admin + member, tiers hot (STANDARD) and archive (offline: GLACIER, DEEP_ARCHIVE), one bucket
    per user on the archive tier."""
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    tag = uuid.uuid4().hex[:8]
    ids: dict[str, int] = {}
    with transaction(write=True) as s:
        ids["hot"] = tiers.create(s, TierCreate(name=f"hot-{tag}", driver="posix", config={"path": f"r-{tag}/hot"},
                                                storage_classes=["STANDARD"])).id
        ids["archive"] = tiers.create(s, TierCreate(
            name=f"archive-{tag}", driver="posix", config={"path": f"r-{tag}/archive"},
            storage_classes=["GLACIER", "DEEP_ARCHIVE"], offline=True, restore_delays=_delays(*delays),
            price_ref=price_ref or {})).id
        buckets = {}
        for name, user in users.items():
            bucket = f"{name}-{tag}"
            catalog.create_bucket(s, owner_id=int(user["id"]), name=bucket, tier_name=f"archive-{tag}")
            buckets[name] = bucket
    return Archive(tag=tag, users=users, tiers=ids, buckets=buckets)


@pytest.fixture
def archive(admin_user: dict[str, str], member_user: dict[str, str]) -> Archive:
    """Tiers and buckets of the suite's admin and member; delays expedited 1 s, standard 2 s, bulk 3 s;
    Glacier prices of us-east-1."""
    return build_archive({"admin": admin_user, "member": member_user},
                         price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "GLACIER"})


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> WallClock:
    """The sweeps' and the archive tier's clock (pass it to ``sweep.poll_due(clock=...)``). It starts a minute
    ahead of the wall clock, so what the service makes due "now" (wall time) is due for the sweeps too."""
    from tierpilot.drivers import registry
    from tierpilot.drivers.offline import OfflinePosixDriver
    from tierpilot.kit.db import utcnow

    clock = WallClock(utcnow() + timedelta(minutes=1))
    build = registry.build_driver

    def build_on_clock(tier: registry.TierLike) -> Any:
        driver = build(tier)
        if isinstance(driver, OfflinePosixDriver):
            driver.clock = clock
        return driver

    monkeypatch.setattr(registry, "build_driver", build_on_clock)
    registry.clear()  # drivers built by earlier fixtures are built again, on this clock
    return clock


@pytest.fixture(autouse=True)
def _fresh_drivers() -> Iterator[None]:
    """Tier ids are reused after each test's truncation: build drivers and the tier cache anew."""
    from tierpilot.catalog.store import tiers
    from tierpilot.drivers import registry

    registry.clear()
    tiers.invalidate()
    yield
    registry.clear()
    tiers.invalidate()
