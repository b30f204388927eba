"""Adopting a remote bucket: every key, size and ETag in the catalog, no byte copied, a re-scan adds the new."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import boto3
import pytest
from sqlalchemy import select, update
from typer.testing import CliRunner

from tests.conftest import make_user
from tests.netem import NetemProxy
from tierpilot.adoption.listing import (
    CUTS,
    AdoptionError,
    Gate,
    Progress,
    S3Lister,
    S3Source,
    list_parallel,
    listed_time,
    parse_page,
)
from tierpilot.adoption.service import adopt
from tierpilot.app.cli import app
from tierpilot.catalog import store
from tierpilot.catalog.models import Bucket, Object
from tierpilot.drivers import registry
from tierpilot.kit.db import transaction, utcnow

# keys at every edge of the listing's cuts: the prefix itself, cut characters, just past them, deep, unicode
EDGE_KEYS = ["top.txt", "z", "d0/", "d0/0", "d0/1zzz", "d0/2", "d0/~", "d0/z", "d0/zz/deeper/x", "d1/é-ünï",
             "d1/" + "a" * 300, "d1/%41 percent", "d1/sp ace", "d1/./dot", "d2/"] + [f"d3/{c}" for c in CUTS[1:]]


@pytest.fixture
def remote(db: str, moto_far: tuple[str, NetemProxy]) -> Iterator[dict[str, Any]]:
    """An s3 tier on moto (reached through the 10 ms proxy) and a bucket beside the tier's own one."""
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    moto_url, proxy = moto_far
    tag = uuid.uuid4().hex[:8]
    # set-up writes go to moto directly; the adoption goes through the proxy
    client = boto3.client("s3", endpoint_url=moto_url, aws_access_key_id="AKIDTEST",
                          aws_secret_access_key="secret", region_name="us-east-1")
    client.create_bucket(Bucket=f"tier-{tag}")
    client.create_bucket(Bucket=f"old-{tag}")
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=f"cloud-{tag}", driver="s3", storage_classes=["STANDARD"], config={
            "endpoint_url": proxy.url, "bucket": f"tier-{tag}", "access_key_id": "AKIDTEST",
            "secret_access_key": "secret"}))
    registry.tiers.invalidate()
    owner = make_user(f"owner-{tag}", "owner-password-1", is_admin=True)
    yield {"client": client, "tier": f"cloud-{tag}", "bucket": f"old-{tag}", "owner": owner, "tag": tag,
           "proxy_url": proxy.url}


def _put_many(client: Any, bucket: str, keys: list[str]) -> dict[str, tuple[int, str]]:
    """Upload ``keys`` (distinct small bodies); key -> (size, ETag)."""
    bodies = {key: f"{key}:{i}".encode() * (1 + i % 7) for i, key in enumerate(keys)}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: client.put_object(Bucket=bucket, Key=kv[0], Body=kv[1]), bodies.items()))
    return {key: (len(body), hashlib.md5(body).hexdigest()) for key, body in bodies.items()}


def _catalog(bucket: str) -> dict[str, tuple[int, str]]:
    with transaction() as s:
        bucket_id = s.scalar(select(Bucket.id).where(Bucket.name == bucket))
        return {k: (size, etag) for k, size, etag in s.execute(
            select(Object.key, Object.size, Object.etag).where(Object.bucket_id == bucket_id))}


def _owner_id(remote: dict[str, Any]) -> int:
    from tierpilot.auth.models import User

    with transaction() as s:
        return int(s.scalar(select(User.id).where(User.username == f"owner-{remote['tag']}")) or 0)


def test_adoption_lists_every_key_size_and_etag_in_parallel(remote: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    client, bucket = remote["client"], remote["bucket"]
    keys = EDGE_KEYS + [f"p{i % 3}/k{i:05d}" for i in range(500)]
    expected = _put_many(client, bucket, keys)
    monkeypatch.setattr("tierpilot.adoption.service.BATCH", 100)
    progress = adopt(remote["tier"], bucket, owner_id=_owner_id(remote), workers=8, page_size=40)
    assert _catalog(bucket) == expected
    assert progress.objects == progress.added == len(keys)
    # pages of at most 40 keys gathered into batches of 100 or more (one transaction each)
    assert len(keys) // 140 <= progress.batches <= len(keys) // 100 + 1
    assert progress.requests >= len(keys) // 40
    # times round-trip as the remote gave them (the batch travels as text to the database)
    listed = {c["Key"]: c["LastModified"] for c in client.list_objects_v2(Bucket=bucket, Prefix="d")["Contents"]}
    with transaction() as s:
        stored = dict(s.execute(select(Object.key, Object.last_modified).join(Bucket, Bucket.id == Object.bucket_id)
                                .where(Bucket.name == bucket, Object.key.in_(list(listed)))).all())
    assert stored == listed
    # prefixes of more than a page were cut into ranges listed at once
    assert progress.ranges_done == progress.ranges_total > 3 * 10
    with transaction() as s:
        row = s.scalars(select(Bucket).where(Bucket.name == bucket)).one()
        assert (row.object_count, row.used_bytes) == (len(keys), sum(size for size, _ in expected.values()))
    # nothing was copied: the tier's own bucket stays empty, reads go to the adopted key
    assert client.list_objects_v2(Bucket=f"tier-{remote['tag']}").get("KeyCount", 0) == 0
    with transaction() as s:
        obj = s.scalars(select(Object).where(Object.key == "d1/é-ünï")).one()
    assert b"".join(store.open_object(obj)) == client.get_object(Bucket=bucket, Key="d1/é-ünï")["Body"].read()


def test_the_lean_lister_gives_what_boto3_parses(remote: dict[str, Any]) -> None:
    client, bucket = remote["client"], remote["bucket"]
    _put_many(client, bucket, EDGE_KEYS + ["d1/amp&<lt>\"q'", "d1/plus+sign"])
    client.put_object(Bucket=bucket, Key="d1/ia", Body=b"ia", StorageClass="STANDARD_IA")
    lister = S3Lister(S3Source(remote["proxy_url"], access_key_id="AKIDTEST", secret_access_key="secret"))
    for args, lean in (({}, {}), ({"MaxKeys": 7}, {"max_keys": 7}), ({"Prefix": "d1/"}, {"prefix": "d1/"}),
                       ({"Delimiter": "/"}, {"delimiter": "/"}), ({"StartAfter": "d1/"}, {"start_after": "d1/"})):
        plain = client.list_objects_v2(Bucket=bucket, **args)
        page = lister.page(bucket, **lean)
        assert page.contents == [(c["Key"], c["Size"], c["ETag"].strip('"'), c["StorageClass"],
                                  listed_time(c["LastModified"]), listed_time(c["LastModified"]))
                                 for c in plain.get("Contents", [])]
        assert page.prefixes == [p["Prefix"] for p in plain.get("CommonPrefixes", [])]
        assert (page.truncated, page.token) == (plain["IsTruncated"], plain.get("NextContinuationToken"))
    with pytest.raises(AdoptionError, match="NoSuchBucket"):
        lister.page(f"none-{remote['tag']}")


S3_PAGE = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
    "<Name>b</Name><Prefix></Prefix><KeyCount>4</KeyCount><MaxKeys>4</MaxKeys><EncodingType>url</EncodingType>"
    "<IsTruncated>true</IsTruncated>"
    "<Contents><Key>a/plain.txt</Key><LastModified>2026-11-27T10:00:00.123Z</LastModified>"
    "<ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><ChecksumAlgorithm>CRC32</ChecksumAlgorithm>"
    "<ChecksumType>FULL_OBJECT</ChecksumType><Size>12</Size><Owner><ID>o</ID><DisplayName>d</DisplayName></Owner>"
    "<StorageClass>GLACIER</StorageClass></Contents>"
    "<Contents><Key>a/sp+ace%26amp%C3%A9</Key><LastModified>2026-11-27T10:00:01.000Z</LastModified>"
    "<ETag>&quot;abc-2&quot;</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key>a/whole-second</Key><LastModified>2026-11-27T10:00:02Z</LastModified>"
    "<ETag>&#34;def&#34;</ETag><Size>7</Size></Contents>"
    "<Contents><Key>a/offset</Key><LastModified>2026-11-27T11:00:03.5+01:00</LastModified>"
    "<ETag>\"0f\"</ETag><Size>1</Size><StorageClass>STANDARD_IA</StorageClass></Contents>"
    "<CommonPrefixes><Prefix>a/d%2B/</Prefix></CommonPrefixes>"
    "<NextContinuationToken>tok&amp;en</NextContinuationToken></ListBucketResult>")
S3_OBJECTS = [("a/plain.txt", 12, "0123456789abcdef0123456789abcdef", "GLACIER", "2026-11-27T10:00:00.123000Z"),
              ("a/sp ace&amp\u00e9", 0, "abc-2", "STANDARD", "2026-11-27T10:00:01.000000Z"),
              ("a/whole-second", 7, "def", "STANDARD", "2026-11-27T10:00:02.000000Z"),
              ("a/offset", 1, "0f", "STANDARD_IA", "2026-11-27T10:00:03.500000Z")]


@pytest.mark.parametrize("layout", ["s3", "indented"])
def test_a_page_parses_the_same_in_one_pass_or_field_by_field(layout: str) -> None:
    """S3's layout is matched once per <Contents> (keys and times as S3 writes them inline, the rest field by
    field); any other layout (here: indented) is parsed field by field, to the same objects."""
    body = S3_PAGE if layout == "s3" else S3_PAGE.replace("><", ">\n  <")
    page = parse_page(body.encode())
    assert page.contents == [(*o, o[-1]) for o in S3_OBJECTS]
    assert (page.prefixes, page.truncated, page.token) == (["a/d+/"], True, "tok&en")


def test_the_gate_grows_while_pages_come_and_halves_when_throttled() -> None:
    gate = Gate(start=2, limit=5)
    for _ in range(10):
        with gate:
            pass
        gate.answered()
    assert gate.allowed == 5
    gate.throttle()
    assert (gate.allowed, gate.throttled) == (2, 1)
    gate.throttle()
    gate.throttle()
    assert gate.allowed == 1


def test_listing_starts_few_requests_and_grows_while_the_remote_answers(remote: dict[str, Any]) -> None:
    client, bucket = remote["client"], remote["bucket"]
    _put_many(client, bucket, [f"q{i:02d}/k" for i in range(40)])
    lister = S3Lister(S3Source(remote["proxy_url"], access_key_id="AKIDTEST", secret_access_key="secret"))
    gate = Gate(start=2, limit=12)
    pages = list(list_parallel(lister, bucket, workers=12, gate=gate))
    assert sum(len(p) for p in pages) == 40
    assert gate.allowed == 12 and 2 < gate.peak <= 12 and gate.throttled == 0


def test_a_second_run_adds_only_new_keys_and_keeps_the_rows_it_has(remote: dict[str, Any]) -> None:
    client, bucket = remote["client"], remote["bucket"]
    first = _put_many(client, bucket, [f"a/{i}" for i in range(30)])
    adopt(remote["tier"], bucket, into=f"mine-{remote['tag']}", owner_id=_owner_id(remote), workers=4)
    later = _put_many(client, bucket, [f"b/{i}" for i in range(20)])
    progress = adopt(remote["tier"], bucket, into=f"mine-{remote['tag']}", owner_id=_owner_id(remote), workers=4)
    assert (progress.objects, progress.added) == (50, 20)
    assert _catalog(f"mine-{remote['tag']}") == first | later


def test_cli_adopts_with_a_progress_line_and_refuses_unknown_tiers(remote: dict[str, Any]) -> None:
    client, bucket = remote["client"], remote["bucket"]
    expected = _put_many(client, bucket, [f"c/{i}" for i in range(25)])
    runner = CliRunner()
    result = runner.invoke(app, ["tiers", "adopt", remote["tier"], "--bucket", bucket, "--owner",
                                 f"owner-{remote['tag']}", "--workers", "4"])
    assert result.exit_code == 0, result.output
    assert "25 objects listed, 25 added" in result.output
    assert _catalog(bucket) == expected
    bad = runner.invoke(app, ["tiers", "adopt", "no-such-tier", "--bucket", bucket])
    assert bad.exit_code == 2 and "no tier named" in bad.output


def test_a_flat_bucket_is_cut_into_ranges_too(remote: dict[str, Any]) -> None:
    client, bucket = remote["client"], remote["bucket"]
    expected = _put_many(client, bucket, [f"k{i:04d}" for i in range(300)] + ["a/1", "zz/2", "z"])
    progress = adopt(remote["tier"], bucket, owner_id=_owner_id(remote), workers=8, page_size=40)
    assert _catalog(bucket) == expected
    assert progress.ranges_total > 5  # not one pager over the top level


def test_progress_counts_requests(remote: dict[str, Any]) -> None:
    seen: list[int] = []
    _put_many(remote["client"], remote["bucket"], ["x"])

    def note(p: Progress) -> None:
        seen.append(p.objects)

    adopt(remote["tier"], remote["bucket"], owner_id=_owner_id(remote), on_progress=note)
    assert seen[-1] == 1


def test_a_rescan_deletes_from_the_catalog_the_keys_gone_from_the_remote(remote: dict[str, Any]) -> None:
    client, bucket = remote["client"], remote["bucket"]
    expected = _put_many(client, bucket, [f"g/{i}" for i in range(12)] + ["top"])
    adopt(remote["tier"], bucket, owner_id=_owner_id(remote), workers=4)
    client.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "g/3"}, {"Key": "top"}]})
    progress = adopt(remote["tier"], bucket, owner_id=_owner_id(remote), workers=4)
    assert (progress.objects, progress.added, progress.removed) == (11, 0, 2)
    assert _catalog(bucket) == {k: v for k, v in expected.items() if k not in ("g/3", "top")}
    with transaction() as s:
        row = s.scalars(select(Bucket).where(Bucket.name == bucket)).one()
        assert row.object_count == 11


def test_a_lifecycle_move_of_an_adopted_object_leaves_the_remote_original(remote: dict[str, Any],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The adopted bucket belongs to whoever adopted it: a transition copies an object to another tier and
    points the catalog there, but the original stays in the remote bucket (a user's DELETE still deletes it)."""
    from tests.lifecycle.conftest import lifecycle_settings
    from tierpilot.catalog.service import get_bucket
    from tierpilot.lifecycle.rules import LifecycleConfig
    from tierpilot.lifecycle.runner import run_now
    from tierpilot.lifecycle.service import put_config
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    lifecycle_settings(monkeypatch, delete_grace_s=0, move_rate_mbps=0)
    client, bucket = remote["client"], remote["bucket"]
    body = b"adopted bytes " * 20000  # over the 128 KB transition minimum
    client.put_object(Bucket=bucket, Key="old/a", Body=body)
    adopt(remote["tier"], bucket, owner_id=_owner_id(remote), workers=2)
    with transaction(write=True) as s:
        cold = tiers.create(s, TierCreate(name=f"cold-{remote['tag']}", driver="posix",
                                          config={"path": f"cold-{remote['tag']}"}, storage_classes=["STANDARD_IA"]))
        cold_id = cold.id
        local = get_bucket(s, bucket)
        put_config(s, local, LifecycleConfig.model_validate(
            {"rules": [{"id": "cool", "filter": {"prefix": "old/"},
                        "transitions": [{"days": 1, "storage_class": "STANDARD_IA"}]}]}), "test")
        bucket_id = local.id
        s.execute(update(Object).where(Object.bucket_id == bucket_id).values(created_at=utcnow() - timedelta(days=3)))
    registry.tiers.invalidate()
    summary = run_now(bucket_id)
    assert summary.by_action == {"transition": 1}, summary.errors
    with transaction() as s:
        obj = s.scalars(select(Object).where(Object.bucket_id == bucket_id, Object.key == "old/a")).one()
        s.expunge(obj)
    assert (obj.tier_id, obj.storage_class) == (cold_id, "STANDARD_IA")
    assert b"".join(store.open_object(obj)) == body
    assert client.get_object(Bucket=bucket, Key="old/a")["Body"].read() == body
