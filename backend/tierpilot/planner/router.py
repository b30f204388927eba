"""Cost planner API on this installation: evaluation and CSV reports (with `tier:NAME` candidates), the
installation's tiers as candidates, scenarios from your data, and a scenario's month as a bucket's planned usage.
Under /pricing, beside the catalogs and saved scenarios of `pricing.router`."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.kit.inputs import RowId
from tierpilot.planner import service
from tierpilot.planner.schemas import PlanUsageOut
from tierpilot.pricing import service as pricing
from tierpilot.pricing.schemas import FromMyDataOut, InstallationTierOut, ReportOut, Scenario

router = APIRouter(prefix="/pricing", tags=["pricing"])


def _csv(text: str, name: str) -> Response:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "report"
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": f'attachment; filename="{safe}.csv"'})


@router.get("/installation-tiers", response_model=list[InstallationTierOut])
def installation_tiers(session: SessionDep, user: CurrentUser) -> list[InstallationTierOut]:
    """This installation's tiers as candidates (`tier:NAME`), with the class behind each or why it has none."""
    return service.installation_tiers(session)


@router.post("/evaluate", response_model=ReportOut)
def evaluate(body: Scenario, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """Costs per tier, break-even frequencies, cheapest bands, sweep, lifecycle and hybrid plans."""
    return service.evaluate(session, body)


@router.post("/plan-usage", response_model=PlanUsageOut)
def plan_usage(body: Scenario, session: SessionDep, user: CurrentUser) -> PlanUsageOut:
    """The scenario's month as a bucket's planned usage (reads, requests, restores), to save with
    PUT /api/spend/plans/{bucket}; nothing is saved here."""
    return service.plan_usage(session, body)


@router.post("/report.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def report_csv(body: Scenario, session: SessionDep, user: CurrentUser) -> Response:
    return _csv(service.evaluate_csv(session, body), "tierpilot-cost-report")


@router.get("/from-my-data", response_model=FromMyDataOut)
def from_my_data(session: SessionDep, user: CurrentUser, catalog: str = "aws-us-east-1",
                 bucket: Annotated[list[str] | None, Query()] = None) -> dict[str, Any]:
    """A scenario prefilled from your buckets: volume, object sizes, and reads by age."""
    return service.from_my_data(session, user, bucket, catalog)


@router.get("/scenarios/{scenario_id}/report", response_model=ReportOut)
def scenario_report(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    row = pricing.get_scenario(session, user, scenario_id)
    return service.evaluate(session, pricing.parse_scenario(row.body))


@router.get("/scenarios/{scenario_id}/report.csv", response_class=Response,
            responses={200: {"content": {"text/csv": {}}}})
def scenario_report_csv(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> Response:
    row = pricing.get_scenario(session, user, scenario_id)
    return _csv(service.evaluate_csv(session, pricing.parse_scenario(row.body)), row.name)


@router.get("/shared/{token}/report.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def shared_report_csv(token: str, session: SessionDep, user: CurrentUser) -> Response:
    row = pricing.get_shared(session, token)
    return _csv(service.evaluate_csv(session, pricing.parse_scenario(row.body)), row.name)
