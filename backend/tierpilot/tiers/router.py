"""/api/tiers: everyone signed in lists tiers (names, classes, usage); admins see where they live and manage them."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from tierpilot.audit import service as audit
from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep, client_of
from tierpilot.kit.inputs import RowId
from tierpilot.tiers import service
from tierpilot.tiers.schemas import TierCheck, TierCheckOut, TierCreate, TierHealthOut, TierOut, TierUpdate

router = APIRouter(prefix="/tiers", tags=["tiers"])


def _out(usage: service.TierUsage, admin: bool) -> TierOut:
    tier = usage.tier
    return TierOut(
        id=tier.id, name=tier.name, driver=tier.driver, location=service.location(tier) if admin else None,
        config=service.public_config(tier) if admin else None, has_secret=service.has_secret(tier),
        storage_classes=list(tier.storage_classes), offline=tier.offline,
        restore_delays=dict(tier.restore_delays or {}), price_ref=dict(tier.price_ref or {}),
        capacity_bytes=tier.capacity_bytes, min_storage_days=tier.min_storage_days,
        created_at=tier.created_at, used_bytes=usage.used_bytes, object_count=usage.object_count,
        bucket_count=usage.bucket_count,
    )


@router.get("", response_model=list[TierOut])
def list_tiers(session: SessionDep, user: CurrentUser) -> list[TierOut]:
    return [_out(u, user.is_admin) for u in service.list_with_usage(session)]


@router.get("/health", response_model=list[TierHealthOut])
def tiers_health(session: SessionDep, admin: AdminUser) -> list[TierHealthOut]:
    """Whether each tier answers: probed at once with a deadline (off the event loop: a sync handler runs in the
    thread pool), answers reused for a few seconds."""
    return [TierHealthOut(tier_id=c.tier_id, name=c.health.name, kind=c.kind, ok=c.health.ok,
                          detail=c.health.message, latency_ms=round(c.health.seconds * 1000, 1),
                          checked_at=c.checked_at)
            for c in service.checked_health(session)]


@router.get("/{tier_id}", response_model=TierOut)
def get_tier(tier_id: RowId, session: SessionDep, user: CurrentUser) -> TierOut:
    return _out(service.get_with_usage(session, tier_id), user.is_admin)


@router.post("", response_model=TierOut, status_code=status.HTTP_201_CREATED)
def create_tier(body: TierCreate, request: Request, session: SessionDep, admin: AdminUser) -> TierOut:
    tier = service.create(session, body)
    audit.record(session, "tier.created", audit.Actor(admin.id, admin.username, client_of(request)),
                 f"tier:{tier.name}", tier_id=tier.id, driver=tier.driver)
    return _out(service.TierUsage(tier, 0, 0, 0), admin=True)


@router.post("/check", response_model=TierCheckOut)
def check_tier(body: TierCheck, session: SessionDep, admin: AdminUser) -> TierCheckOut:
    """Connection test of the tier form: the settings reach their location with their credentials."""
    return service.check(session, body)


@router.patch("/{tier_id}", response_model=TierOut)
def update_tier(tier_id: RowId, body: TierUpdate, request: Request, session: SessionDep,
                admin: AdminUser) -> TierOut:
    tier = service.update(session, tier_id, body)
    # which fields changed, never their values: a tier's config may hold credentials
    audit.record(session, "tier.updated", audit.Actor(admin.id, admin.username, client_of(request)),
                 f"tier:{tier.name}", tier_id=tier_id, fields=sorted(body.model_fields_set))
    return _out(service.get_with_usage(session, tier_id), admin=True)


@router.delete("/{tier_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_tier(tier_id: RowId, request: Request, session: SessionDep, admin: AdminUser) -> None:
    name = service.get(session, tier_id).name
    service.delete(session, tier_id)
    audit.record(session, "tier.deleted", audit.Actor(admin.id, admin.username, client_of(request)),
                 f"tier:{name}", tier_id=tier_id)
