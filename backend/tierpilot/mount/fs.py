"""The read-only FUSE file system: names from a ``Tree``, bytes through the gateway in blocks cached on disk.

Blocks (``block`` bytes, the last one shorter) are ranged GETs with ``If-Match`` on the snapshot's ETag (an
object overwritten since the snapshot reads as EIO until a refresh, never as a mix of two versions), through
the user's S3 keys and reservation: the gateway meters and reads ahead as for any client. A block read
after its predecessor makes the next ``ahead`` blocks load in the background, by one fetch thread, so the
requests reach the gateway in order (its stride detector follows one reader's sequence; concurrent
requests would arrive shuffled). The kernel keeps pages and names (``kernel_cache``, ``CACHE_S``). The
cache is a private directory bounded to ``cache_bytes`` (least recently used blocks go first), removed when
the mount ends.

Archived objects (offline tier, no completed restore) are listed with their size; opening one fails with
EACCES, and ``user.tierpilot.restore`` tells its state (``archived``, ``ongoing``, ``failed``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mfusepy
from botocore.exceptions import BotoCoreError, ClientError

from tierpilot.mount.tree import DirEntry, FileEntry, Tree

CACHE_S = 5.0  # seconds the kernel trusts names and attributes: a refresh shows within this
XATTRS = ("user.tierpilot.restore", "user.tierpilot.storage_class", "user.tierpilot.etag", "user.tierpilot.key")


class BlockCache:
    """Blocks of objects as files in ``directory``, at most ``limit`` bytes, least recently used evicted."""

    def __init__(self, directory: Path, limit: int) -> None:
        self.directory = directory
        self.limit = limit
        self.held = 0
        self._files: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def name(self, entry: FileEntry, index: int) -> str:
        digest = hashlib.sha256(f"{entry.key}\0{entry.etag}".encode()).hexdigest()[:32]
        return f"{digest}.{index}"

    def has(self, name: str) -> bool:
        with self._lock:
            return name in self._files

    def get(self, name: str, offset: int, size: int) -> bytes | None:
        with self._lock:
            if name not in self._files:
                self.misses += 1
                return None
            self._files.move_to_end(name)
            self.hits += 1
        try:
            with open(self.directory / name, "rb") as f:
                return os.pread(f.fileno(), size, offset)
        except FileNotFoundError:  # evicted in between
            return None

    def put(self, name: str, data: bytes) -> None:
        tmp = self.directory / f"{name}.{threading.get_ident()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, self.directory / name)
        with self._lock:
            self.held += len(data) - self._files.pop(name, 0)
            self._files[name] = len(data)
            while self.held > self.limit and len(self._files) > 1:
                old, size = self._files.popitem(last=False)
                self.held -= size
                (self.directory / old).unlink(missing_ok=True)


class TierpilotFS(mfusepy.Operations):
    """Read-only operations over a tree snapshot; ``refresh()`` swaps in a new snapshot."""

    use_ns = True

    def __init__(self, load: Callable[[], Tree], client: Any, bucket: str, cache: BlockCache, *,
                 block: int = 4 << 20, ahead: int = 2) -> None:
        self._load = load
        self.tree = load()
        self._client = client
        self._bucket = bucket
        self.cache = cache
        self.block = block
        self.ahead = ahead
        self._uid, self._gid = os.getuid(), os.getgid()
        self._handles: dict[int, tuple[FileEntry, list[int]]] = {}  # fh -> (entry, [last block read])
        self._next_fh = 1
        self._lock = threading.Lock()
        self._inflight: dict[str, Future[bytes]] = {}
        # one fetch thread: block requests reach the gateway in the order they were asked, as its stride
        # detector expects of one reader; the reading thread works from the cache meanwhile
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="mount-fetch")

    def refresh(self) -> None:
        self.tree = self._load()

    def init_with_config(self, conn: Any, config: Any) -> None:
        """The tree is a snapshot and blocks are pinned to an ETag: the kernel may keep pages and names."""
        if config is not None:
            config.kernel_cache = 1
            config.entry_timeout = config.attr_timeout = config.negative_timeout = CACHE_S

    # names -----------------------------------------------------------------------------------------------

    def _entry(self, path: str) -> DirEntry | FileEntry:
        entry = self.tree.lookup(path)
        if entry is None:
            raise mfusepy.FuseOSError(errno.ENOENT)
        return entry

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        entry = self._entry(path)
        ns = int(entry.mtime * 1e9)
        common = {"st_uid": self._uid, "st_gid": self._gid, "st_atime": ns, "st_mtime": ns, "st_ctime": ns}
        if isinstance(entry, DirEntry):
            return {**common, "st_mode": stat.S_IFDIR | 0o555, "st_nlink": 2, "st_size": 0}
        mode = 0o444 if entry.readable else 0o000
        return {**common, "st_mode": stat.S_IFREG | mode, "st_nlink": 1, "st_size": entry.size,
                "st_blocks": (entry.size + 511) // 512}

    def readdir(self, path: str, fh: int) -> Iterable[str]:
        entry = self._entry(path)
        if not isinstance(entry, DirEntry):
            raise mfusepy.FuseOSError(errno.ENOTDIR)
        return [".", "..", *entry.children]

    def listxattr(self, path: str) -> Iterable[str]:
        return XATTRS if isinstance(self._entry(path), FileEntry) else ()

    def getxattr(self, path: str, name: str, position: int = 0) -> bytes:
        entry = self._entry(path)
        if not isinstance(entry, FileEntry) or name not in XATTRS:
            raise mfusepy.FuseOSError(mfusepy.ENOATTR)
        if name == "user.tierpilot.restore":
            value = "none" if not entry.archived else (entry.restore_state or "archived")
        elif name == "user.tierpilot.storage_class":
            value = entry.storage_class
        elif name == "user.tierpilot.etag":
            value = entry.etag
        else:
            value = entry.key
        return value.encode()

    def statfs(self, path: str) -> dict[str, int]:
        return {"f_bsize": self.block, "f_frsize": 512, "f_namemax": 1024, "f_files": self.tree.files}

    # data ------------------------------------------------------------------------------------------------

    def open(self, path: str, flags: int) -> int:
        entry = self._entry(path)
        if isinstance(entry, DirEntry):
            raise mfusepy.FuseOSError(errno.EISDIR)
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND):
            raise mfusepy.FuseOSError(errno.EROFS)
        if not entry.readable:  # archived: restore it first (user.tierpilot.restore tells how far it is)
            raise mfusepy.FuseOSError(errno.EACCES)
        with self._lock:
            fh = self._next_fh
            self._next_fh += 1
            self._handles[fh] = (entry, [-2])
        return fh

    def release(self, path: str, fh: int) -> int:
        with self._lock:
            self._handles.pop(fh, None)
        return 0

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        with self._lock:
            handle = self._handles.get(fh)
        if handle is None:
            raise mfusepy.FuseOSError(errno.EBADF)
        entry, last = handle
        end = min(entry.size, offset + size)
        out = []
        pos = offset
        while pos < end:
            index = pos // self.block
            lo = pos - index * self.block
            n = min(end, (index + 1) * self.block) - pos
            out.append(self._read_block(entry, index, lo, n))
            if index == last[0] + 1:  # sequential: load the next blocks before they are asked for
                for ahead in range(index + 1, index + 1 + self.ahead):
                    if ahead * self.block < entry.size and not self.cache.has(self.cache.name(entry, ahead)):
                        self._fetch(entry, ahead)
            last[0] = index
            pos += n
        return b"".join(out)

    def _read_block(self, entry: FileEntry, index: int, offset: int, size: int) -> bytes:
        name = self.cache.name(entry, index)
        data = self.cache.get(name, offset, size)
        if data is not None and len(data) == size:
            return data
        try:
            block = self._fetch(entry, index).result()
        except (ClientError, BotoCoreError) as exc:
            raise mfusepy.FuseOSError(errno.EIO) from exc
        return block[offset:offset + size]

    def _fetch(self, entry: FileEntry, index: int) -> Future[bytes]:
        """The block's bytes, fetched once however many readers ask at the same time."""
        name = self.cache.name(entry, index)
        with self._lock:
            pending = self._inflight.get(name)
            if pending is not None:
                return pending
            future = self._pool.submit(self._download, entry, index, name)
            self._inflight[name] = future
        return future

    def _download(self, entry: FileEntry, index: int, name: str) -> bytes:
        try:
            lo = index * self.block
            hi = min(entry.size, lo + self.block) - 1
            reply = self._client.get_object(Bucket=self._bucket, Key=entry.key, Range=f"bytes={lo}-{hi}",
                                            IfMatch=f'"{entry.etag}"')
            data: bytes = reply["Body"].read()
            self.cache.put(name, data)
            return data
        finally:
            with self._lock:
                self._inflight.pop(name, None)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
