"""A stored bucket policy this version can no longer read, through a real gateway and boto3: it fails closed
(403 AccessDenied, never a 5xx), a Deny of it is never lost, and the bucket's owner keeps the bucket and can
replace or delete the policy. The policy is written straight into ``bucket_sharing``, as an older version or an
edit in the database would have left it."""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway
from tests.sharing.conftest import store_policy_directly
from tierpilot.kit import generations
from tierpilot.sharing.service import SHARING_GENERATION


def _status(call: Any, **kwargs: Any) -> tuple[int, str]:
    """(HTTP status, S3 error code or "") of one boto3 call."""
    try:
        out = call(**kwargs)
    except ClientError as exc:
        return int(exc.response["ResponseMetadata"]["HTTPStatusCode"]), str(exc.response["Error"]["Code"])
    return int(out["ResponseMetadata"]["HTTPStatusCode"]), ""


def _store(bucket: str, text: str, redis_url: str) -> None:
    """The policy written into the catalog, and the gateways told (the generation a real change moves)."""
    store_policy_directly(bucket, text)
    assert generations.bump(redis_url, SHARING_GENERATION) is not None


def _unsigned_get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


@pytest.fixture
def bucket(gateway: Gateway) -> str:
    name = f"sp-{uuid.uuid4().hex[:12]}"
    s3 = gateway.client("alice")
    s3.create_bucket(Bucket=name)
    for key in ("public/readme.txt", "private/secret.txt", "keep/a.txt", "keep/b.txt"):
        s3.put_object(Bucket=name, Key=key, Body=key.encode())
    return name


def test_an_unreadable_deny_denies_everyone_but_the_owner_and_readable_denies_still_bind_the_owner(
        gateway: Gateway, bucket: str, redis_url: str) -> None:
    alice, bob, root = gateway.client("alice"), gateway.client("bob"), gateway.client("root")
    bob_arn = f"arn:aws:iam::{gateway.users['bob'].id}:user/bob"
    policy: dict[str, Any] = {"Version": "2012-10-17", "Statement": [
        {"Sid": "Bob", "Effect": "Allow", "Principal": {"AWS": bob_arn}, "Action": ["s3:GetObject", "s3:ListBucket"],
         "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]},
        {"Sid": "Keep", "Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject",
         "Resource": f"arn:aws:s3:::{bucket}/keep/*"},
        {"Sid": "Private", "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{bucket}/private/*",
         "Condition": {"StringEquals": {"aws:username": "nobody"}}}]}
    alice.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    assert _status(bob.get_object, Bucket=bucket, Key="private/secret.txt") == (200, "")  # binds only "nobody"

    # an older version wrote an operator this one dropped: unreadable, the Deny binds everyone but the owner
    policy["Statement"][2]["Condition"] = {"StringEqualsLegacy": {"aws:username": "nobody"}}
    _store(bucket, json.dumps(policy), redis_url)
    assert _status(bob.get_object, Bucket=bucket, Key="private/secret.txt") == (403, "AccessDenied")
    assert _status(bob.get_object, Bucket=bucket, Key="public/readme.txt") == (200, "")  # the readable Allow
    assert _status(bob.list_objects_v2, Bucket=bucket) == (200, "")
    assert _status(bob.get_bucket_policy, Bucket=bucket) == (403, "AccessDenied")
    assert _unsigned_get(f"{gateway.url}/{bucket}/public/readme.txt") == 403
    # the owner keeps the bucket; the readable Deny still binds them as written
    assert alice.get_object(Bucket=bucket, Key="private/secret.txt")["Body"].read() == b"private/secret.txt"
    assert _status(alice.put_object, Bucket=bucket, Key="private/new.txt", Body=b"new") == (200, "")
    assert _status(alice.delete_object, Bucket=bucket, Key="keep/a.txt") == (403, "AccessDenied")
    assert json.loads(alice.get_bucket_policy(Bucket=bucket)["Policy"]) == policy  # as stored
    assert alice.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False
    assert _status(root.get_object, Bucket=bucket, Key="private/secret.txt") == (200, "")  # admins
    assert "its stored policy cannot be read in full" in gateway.log.read_text()

    # replaced by the owner: read as written again
    policy["Statement"][2]["Condition"] = {"StringEquals": {"aws:username": "nobody"}}
    alice.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    assert _status(bob.get_object, Bucket=bucket, Key="private/secret.txt") == (200, "")


def test_a_stored_policy_that_is_not_json_denies_all_but_owner_and_admins_and_the_owner_deletes_it(
        gateway: Gateway, bucket: str, redis_url: str) -> None:
    alice, bob, root = gateway.client("alice"), gateway.client("bob"), gateway.client("root")
    # bob may list by the bucket's ACL, anyone may read one object by its ACL
    alice.put_bucket_acl(Bucket=bucket, GrantRead=f"id={gateway.users['bob'].id}",
                         GrantFullControl=f"id={gateway.users['alice'].id}")
    alice.put_object(Bucket=bucket, Key="open.txt", Body=b"open", ACL="public-read")
    assert _status(bob.list_objects_v2, Bucket=bucket) == (200, "")
    assert _unsigned_get(f"{gateway.url}/{bucket}/open.txt") == 200

    _store(bucket, '{"Version": "2012-10-17", "Statement": [{"Effect": "Deny"', redis_url)
    assert _status(bob.list_objects_v2, Bucket=bucket) == (403, "AccessDenied")
    assert _status(bob.put_object, Bucket=bucket, Key="x", Body=b"x") == (403, "AccessDenied")
    assert _status(bob.delete_bucket_policy, Bucket=bucket) == (403, "AccessDenied")
    assert _unsigned_get(f"{gateway.url}/{bucket}/open.txt") == 403
    assert _status(alice.list_objects_v2, Bucket=bucket) == (200, "")
    assert _status(alice.put_object, Bucket=bucket, Key="more.txt", Body=b"more") == (200, "")
    assert alice.get_object(Bucket=bucket, Key="open.txt")["Body"].read() == b"open"
    assert _status(alice.get_bucket_acl, Bucket=bucket) == (200, "")
    assert _status(root.list_objects_v2, Bucket=bucket) == (200, "")

    assert _status(alice.delete_bucket_policy, Bucket=bucket) == (204, "")
    assert _status(alice.get_bucket_policy, Bucket=bucket) == (404, "NoSuchBucketPolicy")
    assert _status(bob.list_objects_v2, Bucket=bucket) == (200, "")  # the ACL grants again
    assert _unsigned_get(f"{gateway.url}/{bucket}/open.txt") == 200
