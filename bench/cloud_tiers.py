"""Azure and GCS tier drivers against their bare SDKs: upload and download of one large object (1 GiB by
default) through Azurite and fake-gcs-server on 127.0.0.1, in the same run.

Per emulator and direction, ``--rounds`` alternating runs of the driver and of the SDK alone (the same
block/chunk size and parallelism), each on a fresh object name; the median MiB/s of each and their ratio
(target: the driver ≥ 0.8 of the SDK). The body is a 64 MiB random buffer repeated, streamed from memory in
1 MiB chunks (the gateway's chunking), so the disk under the emulator and the emulator itself are the same
for both sides. SDK baselines:
- Azure: ``BlobClient.upload_blob(stream, length=None, max_concurrency=N)`` (its own chunked parallel upload)
  and ``download_blob(max_concurrency=1).chunks()`` (the driver streams one range request too);
- GCS: ``Blob.upload_from_file(stream)`` with ``chunk_size`` (resumable) and ``Blob.download_to_file``
  (one request, streamed).

Run: .venv/bin/python bench/cloud_tiers.py [--size-mib 1024] [--rounds 3] [--only azure|gcs] [--markdown]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import Run, record  # noqa: E402
from tests.emulators import azurite_connection_string, start_azurite, start_fake_gcs  # noqa: E402
from tierpilot.drivers.azure import AzureBlobDriver  # noqa: E402
from tierpilot.drivers.gcs import GCSDriver  # noqa: E402

MiB = 1 << 20
# the SDK call each driver is held to, by (emulator key, direction)
SDK_CALLS = {("azure", "upload"): "SDK upload_blob", ("azure", "download"): "SDK download_blob",
             ("gcs", "upload"): "SDK upload_from_file", ("gcs", "download"): "SDK download_to_file"}
PATTERN = os.urandom(64 * MiB)


def body(size: int) -> Iterator[bytes]:
    sent = 0
    view = memoryview(PATTERN)
    while sent < size:
        n = min(MiB, size - sent)
        start = sent % len(PATTERN)
        yield bytes(view[start:start + n]) if start + n <= len(PATTERN) else bytes(PATTERN[:n])
        sent += n


class IterStream(io.RawIOBase):
    """A read-only file over an iterator of chunks (what the SDKs take for a stream of unknown length)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._rest = b""
        self._read = 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:  # the GCS SDK asks where a new upload starts
        return self._read

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes, short only at the end (the SDKs take a short read for the end)."""
        out = bytearray()
        while size < 0 or len(out) < size:
            if not self._rest:
                try:
                    self._rest = next(self._chunks)
                except StopIteration:
                    break
            take = len(self._rest) if size < 0 else min(size - len(out), len(self._rest))
            out += self._rest[:take]
            self._rest = self._rest[take:]
        self._read += len(out)
        return bytes(out)

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._rest:
            try:
                self._rest = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._rest))
        buffer[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def timed(run: Callable[[], int], size: int) -> float:
    started = time.perf_counter()
    moved = run()
    elapsed = time.perf_counter() - started
    if moved != size:
        raise SystemExit(f"{run.__name__} moved {moved} bytes, not {size}")
    return moved / MiB / elapsed


def drain(chunks: Iterator[bytes]) -> int:
    return sum(len(c) for c in chunks)


def azure_cases(url: str, size: int) -> dict[str, tuple[Callable[[], int], Callable[[], int]]]:
    driver = AzureBlobDriver("bench", container=f"bench-{uuid.uuid4().hex[:8]}",
                             connection_string=azurite_connection_string(url), block_size=8 * MiB,
                             max_concurrency=4)
    driver.container_client.create_container()
    sdk = driver.container_client  # the same account and container, the SDK's own transfer code
    driver.put("ref", body(size))

    def drv_up() -> int:
        name = f"d/{uuid.uuid4().hex}"
        driver.put(name, body(size))
        return driver.head(name).size

    def sdk_up() -> int:
        blob = sdk.get_blob_client(f"s/{uuid.uuid4().hex}")
        blob.upload_blob(IterStream(body(size)), max_concurrency=4)
        return int(blob.get_blob_properties().size)

    def drv_down() -> int:
        return drain(driver.open("ref"))

    def sdk_down() -> int:
        return drain(sdk.get_blob_client("ref").download_blob(max_concurrency=1).chunks())

    return {"upload": (drv_up, sdk_up), "download": (drv_down, sdk_down)}


def gcs_cases(url: str, size: int) -> dict[str, tuple[Callable[[], int], Callable[[], int]]]:
    driver = GCSDriver("bench", bucket=f"bench-{uuid.uuid4().hex[:8]}", endpoint_url=url, chunk_size=16 * MiB)
    driver.client.create_bucket(driver.bucket_name)
    driver.put("ref", body(size))

    def drv_up() -> int:
        name = f"d/{uuid.uuid4().hex}"
        driver.put(name, body(size))
        return driver.head(name).size

    def sdk_up() -> int:
        blob = driver.bucket.blob(f"s/{uuid.uuid4().hex}", chunk_size=16 * MiB)
        # the SDK's 60 s request time-out, on a loaded machine, retried a late chunk fake-gcs-server had taken
        # (404 for the session): give it the driver's patience (its requests have no time-out)
        blob.upload_from_file(IterStream(body(size)), checksum=None, timeout=600)
        blob.reload()
        return int(blob.size or 0)

    def drv_down() -> int:
        return drain(driver.open("ref"))

    class Counter(io.RawIOBase):
        n = 0

        def writable(self) -> bool:
            return True

        def write(self, b: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
            self.n += len(b)
            return len(b)

    def sdk_down() -> int:
        sink = Counter()
        driver.bucket.blob("ref").download_to_file(sink, checksum=None)
        return sink.n

    return {"upload": (drv_up, sdk_up), "download": (drv_down, sdk_down)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", choices=["azure", "gcs"], help="one emulator (fake-gcs-server holds a whole "
                        "resumable upload in memory: 1 GiB takes it minutes and 3 GiB of RAM)")
    args = parser.parse_args()
    run = Run()
    size = args.size_mib * MiB
    figures = []
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}; "
          f"object {args.size_mib} MiB, {args.rounds} rounds", flush=True)
    rows = []
    emulators = [("azure", "Azurite", start_azurite, azure_cases), ("gcs", "fake-gcs-server", start_fake_gcs,
                                                                     gcs_cases)]
    for key, name, start, cases in emulators:
        if args.only and key != args.only:
            continue
        emulator = start()
        try:
            for direction, (drv, sdk) in cases(emulator.url, size).items():
                d, s = [], []
                for _ in range(args.rounds):
                    d.append(timed(drv, size))
                    s.append(timed(sdk, size))
                row = (name, direction, statistics.median(d), statistics.median(s))
                rows.append(row)
                driver = "Azure" if key == "azure" else "GCS"
                figures.append(run.row(f"cloud.{key}.{direction}", f"{driver} driver, {args.size_mib} MiB {direction} "
                                       f"{'to' if direction == 'upload' else 'from'} {name} (target ≥ 0.8 of the SDK)",
                                       row[2], "MiB/s", SDK_CALLS[(key, direction)], row[3]))
                print(f"{name:16} {direction:9} driver {row[2]:7.1f} MiB/s  sdk {row[3]:7.1f} MiB/s  "
                      f"ratio {row[2] / row[3]:.2f}  (driver {[round(x) for x in d]}, sdk {[round(x) for x in s]})",
                      flush=True)
        finally:
            emulator.stop()
    print(f"load after: {os.getloadavg()[0]:.1f}")
    if args.markdown:
        print("\n| emulator | direction | driver MiB/s | SDK MiB/s | driver / SDK |\n|---|---|---:|---:|---:|")
        for name, direction, d_med, s_med in rows:
            print(f"| {name} | {direction} | {d_med:.1f} | {s_med:.1f} | {d_med / s_med:.2f} |")
    record(figures)


if __name__ == "__main__":
    main()
