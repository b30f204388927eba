"""Lifecycle fixtures: three posix tiers (hot, infrequent, offline archive) made by the tiers service, a bucket
with objects written through the catalog store, and a simulated clock that ages objects by rewriting their
creation time."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from tests.conftest import make_user
from tests.gateway.conftest import bucket, gateway, s3  # noqa: F401  (the gateway tests' fixtures, for test_s3api)


@dataclass
class World:
    tag: str
    owner_id: int
    tiers: dict[str, int]
    dirs: dict[str, Path]
    bucket: str
    bucket_id: int


def lifecycle_settings(monkeypatch: pytest.MonkeyPatch, **values: object) -> None:
    """Set TIERPILOT_LIFECYCLE_* for this test (the settings object is rebuilt)."""
    from tierpilot.kit.settings import get_settings

    for name, value in values.items():
        monkeypatch.setenv(f"TIERPILOT_LIFECYCLE_{name.upper()}", str(value))
    get_settings.cache_clear()


@pytest.fixture
def world(db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    from tierpilot.catalog import service as catalog_service
    from tierpilot.drivers import registry
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers_service
    from tierpilot.tiers.schemas import RestoreDelays, TierCreate

    lifecycle_settings(monkeypatch, delete_grace_s=0, move_rate_mbps=0)
    tag = uuid.uuid4().hex[:8]
    owner = make_user(f"owner-{tag}", "owner-password-1")
    tiers: dict[str, int] = {}
    dirs: dict[str, Path] = {}
    with transaction(write=True) as s:
        for name, classes, offline, min_days in (("hot", ["STANDARD"], False, 0),
                                                 ("infrequent", ["STANDARD_IA"], False, 30),
                                                 ("archive", ["GLACIER", "DEEP_ARCHIVE"], True, 90)):
            tier = tiers_service.create(s, TierCreate(
                name=f"{name}-{tag}", driver="posix", config={"path": f"lc-{tag}/{name}"}, storage_classes=classes,
                offline=offline, min_storage_days=min_days,
                restore_delays=RestoreDelays(expedited=1, standard=1, bulk=1) if offline else None,
                price_ref={"catalog": "aws-us-east-1-2026", "storage_class": classes[0]}))
            tiers[name], dirs[name] = tier.id, Path(tier.config["path"])
        bucket = catalog_service.create_bucket(s, owner_id=int(owner["id"]), name=f"lc-{tag}",
                                               tier_name=f"hot-{tag}")
        bucket_id = bucket.id
    registry.tiers.invalidate()
    registry.clear()
    yield World(tag, int(owner["id"]), tiers, dirs, f"lc-{tag}", bucket_id)
    registry.tiers.invalidate()
    registry.clear()


def put(world: World, key: str, data: bytes, storage_class: str | None = None,
        tags: dict[str, str] | None = None) -> int:
    """Write an object through the catalog store (as the gateway does); returns its id."""
    from tierpilot.catalog import service as catalog_service
    from tierpilot.catalog import store
    from tierpilot.drivers import registry
    from tierpilot.kit.db import transaction

    with transaction() as s:
        bucket = catalog_service.get_bucket(s, world.bucket)
        tier, cls = catalog_service.tier_for_class(registry.tiers.all(), bucket.tier_id, storage_class)
        s.expunge(bucket)
    obj = store.put_object(bucket, key, iter([data]), store.NewObject(tier=tier, storage_class=cls, tags=tags,
                                                                      checksum_algorithm="CRC32"))
    return obj.id


def age(world: World, keys: list[str] | None = None, *, days: float = 0, created_at: datetime | None = None) -> None:
    """The simulated clock: make objects look created ``days`` ago (or at ``created_at``)."""
    from tierpilot.catalog.models import Object
    from tierpilot.kit.db import transaction, utcnow

    when = created_at or utcnow() - timedelta(days=days)
    with transaction(write=True) as s:
        q = update(Object).where(Object.bucket_id == world.bucket_id)
        if keys is not None:
            q = q.where(Object.key.in_(keys))
        s.execute(q.values(created_at=when, last_modified=when))


def placement(world: World) -> dict[str, tuple[str, str]]:
    """key -> (tier name without the tag, storage class) of every object of the bucket."""
    from tierpilot.catalog.models import Object
    from tierpilot.kit.db import transaction

    names = {v: k for k, v in world.tiers.items()}
    with transaction() as s:
        return {k: (names[t], c) for k, t, c in s.execute(
            select(Object.key, Object.tier_id, Object.storage_class).where(Object.bucket_id == world.bucket_id))}


def read(world: World, key: str) -> bytes:
    """An object's bytes through the catalog store (restores on archive tiers are the caller's business)."""
    from tierpilot.catalog import repository, store
    from tierpilot.kit.db import transaction

    with transaction() as s:
        obj = repository.get_object(s, world.bucket_id, key)
        assert obj is not None, key
        s.expunge(obj)
    return b"".join(store.open_object(obj))


def set_rules(world: World, rules: list[dict[str, object]], min_size: str | None = None) -> None:
    from tierpilot.catalog import service as catalog_service
    from tierpilot.kit.db import transaction
    from tierpilot.lifecycle import service
    from tierpilot.lifecycle.rules import LifecycleConfig

    body: dict[str, object] = {"rules": rules}
    if min_size:
        body["transition_default_minimum_object_size"] = min_size
    with transaction(write=True) as s:
        bucket = catalog_service.get_bucket(s, world.bucket)
        service.put_config(s, bucket, LifecycleConfig.model_validate(body), "test")
