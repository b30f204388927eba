"""Only this module queries the audit table."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, delete, func, select
from sqlalchemy.orm import Session

from tierpilot.audit.models import AuditEvent


@dataclass(frozen=True)
class Filter:
    actor: str | None = None
    event: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def _filtered(f: Filter) -> Select[AuditEvent]:
    q = select(AuditEvent)
    if f.actor:
        q = q.where(AuditEvent.actor == f.actor)
    if f.event:
        # "auth.login" selects auth.login_ok and auth.login_failed; "auth.login_failed" only itself
        q = q.where(AuditEvent.event.startswith(f.event, autoescape=True))
    if f.since is not None:
        q = q.where(AuditEvent.at >= f.since)
    if f.until is not None:
        q = q.where(AuditEvent.at < f.until)
    return q


def add(session: Session, event: AuditEvent) -> None:
    session.add(event)


def page(session: Session, f: Filter, before_id: int | None, limit: int) -> list[AuditEvent]:
    """Newest first; ``before_id`` is the cursor (the last id of the previous page)."""
    q = _filtered(f)
    if before_id is not None:
        q = q.where(AuditEvent.id < before_id)
    return list(session.scalars(q.order_by(AuditEvent.id.desc()).limit(limit)))


def stream(session: Session, f: Filter, batch: int = 1000) -> Iterator[AuditEvent]:
    """Every matching event, oldest first, read in batches by id."""
    after = 0
    while True:
        rows = list(session.scalars(_filtered(f).where(AuditEvent.id > after).order_by(AuditEvent.id).limit(batch)))
        yield from rows
        if len(rows) < batch:
            return
        after = rows[-1].id


def event_names(session: Session) -> list[str]:
    return list(session.scalars(select(AuditEvent.event).distinct().order_by(AuditEvent.event)))


def delete_before(session: Session, cutoff: datetime, limit: int) -> int:
    """Delete up to ``limit`` of the oldest events dated before ``cutoff``; returns how many went."""
    # by time: the range scan of ix_audit_events_at finds them (by id it would read the table in id order)
    oldest = select(AuditEvent.id).where(AuditEvent.at < cutoff).order_by(AuditEvent.at).limit(limit)
    result = session.execute(delete(AuditEvent).where(AuditEvent.id.in_(oldest.scalar_subquery())))
    return int(getattr(result, "rowcount", 0) or 0)


def last_at(session: Session, event: str, actor_ids: list[int]) -> dict[int, datetime]:
    """The time of each actor's latest ``event``."""
    if not actor_ids:
        return {}
    q = (select(AuditEvent.actor_id, func.max(AuditEvent.at))
         .where(AuditEvent.event == event, AuditEvent.actor_id.in_(actor_ids)).group_by(AuditEvent.actor_id))
    return {actor_id: at for actor_id, at in session.execute(q) if actor_id is not None}
