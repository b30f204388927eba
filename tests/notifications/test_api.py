"""The webhook settings API: the signing secret is created with the first URL and shown once; rotating
it shows the new one once and retires the old one for every later delivery."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.notifications.receiver import Receiver, allow_listed, documented_verify
from tierpilot.auth.models import User
from tierpilot.kit.crypto import decrypt
from tierpilot.kit.db import transaction
from tierpilot.notifications import service


def test_the_first_url_creates_a_signing_secret_shown_once_and_stored_encrypted(
        member_client: TestClient, member_user: dict[str, str]) -> None:
    with allow_listed("127.0.0.1:9"):
        _first_url_creates_the_secret(member_client, member_user)


def _first_url_creates_the_secret(member_client: TestClient, member_user: dict[str, str]) -> None:
    assert member_client.get("/api/notifications/webhook").json() == {"url": None, "has_secret": False,
                                                                       "secret": None}
    first = member_client.put("/api/notifications/webhook", json={"url": "http://127.0.0.1:9/a"}).json()
    secret = first["secret"]
    assert secret.startswith("whsec_") and len(secret) > 40
    assert first["has_secret"] is True
    assert member_client.get("/api/notifications/webhook").json() == {"url": "http://127.0.0.1:9/a",
                                                                       "has_secret": True, "secret": None}
    # changing or clearing the URL keeps the secret and never shows it again
    again = member_client.put("/api/notifications/webhook", json={"url": "http://127.0.0.1:9/b"}).json()
    assert again == {"url": "http://127.0.0.1:9/b", "has_secret": True, "secret": None}
    assert member_client.put("/api/notifications/webhook", json={"url": ""}).json() == {
        "url": None, "has_secret": True, "secret": None}
    with transaction() as s:
        stored = s.scalar(select(User.webhook_secret_encrypted).where(User.id == int(member_user["id"])))
    assert stored is not None and secret not in stored and decrypt(stored) == secret


def test_rotating_shows_the_new_secret_once_and_later_deliveries_use_only_it(
        member_client: TestClient, member_user: dict[str, str], receiver: Receiver) -> None:
    old = member_client.put("/api/notifications/webhook", json={"url": receiver.url}).json()["secret"]
    with transaction(write=True) as s:  # a notice due before the rotation, delivered after it
        service.notify(s, int(member_user["id"]), "restore.ready", "Batch ready")

    rotated = member_client.post("/api/notifications/webhook/secret/rotate")
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["secret"]
    assert rotated.json()["url"] == receiver.url and new.startswith("whsec_") and new != old
    assert member_client.get("/api/notifications/webhook").json()["secret"] is None

    assert service.deliver_due() == service.DeliveryStats(delivered=1)
    verify = documented_verify()
    signature, body = receiver.headers[0]["x-tierpilot-signature"], receiver.raw[0]
    assert verify(new, signature, body)
    assert not verify(old, signature, body)


def test_rotating_needs_a_signed_in_user(app_client: TestClient) -> None:
    assert app_client.post("/api/notifications/webhook/secret/rotate").status_code in (401, 403)
