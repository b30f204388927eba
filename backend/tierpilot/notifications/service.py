"""Notify a user in the app and, when they set a webhook URL, by an HTTP POST delivered with retries."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy.orm import Session

from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.errors import Invalid
from tierpilot.notifications import repository
from tierpilot.notifications.models import Notification
from tierpilot.settings import get_settings

log = logging.getLogger(__name__)

_LEASE = timedelta(minutes=2)


def notify(session: Session, user_id: int, kind: str, title: str, body: str = "", link: str | None = None,
           payload: dict[str, Any] | None = None, now: datetime | None = None) -> Notification:
    """Record an in-app notification; a webhook delivery becomes due at once when the user has a URL."""
    now = now or utcnow()
    url = repository.webhook_url_of(session, user_id)
    note = Notification(user_id=user_id, kind=kind, title=title, body=body, link=link, payload=payload or {},
                        created_at=now, webhook_url=url, webhook_state="pending" if url else "none",
                        webhook_next_at=now if url else None)
    session.add(note)
    session.flush()
    return note


def validate_webhook_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Invalid("webhook URL must be an absolute http:// or https:// URL")
    if len(url) > 2048:
        raise Invalid("webhook URL is longer than 2048 characters")
    return url


def set_webhook(session: Session, user_id: int, url: str | None) -> str | None:
    """Set or clear (None or "") the user's webhook URL."""
    clean = validate_webhook_url(url.strip()) if url and url.strip() else None
    repository.set_webhook_url(session, user_id, clean)
    return clean


def backoff(attempt: int) -> timedelta:
    """Wait after the ``attempt``-th failed delivery: 5 s, 10 s, 20 s ... capped at one hour."""
    return timedelta(seconds=min(5 * 2 ** max(attempt - 1, 0), 3600))


@dataclass(frozen=True)
class DeliveryStats:
    delivered: int = 0
    retrying: int = 0
    failed: int = 0


def webhook_body(row: Any) -> dict[str, Any]:
    return {"id": row.id, "event": row.kind, "title": row.title, "body": row.body, "link": row.link,
            "payload": row.payload, "created_at": row.created_at.isoformat()}


def deliver_due(limit: int = 100, client: httpx.Client | None = None) -> DeliveryStats:
    """POST every due webhook once (own transactions; the beat sweep calls it). Safe to run twice at once:
    a row is claimed by moving its due time to a lease end, and only that claim may record the result."""
    settings = get_settings()
    now = utcnow()
    # the lease end doubles as the claim's identity: a sweep records only rows still carrying its own
    lease_until = now + _LEASE
    with transaction(write=True) as session:
        rows = repository.claim_due_webhooks(session, now, lease_until, limit)
    if not rows:
        return DeliveryStats()
    delivered = retrying = failed = 0
    own_client = client is None
    http = client or httpx.Client(timeout=settings.webhook_timeout_s, follow_redirects=False)
    try:
        for row in rows:
            error = _post(http, row)
            attempts = row.webhook_attempts + 1
            if error is None:
                values: dict[str, Any] = dict(webhook_state="delivered", webhook_attempts=attempts,
                                              webhook_next_at=None, webhook_delivered_at=utcnow(),
                                              webhook_last_error=None)
                delivered += 1
            elif attempts >= settings.webhook_max_attempts:
                values = dict(webhook_state="failed", webhook_attempts=attempts, webhook_next_at=None,
                              webhook_last_error=error)
                failed += 1
            else:
                values = dict(webhook_attempts=attempts, webhook_next_at=utcnow() + backoff(attempts),
                              webhook_last_error=error)
                retrying += 1
            with transaction(write=True) as session:
                repository.record_delivery(session, row.id, lease_until, values)
    finally:
        if own_client:
            http.close()
    return DeliveryStats(delivered, retrying, failed)


def _post(http: httpx.Client, row: Any) -> str | None:
    """None on a 2xx answer, else what went wrong."""
    try:
        response = http.post(row.webhook_url, content=json.dumps(webhook_body(row)),
                             headers={"content-type": "application/json", "x-tierpilot-event": row.kind,
                                      "x-tierpilot-delivery": str(row.id)})
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"[:500]
    if 200 <= response.status_code < 300:
        return None
    return f"HTTP {response.status_code}: {response.text[:200]}"


def list_notifications(session: Session, user_id: int, unread_only: bool = False, limit: int = 50
                       ) -> tuple[list[Notification], int]:
    return repository.list_for_user(session, user_id, unread_only, limit), repository.unread_count(session, user_id)


def mark_read(session: Session, user_id: int, ids: Sequence[int] | None) -> int:
    return repository.mark_read(session, user_id, ids, utcnow())
