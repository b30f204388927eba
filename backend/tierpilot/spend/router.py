"""Actual spend: GET /api/spend (JSON) and /api/spend.csv; owners see their own buckets, admins all."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.spend import service
from tierpilot.spend.schemas import SpendOut

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
