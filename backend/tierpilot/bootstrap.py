"""Start-up data: the bootstrap admin from the environment and the demo seed of an empty database."""

from __future__ import annotations

import logging

from sqlalchemy import select

from tierpilot.auth import service as auth_service
from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import transaction
from tierpilot.settings import get_settings
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


def demo_tiers() -> list[Tier]:
    """The embedded default's three tiers: hot disk, infrequent access, offline archive."""
    root = get_settings().tiers_dir
    return [
        Tier(name="hot-disk", driver="posix", config={"path": str(root / "hot")}, storage_classes=["STANDARD"],
             price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "STANDARD"}),
        Tier(name="infrequent", driver="posix", config={"path": str(root / "infrequent")},
             storage_classes=["STANDARD_IA"], min_storage_days=30,
             price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "STANDARD_IA"}),
        Tier(name="archive", driver="posix", config={"path": str(root / "archive")}, offline=True,
             storage_classes=["GLACIER", "DEEP_ARCHIVE"], min_storage_days=90,
             restore_delays={"expedited": 5, "standard": 30, "bulk": 60},
             price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "GLACIER"}),
    ]


def seed_demo() -> bool:
    """On an empty database: demo admin, three tiers, sample buckets with objects. Returns True if seeded."""
    with transaction(write=True) as session:
        if session.scalar(select(Tier.id).limit(1)) is not None:
            return False
        user = auth_service.ensure_user(session, DEMO_USER[0], DEMO_USER[1], is_admin=True)
        tiers = demo_tiers()
        session.add_all(tiers)
        session.flush()
        for name, tier in (("belle2-raw", tiers[0]), ("telescope-archive", tiers[2])):
            session.add(Bucket(name=name, owner_id=user.id, tier_id=tier.id, region=get_settings().gateway_region))
    _seed_objects()
    return True


def _seed_objects() -> None:
    """Sample objects written through the catalog service, so tiers show real bytes."""
    try:
        from tierpilot.catalog.seed import seed_sample_objects
    except ImportError:  # the catalog service arrives with the gateway
        return
    seed_sample_objects()
