"""Production is safe by default: no demo seed, Secure session cookies, security headers on every response."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.platform.test_up import _up
from tierpilot.kit.settings import Settings

SECRET = "a-production-secret-for-the-test-0123456789"
SECURITY_HEADERS = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
}


def _assert_security_headers(r: httpx.Response) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert r.headers.get(name) == value, (r.request.url, name, r.headers)
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "default-src " in csp, csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, csp


@pytest.mark.parametrize("environment", ["production"])
def test_production_turns_off_the_demo_seed_and_turns_on_secure_cookies(
        environment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TIERPILOT_SEED_DEMO", "TIERPILOT_COOKIE_SECURE"):
        monkeypatch.delenv(var, raising=False)
    s = Settings(environment=environment, secret_key=SECRET)
    assert s.seed_demo is False and s.cookie_secure is True


def test_local_keeps_the_demo_seed_and_plain_cookies(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("TIERPILOT_SEED_DEMO", "TIERPILOT_COOKIE_SECURE", "TIERPILOT_ENVIRONMENT"):
        monkeypatch.delenv(var, raising=False)
    s = Settings()
    assert s.seed_demo is True and s.cookie_secure is False


def test_production_honours_an_explicit_demo_seed_and_plain_cookies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERPILOT_SEED_DEMO", "true")
    monkeypatch.setenv("TIERPILOT_COOKIE_SECURE", "false")
    s = Settings(environment="production", secret_key=SECRET)
    assert s.seed_demo is True and s.cookie_secure is False


def test_an_unknown_environment_is_refused() -> None:
    with pytest.raises(ValueError, match="environment"):
        Settings(environment="prod", secret_key=SECRET)


@pytest.mark.parametrize("path", ["/", "/reservations", "/favicon.svg", "/api/health", "/api/openapi.json",
                                  "/api/does-not-exist", "/api/overview", "/api/tiers/not-a-number"])
def test_every_response_carries_the_security_headers(app_client: TestClient, path: str) -> None:
    _assert_security_headers(app_client.get(path))


def test_validation_and_auth_errors_carry_the_security_headers(app_client: TestClient) -> None:
    r = app_client.post("/api/auth/login", json={"username": 1})
    assert r.status_code == 422
    _assert_security_headers(r)
    r = app_client.post("/api/auth/login", json={"username": "nobody", "password": "wrong-password"})
    assert r.status_code == 401
    _assert_security_headers(r)


def test_the_api_docs_page_gets_a_policy_that_lets_it_load(app_client: TestClient) -> None:
    """Swagger UI's page has one inline script: its hash, not 'unsafe-inline', lets it run."""
    import base64
    import hashlib
    import re

    r = app_client.get("/api/docs")
    assert r.status_code == 200
    scripts = re.findall(r"<script>(.*?)</script>", r.text, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    csp = r.headers["content-security-policy"]
    assert f"'sha256-{digest}'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    assert r.headers["x-frame-options"] == "DENY"


def test_up_in_production_seeds_nothing_and_serves_secure_cookies_and_headers(tmp_path: Path) -> None:
    with _up(tmp_path, TIERPILOT_ENVIRONMENT="production", TIERPILOT_SECRET_KEY=SECRET) as up:
        with httpx.Client(base_url=up.api) as c:
            demo = c.post("/api/auth/login", json={"username": "demo", "password": "demo-password"})
            assert demo.status_code == 401, demo.text
            r = c.post("/api/auth/login", json={"username": "boss", "password": "boss-password-1"})
            assert r.status_code == 200, up.tail()
            cookies = r.headers.get_list("set-cookie")
            assert cookies and all("; secure" in h.lower() for h in cookies), cookies
            _assert_security_headers(r)
            _assert_security_headers(c.get("/"))
            _assert_security_headers(c.get("/api/health"))
        assert "demo-password" not in up.tail()


def test_the_dashboard_runs_only_its_own_code_and_api_answers_load_nothing(app_client: TestClient) -> None:
    page = app_client.get("/").headers["content-security-policy"]
    assert "script-src 'self';" in page and "connect-src 'self'" in page and "object-src 'none'" in page
    assert app_client.get("/api/health").headers["content-security-policy"].startswith("default-src 'none'")
