"""docker-compose.yml cannot run here (no Docker engine): check it by reading it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tierpilot.cli import app

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
TIERPILOT_SERVICES = ["migrate", "api", "gateway", "worker", "beat"]


def test_compose_has_the_production_services() -> None:
    assert set(COMPOSE["services"]) >= {"postgres", "redis", *TIERPILOT_SERVICES}
    for name in ("postgres", "redis", "api", "gateway"):
        assert "healthcheck" in COMPOSE["services"][name], name
    assert set(COMPOSE["volumes"]) >= {"pgdata", "redisdata", "tiers"}


@pytest.mark.parametrize("service", TIERPILOT_SERVICES)
def test_every_service_command_is_a_real_cli_entry_point(service: str) -> None:
    spec = COMPOSE["services"][service]
    command = spec["command"]
    assert command[0] == "tierpilot"
    # the command with --help parses every option it passes: an unknown option or command fails here
    result = CliRunner().invoke(app, [*command[1:], "--help"])
    assert result.exit_code == 0, f"{service}: {' '.join(command)}\n{result.output}"


@pytest.mark.parametrize("service", TIERPILOT_SERVICES)
def test_tierpilot_services_use_postgres_and_redis(service: str) -> None:
    env = COMPOSE["services"][service]["environment"]
    assert env["TIERPILOT_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert env["TIERPILOT_DATABASE_URL"].endswith("@postgres:5432/tierpilot")
    assert env["TIERPILOT_REDIS_URL"] == "redis://redis:6379/0"
    assert env["TIERPILOT_ENVIRONMENT"] == "production"
    assert "postgres" in COMPOSE["services"][service]["depends_on"]


def test_gateway_healthcheck_uses_the_gateways_health_path() -> None:
    from tierpilot.gateway.app import HEALTH_PATH

    probe = " ".join(COMPOSE["services"]["gateway"]["healthcheck"]["test"])
    assert f"127.0.0.1:9000{HEALTH_PATH}" in probe


def test_dockerfile_builds_the_frontend_and_installs_the_package() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "npm run build" in text and "pip install" in text
