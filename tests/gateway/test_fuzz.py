"""A bounded fuzz of the gateway's XML bodies and query parameters (the API's runs in tests/platform/test_fuzz.py).

Fixed seed, a few hundred signed requests against a real gateway process: documents of every operation that
takes one, mutated (numbers huge, negative or not numbers, unicode, control characters, elements dropped,
repeated or nested deep), and the query parameters S3 reads as numbers, ids and tokens. Every answer must be an
answer (no dropped connection) below 500; a bad input is the client's error, never the server's.
"""

from __future__ import annotations

import hashlib
import random
from urllib.parse import quote

import httpx
from botocore.client import BaseClient

from tests.gateway import rawclient as raw
from tests.gateway.conftest import Gateway

SEED = 20261205
XML_REQUESTS = 260
QUERY_REQUESTS = 200

ODD_VALUES = [
    "", "0", "-1", "-2147483649", "2147483648", "9" * 40, "1e309", "NaN", "0x10", " 7 ", "1.5", "+3", "٣",
    "\u202e\u0000", "\x01\x02\x7f", "é" * 300, "a" * 5000, "true", "\ud7ff", "../..", "%", "&amp;", "]]>", "null",
]

DOCUMENTS = {
    ("PUT", "lifecycle"): (
        "<LifecycleConfiguration><Rule><ID>r</ID><Filter><Prefix>p/</Prefix></Filter><Status>Enabled</Status>"
        "<Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>"
        "<Expiration><Days>365</Days></Expiration>"
        "<NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays></NoncurrentVersionExpiration>"
        "<AbortIncompleteMultipartUpload><DaysAfterInitiation>3</DaysAfterInitiation>"
        "</AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>"),
    ("PUT", "tagging"): "<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>",
    ("PUT", "cors"): (
        "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
        "<AllowedHeader>*</AllowedHeader><MaxAgeSeconds>3000</MaxAgeSeconds><ExposeHeader>ETag</ExposeHeader>"
        "</CORSRule></CORSConfiguration>"),
    ("PUT", "versioning"): "<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>",
    ("POST", "delete"): "<Delete><Quiet>true</Quiet><Object><Key>nothing-here</Key></Object></Delete>",
    ("PUT", "acl"): (
        '<AccessControlPolicy><Owner><ID>1</ID></Owner><AccessControlList><Grant><Grantee '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>1</ID></Grantee>'
        "<Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>"),
    ("PUT", "object-lock"): (
        "<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
        "<Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>"),
    ("PUT", "publicAccessBlock"): (
        "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls>"
        "<IgnorePublicAcls>false</IgnorePublicAcls></PublicAccessBlockConfiguration>"),
    ("PUT", "ownershipControls"): (
        "<OwnershipControls><Rule><ObjectOwnership>BucketOwnerPreferred</ObjectOwnership></Rule>"
        "</OwnershipControls>"),
    ("POST", "complete"): (
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"etag\"</ETag></Part>"
        "</CompleteMultipartUpload>"),
}
POLICY = ('{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject",'
          '"Resource":"arn:aws:s3:::BUCKET/nothing/*","Condition":{"NumericGreaterThan":{"s3:max-keys":"10"}}}]}')


def _mutate_xml(doc: str, rng: random.Random) -> str:
    """One to three mutations of a document's text."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(7)
        texts = [i for i in range(len(doc) - 1) if doc[i] == ">" and doc[i + 1] != "<"]
        if kind <= 2 and texts:  # a value replaced
            start = rng.choice(texts) + 1
            end = doc.index("<", start)
            value = rng.choice(ODD_VALUES)
            value = value.replace("&", "&amp;").replace("<", "&lt;") if rng.random() < 0.7 else value
            doc = doc[:start] + value + doc[end:]
        elif kind == 3:  # an element repeated many times
            start = doc.find("<", 1)
            end = doc.rfind("</")
            piece = doc[start:end]
            doc = doc[:start] + piece * rng.choice([2, 11, 51, 1001]) + doc[end:]
        elif kind == 4:  # cut short
            doc = doc[: rng.randrange(len(doc))]
        elif kind == 5:  # nested deep
            depth = rng.choice([50, 5000])
            doc = doc.replace("</", "<x>" * depth + "</x>" * depth + "</", 1)
        else:  # an unknown element or a stray character
            at = rng.randrange(len(doc))
            doc = doc[:at] + rng.choice(["<Unknown>1</Unknown>", "\x00", "&undefined;", "<!-- c -->", "\u00ff"]) + \
                doc[at:]
    return doc


def _mutate_json(doc: str, rng: random.Random) -> str:
    value = rng.choice(ODD_VALUES)
    choice = rng.randrange(4)
    if choice == 0:
        return doc.replace('"10"', f'"{value}"')
    if choice == 1:
        return doc.replace('"Deny"', f'"{value[:50]}"')
    if choice == 2:
        return doc[: rng.randrange(len(doc))]
    return doc.replace("[{", "[" + "{" * 2000, 1)


def _send(client: httpx.Client, gateway: Gateway, method: str, url: str, body: bytes = b"") -> httpx.Response:
    u = gateway.users["alice"]
    signed = raw.sign(method, url, {}, hashlib.sha256(body).hexdigest(), u.access_key_id, u.secret_access_key)
    return client.request(method, url, headers=signed.headers, content=body)


def _query(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in pairs)


def test_gateway_answers_mutated_xml_and_query_inputs_without_5xx(gateway: Gateway, s3: BaseClient,
                                                                  bucket: str) -> None:
    rng = random.Random(SEED)
    s3.put_object(Bucket=bucket, Key="existing", Body=b"keep me")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"x" * 10)
    try:
        _fuzz(gateway, s3, bucket, upload, rng)
    finally:  # its parts would otherwise stay on the tier the other gateway tests share
        s3.abort_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload)


def _fuzz(gateway: Gateway, s3: BaseClient, bucket: str, upload: str, rng: random.Random) -> None:
    failures: list[str] = []
    with httpx.Client(timeout=30) as client:
        for i in range(XML_REQUESTS):
            (method, sub), doc = rng.choice(list(DOCUMENTS.items()))
            if rng.random() < 0.1:
                method, sub, doc = "PUT", "policy", POLICY.replace("BUCKET", bucket)
            body = (_mutate_json(doc, rng) if sub == "policy" else _mutate_xml(doc, rng)).encode("utf-8",
                                                                                               "surrogatepass")
            if sub == "complete":
                url = raw.url_for(gateway.url, bucket, "mp", query=_query([("uploadId", upload)]))
            elif sub == "tagging" and rng.random() < 0.5:
                url = raw.url_for(gateway.url, bucket, "existing", query="tagging=")
            else:
                url = raw.url_for(gateway.url, bucket, query=f"{sub}=")
            try:
                r = _send(client, gateway, method, url, body)
            except httpx.TransportError as exc:
                failures.append(f"xml {i} {method} {sub}: connection {exc!r} body={body[:200]!r}")
                continue
            if r.status_code >= 500:
                failures.append(f"xml {i} {method} {sub}: {r.status_code} {r.text[:300]} body={body[:200]!r}")
        for i in range(QUERY_REQUESTS):
            odd = rng.choice(ODD_VALUES)
            method, key, pairs = rng.choice([
                ("GET", "", [("list-type", rng.choice(["2", odd])), ("max-keys", odd)]),
                ("GET", "", [("list-type", "2"), ("continuation-token", odd), ("start-after", odd)]),
                ("GET", "", [("max-keys", odd), ("marker", odd), ("delimiter", odd), ("prefix", odd)]),
                ("GET", "", [("versions", ""), ("max-keys", odd), ("key-marker", odd), ("version-id-marker", odd)]),
                ("GET", "", [("uploads", ""), ("max-uploads", odd), ("upload-id-marker", odd), ("key-marker", odd)]),
                ("GET", "", [("list-type", "2"), ("encoding-type", odd), ("fetch-owner", odd)]),
                ("GET", "existing", [("partNumber", odd)]),
                ("HEAD", "existing", [("partNumber", odd)]),
                ("GET", "existing", [("versionId", odd)]),
                ("GET", "existing", [("response-content-type", odd), ("response-expires", odd)]),
                ("GET", "mp", [("uploadId", upload), ("max-parts", odd), ("part-number-marker", odd)]),
                ("GET", "mp", [("uploadId", odd)]),
                ("PUT", "mp", [("partNumber", odd), ("uploadId", upload)]),
                ("PUT", "mp", [("partNumber", "2"), ("uploadId", odd)]),
                ("DELETE", "nothing-here", [("versionId", odd)]),
                ("GET", "existing", [("attributes", "")]),
                ("GET", "existing", [("tagging", ""), ("versionId", odd)]),
            ])
            url = raw.url_for(gateway.url, bucket, key, query=_query(pairs))
            try:
                r = _send(client, gateway, method, url, b"p" if method == "PUT" else b"")
            except httpx.TransportError as exc:
                failures.append(f"query {i} {method} {key} {pairs!r}: connection {exc!r}")
                continue
            if r.status_code >= 500:
                failures.append(f"query {i} {method} {key} {pairs!r}: {r.status_code} {r.text[:300]}")
    assert not failures, "\n".join(failures[:20])
    assert s3.get_object(Bucket=bucket, Key="existing")["Body"].read() == b"keep me"
