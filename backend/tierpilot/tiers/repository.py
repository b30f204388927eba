"""Only this module queries the tiers table (and counts what lives on a tier)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tierpilot.catalog.models import Bucket, MultipartUpload, Object
from tierpilot.drivers.registry import TierSpec
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier


def list_tiers(session: Session) -> list[Tier]:
    return list(session.scalars(select(Tier).order_by(Tier.id)))


def get(session: Session, tier_id: int) -> Tier | None:
    return session.get(Tier, tier_id)


def get_by_name(session: Session, name: str) -> Tier | None:
    return session.scalar(select(Tier).where(Tier.name == name))


def object_usage(session: Session) -> dict[int, tuple[int, int]]:
    """tier id -> (bytes, objects), one grouped scan of the catalog (indexed by tier_id)."""
    rows = session.execute(
        select(Object.tier_id, func.coalesce(func.sum(Object.size), 0), func.count(Object.id))
        .group_by(Object.tier_id)
    )
    return {tier_id: (int(size), int(count)) for tier_id, size, count in rows}


def bucket_counts(session: Session) -> dict[int, int]:
    rows = session.execute(select(Bucket.tier_id, func.count(Bucket.id)).group_by(Bucket.tier_id))
    return {tier_id: int(count) for tier_id, count in rows}


def references(session: Session, tier_id: int) -> tuple[int, int, int]:
    """(objects, buckets, multipart uploads) stored on or bound to a tier."""
    objects = session.scalar(select(func.count(Object.id)).where(Object.tier_id == tier_id)) or 0
    buckets = session.scalar(select(func.count(Bucket.id)).where(Bucket.tier_id == tier_id)) or 0
    uploads = session.scalar(
        select(func.count(MultipartUpload.id)).where(MultipartUpload.tier_id == tier_id)
    ) or 0
    return int(objects), int(buckets), int(uploads)


def spec_of(tier: Tier) -> TierSpec:
    """What the data path needs of a tier row, detached from the session."""
    return TierSpec(id=tier.id, name=tier.name, driver=tier.driver, config=dict(tier.config or {}),
                    storage_classes=tuple(str(c) for c in tier.storage_classes or ()), offline=bool(tier.offline),
                    restore_delays=dict(tier.restore_delays or {}), min_storage_days=tier.min_storage_days or 0,
                    price_ref=dict(tier.price_ref or {}))


def load_specs(session: Session | None = None) -> list[TierSpec]:
    """Every tier as a spec: the loader of the process's tier directory (``drivers.registry.tiers``)."""
    if session is not None:
        return [spec_of(t) for t in list_tiers(session)]
    with transaction() as own:
        return [spec_of(t) for t in list_tiers(own)]
