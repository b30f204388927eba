"""Accounts an admin can run, through the real API app on the scratch database.

The findings reproduced: an API token never expired and could not be listed or revoked (it kept working after
its owner logged out); users could not be disabled, deleted, demoted or have their password changed or reset.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.conftest import MEMBER_PASSWORD, login, make_user
from tierpilot.auth.models import ApiToken
from tierpilot.kit.db import transaction, utcnow


def make_tier(admin: TestClient, name: str = "hot-disk") -> None:
    """A posix tier through the admin API (buckets need one)."""
    r = admin.post("/api/tiers", json={"name": name, "driver": "posix", "storage_classes": ["STANDARD"],
                                       "config": {"path": f"acct-{uuid.uuid4().hex[:8]}/{name}"}})
    assert r.status_code == 201, r.text


def _bearer(app_client: TestClient, token: str) -> int:
    return app_client.get("/api/auth/me", headers={"authorization": f"Bearer {token}"}).status_code


@pytest.fixture
def other_client(db: str) -> Iterator[TestClient]:
    """A second anonymous client (its own cookie jar)."""
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield c


def test_api_token_is_listed_and_revoking_it_stops_it_at_once(member_client: TestClient,
                                                              other_client: TestClient) -> None:
    made = member_client.post("/api/auth/tokens", json={"name": "nightly sync", "expires_in_days": 30})
    assert made.status_code == 201, made.text
    token, token_id = made.json()["token"], made.json()["id"]
    assert member_client.post("/api/auth/logout").status_code == 204
    # the finding: still working after its owner logged out; it is a script's token, so that is by design,
    # but its owner can now see it and end it
    assert _bearer(other_client, token) == 200
    login(member_client, "member", MEMBER_PASSWORD)
    listed = member_client.get("/api/auth/tokens").json()
    assert [(t["id"], t["name"]) for t in listed] == [(token_id, "nightly sync")]
    assert "token" not in listed[0]
    assert listed[0]["last_used_at"] is not None  # the bearer request above
    expires = listed[0]["expires_at"]
    assert expires is not None and expires > utcnow().isoformat()
    assert member_client.delete(f"/api/auth/tokens/{token_id}").status_code == 204
    assert _bearer(other_client, token) == 401
    assert member_client.get("/api/auth/tokens").json() == []
    assert member_client.delete(f"/api/auth/tokens/{token_id}").status_code == 404


def test_expired_token_is_refused_and_lifetime_is_bounded(member_client: TestClient,
                                                          other_client: TestClient) -> None:
    token = member_client.post("/api/auth/tokens", json={"name": "short"}).json()
    assert token["expires_at"] is not None  # 90 days unless asked otherwise: never "never"
    too_long = member_client.post("/api/auth/tokens", json={"name": "forever", "expires_in_days": 100000})
    assert too_long.status_code == 422 and "expires_in_days" in too_long.json()["detail"]
    with transaction(write=True) as s:
        s.execute(update(ApiToken).where(ApiToken.id == token["id"]).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert _bearer(other_client, token["token"]) == 401


def test_member_cannot_see_or_revoke_anothers_tokens(client: TestClient, member_client: TestClient,
                                                     member_user: dict[str, str]) -> None:
    admin_token = client.post("/api/auth/tokens", json={"name": "admin's"}).json()
    assert member_client.delete(f"/api/auth/tokens/{admin_token['id']}").status_code == 404
    assert member_client.get("/api/auth/tokens", params={"user_id": 1}).status_code in (403, 404)
    # an admin sees and revokes a member's token
    mine = member_client.post("/api/auth/tokens", json={"name": "member's"}).json()
    seen = client.get("/api/auth/tokens", params={"user_id": member_user["id"]}).json()
    assert [t["id"] for t in seen] == [mine["id"]]
    assert client.delete(f"/api/auth/tokens/{mine['id']}").status_code == 204


def test_user_changes_password_and_other_sessions_end(member_client: TestClient, other_client: TestClient) -> None:
    login(other_client, "member", MEMBER_PASSWORD)
    wrong = member_client.post("/api/auth/password",
                               json={"current_password": "not-it-at-all", "new_password": "a-new-password-1"})
    # 403: a 401 would sign the dashboard out over a typo
    assert wrong.status_code == 403 and wrong.json()["field"] == "current_password"
    short = member_client.post("/api/auth/password", json={"current_password": MEMBER_PASSWORD, "new_password": "x"})
    assert short.status_code == 422 and "new_password" in short.json()["detail"]
    ok = member_client.post("/api/auth/password",
                            json={"current_password": MEMBER_PASSWORD, "new_password": "a-new-password-1"})
    assert ok.status_code == 200, ok.text
    assert member_client.get("/api/auth/me").status_code == 200  # this session stays
    assert other_client.get("/api/auth/me").status_code == 401  # the other one ended
    assert other_client.post("/api/auth/login", json={"username": "member", "password": MEMBER_PASSWORD}
                             ).status_code == 401
    login(other_client, "member", "a-new-password-1")


def test_password_change_revokes_tokens_and_s3_keys_when_asked(member_client: TestClient, other_client: TestClient,
                                                                member_user: dict[str, str]) -> None:
    from tierpilot.auth.service import credential_for

    token = member_client.post("/api/auth/tokens", json={"name": "script"}).json()["token"]
    kept = member_client.post("/api/auth/password",
                              json={"current_password": MEMBER_PASSWORD, "new_password": "a-new-password-1"})
    # nothing asked: the answer says what keeps working
    assert kept.status_code == 200, kept.text
    assert kept.json() == {"sessions_ended": 0, "tokens_revoked": 0, "s3_keys_revoked": 0,
                           "tokens_kept": 1, "s3_keys_kept": 1}
    assert _bearer(other_client, token) == 200
    revoked = member_client.post("/api/auth/password", json={
        "current_password": "a-new-password-1", "new_password": "a-new-password-2",
        "revoke_tokens": True, "revoke_s3_keys": True})
    assert revoked.status_code == 200, revoked.text
    assert revoked.json() == {"sessions_ended": 0, "tokens_revoked": 1, "s3_keys_revoked": 1,
                              "tokens_kept": 0, "s3_keys_kept": 0}
    assert _bearer(other_client, token) == 401
    assert member_client.get("/api/auth/me").status_code == 200  # the session that asked stays
    assert member_client.get("/api/keys").json() == []
    with transaction() as s:
        assert credential_for(s, member_user["access_key_id"]) is None


def test_password_change_revokes_nothing_when_refused(member_client: TestClient, other_client: TestClient,
                                                      member_user: dict[str, str]) -> None:
    token = member_client.post("/api/auth/tokens", json={"name": "script"}).json()["token"]
    wrong = member_client.post("/api/auth/password", json={
        "current_password": "not-it-at-all", "new_password": "a-new-password-1",
        "revoke_tokens": True, "revoke_s3_keys": True})
    assert wrong.status_code == 403
    assert _bearer(other_client, token) == 200
    assert [k["access_key_id"] for k in member_client.get("/api/keys").json()] == [member_user["access_key_id"]]


def test_disabled_user_is_refused_at_once_everywhere_in_the_api(client: TestClient, member_client: TestClient,
                                                                other_client: TestClient,
                                                                member_user: dict[str, str]) -> None:
    token = member_client.post("/api/auth/tokens", json={"name": "script"}).json()["token"]
    r = client.patch(f"/api/users/{member_user['id']}", json={"disabled": True})
    assert r.status_code == 200 and r.json()["disabled"] is True
    assert member_client.get("/api/auth/me").status_code == 401  # session ended
    assert _bearer(other_client, token) == 401  # token refused
    refused = other_client.post("/api/auth/login", json={"username": "member", "password": MEMBER_PASSWORD})
    assert refused.status_code == 403 and "disabled" in refused.json()["detail"]
    wrong = other_client.post("/api/auth/login", json={"username": "member", "password": "wrong-password"})
    assert wrong.status_code == 401  # whoever lacks the password learns nothing about the account
    assert client.patch(f"/api/users/{member_user['id']}", json={"disabled": False}).status_code == 200
    assert _bearer(other_client, token) == 200  # tokens and keys work again; sessions need a new login
    login(other_client, "member", MEMBER_PASSWORD)


def test_role_change_takes_effect_on_the_next_request(client: TestClient, member_client: TestClient,
                                                      member_user: dict[str, str]) -> None:
    assert member_client.get("/api/users").status_code == 403
    assert client.patch(f"/api/users/{member_user['id']}", json={"role": "admin"}).json()["role"] == "admin"
    assert member_client.get("/api/users").status_code == 200
    assert client.patch(f"/api/users/{member_user['id']}", json={"role": "member"}).json()["role"] == "member"
    assert member_client.get("/api/users").status_code == 403
    bad = client.patch(f"/api/users/{member_user['id']}", json={"role": "root"})
    assert bad.status_code == 422 and "role" in bad.json()["detail"]


def test_admin_cannot_lock_themselves_out(client: TestClient, admin_user: dict[str, str]) -> None:
    me = admin_user["id"]
    for body in ({"disabled": True}, {"role": "member"}):
        r = client.patch(f"/api/users/{me}", json=body)
        assert r.status_code == 409, body
    assert client.delete(f"/api/users/{me}").status_code == 409
    assert client.get("/api/users").status_code == 200


def test_admin_resets_a_password_and_every_session_of_that_user_ends(client: TestClient,
                                                                      member_client: TestClient,
                                                                      other_client: TestClient,
                                                                      member_user: dict[str, str]) -> None:
    r = client.post(f"/api/users/{member_user['id']}/password", json={"new_password": "reset-by-admin-1"})
    assert r.status_code == 204, r.text
    assert member_client.get("/api/auth/me").status_code == 401
    login(other_client, "member", "reset-by-admin-1")
    assert client.post("/api/users/999999/password", json={"new_password": "reset-by-admin-1"}).status_code == 404


def test_user_who_owns_buckets_is_not_deleted_until_they_are_gone(client: TestClient, member_client: TestClient,
                                                                  other_client: TestClient,
                                                                  member_user: dict[str, str]) -> None:
    make_tier(client)
    assert member_client.post("/api/buckets", json={"name": "member-data"}).status_code == 201
    refused = client.delete(f"/api/users/{member_user['id']}")
    assert refused.status_code == 409
    assert "member-data" in refused.json()["detail"] and refused.json()["owned"] == ["bucket member-data"]
    assert member_client.get("/api/auth/me").status_code == 200  # nothing changed
    assert member_client.delete("/api/buckets/member-data").status_code == 204
    assert client.delete(f"/api/users/{member_user['id']}").status_code == 204
    assert member_client.get("/api/auth/me").status_code == 401
    assert other_client.post("/api/auth/login", json={"username": "member", "password": MEMBER_PASSWORD}
                             ).status_code == 401
    assert "member" not in [u["username"] for u in client.get("/api/users").json()]
    assert client.delete(f"/api/users/{member_user['id']}").status_code == 404


def test_members_cannot_run_accounts(member_client: TestClient, admin_user: dict[str, str]) -> None:
    other = make_user("carol", "carol-password-1")
    assert member_client.patch(f"/api/users/{other['id']}", json={"disabled": True}).status_code == 403
    assert member_client.post(f"/api/users/{other['id']}/password",
                              json={"new_password": "hijacked-pass"}).status_code == 403
    assert member_client.delete(f"/api/users/{other['id']}").status_code == 403
