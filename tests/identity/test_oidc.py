"""OpenID Connect sign-in end to end against a real provider (oidc-provider, started by the suite): the login
redirect, the provider's login page filled like a browser would, the callback's checks, the user made from the
claims and their projects from the groups claim."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient

from tests.conftest import login
from tests.identity.conftest import API_CALLBACK, CLIENT_SECRET, Oidc, login_at_provider, oidc_env
from tests.servers import free_port
from tierpilot.kit.db import transaction


def _project(name: str) -> None:
    from tierpilot.projects import service as projects

    with transaction(write=True) as s:
        projects.create_project(s, name)


def _roles(username: str) -> dict[str, str]:
    from tierpilot.auth import repository as auth_repository
    from tierpilot.projects import repository as projects_repository

    with transaction() as s:
        user = auth_repository.get_user_by_name(s, username)
        assert user is not None
        return {p.name: projects_repository.role_of(s, p.id, user.id) or ""
                for p in projects_repository.list_of_user(s, user.id) if p.personal_user_id is None}


def sign_in(api: TestClient, username: str, password: str, next_path: str = "/") -> Any:
    """The browser's trip: our login redirect, the provider's page, back to our callback; its answer."""
    r = api.get("/api/auth/oidc/login", params={"next": next_path}, follow_redirects=False)
    assert r.status_code == 303, r.text
    assert "code_challenge_method=S256" in r.headers["location"]
    back = login_at_provider(r.headers["location"], username, password, API_CALLBACK)
    return api.get(f"/api/auth/oidc/callback?{back.query.decode()}", follow_redirects=False)


def test_first_sign_in_creates_the_user_in_the_project_their_group_maps_to(app_client: TestClient,
                                                                           oidc_settings: Oidc) -> None:
    _project("lab-a")
    r = sign_in(app_client, "alice", "alice-password", "/buckets")
    assert r.status_code == 303 and r.headers["location"] == "/buckets", r.headers.get("location")
    me = app_client.get("/api/auth/me")
    assert me.status_code == 200 and me.json()["username"] == "alice" and not me.json()["is_admin"]
    assert _roles("alice") == {"lab-a": "member"}
    # the session is a dashboard session like any other: CSRF-checked writes work
    app_client.headers["X-CSRF-Token"] = app_client.cookies["tierpilot_csrf"]
    assert app_client.post("/api/keys", json={"expires_in": 3600}).status_code == 201


def test_a_group_the_user_left_takes_its_project_away_at_the_next_sign_in(app_client: TestClient,
                                                                           oidc_settings: Oidc) -> None:
    from tierpilot.projects import repository as projects_repository
    from tierpilot.projects import service as projects

    _project("lab-a")
    _project("lab-b")
    _project("unmapped")
    assert sign_in(app_client, "alice", "alice-password").status_code == 303
    with transaction(write=True) as s:  # an admin had added her to lab-b (mapped) and to an unmapped project
        for name in ("lab-b", "unmapped"):
            p = projects_repository.get_by_name(s, name)
            assert p is not None
            projects.add_member(s, p, "alice", "member")
    assert _roles("alice") == {"lab-a": "member", "lab-b": "member", "unmapped": "member"}
    app_client.cookies.clear()
    assert sign_in(app_client, "alice", "alice-password").status_code == 303
    # lab-b follows her groups (none of them gives it); a project the mapping does not name is left alone
    assert _roles("alice") == {"lab-a": "member", "unmapped": "member"}


def test_a_group_mapped_to_a_missing_project_creates_nothing(app_client: TestClient, oidc_settings: Oidc,
                                                             configure: Any, caplog: pytest.LogCaptureFixture) -> None:
    from tierpilot.projects import repository as projects_repository

    configure({"TIERPILOT_GROUP_MAPPING": '{"lab-a": {"project": "no-such-project", "role": "manager"}}'})
    assert sign_in(app_client, "alice", "alice-password").status_code == 303
    assert _roles("alice") == {}
    with transaction() as s:
        assert projects_repository.get_by_name(s, "no-such-project") is None
    assert "no-such-project" in caplog.text


def test_a_provider_user_cannot_take_over_a_local_account_of_the_same_name(
        client: TestClient, oidc_settings: Oidc) -> None:
    anonymous = TestClient(client.app, base_url="http://127.0.0.1")
    r = sign_in(anonymous, "admin", "admin-idp-password")
    assert r.status_code == 303 and "sso_error=" in r.headers["location"]
    assert "another account" in parse_qs(urlsplit(r.headers["location"]).query)["sso_error"][0]
    assert anonymous.get("/api/auth/me").status_code == 401


def test_a_callback_whose_state_does_not_match_is_refused(app_client: TestClient, oidc_settings: Oidc) -> None:
    r = app_client.get("/api/auth/oidc/login", follow_redirects=False)
    back = login_at_provider(r.headers["location"], "alice", "alice-password", API_CALLBACK)
    query = parse_qs(back.query.decode())
    forged = app_client.get("/api/auth/oidc/callback", params={"code": query["code"][0], "state": "forged"},
                            follow_redirects=False)
    assert forged.status_code == 303 and "state" in forged.headers["location"]
    assert app_client.get("/api/auth/me").status_code == 401


def test_a_replayed_authorization_code_is_refused(app_client: TestClient, oidc_settings: Oidc) -> None:
    r = app_client.get("/api/auth/oidc/login", follow_redirects=False)
    back = login_at_provider(r.headers["location"], "alice", "alice-password", API_CALLBACK)
    attempt_cookie = app_client.cookies.get("tierpilot_oidc")
    assert app_client.get(f"/api/auth/oidc/callback?{back.query.decode()}",
                          follow_redirects=False).headers["location"] == "/"
    app_client.cookies.clear()
    app_client.cookies.set("tierpilot_oidc", attempt_cookie or "", path="/api/auth/oidc")
    again = app_client.get(f"/api/auth/oidc/callback?{back.query.decode()}", follow_redirects=False)
    assert again.status_code == 303 and "sso_error=" in again.headers["location"]
    assert app_client.get("/api/auth/me").status_code == 401


def test_a_provider_that_is_down_fails_the_sign_in_with_a_message_and_sessions_keep_working(
        client: TestClient, oidc_provider: Oidc, configure: Any) -> None:
    configure(oidc_env(oidc_provider, TIERPILOT_OIDC_DISCOVERY_URL=f"http://127.0.0.1:{free_port()}/.well-known"))
    anonymous = TestClient(client.app, base_url="http://127.0.0.1")
    r = anonymous.get("/api/auth/oidc/login", follow_redirects=False)
    assert r.status_code == 303 and "unreachable" in parse_qs(urlsplit(r.headers["location"]).query)["sso_error"][0]
    assert client.get("/api/auth/me").status_code == 200  # the admin's session still works
    status = client.get("/api/identity").json()
    assert status["oidc_configured"] and "unreachable" in status["oidc_error"]


def test_local_passwords_switched_off_leave_only_break_glass_admins(app_client: TestClient, configure: Any,
                                                                    admin_user: dict[str, str],
                                                                    member_user: dict[str, str]) -> None:
    configure({"TIERPILOT_LOCAL_PASSWORDS": "false", "TIERPILOT_BREAK_GLASS_ADMINS": "admin"})
    refused = app_client.post("/api/auth/login", json={"username": "member", "password": member_user["password"]})
    assert refused.status_code == 403 and "switched off" in refused.json()["detail"]
    login(app_client, "admin", admin_user["password"])
    assert app_client.get("/api/auth/providers").json()["local_passwords"] is False


# the ID token's checks, on tokens the provider would not issue ------------------------------------------------


def _validate(token: str) -> dict[str, Any]:
    from tierpilot.identity import oidc

    return oidc.validate_id_token(token)


def test_a_token_signed_by_the_provider_is_accepted(oidc_settings: Oidc) -> None:
    assert _validate(oidc_settings.sign({}))["sub"] == "alice"


@pytest.mark.parametrize("case", ["other-key", "wrong-audience", "wrong-issuer", "expired", "alg-none",
                                  "hs256-client-secret", "unknown-kid"])
def test_forged_or_stale_id_tokens_are_refused(oidc_settings: Oidc, case: str) -> None:
    from tierpilot.identity import oidc

    now = int(time.time())
    p = oidc_settings
    token = {
        "other-key": lambda: p.sign({}, key=rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        "wrong-audience": lambda: p.sign({"aud": "another-client"}),
        "wrong-issuer": lambda: p.sign({"iss": "http://127.0.0.1:9/other"}),
        "expired": lambda: p.sign({"iat": now - 7200, "exp": now - 3600}),
        "alg-none": lambda: jwt.encode({"iss": p.issuer, "aud": "tierpilot-test", "sub": "alice", "iat": now,
                                        "exp": now + 600}, None, algorithm="none"),
        "hs256-client-secret": lambda: jwt.encode({"iss": p.issuer, "aud": "tierpilot-test", "sub": "alice",
                                                   "iat": now, "exp": now + 600}, CLIENT_SECRET, algorithm="HS256"),
        "unknown-kid": lambda: p.sign({}, key=rsa.generate_private_key(public_exponent=65537, key_size=2048),
                                      kid="not-published"),
    }[case]()
    with pytest.raises(oidc.BadToken) as exc:
        _validate(token)
    assert exc.value.expired is (case == "expired")
