"""/api/integrity: each bucket's fixity (last check, failures) and the fixity log as CSV for auditors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep
from tierpilot.catalog import service as catalog
from tierpilot.integrity import service
from tierpilot.integrity.schemas import BucketFixityOut
from tierpilot.kit.db import utcnow

router = APIRouter(prefix="/integrity", tags=["integrity"])
CSV: dict[int | str, dict[str, Any]] = {200: {"content": {"text/csv": {}},
                                              "description": "the fixity log, oldest first"}}


@router.get("/buckets", response_model=list[BucketFixityOut])
def list_fixity(session: SessionDep, user: CurrentUser) -> list[BucketFixityOut]:
    """Fixity of the caller's buckets (an admin's: every bucket)."""
    buckets = catalog.list_buckets(session, user.id, user.is_admin)
    return [BucketFixityOut.model_validate(asdict(s)) for s in service.summaries(session, buckets)]


@router.get("/buckets/{name}", response_model=BucketFixityOut)
def bucket_fixity(name: str, session: SessionDep, user: CurrentUser) -> BucketFixityOut:
    """One bucket's fixity: checks, the last one, the objects whose latest check failed."""
    bucket = catalog.owned_bucket(session, name, user, "reading its fixity log")
    return BucketFixityOut.model_validate(asdict(service.summaries(session, [bucket])[0]))


@router.get("/buckets/{name}/fixity.csv", response_class=StreamingResponse, responses=CSV)
def bucket_fixity_csv(name: str, session: SessionDep, user: CurrentUser) -> StreamingResponse:
    bucket = catalog.owned_bucket(session, name, user, "reading its fixity log")
    return _csv(service.export_csv(bucket.id), f"tierpilot-fixity-{bucket.name}")


@router.get("/fixity.csv", response_class=StreamingResponse, responses=CSV)
def fixity_csv(admin: AdminUser) -> StreamingResponse:
    """Every bucket's fixity log (admins)."""
    return _csv(service.export_csv(None), "tierpilot-fixity")


def _csv(lines: Iterator[str], stem: str) -> StreamingResponse:
    name = f"{stem}-{utcnow():%Y%m%dT%H%M%SZ}.csv"
    return StreamingResponse(lines, media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": f'attachment; filename="{name}"'})
