"""Notify a user in the app and, when they set a webhook URL, by a signed HTTP POST delivered with retries."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.kit.crypto import decrypt, encrypt
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.errors import Invalid
from tierpilot.kit.settings import get_settings
from tierpilot.notifications import repository
from tierpilot.notifications.models import Notification

log = logging.getLogger(__name__)

_LEASE = timedelta(minutes=2)


def notify(session: Session, user_id: int, kind: str, title: str, body: str = "", link: str | None = None,
           payload: dict[str, Any] | None = None, now: datetime | None = None) -> Notification:
    """Record an in-app notification; a webhook delivery becomes due at once when the user has a URL."""
    now = now or utcnow()
    url = auth_repository.webhook_url_of(session, user_id)
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


@dataclass(frozen=True)
class WebhookSettings:
    url: str | None
    has_secret: bool
    # the plain signing secret, only in the answer of the call that created it
    new_secret: str | None = None


def webhook_settings(session: Session, user_id: int) -> WebhookSettings:
    return WebhookSettings(auth_repository.webhook_url_of(session, user_id),
                           auth_repository.webhook_secret_of(session, user_id) is not None)


def set_webhook(session: Session, user_id: int, url: str | None) -> WebhookSettings:
    """Set or clear (None or "") the user's webhook URL; the first URL also creates the signing secret."""
    clean = validate_webhook_url(url.strip()) if url and url.strip() else None
    auth_repository.set_webhook_url(session, user_id, clean)
    if clean and auth_repository.webhook_secret_of(session, user_id) is None:
        return rotate_webhook_secret(session, user_id)
    return webhook_settings(session, user_id)


def rotate_webhook_secret(session: Session, user_id: int) -> WebhookSettings:
    """Replace the user's signing secret; every delivery from now on, retries included, uses the new one."""
    secret = "whsec_" + secrets.token_urlsafe(32)
    auth_repository.set_webhook_secret(session, user_id, encrypt(secret))
    return WebhookSettings(auth_repository.webhook_url_of(session, user_id), True, secret)


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The X-Tierpilot-Signature value: HMAC-SHA256 of "<timestamp>.<body>" under the secret."""
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


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
    with transaction() as session:
        sealed = auth_repository.webhook_secrets(session, sorted({row.user_id for row in rows}))
    delivered = retrying = failed = 0
    own_client = client is None
    http = client or httpx.Client(timeout=settings.webhook_timeout_s, follow_redirects=False)
    try:
        for row in rows:
            error = _deliver(http, row, sealed.get(row.user_id))
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


def _deliver(http: httpx.Client, row: Any, sealed_secret: str | None) -> str | None:
    """None when delivered, else what went wrong; without a usable secret nothing is sent unsigned."""
    if sealed_secret is None:
        return "no signing secret: rotate the webhook secret"
    try:
        secret = decrypt(sealed_secret)
    except ValueError as exc:
        return str(exc)
    return _post(http, row, secret)


def _post(http: httpx.Client, row: Any, secret: str) -> str | None:
    """None on a 2xx answer, else what went wrong."""
    body = json.dumps(webhook_body(row)).encode()
    # the delivery id is the notification's: the same on every retry, so receivers can drop duplicates
    headers = {"content-type": "application/json", "x-tierpilot-event": row.kind,
               "x-tierpilot-delivery": str(row.id), "x-tierpilot-signature": sign(secret, body, int(time.time()))}
    try:
        response = http.post(row.webhook_url, content=body, headers=headers)
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
