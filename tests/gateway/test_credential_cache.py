"""The gateway's S3 credential cache without Redis: on SQLite the credentials generation lives in a
file beside the database, so a gateway process caches keys (no database read per request) and still stops a
disabled user's keys on the very next request; on PostgreSQL without Redis nothing is cached.

What is cached shows by a change made behind the API's back (a row updated without a bump): a caching
gateway keeps answering from its cache, one that does not cache refuses at once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from sqlalchemy import update

from tests.gateway.conftest import Gateway, start_gateway, stop
from tierpilot.kit import generations
from tierpilot.kit.settings import get_settings

TRIALS = 10


@pytest.fixture(scope="module")
def cached_gw(gateway: Gateway, db_url: str) -> Iterator[str]:
    """A gateway process without Redis whose caches live a minute (the window cannot close in a test)."""
    assert not get_settings().redis_url
    log = gateway.log.with_name(f"gateway-creds-{uuid.uuid4().hex[:8]}.log")
    url, proc = start_gateway(db_url, log, {"TIERPILOT_GATEWAY_CACHE_S": "60"})
    yield url
    stop(proc)


def _user_with_key(name: str) -> tuple[int, BaseClient, str]:
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        user, key = auth.create_user(s, f"{name}-{uuid.uuid4().hex[:6]}", "cache-password-1")
        user_id = user.id
    return user_id, key.access_key_id, key.secret_access_key  # type: ignore[return-value]


def _client(url: str, key_id: str, secret: str) -> BaseClient:
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=key_id, aws_secret_access_key=secret,
                        region_name="us-east-1")


def _code(call: object) -> str | None:
    try:
        call()  # type: ignore[operator]
    except ClientError as exc:
        return str(exc.response["Error"]["Code"])
    return None


def _disable_behind_the_apis_back(user_id: int, disabled: bool) -> None:
    from tierpilot.auth.models import User
    from tierpilot.kit.db import transaction, utcnow

    with transaction(write=True) as s:
        s.execute(update(User).where(User.id == user_id).values(disabled_at=utcnow() if disabled else None))


def _set_disabled_through_the_service(user_id: int, disabled: bool) -> None:
    from tierpilot.auth import accounts, repository
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        admin = next(u for u in repository.list_users(s) if u.is_admin and not u.disabled)
        accounts.set_disabled(s, admin, user_id, disabled)


def test_without_redis_sqlite_caches_keys_and_a_disabled_user_stops_at_once(cached_gw: str, db_url: str) -> None:
    user_id, key_id, secret = _user_with_key("cache")
    s3 = _client(cached_gw, key_id, secret)  # type: ignore[arg-type]
    caches = generations.local_file("auth:credentials", db_url) is not None
    assert caches == db_url.startswith("sqlite")
    for _ in range(TRIALS):
        s3.list_buckets()  # cached now (on SQLite)
        _disable_behind_the_apis_back(user_id, True)
        assert _code(s3.list_buckets) == (None if caches else "AllAccessDisabled")
        _disable_behind_the_apis_back(user_id, False)
        s3.list_buckets()
        _set_disabled_through_the_service(user_id, True)  # commits, then bumps the generation
        assert _code(s3.list_buckets) == "AllAccessDisabled"  # the very next request, no wait
        _set_disabled_through_the_service(user_id, False)
    s3.list_buckets()


def test_the_generation_file_sits_beside_the_sqlite_database_and_each_bump_moves_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    path = generations.local_file("auth:credentials", url)
    assert path == tmp_path / "x.db.generations" / "auth-credentials"
    assert generations.local_file("auth:credentials", "postgresql+psycopg://u@h/db") is None
    assert generations.local_file("auth:credentials", "sqlite://") is None
    assert path is not None
    clock = [0.0]
    reader = generations._FileCounter(path, clock=lambda: clock[0])
    seen = {reader.value()}  # no file yet: 0
    for _ in range(3):
        generations._move_file(path)
        clock[0] += generations.REVALIDATE_S  # a file made now is seen after this at the latest; a move at once
        seen.add(reader.value())
        generations._move_file(path)
        seen.add(reader.value())
    path.unlink()
    clock[0] += generations.REVALIDATE_S
    seen.add(reader.value())  # gone: 0 again
    generations._move_file(path)  # made again: a new generation
    clock[0] += generations.REVALIDATE_S
    seen.add(reader.value())
    assert len(seen) == 8 and 0 in seen


def test_without_redis_sqlite_a_generation_file_removed_under_a_running_gateway_still_stops_a_user_at_once(
        cached_gw: str, db_url: str) -> None:
    path = generations.local_file("auth:credentials", db_url)
    if path is None:
        pytest.skip("the generation file is the SQLite installation's (without Redis)")
    user_id, key_id, secret = _user_with_key("removed")
    s3 = _client(cached_gw, key_id, secret)  # type: ignore[arg-type]
    for _ in range(3):
        s3.list_buckets()  # cached under the file the gateway maps
        path.unlink(missing_ok=True)  # the gateway keeps the mapping of the old file until it looks again
        s3.list_buckets()
        _set_disabled_through_the_service(user_id, True)  # makes the file again, and waits for readers to look
        assert _code(s3.list_buckets) == "AllAccessDisabled"
        _set_disabled_through_the_service(user_id, False)
