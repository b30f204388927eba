"""What S3 refuses, the gateway refuses with S3's error, and changes nothing: DeleteObjects' Quiet flag,
listing limits outside a non-negative int32, reserved bucket names, more than 10 (or repeated) tags."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import quote

import httpx
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway import rawclient as raw
from tests.gateway.conftest import Gateway, catalog_rows


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _signed(gateway: Gateway, method: str, url: str, body: bytes = b"",
            headers: dict[str, str] | None = None) -> httpx.Response:
    user = gateway.users["alice"]
    headers = dict(headers or {})
    if body:
        headers["content-md5"] = base64.b64encode(hashlib.md5(body).digest()).decode()
    signed = raw.sign(method, url, headers, hashlib.sha256(body).hexdigest(), user.access_key_id,
                      user.secret_access_key)
    return raw.send(method, url, signed.headers, body)


@pytest.mark.parametrize("quiet", ["maybe", "yes", "1 ", "", "truefalse"])
def test_delete_objects_quiet_must_be_a_boolean(gateway: Gateway, s3: BaseClient, bucket: str, quiet: str) -> None:
    s3.put_object(Bucket=bucket, Key="keep", Body=b"k")
    body = f"<Delete><Quiet>{quiet}</Quiet><Object><Key>keep</Key></Object></Delete>".encode()
    r = _signed(gateway, "POST", raw.url_for(gateway.url, bucket, query="delete="), body)
    assert r.status_code == 400 and raw.error_code(r) == "MalformedXML", r.text
    assert [row[0] for row in catalog_rows(bucket)] == ["keep"]


@pytest.mark.parametrize("quiet", ["true", "false", "True", "FALSE"])
def test_delete_objects_quiet_true_and_false(gateway: Gateway, s3: BaseClient, bucket: str, quiet: str) -> None:
    s3.put_object(Bucket=bucket, Key="gone", Body=b"g")
    body = f"<Delete><Quiet>{quiet}</Quiet><Object><Key>gone</Key></Object></Delete>".encode()
    r = _signed(gateway, "POST", raw.url_for(gateway.url, bucket, query="delete="), body)
    assert r.status_code == 200, r.text
    assert ("<Deleted>" in r.text) is (quiet.lower() == "false")
    assert catalog_rows(bucket) == []


@pytest.mark.parametrize("value", ["99999999999999999999", "2147483648", "-1", "abc", "1.5", "1_000", "+5", " 5",
                                   "\u00b2", "\u0663"])
@pytest.mark.parametrize("query", ["max-keys", "list-type=2&max-keys", "versions=&max-keys", "uploads=&max-uploads"])
def test_listing_limits_outside_int32_are_invalid_argument(gateway: Gateway, bucket: str, query: str,
                                                            value: str) -> None:
    r = _signed(gateway, "GET", raw.url_for(gateway.url, bucket, query=f"{query}={quote(value, safe='')}"))
    assert r.status_code == 400 and raw.error_code(r) == "InvalidArgument", (query, value, r.text)


def test_max_parts_outside_int32_is_invalid_argument(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    for value in ("99999999999999999999", "-1", "abc", "\u00b2"):
        url = raw.url_for(gateway.url, bucket, "mp", query=f"max-parts={quote(value)}&uploadId={upload}")
        r = _signed(gateway, "GET", url)
        assert r.status_code == 400 and raw.error_code(r) == "InvalidArgument", (value, r.text)
    s3.abort_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload)


def test_listing_limits_in_range_still_work(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    assert s3.list_objects_v2(Bucket=bucket, MaxKeys=2147483647)["MaxKeys"] == 1000  # S3 caps at 1000
    assert s3.list_objects_v2(Bucket=bucket, MaxKeys=0)["KeyCount"] == 0


@pytest.mark.parametrize("name", [
    "xn--abc", "xn--bcher-kva", "sthree-x", "sthree-configurator-1", "amzn-s3-demo-bucket",
    "bucket-s3alias", "bucket--ol-s3", "bucket.mrap", "bucket--use1-az4--x-s3", "bucket--table-s3",
])
def test_reserved_bucket_names_are_invalid(gateway: Gateway, s3: BaseClient, name: str) -> None:
    # a raw request: boto3 sends names ending in --x-s3 to S3 Express's CreateSession first
    r = _signed(gateway, "PUT", raw.url_for(gateway.url, name))
    assert r.status_code == 400 and raw.error_code(r) == "InvalidBucketName", r.text
    assert name not in [b["Name"] for b in s3.list_buckets()["Buckets"]]


@pytest.mark.parametrize("name", ["xn-abc", "axn--abc", "sthree", "bucket-s3aliasx", "s3alias-bucket", "mrap.bucket"])
def test_names_near_the_reserved_ones_are_fine(s3: BaseClient, name: str) -> None:
    s3.create_bucket(Bucket=name)
    s3.delete_bucket(Bucket=name)


def _tags(n: int) -> str:
    return "&".join(f"k{i}=v{i}" for i in range(n))


def test_more_than_ten_tags_on_put_are_bad_request(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="ten", Body=b"x", Tagging=_tags(10))
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="eleven", Body=b"x", Tagging=_tags(11))
    assert _code(exc) == "BadRequest"
    with pytest.raises(ClientError) as exc:
        s3.copy_object(Bucket=bucket, Key="eleven", CopySource=f"{bucket}/ten", TaggingDirective="REPLACE",
                       Tagging=_tags(11))
    assert _code(exc) == "BadRequest"
    with pytest.raises(ClientError) as exc:
        s3.create_multipart_upload(Bucket=bucket, Key="eleven", Tagging=_tags(11))
    assert _code(exc) == "BadRequest"
    assert [row[0] for row in catalog_rows(bucket)] == ["ten"]
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_more_than_ten_tags_on_put_object_tagging_are_bad_request(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="a=1")
    tag_set = [{"Key": f"k{i}", "Value": "v"} for i in range(11)]
    with pytest.raises(ClientError) as exc:
        s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": tag_set})
    assert _code(exc) == "BadRequest"
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [{"Key": "a", "Value": "1"}]


def test_repeated_tag_keys_are_invalid_tag(gateway: Gateway, s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="a=1")
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="dup", Body=b"x", Tagging="a=1&a=2")
    assert _code(exc) == "InvalidTag"
    with pytest.raises(ClientError) as exc:
        s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": [{"Key": "a", "Value": "1"},
                                                                          {"Key": "a", "Value": "2"}]})
    assert _code(exc) == "InvalidTag"
    assert [row[0] for row in catalog_rows(bucket)] == ["t"]
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [{"Key": "a", "Value": "1"}]
