"""One thread reading a large file on the tier's disk, the ways a posix tier could: what decided issue 18's read path.

O_DIRECT in 1 MiB reads (the posix tier's old path for long ranges) and in 4 MiB reads with 3 in flight; buffered
with FADV_SEQUENTIAL keeping the pages, and dropping them behind per 4 MiB (the posix tier's path now, per 8 MiB
window); buffered from the page cache. Cold runs drop the file's pages (FADV_DONTNEED) first and check with
cachestat that none is left. Medians of ``--rounds``; CPU = this process's CPU seconds per GiB read.

Run: .venv/bin/python bench/posix_reads.py [--size-mib 1024] [--rounds 5] [--dir DIR_ON_THE_TIER_DISK]
"""

from __future__ import annotations

import argparse
import mmap
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from bench.figures import Run, record  # noqa: E402
from tierpilot.drivers.posix import _cached_pages  # noqa: E402

MiB = 1 << 20


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        left = _cached_pages(fd, 0, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    if left:
        raise RuntimeError(f"{left} pages still cached after FADV_DONTNEED")


def direct(path: Path, size: int, chunk: int, depth: int) -> int:
    """O_DIRECT reads of ``chunk`` bytes, ``depth`` in flight, each copied out of its aligned buffer."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buffers = [mmap.mmap(-1, chunk) for _ in range(depth + 1)]
    done = 0
    try:
        with ThreadPoolExecutor(depth) as pool:
            pending: list[tuple[mmap.mmap, Future[int]]] = []
            pos = turn = 0
            while pos < size or pending:
                while pos < size and len(pending) < depth:
                    buf = buffers[turn % len(buffers)]
                    turn += 1
                    pending.append((buf, pool.submit(os.preadv, fd, [buf], pos)))
                    pos += chunk
                buf, read = pending.pop(0)
                got = read.result()
                for start in range(0, got, MiB):
                    done += len(buf[start:min(start + MiB, got)])
    finally:
        os.close(fd)
    return done


def buffered(path: Path, size: int, drop_behind: bool) -> int:
    """1 MiB preads through the page cache (FADV_SEQUENTIAL); ``drop_behind``: FADV_DONTNEED per 4 MiB read."""
    fd = os.open(path, os.O_RDONLY)
    done = 0
    try:
        os.posix_fadvise(fd, 0, size, os.POSIX_FADV_SEQUENTIAL)
        while done < size:
            done += len(os.pread(fd, MiB, done))
            if drop_behind and done % (4 * MiB) == 0:
                os.posix_fadvise(fd, done - 4 * MiB, 4 * MiB, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="a directory on the tier's disk (not tmpfs)")
    args = parser.parse_args()
    run = Run()
    size = args.size_mib * MiB
    rates: dict[str, float] = {}
    with tempfile.NamedTemporaryFile(dir=args.dir, prefix="posix-reads-") as tmp:
        path = Path(tmp.name)
        block = os.urandom(4 * MiB)
        fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
        try:
            aligned = mmap.mmap(-1, len(block))
            aligned[:] = block
            for offset in range(0, size, len(block)):
                os.pwrite(fd, aligned, offset)
        finally:
            os.close(fd)
        modes: list[tuple[str, bool, Callable[[], int]]] = [
            ("O_DIRECT, 1 MiB reads", True, lambda: direct(path, size, MiB, 1)),
            ("O_DIRECT, 4 MiB reads, 3 in flight", True, lambda: direct(path, size, 4 * MiB, 3)),
            ("buffered, FADV_SEQUENTIAL, pages kept", True, lambda: buffered(path, size, False)),
            ("buffered, FADV_SEQUENTIAL, dropped behind per 4 MiB", True, lambda: buffered(path, size, True)),
            ("buffered, from the page cache", False, lambda: buffered(path, size, False)),
        ]
        print(f"{args.size_mib} MiB file in {args.dir}; load {os.getloadavg()[0]:.1f}; medians of {args.rounds}")
        print("| one thread | MB/s | CPU s/GiB | runs MB/s |\n|---|---:|---:|---|")
        for name, cold, read in modes:
            runs: list[tuple[float, float]] = []
            for _ in range(args.rounds):
                if cold:
                    _drop(path)
                else:
                    buffered(path, size, False)
                cpu, started = _cpu(), time.perf_counter()
                assert read() == size
                elapsed = time.perf_counter() - started
                runs.append((size / elapsed / 1e6, (_cpu() - cpu) / (size / (1 << 30))))
            rates[name] = statistics.median(r[0] for r in runs)
            print(f"| {name} | {rates[name]:,.0f} | {statistics.median(r[1] for r in runs):.2f} | "
                  f"{', '.join(f'{r[0]:.0f}' for r in runs)} |", flush=True)
        _drop(path)
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    record([run.row("posix.cold_read", f"{args.size_mib} MiB cold read by one thread, buffered with drop-behind (the "
                    "posix tier's path)", rates["buffered, FADV_SEQUENTIAL, dropped behind per 4 MiB"], "MB/s",
                    "O_DIRECT, 1 MiB reads", rates["O_DIRECT, 1 MiB reads"])])


if __name__ == "__main__":
    main()
