"""Catalog rules without HTTP: listings against a model of S3's semantics, totals, quota, multipart checks."""

from __future__ import annotations

import itertools
import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from tierpilot.catalog import repository, service
from tierpilot.catalog.errors import InvalidInput, PreconditionFailed, QuotaExceeded
from tierpilot.catalog.models import Bucket
from tierpilot.tiers.models import Tier

_counter = itertools.count()


@pytest.fixture
def tier(session: Session) -> Tier:
    t = Tier(name=f"svc-{uuid.uuid4().hex[:6]}", driver="posix", config={"path": "/nonexistent"},
             storage_classes=["STANDARD"])
    session.add(t)
    session.flush()
    return t


@pytest.fixture
def owner(session: Session) -> int:
    from tierpilot.auth.models import User

    user = User(username=f"svc-{uuid.uuid4().hex[:6]}", password_hash="x")
    session.add(user)
    session.flush()
    return user.id


def _bucket(session: Session, owner: int, tier: Tier, **space: object) -> Bucket:
    bucket = Bucket(name=f"svc-{next(_counter)}-{uuid.uuid4().hex[:6]}", owner_id=owner, tier_id=tier.id,
                    object_count=0, used_bytes=0, **space)
    session.add(bucket)
    session.flush()
    return bucket


def _put(session: Session, bucket: Bucket, key: str, size: int = 1, **kw: object) -> None:
    service.record_object(session, bucket.id, key, size=size, etag=f"{size:032x}", tier_id=bucket.tier_id,
                          storage_class="STANDARD", locator=f"{bucket.name}/{key}~x", **kw)  # type: ignore[arg-type]


def model_listing(keys: list[str], prefix: str, delimiter: str, marker: str) -> list[tuple[str, str]]:
    """S3 listing semantics, the slow obvious way: every entry after the marker, in order."""
    entries: list[tuple[str, str]] = []
    for key in sorted(keys):
        if not key.startswith(prefix):
            continue
        cut = key.find(delimiter, len(prefix)) if delimiter else -1
        if cut >= 0:
            common = key[: cut + len(delimiter)]
            if common > marker and (not entries or entries[-1] != ("prefix", common)):
                entries.append(("prefix", common))
        elif key > marker:
            entries.append(("key", key))
    return entries


def _page_entries(page: service.Listing) -> list[tuple[str, str]]:
    return sorted([("key", o.key) for o in page.objects] + [("prefix", p) for p in page.prefixes],
                  key=lambda e: e[1])


keys_strategy = st.lists(st.text(alphabet="ab/.é😀", min_size=1, max_size=7), min_size=0, max_size=25, unique=True)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=keys_strategy, prefix=st.sampled_from(["", "a", "a/", "b/", "é"]),
       delimiter=st.sampled_from(["", "/", "a", "/b"]), max_keys=st.integers(1, 6))
def test_paginated_listing_matches_the_model(session: Session, owner: int, tier: Tier, keys: list[str], prefix: str,
                                             delimiter: str, max_keys: int) -> None:
    bucket = _bucket(session, owner, tier)
    for key in keys:
        _put(session, bucket, key)
    expected = model_listing(keys, prefix, delimiter, "")
    got: list[tuple[str, str]] = []
    marker = ""
    for _ in range(len(keys) + 2):
        page = service.list_objects(session, bucket.id, prefix, delimiter, marker, max_keys)
        entries = _page_entries(page)
        assert len(entries) <= max_keys
        got += entries
        if not page.truncated:
            break
        assert page.next_marker is not None
        marker = page.next_marker
    assert got == expected
    # one page from an arbitrary start-after position
    for start in keys[:3]:
        page = service.list_objects(session, bucket.id, prefix, delimiter, start, 1000)
        assert _page_entries(page) == model_listing(keys, prefix, delimiter, start)


def test_totals_follow_inserts_overwrites_deletes(session: Session, owner: int, tier: Tier) -> None:
    bucket = _bucket(session, owner, tier)
    _put(session, bucket, "a", 100)
    _put(session, bucket, "b", 50)
    _put(session, bucket, "a", 10)
    assert repository.usage(session, bucket.id) == (2, 60)
    blobs = service.remove_objects(session, bucket.id, ["a", "missing"])
    assert [b.locator for b in blobs] == [f"{bucket.name}/a~x"]
    assert repository.usage(session, bucket.id) == (1, 50)


def test_space_reservation_counts_only_while_open(session: Session, owner: int, tier: Tier) -> None:
    now = datetime.now(UTC)
    bucket = _bucket(session, owner, tier, space_bytes=100, space_start=now - timedelta(hours=1),
                     space_end=now + timedelta(hours=1))
    _put(session, bucket, "a", 60)
    with pytest.raises(QuotaExceeded), session.begin_nested():
        _put(session, bucket, "b", 50)
    assert repository.usage(session, bucket.id) == (1, 60)
    _put(session, bucket, "a", 90)  # overwrite: only the difference counts
    later = _bucket(session, owner, tier, space_bytes=10, space_start=now + timedelta(days=1))
    _put(session, later, "big", 1000)


def test_conditional_writes(session: Session, owner: int, tier: Tier) -> None:
    bucket = _bucket(session, owner, tier)
    _put(session, bucket, "k", 1, if_none_match="*")
    with pytest.raises(PreconditionFailed), session.begin_nested():
        _put(session, bucket, "k", 2, if_none_match="*")
    _put(session, bucket, "k", 3, if_match=f'"{1:032x}"')
    with pytest.raises(PreconditionFailed), session.begin_nested():
        _put(session, bucket, "k", 4, if_match='"nope"')


def test_complete_rules(session: Session, owner: int, tier: Tier) -> None:
    bucket = _bucket(session, owner, tier)
    upload = service.create_upload(session, bucket, "mp", owner_id=owner, tier_id=tier.id, storage_class="STANDARD",
                                   content_type=None, user_metadata={}, headers={}, checksum_algorithm=None)
    for n, size in ((1, service.MIN_PART_SIZE), (2, 10), (3, service.MIN_PART_SIZE)):
        service.record_part(session, upload.id, n, size=size, etag=f"{n:032x}", checksum_value=None,
                            locator=f"p{n}", extra={})
    req = service.RequestedPart
    with pytest.raises(InvalidInput) as exc:
        service.plan_complete(session, upload, [req(2, f"{2:032x}"), req(1, f"{1:032x}")])
    assert exc.value.s3_code == "InvalidPartOrder"
    with pytest.raises(InvalidInput) as exc:
        service.plan_complete(session, upload, [req(1, f"{1:032x}"), req(2, f"{2:032x}"), req(3, f"{3:032x}")])
    assert exc.value.s3_code == "EntityTooSmall"
    with pytest.raises(InvalidInput) as exc:
        service.plan_complete(session, upload, [req(1, f"{1:032x}"), req(4, "x")])
    assert exc.value.s3_code == "InvalidPart"
    parts = service.plan_complete(session, upload, [req(1, f'"{1:032x}"'), req(2, f"{2:032x}")])
    assert [p.part_number for p in parts] == [1, 2]
    assert service.multipart_etag([p.etag for p in parts]).endswith("-2")


def test_storage_class_placement(session: Session, tier: Tier) -> None:
    ia = Tier(name=f"ia-{uuid.uuid4().hex[:6]}", driver="posix", config={}, storage_classes=["STANDARD_IA"])
    session.add(ia)
    session.flush()
    tiers = [tier, ia]
    assert service.tier_for_class(tiers, tier.id, None) == (tier, "STANDARD")
    assert service.tier_for_class(tiers, tier.id, "standard_ia") == (ia, "STANDARD_IA")
    with pytest.raises(InvalidInput) as exc:
        service.tier_for_class(tiers, tier.id, "GLACIER")
    assert exc.value.s3_code == "InvalidStorageClass"


@pytest.mark.parametrize("key", ["ok", "a/b/c", "..a", "a..", "ü" * 512, "x/", "a//b"])
def test_valid_keys(key: str) -> None:
    service.validate_key(key)


@pytest.mark.parametrize(("key", "code"), [("", "InvalidArgument"), ("a/../b", "InvalidArgument"),
                                           (".", "InvalidArgument"), ("a/.", "InvalidArgument"),
                                           ("\x00", "InvalidArgument"), ("ü" * 513, "KeyTooLongError")])
def test_invalid_keys(key: str, code: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        service.validate_key(key)
    assert exc.value.s3_code == code


def _validate_key_the_long_way(key: str) -> str | None:
    """What ``validate_key`` answered before its shortcuts (the S3 code, or None for a valid key)."""
    if not key:
        return "InvalidArgument"
    if len(key.encode("utf-8", "surrogatepass")) > 1024:
        return "KeyTooLongError"
    if "\x00" in key or any(seg in (".", "..") for seg in key.split("/")):
        return "InvalidArgument"
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "InvalidArgument"
    return None


def test_validate_key_answers_as_the_long_way_on_random_keys() -> None:
    rng = random.Random(11)
    pieces = ["a", ".", "..", "/", "é", "\x00", "\ud800", "x.y", "ü" * 300, "b" * 400]
    for _ in range(20_000):
        key = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        try:
            service.validate_key(key)
            got = None
        except InvalidInput as exc:
            got = exc.s3_code
        assert got == _validate_key_the_long_way(key), repr(key)


def test_prefix_end_bounds_every_extension() -> None:
    for prefix in ("a", "a/", "é", "\uffff", "a\U0010ffff", "\ud7ff"):
        end = repository.prefix_end(prefix)
        assert end is not None and end > prefix
        for tail in ("", "\x00", "zzz", "\U0010ffff"):
            assert prefix + tail < end
    assert repository.prefix_end("\U0010ffff") is None
