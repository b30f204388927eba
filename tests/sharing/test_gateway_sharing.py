"""Sharing through real gateways and real clients: public data read unsigned (curl, AWS CLI v2
``--no-sign-request``), grants between tierpilot users through boto3, and changes seen by another gateway
process at once."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway

AWS = "/usr/bin/aws"  # Debian's AWS CLI v2


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _unsigned(url: str, method: str = "GET") -> tuple[int, bytes]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status), bytes(resp.read())
    except urllib.error.HTTPError as err:
        return int(err.code), bytes(err.read())


def _curl(url: str) -> tuple[int, bytes]:
    out = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", url], capture_output=True, timeout=30, check=True)
    body, _, status = out.stdout.rpartition(b"\n")
    return int(status), body


def _policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


@pytest.fixture
def shared(gateway: Gateway) -> str:
    name = f"sh-{uuid.uuid4().hex[:12]}"
    s3 = gateway.client("alice")
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="public/readme.txt", Body=b"hello world")
    s3.put_object(Bucket=name, Key="private/secret.txt", Body=b"secret")
    return name


def test_public_read_acl_serves_curl_unsigned_and_nothing_else(gateway: Gateway, shared: str) -> None:
    s3 = gateway.client("alice")
    s3.put_object(Bucket=shared, Key="open.txt", Body=b"open data", ACL="public-read")
    assert _curl(f"{gateway.url}/{shared}/open.txt") == (200, b"open data")
    status, body = _curl(f"{gateway.url}/{shared}/private/secret.txt")
    assert status == 403 and b"<Code>AccessDenied</Code>" in body
    assert _unsigned(f"{gateway.url}/{shared}")[0] == 403  # listing needs the bucket's READ
    assert _unsigned(f"{gateway.url}/{shared}/open.txt", "DELETE")[0] == 403
    assert _unsigned(f"{gateway.url}/")[0] == 403  # ListBuckets needs an account
    grants = s3.get_object_acl(Bucket=shared, Key="open.txt")["Grants"]
    assert {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"},
            "Permission": "READ"} in grants
    # an overwrite without an ACL is private again, as in S3
    s3.put_object(Bucket=shared, Key="open.txt", Body=b"now private")
    assert _curl(f"{gateway.url}/{shared}/open.txt")[0] == 403


def test_public_prefix_policy_through_aws_cli_no_sign_request(gateway: Gateway, shared: str, tmp_path: Any) -> None:
    s3 = gateway.client("alice")
    s3.put_bucket_policy(Bucket=shared, Policy=_policy(
        {"Sid": "PublicPrefix", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{shared}/public/*"},
        {"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{shared}",
         "Condition": {"StringLike": {"s3:prefix": "public/*"}}}))
    assert s3.get_bucket_policy_status(Bucket=shared)["PolicyStatus"]["IsPublic"] is True
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_DEFAULT_REGION"] = "us-east-1"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([AWS, "--endpoint-url", gateway.url, "--no-sign-request", "s3", *args],
                              capture_output=True, text=True, env=env, timeout=60)

    got = cli("cp", f"s3://{shared}/public/readme.txt", str(tmp_path / "readme.txt"))
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "readme.txt").read_bytes() == b"hello world"
    listed = cli("ls", f"s3://{shared}/public/")
    assert listed.returncode == 0 and "readme.txt" in listed.stdout, listed.stderr
    denied = cli("cp", f"s3://{shared}/private/secret.txt", str(tmp_path / "secret.txt"))
    assert denied.returncode != 0 and "403" in denied.stderr
    assert cli("ls", f"s3://{shared}/private/").returncode != 0
    assert cli("cp", str(tmp_path / "readme.txt"), f"s3://{shared}/public/new.txt").returncode != 0
    # a missing key the caller may list is 404 (a listing would say so), elsewhere 403 (S3 hides it)
    assert _unsigned(f"{gateway.url}/{shared}/public/missing.txt", "HEAD")[0] == 404
    assert _unsigned(f"{gateway.url}/{shared}/private/missing.txt", "HEAD")[0] == 403


def test_one_member_grants_another_read_then_write_through_boto3(gateway: Gateway, shared: str) -> None:
    alice, bob = gateway.client("alice"), gateway.client("bob")
    with pytest.raises(ClientError) as exc:
        bob.get_object(Bucket=shared, Key="public/readme.txt")
    assert _code(exc) == "AccessDenied"
    bob_arn = "arn:aws:iam::{}:user/bob".format(gateway.users["bob"].id)
    alice.put_bucket_policy(Bucket=shared, Policy=_policy(
        {"Effect": "Allow", "Principal": {"AWS": bob_arn}, "Action": ["s3:GetObject", "s3:ListBucket"],
         "Resource": [f"arn:aws:s3:::{shared}", f"arn:aws:s3:::{shared}/*"]}))
    assert bob.get_object(Bucket=shared, Key="private/secret.txt")["Body"].read() == b"secret"
    assert {o["Key"] for o in bob.list_objects_v2(Bucket=shared)["Contents"]} == {"public/readme.txt",
                                                                                  "private/secret.txt"}
    with pytest.raises(ClientError) as exc:
        bob.put_object(Bucket=shared, Key="bob.txt", Body=b"x")
    assert _code(exc) == "AccessDenied"
    with pytest.raises(ClientError) as exc:
        bob.get_bucket_policy(Bucket=shared)
    assert _code(exc) == "AccessDenied"
    # WRITE through the bucket ACL: bob writes and owns what he wrote (ObjectWriter)
    alice.put_bucket_acl(Bucket=shared, GrantWrite=f"id={gateway.users['bob'].id}",
                         GrantFullControl=f"id={gateway.users['alice'].id}")
    bob.put_object(Bucket=shared, Key="bob.txt", Body=b"from bob")
    acl = bob.get_object_acl(Bucket=shared, Key="bob.txt")
    assert acl["Owner"]["ID"] == str(gateway.users["bob"].id)
    assert alice.get_object(Bucket=shared, Key="bob.txt")["Body"].read() == b"from bob"
    # multipart and copy run under the same grants
    upload = bob.create_multipart_upload(Bucket=shared, Key="big.bin")["UploadId"]
    part = bob.upload_part(Bucket=shared, Key="big.bin", UploadId=upload, PartNumber=1, Body=b"p" * 1024)
    bob.complete_multipart_upload(Bucket=shared, Key="big.bin", UploadId=upload,
                                  MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert bob.get_object_acl(Bucket=shared, Key="big.bin")["Owner"]["ID"] == str(gateway.users["bob"].id)
    own = f"bob-{uuid.uuid4().hex[:10]}"
    bob.create_bucket(Bucket=own)
    bob.copy_object(Bucket=own, Key="copy.txt", CopySource={"Bucket": shared, "Key": "private/secret.txt"})
    assert bob.get_object(Bucket=own, Key="copy.txt")["Body"].read() == b"secret"
    alice.delete_bucket_policy(Bucket=shared)
    with pytest.raises(ClientError) as exc:
        bob.copy_object(Bucket=own, Key="copy2.txt", CopySource={"Bucket": shared, "Key": "private/secret.txt"})
    assert _code(exc) == "AccessDenied"
    with pytest.raises(ClientError) as exc:
        bob.list_objects_v2(Bucket=shared)
    assert _code(exc) == "AccessDenied"


def test_revoking_reaches_the_other_gateway_process_at_once(gateways: tuple[Gateway, Gateway], shared: str) -> None:
    a, b = gateways
    alice_a, bob_b = a.client("alice"), b.client("bob")
    alice_a.put_bucket_policy(Bucket=shared, Policy=_policy(
        {"Effect": "Allow", "Principal": {"AWS": str(a.users["bob"].id)}, "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{shared}/*"}))
    for _ in range(3):  # B now has the state cached (60 s)
        assert bob_b.get_object(Bucket=shared, Key="public/readme.txt")["Body"].read() == b"hello world"
    alice_a.delete_bucket_policy(Bucket=shared)
    with pytest.raises(ClientError) as exc:
        bob_b.get_object(Bucket=shared, Key="public/readme.txt")
    assert _code(exc) == "AccessDenied"
    alice_a.put_object_acl(Bucket=shared, Key="public/readme.txt", ACL="public-read")
    assert _unsigned(f"{b.url}/{shared}/public/readme.txt") == (200, b"hello world")
    alice_a.put_object_acl(Bucket=shared, Key="public/readme.txt", ACL="private")
    assert _unsigned(f"{b.url}/{shared}/public/readme.txt")[0] == 403


def test_malformed_policy_is_refused_and_nothing_is_stored(gateway: Gateway, shared: str) -> None:
    s3 = gateway.client("alice")
    for bad in ("{not json", _policy({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                      "Resource": "arn:aws:s3:::another-bucket/*"}),
                _policy({"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::1:user/nobody-here"},
                         "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{shared}/*"})):
        with pytest.raises(ClientError) as exc:
            s3.put_bucket_policy(Bucket=shared, Policy=bad)
        assert _code(exc) == "MalformedPolicy"
    with pytest.raises(ClientError) as exc:
        s3.get_bucket_policy(Bucket=shared)
    assert _code(exc) == "NoSuchBucketPolicy"
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=shared, Key="k", Body=b"x", ACL="public-everything")  # type: ignore[arg-type]
    assert _code(exc) == "InvalidArgument"
    assert "Contents" not in s3.list_objects_v2(Bucket=shared, Prefix="k")


def test_public_access_block_refuses_and_ignores_public_grants(gateway: Gateway, shared: str) -> None:
    s3 = gateway.client("alice")
    s3.put_object(Bucket=shared, Key="open.txt", Body=b"open", ACL="public-read")
    s3.put_public_access_block(Bucket=shared, PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
        "RestrictPublicBuckets": False})
    assert s3.get_public_access_block(Bucket=shared)["PublicAccessBlockConfiguration"]["BlockPublicAcls"] is True
    assert _unsigned(f"{gateway.url}/{shared}/open.txt")[0] == 403  # IgnorePublicAcls
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=shared, Key="more.txt", Body=b"x", ACL="public-read")
    assert _code(exc) == "AccessDenied"
    with pytest.raises(ClientError) as exc:
        s3.put_bucket_policy(Bucket=shared, Policy=_policy(
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{shared}/*"}))
    assert _code(exc) == "AccessDenied"
    s3.delete_public_access_block(Bucket=shared)
    assert _unsigned(f"{gateway.url}/{shared}/open.txt") == (200, b"open")


def test_bucket_owner_enforced_disables_acls(gateway: Gateway, shared: str) -> None:
    s3 = gateway.client("alice")
    s3.put_object(Bucket=shared, Key="pub.txt", Body=b"x", ACL="public-read")  # an object_acls row
    with pytest.raises(ClientError) as exc:
        s3.get_bucket_ownership_controls(Bucket=shared)
    assert _code(exc) == "OwnershipControlsNotFoundError"
    s3.put_bucket_ownership_controls(Bucket=shared, OwnershipControls={
        "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    rules = s3.get_bucket_ownership_controls(Bucket=shared)["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    with pytest.raises(ClientError) as exc:
        s3.put_object_acl(Bucket=shared, Key="public/readme.txt", ACL="public-read")
    assert _code(exc) == "AccessControlListNotSupported"
    s3.put_object(Bucket=shared, Key="ok.txt", Body=b"x", ACL="bucket-owner-full-control")
    with pytest.raises(ClientError) as exc:  # under BucketOwnerEnforced even "private" names an ACL
        s3.put_bucket_acl(Bucket=shared, ACL="private")
    assert _code(exc) == "AccessControlListNotSupported"
    s3.delete_bucket_ownership_controls(Bucket=shared)
    # a bucket with sharing settings and object ACLs is deleted like any other (its rows go with it)
    s3.put_bucket_acl(Bucket=shared, ACL="private")
    for key in ("ok.txt", "pub.txt", "public/readme.txt", "private/secret.txt"):
        s3.delete_object(Bucket=shared, Key=key)
    s3.delete_bucket(Bucket=shared)
    with pytest.raises(ClientError) as exc:
        s3.get_bucket_ownership_controls(Bucket=shared)
    assert _code(exc) == "NoSuchBucket"


def test_create_bucket_with_ownership_and_an_acl_document_without_the_owner(gateway: Gateway) -> None:
    s3 = gateway.client("alice")
    name = f"sh-{uuid.uuid4().hex[:12]}"
    with pytest.raises(ClientError) as exc:
        s3.create_bucket(Bucket=name, ACL="public-read", ObjectOwnership="BucketOwnerEnforced")
    assert _code(exc) == "InvalidBucketAclWithObjectOwnership"
    s3.create_bucket(Bucket=name, ObjectOwnership="BucketOwnerPreferred")
    rules = s3.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "BucketOwnerPreferred"}]
    owner = s3.get_bucket_acl(Bucket=name)["Owner"]
    s3.put_bucket_acl(Bucket=name, AccessControlPolicy={"Owner": owner, "Grants": []})
    assert s3.get_bucket_acl(Bucket=name)["Grants"] == []  # S3 keeps what the document says


def test_an_explicit_deny_binds_the_owner_who_can_still_remove_the_policy(gateway: Gateway, shared: str) -> None:
    s3 = gateway.client("alice")
    s3.put_bucket_policy(Bucket=shared, Policy=_policy(
        {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{shared}/*"}))
    with pytest.raises(ClientError) as exc:
        s3.delete_object(Bucket=shared, Key="public/readme.txt")
    assert _code(exc) == "AccessDenied"
    assert json.loads(s3.get_bucket_policy(Bucket=shared)["Policy"])["Statement"][0]["Effect"] == "Deny"
    s3.delete_bucket_policy(Bucket=shared)
    s3.delete_object(Bucket=shared, Key="public/readme.txt")
    from tierpilot.audit import service as audit
    from tierpilot.kit.db import transaction

    with transaction() as s:  # both changes are in the audit log, by whom and from where
        rows, _ = audit.page(s, actor="alice", event="bucket.sharing_changed", since=None, until=None,
                             before_id=None, limit=50)
    mine = [(r.detail["change"], r.client) for r in rows if r.target == shared]
    assert mine == [("s3:delete_policy", "127.0.0.1"), ("s3:put_policy", "127.0.0.1")]


def test_owner_requests_to_a_private_bucket_read_no_sharing_state(gateways: tuple[Gateway, Gateway],
                                                                   shared: str, redis_url: str) -> None:
    """What the gateway caches shows by a change made behind the service's back (a row written without a
    generation bump): the owner's requests keep answering from the cached "owner only" state."""
    from tierpilot.catalog import repository as catalog_repository
    from tierpilot.kit import generations
    from tierpilot.kit.db import transaction
    from tierpilot.sharing import repository
    from tierpilot.sharing.service import SHARING_GENERATION

    _, b = gateways
    alice = b.client("alice")
    for _ in range(3):
        assert alice.get_object(Bucket=shared, Key="public/readme.txt")["Body"].read() == b"hello world"
    deny_all = _policy({"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": f"arn:aws:s3:::{shared}/*"})
    with transaction(write=True) as s:
        bucket = catalog_repository.get_bucket_by_name(s, shared)
        assert bucket is not None
        repository.get_or_create(s, bucket.id).policy = deny_all  # no bump
    assert alice.get_object(Bucket=shared, Key="public/readme.txt")["Body"].read() == b"hello world"
    generations.bump(redis_url, SHARING_GENERATION)  # what every sharing change does after its commit
    with pytest.raises(ClientError) as exc:
        alice.get_object(Bucket=shared, Key="public/readme.txt")
    assert _code(exc) == "AccessDenied"
