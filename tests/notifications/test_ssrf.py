"""Webhooks cannot be aimed at the inside (SSRF): a URL naming this machine or a private network, in any
spelling, is refused when saved (422 naming `url`) and again when sent (nothing reaches the receiver on
127.0.0.1 unless an admin allow-listed it); a member sees a status summary, never the receiver's answer,
and cannot tell an open port from a closed one; a name that resolves elsewhere at send time is refused."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from fastapi.testclient import TestClient

from tests.notifications.receiver import Receiver, allow_listed, running_receiver
from tests.servers import free_port
from tierpilot.auth import repository as auth_repository
from tierpilot.kit.db import transaction
from tierpilot.kit.outbound import Policy
from tierpilot.notifications import service
from tierpilot.notifications.models import Notification

PUBLIC_URL = "https://93.184.215.14/hook"  # a public literal: saving it needs no DNS, and nothing is sent


def spellings(port: int) -> list[tuple[str, str]]:
    """URLs that all reach 127.0.0.1:port (or this machine), with the summary a member sees."""
    return [(f"http://{host}:{port}/hook", f"refused: {reason}") for host, reason in [
        ("127.0.0.1", "loopback address"), ("127.1", "loopback address"), ("2130706433", "loopback address"),
        ("0x7f.1", "loopback address"), ("017700000001", "loopback address"),
        ("[::ffff:127.0.0.1]", "loopback address"), ("[::1]", "loopback address"), ("localhost", "loopback address"),
        ("0", "unspecified address"), ("0.0.0.0", "unspecified address"),
    ]]


def _notify(user_id: int) -> int:
    with transaction(write=True) as s:
        return service.notify(s, user_id, "restore.ready", "Batch ready").id


def _stored_url(user_id: int, url: str) -> None:
    """A URL already in the database (saved before the check existed, or allow-listed back then)."""
    with transaction(write=True) as s:
        auth_repository.set_webhook_url(s, user_id, url)
        if auth_repository.webhook_secret_of(s, user_id) is None:
            service.rotate_webhook_secret(s, user_id)


def _last_error(note_id: int) -> str | None:
    with transaction() as s:
        row = s.get(Notification, note_id)
        assert row is not None
        return row.webhook_last_error


def test_every_spelling_of_an_inside_url_is_refused_when_saved(member_client: TestClient) -> None:
    assert member_client.put("/api/notifications/webhook", json={"url": PUBLIC_URL}).status_code == 200
    for url, summary in spellings(6379):
        r = member_client.put("/api/notifications/webhook", json={"url": url})
        assert r.status_code == 422, (url, r.text)
        assert r.json()["detail"].startswith(f"url: webhook URL {summary}"), (url, r.json())
        assert r.json()["errors"][0]["loc"] == ["body", "url"]
        assert member_client.get("/api/notifications/webhook").json()["url"] == PUBLIC_URL  # nothing changed


def test_every_spelling_of_an_inside_url_is_refused_when_sent(member_user: dict[str, str]) -> None:
    user_id = int(member_user["id"])
    with running_receiver(allow=False) as receiver:
        for url, summary in spellings(receiver.port):
            _stored_url(user_id, url)
            note_id = _notify(user_id)
            assert service.deliver_due() == service.DeliveryStats(retrying=1), url
            assert _last_error(note_id) == summary, url
        assert receiver.received == []


def test_a_receiver_on_loopback_works_only_while_allow_listed(
        member_client: TestClient, member_user: dict[str, str]) -> None:
    with running_receiver(allow=False) as receiver:
        assert member_client.put("/api/notifications/webhook", json={"url": receiver.url}).status_code == 422
        with allow_listed(f"127.0.0.1:{receiver.port}"):
            saved = member_client.put("/api/notifications/webhook", json={"url": receiver.url})
            assert saved.status_code == 200 and saved.json()["url"] == receiver.url
            _notify(int(member_user["id"]))
            assert service.deliver_due() == service.DeliveryStats(delivered=1)
        # the admin took the entry out again: the saved URL is refused when the next notice is sent
        note_id = _notify(int(member_user["id"]))
        assert service.deliver_due() == service.DeliveryStats(retrying=1)
        assert _last_error(note_id) == "refused: loopback address"
        assert len(receiver.received) == 1


def test_a_failed_delivery_shows_its_status_never_the_receivers_answer(
        member_client: TestClient, member_user: dict[str, str], receiver: Receiver) -> None:
    receiver.answers = [500]
    receiver.reply_body = b"-ERR internal: redis_version:7.0.15 requirepass hunter2"
    assert member_client.put("/api/notifications/webhook", json={"url": receiver.url}).status_code == 200
    _notify(int(member_user["id"]))
    assert service.deliver_due() == service.DeliveryStats(retrying=1)
    seen = member_client.get("/api/notifications")
    assert seen.json()["items"][0]["webhook_last_error"] == "HTTP 500"
    assert "hunter2" not in seen.text and "redis" not in seen.text


def test_a_redirect_is_not_followed(member_user: dict[str, str]) -> None:
    user_id = int(member_user["id"])
    with running_receiver(allow=False) as inside, running_receiver(allow=False) as receiver:
        receiver.answers = [302]
        receiver.reply_headers = {"location": inside.url}
        with allow_listed(f"127.0.0.1:{receiver.port}, 127.0.0.1:{inside.port}"):
            _stored_url(user_id, receiver.url)
            note_id = _notify(user_id)
            assert service.deliver_due() == service.DeliveryStats(retrying=1)
        assert _last_error(note_id) == "HTTP 302 (redirects are not followed)"
        assert len(receiver.received) == 1 and inside.received == []


def test_open_and_closed_ports_of_a_refused_address_look_the_same(member_user: dict[str, str]) -> None:
    user_id = int(member_user["id"])
    errors = []
    with running_receiver(allow=False) as receiver:
        for port in (receiver.port, free_port()):
            _stored_url(user_id, f"http://127.0.0.1:{port}/hook")
            note_id = _notify(user_id)
            service.deliver_due()
            errors.append(_last_error(note_id))
        assert receiver.received == []
    assert errors == ["refused: loopback address"] * 2


class Rebinding:
    """A resolver that answers a public address first and this machine afterwards (DNS rebinding)."""

    def __init__(self, first: Sequence[str], then: Sequence[str]) -> None:
        self.first, self.then, self.calls = first, then, 0

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls += 1
        return self.first if self.calls == 1 else self.then


def test_a_name_that_resolves_to_loopback_at_send_time_is_refused(
        member_user: dict[str, str], receiver: Receiver) -> None:
    """Saved while the name pointed outside, sent after it was re-pointed at 127.0.0.1."""
    user_id = int(member_user["id"])
    resolver = Rebinding(["93.184.215.14"], ["127.0.0.1"])
    policy = Policy(resolver=resolver)
    url = f"http://rebind.example:{receiver.port}/hook"
    with transaction(write=True) as s:
        assert service.set_webhook(s, user_id, url, policy).url == url
    note_id = _notify(user_id)
    assert service.deliver_due(policy=policy) == service.DeliveryStats(retrying=1)
    assert _last_error(note_id) == "refused: loopback address"
    assert resolver.calls == 2 and receiver.received == []


@pytest.mark.parametrize("url", ["http://hooks.invalid/x", "ftp://93.184.215.14/x", "http://93.184.215.14:0/x"])
def test_a_url_nobody_could_deliver_to_is_refused_when_saved(member_client: TestClient, url: str) -> None:
    r = member_client.put("/api/notifications/webhook", json={"url": url})
    assert r.status_code == 422 and r.json()["detail"].startswith("url: ")
    assert member_client.get("/api/notifications/webhook").json()["url"] is None
