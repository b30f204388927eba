"""Subprocess for the crash tests: writes blobs, acknowledges each on stdout, and stops at a point inside
a later write, says so, and waits there to be killed."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from tierpilot.drivers import posix
from tierpilot.drivers.posix import PosixDriver

CHUNK = 1 << 20
CHUNKS = 12  # 12 MiB per blob: past two of the driver's write buffers, so bytes land before the end
HALT_AT = 3  # the blob (or join) inside which the writer stops
HALT_CHUNK = 9  # when asked for this chunk, the driver has written its first buffer


def payload(i: int) -> Iterator[bytes]:
    """Deterministic content of blob i; blob HALT_AT stops half-written."""
    for c in range(CHUNKS):
        if i == HALT_AT and c == HALT_CHUNK:
            halt(i)
        yield bytes([(i * 31 + c) % 251]) * CHUNK


def expected(i: int) -> bytes:
    return b"".join(bytes([(i * 31 + c) % 251]) * CHUNK for c in range(CHUNKS))


def halt(i: int) -> None:
    """Tell the test where the writer is, and wait for its kill."""
    print(f"halted {i}", flush=True)
    while True:
        signal.pause()


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
    else:  # join the same parts again and again; join HALT_AT stops with two of its three parts linked
        parts = [driver.put_part("upload", n, iter([bytes([n]) * (8 << 20)]))[0] for n in (1, 2, 3)]
        print("parts", flush=True)
        link = posix._link_or_copy
        joined: list[Path] = []

        def link_then_halt(src: Path, dst: Path) -> None:
            link(src, dst)
            joined.append(dst)
            if len(joined) == 3 * HALT_AT + 2:
                halt(HALT_AT)

        posix._link_or_copy = link_then_halt
        i = 0
        while True:
            driver.complete_multipart("upload", f"bucket/mp~{i}", parts)
            print(f"ack {i}", flush=True)
            i += 1


if __name__ == "__main__":
    main()
