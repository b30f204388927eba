"""The Overview page's data: tiers with their usage, buckets, totals."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.auth.models import User
from tierpilot.catalog.models import Bucket, Object
from tierpilot.kit.settings import get_settings
from tierpilot.tiers.models import Tier

router = APIRouter(tags=["overview"])


class TierUsage(BaseModel):
    id: int
    name: str
    driver: str
    offline: bool
    storage_classes: list[str]
    capacity_bytes: int | None
    used_bytes: int
    object_count: int


class BucketUsage(BaseModel):
    name: str
    owner: str
    tier: str
    object_count: int
    used_bytes: int


class Totals(BaseModel):
    buckets: int
    objects: int
    bytes: int


class OverviewOut(BaseModel):
    tiers: list[TierUsage]
    buckets: list[BucketUsage]
    totals: Totals
    gateway_url: str


def overview(session: Session, user: User) -> OverviewOut:
    """Usage per tier (everyone's, tiers are shared) and per bucket (own buckets unless admin)."""
    per_tier = dict(
        (tid, (int(b or 0), int(n)))
        for tid, b, n in session.execute(
            select(Object.tier_id, func.sum(Object.size), func.count(Object.id)).group_by(Object.tier_id)
        )
    )
    tiers = [
        TierUsage(id=t.id, name=t.name, driver=t.driver, offline=t.offline, storage_classes=list(t.storage_classes),
                  capacity_bytes=t.capacity_bytes, used_bytes=per_tier.get(t.id, (0, 0))[0],
                  object_count=per_tier.get(t.id, (0, 0))[1])
        for t in session.scalars(select(Tier).order_by(Tier.id))
    ]
    usage = (
        select(Object.bucket_id, func.sum(Object.size).label("b"), func.count(Object.id).label("n"))
        .group_by(Object.bucket_id)
        .subquery()
    )
    q = (
        select(Bucket.name, User.username, Tier.name, usage.c.n, usage.c.b)
        .join(User, User.id == Bucket.owner_id)
        .join(Tier, Tier.id == Bucket.tier_id)
        .outerjoin(usage, usage.c.bucket_id == Bucket.id)
        .order_by(Bucket.name)
    )
    if not user.is_admin:
        q = q.where(Bucket.owner_id == user.id)
    buckets = [
        BucketUsage(name=name, owner=owner, tier=tier, object_count=int(n or 0), used_bytes=int(b or 0))
        for name, owner, tier, n, b in session.execute(q)
    ]
    totals = Totals(buckets=len(buckets), objects=sum(b.object_count for b in buckets),
                    bytes=sum(b.used_bytes for b in buckets))
    return OverviewOut(tiers=tiers, buckets=buckets, totals=totals, gateway_url=get_settings().gateway_url)


@router.get("/overview", response_model=OverviewOut)
def get_overview(session: SessionDep, user: CurrentUser) -> OverviewOut:
    return overview(session, user)
