"""Restore batches: preview, create, the queue (live via ETag polling), detail, retry, speed-up, exports."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import StreamingResponse

from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep
from tierpilot.auth.models import User
from tierpilot.kit.errors import Forbidden
from tierpilot.kit.inputs import RowId
from tierpilot.restores import exports, service
from tierpilot.restores.schemas import (
    RestoreBatchCreate,
    RestoreBatchDetailOut,
    RestoreBatchListOut,
    RestoreBatchOut,
    RestoreItemOut,
    RestoreItemPageOut,
    RestorePreviewIn,
    RestorePreviewOut,
    RestoreQueueOut,
    RestoreRetryOut,
    RestoreScheduleIn,
    RestoreScheduleOut,
    RestoreSpeedIn,
    RestoreSummaryOut,
    RestoreTimelinePoint,
)

router = APIRouter(prefix="/restores", tags=["restores"])

Scope = Literal["mine", "everyone"]
State = Literal["in_progress", "ready", "failed", "expired"]
ItemState = Literal["pending", "ongoing", "ready", "failed", "expired"]


def _everyone(user: User, scope: Scope) -> bool:
    if scope == "everyone" and not user.is_admin:
        raise Forbidden("only admins see everyone's restores")
    return scope == "everyone"


@router.post("/preview", response_model=RestorePreviewOut)
def preview(body: RestorePreviewIn, session: SessionDep, user: CurrentUser) -> RestorePreviewOut:
    """Objects, bytes, and per speed the expected ready time and cost of restoring a selection."""
    return RestorePreviewOut.of(service.preview(session, user, body.selection(), body.days))


@router.post("/batches", response_model=RestoreBatchOut, status_code=status.HTTP_201_CREATED)
def create_batch(body: RestoreBatchCreate, session: SessionDep, user: CurrentUser) -> RestoreBatchOut:
    """Create a batch and issue all its restore requests at once (the worker submits them)."""
    batch = service.create_batch(session, user, body.selection(), body.speed, body.days, body.name)
    return RestoreBatchOut.of(service.get_batch(session, user, batch.id))


def _summary(session: SessionDep, user: User, everyone: bool) -> dict[str, Any]:
    s = service.summary(session, user, everyone)
    return {"scope": "everyone" if everyone else "mine", "batches_by_state": s.batches_by_state, "tiers": s.tiers,
            "oldest_in_progress": RestoreBatchOut.data(s.oldest_in_progress) if s.oldest_in_progress else None,
            "single_restores_active": s.loose_active, "single_restores_oldest": s.loose_oldest}


def _page(session: SessionDep, user: User, everyone: bool, state: str | None, limit: int,
          before_id: int | None) -> dict[str, Any]:
    views = service.list_batches(session, user, everyone, state, limit, before_id)
    return {"items": [RestoreBatchOut.data(v) for v in views],
            "next_before_id": views[-1].batch.id if len(views) == limit else None}


@router.get("/queue", response_model=RestoreQueueOut, responses={304: {"description": "unchanged since the ETag"}})
def queue(request: Request, session: SessionDep, user: CurrentUser, scope: Scope = "mine",
          limit: int = Query(100, ge=1, le=500)) -> Response:
    """The Restores page's data: summary and newest batches. Poll it with If-None-Match: 304 while nothing moved."""
    everyone = _everyone(user, scope)
    etag = service.queue_etag(session, user, everyone, f"-{limit}")
    headers = {"etag": etag, "cache-control": "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    body = RestoreQueueOut.model_validate({"summary": _summary(session, user, everyone),
                                    "batches": _page(session, user, everyone, None, limit, None)})
    # serialised once here: the page is polled every few seconds by every open dashboard
    return Response(body.model_dump_json(), media_type="application/json", headers=headers)


@router.get("/batches", response_model=RestoreBatchListOut)
def list_batches(session: SessionDep, user: CurrentUser, scope: Scope = "mine", state: State | None = None,
                 limit: int = Query(100, ge=1, le=500), before_id: RowId | None = None) -> RestoreBatchListOut:
    return RestoreBatchListOut.model_validate(_page(session, user, _everyone(user, scope), state, limit, before_id))


@router.get("/summary", response_model=RestoreSummaryOut)
def summary(session: SessionDep, user: CurrentUser, scope: Scope = "mine") -> RestoreSummaryOut:
    """Counts by batch state and by tier, the oldest running batch (admins: of everyone)."""
    return RestoreSummaryOut.model_validate(_summary(session, user, _everyone(user, scope)))


@router.get("/batches/{batch_id}", response_model=RestoreBatchDetailOut)
def get_batch(batch_id: RowId, session: SessionDep, user: CurrentUser) -> RestoreBatchDetailOut:
    view = service.get_batch(session, user, batch_id)
    items = service.list_items(session, user, batch_id, None, None, 100)
    timeline = [RestoreTimelinePoint(at=at, ready=n) for at, n in service.timeline(session, view.batch)]
    return RestoreBatchDetailOut(batch=RestoreBatchOut.of(view), timeline=timeline,
                                 items=[RestoreItemOut.of(i) for i in items])


@router.get("/batches/{batch_id}/items", response_model=RestoreItemPageOut)
def list_items(batch_id: RowId, session: SessionDep, user: CurrentUser, state: ItemState | None = None,
               after_id: int | None = None, limit: int = Query(100, ge=1, le=1000)) -> RestoreItemPageOut:
    items = service.list_items(session, user, batch_id, state, after_id, limit)
    return RestoreItemPageOut(items=[RestoreItemOut.of(i) for i in items],
                       next_after_id=items[-1].id if len(items) == limit else None)


@router.post("/batches/{batch_id}/retry", response_model=RestoreRetryOut)
def retry(batch_id: RowId, session: SessionDep, user: CurrentUser) -> RestoreRetryOut:
    """Ask again for every failed or stuck object of the batch."""
    count = service.retry_failed(session, user, batch_id)
    return RestoreRetryOut(retried=count, batch=RestoreBatchOut.of(service.get_batch(session, user, batch_id)))


@router.post("/batches/{batch_id}/speed", response_model=RestoreBatchOut)
def upgrade_speed(batch_id: RowId, body: RestoreSpeedIn, session: SessionDep, user: CurrentUser) -> RestoreBatchOut:
    """Raise a running batch's speed (never lower it)."""
    service.upgrade_speed(session, user, batch_id, body.speed)
    return RestoreBatchOut.of(service.get_batch(session, user, batch_id))


@router.get("/batches/{batch_id}/export.csv", response_class=StreamingResponse)
def export_csv(batch_id: RowId, session: SessionDep, user: CurrentUser) -> StreamingResponse:
    """bucket,key,size,state,expires_at of every object of the batch."""
    return StreamingResponse(exports.export_csv(session, user, batch_id),
                             media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": f'attachment; filename="restore-{batch_id}.csv"'})


@router.get("/batches/{batch_id}/commands.sh", response_class=StreamingResponse)
def export_commands(batch_id: RowId, session: SessionDep, user: CurrentUser,
                    tool: Literal["aws", "tierpilot"] = "tierpilot",
                    dest: str = Query(".", max_length=1024)) -> StreamingResponse:
    """A ready-to-run shell script downloading every readable object (aws s3 cp or tierpilot cp)."""
    return StreamingResponse(exports.export_commands(session, user, batch_id, tool, dest),
                             media_type="text/x-shellscript; charset=utf-8",
                             headers={"content-disposition": f'attachment; filename="restore-{batch_id}-{tool}.sh"'})


@router.get("/schedules/{tier_id}", response_model=RestoreScheduleOut)
def get_schedule(tier_id: RowId, session: SessionDep, user: CurrentUser) -> RestoreScheduleOut:
    """The tier's poll schedule per speed (its own, or the defaults)."""
    tier, schedules, custom = service.tier_schedule(session, tier_id)
    return RestoreScheduleOut(tier_id=tier.id, tier=tier.name, custom=custom,
                       speeds={speed: s.to_json() for speed, s in schedules.items()})


@router.put("/schedules/{tier_id}", response_model=RestoreScheduleOut)
def set_schedule(tier_id: RowId, body: RestoreScheduleIn, session: SessionDep, admin: AdminUser) -> RestoreScheduleOut:
    """Set the tier's poll schedule for some speeds (others keep the defaults); null resets."""
    service.set_tier_schedule(session, tier_id, body.speeds)
    return get_schedule(tier_id, session, admin)
