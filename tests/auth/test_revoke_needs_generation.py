"""A revocation the gateways cannot hear of is refused, not half done.

Gateways keep S3 credentials cached while the credentials generation stands still. Before, the API committed a
key's deletion and then bumped the generation best effort: with Redis down (or the SQLite installation's
generation file not writable) the bump failed silently, the API answered 204, and a gateway kept serving the
revoked key from its cache for its TTL. Now the API moves the generation before it commits: when it cannot,
it answers 503 and nothing is revoked; once the generation can be moved again the revocation works and stops
the key on the very next request.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from fastapi.testclient import TestClient

from tests.conftest import login, make_user
from tests.gateway.conftest import start_gateway, stop
from tests.servers import free_port, wait_port
from tierpilot.auth.service import CREDENTIALS_GENERATION
from tierpilot.kit import generations
from tierpilot.kit.settings import get_settings


@dataclass
class Redis:
    """A throwaway redis-server this test stops and starts again on the same port (empty when restarted)."""

    port: int
    tmp: str
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server not found: run `make setup`"
        self.proc = subprocess.Popen([binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                                      "--appendonly", "no", "--dir", self.tmp], stdout=subprocess.DEVNULL)
        wait_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def redis() -> Iterator[Redis]:
    server = Redis(free_port(), tempfile.mkdtemp(prefix="tierpilot-redis-revoke-"))
    server.start()
    yield server
    server.stop()
    shutil.rmtree(server.tmp, ignore_errors=True)


@pytest.fixture
def api_on(redis: Redis, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("TIERPILOT_REDIS_URL", redis.url)
    get_settings.cache_clear()
    yield redis.url
    monkeypatch.delenv("TIERPILOT_REDIS_URL")
    get_settings.cache_clear()


def _s3(url: str, user: dict[str, str]) -> BaseClient:
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=user["access_key_id"],
                        aws_secret_access_key=user["secret_access_key"], region_name="us-east-1")


def _code(s3: BaseClient) -> str:
    try:
        s3.list_buckets()
    except ClientError as exc:
        return str(exc.response["Error"]["Code"])
    return "OK"


def _key_ids(admin: TestClient, user: dict[str, str]) -> list[str]:
    return [k["access_key_id"] for k in admin.get("/api/keys", params={"user_id": user["id"]}).json()]


def test_revoking_a_key_while_redis_is_down_answers_503_and_revokes_nothing(
        db: str, api_on: str, redis: Redis, app_client: TestClient, admin_user: dict[str, str],
        data_dir: Path) -> None:
    admin = login(app_client, admin_user["username"], admin_user["password"])
    carol = make_user(f"carol-{uuid.uuid4().hex[:6]}", "carol-password-1")
    log = data_dir / f"gateway-revoke-{uuid.uuid4().hex[:8]}.log"
    url, proc = start_gateway(db, log, {"TIERPILOT_REDIS_URL": redis.url, "TIERPILOT_GATEWAY_CACHE_S": "60"})
    try:
        s3 = _s3(url, carol)
        assert _code(s3) == "OK"  # cached now, under the generation it read
        redis.stop()
        answer = admin.delete(f"/api/keys/{carol['access_key_id']}")
        assert answer.status_code == 503, answer.text
        assert "not made" in answer.json()["detail"]
        assert _key_ids(admin, carol) == [carol["access_key_id"]]  # not revoked, and not said to be
        assert _code(s3) == "OK"  # the key is valid: the gateway (no Redis either) reads it from the database
        redis.start()  # empty: the generation it held is gone
        assert admin.delete(f"/api/keys/{carol['access_key_id']}").status_code == 204
        assert _key_ids(admin, carol) == []
        assert _code(s3) == "InvalidAccessKeyId"  # the very next request
    finally:
        stop(proc)


def test_disabling_a_user_when_the_generation_file_is_not_writable_answers_503(
        db: str, app_client: TestClient, admin_user: dict[str, str]) -> None:
    path = generations.local_file(CREDENTIALS_GENERATION)
    if path is None:
        pytest.skip("the generation file is the SQLite installation's (without Redis)")
    admin = login(app_client, admin_user["username"], admin_user["password"])
    carol = make_user(f"carol-{uuid.uuid4().hex[:6]}", "carol-password-1")
    path.parent.mkdir(exist_ok=True)
    path.unlink(missing_ok=True)
    path.mkdir()  # where the file should be: appending to it fails (EISDIR), as on a read-only volume
    try:
        answer = admin.patch(f"/api/users/{carol['id']}", json={"disabled": True})
        assert answer.status_code == 503, answer.text
        assert "generation file" in answer.json()["detail"]
        users = {u["username"]: u for u in admin.get("/api/users").json()}
        assert not users[carol["username"]]["disabled"]
    finally:
        path.rmdir()
    assert admin.patch(f"/api/users/{carol['id']}", json={"disabled": True}).status_code == 200
