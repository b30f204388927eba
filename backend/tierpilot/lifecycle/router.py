"""The lifecycle API: rules per bucket (the same stored configuration the gateway serves as S3 XML),
preview, dry run, move history, retries and metering."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from sqlalchemy.orm import Session

from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep
from tierpilot.auth.models import User
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import Conflict, NotFound
from tierpilot.kit.inputs import RowId
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle import history, preview, repository, service, sweep_clock
from tierpilot.lifecycle.rules import LifecycleConfig, LifecycleRule
from tierpilot.lifecycle.schemas import (
    BucketLifecycle,
    LifecycleConfigurationOut,
    LifecycleDryRunIn,
    LifecycleDryRunOut,
    LifecycleMeterOut,
    MoveRetryOut,
    MovesOut,
    PreviewOut,
    SweepQueued,
    SweepSchedule,
)
from tierpilot.tiers import repository as tiers_repository

router = APIRouter(prefix="/lifecycle", tags=["lifecycle"])


def _actor(user: User) -> str:
    return f"api:{user.username}"


def _bucket(session: Session, user: User, name: str) -> Bucket:
    """A bucket whose lifecycle the caller owns (or administers): 403 for a grantee, 404 for anyone else."""
    return catalog_service.owned_bucket(session, name, user, "its lifecycle")


def _visible(session: Session, user: User) -> dict[int, str]:
    return {b.id: b.name for b in catalog_service.list_buckets(session, user.id, user.is_admin)}


def _config_out(session: Session, bucket: Bucket) -> LifecycleConfigurationOut:
    row = repository.get_configuration(session, bucket.id)
    if row is None:
        return LifecycleConfigurationOut(bucket=bucket.name, configured=False, rules=[],
                                transition_default_minimum_object_size="all_storage_classes_128K")
    config = service.load(row)
    return LifecycleConfigurationOut(bucket=bucket.name, configured=True, rules=config.rules,
                            transition_default_minimum_object_size=config.transition_default_minimum_object_size,
                            updated_at=row.updated_at, updated_by=row.updated_by)


@router.get("/buckets", response_model=list[BucketLifecycle])
def list_buckets(session: SessionDep, user: CurrentUser) -> list[BucketLifecycle]:
    """The caller's buckets (all, for admins) with how many rules each has."""
    tiers = tiers_repository.tier_names(session)
    out = []
    for bucket in catalog_service.list_buckets(session, user.id, user.is_admin):
        row = repository.get_configuration(session, bucket.id)
        try:
            rules = service.load(row).rules if row is not None else []
        except service.StoredConfigurationInvalid:
            # listed (as having no usable rule) so its owner finds it and replaces it
            rules = []
        out.append(BucketLifecycle(bucket=bucket.name, tier=tiers.get(bucket.tier_id, ""), rules=len(rules),
                                   enabled_rules=sum(r.enabled for r in rules), objects=bucket.object_count,
                                   bytes=bucket.used_bytes, updated_at=row.updated_at if row else None,
                                   updated_by=row.updated_by if row else ""))
    return out


@router.get("/buckets/{bucket}/configuration", response_model=LifecycleConfigurationOut)
def get_configuration(bucket: str, session: SessionDep, user: CurrentUser) -> LifecycleConfigurationOut:
    return _config_out(session, _bucket(session, user, bucket))


@router.put("/buckets/{bucket}/configuration", response_model=LifecycleConfigurationOut)
def put_configuration(bucket: str, body: LifecycleConfig, session: SessionDep, user: CurrentUser
                      ) -> LifecycleConfigurationOut:
    """Replace the bucket's rules (as S3's PutBucketLifecycleConfiguration)."""
    b = _bucket(session, user, bucket)
    service.put_config(session, b, body, _actor(user))
    return _config_out(session, b)


@router.delete("/buckets/{bucket}/configuration", status_code=204)
def delete_configuration(bucket: str, session: SessionDep, user: CurrentUser) -> Response:
    service.delete_config(session, _bucket(session, user, bucket))
    return Response(status_code=204)


@router.post("/buckets/{bucket}/rules", response_model=LifecycleConfigurationOut, status_code=201)
def add_rule(bucket: str, rule: LifecycleRule, session: SessionDep, user: CurrentUser) -> LifecycleConfigurationOut:
    b = _bucket(session, user, bucket)
    current = service.get_config(session, b)
    if rule.id and current is not None and current.rule(rule.id) is not None:
        raise Conflict(f"bucket {bucket!r} has a rule {rule.id!r} already")
    service.put_rule(session, b, rule, _actor(user))
    return _config_out(session, b)


@router.put("/buckets/{bucket}/rules/{rule_id}", response_model=LifecycleConfigurationOut)
def replace_rule(bucket: str, rule_id: str, rule: LifecycleRule, session: SessionDep, user: CurrentUser
                 ) -> LifecycleConfigurationOut:
    b = _bucket(session, user, bucket)
    service.put_rule(session, b, rule, _actor(user), replace_id=rule_id)
    return _config_out(session, b)


@router.delete("/buckets/{bucket}/rules/{rule_id}", response_model=LifecycleConfigurationOut)
def delete_rule(bucket: str, rule_id: str, session: SessionDep, user: CurrentUser) -> LifecycleConfigurationOut:
    b = _bucket(session, user, bucket)
    service.delete_rule(session, b, rule_id, _actor(user))
    return _config_out(session, b)


@router.get("/preview", response_model=PreviewOut)
def get_preview(session: SessionDep, user: CurrentUser,
                bucket: Annotated[str | None, Query(description="one bucket; omitted = every visible bucket")] = None,
                days: Annotated[int, Query(ge=1, le=365)] = 90) -> dict[str, Any]:
    """Bytes and objects that move or expire per day and target tier, and storage cost per month before/after."""
    if bucket is not None:
        b = _bucket(session, user, bucket)
        config = service.get_config(session, b)
        return preview.build(session, [(b, config)] if config else [], [b.id], utcnow(), days)
    visible = _visible(session, user)
    configured = service.usable_configurations(session, visible)
    return preview.build(session, configured, None if user.is_admin else list(visible), utcnow(), days)


@router.post("/buckets/{bucket}/dry-run", response_model=LifecycleDryRunOut)
def dry_run(bucket: str, body: LifecycleDryRunIn, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """What the bucket's rules would do with this edit (a rule added or replaced, or a whole configuration).

    Nothing is saved; an edit the bucket would refuse answers 422 with the reason.
    """
    b = _bucket(session, user, bucket)
    if body.configuration is not None:
        candidate = body.configuration
    else:
        current = service.get_config(session, b) or LifecycleConfig()
        rules = list(current.rules)
        if body.rule is None:
            raise NotFound("give a rule or a configuration to try")
        if body.replace_id is not None:
            rules = [body.rule if r.id == body.replace_id else r for r in rules]
            if all(r.id != body.replace_id for r in current.rules):
                raise NotFound(f"bucket {bucket!r} has no lifecycle rule {body.replace_id!r}")
        else:
            rules.append(body.rule)
        candidate = current.model_copy(update={"rules": rules})
    checked = service.check(session, b, candidate)
    return {"configuration": checked, "preview": preview.build(session, [(b, checked)], [b.id], utcnow(), body.days)}


@router.get("/moves", response_model=MovesOut)
def list_moves(session: SessionDep, user: CurrentUser,
               bucket: str | None = None,
               state: Annotated[list[str] | None, Query()] = None,
               before_id: RowId | None = None,
               limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict[str, Any]:
    """Executed and queued moves, newest first: counts, bytes, duration, errors, attempts."""
    buckets = _visible(session, user)
    if bucket is not None:
        b = _bucket(session, user, bucket)
        buckets = {b.id: b.name}
    return history.list_moves(session, buckets, state or [], before_id, limit)


@router.post("/moves/{move_id}/retry", response_model=MoveRetryOut)
def retry_move(move_id: RowId, session: SessionDep, user: CurrentUser) -> MoveRetryOut:
    """Run a failed move again now (the workers get it once this request commits)."""
    return MoveRetryOut(retried=len(history.retry(session, _visible(session, user), move_id)))


@router.post("/moves/retry-failed", response_model=MoveRetryOut)
def retry_failed(session: SessionDep, user: CurrentUser, bucket: str | None = None) -> MoveRetryOut:
    buckets = _visible(session, user)
    if bucket is not None:
        b = _bucket(session, user, bucket)
        buckets = {b.id: b.name}
    return MoveRetryOut(retried=len(history.retry(session, buckets)))


@router.get("/meter", response_model=LifecycleMeterOut)
def get_meter(session: SessionDep, user: AdminUser,
              days: Annotated[int | None, Query(ge=1, le=3650)] = None) -> dict[str, Any]:
    """Metered moves per action and tier pair (all buckets; admins)."""
    return history.meter(session, days)


@router.get("/sweep", response_model=SweepSchedule)
def sweep_schedule(user: CurrentUser) -> SweepSchedule:
    """How often the workers sweep on their own (a rule's moves wait at most this long past due), when
    beat's last sweep started and when the next one is due."""
    period = get_settings().lifecycle_sweep_s
    last = sweep_clock.last_start()
    return SweepSchedule(period_s=period, last_run_at=last,
                         next_run_at=last + timedelta(seconds=period) if last is not None else None)


@router.post("/sweep", response_model=SweepQueued, status_code=202)
def sweep_now(session: SessionDep, user: AdminUser, bucket: str | None = None) -> SweepQueued:
    """Ask the workers for a sweep now instead of at the next beat (admins)."""
    from tierpilot.kit.jobs import enqueue

    bucket_id = _bucket(session, user, bucket).id if bucket else None
    return SweepQueued(task_id=enqueue("lifecycle.sweep", kwargs={"bucket_id": bucket_id, "scheduled": False}))
