"""Webhook deliveries against a real HTTP server on 127.0.0.1: retried with backoff, then given up."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.servers import free_port
from tierpilot.kit.db import transaction, utcnow
from tierpilot.notifications import service
from tierpilot.notifications.models import Notification


@dataclass
class Receiver:
    url: str
    answers: list[int]  # status codes to give, in order; 200 once they run out
    received: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    port = free_port()
    box = Receiver(url=f"http://127.0.0.1:{port}/hook", answers=[])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["content-length"]))
            box.received.append(json.loads(body))
            box.headers.append({k.lower(): v for k, v in self.headers.items()})
            status = box.answers.pop(0) if box.answers else 200
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield box
    server.shutdown()
    server.server_close()


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
        service.set_webhook(s, user_id, receiver.url)
    receiver.answers = [500, 503]
    note_id = _notify(user_id)

    assert service.deliver_due() == service.DeliveryStats(retrying=1)
    first = _row(note_id)
    assert (first.webhook_state, first.webhook_attempts) == ("pending", 1)
    assert first.webhook_last_error is not None and "HTTP 500" in first.webhook_last_error
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
    assert receiver.headers[-1]["x-tierpilot-delivery"] == str(note_id)
    assert service.deliver_due() == service.DeliveryStats()


def test_an_unreachable_webhook_is_given_up_after_the_last_attempt(
        member_user: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERPILOT_WEBHOOK_MAX_ATTEMPTS", "2")
    from tierpilot.settings import get_settings

    get_settings.cache_clear()
    try:
        user_id = int(member_user["id"])
        with transaction(write=True) as s:
            service.set_webhook(s, user_id, f"http://127.0.0.1:{free_port()}/nobody")
        note_id = _notify(user_id)
        assert service.deliver_due() == service.DeliveryStats(retrying=1)
        _time_passes(note_id)
        assert service.deliver_due() == service.DeliveryStats(failed=1)
        row = _row(note_id)
        assert (row.webhook_state, row.webhook_attempts, row.webhook_next_at) == ("failed", 2, None)
        assert row.webhook_last_error is not None and "ConnectError" in row.webhook_last_error
    finally:
        get_settings.cache_clear()


def test_without_a_url_there_is_nothing_to_deliver(member_user: dict[str, str]) -> None:
    note_id = _notify(int(member_user["id"]))
    assert _row(note_id).webhook_state == "none"
    assert service.deliver_due() == service.DeliveryStats()
    with transaction() as s:
        assert s.scalar(select(Notification.read_at).where(Notification.id == note_id)) is None
