"""User content served by the gateway cannot script the host it is served from: every object read is
sandboxed, active types are downloads unless the request or the object says otherwise, nothing is sniffed."""

from __future__ import annotations

import httpx
import pytest
from botocore.client import BaseClient

from tests.gateway.conftest import Gateway


def _url(s3: BaseClient, bucket: str, key: str, method: str = "get_object", **params: str) -> str:
    return str(s3.generate_presigned_url(method, Params={"Bucket": bucket, "Key": key, **params}, ExpiresIn=300))


@pytest.mark.parametrize("content_type", ["text/html", "text/html; charset=utf-8", "application/xhtml+xml",
                                          "image/svg+xml", "text/xml", "application/xml", "application/javascript",
                                          "text/javascript", "TEXT/HTML"])
def test_active_types_are_sandboxed_downloads(s3: BaseClient, bucket: str, content_type: str) -> None:
    s3.put_object(Bucket=bucket, Key="page", Body=b"<script>document.cookie='tierpilot_session=x'</script>",
                  ContentType=content_type)
    for method in ("GET", "HEAD"):
        r = httpx.request(method, _url(s3, bucket, "page", "get_object" if method == "GET" else "head_object"))
        assert r.status_code == 200
        assert r.headers["content-security-policy"] == "sandbox"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["content-disposition"] == "attachment"
        assert r.headers["content-type"] == content_type


def test_passive_types_are_sandboxed_but_inline(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="img.png", Body=b"\x89PNG", ContentType="image/png")
    r = httpx.get(_url(s3, bucket, "img.png"))
    assert r.status_code == 200
    assert r.headers["content-security-policy"] == "sandbox"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert "content-disposition" not in r.headers


def test_the_request_or_the_object_may_name_the_disposition(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="own.html", Body=b"<p>x</p>", ContentType="text/html",
                  ContentDisposition='inline; filename="own.html"')
    r = httpx.get(_url(s3, bucket, "own.html"))
    assert r.headers["content-disposition"] == 'inline; filename="own.html"'
    assert r.headers["content-security-policy"] == "sandbox"
    s3.put_object(Bucket=bucket, Key="plain.html", Body=b"<p>x</p>", ContentType="text/html")
    r = httpx.get(_url(s3, bucket, "plain.html", ResponseContentDisposition="inline"))
    assert r.headers["content-disposition"] == "inline"
    assert r.headers["content-security-policy"] == "sandbox"
    # an override of the type to an active one is an active read too
    s3.put_object(Bucket=bucket, Key="data.bin", Body=b"<p>x</p>", ContentType="application/octet-stream")
    r = httpx.get(_url(s3, bucket, "data.bin", ResponseContentType="text/html"))
    assert r.headers["content-type"] == "text/html"
    assert r.headers["content-disposition"] == "attachment"


def test_a_public_html_object_is_sandboxed_for_anonymous_readers(gateway: Gateway, s3: BaseClient,
                                                                bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="pub.html", Body=b"<script>1</script>", ContentType="text/html",
                  ACL="public-read")
    r = httpx.get(f"{gateway.url}/{bucket}/pub.html")
    assert r.status_code == 200
    assert r.headers["content-security-policy"] == "sandbox"
    assert r.headers["content-disposition"] == "attachment"


def test_response_overrides_with_control_characters_are_refused(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    for value in ("a\r\nset-cookie: tierpilot_session=x", "\x01\x02\x7f", "\x00"):
        r = httpx.get(_url(s3, bucket, "k", ResponseContentType=value))
        assert r.status_code == 400 and "<Code>InvalidArgument</Code>" in r.text
        assert "set-cookie" not in r.headers
