"""The read-only FUSE file system: names from a ``Tree``, bytes through the gateway in blocks cached on disk.

Blocks (``block`` bytes, the last one shorter) come from GETs with ``If-Match`` on the snapshot's ETag (an
object overwritten since the snapshot reads as EIO until a refresh, never as a mix of two versions), through
the user's S3 keys and reservation: the gateway meters and reads ahead as for any client. A block read on its
own is one ranged GET. A block read after its predecessor makes the next ``ahead`` blocks load in the
background from one GET of the rest of the file, kept open while the reader goes on in order (``_Stream``),
so a sequential read through the mount is one request to the gateway, as a direct GET is, not a round trip
per block; all fetches run on one thread, so the gateway sees one reader's requests in order. The cache is a
private directory bounded to ``cache_bytes`` (least recently used blocks go first), removed when the mount
ends; the last blocks read are also kept in memory, so the kernel's reads of a block (128 KiB each) do not
each open a cache file.

Opens cost no round trip: once a readable file has been opened, ``open`` answers ENOSYS, which tells the kernel
(FUSE's zero-message open) to open every file from then on without asking, keeping its cached pages: a warm
``grep -r`` then reads names and pages from the kernel alone. Archived objects (offline tier, no completed
restore) are listed with their size; reading one fails with EACCES (opening it too, before the first zero-message
open), and ``user.tierpilot.restore`` tells its state (``archived``, ``ongoing``, ``failed``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mfusepy
from botocore.exceptions import BotoCoreError, ClientError

from tierpilot.mount.tree import DirEntry, FileEntry, Tree

CACHE_S = 5.0  # seconds the kernel trusts names and attributes: a refresh shows within this
NO_OPEN_SUPPORT = 1 << 17  # FUSE_CAP_NO_OPEN_SUPPORT (fuse_common.h): the kernel takes ENOSYS from open as "opened"
HOT_BLOCKS = 4  # blocks kept in memory besides the cache directory
STREAMS = 8  # open sequential GETs (one per file read in order), least recently used closed
READERS = 4096  # files whose last block read is remembered (to tell a sequential reader)
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
        self._hot: deque[tuple[str, bytes]] = deque(maxlen=HOT_BLOCKS)  # the latest blocks put, in memory

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
            hot = next((data for n, data in self._hot if n == name), None)
        if hot is not None:
            return hot[offset:offset + size]
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
            self._hot.append((name, data))
            self.held += len(data) - self._files.pop(name, 0)
            self._files[name] = len(data)
            while self.held > self.limit and len(self._files) > 1:
                old, size = self._files.popitem(last=False)
                self.held -= size
                (self.directory / old).unlink(missing_ok=True)
                if any(n == old for n, _ in self._hot):
                    self._hot = deque(((n, d) for n, d in self._hot if n != old), maxlen=HOT_BLOCKS)


class _Stream:
    """A GET of a file from block ``next`` to its end, read one block at a time as a sequential reader nears."""

    def __init__(self, entry: FileEntry, body: Any, first: int) -> None:
        self.entry = entry
        self.body = body
        self.next = first

    def close(self) -> None:
        self.body.close()


class TierpilotFS(mfusepy.Operations):
    """Read-only operations over a tree snapshot; ``refresh()`` swaps in a new snapshot."""

    use_ns = True

    def __init__(self, load: Callable[[], Tree], client: Any, bucket: str, cache: BlockCache, *,
                 block: int = 4 << 20, ahead: int = 4) -> None:
        self._load = load
        self.tree = load()
        self._client = client
        self._bucket = bucket
        self.cache = cache
        self.block = block
        self.ahead = ahead
        self._uid, self._gid = os.getuid(), os.getgid()
        self._last: OrderedDict[str, int] = OrderedDict()  # path -> last block read (a hint, bounded)
        self._zero_open = False  # the kernel opens files without asking (set in init when it can)
        self._lock = threading.Lock()
        self._inflight: dict[str, Future[bytes]] = {}
        self._streams: OrderedDict[str, _Stream] = OrderedDict()  # touched by the fetch thread only
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
        self._zero_open = conn is not None and bool(conn.capable & NO_OPEN_SUPPORT)

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
        self._file(path)
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC | os.O_APPEND):
            raise mfusepy.FuseOSError(errno.EROFS)
        if self._zero_open:  # "opened": from now on the kernel opens files without a round trip
            raise mfusepy.FuseOSError(errno.ENOSYS)
        return 0

    def _file(self, path: str) -> FileEntry:
        """The readable file at ``path``; EACCES for an archived one (user.tierpilot.restore tells how far)."""
        entry = self._entry(path)
        if isinstance(entry, DirEntry):
            raise mfusepy.FuseOSError(errno.EISDIR)
        if not entry.readable:
            raise mfusepy.FuseOSError(errno.EACCES)
        return entry

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        entry = self._file(path)
        end = min(entry.size, offset + size)
        out = []
        pos = offset
        while pos < end:
            index = pos // self.block
            lo = pos - index * self.block
            n = min(end, (index + 1) * self.block) - pos
            with self._lock:
                sequential = self._last.get(path) == index - 1
                self._last[path] = index
                self._last.move_to_end(path)
                while len(self._last) > READERS:
                    self._last.popitem(last=False)
            if sequential and self.ahead:  # load the next blocks before they are asked for, from one GET
                self._prefetch(entry, index)
            out.append(self._read_block(entry, index, lo, n))
            pos += n
        return b"".join(out)

    def _read_block(self, entry: FileEntry, index: int, offset: int, size: int) -> bytes:
        name = self.cache.name(entry, index)
        data = self.cache.get(name, offset, size)
        if data is not None and len(data) == size:
            return data
        try:
            block = self._fetch(entry, index).result()
        except (ClientError, BotoCoreError, OSError) as exc:  # refused (412: overwritten), unreachable, cut off
            raise mfusepy.FuseOSError(errno.EIO) from exc
        return block[offset:offset + size]

    def _prefetch(self, entry: FileEntry, index: int) -> None:
        """Blocks ``index`` (if missing) to ``index + ahead`` not held or on their way: one job of the fetch
        thread reads them from the file's open GET."""
        wanted: list[tuple[int, str, Future[bytes]]] = []
        last = min(index + self.ahead, (entry.size - 1) // self.block)
        with self._lock:
            for i in range(index, last + 1):
                name = self.cache.name(entry, i)
                if name in self._inflight or (wanted == [] and self.cache.has(name)):
                    continue
                future: Future[bytes] = Future()
                self._inflight[name] = future
                wanted.append((i, name, future))
        if wanted:
            self._pool.submit(self._pump, entry, wanted)

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

    def _pump(self, entry: FileEntry, wanted: list[tuple[int, str, Future[bytes]]]) -> None:
        """Read the ``wanted`` blocks from the file's open GET (opening one where the open one is not); each block
        goes to the cache and to whoever waits for it."""
        stream = self._streams.pop(entry.key, None)
        try:
            for index, name, future in wanted:
                if stream is not None and (stream.entry != entry or stream.next != index):
                    stream.close()
                    stream = None
                if stream is None:
                    reply = self._client.get_object(Bucket=self._bucket, Key=entry.key,
                                                    Range=f"bytes={index * self.block}-{entry.size - 1}",
                                                    IfMatch=f'"{entry.etag}"')
                    stream = _Stream(entry, reply["Body"], index)
                n = min(entry.size, (index + 1) * self.block) - index * self.block
                parts: list[bytes] = []
                got = 0
                while got < n and (part := stream.body.read(n - got)):
                    parts.append(part)
                    got += len(part)
                if got != n:
                    raise OSError(errno.EIO, f"{entry.key}: the GET ended {n - got} bytes early")
                data = b"".join(parts) if len(parts) > 1 else parts[0]
                stream.next = index + 1
                self.cache.put(name, data)
                future.set_result(data)
                with self._lock:
                    self._inflight.pop(name, None)
        except Exception as exc:  # noqa: BLE001 - every waiter gets the error (EIO); the next read starts anew
            if stream is not None:
                stream.close()
            with self._lock:
                for _, name, future in wanted:
                    if not future.done():
                        future.set_exception(exc)
                    self._inflight.pop(name, None)
            return
        if stream is None:
            return
        if stream.next * self.block < entry.size:  # more to come: keep it for the reader's next blocks
            self._streams[entry.key] = stream
            while len(self._streams) > STREAMS:
                self._streams.popitem(last=False)[1].close()
        else:
            stream.close()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for stream in list(self._streams.values()):
            stream.close()
