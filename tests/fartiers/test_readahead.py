"""Read-ahead of remote tiers (drivers/readahead.py) against moto behind a 10 ms round trip."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from tests.fartiers.conftest import far_s3_driver
from tests.netem import NetemProxy
from tierpilot.drivers.base import BlobNotFound
from tierpilot.drivers.readahead import ReadAhead
from tierpilot.drivers.s3 import S3Driver

KiB, MiB = 1 << 10, 1 << 20
SIZE = 12 * MiB


@pytest.fixture(scope="module")
def blob(moto_far: tuple[str, NetemProxy]) -> tuple[S3Driver, bytes]:
    """One 12 MiB blob for the module's tests (they only read it)."""
    driver = far_s3_driver(moto_far[1])
    data = os.urandom(SIZE)
    driver.put("b/obj~1", iter([data]))
    return driver, data


@pytest.fixture
def ahead() -> Iterator[ReadAhead]:
    ra = ReadAhead(block=MiB, request_bytes=4 * MiB, total_bytes=16 * MiB, threads=8)
    yield ra
    assert ra.budget.held >= 0


def _read(ra: ReadAhead, driver: S3Driver, start: int, end: int) -> bytes:
    return b"".join(ra.open(driver, "b/obj~1", SIZE, start, end, reader=1))


def test_whole_read_is_fetched_ahead_and_every_byte_used(ahead: ReadAhead, blob: tuple[S3Driver, bytes]) -> None:
    driver, data = blob
    assert _read(ahead, driver, 0, SIZE - 1) == data
    stats = ahead.stats.snapshot()
    assert stats["prefetched"] == SIZE - MiB  # all but the first block, which streams at once
    assert stats["used"] == stats["prefetched"] and stats["wasted"] == 0
    assert ahead.budget.held == 0


def test_large_range_is_exact(ahead: ReadAhead, blob: tuple[S3Driver, bytes]) -> None:
    driver, data = blob
    assert _read(ahead, driver, 123_457, 9 * MiB + 17) == data[123_457:9 * MiB + 18]


def test_successive_ranged_reads_are_served_from_read_ahead(ahead: ReadAhead, blob: tuple[S3Driver, bytes]) -> None:
    driver, data = blob
    step = 256 * KiB
    for lo in range(0, SIZE, step):
        assert _read(ahead, driver, lo, lo + step - 1) == data[lo:lo + step]
    stats = ahead.stats.snapshot()
    assert stats["used"] >= SIZE - 3 * step  # from the third request on
    assert stats["wasted"] <= 4 * MiB  # at most one pattern's depth past the end, clipped to the object


def test_strided_reads_fetch_only_what_is_read(ahead: ReadAhead, blob: tuple[S3Driver, bytes]) -> None:
    driver, data = blob
    length, gap = 128 * KiB, 384 * KiB
    offsets = range(0, SIZE - length, length + gap)
    for lo in offsets:
        assert _read(ahead, driver, lo, lo + length - 1) == data[lo:lo + length]
    stats = ahead.stats.snapshot()
    assert stats["used"] >= (len(offsets) - 3) * length
    assert stats["prefetched"] - stats["used"] <= 4 * MiB // (length + gap) * length + length


def test_random_reads_fetch_almost_nothing_extra(ahead: ReadAhead, blob: tuple[S3Driver, bytes]) -> None:
    driver, data = blob
    rng = random.Random(15)
    length, read = 64 * KiB, 0
    for _ in range(60):
        lo = rng.randrange(0, SIZE - length)
        assert _read(ahead, driver, lo, lo + length - 1) == data[lo:lo + length]
        read += length
    assert ahead.stats.snapshot()["prefetched"] <= 0.1 * read


def test_read_ahead_stays_within_the_memory_budget(blob: tuple[S3Driver, bytes]) -> None:
    driver, data = blob
    ra = ReadAhead(block=MiB, request_bytes=8 * MiB, total_bytes=2 * MiB, threads=8)
    readers = [ra.open(driver, "b/obj~1", SIZE, 0, SIZE - 1, reader=n) for n in range(3)]
    out = [bytearray() for _ in readers]
    while any(readers):
        for i, reader in enumerate(readers):
            if reader is None:
                continue
            chunk = next(reader, None)
            if chunk is None:
                readers[i] = None  # type: ignore[call-overload]
            else:
                out[i] += chunk
            assert ra.budget.held <= 2 * MiB
    assert all(bytes(o) == data for o in out)
    assert ra.budget.held == 0


def test_a_read_stopped_early_gives_its_memory_back(ahead: ReadAhead, blob: tuple[S3Driver, bytes]) -> None:
    driver, _ = blob
    reader = ahead.open(driver, "b/obj~1", SIZE, 0, SIZE - 1, reader=1)
    next(reader)
    reader.close()  # type: ignore[attr-defined]
    ahead._executor.shutdown(wait=True)  # the fetches already running finish
    assert ahead.budget.held == 0
    stats = ahead.stats.snapshot()
    assert stats["used"] == 0 and stats["wasted"] <= stats["prefetched"]


def test_tier_errors_are_raised_at_open(ahead: ReadAhead, far_driver: S3Driver) -> None:
    with pytest.raises(BlobNotFound):
        ahead.open(far_driver, "b/missing~1", SIZE, 0, SIZE - 1, reader=1)
    with pytest.raises(BlobNotFound):
        ahead.open(far_driver, "b/missing~1", SIZE, 0, 1000, reader=1)
