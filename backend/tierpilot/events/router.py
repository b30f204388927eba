"""``/api/events``: targets and dead letters (admins), a bucket's configuration and recent deliveries (its owner)."""

from __future__ import annotations

from fastapi import APIRouter, Query

from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep
from tierpilot.catalog import service as catalog_service
from tierpilot.events import delivery, names, repository, service
from tierpilot.events.models import EventTarget
from tierpilot.events.outbox import directory
from tierpilot.events.schemas import (
    ConfigurationOut,
    DeadLetterOut,
    DeliveryOut,
    MetricsOut,
    ReplayIn,
    ReplayOut,
    TargetCreated,
    TargetIn,
    TargetOut,
    TestOut,
)

router = APIRouter(prefix="/events", tags=["events"])


def _out(target: EventTarget) -> TargetOut:
    out = TargetOut.model_validate(target)
    out.arn = names.arn(target.name, target.type)
    return out


@router.get("/targets", response_model=list[TargetOut])
def list_targets(session: SessionDep, admin: AdminUser) -> list[TargetOut]:
    return [_out(t) for t in service.list_targets(session)]


@router.post("/targets", response_model=TargetCreated, status_code=201)
def add_target(body: TargetIn, session: SessionDep, admin: AdminUser) -> TargetCreated:
    new = service.add_target(session, body.name, body.type, body.url, body.topic, dict(body.options))
    return TargetCreated(target=_out(new.target), arn=new.arn, secret=new.secret)


@router.delete("/targets/{target_name}", status_code=204)
def delete_target(target_name: str, session: SessionDep, admin: AdminUser) -> None:
    service.delete_target(session, target_name)
    directory.forget()


@router.post("/targets/{target_name}/test", response_model=TestOut)
def test_target(target_name: str, session: SessionDep, admin: AdminUser) -> TestOut:
    """Send S3's s3:TestEvent to the target now and say whether it took it."""
    target = service.get_target(session, target_name)
    session.expunge(target)
    error = delivery.send_test(target)
    return TestOut(ok=error is None, error=error)


@router.get("/metrics", response_model=MetricsOut)
def outbox_metrics(session: SessionDep, admin: AdminUser) -> MetricsOut:
    m = delivery.metrics(session)
    return MetricsOut(queued=m.queued, retrying=m.retrying, dead_letters=m.dead_letters, oldest_age_s=m.oldest_age_s)


@router.get("/deadletters", response_model=list[DeadLetterOut])
def dead_letters(session: SessionDep, admin: AdminUser, limit: int = Query(200, ge=1, le=1000)
                 ) -> list[DeadLetterOut]:
    return [DeadLetterOut.model_validate(d) for d in repository.list_dead_letters(session, limit)]


@router.post("/deadletters/replay", response_model=ReplayOut)
def replay(body: ReplayIn, session: SessionDep, admin: AdminUser) -> ReplayOut:
    return ReplayOut(replayed=service.replay_dead_letters(session, body.ids))


@router.get("/buckets/{bucket}/configuration", response_model=ConfigurationOut)
def bucket_configuration(bucket: str, session: SessionDep, user: CurrentUser) -> ConfigurationOut:
    row = catalog_service.owned_bucket(session, bucket, user, "reading its event rules")
    return ConfigurationOut(entries=service.get_config(session, row))


@router.get("/buckets/{bucket}/deliveries", response_model=list[DeliveryOut])
def bucket_deliveries(bucket: str, session: SessionDep, user: CurrentUser, limit: int = Query(50, ge=1, le=500)
                      ) -> list[DeliveryOut]:
    row = catalog_service.owned_bucket(session, bucket, user, "reading its event deliveries")
    return [DeliveryOut.model_validate(d) for d in repository.recent_deliveries(session, row.id, limit)]
