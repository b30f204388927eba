"""LDAP sign-in against a real OpenLDAP slapd the suite starts: a simple bind as the user, groups mapped to
projects, and user names that would inject into a filter or DN refused before anything reaches the directory."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import login
from tests.identity.conftest import LDAP_BASE, ldap_env
from tests.identity.test_oidc import _project, _roles


@pytest.fixture
def ldap_settings(slapd: str, configure: Any) -> str:
    configure(ldap_env(slapd))
    return slapd


def test_a_directory_user_signs_in_and_lands_in_the_project_their_group_maps_to(
        app_client: TestClient, ldap_settings: str) -> None:
    _project("lab-a")
    login(app_client, "carol", "carol-password")
    assert app_client.get("/api/auth/me").json()["username"] == "carol"
    assert _roles("carol") == {"lab-a": "member"}


def test_the_bind_dn_template_works_without_a_service_account(app_client: TestClient, slapd: str,
                                                              configure: Any) -> None:
    _project("lab-b")
    configure(ldap_env(slapd, TIERPILOT_LDAP_SERVICE_DN="", TIERPILOT_LDAP_SERVICE_PASSWORD="",
                       TIERPILOT_LDAP_BIND_DN_TEMPLATE=f"uid={{username}},ou=people,{LDAP_BASE}"))
    login(app_client, "dave", "dave-password")
    assert _roles("dave") == {"lab-b": "viewer"}


def test_a_wrong_password_is_refused(app_client: TestClient, ldap_settings: str) -> None:
    r = app_client.post("/api/auth/login", json={"username": "carol", "password": "wrong-password"})
    assert r.status_code == 401
    assert app_client.get("/api/auth/me").status_code == 401


def test_an_empty_password_never_reaches_the_directory_as_an_unauthenticated_bind(ldap_settings: str) -> None:
    from tierpilot.identity import ldap
    from tierpilot.kit.errors import Unauthorized

    with pytest.raises(Unauthorized):
        ldap.check_password("carol", "")


@pytest.mark.parametrize("name", ["*", "carol)(uid=*", "carol*", "carol,ou=people", "carol\\2a", "(|(uid=*))"])
def test_user_names_that_would_inject_into_a_filter_or_dn_are_refused(app_client: TestClient, ldap_settings: str,
                                                                      name: str) -> None:
    r = app_client.post("/api/auth/login", json={"username": name, "password": "carol-password"})
    assert r.status_code == 401 and "letters, digits" in r.json()["detail"]


def test_special_characters_are_escaped_in_the_filter_and_dn() -> None:
    from ldap3.utils.conv import escape_filter_chars
    from ldap3.utils.dn import escape_rdn

    # what reaches the directory if a name with them ever passed the check (RFC 4515, RFC 4514)
    assert escape_filter_chars("a*)(b\\") == "a\\2a\\29\\28b\\5c"
    assert escape_rdn("a,b+c") == "a\\,b\\+c"


def test_a_directory_that_is_down_is_a_503_with_a_message_and_local_admins_still_sign_in(
        app_client: TestClient, configure: Any, admin_user: dict[str, str]) -> None:
    from tests.servers import free_port

    configure(ldap_env(f"ldap://127.0.0.1:{free_port()}"))
    r = app_client.post("/api/auth/login", json={"username": "carol", "password": "carol-password"})
    assert r.status_code == 503 and "unreachable" in r.json()["detail"]
    login(app_client, "admin", admin_user["password"])


def test_plain_ldap_to_another_host_is_refused(app_client: TestClient, configure: Any) -> None:
    configure(ldap_env("ldap://directory.invalid"))
    r = app_client.post("/api/auth/login", json={"username": "carol", "password": "carol-password"})
    assert r.status_code == 503 and "START_TLS" in r.json()["detail"]
