"""What a member cannot make the API do: parse a huge body, echo a huge input back; and what production tells an
anonymous caller (only the status) and every browser (HSTS)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from tierpilot.kit.settings import Settings, get_settings

SECRET = "a-production-secret-for-the-test-0123456789"


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_parsed(client: TestClient) -> None:
    big = b'{"rules": [' + b'{"id": "x"},' * 200_000 + b'{"id": "y"}]}'
    assert len(big) > 1 << 21
    r = client.put("/api/lifecycle/buckets/nope/configuration", content=big,
                   headers={"content-type": "application/json"})
    assert r.status_code == 413, r.text[:300]
    assert "1048576" in r.json()["detail"]


def test_a_422_does_not_echo_the_whole_input(client: TestClient) -> None:
    r = client.post("/api/lifecycle/buckets/nope/rules", json={"id": "x" * 500_000, "filter": {}})
    assert r.status_code == 422
    assert len(r.content) < 8_000, len(r.content)
    assert "id" in r.json()["detail"]


def test_production_needs_a_secret_key_of_32_characters() -> None:
    with pytest.raises(ValidationError, match="32 characters"):
        Settings(environment="production", secret_key="x")
    assert Settings(environment="production", secret_key=SECRET).secret_key == SECRET


@pytest.fixture
def production(db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    from tierpilot.app.api import create_app

    monkeypatch.setenv("TIERPILOT_ENVIRONMENT", "production")
    monkeypatch.setenv("TIERPILOT_SECRET_KEY", SECRET)
    get_settings.cache_clear()
    with TestClient(create_app()) as c:
        yield c
    monkeypatch.undo()
    get_settings.cache_clear()


def test_production_answers_anonymous_health_with_the_status_only_and_sends_hsts(production: TestClient) -> None:
    r = production.get("/api/health")
    assert set(r.json()) == {"status"}, r.json()
    assert r.headers["strict-transport-security"].startswith("max-age=")


def test_health_details_stay_for_loopback_callers_and_local_installations(client: TestClient) -> None:
    r = client.get("/api/health")
    assert {"status", "database", "broker", "version"} <= set(r.json())
    assert "strict-transport-security" not in r.headers
