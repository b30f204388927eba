"""What the ingest checksum costs a single-stream PUT: a posix tier's write (temp file, MD5, fsync, rename) of the
same body with and without the CRC64NVME every object now gets, in one run.

Each round writes the body once each way, alternating which goes first, so both see the same machine load; the
figure is the median throughput with the checksum against without. The tier's write is the part of a PUT the
checksum is added to; HTTP, SigV4 and the catalog commit come on top of both, so the gateway's own ratio is closer
to 1 than this one (an upper bound of the cost).

Run: .venv/bin/python bench/ingest_checksum.py [--mib 256] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid

from bench.figures import Run, record
from tierpilot.drivers.base import ChecksumAlgorithm
from tierpilot.drivers.checksums import INGEST_ALGORITHM
from tierpilot.drivers.posix import PosixDriver

PIECE = 1 << 20  # the gateway's body chunks


def put_seconds(drv: PosixDriver, pieces: list[bytes], algorithm: ChecksumAlgorithm | None) -> float:
    locator = f"bench/ingest~{uuid.uuid4().hex}"
    start = time.perf_counter()
    drv.put(locator, iter(pieces), checksum_algorithm=algorithm)
    elapsed = time.perf_counter() - start
    drv.delete(locator)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    run = Run()
    data = os.urandom(args.mib << 20)
    pieces = [data[i:i + PIECE] for i in range(0, len(data), PIECE)]
    times: dict[str, list[float]] = {"without": [], "with": []}
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR", "data")) as root:
        drv = PosixDriver(root)
        put_seconds(drv, pieces, None)  # warm the page cache and the directory
        for i in range(args.rounds):
            order = (("without", None), ("with", INGEST_ALGORITHM))
            for name, alg in order if i % 2 == 0 else reversed(order):
                times[name].append(put_seconds(drv, pieces, alg))
    without = args.mib / statistics.median(times["without"])
    with_crc = args.mib / statistics.median(times["with"])
    print(f"{args.mib} MiB single-stream posix PUT, median of {args.rounds} interleaved rounds: "
          f"without {without:.0f} MiB/s, with CRC64NVME {with_crc:.0f} MiB/s, ratio {with_crc / without:.3f} "
          f"(load {os.getloadavg()[0]:.1f})")
    record([run.row("ingest.crc64nvme_put", f"single-stream posix PUT of {args.mib} MiB with the ingest CRC64NVME",
                    with_crc, "MiB/s", "the same PUT without it, same rounds", without)])


if __name__ == "__main__":
    main()
