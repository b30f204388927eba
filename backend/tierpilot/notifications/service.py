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

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.kit.crypto import decrypt, encrypt
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.errors import Invalid
from tierpilot.kit.outbound import OutboundError, Policy, Refused, parse_allow_hosts
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


def notify_once(session: Session, user_id: int, kind: str, title: str, body: str = "", link: str | None = None,
                within: timedelta = timedelta(days=1)) -> Notification | None:
    """``notify`` unless the user already got this kind of notification for this link within ``within``:
    a periodic sweep that meets the same problem every few minutes tells its owner once a day."""
    now = utcnow()
    if repository.exists_since(session, user_id, kind, link, now - within):
        return None
    return notify(session, user_id, kind, title, body, link, now=now)


def outbound_policy() -> Policy:
    """Where webhooks may go: public addresses, plus the hosts TIERPILOT_WEBHOOK_ALLOW_HOSTS names."""
    return Policy(parse_allow_hosts(get_settings().webhook_allow_hosts))


def _invalid_url(message: str) -> Invalid:
    return Invalid(f"url: {message}", errors=[{"loc": ["body", "url"], "msg": message, "type": "value_error"}])


def validate_webhook_url(url: str, policy: Policy | None = None) -> str:
    """``url`` when deliveries may go there (resolved now: a public address or an allow-listed host)."""
    if len(url) > 2048:
        raise _invalid_url("webhook URL is longer than 2048 characters")
    try:
        (policy or outbound_policy()).check(url)
    except Refused as exc:
        if exc.reason.endswith(" address"):
            raise _invalid_url(f"webhook URL refused: {exc.reason}; an admin can let internal receivers "
                               "through with TIERPILOT_WEBHOOK_ALLOW_HOSTS") from exc
        raise _invalid_url(f"webhook URL must be an absolute http:// or https:// URL ({exc.reason})") from exc
    except OutboundError as exc:
        raise _invalid_url(f"webhook URL: {exc.summary}") from exc
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


def set_webhook(session: Session, user_id: int, url: str | None, policy: Policy | None = None) -> WebhookSettings:
    """Set or clear (None or "") the user's webhook URL; the first URL also creates the signing secret."""
    clean = validate_webhook_url(url.strip(), policy) if url and url.strip() else None
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


def deliver_due(limit: int = 100, policy: Policy | None = None) -> DeliveryStats:
    """POST every due webhook once (own transactions; the beat sweep calls it). Safe to run twice at once:
    a row is claimed by moving its due time to a lease end, and only that claim may record the result.
    Each URL is checked again now (``kit.outbound``): an address that became internal is refused."""
    settings = get_settings()
    policy = policy or outbound_policy()
    now = utcnow()
    # the lease end doubles as the claim's identity: a sweep records only rows still carrying its own
    lease_until = now + _LEASE
    with transaction(write=True) as session:
        rows = repository.claim_due_webhooks(session, now, lease_until, limit)
    if not rows:
        return DeliveryStats()
    with transaction() as session:
        user_ids = sorted({row.user_id for row in rows})
        sealed = auth_repository.webhook_secrets(session, user_ids)
        # each attempt goes where the user's webhook points now, not where it pointed when the event happened
        urls = auth_repository.webhook_urls(session, user_ids)
    delivered = retrying = failed = 0
    for row in rows:
        url = urls.get(row.user_id)
        if not url:
            values_dropped: dict[str, Any] = dict(webhook_state="none", webhook_next_at=None,
                                                  webhook_last_error="the webhook URL was cleared; not sent")
            with transaction(write=True) as session:
                repository.record_delivery(session, row.id, lease_until, values_dropped)
            continue
        try:
            error = _deliver(policy, settings.webhook_timeout_s, row, url, sealed.get(row.user_id))
        except Exception:
            # one row that cannot be sent must not keep the rows after it from theirs
            log.exception("webhook delivery of notification %d failed", row.id)
            error = "internal error while sending"
        attempts = row.webhook_attempts + 1
        if error is None:
            values: dict[str, Any] = dict(webhook_state="delivered", webhook_attempts=attempts,
                                          webhook_next_at=None, webhook_delivered_at=utcnow(),
                                          webhook_last_error=None, webhook_url=url)
            delivered += 1
        elif attempts >= settings.webhook_max_attempts:
            values = dict(webhook_state="failed", webhook_attempts=attempts, webhook_next_at=None,
                          webhook_last_error=error, webhook_url=url)
            failed += 1
        else:
            values = dict(webhook_attempts=attempts, webhook_next_at=utcnow() + backoff(attempts),
                          webhook_last_error=error, webhook_url=url)
            retrying += 1
        with transaction(write=True) as session:
            repository.record_delivery(session, row.id, lease_until, values)
    return DeliveryStats(delivered, retrying, failed)


def _deliver(policy: Policy, timeout_s: float, row: Any, url: str, sealed_secret: str | None) -> str | None:
    """None when delivered, else what went wrong; without a usable secret nothing is sent unsigned."""
    if sealed_secret is None:
        return "no signing secret: rotate the webhook secret"
    try:
        secret = decrypt(sealed_secret)
    except ValueError as exc:
        return str(exc)
    return _post(policy, timeout_s, row, url, secret)


def _post(policy: Policy, timeout_s: float, row: Any, url: str, secret: str) -> str | None:
    """None on a 2xx answer, else a summary of what went wrong for the user to see: the status code,
    "refused: loopback address", "timed out" … never the receiver's body (it could be anything inside)."""
    body = json.dumps(webhook_body(row)).encode()
    # the delivery id is the notification's: the same on every retry, so receivers can drop duplicates
    headers = {"content-type": "application/json", "x-tierpilot-event": row.kind,
               "x-tierpilot-delivery": str(row.id), "x-tierpilot-signature": sign(secret, body, int(time.time()))}
    try:
        status = policy.post(url, body, headers, timeout_s)
    except OutboundError as exc:
        return exc.summary
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        return f"HTTP {status} (redirects are not followed)"
    return f"HTTP {status}"


def list_notifications(session: Session, user_id: int, unread_only: bool = False, limit: int = 50
                       ) -> tuple[list[Notification], int]:
    return repository.list_for_user(session, user_id, unread_only, limit), repository.unread_count(session, user_id)


def mark_read(session: Session, user_id: int, ids: Sequence[int] | None) -> int:
    return repository.mark_read(session, user_id, ids, utcnow())
