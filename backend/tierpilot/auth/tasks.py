"""Periodic housekeeping of sign-in state."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete

from tierpilot.auth.models import AccessKey, ApiToken
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.jobs import celery_app


@celery_app.task(name="auth.purge_expired_tokens")
def purge_expired_tokens() -> int:
    """Delete expired session and API tokens; returns how many went."""
    with transaction(write=True) as session:
        result = session.execute(delete(ApiToken).where(ApiToken.expires_at < utcnow()))
        return int(getattr(result, "rowcount", 0) or 0)


# an expired key is kept a day: its row also remembers the ID token that bought it (a replay is refused while
# the token itself is still valid) and lets the gateway answer ExpiredToken rather than InvalidAccessKeyId
EXPIRED_KEY_GRACE = timedelta(days=1)


@celery_app.task(name="auth.purge_expired_keys")
def purge_expired_keys() -> int:
    """Delete temporary S3 keys a day past their expiry; returns how many went."""
    with transaction(write=True) as session:
        result = session.execute(delete(AccessKey).where(AccessKey.expires_at < utcnow() - EXPIRED_KEY_GRACE))
        return int(getattr(result, "rowcount", 0) or 0)
