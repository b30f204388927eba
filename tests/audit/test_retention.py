"""Audit retention: events older than TIERPILOT_AUDIT_RETENTION_DAYS are deleted (counted) by beat's
``audit.prune``, newer ones stay; the sweep's clock is injected, nothing sleeps."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.clocks import WallClock
from tierpilot.audit import repository, service, tasks
from tierpilot.audit.models import AuditEvent
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.settings import get_settings


@pytest.fixture
def retention(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TIERPILOT_AUDIT_RETENTION_DAYS", "30")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("TIERPILOT_AUDIT_RETENTION_DAYS")
    get_settings.cache_clear()


def _add_events(at: datetime, n: int, event: str = "auth.login_ok") -> None:
    with transaction(write=True) as s:
        for i in range(n):
            repository.add(s, AuditEvent(at=at, event=event, actor=f"u{i}", target=f"user:u{i}", detail={}))


def _remaining() -> list[tuple[str, datetime]]:
    with transaction() as s:
        return [(e.actor, e.at) for e in s.scalars(select(AuditEvent).order_by(AuditEvent.id))]


def test_prune_deletes_only_events_past_the_retention_period(db: str, retention: None) -> None:
    clock = WallClock(datetime(2027, 6, 1, 12, 0, tzinfo=utcnow().tzinfo))
    _add_events(clock.now - timedelta(days=31), 3)  # past 30 days
    _add_events(clock.now - timedelta(days=29), 2)  # within

    assert tasks.prune_expired(clock) == 3
    assert len(_remaining()) == 2
    assert tasks.prune_expired(clock) == 0  # a second sweep finds nothing: safe to run twice

    clock.advance(days=1, minutes=1)  # the newer ones are now 30 days and a minute old
    assert tasks.prune_expired(clock) == 2
    assert _remaining() == []


def test_prune_works_through_a_backlog_in_batches(db: str, retention: None) -> None:
    clock = WallClock(utcnow())
    _add_events(clock.now - timedelta(days=400), 23)
    _add_events(clock.now, 4)

    assert tasks.prune_expired(clock, batch=5, pause_s=0) == 23  # 4 transactions of 5 and one of 3
    assert len(_remaining()) == 4


def test_prune_keeps_everything_within_the_default_year(session: Session) -> None:
    assert get_settings().audit_retention_days == 365
    now = utcnow()
    for days in (364, 366):
        repository.add(session, AuditEvent(at=now - timedelta(days=days), event="user.created", actor=str(days),
                                           detail={}))
    session.flush()
    assert service.prune(session, now, get_settings().audit_retention_days) == 1
    assert [e.actor for e in session.scalars(select(AuditEvent))] == ["364"]


def test_admins_see_each_users_last_sign_in(client: TestClient, member_client: TestClient,
                                            member_user: dict[str, str]) -> None:
    users = {u["username"]: u for u in client.get("/api/users").json()}
    assert users["member"]["last_login_at"] is not None
    signed_in = datetime.fromisoformat(users["member"]["last_login_at"])
    with transaction() as s:
        latest = s.scalar(select(func.max(AuditEvent.at)).where(AuditEvent.event == "auth.login_ok",
                                                               AuditEvent.actor == "member"))
    assert latest is not None
    assert abs(signed_in.replace(tzinfo=None) - latest.replace(tzinfo=None)) < timedelta(seconds=1)
    # members do not get the list at all
    assert member_client.get("/api/users").status_code == 403
