"""CORS on a real gateway: the configuration through boto3, preflights and Origin requests as a browser sends
them (``requests``), with presigned URLs, and bad configurations refused."""

from __future__ import annotations

import pytest
import requests
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway

RULES = {"CORSRules": [
    {"AllowedMethods": ["GET", "HEAD"], "AllowedOrigins": ["https://*.example.org"],
     "AllowedHeaders": ["x-amz-*", "Content-Type"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600},
    {"AllowedMethods": ["PUT"], "AllowedOrigins": ["*"], "ID": "anyone-puts"},
]}


def _code(e: pytest.ExceptionInfo[ClientError]) -> str:
    return str(e.value.response["Error"]["Code"])


def test_configuration_round_trip_and_delete(s3: BaseClient, bucket: str) -> None:
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert _code(e) == "NoSuchCORSConfiguration"
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"] == RULES["CORSRules"]
    s3.delete_bucket_cors(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert _code(e) == "NoSuchCORSConfiguration"


def test_preflight_is_answered_from_the_rules_without_a_signature(gateway: Gateway, s3: BaseClient,
                                                                   bucket: str) -> None:
    url = f"{gateway.url}/{bucket}/data/run1.root"
    asked = {"Origin": "https://lab.example.org", "Access-Control-Request-Method": "GET"}
    assert requests.options(url, headers=asked, timeout=10).status_code == 403  # no rules yet
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    r = requests.options(url, headers={**asked, "Access-Control-Request-Headers": "x-amz-date, content-type"},
                         timeout=10)
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "https://lab.example.org"
    assert r.headers["access-control-allow-methods"] == "GET, HEAD"
    assert r.headers["access-control-allow-headers"] == "x-amz-date, content-type"
    assert r.headers["access-control-expose-headers"] == "ETag"
    assert r.headers["access-control-max-age"] == "600"
    assert requests.options(url, headers={**asked, "Access-Control-Request-Method": "PUT"},
                            timeout=10).headers["access-control-allow-origin"] == "*"
    refused = [
        ({"Origin": "https://example.org", "Access-Control-Request-Method": "GET"}, 403),  # the * needs a label
        ({**asked, "Access-Control-Request-Method": "DELETE"}, 403),
        ({**asked, "Access-Control-Request-Headers": "authorization"}, 403),
        ({"Access-Control-Request-Method": "GET"}, 400),
        ({"Origin": "https://lab.example.org"}, 400),
    ]
    for headers, status in refused:
        r = requests.options(url, headers=headers, timeout=10)
        assert r.status_code == status, headers
        assert "access-control-allow-origin" not in r.headers


def test_origin_requests_get_the_headers_also_on_errors_and_presigned(gateway: Gateway, s3: BaseClient,
                                                                      bucket: str) -> None:
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    origin = {"Origin": "https://lab.example.org"}
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=300)
    r = requests.get(url, headers=origin, timeout=10)
    assert r.status_code == 200 and r.content == b"v"
    assert r.headers["access-control-allow-origin"] == "https://lab.example.org"
    assert r.headers["access-control-expose-headers"] == "ETag"
    preflight = requests.options(url, headers={**origin, "Access-Control-Request-Method": "GET"}, timeout=10)
    assert preflight.status_code == 200
    missing = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "nope"}, ExpiresIn=300)
    r = requests.get(missing, headers=origin, timeout=10)
    assert r.status_code == 404 and r.headers["access-control-allow-origin"] == "https://lab.example.org"
    anonymous = requests.get(f"{gateway.url}/{bucket}/k", headers=origin, timeout=10)
    assert anonymous.status_code == 403 and "access-control-allow-origin" in anonymous.headers
    other = requests.get(url, headers={"Origin": "https://evil.test"}, timeout=10)
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
    assert "access-control-allow-origin" not in requests.get(url, timeout=10).headers


@pytest.mark.parametrize(("rules", "code"), [
    ({"CORSRules": [{"AllowedMethods": ["PATCH"], "AllowedOrigins": ["*"]}]}, "InvalidRequest"),
    ({"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*.a.*"]}]}, "InvalidRequest"),
    ({"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"], "ID": "x" * 256}]}, "InvalidRequest"),
])
def test_bad_configurations_are_refused(s3: BaseClient, bucket: str, rules: dict[str, object], code: str) -> None:
    with pytest.raises(ClientError) as e:
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=rules)
    assert _code(e) == code
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert _code(e) == "NoSuchCORSConfiguration"


def test_another_users_bucket_rules_are_not_theirs(gateway: Gateway, bucket: str) -> None:
    bob = gateway.client("bob")
    with pytest.raises(ClientError) as e:
        bob.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    assert _code(e) == "AccessDenied"
    with pytest.raises(ClientError) as e:
        bob.get_bucket_cors(Bucket=bucket)
    assert _code(e) == "AccessDenied"
