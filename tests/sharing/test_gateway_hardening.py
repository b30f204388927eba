"""Sharing decisions the gateway must take per key and per client: DeleteObjects authorizes every key as its own
resource, and ``aws:SourceIp`` is the address a trusted proxy reports, never one a client wrote itself."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway

CLIENT_IP = "203.0.113.7"


def _policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _bob(gateway: Gateway) -> str:
    return f"arn:aws:iam::{gateway.users['bob'].id}:user/bob"


def _forwarding(client: BaseClient, forwarded_for: str) -> BaseClient:
    """The client's requests carry X-Forwarded-For, as a proxy in front of the gateway would add it."""
    def add(request: Any, **_: Any) -> None:
        request.headers["X-Forwarded-For"] = forwarded_for

    client.meta.events.register("before-send.s3", add)
    return client


@pytest.fixture
def bucket(gateway: Gateway) -> str:
    name = f"hd-{uuid.uuid4().hex[:12]}"
    gateway.client("alice").create_bucket(Bucket=name)
    return name


def test_delete_objects_refuses_each_denied_key_and_deletes_the_rest(gateway: Gateway, bucket: str) -> None:
    alice, bob = gateway.client("alice"), gateway.client("bob")
    keys = ["keep/a.txt", "keep/sub/b.txt", "tmp/c.txt", "d.txt"]
    for key in keys:
        alice.put_object(Bucket=bucket, Key=key, Body=key.encode())
    alice.put_bucket_policy(Bucket=bucket, Policy=_policy(
        {"Effect": "Allow", "Principal": {"AWS": _bob(gateway)}, "Action": ["s3:DeleteObject", "s3:ListBucket"],
         "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]},
        {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{bucket}/keep/*"}))
    for who in (bob, alice):  # the deny binds the owner too, as S3 evaluates it
        answer = who.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
        assert sorted((e["Key"], e["Code"]) for e in answer.get("Errors", [])) == [
            ("keep/a.txt", "AccessDenied"), ("keep/sub/b.txt", "AccessDenied")]
        assert sorted(d["Key"] for d in answer.get("Deleted", [])) == ["d.txt", "tmp/c.txt"]
        left = alice.list_objects_v2(Bucket=bucket)
        assert sorted(o["Key"] for o in left["Contents"]) == ["keep/a.txt", "keep/sub/b.txt"]
        for key in ("tmp/c.txt", "d.txt"):
            alice.put_object(Bucket=bucket, Key=key, Body=b"again")
    # without the policy bob may delete nothing: the request as a whole is refused
    alice.delete_bucket_policy(Bucket=bucket)
    with pytest.raises(ClientError) as exc:
        bob.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "d.txt"}]})
    assert exc.value.response["Error"]["Code"] == "AccessDenied"
    assert "d.txt" in {o["Key"] for o in alice.list_objects_v2(Bucket=bucket)["Contents"]}


def test_source_ip_is_what_a_trusted_proxy_reports_and_only_a_trusted_one(gateways: tuple[Gateway, Gateway],
                                                                         bucket: str) -> None:
    a, b = gateways  # b trusts 127.0.0.1 as a proxy, a trusts nothing
    a.client("alice").put_object(Bucket=bucket, Key="data.csv", Body=b"1,2,3")
    a.client("alice").put_bucket_policy(Bucket=bucket, Policy=_policy(
        {"Effect": "Allow", "Principal": {"AWS": _bob(a)}, "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{bucket}/*", "Condition": {"IpAddress": {"aws:SourceIp": f"{CLIENT_IP}/32"}}}))

    def code(gateway: Gateway, forwarded_for: str | None) -> str:
        client = gateway.client("bob")
        if forwarded_for is not None:
            _forwarding(client, forwarded_for)
        try:
            client.get_object(Bucket=bucket, Key="data.csv")["Body"].read()
        except ClientError as exc:
            return str(exc.response["Error"]["Code"])
        return "OK"

    assert code(b, CLIENT_IP) == "OK"  # the trusted proxy's word
    assert code(b, f"{CLIENT_IP}, 127.0.0.1") == "OK"  # a chain of trusted proxies: the first untrusted hop
    assert code(b, None) == "AccessDenied"  # no header: the proxy itself asked
    assert code(b, f"{CLIENT_IP}, 198.51.100.9") == "AccessDenied"  # what the client wrote left of its own hop
    assert code(a, CLIENT_IP) == "AccessDenied"  # from a peer not trusted the header is ignored
