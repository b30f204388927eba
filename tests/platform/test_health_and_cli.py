from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]


def test_openapi_is_served_under_api(app_client: TestClient) -> None:
    spec = app_client.get("/api/openapi.json").json()
    assert "/api/auth/login" in spec["paths"] and "/api/health" in spec["paths"]


def test_unknown_api_path_is_json_404(app_client: TestClient) -> None:
    r = app_client.get("/api/does-not-exist")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/json")


def test_cli_users_create_prints_json_keys(db: str) -> None:
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db)
    out = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "users", "create", "grace", "--admin",
                          "--password", "grace-password", "--json"], env=env, capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["access_key_id"].startswith("TP") and len(body["secret_access_key"]) >= 30
    assert body["role"] == "admin"
    again = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "users", "create", "grace", "--json"], env=env,
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert again.returncode == 2 and "already exists" in again.stderr
