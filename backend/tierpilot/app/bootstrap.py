"""Start-up data: the bootstrap admin from the environment and the demo seed of an empty database."""

from __future__ import annotations

import logging
import random

from tierpilot.auth import repository as auth_repository
from tierpilot.auth import service as auth_service
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers.models import Tier

log = logging.getLogger(__name__)

DEMO_USER = ("demo", "demo-password")


def bootstrap_admin() -> str | None:
    """Create TIERPILOT_BOOTSTRAP_ADMIN=name:password when that user does not exist yet."""
    spec = get_settings().bootstrap_admin
    if not spec:
        return None
    name, sep, password = spec.partition(":")
    if not sep or not name or not password:
        raise SystemExit("TIERPILOT_BOOTSTRAP_ADMIN must be name:password")
    with transaction(write=True) as session:
        auth_service.ensure_user(session, name, password, is_admin=True)
    return name


def has_users() -> bool:
    """Whether anyone can sign in yet (start-up says how to create the first admin when not)."""
    with transaction() as session:
        return bool(auth_repository.list_users(session))


def demo_tiers() -> list[Tier]:
    """The embedded default's three tiers: hot disk, infrequent access, offline archive."""
    root = get_settings().tiers_dir
    # the demo's tiers are directories on this machine: priced as site costs (disk, tape), not as a cloud's classes
    onprem = "onprem-example-2026"
    return [
        Tier(name="hot-disk", driver="posix", config={"path": str(root / "hot")}, storage_classes=["STANDARD"],
             capacity_bytes=50 * 2**30, price_ref={"catalog": onprem, "storage_class": "DISK"}),
        Tier(name="infrequent", driver="posix", config={"path": str(root / "infrequent")},
             storage_classes=["STANDARD_IA"], min_storage_days=30, capacity_bytes=200 * 2**30,
             price_ref={"catalog": onprem, "storage_class": "DISK"}),
        Tier(name="archive", driver="posix", config={"path": str(root / "archive")}, offline=True,
             storage_classes=["GLACIER", "DEEP_ARCHIVE"], min_storage_days=90, capacity_bytes=2**40,
             restore_delays={"expedited": 5, "standard": 30, "bulk": 60},
             price_ref={"catalog": onprem, "storage_class": "TAPE"}),
    ]


DEMO_BUCKETS = (
    # bucket, tier index, storage class, key prefix, objects, bytes each
    ("belle2-raw", 0, "STANDARD", "run-2026-11/detector-", 12, 768 * 1024),
    ("belle2-processed", 1, "STANDARD_IA", "skim/v3/mdst-", 8, 512 * 1024),
    ("telescope-archive", 2, "GLACIER", "survey-2019/field-", 10, 256 * 1024),
)


def seed_demo() -> bool:
    """On an empty database: demo admin, three tiers, sample buckets with objects. Returns True if seeded."""
    from tierpilot.drivers import registry

    with transaction(write=True) as session:
        if tiers_repository.any_tier(session):
            return False
        user = auth_service.ensure_user(session, DEMO_USER[0], DEMO_USER[1], is_admin=True)
        tiers = demo_tiers()
        tiers_repository.add_tiers(session, tiers)
        for tier in tiers:
            registry.claim_location(tier)
        buckets = [catalog_service.create_bucket(session, owner_id=user.id, name=name, tier_name=tiers[tier_index].name)
                   for name, tier_index, *_ in DEMO_BUCKETS]
        for b in buckets:
            session.expunge(b)
        for t in tiers:
            session.expunge(t)
    _seed_objects(buckets, tiers)
    return True


def _seed_objects(buckets: list[Bucket], tiers: list[Tier]) -> None:
    """Sample objects written through the data path (tier blob + catalog row), so tiers show real bytes."""
    from tierpilot.catalog.store import NewObject, put_object
    from tierpilot.drivers import registry

    rng = random.Random(20261122)
    for bucket, (_name, tier_index, storage_class, prefix, count, size) in zip(buckets, DEMO_BUCKETS, strict=True):
        spec = NewObject(tier=registry.tiers.get(tiers[tier_index].id), storage_class=storage_class,
                         content_type="application/octet-stream",
                         user_metadata={"experiment": bucket.name.split("-")[0]},
                         # as `aws s3 cp --checksum-algorithm SHA256` would: the Browser shows what S3 clients see
                         checksum_algorithm="SHA256")
        for i in range(count):
            data = rng.randbytes(size + rng.randrange(0, size))
            put_object(bucket, f"{prefix}{i:04d}.root", iter([data]), spec)
    log.info("demo seeded: %d buckets", len(buckets))
