from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from tierpilot.auth.models import ApiToken
from tierpilot.kit.db import transaction, utcnow


def test_task_round_trip_through_redis_and_a_worker_process(
    db: str, redis_url: str, admin_user: dict[str, str], celery_worker_process: subprocess.Popen[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tierpilot.auth import repository, service

    with transaction(write=True) as s:
        user = repository.get_user_by_name(s, "admin")
        assert user is not None
        service.issue_token(s, user, kind="session", ttl=timedelta(seconds=-10))  # already expired
        service.issue_token(s, user, kind="session", ttl=timedelta(hours=1))

    monkeypatch.setenv("TIERPILOT_REDIS_URL", redis_url)
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    from tierpilot.kit.jobs import make_celery

    client = make_celery()
    try:
        result = client.send_task("auth.purge_expired_tokens")
        assert result.get(timeout=60) == 1
    finally:
        get_settings.cache_clear()
    assert celery_worker_process.poll() is None
    with transaction() as s:
        assert s.scalar(select(func.count(ApiToken.id)).where(ApiToken.expires_at < utcnow())) == 0
        assert s.scalar(select(func.count(ApiToken.id))) == 1
