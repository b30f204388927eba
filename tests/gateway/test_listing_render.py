"""ListObjects' page as bytes: LastModified comes formatted from the scan (SQLite's stored text sliced,
PostgreSQL's to_char in UTC) and must read exactly as the datetime path rendered it: milliseconds truncated,
``.000`` for a stored time without a fraction, UTC whatever offset a writer stored; keys escaped as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest
from botocore.client import BaseClient
from sqlalchemy import text

from tests.gateway.conftest import Gateway
from tierpilot.catalog import service as catalog
from tierpilot.gateway import xmlio
from tierpilot.kit.db import transaction

# key -> (the time stored, what LastModified must say)
TIMES = {
    "a&b<c>\"d'": (datetime(2026, 1, 2, 3, 4, 5, 678999, UTC), "2026-01-02T03:04:05.678Z"),
    "plain": (datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "2026-01-02T03:04:05.000Z"),
    "tab\tand\x01ctl": (datetime(2026, 12, 31, 23, 59, 59, 999999, UTC), "2026-12-31T23:59:59.999Z"),
    "\u00fcnic\u00f8de/\u2603": (datetime(2025, 6, 7, 8, 9, 10, 1000, UTC), "2025-06-07T08:09:10.001Z"),
}


def _set_times(bucket: str, stored_as_text: dict[str, str]) -> None:
    """Write each key's time; on SQLite the stored text may be given as another writer would leave it."""
    with transaction(write=True) as s:
        bucket_id = s.execute(text("SELECT id FROM buckets WHERE name = :n"), {"n": bucket}).scalar_one()
        sqlite = s.get_bind().dialect.name == "sqlite"
        for key, (moment, _) in TIMES.items():
            value: object = stored_as_text.get(key, moment.isoformat(" ")[:26]) if sqlite else moment
            s.execute(text("UPDATE objects SET last_modified = :v WHERE bucket_id = :b AND key = :k"),
                      {"v": value, "b": bucket_id, "k": key})


@pytest.mark.parametrize("encoding", ["", "&encoding-type=url"])
def test_page_bytes_match_the_datetime_rendering(gateway: Gateway, s3: BaseClient, bucket: str,
                                                 encoding: str) -> None:
    for key in TIMES:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    # SQLite: one time stored without a fraction, one with an offset (what sqlite3's own adapter writes)
    _set_times(bucket, {"plain": "2026-01-02 03:04:05", "\u00fcnic\u00f8de/\u2603": "2025-06-07 10:09:10.001000+02:00"})
    # a SigV2 URL signs no listing parameter, so the page can be asked for with and without boto3's encoding-type
    url = gateway.client("alice", signature_version="s3").generate_presigned_url(
        "list_objects_v2", Params={"Bucket": bucket})
    r = httpx.get(url.replace("&encoding-type=url", "") + encoding, timeout=10)
    assert r.status_code == 200, r.text
    body = r.text
    for key, (_, shown) in TIMES.items():
        shown_key = xmlio.esc(xmlio.url_encode(key) if encoding else key)
        assert f"<Key>{shown_key}</Key><LastModified>{shown}</LastModified>" in body
    if not encoding:
        assert "<Key>a&amp;b&lt;c&gt;&quot;d'</Key>" in body
        assert "<Key>tab\tand&#x1;ctl</Key>" in body
    else:
        assert "<Key>tab%09and%01ctl</Key>" in body
    # and each the same as the dashboard's datetime, rendered as before
    with transaction() as s:
        bucket_id = s.execute(text("SELECT id FROM buckets WHERE name = :n"), {"n": bucket}).scalar_one()
        old = catalog.list_objects(s, bucket_id)
        new = catalog.list_objects_s3(s, bucket_id)
    assert [o.key for o in old.objects] == [key for key, *_ in new.objects]
    for o, (_, modified, etag, size, storage_class) in zip(old.objects, new.objects, strict=True):
        assert o.last_modified.isoformat(timespec="milliseconds")[:23] + "Z" == modified
        assert (o.etag.strip('"'), o.size, o.storage_class) == (etag, size, storage_class)


def test_postgresql_formats_in_utc_whatever_the_session_zone(s3: BaseClient, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with transaction(write=True) as s:
        if s.get_bind().dialect.name != "postgresql":
            pytest.skip("PostgreSQL's session time zone")
        s.execute(text("UPDATE objects SET last_modified = :v WHERE key = 'k' AND bucket_id = "
                       "(SELECT id FROM buckets WHERE name = :n)"),
                  {"v": datetime(2026, 3, 4, 1, 2, 3, 456789, timezone(timedelta(hours=-5))), "n": bucket})
    with transaction() as s:
        s.execute(text("SET LOCAL TIME ZONE 'Asia/Tokyo'"))
        bucket_id = s.execute(text("SELECT id FROM buckets WHERE name = :n"), {"n": bucket}).scalar_one()
        [(_, modified, *_)] = catalog.list_objects_s3(s, bucket_id).objects
    assert modified == "2026-03-04T06:02:03.456Z"
