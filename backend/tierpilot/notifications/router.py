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


def _webhook_out(settings: service.WebhookSettings) -> WebhookOut:
    return WebhookOut(url=settings.url, has_secret=settings.has_secret, secret=settings.new_secret)


@router.get("/notifications/webhook", response_model=WebhookOut)
def get_webhook(session: SessionDep, user: CurrentUser) -> WebhookOut:
    return _webhook_out(service.webhook_settings(session, user.id))


@router.put("/notifications/webhook", response_model=WebhookOut)
def set_webhook(body: WebhookIn, session: SessionDep, user: CurrentUser) -> WebhookOut:
    """Set or clear the webhook URL; the first URL creates the signing secret, returned this once."""
    return _webhook_out(service.set_webhook(session, user.id, body.url))


@router.post("/notifications/webhook/secret/rotate", response_model=WebhookOut)
def rotate_webhook_secret(session: SessionDep, user: CurrentUser) -> WebhookOut:
    """Replace the signing secret (returned this once); the old one signs nothing any more."""
    return _webhook_out(service.rotate_webhook_secret(session, user.id))
