"""ListObjectVersions through boto3 on a real gateway, compared byte for byte with a page built here from the
catalog's by-key reads: delete markers (newest and between versions), many versions per key, "null" versions,
keys that need escaping and URL encoding, delimiters, prefixes, and paging by key-marker and version-id-marker
as boto3's paginator does it (encoding-type=url, which botocore always asks for) and as a raw client does."""

from __future__ import annotations

import http.client
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from tests.gateway.conftest import Gateway
from tests.gateway.rawclient import EMPTY, sign

KEYS = ["a", "a/1", "a/2", "a&b", "a<b>", "b/c/1", "b/c/2", "b/d", "c/", "c/x", "d~", "é/1", "q\"uote", "z space",
        "z+plus", "zz/ü/1"] + [f"k/{i:02d}" for i in range(12)]


@pytest.fixture(scope="module")
def versioned(gateway: Gateway) -> str:
    """A versioned bucket whose keys have 1 to 4 versions, some hidden by a delete marker, some with a marker
    between two versions, and a suspended-time "null" version under newer ones."""
    s3 = gateway.client("alice")
    name = "t-versions-listing"
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    for n, key in enumerate(KEYS):
        for i in range(1 + n % 4):
            s3.put_object(Bucket=name, Key=key, Body=f"{key}-{i}".encode())
        if n % 5 == 1:
            s3.delete_object(Bucket=name, Key=key)  # the newest version is a marker: no current row
        elif n % 5 == 3:
            s3.delete_object(Bucket=name, Key=key)
            s3.put_object(Bucket=name, Key=key, Body=b"back")  # a marker between two versions
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Suspended"})
    s3.put_object(Bucket=name, Key="k/03", Body=b"null")
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=name, Key="k/03", Body=b"after null")
    return name


def _versions(bucket: str) -> tuple[list[tuple[str, str, bool, Any]], int]:
    """Every version of the bucket in S3's order, from the catalog's by-key reads: (key, version id, latest,
    ORM row), and the bucket owner's id."""
    from tierpilot.catalog import repository
    from tierpilot.catalog.models import Bucket, Object, ObjectVersion
    from tierpilot.kit.db import transaction

    with transaction() as s:
        b = s.query(Bucket).filter_by(name=bucket).one()
        keys = sorted({k for (k,) in s.query(Object.key).filter_by(bucket_id=b.id)}
                      | {k for (k,) in s.query(ObjectVersion.key).filter_by(bucket_id=b.id)})
        out = []
        for key in keys:
            current = repository.get_object(s, b.id, key)
            rows: list[Any] = ([current] if current is not None else []) + repository.versions_of_key(s, b.id, key)
            out += [(key, row.version_id, n == 0, row) for n, row in enumerate(rows)]
            s.expunge_all()
        return out, b.owner_id


def _expected(bucket: str, query: dict[str, str], owner: str) -> bytes:
    """The page S3 answers for ``query``, built element by element with the gateway's xmlio helpers."""
    from tierpilot.gateway import xmlio

    versions, _owner_id = _versions(bucket)
    prefix, delimiter = query.get("prefix", ""), query.get("delimiter", "")
    key_marker, version_marker = query.get("key-marker", ""), query.get("version-id-marker", "")
    max_keys = min(int(query.get("max-keys", "1000")), 1000)
    enc = xmlio.url_encode if "encoding-type" in query else str
    items: list[tuple[str, str | None, Any]] = []  # (key or common prefix, version id or None, entry)
    for key, vid, latest, row in versions:
        if not key.startswith(prefix):
            continue
        cut = key.find(delimiter, len(prefix)) if delimiter else -1
        if cut >= 0:
            common = key[: cut + len(delimiter)]
            if not items or items[-1][0] != common:
                items.append((common, None, None))
        else:
            items.append((key, vid, (latest, row)))
    start = 0
    if key_marker:
        cut = key_marker.find(delimiter, len(prefix)) if delimiter and key_marker.startswith(prefix) else -1
        after = [n for n, (k, vid, _) in enumerate(items) if k == key_marker and vid == version_marker]
        if cut >= 0:  # inside a common prefix already returned
            start = next((n for n, (k, _, _) in enumerate(items) if k > key_marker[: cut + len(delimiter)]
                          and not k.startswith(key_marker[: cut + len(delimiter)])), len(items))
        elif version_marker and after and key_marker >= prefix:
            start = after[0] + 1
        else:
            start = next((n for n, (k, _, _) in enumerate(items) if k > key_marker), len(items))
    page, rest = items[start:start + max_keys], items[start + max_keys:]
    head = [xmlio.el("Name", bucket), xmlio.el("Prefix", enc(prefix)), xmlio.el("KeyMarker", enc(key_marker)),
            xmlio.el("VersionIdMarker", version_marker), xmlio.el("MaxKeys", max_keys)]
    if delimiter:
        head.append(xmlio.el("Delimiter", enc(delimiter)))
    head.append(xmlio.el("IsTruncated", "true" if rest else "false"))
    if rest and page:
        head.append(xmlio.el("NextKeyMarker", enc(page[-1][0])))
        if page[-1][1] is not None:
            head.append(xmlio.el("NextVersionIdMarker", page[-1][1]))
    if "encoding-type" in query:
        head.append(xmlio.el("EncodingType", "url"))
    body = []
    for shown_key, shown_vid, entry in page:
        if entry is None:
            continue
        latest, row = entry
        fields = (f"{xmlio.el('Key', enc(shown_key))}{xmlio.el('VersionId', shown_vid)}"
                  f"{xmlio.el('IsLatest', str(latest).lower())}"
                  f"{xmlio.el('LastModified', xmlio.iso(row.last_modified))}")
        if getattr(row, "delete_marker", False):
            body.append(f"<DeleteMarker>{fields}{owner}</DeleteMarker>")
        else:
            body.append(f"<Version>{fields}{xmlio.el('ETag', chr(34) + row.etag.strip(chr(34)) + chr(34))}"
                        f"{xmlio.el('Size', row.size)}{xmlio.el('StorageClass', row.storage_class)}{owner}</Version>")
    prefixes = [f"<CommonPrefixes>{xmlio.el('Prefix', enc(k))}</CommonPrefixes>" for k, _, e in page if e is None]
    return xmlio.document("ListVersionsResult", head + body + prefixes)


def _owner(gateway: Gateway) -> str:
    from tierpilot.gateway import xmlio

    return f"<Owner>{xmlio.el('ID', gateway.users['alice'].id)}{xmlio.el('DisplayName', 'alice')}</Owner>"


@pytest.mark.parametrize("prefix, delimiter", [("", ""), ("", "/"), ("b/", "/"), ("a", "/"), ("k/", ""),
                                               ("c/", "/"), ("z", "")])
@pytest.mark.parametrize("page_size", [1, 2, 3, 7, 1000])
def test_boto3_pages_are_byte_for_byte_the_catalogs_versions(gateway: Gateway, versioned: str, prefix: str,
                                                             delimiter: str, page_size: int) -> None:
    s3 = gateway.client("alice")
    seen: list[tuple[dict[str, str], bytes]] = []
    queries: list[dict[str, str]] = []

    def before(params: dict[str, Any], **_: Any) -> None:
        queries.append(dict(parse_qsl(urlsplit(params["url"]).query, keep_blank_values=True)))

    def after(http_response: Any, **_: Any) -> None:
        seen.append((queries[-1], http_response.content))

    s3.meta.events.register("before-send.s3.ListObjectVersions", lambda request, **_: before({"url": request.url}))
    s3.meta.events.register("after-call.s3.ListObjectVersions", after)
    args: dict[str, Any] = {"Bucket": versioned, "Prefix": prefix, "PaginationConfig": {"PageSize": page_size}}
    if delimiter:
        args["Delimiter"] = delimiter
    listed = [(v["Key"], v["VersionId"]) for page in s3.get_paginator("list_object_versions").paginate(**args)
              for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
    assert seen and all("encoding-type" in query for query, _ in seen)
    if page_size < 1000 and not delimiter:
        assert len(seen) > 1  # paged by key-marker and version-id-marker
    owner = _owner(gateway)
    for query, body in seen:
        assert body == _expected(versioned, query, owner), query
    versions, _ = _versions(versioned)
    shown = {(k, vid) for k, vid, _, _ in versions if k.startswith(prefix)
             and not (delimiter and k.find(delimiter, len(prefix)) >= 0)}
    assert set(listed) == shown and len(listed) == len(shown)


def _raw(gateway: Gateway, bucket: str, query: dict[str, str]) -> bytes:
    user = gateway.users["alice"]
    qs = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(query.items()))
    url = f"{gateway.url}/{bucket}?{qs}"
    signed = sign("GET", url, {}, EMPTY, user.access_key_id, user.secret_access_key)
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        conn.request("GET", f"{parts.path}?{parts.query}", headers=signed.headers)
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, body
        return body
    finally:
        conn.close()


def test_raw_pages_from_every_version_marker_are_the_catalogs_versions(gateway: Gateway, versioned: str) -> None:
    """Without encoding-type (escaped keys in the XML) and from every (key, version id) as the markers, the
    current version's, a marker's, one of another key and one that names nothing."""
    owner = _owner(gateway)
    versions, _ = _versions(versioned)
    markers = [(k, vid) for k, vid, _, _ in versions] + [("a", versions[-1][1]), ("b/c/1", "no-such-version")]
    for n, (key, vid) in enumerate(markers):
        query = {"versions": "", "key-marker": key, "version-id-marker": vid, "max-keys": str(1 + n % 4)}
        if n % 3 == 1:
            query["delimiter"] = "/"
        if n % 4 == 2:
            query["prefix"] = key[:1]
        if n % 5 == 4:
            query["prefix"] = "k/"  # after the markers of keys before it: starts at the prefix
        assert _raw(gateway, versioned, query) == _expected(versioned, query, owner), query
