"""STS AssumeRoleWithWebIdentity on a real gateway process, called by the AWS CLI v2 (/usr/bin/aws) with an ID token
from the real provider: keys that reach the user's project bucket, refused with ExpiredToken after their lifetime;
replayed and forged tokens refused with the codes STS clients expect."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.conftest import start_gateway, stop
from tests.identity.conftest import Oidc, oidc_env, provider_id_token
from tierpilot.kit.db import transaction

AWS = "/usr/bin/aws"  # Debian's AWS CLI v2 (honours --endpoint-url)
LIFETIME_S = 20  # each CLI call takes a second or two on a busy machine


@pytest.fixture
def sts_gateway(db: str, oidc_provider: Oidc, configure: Any, data_dir: Path) -> Iterator[str]:
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    env = oidc_env(oidc_provider, TIERPILOT_STS_MIN_DURATION_S="2")
    configure(env)
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name="hot-disk", driver="posix", storage_classes=["STANDARD"],
                                   config={"path": f"sts-{uuid.uuid4().hex[:8]}/hot"}))
    url, proc = start_gateway(db, data_dir / f"gateway-sts-{uuid.uuid4().hex[:8]}.log", env)
    yield url
    stop(proc)


def _aws(*args: str, creds: dict[str, str] | None = None, tmp: Path) -> subprocess.CompletedProcess[str]:
    # parameter_validation off: the CLI would refuse a DurationSeconds under AWS's 900 before sending it
    config = tmp / "aws-config"
    config.write_text("[default]\nregion = us-east-1\nparameter_validation = false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {"AWS_CONFIG_FILE": str(config), "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "none")}
    if creds:
        env |= {"AWS_ACCESS_KEY_ID": creds["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": creds["SecretAccessKey"],
                "AWS_SESSION_TOKEN": creds["SessionToken"]}
    return subprocess.run([AWS, *args, "--output", "json"], env=env, capture_output=True, text=True, timeout=120)


def _assume(gateway: str, token: str, duration: int, tmp: Path) -> subprocess.CompletedProcess[str]:
    return _aws("sts", "assume-role-with-web-identity", "--endpoint-url", gateway, "--no-sign-request",
                "--role-arn", "arn:aws:iam::000000000000:role/tierpilot", "--role-session-name", "test",
                "--web-identity-token", token, "--duration-seconds", str(duration), tmp=tmp)


def _project_bucket(project: str, bucket: str) -> None:
    from tierpilot.auth import service as auth
    from tierpilot.catalog import service as catalog
    from tierpilot.projects import service as projects

    with transaction(write=True) as s:
        p = projects.create_project(s, project)
        owner, _ = auth.create_user(s, f"owner-{uuid.uuid4().hex[:6]}", "owner-password-1")
        catalog.create_bucket(s, owner_id=owner.id, name=bucket, project_id=p.id)


@pytest.mark.skipif(not Path(AWS).exists(), reason="Debian's awscli (v2) at /usr/bin/aws")
def test_cli_keys_reach_the_project_bucket_and_expire(sts_gateway: str, oidc_provider: Oidc,
                                                      tmp_path: Path) -> None:
    _project_bucket("lab-a", "lab-a-data")
    token = provider_id_token(oidc_provider, "alice")
    started = time.monotonic()
    r = _assume(sts_gateway, token, LIFETIME_S, tmp_path)
    assert r.returncode == 0, r.stderr
    creds = json.loads(r.stdout)["Credentials"]
    assert creds["AccessKeyId"].startswith("TS") and creds["SessionToken"] and creds["Expiration"]
    put = _aws("s3api", "put-object", "--endpoint-url", sts_gateway, "--bucket", "lab-a-data", "--key", "hello.txt",
               "--body", str(Path(__file__)), creds=creds, tmp=tmp_path)
    assert put.returncode == 0, put.stderr
    listed = _aws("s3api", "list-objects-v2", "--endpoint-url", sts_gateway, "--bucket", "lab-a-data",
                  creds=creds, tmp=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [o["Key"] for o in json.loads(listed.stdout)["Contents"]] == ["hello.txt"]
    # the session token is part of the credentials: without it the keys are refused
    no_token = _aws("s3api", "list-objects-v2", "--endpoint-url", sts_gateway, "--bucket", "lab-a-data",
                    creds={**creds, "SessionToken": "forged"}, tmp=tmp_path)
    assert no_token.returncode != 0 and "InvalidToken" in no_token.stderr
    time.sleep(max(0.0, started + LIFETIME_S + 1 - time.monotonic()))
    late = _aws("s3api", "list-objects-v2", "--endpoint-url", sts_gateway, "--bucket", "lab-a-data",
                creds=creds, tmp=tmp_path)
    assert late.returncode != 0 and "ExpiredToken" in late.stderr, late.stderr


@pytest.mark.skipif(not Path(AWS).exists(), reason="Debian's awscli (v2) at /usr/bin/aws")
def test_replayed_forged_and_expired_tokens_get_the_sts_error_a_client_expects(
        sts_gateway: str, oidc_provider: Oidc, tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    token = provider_id_token(oidc_provider, "bob")
    assert _assume(sts_gateway, token, 900, tmp_path).returncode == 0
    replay = _assume(sts_gateway, token, 900, tmp_path)
    assert "InvalidIdentityToken" in replay.stderr and "used already" in replay.stderr
    now = int(time.time())
    expired = _assume(sts_gateway, oidc_provider.sign({"iat": now - 7200, "exp": now - 3600}), 900, tmp_path)
    assert "ExpiredTokenException" in expired.stderr, expired.stderr
    forged_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for forged in (oidc_provider.sign({}, key=forged_key), oidc_provider.sign({"aud": "someone-else"}),
                   oidc_provider.sign({"iss": "http://127.0.0.1:9"}), "not-a-jwt"):
        r = _assume(sts_gateway, forged, 900, tmp_path)
        assert r.returncode != 0 and "InvalidIdentityToken" in r.stderr, r.stderr
    too_long = _assume(sts_gateway, oidc_provider.sign({"sub": "carol", "preferred_username": "carol"}), 50000,
                       tmp_path)
    assert "ValidationError" in too_long.stderr
