"""The s3 driver against moto's S3 server: data path, key mapping, multipart, copies, restores.

moto stands in for AWS's storage-class and restore behaviour, not for S3 correctness (it checks no
signatures); the driver's correctness against a real S3 implementation is tested on our gateway.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tierpilot.drivers.base import BlobNotFound, NotArchived, NotRestored, PartInfo, TierError
from tierpilot.drivers.posix import PosixDriver
from tierpilot.drivers.registry import build_driver
from tierpilot.drivers.s3 import S3Driver, decode_key, encode_key, parse_restore_header
from tierpilot.tiers.models import Tier

MiB = 1 << 20


def _read(driver: S3Driver | PosixDriver, locator: str, start: int = 0, end: int | None = None) -> bytes:
    return b"".join(driver.open(locator, start, end))


def _chunks(data: bytes, size: int = MiB) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def test_small_put_get_head_and_ranges(s3_driver: S3Driver) -> None:
    data = os.urandom(3 * MiB + 5)
    result = s3_driver.put("b/k~1", iter(_chunks(data, 100_000)), "CRC32C")
    assert result.size == len(data) and result.md5_hex == hashlib.md5(data).hexdigest()
    info = s3_driver.head("b/k~1")
    assert (info.size, info.storage_class) == (len(data), "STANDARD")
    assert _read(s3_driver, "b/k~1") == data
    for start, end in [(0, 0), (MiB - 1, MiB + 1), (len(data) - 1, None), (10, 10**12)]:
        stop = len(data) if end is None else min(end + 1, len(data))
        chunks = list(s3_driver.open("b/k~1", start, end))
        assert b"".join(chunks) == data[start:stop] and all(len(c) <= MiB for c in chunks)
    assert _read(s3_driver, "b/k~1", len(data) + 10) == b""
    s3_driver.put("b/empty", iter([]))
    assert _read(s3_driver, "b/empty") == b"" and s3_driver.head("b/empty").size == 0
    with pytest.raises(BlobNotFound):
        s3_driver.open("b/nope")
    with pytest.raises(BlobNotFound):
        s3_driver.head("b/nope")


def test_large_put_streams_as_parallel_multipart_with_bounded_parts(s3_driver: S3Driver) -> None:
    data = os.urandom(27 * MiB)
    in_flight = 0
    peak = 0
    lock = threading.Lock()
    upload_part = s3_driver.client.upload_part

    def counting_upload_part(**kwargs: object) -> dict:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        try:
            assert len(kwargs["Body"]) <= s3_driver.part_size  # type: ignore[arg-type]
            return upload_part(**kwargs)  # type: ignore[no-any-return]
        finally:
            with lock:
                in_flight -= 1

    s3_driver.client.upload_part = counting_upload_part  # type: ignore[method-assign]
    result = s3_driver.put("b/big~1", iter(_chunks(data, 3 * MiB + 1)), "SHA256")
    assert result.checksum_b64 == base64.b64encode(hashlib.sha256(data).digest()).decode()
    assert result.md5_hex == hashlib.md5(data).hexdigest()
    assert 1 <= peak <= s3_driver.max_concurrency
    reply = s3_driver.client.head_object(Bucket=s3_driver.bucket, Key="tp/b/big~1")
    assert reply["ETag"].strip('"').endswith("-4")  # 8+8+8+3 MiB
    assert _read(s3_driver, "b/big~1") == data
    assert _read(s3_driver, "b/big~1", 8 * MiB - 3, 8 * MiB + 3) == data[8 * MiB - 3:8 * MiB + 4]


def test_a_failing_body_aborts_the_upload_and_stores_nothing(s3_driver: S3Driver) -> None:
    def body():  # type: ignore[no-untyped-def]
        yield os.urandom(20 * MiB)
        raise ConnectionError("client went away")

    with pytest.raises(ConnectionError):
        s3_driver.put("b/broken~1", body())
    assert list(s3_driver.list()) == []
    assert s3_driver.client.list_multipart_uploads(Bucket=s3_driver.bucket).get("Uploads", []) == []


LOCATORS = ["b/plain~1", "b/../up~2", "b/./here~3", "b//double~4", "b/trailing/~5", "b/%2E%2E~6", "b/ctl\x01\x7f~7",
            "b/ünïcødé/日本~8", "b/" + "long/" * 250 + "end~9", "b/" + "é" * 700 + "~10"]


def test_any_locator_maps_to_a_safe_key_and_lists_back(s3_driver: S3Driver) -> None:
    for i, locator in enumerate(LOCATORS):
        s3_driver.put(locator, iter([str(i).encode()]))
    keys = [o["Key"] for o in s3_driver.client.list_objects_v2(Bucket=s3_driver.bucket)["Contents"]]
    for key in keys:
        assert len(key.encode()) <= 1024
        assert not {".", ".."} & set(key.split("/")) and "//" not in key and "\x01" not in key
    assert sorted(b.locator for b in s3_driver.list()) == sorted(LOCATORS)
    assert sorted(b.locator for b in s3_driver.list("b/")) == sorted(LOCATORS)
    assert [b.locator for b in s3_driver.list("b/..")] == ["b/../up~2"]
    assert [b.locator for b in s3_driver.list("b/é")] == [LOCATORS[-1]]
    for i, locator in enumerate(LOCATORS):
        assert _read(s3_driver, locator) == str(i).encode()
        s3_driver.delete(locator)
        s3_driver.delete(locator)  # idempotent
    assert list(s3_driver.list()) == []
    assert all(decode_key(encode_key(loc)) == loc for loc in LOCATORS)


def test_storage_class_per_put_and_tier_default(s3_driver: S3Driver, moto_url: str) -> None:
    s3_driver.put("b/ia~1", iter([b"x"]), storage_class="STANDARD_IA")
    assert s3_driver.head("b/ia~1").storage_class == "STANDARD_IA"
    deep = S3Driver("deep", endpoint_url=moto_url, bucket=s3_driver.bucket, prefix="deep/",
                    access_key_id="AKIDTEST", secret_access_key="secret", storage_class="DEEP_ARCHIVE")
    assert deep.offline
    deep.put("b/d~1", iter([b"cold"]))
    assert deep.head("b/d~1").storage_class == "DEEP_ARCHIVE"
    assert [(b.locator, b.storage_class) for b in deep.list()] == [("b/d~1", "DEEP_ARCHIVE")]
    with pytest.raises(NotRestored):
        deep.open("b/d~1")


def test_server_side_copy_on_the_same_endpoint(s3_driver: S3Driver, moto_url: str) -> None:
    other = S3Driver("other", endpoint_url=moto_url, bucket=s3_driver.bucket + "-2",
                     access_key_id="AKIDTEST", secret_access_key="secret")
    other.client.create_bucket(Bucket=other.bucket)
    data = os.urandom(2 * MiB)
    s3_driver.put("b/src~1", iter([data]))
    seen: list[str] = []
    other.client.meta.events.register("before-call.s3", lambda model, **_: seen.append(model.name))
    result = other.copy_from(s3_driver, "b/src~1", "b/dst~2", storage_class="GLACIER")
    assert "CopyObject" in seen and "GetObject" not in seen and "PutObject" not in seen
    assert result.size == len(data) and result.md5_hex == hashlib.md5(data).hexdigest()
    assert other.head("b/dst~2").storage_class == "GLACIER"
    with pytest.raises(NotRestored):  # copied into an archive class: archived
        other.open("b/dst~2")
    with pytest.raises(NotRestored):  # and cannot be copied out before a restore
        s3_driver.copy_from(other, "b/dst~2", "b/back~3")
    with pytest.raises(BlobNotFound):
        other.copy_from(s3_driver, "b/missing", "b/x~4")


def test_copies_between_posix_and_s3_stream_through(s3_driver: S3Driver, tmp_path: Path) -> None:
    posix = PosixDriver(tmp_path / "hot")
    data = os.urandom(9 * MiB + 7)
    posix.put("b/p~1", iter(_chunks(data)))
    up = s3_driver.copy_from(posix, "b/p~1", "b/s~2")
    assert up.md5_hex == hashlib.md5(data).hexdigest() and _read(s3_driver, "b/s~2") == data
    down = posix.copy_from(s3_driver, "b/s~2", "b/p~3")
    assert down.md5_hex == hashlib.md5(data).hexdigest() and _read(posix, "b/p~3") == data


def test_multipart_parts_join_server_side_in_order(s3_driver: S3Driver) -> None:
    payloads = {n: os.urandom(5 * MiB + n) for n in (1, 2, 3)}
    payloads[4] = b"tail"
    parts: dict[int, PartInfo] = {}
    threads = [threading.Thread(target=lambda n=n: parts.__setitem__(
        n, s3_driver.put_part("upload-a", n, iter([payloads[n]]))[0])) for n in (4, 2, 3, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen: list[str] = []
    s3_driver.client.meta.events.register("before-call.s3", lambda model, **_: seen.append(model.name))
    size = s3_driver.complete_multipart("upload-a", "b/joined~1", [parts[n] for n in (1, 2, 3, 4)],
                                        storage_class="STANDARD_IA")
    whole = b"".join(payloads[n] for n in (1, 2, 3, 4))
    assert size == len(whole) and "UploadPartCopy" in seen and "GetObject" not in seen
    assert _read(s3_driver, "b/joined~1") == whole
    assert s3_driver.head("b/joined~1").storage_class == "STANDARD_IA"
    assert [b.locator for b in s3_driver.list()] == ["b/joined~1"]  # parts are not blobs
    s3_driver.abort_multipart("upload-a")
    s3_driver.abort_multipart("upload-a")
    keys = [o["Key"] for o in s3_driver.client.list_objects_v2(Bucket=s3_driver.bucket).get("Contents", [])]
    assert keys == ["tp/b/joined~1"]


def test_small_parts_are_joined_by_streaming(s3_driver: S3Driver) -> None:
    one, _ = s3_driver.put_part("upload-b", 1, iter([b"first "]))
    two, _ = s3_driver.put_part("upload-b", 2, iter([b"second"]))
    assert s3_driver.complete_multipart("upload-b", "b/small~1", [one, two]) == 12
    assert _read(s3_driver, "b/small~1") == b"first second"


def test_complete_with_a_missing_or_wrong_part_creates_nothing(s3_driver: S3Driver) -> None:
    one, _ = s3_driver.put_part("upload-c", 1, iter([b"a" * 10]))
    with pytest.raises(BlobNotFound):
        s3_driver.complete_multipart("upload-c", "b/x~1", [one, PartInfo(2, "00002." + "0" * 32, 10)])
    with pytest.raises(TierError):
        s3_driver.complete_multipart("upload-c", "b/x~1", [PartInfo(1, one.locator, 11)])
    with pytest.raises(TierError):
        s3_driver.complete_multipart("upload-c", "b/x~1", [PartInfo(1, "../../b/x", 10)])
    assert list(s3_driver.list()) == []


def test_restore_passes_through_and_head_reports_expiry(s3_driver: S3Driver) -> None:
    s3_driver.put("b/cold~1", iter([b"frozen"]), storage_class="GLACIER")
    status = s3_driver.restore_status("b/cold~1")
    assert (status.ongoing, status.restored) == (False, False)
    with pytest.raises(NotRestored):
        s3_driver.open("b/cold~1")
    first = s3_driver.restore("b/cold~1", 2, "bulk")
    assert first.accepted and first.ongoing  # 202
    done = s3_driver.restore_status("b/cold~1")  # moto restores at once
    assert done.restored and not done.ongoing and done.expiry is not None
    assert _read(s3_driver, "b/cold~1") == b"frozen"
    again = s3_driver.restore("b/cold~1", 5, "standard")  # 200: already restored, expiry moves
    assert (again.accepted, again.restored) == (False, True)
    assert again.expiry is not None and again.expiry > done.expiry

    s3_driver.put("b/hot~2", iter([b"hot"]))
    with pytest.raises(NotArchived):
        s3_driver.restore("b/hot~2", 1, "bulk")
    assert s3_driver.restore_status("b/hot~2").restored
    with pytest.raises(BlobNotFound):
        s3_driver.restore("b/missing", 1, "bulk")


def test_restore_in_progress_blocks_reads_until_done(s3_driver: S3Driver, moto_url: str) -> None:
    # the only moto restore mode that behaves like S3: one step per look at the object
    r = httpx.post(f"{moto_url}/moto-api/state-manager/set-transition",
                   json={"model_name": "s3::keyrestore", "transition": {"progression": "manual", "times": 1}})
    assert r.status_code == 201
    s3_driver.put("b/cold~1", iter([b"frozen"]), storage_class="DEEP_ARCHIVE")
    assert s3_driver.restore("b/cold~1", 1, "standard").accepted
    ongoing = s3_driver.restore_status("b/cold~1")
    assert (ongoing.ongoing, ongoing.restored, ongoing.expiry) == (True, False, None)
    status = s3_driver.restore_status("b/cold~1")
    assert status.restored and status.expiry is not None
    assert _read(s3_driver, "b/cold~1") == b"frozen"


def test_get_of_an_ongoing_restore_is_not_restored(s3_driver: S3Driver, moto_url: str) -> None:
    httpx.post(f"{moto_url}/moto-api/state-manager/set-transition",
               json={"model_name": "s3::keyrestore", "transition": {"progression": "manual", "times": 1}})
    s3_driver.put("b/cold~1", iter([b"frozen"]), storage_class="GLACIER")
    s3_driver.restore("b/cold~1", 1, "expedited")
    with pytest.raises(NotRestored):
        s3_driver.open("b/cold~1")


def test_restore_header_parsing_matches_s3_examples() -> None:
    assert parse_restore_header('ongoing-request="true"') == (True, None)
    assert parse_restore_header('ongoing-request="false", expiry-date="Fri, 21 Dec 2012 00:00:00 GMT"') == (
        False, datetime(2012, 12, 21, tzinfo=UTC))
    assert parse_restore_header(None) is None and parse_restore_header("garbage") is None


def test_registry_builds_an_s3_driver_with_the_decrypted_secret(moto_url: str) -> None:
    from tierpilot.kit.crypto import encrypt

    tier = Tier(name="cloud", driver="s3", offline=False, restore_delays={}, storage_classes=["STANDARD_IA"],
                config={"endpoint_url": moto_url, "bucket": "reg-bucket", "prefix": "x/", "region": "eu-west-1",
                        "access_key_id": "AKIDREG", "secret_access_key_enc": encrypt("s3cr3t"),
                        "storage_class": "STANDARD_IA", "part_size": 16 * MiB, "max_pool_connections": 8})
    driver = build_driver(tier)
    assert isinstance(driver, S3Driver)
    creds = driver.client._request_signer._credentials  # noqa: SLF001 - what boto3 signs with
    assert (creds.access_key, creds.secret_key) == ("AKIDREG", "s3cr3t")
    assert driver.client.meta.config.max_pool_connections == 8
    assert (driver.prefix, driver.storage_class, driver.part_size) == ("x/", "STANDARD_IA", 16 * MiB)


def test_stale_native_uploads_are_aborted(s3_driver: S3Driver) -> None:
    # moto reports a fixed initiation time in 2010, so only the positive case is checkable here
    s3_driver.client.create_multipart_upload(Bucket=s3_driver.bucket, Key="tp/b/crashed~1")
    assert s3_driver.abort_stale_uploads(datetime.now(UTC) + timedelta(minutes=1)) == 1
    assert s3_driver.client.list_multipart_uploads(Bucket=s3_driver.bucket).get("Uploads", []) == []
