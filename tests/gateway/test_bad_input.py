"""Authentication failures and bad input: each answers the S3 error a client expects, stores nothing and
leaves the catalog unchanged. Also the streaming payload modes boto3 does not use over plain HTTP."""

from __future__ import annotations

import base64
import hashlib
import socket
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from urllib.parse import urlsplit

import boto3
import botocore.auth
import botocore.crt.auth
import httpx
import pytest
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.gateway import rawclient as raw
from tests.gateway.conftest import Gateway, blob_files, catalog_rows
from tests.waiting import wait_until


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def _crc32(data: bytes) -> str:
    return base64.b64encode((zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "big")).decode()


@pytest.fixture
def unchanged(gateway: Gateway, bucket: str, s3: BaseClient) -> Iterator[None]:
    """The bucket holds one object before the test; afterwards catalog and tiers must be exactly as before."""
    s3.put_object(Bucket=bucket, Key="existing", Body=b"keep me")
    rows = catalog_rows(bucket)
    blobs = {name: blob_files(path) for name, path in gateway.tier_dirs.items()}
    yield
    assert catalog_rows(bucket) == rows
    assert {name: blob_files(path) for name, path in gateway.tier_dirs.items()} == blobs
    assert s3.get_object(Bucket=bucket, Key="existing")["Body"].read() == b"keep me"


def _creds(gateway: Gateway, user: str = "alice") -> tuple[str, str]:
    u = gateway.users[user]
    return u.access_key_id, u.secret_access_key


# authentication ----------------------------------------------------------------------------------------


def test_wrong_secret_is_signature_does_not_match(gateway: Gateway, bucket: str, unchanged: None) -> None:
    bad = boto3.client("s3", endpoint_url=gateway.url, aws_access_key_id=gateway.users["alice"].access_key_id,
                       aws_secret_access_key="wrong-secret", region_name="us-east-1")
    with pytest.raises(ClientError) as exc:
        bad.put_object(Bucket=bucket, Key="x", Body=b"x")
    assert _code(exc) == "SignatureDoesNotMatch"
    with pytest.raises(ClientError) as exc:
        bad.list_objects_v2(Bucket=bucket)
    assert _code(exc) == "SignatureDoesNotMatch"


def test_unknown_key_id_and_anonymous(gateway: Gateway, bucket: str, unchanged: None) -> None:
    stranger = boto3.client("s3", endpoint_url=gateway.url, aws_access_key_id="TPUNKNOWNKEY000000000",
                            aws_secret_access_key="whatever", region_name="us-east-1")
    with pytest.raises(ClientError) as exc:
        stranger.put_object(Bucket=bucket, Key="x", Body=b"x")
    assert _code(exc) == "InvalidAccessKeyId"
    r = httpx.put(raw.url_for(gateway.url, bucket, "x"), content=b"x")
    assert r.status_code == 403 and raw.error_code(r) == "AccessDenied"
    assert "<RequestId>" in r.text and r.headers["x-amz-request-id"]


def _sign_earlier(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """botocore signs as if ``seconds`` ago: SigV4's X-Amz-Date (its own signer's or awscrt's) and SigV2's Expires
    come from its clock."""
    for signer in (botocore.auth, botocore.crt.auth):
        now = signer.get_current_datetime
        monkeypatch.setattr(signer, "get_current_datetime",
                            lambda *a, now=now, **kw: now(*a, **kw) - timedelta(seconds=seconds))
    monkeypatch.setattr(botocore.auth, "time", SimpleNamespace(
        time=lambda: time.time() - seconds, strftime=time.strftime, gmtime=time.gmtime))


@pytest.mark.parametrize("signature_version", [None, "s3v4"])
def test_expired_presigned_url(s3: BaseClient, gateway: Gateway, bucket: str, unchanged: None,
                               signature_version: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    client = gateway.client("alice", signature_version=signature_version) if signature_version else s3
    get = {"Bucket": bucket, "Key": "existing"}
    assert httpx.get(client.generate_presigned_url("get_object", Params=get, ExpiresIn=60)).status_code == 200
    with monkeypatch.context() as m:
        _sign_earlier(m, 120)
        still_valid = client.generate_presigned_url("get_object", Params=get, ExpiresIn=600)
        expired = client.generate_presigned_url("get_object", Params=get, ExpiresIn=60)  # a minute ago
        put = client.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "late"}, ExpiresIn=60)
    assert httpx.get(still_valid).status_code == 200  # refused for its expiry, not for when it was signed
    r = httpx.get(expired)
    assert r.status_code == 403 and raw.error_code(r) == "AccessDenied"
    assert "Request has expired" in r.text
    assert httpx.put(put, content=b"too late").status_code == 403


def test_tampered_presigned_url(s3: BaseClient, gateway: Gateway, bucket: str, unchanged: None) -> None:
    v4 = gateway.client("alice", signature_version="s3v4")
    for client in (s3, v4):
        url = client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "existing"})
        r = httpx.get(url.replace("/existing?", "/other?"))
        assert r.status_code == 403 and raw.error_code(r) == "SignatureDoesNotMatch"


def test_clock_skew_over_15_minutes_is_refused(gateway: Gateway, bucket: str, unchanged: None) -> None:
    key_id, secret = _creds(gateway)
    url = raw.url_for(gateway.url, bucket, "skewed")
    for minutes in (-20, 20):
        when = datetime.now(UTC) + timedelta(minutes=minutes)
        signed = raw.sign("PUT", url, {}, hashlib.sha256(b"x").hexdigest(), key_id, secret, when=when)
        r = raw.send("PUT", url, signed.headers, b"x")
        assert r.status_code == 403 and raw.error_code(r) == "RequestTimeTooSkewed"
    when = datetime.now(UTC) - timedelta(minutes=10)  # within the window is fine
    signed = raw.sign("GET", raw.url_for(gateway.url, bucket, "existing"), {}, raw.EMPTY, key_id, secret, when=when)
    assert raw.send("GET", raw.url_for(gateway.url, bucket, "existing"), signed.headers).status_code == 200


def test_malformed_authorization_headers(gateway: Gateway, bucket: str, unchanged: None) -> None:
    url = raw.url_for(gateway.url, bucket, "x")
    cases = {
        "AWS4-HMAC-SHA256 garbage": "AuthorizationHeaderMalformed",
        "AWS4-HMAC-SHA256 Credential=a/b, SignedHeaders=host, Signature=00": "AuthorizationHeaderMalformed",
        "Bearer abc": "AuthorizationHeaderMalformed",
    }
    for header, code in cases.items():
        r = httpx.put(url, content=b"x", headers={"Authorization": header, "x-amz-content-sha256": raw.EMPTY,
                                                  "x-amz-date": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")})
        assert r.status_code == 400 and raw.error_code(r) == code, (header, r.text)
    key_id, secret = _creds(gateway)
    signed = raw.sign("PUT", url, {}, raw.EMPTY, key_id, secret)
    signed.headers["x-amz-date"] = "not-a-date"
    r = raw.send("PUT", url, signed.headers, b"")
    assert r.status_code == 403 and raw.error_code(r) == "AccessDenied"


# payload integrity -----------------------------------------------------------------------------------


def test_signed_payload_must_match_its_hash(gateway: Gateway, bucket: str, unchanged: None) -> None:
    key_id, secret = _creds(gateway)
    url = raw.url_for(gateway.url, bucket, "hashed")
    signed = raw.sign("PUT", url, {}, hashlib.sha256(b"declared").hexdigest(), key_id, secret)
    r = raw.send("PUT", url, signed.headers, b"different")
    assert r.status_code == 400 and raw.error_code(r) == "XAmzContentSHA256Mismatch"


def test_streaming_signed_chunks(gateway: Gateway, bucket: str, s3: BaseClient) -> None:
    key_id, secret = _creds(gateway)
    data = bytes(range(256)) * 1000
    url = raw.url_for(gateway.url, bucket, "chunked")
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data))}
    signed = raw.sign("PUT", url, headers, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", key_id, secret)
    r = raw.send("PUT", url, signed.headers, raw.signed_chunks(data, signed))
    assert r.status_code == 200, r.text
    got = s3.get_object(Bucket=bucket, Key="chunked")
    assert got["Body"].read() == data and got.get("ContentEncoding") is None
    headers["x-amz-trailer"] = "x-amz-checksum-crc32"
    signed = raw.sign("PUT", url, headers, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", key_id, secret)
    body = raw.signed_chunks(data, signed, trailer=("x-amz-checksum-crc32", _crc32(data)))
    r = raw.send("PUT", url, signed.headers, body)
    assert r.status_code == 200, r.text
    assert r.headers["x-amz-checksum-crc32"] == _crc32(data)


def test_streaming_bad_chunk_signature_stores_nothing(gateway: Gateway, bucket: str, unchanged: None) -> None:
    key_id, secret = _creds(gateway)
    data = b"z" * 200_000
    url = raw.url_for(gateway.url, bucket, "existing")
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data))}
    for corrupt in (0, 2, 3):  # first chunk, middle chunk, the final empty chunk
        signed = raw.sign("PUT", url, headers, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", key_id, secret)
        r = raw.send("PUT", url, signed.headers, raw.signed_chunks(data, signed, corrupt=corrupt))
        assert r.status_code == 403 and raw.error_code(r) == "SignatureDoesNotMatch", corrupt
    headers["x-amz-trailer"] = "x-amz-checksum-crc32"
    signed = raw.sign("PUT", url, headers, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", key_id, secret)
    body = raw.signed_chunks(data, signed, trailer=("x-amz-checksum-crc32", _crc32(data)))
    body = body.replace(b"x-amz-trailer-signature:", b"x-amz-trailer-signature:0")
    r = raw.send("PUT", url, signed.headers, body)
    assert r.status_code == 403 and raw.error_code(r) == "SignatureDoesNotMatch"


def test_unsigned_payload_with_trailing_checksum(gateway: Gateway, bucket: str, s3: BaseClient,
                                                 unchanged: None) -> None:
    """What current boto3 and the AWS CLI send over HTTPS: STREAMING-UNSIGNED-PAYLOAD-TRAILER."""
    key_id, secret = _creds(gateway)
    data = b"trailer checked " * 20000
    url = raw.url_for(gateway.url, bucket, "trailed")
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               "x-amz-trailer": "x-amz-checksum-crc32", "x-amz-sdk-checksum-algorithm": "CRC32"}
    signed = raw.sign("PUT", url, headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", key_id, secret)
    r = raw.send("PUT", url, signed.headers, raw.unsigned_chunks(data, ("x-amz-checksum-crc32", _crc32(data))))
    assert r.status_code == 200, r.text
    assert s3.get_object(Bucket=bucket, Key="trailed")["Body"].read() == data
    s3.delete_object(Bucket=bucket, Key="trailed")
    # a wrong trailing checksum, a missing trailer, a short body: refused, nothing stored
    signed = raw.sign("PUT", url, headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", key_id, secret)
    r = raw.send("PUT", url, signed.headers, raw.unsigned_chunks(data, ("x-amz-checksum-crc32", _crc32(b"no"))))
    assert r.status_code == 400 and raw.error_code(r) == "BadDigest"
    signed = raw.sign("PUT", url, headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", key_id, secret)
    r = raw.send("PUT", url, signed.headers, raw.unsigned_chunks(data, None))
    assert r.status_code == 400 and raw.error_code(r) == "InvalidRequest"
    signed = raw.sign("PUT", url, headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", key_id, secret)
    r = raw.send("PUT", url, signed.headers, raw.unsigned_chunks(data[:-10], ("x-amz-checksum-crc32", _crc32(data))))
    assert r.status_code == 400 and raw.error_code(r) == "IncompleteBody"
    signed = raw.sign("PUT", url, headers, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", key_id, secret)
    r = raw.send("PUT", url, signed.headers, b"zz\r\nnot hex")
    assert r.status_code == 400 and raw.error_code(r) in ("InvalidRequest", "IncompleteBody")


# malformed documents ---------------------------------------------------------------------------------


def _signed_xml(gateway: Gateway, method: str, url: str, body: bytes) -> httpx.Response:
    key_id, secret = _creds(gateway)
    headers = {"content-md5": base64.b64encode(hashlib.md5(body).digest()).decode()}
    signed = raw.sign(method, url, headers, hashlib.sha256(body).hexdigest(), key_id, secret)
    return raw.send(method, url, signed.headers, body)


def test_malformed_xml_bodies(gateway: Gateway, bucket: str, s3: BaseClient, unchanged: None) -> None:
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    bomb = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b"<Delete><Object><Key>&b;</Key></Object></Delete>")
    cases = [
        ("POST", raw.url_for(gateway.url, bucket, query="delete="), b"<Delete><Object><Key>x</Key>"),
        ("POST", raw.url_for(gateway.url, bucket, query="delete="), b"<NotDelete/>"),
        ("POST", raw.url_for(gateway.url, bucket, query="delete="), b""),
        ("POST", raw.url_for(gateway.url, bucket, query="delete="), b"<Delete><Quiet>true</Quiet></Delete>"),
        ("POST", raw.url_for(gateway.url, bucket, query="delete="), bomb),
        ("POST", raw.url_for(gateway.url, bucket, "mp", query=f"uploadId={upload}"), b"<CompleteMultipartUpload>"),
        ("POST", raw.url_for(gateway.url, bucket, "mp", query=f"uploadId={upload}"),
         b"<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>x</ETag></Part>"
         b"</CompleteMultipartUpload>"),
        ("POST", raw.url_for(gateway.url, bucket, "mp", query=f"uploadId={upload}"),
         b"<CompleteMultipartUpload></CompleteMultipartUpload>"),
        ("PUT", raw.url_for(gateway.url, "t-new-bucket-xml"), b"<CreateBucketConfiguration><Location"),
        ("PUT", raw.url_for(gateway.url, bucket, "existing", query="tagging="), b"<Tagging><TagSet><Tag>"),
    ]
    for method, url, body in cases:
        r = _signed_xml(gateway, method, url, body)
        assert r.status_code == 400 and raw.error_code(r) == "MalformedXML", (url, body, r.text)
    assert "t-new-bucket-xml" not in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    s3.abort_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload)


def test_delete_objects_body_digest_is_checked(gateway: Gateway, bucket: str, unchanged: None) -> None:
    key_id, secret = _creds(gateway)
    body = b"<Delete><Object><Key>existing</Key></Object></Delete>"
    url = raw.url_for(gateway.url, bucket, query="delete=")
    headers = {"content-md5": base64.b64encode(hashlib.md5(b"other").digest()).decode()}
    signed = raw.sign("POST", url, headers, hashlib.sha256(body).hexdigest(), key_id, secret)
    r = raw.send("POST", url, signed.headers, body)
    assert r.status_code == 400 and raw.error_code(r) == "BadDigest"


# keys and headers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "code"), [
    ("a/../b", "InvalidArgument"),
    ("../../etc/passwd", "InvalidArgument"),
    ("./x", "InvalidArgument"),
    ("..", "InvalidArgument"),
    ("nul\x00byte", "InvalidArgument"),
    ("k" * 1025, "KeyTooLongError"),
    ("é" * 513, "KeyTooLongError"),
])
def test_bad_keys_are_refused(s3: BaseClient, bucket: str, key: str, code: str, unchanged: None) -> None:
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    assert _code(exc) == code
    with pytest.raises(ClientError) as exc:
        s3.create_multipart_upload(Bucket=bucket, Key=key)
    assert _code(exc) == code
    with pytest.raises(ClientError) as exc:
        s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": "existing"})
    assert _code(exc) == code


def test_names_with_dots_inside_are_fine(s3: BaseClient, bucket: str) -> None:
    for key in ("a..b", "...", "dir/.hidden", "x/..y/z", "k" * 1024):
        s3.put_object(Bucket=bucket, Key=key, Body=b"ok")
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"ok"


def test_huge_and_garbage_headers(gateway: Gateway, bucket: str, s3: BaseClient, unchanged: None) -> None:
    url = raw.url_for(gateway.url, bucket, "existing")
    r = httpx.get(url, headers={"x-filler": "a" * 100_000})
    assert r.status_code in (400, 431) and (r.status_code == 431 or
                                            raw.error_code(r) == "RequestHeaderSectionTooLarge")
    client = gateway.client("alice")

    def add_metadata(request: object, **_: object) -> None:
        request.headers["x-amz-meta-big"] = "v" * 3000  # type: ignore[attr-defined]

    client.meta.events.register_first("before-sign.s3.PutObject", add_metadata)
    with pytest.raises(ClientError) as exc:
        client.put_object(Bucket=bucket, Key="meta", Body=b"x")
    assert _code(exc) == "MetadataTooLarge"
    # bytes that are not a valid request: the HTTP layer answers 400, the gateway keeps serving
    host, port = urlsplit(gateway.url).netloc.split(":")
    for garbage in (b"\x00\x01\x02 garbage\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
                    b"PUT /" + bucket.encode() + b"/k HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"):
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(garbage)
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 400"), answer[:100]
    key_id, secret = _creds(gateway)
    bad_path = f"{gateway.url}/{bucket}/%FF%FE"
    signed = raw.sign("GET", bad_path, {}, raw.EMPTY, key_id, secret)
    r = raw.send("GET", bad_path, signed.headers)
    assert r.status_code == 400 and raw.error_code(r) == "InvalidURI"
    r = httpx.get(f"{gateway.url}/{bucket}?list-type=2", headers={"x-amz-date": "\u00e9".encode("latin-1")})
    assert r.status_code == 403
    assert s3.get_object(Bucket=bucket, Key="existing", Range="bytes=whatever")["Body"].read() == b"keep me"


def test_unknown_operations(gateway: Gateway, bucket: str, s3: BaseClient) -> None:
    key_id, secret = _creds(gateway)
    url = raw.url_for(gateway.url, bucket, "k", query="torrent=")
    signed = raw.sign("GET", url, {}, raw.EMPTY, key_id, secret)
    r = raw.send("GET", url, signed.headers)
    assert r.status_code == 501 and raw.error_code(r) == "NotImplemented"
    url = raw.url_for(gateway.url, bucket)
    signed = raw.sign("PATCH", url, {}, raw.EMPTY, key_id, secret)
    r = raw.send("PATCH", url, signed.headers)
    assert r.status_code == 405 and raw.error_code(r) == "MethodNotAllowed"
    legacy = boto3.client("s3", endpoint_url=gateway.url, region_name="us-east-1",
                          aws_access_key_id=key_id, aws_secret_access_key=secret,
                          config=Config(signature_version="s3"))
    legacy.put_object(Bucket=bucket, Key="v2-signed", Body=b"signature version 2")
    assert legacy.get_object(Bucket=bucket, Key="v2-signed")["Body"].read() == b"signature version 2"


def test_client_that_disconnects_mid_upload_leaves_nothing(gateway: Gateway, bucket: str, s3: BaseClient,
                                                          unchanged: None) -> None:
    key_id, secret = _creds(gateway)
    url = raw.url_for(gateway.url, bucket, "existing")
    signed = raw.sign("PUT", url, {"content-length": str(8 * 1024 * 1024)}, "UNSIGNED-PAYLOAD", key_id, secret)
    host, port = urlsplit(gateway.url).netloc.split(":")
    head = "".join(f"{k}: {v}\r\n" for k, v in signed.headers.items())
    tmp = gateway.tier_dirs["hot-disk"] / "tmp"
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(f"PUT {urlsplit(url).path} HTTP/1.1\r\n{head}\r\n".encode() + b"x" * 300_000)
        wait_until(lambda: any(tmp.iterdir()), message="the upload never reached the tier")
    wait_until(lambda: not any(tmp.iterdir()), message="a half-written temp file was left behind")
    assert s3.get_object(Bucket=bucket, Key="existing")["Body"].read() == b"keep me"


def test_key_encrypted_under_another_secret_key_is_an_invalid_key(gateway: Gateway, bucket: str,
                                                                   unchanged: None) -> None:
    from cryptography.fernet import Fernet
    from sqlalchemy import update

    from tierpilot.auth import service as auth
    from tierpilot.auth.models import AccessKey
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        _user, key = auth.create_user(s, "moved-key-user", "moved-key-password-1")
        # what a database brought from an installation with another TIERPILOT_SECRET_KEY holds
        foreign = Fernet(Fernet.generate_key()).encrypt(key.secret_access_key.encode()).decode()
        s.execute(update(AccessKey).where(AccessKey.access_key_id == key.access_key_id)
                  .values(secret_encrypted=foreign))
    client = boto3.client("s3", endpoint_url=gateway.url, aws_access_key_id=key.access_key_id,
                          aws_secret_access_key=key.secret_access_key, region_name="us-east-1")
    for _ in range(3):
        with pytest.raises(ClientError) as exc:
            client.list_objects_v2(Bucket=bucket)
        assert _code(exc) == "InvalidAccessKeyId"
    url = raw.url_for(gateway.url, bucket, "existing")
    signed = raw.sign("GET", url, {}, "UNSIGNED-PAYLOAD", key.access_key_id, "any-secret")
    r = raw.send("GET", url, signed.headers)
    assert r.status_code == 403 and raw.error_code(r) == "InvalidAccessKeyId"
    presigned = client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "existing"})
    r = httpx.get(presigned)
    assert r.status_code == 403 and raw.error_code(r) == "InvalidAccessKeyId"
    # said once per process, not once per request
    wait_until(lambda: key.access_key_id in gateway.log.read_text(errors="replace"), timeout=10)
    assert gateway.log.read_text(errors="replace").count(key.access_key_id) == 1


def test_v2_presigned_url_may_not_live_past_a_week(gateway: Gateway, bucket: str, unchanged: None) -> None:
    v2 = gateway.client("alice", signature_version="s3")
    get = {"Bucket": bucket, "Key": "existing"}
    assert httpx.get(v2.generate_presigned_url("get_object", Params=get, ExpiresIn=7 * 86400)).status_code == 200
    forever = v2.generate_presigned_url("get_object", Params=get, ExpiresIn=10 * 365 * 86400)
    r = httpx.get(forever)
    assert r.status_code == 403 and raw.error_code(r) == "AccessDenied", r.text
    put = v2.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "late"}, ExpiresIn=8 * 86400)
    assert httpx.put(put, content=b"x").status_code == 403


def test_oversized_delete_objects_body_is_answered_not_reset(gateway: Gateway, bucket: str,
                                                             unchanged: None) -> None:
    key_id, secret = _creds(gateway)
    entry = b"<Object><Key>" + b"k" * 1000 + b"</Key></Object>"
    body = b"<Delete>" + entry * (12 * 1024 * 1024 // len(entry)) + b"</Delete>"
    url = raw.url_for(gateway.url, bucket, query="delete=")
    for payload_hash in ("UNSIGNED-PAYLOAD", hashlib.sha256(body).hexdigest()):
        headers = {"content-md5": base64.b64encode(hashlib.md5(body).digest()).decode()}
        signed = raw.sign("POST", url, headers, payload_hash, key_id, secret)
        status, answer = _send_whole_body_then_read(url, signed.headers, body)
        assert status == 400 and b"<Code>MaxMessageLengthExceeded</Code>" in answer, answer[:300]


def _send_whole_body_then_read(url: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
    """As a client on a slower link does: the body in pieces, all of it, then the answer read."""
    parts = urlsplit(url)
    head = f"POST {parts.path}?{parts.query} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"content-length: {len(body)}\r\n\r\n"
    with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=30) as sock:
        sock.sendall(head.encode())
        for start in range(0, len(body), 256 * 1024):
            sock.sendall(body[start:start + 256 * 1024])
            time.sleep(0.005)
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b">"):
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
    return int(answer.split(b" ", 2)[1]), answer
