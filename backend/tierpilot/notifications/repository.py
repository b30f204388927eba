"""Only this module queries the notifications table (a user's webhook columns belong to auth.repository)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from tierpilot.notifications.models import Notification


def list_for_user(session: Session, user_id: int, unread_only: bool, limit: int) -> list[Notification]:
    q = select(Notification).where(Notification.user_id == user_id)
    if unread_only:
        q = q.where(Notification.read_at.is_(None))
    return list(session.scalars(q.order_by(Notification.created_at.desc(), Notification.id.desc()).limit(limit)))


def unread_count(session: Session, user_id: int) -> int:
    return int(session.scalar(select(func.count(Notification.id))
                              .where(Notification.user_id == user_id, Notification.read_at.is_(None))) or 0)


def exists_since(session: Session, user_id: int, kind: str, link: str | None, since: datetime) -> bool:
    """Whether the user got a notification of this kind and link at or after ``since``."""
    q = select(Notification.id).where(Notification.user_id == user_id, Notification.kind == kind,
                                      Notification.created_at >= since)
    q = q.where(Notification.link.is_(None) if link is None else Notification.link == link)
    return session.scalar(q.limit(1)) is not None


def mark_read(session: Session, user_id: int, ids: Sequence[int] | None, now: datetime) -> int:
    """Mark the user's notifications read (all unread ones when ``ids`` is None); returns how many."""
    stmt = update(Notification).where(Notification.user_id == user_id, Notification.read_at.is_(None))
    if ids is not None:
        stmt = stmt.where(Notification.id.in_(list(ids)))
    result = session.execute(stmt.values(read_at=now).execution_options(synchronize_session=False))
    return int(getattr(result, "rowcount", 0) or 0)


def claim_due_webhooks(session: Session, now: datetime, lease_until: datetime, limit: int) -> list[Any]:
    """Move due deliveries' next time to the lease end (claiming them); SKIP LOCKED on PostgreSQL."""
    due = (select(Notification.id)
           .where(Notification.webhook_state == "pending", Notification.webhook_next_at <= now)
           .order_by(Notification.webhook_next_at).limit(limit).with_for_update(skip_locked=True))
    stmt = (update(Notification)
            .where(Notification.id.in_(due.scalar_subquery()), Notification.webhook_next_at <= now)
            .values(webhook_next_at=lease_until)
            .returning(Notification.id, Notification.user_id, Notification.webhook_url, Notification.webhook_attempts,
                       Notification.kind, Notification.title, Notification.body, Notification.link,
                       Notification.payload, Notification.created_at)
            .execution_options(synchronize_session=False))
    return list(session.execute(stmt))


def record_delivery(session: Session, notification_id: int, lease_until: datetime, values: dict[str, Any]) -> bool:
    """Store a delivery's outcome unless another sweep took the row over after our lease ran out."""
    result = session.execute(
        update(Notification)
        .where(Notification.id == notification_id, Notification.webhook_next_at == lease_until)
        .values(**values).execution_options(synchronize_session=False))
    return bool(getattr(result, "rowcount", 0))
