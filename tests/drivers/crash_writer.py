"""Subprocess for the crash tests: writes blobs slowly and acknowledges each on stdout."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from tierpilot.drivers.posix import PosixDriver

CHUNK = 64 * 1024
CHUNKS = 48  # 3 MiB per blob


def payload(i: int) -> Iterator[bytes]:
    """Deterministic content of blob i, slow enough that a kill lands mid-write."""
    for c in range(CHUNKS):
        yield bytes([(i * 31 + c) % 251]) * CHUNK
        time.sleep(0.002)


def expected(i: int) -> bytes:
    return b"".join(bytes([(i * 31 + c) % 251]) * CHUNK for c in range(CHUNKS))


def main() -> None:
    root, mode = sys.argv[1], sys.argv[2]
    driver = PosixDriver(root)
    if mode == "put":
        i = 0
        while True:
            print(f"start {i}", flush=True)
            driver.put(f"bucket/dir/key{i}~w{i}", payload(i))
            print(f"ack {i}", flush=True)
            i += 1
    else:  # join the same parts again and again: a kill lands inside complete_multipart
        parts = [driver.put_part("upload", n, iter([bytes([n]) * (8 << 20)]))[0] for n in (1, 2, 3)]
        print("parts", flush=True)
        i = 0
        while True:
            driver.complete_multipart("upload", f"bucket/mp~{i}", parts)
            print(f"ack {i}", flush=True)
            i += 1


if __name__ == "__main__":
    main()
