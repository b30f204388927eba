"""The driver contract (drivers/base.py) every online tier keeps, run against each driver on its real server:
posix on a temp directory, s3 on moto, azure on Azurite, gcs on fake-gcs-server."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tierpilot.drivers.base import BlobNotFound, PartInfo, TierDriver, TierError
from tierpilot.drivers.posix import PosixDriver

MiB = 1 << 20
DRIVERS = ["posix", "s3", "azure", "gcs"]
# small/large body per driver: "large" spans several blocks / parts / resumable chunks
LARGE = {"posix": 3 * MiB, "s3": 17 * MiB, "azure": 3 * MiB + 5, "gcs": MiB + 7}
LOCATORS = [
    "b/plain.txt", "b/a b/ü€/日本.bin", "b/../x", "b/./y", "b//double", "b/trailing.", "b/back\\slash",
    "b/per%cent", "b/ctrl\x01\x7f", "b/" + "long/" * 230 + "end",
]


@pytest.fixture(params=DRIVERS)
def driver(request: pytest.FixtureRequest, tmp_path: Path) -> TierDriver:
    if request.param == "posix":
        return PosixDriver(tmp_path / "tier", name="posix")
    return request.getfixturevalue(f"{request.param}_driver")  # type: ignore[no-any-return]


def _kind(driver: TierDriver) -> str:
    return {"PosixDriver": "posix", "S3Driver": "s3", "AzureBlobDriver": "azure", "GCSDriver": "gcs"}[
        type(driver).__name__]


def _read(driver: TierDriver, locator: str, start: int = 0, end: int | None = None) -> bytes:
    return b"".join(driver.open(locator, start, end))


def _chunks(data: bytes, size: int = 256 << 10) -> Iterator[bytes]:
    return iter([data[i:i + size] for i in range(0, len(data), size)])


def test_small_put_reads_back_whole_and_in_inclusive_clamped_ranges(driver: TierDriver) -> None:
    data = os.urandom(1000)
    result = driver.put("b/k~1", iter([data[:10], data[10:]]), checksum_algorithm="SHA256")
    assert (result.size, result.md5_hex) == (1000, hashlib.md5(data).hexdigest())
    assert result.checksum_algorithm == "SHA256"
    assert driver.head("b/k~1").size == 1000
    assert _read(driver, "b/k~1") == data
    assert _read(driver, "b/k~1", 10, 19) == data[10:20]
    assert _read(driver, "b/k~1", 0, 9) == data[:10]
    assert _read(driver, "b/k~1", 990, 5000) == data[990:]
    assert _read(driver, "b/k~1", 999, 999) == data[999:]
    assert _read(driver, "b/k~1", 1000) == b""


def test_empty_blob_round_trips(driver: TierDriver) -> None:
    assert driver.put("b/empty~1", iter([])).size == 0
    assert driver.head("b/empty~1").size == 0
    assert _read(driver, "b/empty~1") == b""


def test_large_put_streams_in_blocks_and_reads_back(driver: TierDriver) -> None:
    data = os.urandom(LARGE[_kind(driver)])
    result = driver.put("b/large~1", _chunks(data))
    assert (result.size, result.md5_hex) == (len(data), hashlib.md5(data).hexdigest())
    assert _read(driver, "b/large~1") == data
    mid = len(data) // 2
    assert _read(driver, "b/large~1", mid, mid + MiB) == data[mid:mid + MiB + 1]


def test_a_failing_body_stores_nothing(driver: TierDriver) -> None:
    def body() -> Iterator[bytes]:
        yield os.urandom(LARGE[_kind(driver)])
        raise OSError("client went away")

    with pytest.raises(OSError, match="went away"):
        driver.put("b/broken~1", body())
    with pytest.raises(BlobNotFound):
        driver.head("b/broken~1")
    assert [b.locator for b in driver.list("b/broken")] == []


def test_missing_blobs_are_not_found_and_delete_is_idempotent(driver: TierDriver) -> None:
    with pytest.raises(BlobNotFound):
        driver.head("b/none~1")
    with pytest.raises(BlobNotFound):
        b"".join(driver.open("b/none~1"))
    driver.put("b/gone~1", iter([b"x"]))
    driver.delete("b/gone~1")
    driver.delete("b/gone~1")
    with pytest.raises(BlobNotFound):
        driver.head("b/gone~1")


def test_any_locator_round_trips_and_lists_back_by_prefix(driver: TierDriver) -> None:
    for n, locator in enumerate(LOCATORS):
        driver.put(locator, iter([locator.encode("utf-8", "surrogatepass") + bytes([n])]))
    for n, locator in enumerate(LOCATORS):
        assert _read(driver, locator) == locator.encode("utf-8", "surrogatepass") + bytes([n])
    assert sorted(b.locator for b in driver.list("b/")) == sorted(LOCATORS)
    assert sorted(b.locator for b in driver.list("b/long/long")) == [LOCATORS[-1]]
    assert sorted(b.locator for b in driver.list("b/a b/")) == ["b/a b/ü€/日本.bin"]
    assert [b.locator for b in driver.list("c/")] == []
    for locator in LOCATORS:
        driver.delete(locator)
    assert list(driver.list("")) == []


def test_parts_in_any_order_join_in_the_given_order_and_abort_removes_them(driver: TierDriver) -> None:
    datas = [os.urandom(n) for n in (300_000, 5, 70_000)]
    infos: dict[int, PartInfo] = {}
    for number in (3, 1, 2):
        info, result = driver.put_part("up-1", number, _chunks(datas[number - 1]))
        assert result.size == len(datas[number - 1])
        infos[number] = info
    again, _ = driver.put_part("up-1", 2, iter([b"second try"]))
    assert again.locator != infos[2].locator
    size = driver.complete_multipart("up-1", "b/joined~1", [infos[1], again, infos[3]])
    assert size == len(datas[0]) + 10 + len(datas[2])
    assert _read(driver, "b/joined~1") == datas[0] + b"second try" + datas[2]
    driver.abort_multipart("up-1")
    driver.abort_multipart("up-1")
    assert _read(driver, "b/joined~1") == datas[0] + b"second try" + datas[2]
    assert [b.locator for b in driver.list("")] == ["b/joined~1"]


def test_complete_with_a_missing_or_wrong_part_creates_nothing(driver: TierDriver) -> None:
    info, _ = driver.put_part("up-2", 1, iter([b"abc"]))
    wrong_size = PartInfo(part_number=1, locator=info.locator, size=4)
    missing = PartInfo(part_number=2, locator=info.locator[:-1] + ("0" if info.locator[-1] != "0" else "1"),
                       size=3)
    for parts in ([wrong_size], [info, missing]):
        with pytest.raises(TierError):
            driver.complete_multipart("up-2", "b/never~1", parts)
    with pytest.raises(BlobNotFound):
        driver.head("b/never~1")
    driver.abort_multipart("up-2")


def test_copy_within_the_tier_and_from_posix(driver: TierDriver, tmp_path: Path) -> None:
    data = os.urandom(LARGE[_kind(driver)])
    driver.put("b/src~1", _chunks(data))
    copied = driver.copy_from(driver, "b/src~1", "b/dst~1")
    assert copied.size == len(data)
    assert copied.md5_hex in ("", hashlib.md5(data).hexdigest())
    assert _read(driver, "b/dst~1") == data
    posix = PosixDriver(tmp_path / "other", name="other")
    posix.put("p~1", iter([b"from posix"]))
    assert driver.copy_from(posix, "p~1", "b/in~1").md5_hex in ("", hashlib.md5(b"from posix").hexdigest())
    assert _read(driver, "b/in~1") == b"from posix"
    assert posix.copy_from(driver, "b/dst~1", "back~1").size == len(data)
    assert _read(posix, "back~1") == data
