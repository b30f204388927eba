"""/api/tiers/{id}/adopt: admins adopt a bucket that lives on a tier's endpoint and follow its scans."""

from __future__ import annotations

from fastapi import APIRouter, Request, status

from tierpilot.adoption import service as adopt
from tierpilot.adoption.schemas import AdoptIn, AdoptionOut
from tierpilot.audit import service as audit
from tierpilot.auth import repository as auth_repository
from tierpilot.auth.deps import AdminUser, SessionDep, client_of
from tierpilot.kit.inputs import RowId
from tierpilot.tiers import service

router = APIRouter(prefix="/tiers", tags=["tiers"])


@router.post("/{tier_id}/adopt", response_model=AdoptionOut, status_code=status.HTTP_202_ACCEPTED)
def start_adoption(tier_id: RowId, body: AdoptIn, request: Request, session: SessionDep,
                   admin: AdminUser) -> AdoptionOut:
    """Adopt a bucket that lives on the tier's endpoint: a worker lists it into the catalog (no byte copied)."""
    tier = service.get(session, tier_id)
    owner = auth_repository.get_user_by_name(session, body.owner) if body.owner else admin
    if owner is None:
        raise adopt.AdoptionError(f"no user {body.owner!r}", field="owner")
    job = adopt.start(session, tier_id, body.bucket, into=body.into, owner_id=owner.id)
    audit.record(session, "tier.adopted", audit.Actor(admin.id, admin.username, client_of(request)),
                 f"tier:{tier.name}", tier_id=tier_id, remote_bucket=body.bucket, bucket=job.bucket, job=job.id)
    return job


@router.get("/{tier_id}/adopt", response_model=list[AdoptionOut])
def list_adoptions(tier_id: RowId, session: SessionDep, admin: AdminUser) -> list[AdoptionOut]:
    """The tier's adopted buckets with the progress of their last or running scan."""
    service.get(session, tier_id)
    return adopt.of_tier(session, tier_id)


@router.get("/{tier_id}/adopt/{job_id}", response_model=AdoptionOut)
def get_adoption(tier_id: RowId, job_id: RowId, session: SessionDep, admin: AdminUser) -> AdoptionOut:
    """Progress of an adoption: objects listed, inserted, removed, and its state."""
    return adopt.find(session, tier_id, job_id)
