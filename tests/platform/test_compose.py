"""docker-compose.yml cannot run here (no Docker engine): check it by reading it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tierpilot.app.cli import app

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
TIERPILOT_SERVICES = ["migrate", "api", "gateway", "worker", "beat"]
LONG_RUNNING = ["postgres", "redis", "api", "gateway", "worker", "beat"]


def test_compose_has_the_production_services() -> None:
    assert set(COMPOSE["services"]) >= {"postgres", "redis", *TIERPILOT_SERVICES}
    assert set(COMPOSE["volumes"]) >= {"pgdata", "redisdata", "tiers"}


@pytest.mark.parametrize("service", LONG_RUNNING)
def test_every_long_running_service_restarts_and_has_a_health_check(service: str) -> None:
    spec = COMPOSE["services"][service]
    assert spec["restart"] == "unless-stopped"
    check = spec["healthcheck"]
    assert check["test"][0] in ("CMD", "CMD-SHELL") and check["interval"] and check["retries"] >= 1


def test_the_one_shot_migration_is_not_restarted() -> None:
    assert COMPOSE["services"]["migrate"]["restart"] == "no"


@pytest.mark.parametrize("service", ["api", "gateway", "worker", "beat"])
def test_tierpilot_health_checks_are_real_cli_entry_points(service: str) -> None:
    test = COMPOSE["services"][service]["healthcheck"]["test"]
    assert test[:4] == ["CMD", "tierpilot", "health", service]
    result = CliRunner().invoke(app, [*test[2:], "--help"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("service", "setting"), [("api", "api_port"), ("gateway", "gateway_port")])
def test_health_checks_probe_the_port_the_service_serves(service: str, setting: str) -> None:
    """`tierpilot health` probes the configured port: the command's --port must be that port."""
    from tierpilot.kit.settings import Settings

    command = COMPOSE["services"][service]["command"]
    env = COMPOSE["services"][service]["environment"]
    configured = int(env.get(f"TIERPILOT_{setting.upper()}", Settings.model_fields[setting].default))
    assert int(command[command.index("--port") + 1]) == configured


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


def test_dockerfile_builds_the_frontend_and_installs_the_package() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "npm run build" in text and "pip install" in text
