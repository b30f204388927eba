"""POST object (browser form uploads) on a real gateway: forms made by boto3's ``generate_presigned_post``
(SigV4) and by hand (V2 signature), posted with ``requests`` as a browser would, and the policy's checks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from botocore.client import BaseClient

from tests.gateway.conftest import Gateway, catalog_rows


def _v2_form(gateway: Gateway, bucket: str, conditions: list[Any], fields: dict[str, str],
             expires: datetime | None = None, user: str = "alice") -> OrderedDict[str, Any]:
    u = gateway.users[user]
    expiration = (expires or datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    policy = base64.b64encode(json.dumps({"expiration": expiration, "conditions": conditions}).encode())
    signature = base64.b64encode(hmac.new(u.secret_access_key.encode(), policy, hashlib.sha1).digest())
    return OrderedDict([*fields.items(), ("AWSAccessKeyId", u.access_key_id), ("policy", policy.decode()),
                        ("signature", signature.decode())])


def _post(gateway: Gateway, bucket: str, form: dict[str, Any], data: bytes | str = b"hello",
          filename: str = "upload.bin", **kwargs: Any) -> requests.Response:
    files = [(name, (None, value)) for name, value in form.items()] + [("file", (filename, data))]
    return requests.post(f"{gateway.url}/{bucket}", files=files, timeout=30, **kwargs)


def test_presigned_post_from_boto3_stores_the_object_with_its_fields(gateway: Gateway, s3: BaseClient,
                                                                      bucket: str) -> None:
    post = s3.generate_presigned_post(
        bucket, "uploads/${filename}",
        Fields={"Content-Type": "text/plain", "x-amz-meta-project": "belle2", "success_action_status": "201"},
        Conditions=[["starts-with", "$key", "uploads/"], {"Content-Type": "text/plain"},
                    ["starts-with", "$x-amz-meta-project", ""], {"success_action_status": "201"},
                    ["content-length-range", 1, 1024]], ExpiresIn=600)
    r = _post(gateway, bucket, post["fields"], b"form data", filename="run1.txt")
    assert r.status_code == 201, r.text
    assert "<Key>uploads/run1.txt</Key>" in r.text
    head = s3.head_object(Bucket=bucket, Key="uploads/run1.txt")
    assert head["ContentType"] == "text/plain" and head["Metadata"] == {"project": "belle2"}
    assert head["ETag"] == f'"{hashlib.md5(b"form data").hexdigest()}"'
    assert s3.get_object(Bucket=bucket, Key="uploads/run1.txt")["Body"].read() == b"form data"


def test_v2_form_with_tagging_and_default_204(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    tagging = "<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>"
    form = _v2_form(gateway, bucket, [{"bucket": bucket}, ["starts-with", "$key", "a"], {"acl": "private"},
                                      ["starts-with", "$tagging", ""], ["content-length-range", 0, 100]],
                    {"key": "a.txt", "acl": "private", "tagging": tagging, "x-ignore-note": "not in the policy"})
    r = _post(gateway, bucket, form, b"abc")
    assert r.status_code == 204, r.text
    assert r.headers["etag"] == f'"{hashlib.md5(b"abc").hexdigest()}"'
    assert s3.get_object_tagging(Bucket=bucket, Key="a.txt")["TagSet"] == [{"Key": "k", "Value": "v"}]


def test_redirect_gets_bucket_key_and_etag(gateway: Gateway, bucket: str) -> None:
    target = "https://example.org/done"
    form = _v2_form(gateway, bucket, [{"bucket": bucket}, {"key": "r"}, {"success_action_redirect": target}],
                    {"key": "r", "success_action_redirect": target})
    r = _post(gateway, bucket, form, b"x", allow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == (f"{target}?bucket={bucket}&key=r&etag=%22{hashlib.md5(b'x').hexdigest()}%22")


def test_a_redirect_with_control_characters_is_refused_before_anything_is_stored(
        gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    target = "https://example.invalid/done\r\nSet-Cookie: tierpilot_session=x"
    form = _v2_form(gateway, bucket, [{"bucket": bucket}, {"key": "crlf"}, {"success_action_redirect": target}],
                    {"key": "crlf", "success_action_redirect": target})
    r = _post(gateway, bucket, form, b"x", allow_redirects=False)
    assert r.status_code == 400 and _code(r) == "InvalidArgument", r.text
    assert "success_action_redirect" in r.text
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0


def _code(r: requests.Response) -> str:
    return r.text.split("<Code>")[1].split("</Code>")[0] if "<Code>" in r.text else ""


def test_policy_violations_are_refused_and_store_nothing(gateway: Gateway, bucket: str, make_bucket: Any) -> None:
    base = [{"bucket": bucket}, ["starts-with", "$key", "foo"], ["content-length-range", 0, 10]]
    cases: list[tuple[str, OrderedDict[str, Any], bytes, int, str]] = [
        ("wrong key prefix", _v2_form(gateway, bucket, base, {"key": "bar"}), b"x", 403, "AccessDenied"),
        ("field no condition names", _v2_form(gateway, bucket, base, {"key": "foo", "x-amz-meta-a": "1"}), b"x",
         403, "AccessDenied"),
        ("too large", _v2_form(gateway, bucket, base, {"key": "foo"}), b"x" * 11, 400, "EntityTooLarge"),
        ("expired", _v2_form(gateway, bucket, base, {"key": "foo"}, datetime.now(UTC) - timedelta(minutes=1)),
         b"x", 403, "AccessDenied"),
        ("no bucket condition", _v2_form(gateway, bucket, base[1:], {"key": "foo"}), b"x", 403, "AccessDenied"),
        ("empty condition", _v2_form(gateway, bucket, [*base, {}], {"key": "foo"}), b"x", 400,
         "InvalidPolicyDocument"),
        ("bad length range", _v2_form(gateway, bucket, [base[0], base[1], ["content-length-range", -1, 0]],
                                      {"key": "foo"}), b"x", 400, "InvalidPolicyDocument"),
        ("someone else's bucket", _v2_form(gateway, bucket, base, {"key": "foo"}, user="bob"), b"x", 403,
         "AccessDenied"),
    ]
    for label, form, data, status, code in cases:
        r = _post(gateway, bucket, form, data)
        assert (r.status_code, _code(r)) == (status, code), label
    bad_sig = _v2_form(gateway, bucket, base, {"key": "foo"})
    bad_sig["signature"] = base64.b64encode(b"0" * 20).decode()
    assert _code(_post(gateway, bucket, bad_sig)) == "SignatureDoesNotMatch"
    unknown = _v2_form(gateway, bucket, base, {"key": "foo"})
    unknown["AWSAccessKeyId"] = "AKNOTAKEY"
    assert _code(_post(gateway, bucket, unknown)) == "InvalidAccessKeyId"
    no_key = _v2_form(gateway, bucket, base, {})
    r = _post(gateway, bucket, no_key)
    assert (r.status_code, _code(r)) == (400, "InvalidArgument") and "key" in r.text
    anonymous = _post(gateway, bucket, {"key": "foo"})
    assert (anonymous.status_code, _code(anonymous)) == (403, "AccessDenied")
    not_a_form = requests.post(f"{gateway.url}/{bucket}", data=b"key=foo", timeout=30,
                               headers={"content-type": "application/x-www-form-urlencoded"})
    assert (not_a_form.status_code, _code(not_a_form)) == (400, "MalformedPOSTRequest")
    assert catalog_rows(bucket) == []


def test_checksum_field_is_verified(gateway: Gateway, bucket: str) -> None:
    data = b"checked" * 1000
    good = base64.b64encode(hashlib.sha256(data).digest()).decode()
    conditions = [{"bucket": bucket}, ["starts-with", "$key", "c"]]
    r = _post(gateway, bucket, _v2_form(gateway, bucket, conditions, {"key": "c", "x-amz-checksum-sha256": good}),
              data)
    assert r.status_code == 204, r.text
    wrong = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    r = _post(gateway, bucket, _v2_form(gateway, bucket, conditions, {"key": "c2", "x-amz-checksum-sha256": wrong}),
              data)
    assert (r.status_code, _code(r)) == (400, "BadDigest")
    assert [row[0] for row in catalog_rows(bucket)] == ["c"]


def test_large_file_streams_through_the_spool(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    data = uuid.uuid4().bytes * (12 * 1024 * 1024 // 16)  # past the 8 MiB kept in memory
    form = _v2_form(gateway, bucket, [{"bucket": bucket}, {"key": "big"}], {"key": "big"})
    r = _post(gateway, bucket, form, data)
    assert r.status_code == 204, r.text
    assert s3.head_object(Bucket=bucket, Key="big")["ContentLength"] == len(data)
    assert hashlib.md5(s3.get_object(Bucket=bucket, Key="big")["Body"].read()).digest() == hashlib.md5(data).digest()


def test_anonymous_form_needs_a_bucket_anyone_may_write(gateway: Gateway, s3: BaseClient,
                                                        make_bucket: Any) -> None:
    private = make_bucket()
    r = _post(gateway, private, {"key": "anon.txt"}, b"x")
    assert (r.status_code, _code(r)) == (403, "AccessDenied")
    public = make_bucket(ACL="public-read-write")
    r = _post(gateway, public, {"key": "anon.txt", "acl": "public-read", "Content-Type": "text/plain"}, b"anyone")
    assert r.status_code == 204, r.text
    assert s3.get_object(Bucket=public, Key="anon.txt")["Body"].read() == b"anyone"
    assert requests.get(f"{gateway.url}/{public}/anon.txt", timeout=10).content == b"anyone"  # public-read
    assert catalog_rows(private) == []
