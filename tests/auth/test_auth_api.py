from __future__ import annotations

from fastapi.testclient import TestClient

from tests.conftest import login


def test_login_sets_session_cookie_and_me_answers(app_client: TestClient, admin_user: dict[str, str]) -> None:
    r = app_client.post("/api/auth/login", json={"username": "admin", "password": admin_user["password"]})
    assert r.status_code == 200
    assert r.json()["user"]["role"] == "admin"
    set_cookie = r.headers.get_list("set-cookie")
    session_cookie = next(c for c in set_cookie if c.startswith("tierpilot_session="))
    assert "HttpOnly" in session_cookie and "SameSite=lax" in session_cookie
    me = app_client.get("/api/auth/me")
    assert me.status_code == 200 and me.json()["username"] == "admin"


def test_wrong_password_is_401_without_detail_leak(app_client: TestClient, admin_user: dict[str, str]) -> None:
    wrong = app_client.post("/api/auth/login", json={"username": "admin", "password": "nope-nope"})
    unknown = app_client.post("/api/auth/login", json={"username": "ghost", "password": "nope-nope"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"detail": "invalid username or password"}
    assert "tierpilot_session" not in app_client.cookies


def test_failed_logins_are_rate_limited(app_client: TestClient, member_user: dict[str, str]) -> None:
    from tierpilot.auth.throttle import login_limiter

    login_limiter().counters.clock = lambda: 1_900_000_000.0  # no time passes between the tries
    codes = [app_client.post("/api/auth/login", json={"username": "member", "password": f"bad-{i}-xx"}).status_code
             for i in range(7)]
    assert codes[:5] == [401] * 5
    assert codes[5:] == [429, 429]
    # from this address even the right password waits (other addresses: tests/auth/test_login_throttle.py)
    r = app_client.post("/api/auth/login", json={"username": "member", "password": member_user["password"]})
    assert r.status_code == 429


def test_malformed_json_is_422_with_message(app_client: TestClient) -> None:
    r = app_client.post("/api/auth/login", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert "JSON" in r.json()["detail"]
    r = app_client.post("/api/auth/login", json={"username": "x"})
    assert r.status_code == 422 and "password" in r.json()["detail"]


def test_every_api_route_but_login_and_health_needs_a_user(app_client: TestClient) -> None:
    assert app_client.get("/api/health").status_code in (200, 503)
    for path in ("/api/auth/me", "/api/keys", "/api/overview", "/api/users"):
        assert app_client.get(path).status_code == 401, path


def test_mutation_without_csrf_header_is_refused(client: TestClient) -> None:
    token = client.headers.pop("X-CSRF-Token")
    assert client.post("/api/keys").status_code == 403
    client.headers["X-CSRF-Token"] = token
    assert client.post("/api/keys").status_code == 201


def test_rotate_key_replaces_secret_and_old_key_stops(client: TestClient, admin_user: dict[str, str]) -> None:
    keys = client.get("/api/keys").json()
    assert [k["access_key_id"] for k in keys] == [admin_user["access_key_id"]]
    r = client.post(f"/api/keys/{admin_user['access_key_id']}/rotate")
    assert r.status_code == 200
    new = r.json()
    assert new["access_key_id"] != admin_user["access_key_id"] and len(new["secret_access_key"]) >= 30
    listed = client.get("/api/keys").json()
    assert [k["access_key_id"] for k in listed] == [new["access_key_id"]]
    assert "secret_access_key" not in listed[0]

    from tierpilot.auth.service import credential_for
    from tierpilot.kit.db import transaction

    with transaction() as s:
        assert credential_for(s, admin_user["access_key_id"]) is None
        cred = credential_for(s, new["access_key_id"])
        assert cred is not None and cred.secret_access_key == new["secret_access_key"]


def test_member_cannot_read_or_rotate_another_users_keys(
    client: TestClient, member_client: TestClient, admin_user: dict[str, str]
) -> None:
    assert member_client.get(f"/api/keys?user_id={admin_user['id']}").status_code == 403
    assert member_client.post(f"/api/keys/{admin_user['access_key_id']}/rotate").status_code == 404
    assert member_client.delete(f"/api/keys/{admin_user['access_key_id']}").status_code == 404
    assert member_client.get("/api/users").status_code == 403
    # and the admin's key still works
    assert [k["access_key_id"] for k in client.get("/api/keys").json()] == [admin_user["access_key_id"]]


def test_admin_creates_user_who_can_sign_in(client: TestClient, app_client: TestClient) -> None:
    r = client.post("/api/users", json={"username": "carol", "password": "carol-password"})
    assert r.status_code == 201
    assert r.json()["access_key"]["access_key_id"].startswith("TP")
    assert client.post("/api/users", json={"username": "carol", "password": "carol-password"}).status_code == 409
    assert client.post("/api/users", json={"username": "bad name!", "password": "carol-password"}).status_code == 422


def test_logout_revokes_the_session(client: TestClient) -> None:
    assert client.post("/api/auth/logout").status_code == 204
    assert client.get("/api/auth/me").status_code == 401


def test_bearer_token_for_scripts(client: TestClient, app_client: TestClient) -> None:
    token = client.post("/api/auth/tokens", json={"name": "ci"}).json()["token"]
    anon = TestClient(app_client.app, base_url="http://127.0.0.1")
    assert anon.get("/api/auth/me", headers={"authorization": f"Bearer {token}"}).json()["username"] == "admin"
    assert anon.get("/api/auth/me", headers={"authorization": "Bearer wrong"}).status_code == 401


def test_login_helper(app_client: TestClient, member_user: dict[str, str]) -> None:
    login(app_client, "member", member_user["password"])
    assert app_client.get("/api/auth/me").json()["role"] == "member"


def test_csrf_token_is_bound_to_the_session(client: TestClient, member_user: dict[str, str]) -> None:
    session, bound = client.cookies["tierpilot_session"], client.cookies["tierpilot_csrf"]
    with TestClient(client.app, base_url="http://127.0.0.1") as other:
        # the attacker's own sign-in gives them a valid pair of their own
        foreign = login(other, member_user["username"], member_user["password"]).cookies["tierpilot_csrf"]
    with TestClient(client.app, base_url="http://127.0.0.1") as victim:
        # a CSRF cookie planted by another origin of the same host (cookies ignore ports), echoed in the header
        for planted in ("planted-by-the-gateway-host", foreign):
            r = victim.post("/api/keys", headers={"cookie": f"tierpilot_session={session}; tierpilot_csrf={planted}",
                                                  "x-csrf-token": planted})
            assert r.status_code == 403, planted
        r = victim.post("/api/keys", headers={"cookie": f"tierpilot_session={session}; tierpilot_csrf={bound}",
                                              "x-csrf-token": bound})
        assert r.status_code == 201


def test_me_gives_back_the_session_bound_csrf_cookie(client: TestClient) -> None:
    bound = client.cookies["tierpilot_csrf"]
    client.cookies.delete("tierpilot_csrf")
    r = client.get("/api/auth/me")
    assert r.status_code == 200
    assert client.cookies["tierpilot_csrf"] == bound
