"""The posix driver: blobs as files under one directory, crash-safe and traversal-proof.

Layout under the tier's root::

    blobs/   one file per blob; locator segments map to ``d_<seg>`` directories and an ``f_<seg>`` file
    parts/   one directory per multipart upload (sha256 of its locator), one file per stored part
    tmp/     files being written; renamed into ``blobs/`` or ``parts/`` once complete and fsynced
    sessions/  one lock file per process writing here, flock-held while it lives: a temp file named after
             a session nobody holds was left by a crash and goes at the next start (``sweep_tmp``)
    .tierpilot-tier  the id of the tier the directory belongs to (see ``PosixDriver``'s ``tier_id``)

A blob completed from several multipart parts is a directory ``f_<seg>/`` holding its parts as
``00001``, ``00002``, … (hard links of the stored parts): completing an upload writes no data, as in
MinIO's on-disk format, so a 1 GiB upload reaches the disk once instead of twice. Such a directory
appears and disappears by one rename, so no reader ever sees some of its parts.

Names carry a kind prefix (``d_`` directory, ``f_`` blob, ``l_`` locator note, and for archive tiers
``r_`` restore state, ``c_`` restored copy), so a key ``a`` and a key ``a/b`` never collide, ``..`` is an
ordinary name, and sidecars cannot be mistaken for blobs. Inside a name only control characters, ``%``
and ``#`` are percent-encoded. A name longer than ``_NAME_LIMIT`` bytes is shortened to a readable head
plus ``#`` and the segment's SHA-256; a whole path longer than ``_PATH_LIMIT`` goes to a flat hashed
area. Either way the full locator is kept in an ``l_`` note so ``list()`` can report it. The root must be
on a case-sensitive file system.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import mmap
import os
import queue
import re
import shutil
import stat
import sys
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tierpilot.drivers.base import (
    BlobInfo,
    BlobNotFound,
    ChecksumAlgorithm,
    PartInfo,
    PutResult,
    TierDriver,
    TierError,
    TierUnavailable,
)
from tierpilot.drivers.checksums import StreamDigest
from tierpilot.kit.groupcommit import GroupCommit

CHUNK = 1 << 20  # read and copy buffer: bounded memory per stream
_NAME_LIMIT = 200  # NAME_MAX is 255 bytes; leave room for the kind prefix of sidecars
_PATH_LIMIT = 3072  # PATH_MAX is 4096 bytes, including the root
_HINT_BYTES = 96  # readable head kept in a hashed name
_BUFFER = 4 << 20  # a blob longer than this is written with O_DIRECT, from two such buffers in turn
_WINDOW = 8 << 20  # a long read asks the page cache and drops behind per window of this size
_READ_AHEAD = 32 << 20  # past a long range's end, what the kernel may have read ahead (2 x 8 MiB here, sequential)
_ALIGN = 4096  # O_DIRECT offsets and lengths (the page size; any block size divides it)
_SPARE_BUFFERS = 32  # aligned buffers kept for reuse (fresh memory costs page faults, dear in a VM)
_TMP_MAX_AGE_S = 24 * 3600  # a temp file of no session (older versions) is a crash's leftover after this
_SESSION = re.compile(r"^([0-9a-f]{16})-")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f%#]")
_ESCAPE = re.compile(r"%([0-9A-F]{2})")
_PART_NAME = re.compile(r"^\d{5}\.[0-9a-f]{32}$")
_FLAT_DIR = "d_#"  # holds paths too long to map segment by segment; no encoded name equals it
_IO_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="tier-io")  # one write in flight per PUT
GROUP_SYNC_MAX = 1 << 20  # blobs up to this size are made durable by a shared syncfs round (see ``put``)
_LIBC = ctypes.CDLL(None, use_errno=True)
_SYNCFS = getattr(_LIBC, "syncfs", None)  # Linux; elsewhere each blob fsyncs
MARKER = ".tierpilot-tier"  # in a tier's root: the tier's id; a root without it is not written to


def _quote(segment: str) -> str:
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", segment)


def _unquote(name: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), name)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encode_segment(kind: str, segment: str) -> str:
    """File-system name of one locator segment; ``kind`` is the two-character prefix (``d_``/``f_``)."""
    name = kind + _quote(segment)
    if len(name.encode("utf-8")) <= _NAME_LIMIT:
        return name
    head = _quote(segment).encode("utf-8")[:_HINT_BYTES].decode("utf-8", "ignore")
    return f"{kind}{head}#{_sha256(segment)}"


def decode_segment(name: str) -> str | None:
    """The segment a name was made from, or None when it was hashed (read the ``l_`` note)."""
    if "#" in name:
        return None
    return _unquote(name[2:])


@dataclass(frozen=True)
class BlobPath:
    """Where a locator lives: its directory (relative parts), file name and whether it was hashed."""

    dirs: tuple[str, ...]
    name: str
    hashed: bool

    def sidecar(self, kind: str) -> str:
        return kind + self.name[2:]


def map_new_locator(locator: str) -> BlobPath:
    """Map a locator to a relative path under ``blobs/``: injective, never escapes, never collides.

    Writes and deletes call this: each new blob has a locator of its own, which a cache would keep for nothing
    (8,192 entries of new PUTs' paths were most of what the cyclic collector walked in a full pass under load);
    reads call ``map_locator``, which remembers."""
    if not locator:
        raise ValueError("empty locator")
    try:
        locator.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("locator is not valid UTF-8") from exc
    segments = locator.split("/")
    dirs = tuple(encode_segment("d_", s) for s in segments[:-1])
    name = encode_segment("f_", segments[-1])
    length = sum(len(p.encode("utf-8")) + 1 for p in dirs) + len(name.encode("utf-8"))
    if length > _PATH_LIMIT:
        digest = _sha256(locator)
        return BlobPath((_FLAT_DIR, "d_" + digest[:2]), "f_#" + digest, True)
    hashed = "#" in name or any("#" in d for d in dirs)
    return BlobPath(dirs, name, hashed)


# pure; a read path maps the same locators again and again
map_locator = functools.lru_cache(maxsize=8192)(map_new_locator)


def _fsync_dir(path: Path) -> None:
    """Persist a directory's entries; a directory pruned meanwhile (it was empty) needs nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class _SmallWrite:
    """A small blob whose bytes are all in memory, written by the syncfs round that makes it durable."""

    driver: PosixDriver
    locator: str
    pieces: Sequence[bytes]


def _syncfs_round(items: Sequence[Path | _SmallWrite]) -> list[BaseException | None]:
    """One syncfs of the file system holding the items (all on one device): data and names of every blob
    written before the call are durable when it returns. A ``_SmallWrite`` is written (renamed into place,
    unsynced) first, in this thread, beside the others of the round; its own failure is its outcome."""
    outcomes: list[BaseException | None] = []
    root: Path | None = None
    for item in items:
        if isinstance(item, Path):
            root = root or item
            outcomes.append(None)
            continue
        try:
            item.driver._write_small(item.locator, item.pieces)
            outcomes.append(None)
            root = root or item.driver.root
        except Exception as exc:  # noqa: BLE001  (that write's outcome, raised to its caller)
            outcomes.append(exc)
    if root is None:  # every write of the round failed (a vanished tier directory, say): nothing to sync
        return outcomes
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if _SYNCFS(fd) != 0:  # type: ignore[misc]
            err = ctypes.get_errno()
            raise OSError(err, f"syncfs: {os.strerror(err)}")
    finally:
        os.close(fd)
    return outcomes


_rounds: dict[int, GroupCommit[Path | _SmallWrite, None]] = {}
_rounds_lock = threading.Lock()


def _durability_rounds(root: Path) -> GroupCommit[Path | _SmallWrite, None] | None:
    """The shared syncfs rounds of ``root``'s file system (one per device and process), or None without syncfs."""
    if _SYNCFS is None:
        return None
    device = os.stat(root).st_dev
    with _rounds_lock:
        rounds = _rounds.get(device)
        if rounds is None:
            rounds = _rounds[device] = GroupCommit(_syncfs_round)
        return rounds


def _unlink_quiet(path: Path) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


def _discard(path: Path) -> None:
    """Remove a temp file or temp directory of parts, whichever it is."""
    try:
        os.unlink(path)
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)
    except FileNotFoundError:
        pass


def _mtime(st: os.stat_result) -> datetime:
    return datetime.fromtimestamp(st.st_mtime, UTC)


def _parts_of(dir_fd: int) -> list[tuple[str, int]]:
    """(name, size) of each part of a blob stored as parts, in order (names are 5-digit numbers)."""
    return [(name, os.stat(name, dir_fd=dir_fd).st_size) for name in sorted(os.listdir(dir_fd))]


def _blob_size(path: Path) -> tuple[int, datetime]:
    """Size and modification time of a blob, one file or a directory of parts (FileNotFoundError)."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size, _mtime(st)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return sum(size for _name, size in _parts_of(fd)), _mtime(st)
    finally:
        os.close(fd)


def _link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link a file; on a file system without hard links, copy it and fsync the copy."""
    try:
        os.link(src, dst)
        return
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EXDEV):
            raise
    shutil.copyfile(src, dst)
    fd = os.open(dst, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _link_blob(src: Path, dst: Path) -> int:
    """Hard-link a blob (file, or directory of parts, linked part by part) to ``dst``; returns its size."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except NotADirectoryError:
        os.link(src, dst)
        return os.stat(dst).st_size
    try:
        os.mkdir(dst)
        try:
            size = 0
            for name, part_size in _parts_of(fd):
                os.link(name, dst / name, src_dir_fd=fd)
                size += part_size
            _fsync_dir(dst)
        except BaseException:
            shutil.rmtree(dst, ignore_errors=True)
            raise
        return size
    finally:
        os.close(fd)


class ChainReader:
    """The bytes of several RangeReaders one after the other (a blob stored as parts); closes them all."""

    def __init__(self, readers: list[RangeReader]) -> None:
        self._readers = readers
        self._index = 0

    def __iter__(self) -> ChainReader:
        return self

    def __next__(self) -> bytes:
        while self._index < len(self._readers):
            try:
                return next(self._readers[self._index])
            except StopIteration:
                self._index += 1
        raise StopIteration

    def close(self) -> None:
        for reader in self._readers:
            reader.close()


def _open_parts(dir_fd: int, start: int, end: int | None) -> ChainReader:
    """Readers over bytes [start, end] of a blob stored as parts; every part the range touches is opened
    now, so a delete after this point does not cut the read short (as with an open file)."""
    readers: list[RangeReader] = []
    offset = 0
    try:
        for name, size in _parts_of(dir_fd):
            first, last = offset, offset + size - 1
            offset += size
            if size == 0 or last < start or (end is not None and first > end):
                continue
            fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=dir_fd)
            readers.append(RangeReader(fd, max(start - first, 0), (last if end is None else min(end, last)) - first))
    except BaseException:
        for reader in readers:
            reader.close()
        raise
    return ChainReader(readers)


class RangeReader:
    """Iterator over bytes [start, end] of an open file in ``CHUNK`` reads; owns and closes the fd.

    Reads go through the page cache (one copy into each chunk, kernel read-ahead in front). A range of at
    least ``_BUFFER`` bytes asks at open which of its ``_WINDOW``s are cached (``cachestat``): those are left
    as they are; a window it brings in from the disk is dropped again once read past (``FADV_DONTNEED``,
    drop-behind), unless this process read that window before (``_reread``). So a large object read once
    leaves no pages behind and keeps no one else's out, as ``O_DIRECT`` did (fresh pages are dear on this
    VM: one thread reading 1 GiB from the disk spent 0.13-0.61 CPU s keeping them, 0.10 s dropping them behind,
    at 1.6-2.5 times the rate of 1 MiB ``O_DIRECT`` reads: ``bench/posix_reads.py``); read again, it stays and is
    served from memory. Without ``cachestat`` (before Linux 6.5) every page stays, to the kernel's LRU.
    """

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd: int | None = fd
        self._pos = start
        self._start = start
        self._end = end
        self._cached: bytearray | None = None  # per window of a long range and its read-ahead: 1 if cached at open
        self._window = -1  # the window being read, and whether its pages go once read past
        self._drop = False
        self._file: tuple[int, int] = (0, 0)
        self._ahead = end  # the last byte the kernel may read ahead for us
        if end >= start:
            with contextlib.suppress(OSError):  # advisory only
                os.posix_fadvise(fd, start, end - start + 1, os.POSIX_FADV_SEQUENTIAL)
        if end - start + 1 >= _BUFFER:
            st = os.fstat(fd)
            self._ahead = max(min(end + _READ_AHEAD, st.st_size - 1), end)
            self._cached = _residency(fd, start, self._ahead)
            self._file = (st.st_dev, st.st_ino)

    def __iter__(self) -> RangeReader:
        return self

    def __next__(self) -> bytes:
        if self._fd is None or self._pos > self._end:
            self.close()
            raise StopIteration
        want = min(CHUNK, self._end - self._pos + 1)
        if self._cached is not None:
            window = self._pos // _WINDOW
            if window != self._window:
                self._leave_window()
                self._enter_window(window)
            want = min(want, (window + 1) * _WINDOW - self._pos)  # a chunk stays within its window
        data = os.pread(self._fd, want, self._pos)
        if not data:  # blobs are immutable; a short file means it was removed under us
            self.close()
            raise StopIteration
        self._pos += len(data)
        return data

    def _enter_window(self, window: int) -> None:
        self._window = window
        assert self._cached is not None
        cached = self._cached[window - self._start // _WINDOW]
        self._drop = not cached and not _reread.seen((*self._file, window))

    def _leave_window(self) -> None:
        """Drop the pages of the window just read if it came from the disk (whole pages of our range in it)."""
        if self._drop and self._fd is not None:
            first = max(self._window * _WINDOW, self._start)
            last = min((self._window + 1) * _WINDOW, self._end + 1, self._pos)
            with contextlib.suppress(OSError):
                os.posix_fadvise(self._fd, first, last - first, os.POSIX_FADV_DONTNEED)
        self._drop = False

    def _drop_read_ahead(self) -> None:
        """Drop what the kernel read ahead of where the reading stopped (the range's end, or earlier when the
        client went away) into windows that were not cached at open."""
        assert self._cached is not None and self._fd is not None
        base = self._start // _WINDOW
        for window in range(self._pos // _WINDOW, self._ahead // _WINDOW + 1):
            if not self._cached[window - base]:
                first = max(window * _WINDOW, self._pos)
                last = min((window + 1) * _WINDOW, self._ahead + 1)
                with contextlib.suppress(OSError):
                    os.posix_fadvise(self._fd, first, last - first, os.POSIX_FADV_DONTNEED)

    def close(self) -> None:
        if self._fd is not None:
            self._leave_window()
            if self._cached is not None and self._ahead >= self._pos:
                self._drop_read_ahead()
            fd, self._fd = self._fd, None
            os.close(fd)

    def __del__(self) -> None:
        self.close()


_PAGE = os.sysconf("SC_PAGE_SIZE")
_CACHESTAT = 451  # the syscall's number on every Linux architecture (6.5+)
_LINUX = sys.platform.startswith("linux")


class _CacheStatRange(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _CacheStat(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("cache", "dirty", "writeback", "evicted", "recently_evicted")]


def _cached_pages(fd: int, offset: int, length: int) -> int | None:
    """Pages of bytes [offset, offset + length) of a file in the page cache; None without ``cachestat``."""
    if not _LINUX:
        return None
    rng, out = _CacheStatRange(offset, length), _CacheStat()
    if _LIBC.syscall(_CACHESTAT, fd, ctypes.byref(rng), ctypes.byref(out), 0) != 0:
        return None
    return int(out.cache)


def _pages(first: int, last: int) -> int:
    return last // _PAGE - first // _PAGE + 1


def _residency(fd: int, start: int, end: int) -> bytearray | None:
    """Per ``_WINDOW`` of bytes [start, end]: 1 if all its pages in the range are cached, else 0. None when
    all are (nothing to drop) or the kernel cannot say (then nothing is dropped either)."""
    whole = _cached_pages(fd, start, end - start + 1)
    if whole is None or whole >= _pages(start, end):
        return None
    first, last = start // _WINDOW, end // _WINDOW
    cached = bytearray(last - first + 1)
    if whole == 0:
        return cached
    for window in range(first, last + 1):
        lo, hi = max(window * _WINDOW, start), min((window + 1) * _WINDOW - 1, end)
        n = _cached_pages(fd, lo, hi - lo + 1)
        cached[window - first] = n is None or n >= _pages(lo, hi)
    return cached


class _Reread:
    """Windows of blobs this process read from the disk and dropped again, the most recent ``size``: one read
    again stays cached (a second read is what makes bytes worth their memory, as the kernel's active list
    promotes a page on its second use). Keyed by (device, inode, window): blobs are immutable."""

    def __init__(self, size: int) -> None:
        self._seen: OrderedDict[tuple[int, int, int], None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def seen(self, key: tuple[int, int, int]) -> bool:
        """Whether ``key`` was read before; either way it is now the most recent."""
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return True
            self._seen[key] = None
            if len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return False


_reread = _Reread(16384)  # 128 GiB of 8 MiB windows


_buffers: queue.SimpleQueue[mmap.mmap] = queue.SimpleQueue()


def _take_buffer() -> mmap.mmap:
    try:
        return _buffers.get_nowait()
    except queue.Empty:
        return mmap.mmap(-1, _BUFFER)  # page-aligned, as O_DIRECT wants


def _give_buffer(buf: mmap.mmap) -> None:
    if _buffers.qsize() < _SPARE_BUFFERS:
        _buffers.put(buf)
    else:
        buf.close()


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    while data:
        n = os.pwrite(fd, data, offset)
        data, offset = data[n:], offset + n


class _BlobWriter:
    """A stream written to a new file: a short one with one buffered write; a long one (past one
    buffer) with O_DIRECT, from two aligned buffers in turn, one filling while the I/O pool writes
    the other. O_DIRECT keeps a large upload out of the page cache, whose fresh pages are what
    large buffered writes spend their system time on (as MinIO writes large objects); a file system
    without O_DIRECT (tmpfs) gets the same writes buffered."""

    def __init__(self, path: Path, fd: int) -> None:
        self._path = path
        self._fd = fd
        self._direct: int | None = None
        self._bufs = [_take_buffer()]
        self._fill = 0
        self._offset = 0  # file offset of the current buffer
        self._pending: Future[None] | None = None

    @property
    def written(self) -> int:
        return self._offset + self._fill

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            n = min(len(view), _BUFFER - self._fill)
            self._bufs[0][self._fill:self._fill + n] = view[:n]
            self._fill += n
            view = view[n:]
            if self._fill == _BUFFER:
                self._hand_off()

    def _hand_off(self) -> None:
        """Send the full buffer to the I/O pool and continue in the other one."""
        if self._direct is None:
            try:
                self._direct = os.open(self._path, os.O_WRONLY | os.O_CLOEXEC | getattr(os, "O_DIRECT", 0))
            except OSError:  # no O_DIRECT here: write through the buffered descriptor
                self._direct = self._fd
        if self._pending is not None:
            self._pending.result()
        full = self._bufs[0]
        self._pending = _IO_POOL.submit(_pwrite_all, self._direct, memoryview(full), self._offset)
        self._offset += _BUFFER
        if len(self._bufs) == 1:
            self._bufs.append(_take_buffer())
        self._bufs.reverse()
        self._fill = 0

    def finish(self) -> None:
        """Write what is left: whole blocks direct, the last partial block through the page cache."""
        if self._pending is not None:
            self._pending.result()
            self._pending = None
        tail = memoryview(self._bufs[0])[:self._fill]
        whole = 0 if self._direct in (None, self._fd) else self._fill - self._fill % _ALIGN
        if whole:
            assert self._direct is not None
            _pwrite_all(self._direct, tail[:whole], self._offset)
        _pwrite_all(self._fd, tail[whole:], self._offset + whole)

    def close(self) -> None:
        if self._pending is not None:  # never release a buffer or descriptor under a running write
            with contextlib.suppress(BaseException):
                self._pending.result()
        if self._direct not in (None, self._fd):
            os.close(self._direct)  # type: ignore[arg-type]
        for buf in self._bufs:
            _give_buffer(buf)
        self._bufs = []


@dataclass(frozen=True)
class TmpLeftover:
    """A temp file (or directory of linked parts) whose writer is gone."""

    name: str
    size: int


Leftovers = list[TmpLeftover]  # spelled out before PosixDriver, whose ``list`` method hides the builtin
_sessions: dict[tuple[int, Path], str] = {}
_sessions_lock = threading.Lock()


def _session(sessions_dir: Path) -> str:
    """This process's session in a tier: a lock file it holds (flock) until it exits, however it exits."""
    key = (os.getpid(), sessions_dir)  # a forked child is a writer of its own
    with _sessions_lock:
        found = _sessions.get(key)
        if found is None:
            found = uuid.uuid4().hex[:16]
            # locked before it gets the name sweeps look at: a visible lock nobody holds is a dead session's
            draft = sessions_dir / f"{found}.new"
            fd = os.open(draft, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, never closed: released when the process ends
            os.rename(draft, sessions_dir / f"{found}.lock")
            _sessions[key] = found
        return found


def _session_alive(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False
    finally:
        os.close(fd)


def _entry_size(path: Path) -> int:
    try:
        if path.is_dir():
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _write_marker(root: Path, tier_id: int) -> None:
    tmp = root / f"{MARKER}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, f"{tier_id}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, root / MARKER)
    _fsync_dir(root)


def _read_marker(root: Path) -> str | None:
    try:
        return (root / MARKER).read_text("utf-8").strip()
    except FileNotFoundError:
        return None


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a directory, None when it is gone: an unmount or a re-created directory changes it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def claim_root(root: str | os.PathLike[str], tier_id: int) -> None:
    """Make ``root`` tier ``tier_id``'s directory (created if missing): the tier is being created or moved,
    so an admin has just chosen this directory, empty or not."""
    path = Path(root).resolve()
    path.mkdir(parents=True, exist_ok=True)
    if _read_marker(path) != str(tier_id):
        _write_marker(path, tier_id)


class PosixDriver(TierDriver):
    """A directory as a tier. Safe for many threads and processes writing and reading at once.

    With a ``tier_id`` (a configured tier) the root must already exist and carry the tier's ``MARKER``: a
    volume that is not mounted leaves an empty mount point on the root file system, and writing there would
    fill the wrong disk and hide the objects once the volume comes back. So the driver never creates the root,
    and each write starts with one ``stat`` of it (``_check_root``): a different device or inode than when the
    marker was read (unmounted, removed, replaced) means reading the marker again, and without it every write
    fails with ``TierUnavailable``. A root without a marker is adopted (marker written) only when it already
    holds this layout's ``blobs/``, as every directory an older version used does; an empty one is claimed only
    by ``claim_root`` when the tier is created or moved. Without a ``tier_id`` (tests, benchmarks, a new tier's
    connection check) the directory is created as needed and not marked.
    """

    def __init__(self, root: str | os.PathLike[str], name: str = "posix", tier_id: int | None = None) -> None:
        self.name = name
        self.tier_id = tier_id
        self.root = Path(root).resolve()
        self.blobs = self.root / "blobs"
        self._blobs = str(self.blobs)
        self.parts = self.root / "parts"
        self.tmp = self.root / "tmp"
        self.sessions = self.root / "sessions"
        self._root_id: tuple[int, int] | None = None
        if tier_id is None:
            for d in (self.blobs, self.parts, self.tmp, self.sessions):
                d.mkdir(parents=True, exist_ok=True)
        else:
            self._root_id = self._verify_root()
        # what crashed writers left, removed at start: a dead writer has no request in flight
        self.swept_at_start = self._leftovers(remove=True)
        self.rounds = _durability_rounds(self.root)

    # the tier's root ----------------------------------------------------------------------------------

    def _verify_root(self) -> tuple[int, int]:
        """The root's identity once it shows this tier's marker (adopting an unmarked root that holds blobs/)."""
        assert self.tier_id is not None
        where = f"tier {self.name!r}: {self.root}"
        identity = _identity(self.root)
        if identity is None:
            raise TierUnavailable(f"{where} is missing (volume not mounted, or the directory was removed)")
        found = _read_marker(self.root)
        if found is None:
            if not self.blobs.is_dir():
                raise TierUnavailable(f"{where} has no {MARKER} and no tier data: is its volume mounted? (an empty "
                                      "directory becomes a tier's when the tier is created or moved there)")
            _write_marker(self.root, self.tier_id)
        elif found != str(self.tier_id):
            raise TierUnavailable(f"{where} belongs to tier id {found}, not to this tier (id {self.tier_id})")
        for d in (self.blobs, self.parts, self.tmp, self.sessions):
            d.mkdir(exist_ok=True)
        return identity

    def _check_root(self) -> None:
        """Refuse to write unless the root is still the marked directory (one stat while nothing changed)."""
        if self._root_id is not None and _identity(self.root) != self._root_id:
            self._root_id = self._verify_root()  # remounted or restored: fine if the marker is there again

    def check(self) -> None:
        """The tier's health probe: the root is this tier's and its directories are there to write in."""
        self._check_root()
        for d in (self.blobs, self.tmp):
            if not os.access(d, os.W_OK | os.X_OK):
                raise TierError(f"tier {self.name!r}: {d} is not writable")

    # paths ---------------------------------------------------------------------------------------------

    def _target(self, locator: str, new: bool = False) -> tuple[BlobPath, Path]:
        bp = map_new_locator(locator) if new else map_locator(locator)
        return bp, self.blobs.joinpath(*bp.dirs)

    def blob_path(self, locator: str) -> Path:
        """The file of a blob (tests, fsck, benchmarks); callers read through ``open()``."""
        bp, directory = self._target(locator)
        return directory / bp.name

    def _upload_dir(self, upload_locator: str) -> Path:
        if not upload_locator:
            raise ValueError("empty upload locator")
        return self.parts / _sha256(upload_locator)

    def _ensure_dir(self, directory: Path, top: Path, sync: bool = True) -> None:
        """mkdir -p below ``top``, fsyncing each parent that got a new entry (so the rename survives);
        ``sync=False``: the caller's syncfs round makes them durable."""
        if directory.is_dir():
            return
        missing: list[Path] = []
        d = directory
        while d != top and not d.is_dir():
            missing.append(d)
            d = d.parent
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                continue
            if sync:
                _fsync_dir(d.parent)

    # writes --------------------------------------------------------------------------------------------

    def _new_tmp(self) -> Path:
        """Every write starts here: the root is checked first (see the class docstring)."""
        self._check_root()
        return self.tmp / f"{_session(self.sessions)}-{uuid.uuid4().hex}.tmp"

    def _write_tmp(self, chunks: Iterator[bytes], digest: StreamDigest | None) -> Path:
        """Stream into a new temp file, fsync it, and return its path (removed again on any error)."""
        return self._write_file(chunks, digest, -1)[0]

    def _write_file(self, chunks: Iterator[bytes], digest: StreamDigest | None, group_max: int
                    ) -> tuple[Path, bool]:
        """``_write_tmp``, and whether the file was fsynced: one of at most ``group_max`` bytes is not (its
        caller joins a syncfs round).

        Large bodies are written by an I/O thread while this thread hashes the next buffer (both
        release the GIL), so a PUT costs about the larger of hashing and writing rather than their sum.
        """
        tmp = self._new_tmp()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        writer = _BlobWriter(tmp, fd)
        try:
            for chunk in chunks:
                if digest is not None:
                    digest.update(chunk)
                writer.write(chunk)
            writer.finish()
            synced = writer.written > group_max
            if synced:
                os.fsync(fd)
        except BaseException:
            writer.close()
            os.close(fd)
            _unlink_quiet(tmp)
            raise
        writer.close()
        os.close(fd)
        return tmp, synced

    def _install(self, tmp: Path, directory: Path, name: str, top: Path, sync: bool = True) -> None:
        """Rename a complete temp file into place and make the rename durable, unless ``sync=False`` (the
        caller's syncfs round does); the temp file goes on error.

        A concurrent delete may remove the (empty) directory between mkdir and rename: retry.
        """
        try:
            for attempt in range(8):
                try:
                    self._ensure_dir(directory, top, sync)
                    os.rename(tmp, directory / name)
                    break
                except FileNotFoundError:
                    if not tmp.exists() or attempt == 7:
                        raise
        except BaseException:
            _discard(tmp)
            raise
        if sync:
            _fsync_dir(directory)

    def _install_blob(self, tmp: Path, locator: str, sync: bool = True) -> None:
        bp, directory = self._target(locator, new=True)
        try:
            if bp.hashed:
                note, _ = self._write_file(iter((locator.encode("utf-8"),)), None, -1 if sync else GROUP_SYNC_MAX)
                self._install(note, directory, bp.sidecar("l_"), self.blobs, sync)
            self._install(tmp, directory, bp.name, self.blobs, sync)
        except BaseException:
            _discard(tmp)
            raise

    def put(
        self,
        locator: str,
        chunks: Iterator[bytes],
        checksum_algorithm: ChecksumAlgorithm | None = None,
        storage_class: str | None = None,
    ) -> PutResult:
        """Stream ``chunks`` into a new blob; returns once it is complete and durable.

        A small blob is not fsynced on its own (file, then directory: two flushes of a few hundred bytes):
        it is renamed into place and then waits for a syncfs round of its file system, which concurrent
        small PUTs share (``kit.groupcommit``). Until that round ends it may be visible to ``open`` but is
        not yet durable; nobody is told of it before ``put`` returns, and a crash in between leaves at worst
        an orphan blob, which fsck removes as it removes any blob the catalog does not name.
        """
        map_new_locator(locator)  # refuse a bad locator before reading the body
        digest = StreamDigest(checksum_algorithm)
        tmp, synced = self._write_file(chunks, digest, GROUP_SYNC_MAX if self.rounds is not None else -1)
        self._install_blob(tmp, locator, synced)
        if not synced:
            assert self.rounds is not None
            try:
                self.rounds.submit(self.root)
            except OSError as exc:
                self.delete(locator)
                raise TierError(f"could not make {locator!r} durable: {exc}") from exc
        return digest.result()

    def takes_small_writes(self) -> bool:
        """Whether ``put_small`` is this tier's write of a small blob (syncfs rounds, the plain layout)."""
        return self.rounds is not None and type(self).put is PosixDriver.put

    async def put_small(self, locator: str, pieces: Sequence[bytes]) -> None:
        """From an event loop: a blob of at most ``GROUP_SYNC_MAX`` bytes, all in memory, written and made
        durable by the next syncfs round of its file system; returns once it is durable (``put``'s promise).

        The round's thread writes it beside the blobs of the round's other PUTs and then syncs them all, so
        the loop neither blocks on the disk nor hands the request to a thread of its own. The caller checks
        the bytes first (``StreamDigest`` over ``pieces``): a refused body is never written. A caller
        cancelled while it waits leaves the blob to be removed when its round ends.
        """
        if sum(len(p) for p in pieces) > GROUP_SYNC_MAX or not self.takes_small_writes():
            raise ValueError("put_small takes a small blob of a tier with syncfs rounds")
        map_new_locator(locator)  # refuse a bad locator before queueing it
        assert self.rounds is not None
        done = self.rounds.submit_async(_SmallWrite(self, locator, pieces))
        try:
            await asyncio.shield(done)
        except asyncio.CancelledError:
            done.add_done_callback(lambda _: _IO_POOL.submit(self.delete, locator))
            raise
        except OSError as exc:
            await asyncio.get_running_loop().run_in_executor(_IO_POOL, self.delete, locator)
            raise TierError(f"could not make {locator!r} durable: {exc}") from exc

    def _write_small(self, locator: str, pieces: Sequence[bytes]) -> None:
        """Write a small blob and rename it into place, unsynced (its syncfs round follows)."""
        self._check_root()  # a vanished volume answers TierUnavailable (503), as ``put`` does
        tmp = self._new_tmp()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            _pwrite_all(fd, memoryview(pieces[0] if len(pieces) == 1 else b"".join(pieces)), 0)
        except BaseException:
            os.close(fd)
            _unlink_quiet(tmp)
            raise
        os.close(fd)
        self._install_blob(tmp, locator, sync=False)

    # reads ---------------------------------------------------------------------------------------------

    def _missing(self, locator: str) -> Exception:
        self._check_root()  # a vanished volume is not a missing object
        return BlobNotFound(locator)

    def _readable_path(self, locator: str) -> Path:
        """The file to read for a blob; archive tiers answer with the restored copy or NotRestored."""
        return self.blob_path(locator)

    def open(self, locator: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        """Stream bytes [start, end] (inclusive end, as HTTP ranges) of a blob."""
        if start < 0:
            raise ValueError("negative range start")
        path = self._readable_path(locator)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise self._missing(locator) from None
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            try:
                return _open_parts(fd, start, end)
            except FileNotFoundError:  # deleted while its parts were being opened
                raise self._missing(locator) from None
            finally:
                os.close(fd)
        last = st.st_size - 1 if end is None else min(end, st.st_size - 1)
        return RangeReader(fd, start, last)

    def read_cached(self, locator: str, start: int, end: int) -> bytes | None:
        """Bytes [start, end] of a blob if the page cache holds all of them, else None (also for a missing
        blob or one kept in parts): never waits for the disk, so an event loop may call it for small reads.
        Archive tiers answer None (where their bytes are is a question of restores, asked in a thread)."""
        if self.offline:
            return None
        want = end - start + 1
        try:
            bp = map_locator(locator)
            fd = os.open(os.path.join(self._blobs, *bp.dirs, bp.name), os.O_RDONLY | os.O_CLOEXEC)  # no pathlib
        except (OSError, ValueError):
            return None
        try:
            buf = bytearray(want)
            got = os.preadv(fd, [buf], start, os.RWF_NOWAIT)  # EAGAIN when a page would need the disk
        except OSError:  # EAGAIN, EISDIR (parts), EOPNOTSUPP (no RWF_NOWAIT on this file system)
            return None
        finally:
            os.close(fd)
        return bytes(buf) if got == want else None

    def head(self, locator: str) -> BlobInfo:
        try:
            size, modified = _blob_size(self.blob_path(locator))
        except FileNotFoundError:
            raise BlobNotFound(locator) from None
        return BlobInfo(locator=locator, size=size, modified=modified)

    def exists(self, locator: str) -> bool:
        return self.blob_path(locator).exists()

    # delete --------------------------------------------------------------------------------------------

    _SIDECARS: tuple[str, ...] = ("l_",)

    def delete(self, locator: str) -> None:
        """Remove a blob; deleting a missing blob is not an error (idempotent).

        The directory is not fsynced: callers delete a blob only after the catalog stopped pointing at
        it, so an unlink that a power loss undoes leaves an orphan for ``tierpilot fsck``, never a wrong
        answer (a process crash loses no unlink). It saves a third of the fsyncs of a lifecycle move.
        """
        bp, directory = self._target(locator, new=True)
        self._remove(directory / bp.name)
        for kind in self._SIDECARS:
            self._remove(directory / bp.sidecar(kind))
        self._prune(directory, self.blobs)

    def _remove(self, path: Path) -> bool:
        """Remove a blob file, or a blob's directory of parts in one step: it is renamed into ``tmp/``
        (atomic, so no reader finds some parts missing) and emptied there. False if there was none."""
        try:
            os.unlink(path)
            return True
        except FileNotFoundError:
            return False
        except IsADirectoryError:
            pass
        trash = self.tmp / f"{uuid.uuid4().hex}.trash"
        try:
            os.rename(path, trash)
        except FileNotFoundError:
            return False
        shutil.rmtree(trash, ignore_errors=True)
        return True

    @staticmethod
    def _prune(directory: Path, top: Path) -> None:
        """Remove now-empty directories up to ``top``; rmdir fails safely on a directory in use."""
        d = directory
        while d != top and top in d.parents:
            try:
                d.rmdir()
            except OSError:
                return
            d = d.parent

    # listing -------------------------------------------------------------------------------------------

    def _walk(self, directory: Path, prefix_locator: list[str | None]) -> Iterator[tuple[Path, str]]:
        """Yield (file, locator) of every blob under ``directory``; hashed names resolve via ``l_`` notes."""
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except FileNotFoundError:
            return
        for entry in entries:
            if entry.name.startswith("d_") and entry.is_dir(follow_symlinks=False):
                if entry.name == _FLAT_DIR and directory == self.blobs:
                    yield from self._walk(Path(entry.path), [None])
                else:
                    yield from self._walk(Path(entry.path), [*prefix_locator, decode_segment(entry.name)])
            elif entry.name.startswith("f_") and not entry.is_symlink():
                segment = decode_segment(entry.name)
                if segment is None or None in prefix_locator:
                    try:
                        locator = (directory / ("l_" + entry.name[2:])).read_text("utf-8")
                    except FileNotFoundError:  # a crash between note and blob: not listable, fsck reports
                        continue
                else:
                    locator = "/".join([*prefix_locator, segment])  # type: ignore[list-item]
                yield Path(entry.path), locator

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        """Every blob whose locator starts with ``prefix`` (fsck and tests)."""
        segments = prefix.split("/")[:-1]
        start = self.blobs.joinpath(*(encode_segment("d_", s) for s in segments))
        walks = [self._walk(start, [*segments])]
        if segments:  # very long locators live in the flat area whatever their prefix
            walks.append(self._walk(self.blobs / _FLAT_DIR, [None]))
        for walk in walks:
            for path, locator in walk:
                if not locator.startswith(prefix):
                    continue
                try:
                    size, modified = _blob_size(path)
                except FileNotFoundError:
                    continue
                yield BlobInfo(locator=locator, size=size, modified=modified)

    # copies --------------------------------------------------------------------------------------------

    def copy_from(self, source: TierDriver, src_locator: str, dst_locator: str,
                  storage_class: str | None = None) -> PutResult:
        """Copy a blob from any tier; a posix source on this file system is hard-linked (immutable blobs)."""
        if isinstance(source, PosixDriver):
            src = source._readable_path(src_locator)
            tmp = self._new_tmp()
            try:
                size = _link_blob(src, tmp)
            except FileNotFoundError:
                raise BlobNotFound(src_locator) from None
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                    raise
            else:
                self._install_blob(tmp, dst_locator)
                return PutResult(size=size, md5_hex="")
        return super().copy_from(source, src_locator, dst_locator, storage_class)

    # multipart -----------------------------------------------------------------------------------------

    def put_part(self, upload_locator: str, part_number: int, chunks: Iterator[bytes],
                 checksum_algorithm: ChecksumAlgorithm | None = None) -> tuple[PartInfo, PutResult]:
        """Store one part (1..10000) of the upload ``upload_locator``; see TierDriver.put_part."""
        if not 1 <= part_number <= 10000:
            raise ValueError("part number must be 1..10000")
        directory = self._upload_dir(upload_locator)
        digest = StreamDigest(checksum_algorithm)
        tmp = self._write_tmp(chunks, digest)
        name = f"{part_number:05d}.{uuid.uuid4().hex}"
        try:
            if not (directory / "upload").exists():
                note = self._write_tmp(iter((upload_locator.encode("utf-8"),)), None)
                self._install(note, directory, "upload", self.parts)
            self._install(tmp, directory, name, self.parts)
        except BaseException:
            _unlink_quiet(tmp)
            raise
        result = digest.result()
        return PartInfo(part_number=part_number, locator=name, size=result.size), result

    def complete_multipart(self, upload_locator: str, locator: str, parts: Sequence[PartInfo],
                           storage_class: str | None = None) -> int:
        """Make ``parts``, in order, the new blob ``locator`` without copying them: one part becomes the
        blob file, several become a directory of hard links (see the module docstring)."""
        map_locator(locator)
        directory = self._upload_dir(upload_locator)
        for part in parts:
            if not _PART_NAME.match(part.locator):
                raise TierError(f"not a part of this tier: {part.locator!r}")
        tmp = self._new_tmp()
        try:
            if len(parts) != 1:
                os.mkdir(tmp)
            size = 0
            for index, part in enumerate(parts, 1):
                target = tmp if len(parts) == 1 else tmp / f"{index:05d}"
                try:
                    _link_or_copy(directory / part.locator, target)
                except FileNotFoundError:
                    raise BlobNotFound(f"part {part.part_number} of {upload_locator}") from None
                actual = os.stat(target).st_size
                if actual != part.size:
                    raise TierError(f"part {part.part_number} has {actual} bytes, recorded {part.size}")
                size += actual
            if len(parts) != 1:
                _fsync_dir(tmp)
        except BaseException:
            _discard(tmp)
            raise
        self._install_blob(tmp, locator)
        return size

    def abort_multipart(self, upload_locator: str) -> None:
        """Remove every stored part of the upload (after complete or abort); idempotent."""
        directory = self._upload_dir(upload_locator)
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            return
        for entry in entries:
            _unlink_quiet(Path(entry.path))
        with contextlib.suppress(OSError):  # a part landed concurrently: a later abort removes it
            directory.rmdir()

    def list_uploads(self) -> Iterator[tuple[str, datetime]]:
        """(upload locator, last part time) of every upload holding parts: fsck finds abandoned ones."""
        for entry in os.scandir(self.parts):
            note = Path(entry.path) / "upload"
            try:
                upload_locator = note.read_text("utf-8")
                newest = max(e.stat().st_mtime for e in os.scandir(entry.path))
            except (FileNotFoundError, ValueError):
                continue
            yield upload_locator, datetime.fromtimestamp(newest, UTC)

    # housekeeping --------------------------------------------------------------------------------------

    def sweep_tmp(self, max_age_s: float = _TMP_MAX_AGE_S) -> int:
        """Remove what crashed writers left in ``tmp/`` (see ``tmp_leftovers``); returns how many."""
        return len(self._leftovers(remove=True, max_age_s=max_age_s))

    def tmp_leftovers(self) -> Leftovers:
        """Temp files of writers that are gone: a session whose lock nobody holds, a deleted blob's trash,
        a temp file of no session older than a day."""
        return self._leftovers(remove=False)

    def remove_tmp_leftovers(self) -> Leftovers:
        """Remove the ``tmp_leftovers`` and say which they were."""
        return self._leftovers(remove=True)

    def _leftovers(self, remove: bool, max_age_s: float = _TMP_MAX_AGE_S) -> Leftovers:
        now = time.time()
        alive: dict[str, bool] = {}
        found: Leftovers = []
        for entry in os.scandir(self.tmp):
            session = _SESSION.match(entry.name)
            try:
                if session is not None:
                    sid = session.group(1)
                    if sid not in alive:
                        alive[sid] = _session_alive(self.sessions / f"{sid}.lock")
                    if alive[sid]:
                        continue
                elif not entry.name.endswith(".trash") and entry.stat().st_mtime >= now - max_age_s:
                    continue
            except FileNotFoundError:
                continue
            path = Path(entry.path)
            found.append(TmpLeftover(entry.name, _entry_size(path)))
            if remove:
                _discard(path)
        if remove:  # a dead session's lock goes once its files are gone
            for lock in self.sessions.glob("*.lock"):
                sid = lock.name.removesuffix(".lock")
                if not alive.get(sid, True) or (sid not in alive and not _session_alive(lock)):
                    _unlink_quiet(lock)
        return found


def lock_file(path: Path) -> int:
    """Open ``path`` and take an exclusive flock (threads and processes); close the fd to release."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BlobNotFound(str(path.name)) from None
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd
