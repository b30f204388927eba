"""Cost planner API under /pricing: price catalogs, saved and shared scenarios, evaluation and CSV reports (with
`tier:NAME` candidates priced by the installation's tiers), scenarios from your data, and a scenario's month as a
bucket's planned usage."""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Response, UploadFile, status

from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep
from tierpilot.kit.errors import Invalid
from tierpilot.kit.inputs import RowId
from tierpilot.planner import installation, service
from tierpilot.planner.schemas import PlanUsageOut
from tierpilot.pricing.catalogs import parse_catalog
from tierpilot.pricing.schemas import (
    Catalog,
    CatalogSummary,
    FromMyDataOut,
    ImportFormat,
    InstallationTierOut,
    ReportOut,
    Scenario,
    ScenarioCreate,
    ScenarioOut,
    ScenarioUpdate,
    ShareOut,
)

router = APIRouter(prefix="/pricing", tags=["pricing"])

MAX_CATALOG_UPLOAD = 1 << 20
MAX_PRICE_LIST_UPLOAD = 64 << 20


# ---------------------------------------------------------------------------- catalogs


@router.get("/catalogs", response_model=list[CatalogSummary])
def list_catalogs(session: SessionDep, user: CurrentUser) -> list[CatalogSummary]:
    return service.list_catalogs(session)


@router.get("/catalogs/{catalog_id}", response_model=Catalog)
def get_catalog(catalog_id: str, session: SessionDep, user: CurrentUser) -> Catalog:
    """One catalog; an id without its date (`aws-us-east-1`) gives the newest."""
    return service.get_catalog(session, catalog_id)


@router.post("/catalogs", response_model=CatalogSummary, status_code=status.HTTP_201_CREATED)
def add_catalog(body: Catalog, session: SessionDep, admin: AdminUser) -> CatalogSummary:
    return service.add_catalog(session, admin, body)


@router.post("/catalogs/upload", response_model=CatalogSummary, status_code=status.HTTP_201_CREATED)
def upload_catalog(session: SessionDep, admin: AdminUser,
                   file: Annotated[UploadFile, File(description="a catalog as YAML or JSON")]) -> CatalogSummary:
    data = file.file.read(MAX_CATALOG_UPLOAD + 1)
    if len(data) > MAX_CATALOG_UPLOAD:
        raise Invalid("a catalog file may be at most 1 MiB")
    return service.add_catalog(session, admin, parse_catalog(data))


@router.post("/catalogs/import", response_model=Catalog, status_code=status.HTTP_201_CREATED)
def import_catalog(
    session: SessionDep, admin: AdminUser,
    files: Annotated[list[UploadFile], File(description="AWS Price List offer files or Azure Retail Prices pages")],
    format: Annotated[ImportFormat, Form()],  # noqa: A002
    region: Annotated[str | None, Form()] = None,
    catalog_id: Annotated[str | None, Form()] = None,
    valid_from: Annotated[date | None, Form()] = None,
    dry_run: Annotated[bool, Form(description="only convert and validate; store nothing")] = False,
) -> Catalog:
    """Convert a provider's machine-readable price list into a catalog (and store it unless dry_run)."""
    docs = []
    for f in files:
        data = f.file.read(MAX_PRICE_LIST_UPLOAD + 1)
        if len(data) > MAX_PRICE_LIST_UPLOAD:
            raise Invalid(f"{f.filename}: a price list file may be at most 64 MiB")
        try:
            docs.append(json.loads(data))
        except ValueError as exc:
            raise Invalid(f"{f.filename} is not JSON: {exc}") from exc
    catalog = service.import_catalog(format, docs, region=region or None, catalog_id=catalog_id or None,
                                     valid_from=valid_from)
    if not dry_run:
        service.add_catalog(session, admin, catalog)
    return catalog


@router.delete("/catalogs/{catalog_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_catalog(catalog_id: str, session: SessionDep, admin: AdminUser) -> None:
    service.delete_catalog(session, admin, catalog_id)


# ---------------------------------------------------------------------------- saved scenarios


@router.get("/scenarios", response_model=list[ScenarioOut])
def list_scenarios(session: SessionDep, user: CurrentUser, all: bool = False) -> list[ScenarioOut]:  # noqa: A002
    return [ScenarioOut.model_validate(r) for r in service.list_scenarios(session, user, everyone=all)]


@router.post("/scenarios", response_model=ScenarioOut, status_code=status.HTTP_201_CREATED)
def create_scenario(body: ScenarioCreate, session: SessionDep, user: CurrentUser) -> ScenarioOut:
    return ScenarioOut.model_validate(service.create_scenario(session, user, body.name, body.body))


@router.get("/scenarios/{scenario_id}", response_model=ScenarioOut)
def get_scenario(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> ScenarioOut:
    return ScenarioOut.model_validate(service.get_scenario(session, user, scenario_id))


@router.patch("/scenarios/{scenario_id}", response_model=ScenarioOut)
def update_scenario(scenario_id: RowId, body: ScenarioUpdate, session: SessionDep, user: CurrentUser) -> ScenarioOut:
    return ScenarioOut.model_validate(service.update_scenario(session, user, scenario_id, body.name, body.body))


@router.delete("/scenarios/{scenario_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_scenario(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> None:
    service.delete_scenario(session, user, scenario_id)


@router.post("/scenarios/{scenario_id}/duplicate", response_model=ScenarioOut, status_code=status.HTTP_201_CREATED)
def duplicate_scenario(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> ScenarioOut:
    return ScenarioOut.model_validate(service.duplicate_scenario(session, user, scenario_id))


@router.post("/scenarios/{scenario_id}/share", response_model=ShareOut)
def share_scenario(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> ShareOut:
    row = service.share_scenario(session, user, scenario_id)
    assert row.share_token is not None
    # the dashboard's planner opens a shared scenario from this link
    return ShareOut(share_token=row.share_token, path=f"/planner?shared={row.share_token}")


@router.delete("/scenarios/{scenario_id}/share", status_code=status.HTTP_204_NO_CONTENT)
def unshare_scenario(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> None:
    service.unshare_scenario(session, user, scenario_id)


@router.get("/shared/{token}", response_model=ScenarioOut)
def get_shared(token: str, session: SessionDep, user: CurrentUser) -> ScenarioOut:
    """A scenario shared by link: any signed-in user holding the link may read it."""
    return ScenarioOut.model_validate(service.get_shared(session, token))

def _csv(text: str, name: str) -> Response:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "report"
    return Response(text, media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": f'attachment; filename="{safe}.csv"'})


@router.get("/installation-tiers", response_model=list[InstallationTierOut])
def installation_tiers(session: SessionDep, user: CurrentUser) -> list[InstallationTierOut]:
    """This installation's tiers as candidates (`tier:NAME`), with the class behind each or why it has none."""
    return installation.installation_tiers(session)


@router.post("/evaluate", response_model=ReportOut)
def evaluate(body: Scenario, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """Costs per tier, break-even frequencies, cheapest bands, sweep, lifecycle and hybrid plans."""
    return installation.evaluate(session, body)


@router.post("/plan-usage", response_model=PlanUsageOut)
def plan_usage(body: Scenario, session: SessionDep, user: CurrentUser) -> PlanUsageOut:
    """The scenario's month as a bucket's planned usage (reads, requests, restores), to save with
    PUT /api/spend/plans/{bucket}; nothing is saved here."""
    return installation.plan_usage(session, body)


@router.post("/report.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def report_csv(body: Scenario, session: SessionDep, user: CurrentUser) -> Response:
    return _csv(installation.evaluate_csv(session, body), "tierpilot-cost-report")


@router.get("/from-my-data", response_model=FromMyDataOut)
def from_my_data(session: SessionDep, user: CurrentUser, catalog: str = "aws-us-east-1",
                 bucket: Annotated[list[str] | None, Query()] = None) -> dict[str, Any]:
    """A scenario prefilled from your buckets: volume, object sizes, and reads by age."""
    return installation.from_my_data(session, user, bucket, catalog)


@router.get("/scenarios/{scenario_id}/report", response_model=ReportOut)
def scenario_report(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    row = service.get_scenario(session, user, scenario_id)
    return installation.evaluate(session, service.parse_scenario(row.body))


@router.get("/scenarios/{scenario_id}/report.csv", response_class=Response,
            responses={200: {"content": {"text/csv": {}}}})
def scenario_report_csv(scenario_id: RowId, session: SessionDep, user: CurrentUser) -> Response:
    row = service.get_scenario(session, user, scenario_id)
    return _csv(installation.evaluate_csv(session, service.parse_scenario(row.body)), row.name)


@router.get("/shared/{token}/report.csv", response_class=Response, responses={200: {"content": {"text/csv": {}}}})
def shared_report_csv(token: str, session: SessionDep, user: CurrentUser) -> Response:
    row = service.get_shared(session, token)
    return _csv(installation.evaluate_csv(session, service.parse_scenario(row.body)), row.name)
