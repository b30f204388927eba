from __future__ import annotations

from fastapi import APIRouter

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.overview import service
from tierpilot.overview.schemas import OverviewOut

router = APIRouter(tags=["overview"])


@router.get("/overview", response_model=OverviewOut)
def get_overview(session: SessionDep, user: CurrentUser) -> OverviewOut:
    """Usage per tier and per visible bucket (own, projects', shared; all for an admin), totals, gateway address."""
    return service.overview(session, user)
