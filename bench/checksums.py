"""Checksum rates of the gateway's digests, and the FULL_OBJECT combination against re-reading (issue 14).

Each algorithm runs through the very digest objects the tiers use (`drivers.checksums.new_digest`) over the
same buffer in 1 MiB pieces (the size the gateway's body chunks come in), rounds interleaved so every
algorithm sees the same machine load; the baseline is CRC32C (google-crc32c, what S3 clients used before
CRC64NVME) measured in the same rounds. Then the whole-object CRC of a multipart object of `--parts` parts:
combined from the parts' CRCs (`combine_crcs`, what CompleteMultipartUpload does) against computing it
over the bytes again (what it would cost without the combination), both per algorithm.

Run: .venv/bin/python bench/checksums.py [--mib 256] [--rounds 5] [--parts 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from bench.figures import Run, record
from tierpilot.drivers.base import ChecksumAlgorithm
from tierpilot.drivers.checksums import combine_crcs, new_digest

PIECE = 1 << 20
ALGORITHMS: tuple[ChecksumAlgorithm, ...] = ("CRC32C", "CRC32", "CRC64NVME", "SHA1", "SHA256")
CRCS: tuple[ChecksumAlgorithm, ...] = ("CRC32", "CRC32C", "CRC64NVME")


def digest_seconds(algorithm: ChecksumAlgorithm, pieces: list[bytes]) -> float:
    d = new_digest(algorithm)
    start = time.perf_counter()
    for piece in pieces:
        d.update(piece)
    d.digest()
    return time.perf_counter() - start


def median_seconds(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parts", type=int, default=1000)
    args = parser.parse_args()
    run = Run()
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} on {os.cpu_count()} "
          "cores")
    data = os.urandom(args.mib << 20)
    pieces = [data[i:i + PIECE] for i in range(0, len(data), PIECE)]
    times: dict[str, list[float]] = {alg: [] for alg in ALGORITHMS}
    for _ in range(args.rounds):
        for alg in ALGORITHMS:
            times[alg].append(digest_seconds(alg, pieces))
    base = statistics.median(times["CRC32C"])
    print(f"\n{args.mib} MiB in 1 MiB pieces, median of {args.rounds} interleaved rounds")
    print(f"{'algorithm':<10} {'median s':>9} {'MiB/s':>9} {'vs CRC32C':>10}")
    for alg in ALGORITHMS:
        med = statistics.median(times[alg])
        print(f"{alg:<10} {med:9.4f} {args.mib / med:9.0f} {base / med:9.2f}x")
    crc64 = args.mib / statistics.median(times["CRC64NVME"])
    rows = [run.row("checksums.crc64nvme", f"CRC64NVME over {args.mib} MiB", crc64, "MiB/s",
                    "CRC32C (google-crc32c), same rounds", args.mib / base)]

    # a multipart object of --parts parts, each part's CRC known (as the catalog keeps it)
    part = len(data) // args.parts
    print(f"\nwhole-object CRC of {args.parts} parts of {part >> 10} KiB: combined vs computed over the bytes")
    print(f"{'algorithm':<10} {'combine ms':>11} {'re-read ms':>11} {'ratio':>9}")
    body = data[:part * args.parts]
    body_pieces = [body[i:i + PIECE] for i in range(0, len(body), PIECE)]
    for alg in CRCS:
        crcs = []
        for i in range(args.parts):
            d = new_digest(alg)
            d.update(data[i * part:(i + 1) * part])
            crcs.append((d.digest(), part))
        whole = new_digest(alg)
        whole.update(body)
        assert combine_crcs(alg, crcs) == whole.digest()  # the combination is the CRC of the bytes

        def combine(a: ChecksumAlgorithm = alg, c: list[tuple[bytes, int]] = crcs) -> bytes:
            return combine_crcs(a, c)

        def reread(a: ChecksumAlgorithm = alg) -> float:
            return digest_seconds(a, body_pieces)

        combined, reread_s = median_seconds(combine, args.rounds), median_seconds(reread, args.rounds)
        print(f"{alg:<10} {combined * 1e3:11.2f} {reread_s * 1e3:11.1f} {reread_s / combined:8.0f}x")
    print(f"\nload: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f}")
    record(rows)


if __name__ == "__main__":
    main()
