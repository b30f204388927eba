from __future__ import annotations

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.kit.settings import get_settings
from tierpilot.overview.schemas import BucketUsage, OverviewOut, TierUsage, Totals
from tierpilot.tiers import repository as tiers_repository


def overview(session: Session, user: User) -> OverviewOut:
    """Usage per tier (everyone's, tiers are shared) and per bucket: every bucket the user sees (own,
    their projects' and shared with them; all for an admin)."""
    per_tier = catalog_repository.usage_by_tier(session)
    all_tiers = tiers_repository.list_tiers(session)
    tiers = [
        TierUsage(id=t.id, name=t.name, driver=t.driver, offline=t.offline, storage_classes=list(t.storage_classes),
                  capacity_bytes=t.capacity_bytes, used_bytes=per_tier.get(t.id, (0, 0))[0],
                  object_count=per_tier.get(t.id, (0, 0))[1])
        for t in all_tiers
    ]
    tier_names = {t.id: t.name for t in all_tiers}
    visible = None if user.is_admin else [b.id for b in catalog_service.visible_buckets(session, user)]
    rows = catalog_repository.bucket_usage(session, None, visible)
    owners = auth_repository.usernames(session, {owner_id for _, owner_id, _, _, _ in rows})
    buckets = [
        BucketUsage(name=name, owner=owners[owner_id], tier=tier_names[tier_id], object_count=n, used_bytes=b)
        for name, owner_id, tier_id, n, b in rows
        if owner_id in owners and tier_id in tier_names
    ]
    totals = Totals(buckets=len(buckets), objects=sum(b.object_count for b in buckets),
                    bytes=sum(b.used_bytes for b in buckets))
    return OverviewOut(tiers=tiers, buckets=buckets, totals=totals, gateway_url=get_settings().gateway_url)
