"""The posix driver: crash safety, key mapping, ranges, checksums, multipart, deletes, copies."""

from __future__ import annotations

import base64
import errno
import hashlib
import os
import signal
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import google_crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.drivers.crash_writer import HALT_AT, expected
from tests.drivers.filesystems import fs_type
from tierpilot.drivers import posix
from tierpilot.drivers.base import BlobNotFound, PartInfo, TierError
from tierpilot.drivers.checksums import checksum_b64
from tierpilot.drivers.posix import CHUNK, PosixDriver, map_locator

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20


@pytest.fixture
def driver(tmp_path: Path) -> PosixDriver:
    return PosixDriver(tmp_path / "tier", name="hot")


def _read(driver: PosixDriver, locator: str, start: int = 0, end: int | None = None) -> bytes:
    return b"".join(driver.open(locator, start, end))


# crash safety ---------------------------------------------------------------------------------------------

def _writer(root: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.drivers.crash_writer", str(root), mode], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)


def _kill_when_halted(proc: subprocess.Popen[str]) -> list[int]:
    """Read the writer's acknowledgements until it says it stopped inside a write, then kill it there."""
    assert proc.stdout is not None
    acked: list[int] = []
    for line in proc.stdout:
        word, _, n = line.partition(" ")
        if word == "ack":
            acked.append(int(n))
        elif word == "halted":
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    return acked


def test_killed_writer_leaves_acknowledged_blobs_intact_and_no_partial_blob(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    acked = _kill_when_halted(_writer(root, "put"))
    assert acked == list(range(HALT_AT))

    partial = len(acked)
    leftovers = list((root / "tmp").iterdir())
    assert len(leftovers) == 1 and 0 < leftovers[0].stat().st_size < len(expected(partial))  # killed mid-write
    driver = PosixDriver(root)  # the next start removes what the dead writer left, whatever its age
    assert [t.name for t in driver.swept_at_start] == [leftovers[0].name] and not list((root / "tmp").iterdir())
    assert not list((root / "sessions").iterdir())
    for i in acked:
        assert _read(driver, f"bucket/dir/key{i}~w{i}") == expected(i)
    with pytest.raises(BlobNotFound):
        driver.open(f"bucket/dir/key{partial}~w{partial}")
    assert sorted(b.locator for b in driver.list()) == sorted(f"bucket/dir/key{i}~w{i}" for i in acked)
    assert driver.sweep_tmp(max_age_s=0) == 0


def test_killed_multipart_join_never_shows_a_partial_blob(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    proc = _writer(root, "join")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "parts"
    acked = _kill_when_halted(proc)  # inside join HALT_AT: two of its three parts linked
    assert acked == list(range(HALT_AT))
    [half_joined] = (root / "tmp").iterdir()
    assert len(list(half_joined.iterdir())) == 2

    driver = PosixDriver(root)
    blobs = list(driver.list("bucket/mp~"))
    assert sorted(b.locator for b in blobs) == [f"bucket/mp~{i}" for i in acked]
    want = hashlib.md5(b"".join(bytes([n]) * (8 << 20) for n in (1, 2, 3))).hexdigest()
    for blob in blobs:  # every visible blob is whole
        assert blob.size == 24 << 20
        digest = hashlib.md5()
        for chunk in driver.open(blob.locator):
            digest.update(chunk)
        assert digest.hexdigest() == want


# key mapping ----------------------------------------------------------------------------------------------

_TRICKY = st.sampled_from(["/", "//", ".", "..", "../", "%", "%2F", "#", "\x00", "\n", "\\", "a", "a/b", "~", " ",
                           "é", "日本", "\U0001f600", "d_", "f_", "l_", "x" * 120, "é" * 90])
KEYS = st.one_of(
    st.text(max_size=300),
    st.lists(_TRICKY, max_size=40).map("".join),
    st.lists(st.sampled_from(["a", "ab", "..", "", "é" * 200]), min_size=1, max_size=400).map("/".join),
).filter(lambda k: len(k.encode("utf-8")) <= 1024)


def _locator(key: str) -> str:
    return f"bucket/{key}~0123abcd"


@given(key=KEYS)
@settings(max_examples=400, deadline=None)
def test_mapped_paths_stay_under_root_and_are_valid_names(key: str) -> None:
    bp = map_locator(_locator(key))
    parts = [*bp.dirs, bp.name]
    for part in parts:
        assert part not in ("", ".", "..") and "/" not in part and "\x00" not in part
        assert len(part.encode("utf-8")) <= 255 - 0  # NAME_MAX
    root = "/srv/tier/blobs"
    joined = os.path.normpath(os.path.join(root, *parts))
    assert joined.startswith(root + "/")
    assert len(joined.encode("utf-8")) < 4096
    assert all(d.startswith("d_") for d in bp.dirs) and bp.name.startswith("f_")


@given(keys=st.lists(KEYS, min_size=2, max_size=12, unique=True))
@settings(max_examples=200, deadline=None)
def test_distinct_keys_never_share_a_file_or_a_file_and_directory(keys: list[str]) -> None:
    files = {}
    dirs = set()
    for key in keys:
        bp = map_locator(_locator(key))
        files[bp.dirs + (bp.name,)] = key
        for i in range(1, len(bp.dirs) + 1):
            dirs.add(bp.dirs[:i])
    assert len(files) == len(keys)
    assert not set(files) & dirs


@given(keys=st.lists(KEYS, min_size=1, max_size=8, unique=True))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_utf8_key_round_trips_through_put_list_open_delete(driver: PosixDriver, keys: list[str]) -> None:
    for key in keys:
        driver.put(_locator(key), iter([key.encode("utf-8"), b"!"]))
    assert sorted(b.locator for b in driver.list()) == sorted(_locator(k) for k in keys)
    assert sorted(b.locator for b in driver.list("bucket/")) == sorted(_locator(k) for k in keys)
    for key in keys:
        assert _read(driver, _locator(key)) == key.encode("utf-8") + b"!"
        assert driver.head(_locator(key)).size == len(key.encode("utf-8")) + 1
    for key in keys:
        driver.delete(_locator(key))
    assert list(driver.list()) == []
    assert list(driver.blobs.iterdir()) == []  # empty directories pruned


def test_key_and_directory_of_the_same_name_coexist(driver: PosixDriver) -> None:
    for locator in ("b/a", "b/a/b", "b/a/b/c", "b/a/", "b//a", "b/../a"):
        driver.put(locator, iter([locator.encode()]))
    for locator in ("b/a", "b/a/b", "b/a/b/c", "b/a/", "b//a", "b/../a"):
        assert _read(driver, locator) == locator.encode()
    assert sorted(b.locator for b in driver.list("b/a")) == ["b/a", "b/a/", "b/a/b", "b/a/b/c"]
    assert not (driver.root.parent / "a").exists()


def test_prefix_listing_finds_hashed_and_very_long_locators(driver: PosixDriver) -> None:
    long_segment = "s" * 600
    deep = "/".join(["日本語"] * 300)  # longer than the path limit once encoded: the flat area
    for locator in (f"b/{long_segment}/x", f"b/{deep}", "b/plain", "c/other"):
        driver.put(locator, iter([b"1"]))
    assert sorted(b.locator for b in driver.list("b/")) == sorted([f"b/{long_segment}/x", f"b/{deep}", "b/plain"])
    assert [b.locator for b in driver.list(f"b/{long_segment}/")] == [f"b/{long_segment}/x"]
    assert [b.locator for b in driver.list("b/日本語/")] == [f"b/{deep}"]


def test_bad_locators_are_refused(driver: PosixDriver) -> None:
    with pytest.raises(ValueError):
        driver.put("", iter([b"x"]))
    with pytest.raises(ValueError):
        driver.put("bucket/\ud800", iter([b"x"]))


# reads ----------------------------------------------------------------------------------------------------

def test_ranges_are_inclusive_clamped_and_read_in_bounded_chunks(driver: PosixDriver) -> None:
    data = os.urandom(3 * MiB + 12345)
    driver.put("b/r", iter([data[i:i + 100_000] for i in range(0, len(data), 100_000)]))
    cases = [(0, None), (0, 0), (len(data) - 1, None), (MiB - 1, MiB + 1), (5, 2 * MiB + 7), (100, 10**12)]
    for start, end in cases:
        chunks = list(driver.open("b/r", start, end))
        assert all(len(c) <= CHUNK for c in chunks)
        stop = len(data) if end is None else min(end + 1, len(data))
        assert b"".join(chunks) == data[start:stop]
    assert _read(driver, "b/r", len(data), None) == b""
    driver.put("b/empty", iter([]))
    assert _read(driver, "b/empty") == b"" and driver.head("b/empty").size == 0
    with pytest.raises(BlobNotFound):
        driver.open("b/missing")
    with pytest.raises(BlobNotFound):
        driver.head("b/missing")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_large_ranges_give_the_same_bytes_at_any_alignment(driver: PosixDriver, data: st.DataObject) -> None:
    # blobs past one 4 MiB buffer are written with O_DIRECT, long ranges are read per 8 MiB window and dropped
    # behind: unaligned starts, ends and file sizes, and window edges, must not show
    size = data.draw(st.sampled_from([17 * MiB + 1234, 8 * MiB, 4 * MiB + 1]))
    locator = f"b/direct~{size}"
    if not driver.exists(locator):
        body = (bytes(range(251)) * (size // 251 + 1))[:size]
        driver.put(locator, iter([body[i:i + 300_000] for i in range(0, size, 300_000)]))
    whole = (bytes(range(251)) * (size // 251 + 1))[:size]
    start = data.draw(st.integers(0, size - 4 * MiB))
    end = data.draw(st.integers(start + 4 * MiB - 1, size + 10))
    assert _read(driver, locator, start, end) == whole[start:end + 1]


def _cached(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        pages = posix._cached_pages(fd, 0, path.stat().st_size)
    finally:
        os.close(fd)
    if pages is None:
        pytest.skip("the kernel has no cachestat (Linux 6.5+)")
    return pages


def _evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_a_large_read_from_the_disk_leaves_no_pages_a_second_keeps_them_and_cached_pages_stay(
        driver: PosixDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(posix, "_reread", posix._Reread(64))  # no window of an earlier test's reused inode
    body = os.urandom(20 * MiB + 5)
    driver.put("b/big", iter([body[i:i + MiB] for i in range(0, len(body), MiB)]))
    path = driver.blob_path("b/big")
    _evict(path)
    if _cached(path) or fs_type(path) in ("tmpfs", "ramfs"):
        pytest.skip("this file system keeps its pages (tmpfs)")
    pages = -(-len(body) // os.sysconf("SC_PAGE_SIZE"))
    assert _read(driver, "b/big") == body
    assert _cached(path) == 0  # read once from the disk: dropped behind, as O_DIRECT would leave it
    assert _read(driver, "b/big", 3, len(body) - 2) == body[3:-1]
    assert _cached(path) >= pages - 2  # read again: kept (the range's two edge pages may go)
    assert _read(driver, "b/big") == body
    assert _cached(path) == pages
    # pages someone else brought in stay, even for a first reader of them
    monkeypatch.setattr(posix, "_reread", posix._Reread(64))
    assert _read(driver, "b/big") == body
    assert _cached(path) == pages
    # a partly cached blob: the cached window stays, the rest is dropped behind
    _evict(path)
    monkeypatch.setattr(posix, "_reread", posix._Reread(64))
    for _ in range(2):
        assert _read(driver, "b/big", 8 * MiB, 16 * MiB - 1) == body[8 * MiB:16 * MiB]
    assert _cached(path) >= 2048
    monkeypatch.setattr(posix, "_reread", posix._Reread(64))
    assert _read(driver, "b/big") == body
    assert 2048 <= _cached(path) < 2048 + 64


def test_open_checks_before_the_first_chunk_and_close_releases_the_file(driver: PosixDriver) -> None:
    driver.put("b/x", iter([b"a" * (3 * MiB)]))
    fds = len(os.listdir("/proc/self/fd"))
    stream = driver.open("b/x")
    assert len(os.listdir("/proc/self/fd")) == fds + 1
    next(stream)
    stream.close()  # type: ignore[attr-defined]
    assert len(os.listdir("/proc/self/fd")) == fds


def test_put_returns_size_md5_and_each_s3_checksum(driver: PosixDriver) -> None:
    body = b"123456789"
    # standard check values of the CRC catalogue
    assert base64.b64decode(checksum_b64("CRC32", body)) == (0xCBF43926).to_bytes(4, "big")
    assert base64.b64decode(checksum_b64("CRC32C", body)) == (0xE3069283).to_bytes(4, "big")
    data = os.urandom(5 * MiB + 3)
    chunks = [data[i:i + 65536] for i in range(0, len(data), 65536)]
    want = {
        "CRC32": zlib.crc32(data).to_bytes(4, "big"),
        "CRC32C": google_crc32c.value(data).to_bytes(4, "big"),
        "SHA1": hashlib.sha1(data).digest(),
        "SHA256": hashlib.sha256(data).digest(),
    }
    for algorithm, digest in want.items():
        result = driver.put(f"b/{algorithm}", iter(chunks), algorithm)  # type: ignore[arg-type]
        assert result.size == len(data) and result.md5_hex == hashlib.md5(data).hexdigest()
        assert result.checksum_algorithm == algorithm
        assert result.checksum_b64 == base64.b64encode(digest).decode()
    assert driver.put("b/none", iter(chunks)).checksum_b64 is None


def test_a_failing_body_stores_nothing(driver: PosixDriver) -> None:
    def body():  # type: ignore[no-untyped-def]
        yield b"x" * MiB
        raise ConnectionError("client went away")

    with pytest.raises(ConnectionError):
        driver.put("b/broken", body())
    assert list(driver.list()) == [] and list(driver.tmp.iterdir()) == []


# multipart ------------------------------------------------------------------------------------------------

def test_parallel_out_of_order_parts_join_in_order(driver: PosixDriver) -> None:
    parts: dict[int, PartInfo] = {}
    payloads = {n: os.urandom(MiB + n) for n in range(1, 9)}

    def upload(n: int) -> None:
        info, result = driver.put_part("up-1", n, iter([payloads[n]]), "CRC32")
        assert result.md5_hex == hashlib.md5(payloads[n]).hexdigest()
        parts[n] = info

    threads = [threading.Thread(target=upload, args=(n,)) for n in reversed(range(1, 9))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # a part uploaded again gets its own locator; the caller picks the one that counts
    redo, _ = driver.put_part("up-1", 3, iter([b"new part three"]))
    assert redo.locator != parts[3].locator
    parts[3] = redo
    payloads[3] = b"new part three"

    ordered = [parts[n] for n in range(1, 9)]
    size = driver.complete_multipart("up-1", "b/joined~1", ordered)
    whole = b"".join(payloads[n] for n in range(1, 9))
    assert size == len(whole) and _read(driver, "b/joined~1") == whole
    assert _read(driver, "b/joined~1", MiB - 2, MiB + 5) == whole[MiB - 2:MiB + 6]
    assert driver.head("b/joined~1").size == len(whole)
    assert [(b.locator, b.size) for b in driver.list("b/")] == [("b/joined~1", len(whole))]
    assert [u for u, _ in driver.list_uploads()] == ["up-1"]  # parts stay until abort
    driver.abort_multipart("up-1")
    driver.abort_multipart("up-1")
    assert list(driver.list_uploads()) == [] and list(driver.parts.iterdir()) == []
    assert _read(driver, "b/joined~1") == whole


def test_completing_links_the_parts_instead_of_copying_them(driver: PosixDriver) -> None:
    infos = [driver.put_part("up-3", n, iter([bytes([n]) * (MiB + n)]))[0] for n in (1, 2, 3)]
    driver.complete_multipart("up-3", "b/three~1", infos)
    stored = driver.blob_path("b/three~1")
    upload_dir = driver.parts / next(iter(os.listdir(driver.parts)))
    assert stored.is_dir() and sorted(os.listdir(stored)) == ["00001", "00002", "00003"]
    for n, info in zip((1, 2, 3), infos, strict=True):  # the very files the parts were written to
        assert os.stat(stored / f"{n:05d}").st_ino == os.stat(upload_dir / info.locator).st_ino
    # a single part becomes a plain blob file
    one, _ = driver.put_part("up-4", 1, iter([b"only part"]))
    driver.complete_multipart("up-4", "b/one~1", [one])
    assert driver.blob_path("b/one~1").is_file() and _read(driver, "b/one~1") == b"only part"


def test_completing_on_a_file_system_without_hard_links_copies_the_parts(driver: PosixDriver,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    infos = [driver.put_part("up-7", n, iter([bytes([n]) * 5000]))[0] for n in (1, 2)]

    def no_links(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")  # what FUSE file systems answer

    monkeypatch.setattr(os, "link", no_links)
    driver.complete_multipart("up-7", "b/copied~1", infos)
    driver.abort_multipart("up-7")
    assert _read(driver, "b/copied~1") == bytes([1]) * 5000 + bytes([2]) * 5000


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 3000), min_size=2, max_size=6), data=st.data())
def test_any_range_of_a_blob_stored_as_parts_reads_like_the_joined_bytes(driver: PosixDriver, sizes: list[int],
                                                                        data: st.DataObject) -> None:
    upload = f"up-{len(sizes)}-{sum(sizes)}-{os.urandom(4).hex()}"
    payloads = [os.urandom(n) for n in sizes]
    infos = [driver.put_part(upload, n, iter([p]))[0] for n, p in enumerate(payloads, 1)]
    locator = f"b/ranges~{upload}"
    driver.complete_multipart(upload, locator, infos)
    whole = b"".join(payloads)
    start = data.draw(st.integers(0, len(whole) + 2))
    end = data.draw(st.one_of(st.none(), st.integers(start, len(whole) + 5)))
    want = whole[start:] if end is None else whole[start:end + 1]
    assert _read(driver, locator, start, end) == want


def test_a_read_of_a_blob_stored_as_parts_survives_its_delete(driver: PosixDriver) -> None:
    infos = [driver.put_part("up-5", n, iter([bytes([n]) * (2 * CHUNK)]))[0] for n in (1, 2, 3)]
    driver.complete_multipart("up-5", "b/gone~1", infos)
    driver.abort_multipart("up-5")
    reader = driver.open("b/gone~1")
    first = next(reader)
    driver.delete("b/gone~1")  # one rename takes the whole directory away, then it is emptied
    assert not driver.exists("b/gone~1") and list(driver.tmp.iterdir()) == []
    assert first + b"".join(reader) == b"".join(bytes([n]) * (2 * CHUNK) for n in (1, 2, 3))
    with pytest.raises(BlobNotFound):
        driver.open("b/gone~1")
    driver.delete("b/gone~1")


def test_a_delete_cut_short_by_a_crash_is_finished_at_the_next_start(driver: PosixDriver) -> None:
    trash = driver.tmp / "0123.trash"
    trash.mkdir()
    (trash / "00001").write_bytes(b"left behind")
    PosixDriver(driver.root)
    assert list(driver.tmp.iterdir()) == []


def test_complete_with_a_missing_or_wrong_part_creates_nothing(driver: PosixDriver) -> None:
    one, _ = driver.put_part("up-2", 1, iter([b"a" * 10]))
    with pytest.raises(BlobNotFound):
        driver.complete_multipart("up-2", "b/x", [one, PartInfo(2, "00002." + "0" * 32, 10)])
    with pytest.raises(TierError):
        driver.complete_multipart("up-2", "b/x", [PartInfo(1, one.locator, 11)])
    with pytest.raises(TierError):
        driver.complete_multipart("up-2", "b/x", [PartInfo(1, "../../blobs/f_x", 10)])
    assert list(driver.list()) == [] and list(driver.tmp.iterdir()) == []
    with pytest.raises(ValueError):
        driver.put_part("up-2", 10001, iter([b""]))


# deletes and copies ---------------------------------------------------------------------------------------

def test_delete_is_idempotent_and_prunes_only_empty_directories(driver: PosixDriver) -> None:
    driver.put("b/d1/d2/x", iter([b"x"]))
    driver.put("b/d1/y", iter([b"y"]))
    driver.delete("b/d1/d2/x")
    driver.delete("b/d1/d2/x")
    driver.delete("b/never/was")
    assert [b.locator for b in driver.list()] == ["b/d1/y"]
    assert not driver.blob_path("b/d1/d2/x").parent.exists() and driver.blob_path("b/d1/y").exists()


def test_concurrent_writes_and_deletes_in_shared_directories_never_fail(driver: PosixDriver) -> None:
    errors: list[BaseException] = []

    def churn(worker: int) -> None:
        try:
            for i in range(150):
                locator = f"b/shared/sub/k{worker}-{i}"
                driver.put(locator, iter([b"v"]))
                if i % 2 == 0:
                    driver.delete(locator)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(list(driver.list())) == 6 * 75


def test_copy_between_posix_tiers_links_and_keeps_the_source(driver: PosixDriver, tmp_path: Path) -> None:
    other = PosixDriver(tmp_path / "other")
    driver.put("b/src", iter([b"payload"]))
    result = other.copy_from(driver, "b/src", "b/dst~2")
    assert result.size == 7 and result.md5_hex == ""  # hard link: bytes not read
    assert os.stat(other.blob_path("b/dst~2")).st_ino == os.stat(driver.blob_path("b/src")).st_ino
    driver.delete("b/src")
    assert _read(other, "b/dst~2") == b"payload"
    with pytest.raises(BlobNotFound):
        other.copy_from(driver, "b/src", "b/dst~3")
    # a blob stored as parts is linked part by part
    infos = [driver.put_part("up-6", n, iter([bytes([n]) * 100]))[0] for n in (1, 2)]
    driver.complete_multipart("up-6", "b/parted~1", infos)
    assert other.copy_from(driver, "b/parted~1", "b/parted~2").size == 200
    driver.delete("b/parted~1")
    assert _read(other, "b/parted~2") == bytes([1]) * 100 + bytes([2]) * 100


# group durability ---------------------------------------------------------------------------------------


def test_small_blobs_wait_for_a_shared_syncfs_round_and_large_ones_fsync_on_their_own(driver: PosixDriver) -> None:
    from tierpilot.drivers import posix

    assert driver.rounds is not None  # Linux: syncfs is there
    items = driver.rounds.items
    driver.put("b/small~1", iter([b"s" * 1024]))
    assert driver.rounds.items == items + 1
    driver.put("b/large~1", iter([b"l" * (posix.GROUP_SYNC_MAX + 1)]))
    assert driver.rounds.items == items + 1
    assert _read(driver, "b/small~1") == b"s" * 1024 and len(_read(driver, "b/large~1")) == posix.GROUP_SYNC_MAX + 1


def test_a_failed_syncfs_round_fails_the_put_and_leaves_no_blob(driver: PosixDriver,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from tierpilot.drivers import posix

    def failing(fd: int) -> int:
        import ctypes

        ctypes.set_errno(errno.EIO)
        return -1

    monkeypatch.setattr(posix, "_SYNCFS", failing)
    with pytest.raises(TierError, match="durable"):
        driver.put("b/lost~1", iter([b"x"]))
    with pytest.raises(BlobNotFound):
        driver.open("b/lost~1")
    assert not list((driver.root / "tmp").iterdir())


def test_writes_and_deletes_leave_the_read_paths_locator_cache_alone(driver: PosixDriver) -> None:
    # every PUT has a locator of its own: kept in the read cache they were most of the objects a full cyclic
    # collection walked under load, for nothing; reads still remember theirs
    map_locator.cache_clear()
    for i in range(20):
        driver.put(_locator(f"new-{i}"), iter([b"x"]))
    driver.delete(_locator("new-0"))
    assert map_locator.cache_info().currsize == 0
    assert _read(driver, _locator("new-1")) == b"x"
    assert map_locator.cache_info().currsize == 1
