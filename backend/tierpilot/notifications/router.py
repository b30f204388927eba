"""The signed-in user's notifications and webhook URL."""

from __future__ import annotations

from fastapi import APIRouter, Query

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.notifications import service
from tierpilot.notifications.schemas import (
    MarkReadIn,
    MarkReadOut,
    NotificationOut,
    NotificationsOut,
    WebhookIn,
    WebhookOut,
)

router = APIRouter(tags=["notifications"])


@router.get("/notifications", response_model=NotificationsOut)
def list_notifications(session: SessionDep, user: CurrentUser, unread: bool = False,
                       limit: int = Query(50, ge=1, le=500)) -> NotificationsOut:
    items, unread_count = service.list_notifications(session, user.id, unread, limit)
    return NotificationsOut(items=[NotificationOut.model_validate(n) for n in items], unread=unread_count)


@router.post("/notifications/read", response_model=MarkReadOut)
def mark_read(body: MarkReadIn, session: SessionDep, user: CurrentUser) -> MarkReadOut:
    return MarkReadOut(marked=service.mark_read(session, user.id, body.ids))


@router.get("/notifications/webhook", response_model=WebhookOut)
def get_webhook(user: CurrentUser) -> WebhookOut:
    return WebhookOut(url=user.webhook_url)


@router.put("/notifications/webhook", response_model=WebhookOut)
def set_webhook(body: WebhookIn, session: SessionDep, user: CurrentUser) -> WebhookOut:
    return WebhookOut(url=service.set_webhook(session, user.id, body.url))
