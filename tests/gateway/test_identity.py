"""Identity is never reused or cached across owners: a gateway process that cached a bucket (or an access
key) keeps no grant once the bucket (or key) is gone, whatever another process did meanwhile.

Two gateway processes share the database, as behind a load balancer: ``gw_a`` caches for a minute so the
cache window cannot close during a test; the package's gateway is the "other" process."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import replace

import boto3
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.waiting import wait_until

LONG_CACHE_S = "60"


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


@pytest.fixture(scope="module")
def gw_a(gateway: Gateway, db_url: str) -> Iterator[Gateway]:
    """A second gateway process on the same database whose caches live a minute."""
    log = gateway.log.with_name(f"gateway-a-{uuid.uuid4().hex[:8]}.log")
    env = {"TIERPILOT_GATEWAY_CACHE_S": LONG_CACHE_S}
    url, proc = start_gateway(db_url, log, env)
    yield replace(gateway, url=url, proc=proc, log=log, env=env)
    stop(proc)


def _denied(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(ClientError) as exc:
        call(*args, **kwargs)  # type: ignore[operator]
    return _code(exc)


def test_recreated_bucket_name_never_reaches_the_old_owners_grant(gateway: Gateway, gw_a: Gateway) -> None:
    """The issue's race: Alice lists rx-N through process A, deletes it through B; Bob creates rx-N through B
    and uploads; Alice's keys on A (which cached rx-N as hers) must not read, list or delete Bob's object."""
    name = f"rx-{uuid.uuid4().hex[:10]}"
    alice_a, alice_b, bob_b = gw_a.client("alice"), gateway.client("alice"), gateway.client("bob")
    alice_a.create_bucket(Bucket=name)
    alice_a.put_object(Bucket=name, Key="alice-file", Body=b"alice")
    assert [o["Key"] for o in alice_a.list_objects_v2(Bucket=name)["Contents"]] == ["alice-file"]
    alice_b.delete_object(Bucket=name, Key="alice-file")
    alice_b.delete_bucket(Bucket=name)
    bob_b.create_bucket(Bucket=name)
    bob_b.put_object(Bucket=name, Key="bob-secret", Body=b"bob's data")

    allowed = {"AccessDenied", "NoSuchBucket"}
    assert _denied(alice_a.get_object, Bucket=name, Key="bob-secret") in allowed
    assert _denied(alice_a.head_object, Bucket=name, Key="bob-secret") in {"403", "404"}
    assert _denied(alice_a.list_objects_v2, Bucket=name) in allowed
    assert _denied(alice_a.list_objects, Bucket=name) in allowed
    assert _denied(alice_a.delete_object, Bucket=name, Key="bob-secret") in allowed
    assert _denied(alice_a.delete_objects, Bucket=name, Delete={"Objects": [{"Key": "bob-secret"}]}) in allowed
    assert _denied(alice_a.put_object, Bucket=name, Key="bob-secret", Body=b"overwritten") in allowed
    assert _denied(alice_a.get_object_tagging, Bucket=name, Key="bob-secret") in allowed
    assert _denied(alice_a.copy_object, Bucket=name, Key="copy", CopySource=f"{name}/bob-secret") in allowed
    assert _denied(alice_a.create_multipart_upload, Bucket=name, Key="mpu") in allowed
    assert _denied(alice_a.head_bucket, Bucket=name) in {"403", "404"}
    assert _denied(alice_a.delete_bucket, Bucket=name) in allowed

    # Bob's object is untouched and Bob, through the process that had the name cached as Alice's, reaches it
    assert bob_b.get_object(Bucket=name, Key="bob-secret")["Body"].read() == b"bob's data"
    bob_a = gw_a.client("bob")
    assert bob_a.get_object(Bucket=name, Key="bob-secret")["Body"].read() == b"bob's data"
    assert [o["Key"] for o in bob_a.list_objects_v2(Bucket=name)["Contents"]] == ["bob-secret"]


def test_deleted_bucket_is_gone_for_a_process_that_cached_it(gateway: Gateway, gw_a: Gateway) -> None:
    """A bucket deleted through another process answers NoSuchBucket at once, not an empty bucket."""
    name = f"gone-{uuid.uuid4().hex[:10]}"
    alice_a = gw_a.client("alice")
    alice_a.create_bucket(Bucket=name)
    alice_a.list_objects_v2(Bucket=name)
    gateway.client("alice").delete_bucket(Bucket=name)
    assert _denied(alice_a.list_objects_v2, Bucket=name) == "NoSuchBucket"
    assert _denied(alice_a.get_object, Bucket=name, Key="k") == "NoSuchBucket"
    assert _denied(alice_a.delete_object, Bucket=name, Key="k") == "NoSuchBucket"
    assert _denied(alice_a.put_object, Bucket=name, Key="k", Body=b"x") == "NoSuchBucket"
    assert _denied(alice_a.create_multipart_upload, Bucket=name, Key="k") == "NoSuchBucket"
    assert _denied(alice_a.get_bucket_location, Bucket=name) == "NoSuchBucket"


def _new_key(user_id: int) -> tuple[str, str]:
    from tierpilot.auth import repository as auth_repository
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        user = auth_repository.get_user(s, user_id)
        assert user is not None
        key = auth.create_access_key(s, user)
        return key.access_key_id, key.secret_access_key


def _delete_key(user_id: int, access_key_id: str) -> None:
    from tierpilot.auth import repository as auth_repository
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        user = auth_repository.get_user(s, user_id)
        assert user is not None
        auth.delete_access_key(s, user, access_key_id)


def test_deleted_access_key_stops_working_within_the_cache_window(gateway: Gateway) -> None:
    """A key deleted through the API is refused by a gateway that had it cached once its cache entry
    (TIERPILOT_GATEWAY_CACHE_S, 2 s here) ends, and from then on."""
    from tierpilot.kit.settings import get_settings

    alice = gateway.users["alice"]
    key_id, secret = _new_key(alice.id)
    client: BaseClient = boto3.client("s3", endpoint_url=gateway.url, aws_access_key_id=key_id,
                                      aws_secret_access_key=secret, region_name="us-east-1")
    client.list_buckets()
    cached_at = time.monotonic()  # the entry was made by this request or an earlier one, not later
    _delete_key(alice.id, key_id)
    window = get_settings().gateway_cache_s

    def refused() -> bool:
        sent = time.monotonic()  # a request still served must have been sent within the window: how long it
        try:                     # took to answer on a loaded machine is not the gateway's cache
            client.list_buckets()
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == "InvalidAccessKeyId"
            return True
        assert sent - cached_at <= window + 0.5, "a deleted key outlived the cache window"
        return False

    wait_until(refused)
    assert _denied(client.list_buckets) == "InvalidAccessKeyId"
