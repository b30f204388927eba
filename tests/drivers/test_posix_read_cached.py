"""``PosixDriver.read_cached``: the small read an event loop may do, only from the page cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.drivers.filesystems import fs_type
from tierpilot.drivers.posix import PosixDriver


@pytest.fixture
def driver(tmp_path: Path) -> PosixDriver:
    return PosixDriver(tmp_path / "tier", name="hot")


def test_a_cached_range_is_read(driver: PosixDriver) -> None:
    body = bytes(range(256)) * 8
    driver.put("b/k1", iter([body]))
    assert driver.read_cached("b/k1", 0, len(body) - 1) == body
    assert driver.read_cached("b/k1", 10, 19) == body[10:20]


def test_missing_blob_or_a_range_past_its_end_is_none(driver: PosixDriver) -> None:
    driver.put("b/k1", iter([b"abc"]))
    assert driver.read_cached("b/nope", 0, 2) is None
    assert driver.read_cached("b/k1", 0, 9) is None  # shorter than the catalog says: the thread path decides


def test_pages_not_in_the_cache_are_not_waited_for(driver: PosixDriver, tmp_path: Path) -> None:
    if fs_type(tmp_path) in ("tmpfs", "ramfs", ""):
        pytest.skip("this file system keeps every page in memory: nothing to wait for")
    body = os.urandom(64 << 10)
    driver.put("b/cold", iter([body]))
    fd = os.open(driver.blob_path("b/cold"), os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # clean pages leave the cache
    finally:
        os.close(fd)
    assert driver.read_cached("b/cold", 0, len(body) - 1) is None
    assert b"".join(driver.open("b/cold")) == body  # the thread path reads it, and now it is cached
    assert driver.read_cached("b/cold", 0, len(body) - 1) == body
