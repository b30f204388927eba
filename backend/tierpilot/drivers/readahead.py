"""Read-ahead for remote tiers: far reads fetched before the client asks, in several ranged requests at once.

A tier ``remote`` driver (s3) pays a round trip per request and one connection's rate per stream. Two
cases, both served from bounded memory:

- a large read (a whole-object GET, or any range of at least two blocks): the first block streams at
  once; the next blocks are fetched ``window`` at a time by concurrent ranged requests and handed over
  in order. The window starts at two blocks and grows by one each time the client had to wait for a
  block — it stops growing once blocks arrive before they are needed, which is when it holds the
  link's bandwidth × delay — up to ``request_bytes``.
- successive smaller ranged reads of one object by one reader (``tierpilot cp``, boto3's
  ``download_file``, the mount): a ``StrideDetector`` per (reader, object) predicts the next ranges
  (sequential, constant gap, two-level stride) and they are fetched ahead; a request a prefetched
  block covers is served from it. The depth starts at two and doubles each time the reader had to wait
  (a reader that comes back for each range in turn waits a round trip per range until the depth covers
  the link's bandwidth × delay: +1 took too many of them); random access predicts nothing, so nothing is
  fetched ahead, and a broken pattern drops its unused blocks at the next request.

Every block ahead takes its size from one process-wide budget (``total_bytes``); without room, reads
go to the tier as asked. The gateway still meters what the client receives (its flow pays each chunk
served). ``stats`` counts bytes prefetched, used (served to a client) and wasted (fetched, never served);
the same counts go to /metrics as ``tierpilot_gateway_readahead_bytes_total{kind}``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from tierpilot.drivers.base import TierDriver, TierError
from tierpilot.drivers.stride import StrideDetector
from tierpilot.kit.metrics import READAHEAD_BYTES

BLOCK = 8 << 20  # bytes per ranged request ahead
SLICE = 1 << 20  # bytes handed to the caller at a time
MAX_STREAMS = 1024  # (reader, object) patterns remembered, least recently used dropped


@dataclass
class ReadAheadStats:
    prefetched: int = 0
    used: int = 0
    wasted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, *, prefetched: int = 0, used: int = 0, wasted: int = 0) -> None:
        with self.lock:
            self.prefetched += prefetched
            self.used += used
            self.wasted += wasted
        for kind, n in (("prefetched", prefetched), ("used", used), ("wasted", wasted)):
            if n:
                READAHEAD_BYTES.labels(kind).inc(n)

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return {"prefetched": self.prefetched, "used": self.used, "wasted": self.wasted}


class _Budget:
    """Bytes of read-ahead held by this process; ``take`` fails rather than waits."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.held + n > self.limit:
                return False
            self.held += n
            return True

    def give(self, n: int) -> None:
        with self._lock:
            self.held -= n


def fetch(driver: TierDriver, locator: str, start: int, end: int) -> bytes:
    """Bytes [start, end] of a blob in one ranged request."""
    reader = driver.open(locator, start, end)
    try:
        return b"".join(reader)
    finally:
        close = getattr(reader, "close", None)
        if close is not None:
            close()


def _slices(data: bytes) -> Iterator[bytes]:
    if len(data) <= SLICE:
        if data:
            yield data
        return
    view = memoryview(data)
    for lo in range(0, len(data), SLICE):
        yield bytes(view[lo:lo + SLICE])


class _Block:
    """One range fetched ahead; holds ``length`` bytes of the budget until released."""

    __slots__ = ("start", "end", "future", "served")

    def __init__(self, start: int, end: int, future: Future[bytes]) -> None:
        self.start = start
        self.end = end
        self.future = future
        self.served = 0

    @property
    def length(self) -> int:
        return self.end - self.start + 1


class ReadAhead:
    """The process's read-ahead: memory budget, fetch threads, per-reader patterns and counters."""

    def __init__(self, *, request_bytes: int = 64 << 20, total_bytes: int = 512 << 20, block: int = BLOCK,
                 threads: int = 32, enabled: bool = True) -> None:
        self.enabled = enabled
        self.block = block
        self.max_blocks = max(1, request_bytes // block)
        self.request_bytes = request_bytes
        self.budget = _Budget(total_bytes)
        self.stats = ReadAheadStats()
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="readahead")
        self._streams: OrderedDict[tuple[Hashable, str], _Pattern] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, driver: TierDriver, locator: str, size: int, start: int, end: int,
             reader: Hashable) -> Iterator[bytes]:
        """Bytes [start, end] of a blob of ``size`` bytes read by ``reader``, with read-ahead on remote tiers.

        Errors of the tier (BlobNotFound, NotRestored) are raised here, as ``TierDriver.open`` does.
        """
        end = min(end, size - 1)
        if not self.enabled or not getattr(driver, "remote", False) or end < start:
            return driver.open(locator, start, end)
        if end - start + 1 >= 2 * self.block:
            return _Ahead(self, driver, locator, start, end)
        return self._pattern(reader, locator).read(driver, size, start, end)

    def _pattern(self, reader: Hashable, locator: str) -> _Pattern:
        key = (reader, locator)
        with self._lock:
            pattern = self._streams.get(key)
            if pattern is None:
                pattern = self._streams[key] = _Pattern(self, locator)
                while len(self._streams) > MAX_STREAMS:
                    _, old = self._streams.popitem(last=False)
                    old.drop_all()
            self._streams.move_to_end(key)
        return pattern

    def ahead(self, driver: TierDriver, locator: str, start: int, end: int) -> _Block | None:
        """A block fetched in the background, or None when the budget has no room for it."""
        n = end - start + 1
        if not self.budget.take(n):
            return None
        self.stats.add(prefetched=n)
        return _Block(start, end, self._executor.submit(fetch, driver, locator, start, end))

    def release(self, block: _Block) -> None:
        """Give a block's memory back; bytes fetched and never served count as wasted."""
        unused = block.length - block.served

        def done(future: Future[bytes]) -> None:
            self.budget.give(block.length)
            if unused > 0 and not future.cancelled() and future.exception() is None:
                self.stats.add(wasted=unused)

        if block.future.cancel():
            self.budget.give(block.length)
        else:
            block.future.add_done_callback(done)

    def take(self, block: _Block, driver: TierDriver, locator: str, start: int, end: int) -> tuple[bytes, bool]:
        """Bytes [start, end] from a block covering them (a direct read if its fetch failed) and whether the
        caller had to wait for it."""
        waited = not block.future.done()
        try:
            data = block.future.result()
        except TierError:
            return fetch(driver, locator, start, end), waited
        part = data[start - block.start:end - block.start + 1]
        block.served += len(part)
        self.stats.add(used=len(part))
        return part, waited


class _Ahead:
    """A large read: first block streamed, the following ones fetched ``window`` at a time ahead."""

    def __init__(self, owner: ReadAhead, driver: TierDriver, locator: str, start: int, end: int) -> None:
        self._owner = owner
        self._driver = driver
        self._locator = locator
        first_end = min(end, start + owner.block - 1)
        self._current: Iterator[bytes] = driver.open(locator, start, first_end)  # tier errors raise here
        self._first = self._current
        self._next = first_end + 1
        self._end = end
        self._window = 2
        self._pending: deque[tuple[int, int, _Block | None]] = deque()
        self._fill()

    def _fill(self) -> None:
        while len(self._pending) < self._window and self._next <= self._end:
            lo, hi = self._next, min(self._end, self._next + self._owner.block - 1)
            block = self._owner.ahead(self._driver, self._locator, lo, hi)
            if block is None and self._pending:
                return  # no room: try again when a block is handed over
            self._pending.append((lo, hi, block))
            self._next = hi + 1

    def __iter__(self) -> _Ahead:
        return self

    def __next__(self) -> bytes:
        while True:
            chunk = next(self._current, None)
            if chunk is not None:
                return chunk
            if not self._pending:
                self.close()
                raise StopIteration
            lo, hi, block = self._pending.popleft()
            if block is None:
                data = fetch(self._driver, self._locator, lo, hi)
            else:
                data, waited = self._owner.take(block, self._driver, self._locator, lo, hi)
                self._owner.release(block)
                if waited:
                    self._window = min(self._owner.max_blocks, self._window + 1)
            self._fill()
            self._current = _slices(data)

    def close(self) -> None:
        close = getattr(self._first, "close", None)
        if close is not None:
            close()
        while self._pending:
            _, _, block = self._pending.popleft()
            if block is not None:
                self._owner.release(block)


class _Pattern:
    """One reader's successive ranged reads of one blob: the detector and the blocks fetched for it."""

    def __init__(self, owner: ReadAhead, locator: str) -> None:
        self._owner = owner
        self._locator = locator
        self._detector = StrideDetector()
        self._blocks: dict[int, _Block] = {}
        self._depth = 2
        self._lock = threading.Lock()

    def read(self, driver: TierDriver, size: int, start: int, end: int) -> Iterator[bytes]:
        with self._lock:
            self._detector.observe(start, end - start + 1)
            hit = self._blocks.pop(start, None)
            if hit is not None and hit.end < end:  # fetched for another length: not this request's
                self._owner.release(hit)
                hit = None
            self._plan(driver, size)
        if hit is None:  # outside the lock: a reader's concurrent misses each take their own round trip
            return driver.open(self._locator, start, end)  # tier errors raise here
        data, waited = self._owner.take(hit, driver, self._locator, start, end)
        self._owner.release(hit)
        if waited:
            with self._lock:
                self._depth = min(self._owner.max_blocks, self._depth * 2)
        return _slices(data)

    def _plan(self, driver: TierDriver, size: int) -> None:
        """Fetch the predicted ranges not yet held; drop held blocks no longer predicted (under the lock)."""
        budget_blocks = max(1, self._owner.request_bytes // max(1, self._detector_length()))
        depth = min(self._depth, budget_blocks)
        predicted = [(o, min(o + n, size) - 1) for o, n in self._detector.predict(depth) if o < size]
        if not predicted:
            self._depth = 2
        wanted = {o for o, _ in predicted}
        for offset in [o for o in self._blocks if o not in wanted]:
            self._owner.release(self._blocks.pop(offset))
        for lo, hi in predicted:
            if lo not in self._blocks:
                block = self._owner.ahead(driver, self._locator, lo, hi)
                if block is None:
                    break
                self._blocks[lo] = block

    def _detector_length(self) -> int:
        predicted = self._detector.predict(1)
        return predicted[0][1] if predicted else self._owner.block

    def drop_all(self) -> None:
        with self._lock:
            for block in self._blocks.values():
                self._owner.release(block)
            self._blocks.clear()


_instance: ReadAhead | None = None
_instance_lock = threading.Lock()


def instance() -> ReadAhead:
    """The process's read-ahead, sized by the settings."""
    global _instance
    with _instance_lock:
        if _instance is None:
            from tierpilot.kit.settings import get_settings

            s = get_settings()
            _instance = ReadAhead(request_bytes=s.readahead_request_mb << 20, total_bytes=s.readahead_total_mb << 20,
                                  enabled=s.readahead_enabled)
        return _instance
