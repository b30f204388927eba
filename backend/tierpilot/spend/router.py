"""Actual spend: GET /api/spend (JSON) and /api/spend.csv; owners see their own buckets, admins all. A bucket's
planned monthly usage (the plan beside the actual): GET/PUT/DELETE /api/spend/plans/{bucket}, owner or admin."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from tierpilot.audit.service import Actor
from tierpilot.auth.deps import CurrentUser, SessionDep, client_of
from tierpilot.spend import service
from tierpilot.spend.schemas import SpendOut, SpendPlanIn, SpendPlanOut

router = APIRouter(tags=["spend"])

Month = Annotated[str, Query(max_length=7, description="YYYY-MM")]
Share = Annotated[Decimal, Query(ge=0, le=100, allow_inf_nan=False,
                                 description="share of the plan beyond which a bucket diverges")]


@router.get("/spend", response_model=SpendOut)
def spend(session: SessionDep, user: CurrentUser, month: Month, group_by: str = "tier",
          divergence: Share = Decimal("0.2")) -> dict[str, Any]:
    """The month's cost so far by tier, bucket or user, its forecast, past months and the plan beside it."""
    return service.spend(session, user, month, group_by, divergence)


@router.get("/spend.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def spend_csv(session: SessionDep, user: CurrentUser, month: Month, group_by: str = "tier") -> Response:
    report = service.spend(session, user, month, group_by)
    return Response(service.spend_csv(report), media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": f'attachment; filename="tierpilot-spend-{report["month"]}.csv"'})


@router.get("/spend/plans/{bucket}", response_model=SpendPlanOut)
def get_plan(bucket: str, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """The bucket's planned monthly usage (404 when none is saved: it plans storage only)."""
    return service.get_plan(session, user, bucket)


@router.put("/spend/plans/{bucket}", response_model=SpendPlanOut)
def put_plan(bucket: str, body: SpendPlanIn, request: Request, session: SessionDep,
             user: CurrentUser) -> dict[str, Any]:
    """Save what the bucket is planned to do each month: reads, requests by class, restores at a speed."""
    return service.set_plan(session, user, bucket, body, Actor(user.id, user.username, client_of(request)))


@router.delete("/spend/plans/{bucket}", status_code=204)
def delete_plan(bucket: str, request: Request, session: SessionDep, user: CurrentUser) -> Response:
    """Forget the bucket's planned usage: it plans storage only again."""
    service.delete_plan(session, user, bucket, Actor(user.id, user.username, client_of(request)))
    return Response(status_code=204)
