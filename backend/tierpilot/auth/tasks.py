"""Periodic housekeeping of sign-in state."""

from __future__ import annotations

from sqlalchemy import delete

from tierpilot.auth.models import ApiToken
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.jobs import celery_app


@celery_app.task(name="auth.purge_expired_tokens")
def purge_expired_tokens() -> int:
    """Delete expired session and API tokens; returns how many went."""
    with transaction(write=True) as session:
        result = session.execute(delete(ApiToken).where(ApiToken.expires_at < utcnow()))
        return int(getattr(result, "rowcount", 0) or 0)
