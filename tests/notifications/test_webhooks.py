"""Webhook deliveries against a real HTTP server on 127.0.0.1: signed, retried with backoff, then given up."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select, update

from tests.notifications.receiver import Receiver, allow_listed, documented_verify
from tests.servers import free_port
from tierpilot.auth import repository as auth_repository
from tierpilot.kit.db import transaction, utcnow
from tierpilot.notifications import service
from tierpilot.notifications.models import Notification


def _notify(user_id: int) -> int:
    with transaction(write=True) as s:
        return service.notify(s, user_id, "restore.ready", "Batch ready", "All 3 objects are readable.",
                              link="/restores/7", payload={"batch_id": 7}).id


def _row(note_id: int) -> Notification:
    with transaction() as s:
        row = s.get(Notification, note_id)
        assert row is not None
        s.expunge(row)
        return row


def _time_passes(note_id: int) -> None:
    """The backoff is over (moving the due time stands in for waiting it out)."""
    with transaction(write=True) as s:
        s.execute(update(Notification).where(Notification.id == note_id).values(webhook_next_at=utcnow()))


def test_a_failing_webhook_is_retried_with_backoff_until_delivered(
        member_user: dict[str, str], receiver: Receiver) -> None:
    user_id = int(member_user["id"])
    with transaction(write=True) as s:
        secret = service.set_webhook(s, user_id, receiver.url).new_secret
    assert secret is not None
    receiver.answers = [500, 503]
    note_id = _notify(user_id)

    assert service.deliver_due() == service.DeliveryStats(retrying=1)
    first = _row(note_id)
    assert (first.webhook_state, first.webhook_attempts) == ("pending", 1)
    assert first.webhook_last_error == "HTTP 500"
    assert first.webhook_next_at is not None
    assert 4.5 <= (first.webhook_next_at - utcnow()).total_seconds() <= 5.0
    assert service.deliver_due() == service.DeliveryStats()  # not due yet: nobody is called
    _time_passes(note_id)
    assert service.deliver_due() == service.DeliveryStats(retrying=1)
    second = _row(note_id)
    assert second.webhook_next_at is not None and 9 <= (second.webhook_next_at - utcnow()).total_seconds() <= 10
    _time_passes(note_id)
    assert service.deliver_due() == service.DeliveryStats(delivered=1)
    done = _row(note_id)
    assert (done.webhook_state, done.webhook_attempts, done.webhook_next_at) == ("delivered", 3, None)
    assert len(receiver.received) == 3
    assert receiver.received[-1]["event"] == "restore.ready" and receiver.received[-1]["payload"] == {"batch_id": 7}
    # every retry carries the same delivery id (receivers de-duplicate on it) and is signed afresh
    assert [h["x-tierpilot-delivery"] for h in receiver.headers] == [str(note_id)] * 3
    verify = documented_verify()
    assert all(verify(secret, h["x-tierpilot-signature"], raw) for h, raw in zip(receiver.headers, receiver.raw,
                                                                                   strict=True))
    assert service.deliver_due() == service.DeliveryStats()


def test_a_tampered_body_a_stale_timestamp_or_another_secret_fail_the_documented_check(
        member_user: dict[str, str], receiver: Receiver) -> None:
    user_id = int(member_user["id"])
    with transaction(write=True) as s:
        secret = service.set_webhook(s, user_id, receiver.url).new_secret
    assert secret is not None
    _notify(user_id)
    assert service.deliver_due() == service.DeliveryStats(delivered=1)
    verify = documented_verify()
    body, signature = receiver.raw[0], receiver.headers[0]["x-tierpilot-signature"]
    assert verify(secret, signature, body)

    assert not verify(secret, signature, body.replace(b"restore.ready", b"restore.faked"))
    assert not verify(secret, signature, body + b" ")
    assert not verify("whsec_" + "x" * 43, signature, body)
    stale = service.sign(secret, body, int(time.time()) - 301)
    assert not verify(secret, stale, body)
    assert verify(secret, stale, body, tolerance_s=600)  # the HMAC itself is right: only its age fails
    assert not verify(secret, service.sign(secret, body, int(time.time()) + 301), body)
    timestamp = signature.split(",")[0]
    assert not verify(secret, f"{timestamp},v1={'0' * 64}", body)
    assert not verify(secret, "v1=" + signature.split("v1=")[1], body)
    assert not verify(secret, "", body)


def test_a_delivery_without_a_signing_secret_is_never_sent_unsigned(
        member_user: dict[str, str], receiver: Receiver) -> None:
    user_id = int(member_user["id"])
    with transaction(write=True) as s:
        auth_repository.set_webhook_url(s, user_id, receiver.url)  # as if the secret had been lost
    note_id = _notify(user_id)
    assert service.deliver_due() == service.DeliveryStats(retrying=1)
    assert receiver.raw == []
    error = _row(note_id).webhook_last_error
    assert error is not None and "no signing secret" in error


def test_an_unreachable_webhook_is_given_up_after_the_last_attempt(
        member_user: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERPILOT_WEBHOOK_MAX_ATTEMPTS", "2")
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    port = free_port()
    try:
        with allow_listed(f"127.0.0.1:{port}"):
            user_id = int(member_user["id"])
            with transaction(write=True) as s:
                service.set_webhook(s, user_id, f"http://127.0.0.1:{port}/nobody")
            note_id = _notify(user_id)
            assert service.deliver_due() == service.DeliveryStats(retrying=1)
            _time_passes(note_id)
            assert service.deliver_due() == service.DeliveryStats(failed=1)
        row = _row(note_id)
        assert (row.webhook_state, row.webhook_attempts, row.webhook_next_at) == ("failed", 2, None)
        assert row.webhook_last_error == "connection failed"
    finally:
        get_settings.cache_clear()


def test_without_a_url_there_is_nothing_to_deliver(member_user: dict[str, str]) -> None:
    note_id = _notify(int(member_user["id"]))
    assert _row(note_id).webhook_state == "none"
    assert service.deliver_due() == service.DeliveryStats()
    with transaction() as s:
        assert s.scalar(select(Notification.read_at).where(Notification.id == note_id)) is None
