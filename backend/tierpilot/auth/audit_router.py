"""The audit log for admins: browse (paged, filtered by actor, event and time) and export as CSV.

It lives in auth because only auth can tell an admin; the log itself is the ``audit`` package's."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from tierpilot.audit import service as audit
from tierpilot.audit.schemas import AuditEventOut, AuditPage
from tierpilot.auth.deps import AdminUser, SessionDep
from tierpilot.kit.db import utcnow
from tierpilot.kit.inputs import RowId

router = APIRouter(tags=["audit"])

ActorQ = Annotated[str | None, Query(max_length=64, description="exact username")]
EventQ = Annotated[str | None, Query(max_length=64, description="event name or prefix, e.g. auth.login")]
SinceQ = Annotated[datetime | None, Query(description="from this time (inclusive)")]
UntilQ = Annotated[datetime | None, Query(description="before this time")]


@router.get("/audit", response_model=AuditPage)
def browse(session: SessionDep, admin: AdminUser, actor: ActorQ = None, event: EventQ = None,
           since: SinceQ = None, until: UntilQ = None, before_id: RowId | None = None,
           limit: Annotated[int, Query(ge=1, le=audit.MAX_PAGE)] = 100) -> AuditPage:
    """Events newest first; pass ``next_before_id`` as ``before_id`` for the next page."""
    rows, next_before = audit.page(session, actor=actor, event=event, since=since, until=until,
                                   before_id=before_id, limit=limit)
    return AuditPage(events=[AuditEventOut.model_validate(r) for r in rows], next_before_id=next_before,
                     event_names=audit.event_names(session))


@router.get("/audit.csv", response_class=StreamingResponse,
            responses={200: {"content": {"text/csv": {}}, "description": "the matching events, oldest first"}})
def export(admin: AdminUser, actor: ActorQ = None, event: EventQ = None, since: SinceQ = None,
           until: UntilQ = None) -> StreamingResponse:
    lines = audit.export_csv(actor=actor, event=event, since=since, until=until)
    name = f"tierpilot-audit-{utcnow():%Y%m%dT%H%M%SZ}.csv"
    return StreamingResponse(lines, media_type="text/csv; charset=utf-8",
                             headers={"content-disposition": f'attachment; filename="{name}"'})
