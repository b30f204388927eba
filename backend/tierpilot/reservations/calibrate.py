"""`tierpilot gateway calibrate`: measure what the pool's tiers deliver and propose capacities.

A short, bounded test per online tier: parallel streams write blobs for a few seconds, then read
them back for as long, then the blobs are deleted. The proposal is the slowest tier's figure per
direction (a reservation may land on any of them), rounded down to two significant digits. It is
recorded next to the pool's capacity (shown on the Reservations page); ``--apply`` also makes it
the capacity. The gateway's own work (signatures, checksums) is not part of the test: on a busy
or small gateway host, set the capacity below the proposal.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

import typer

from tierpilot.drivers.base import TierDriver

MB = 1_000_000
MiB = 1 << 20
CHUNK = MiB


@dataclass(frozen=True)
class TierFigures:
    tier: str
    write_bps: int
    read_bps: int
    bytes_written: int
    bytes_read: int


def _round_down(bps: float) -> int:
    """Two significant digits, rounded down: a proposal must not promise more than was measured."""
    if bps <= 0:
        return 0
    scale = 10 ** max(0, int(math.log10(bps)) - 1)
    return int(bps // scale * scale)


def _blob(block: bytes, size: int) -> Iterator[bytes]:
    sent = 0
    while sent < size:
        piece = block[: min(len(block), size - sent)]
        sent += len(piece)
        yield piece


def measure(driver: TierDriver, seconds: float, streams: int, blob_bytes: int,
            on_progress: Callable[[int], None] | None = None) -> TierFigures:
    """Write for ``seconds`` with ``streams`` threads, read the blobs back as long, delete them."""
    prefix = f"_calibrate/{uuid.uuid4().hex}/"
    block = os.urandom(CHUNK)
    written: list[str] = []
    lock = threading.Lock()
    totals = {"write": 0, "read": 0}

    def writer(index: int, deadline: float) -> None:
        n = 0
        while time.monotonic() < deadline:
            locator = f"{prefix}{index}-{n}"
            result = driver.put(locator, _blob(block, blob_bytes))
            with lock:
                written.append(locator)
                totals["write"] += result.size
            n += 1
            if on_progress:
                on_progress(result.size)

    def reader(index: int, deadline: float) -> None:
        mine = written[index::streams] or written
        i = 0
        while time.monotonic() < deadline and mine:
            for chunk in driver.open(mine[i % len(mine)]):
                with lock:
                    totals["read"] += len(chunk)
                if on_progress:
                    on_progress(len(chunk))
                if time.monotonic() >= deadline:
                    break
            i += 1

    def phase(target: Callable[[int, float], None]) -> float:
        started = time.monotonic()
        threads = [threading.Thread(target=target, args=(i, started + seconds), daemon=True) for i in range(streams)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - started

    try:
        write_s = phase(writer)
        read_s = phase(reader)
    finally:
        for locator in written:
            driver.delete(locator)
    return TierFigures(driver.name, int(totals["write"] / write_s), int(totals["read"] / read_s),
                       totals["write"], totals["read"])


def calibrate(
    seconds: float = typer.Option(5.0, min=1, max=60, help="seconds of writing, then as many of reading, per tier"),
    streams: int = typer.Option(8, min=1, max=64, help="parallel streams"),
    blob_mib: int = typer.Option(64, min=1, max=1024, help="size of each test blob, MiB"),
    tier: list[str] = typer.Option([], "--tier", help="test only these tiers (default: every online tier)"),
    apply: bool = typer.Option(False, "--apply", help="also make the proposal the pool's capacity"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Measure the pool's tiers with a short parallel write/read test and propose read and write capacities."""
    from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from tierpilot.drivers.registry import build_driver
    from tierpilot.kit.db import transaction
    from tierpilot.reservations import service
    from tierpilot.tiers import repository as tiers_repository

    with transaction() as session:
        rows = tiers_repository.online_tiers(session)
    if tier:
        unknown = set(tier) - {t.name for t in rows}
        if unknown:
            typer.echo(f"error: no online tier named {', '.join(sorted(unknown))}", err=True)
            raise typer.Exit(2)
        rows = [t for t in rows if t.name in tier]
    if not rows:
        typer.echo("error: no online tier to measure", err=True)
        raise typer.Exit(2)

    figures: list[TierFigures] = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[moved]}"),
                  TimeElapsedColumn(), disable=as_json, transient=False) as progress:
        for row in rows:
            task = progress.add_task(f"{row.name}: write, then read", total=2 * seconds, moved="")
            moved = [0]
            started = time.monotonic()

            def tick(n: int, _task: TaskID = task, _started: float = started, _moved: list[int] = moved) -> None:
                _moved[0] += n
                progress.update(_task, completed=min(2 * seconds, time.monotonic() - _started),
                                moved=f"{_moved[0] / MB:,.0f} MB")

            figures.append(measure(build_driver(row), seconds, streams, blob_mib * MiB, tick))
            progress.update(task, completed=2 * seconds)

    read_bps = _round_down(min(f.read_bps for f in figures))
    write_bps = _round_down(min(f.write_bps for f in figures))
    with transaction(write=True) as session:
        service.record_calibration(session, read_bps, write_bps)
        if apply:
            service.set_capacity(session, read_bps, write_bps)
    if as_json:
        typer.echo(json.dumps({"tiers": [asdict(f) for f in figures], "proposed_read_mbps": read_bps / MB,
                               "proposed_write_mbps": write_bps / MB, "applied": apply}))
        return
    for f in figures:
        typer.echo(f"{f.tier}: write {f.write_bps / MB:,.1f} MB/s, read {f.read_bps / MB:,.1f} MB/s "
                   f"({streams} streams, {blob_mib} MiB blobs)")
    typer.echo(f"proposed capacity: read {read_bps / MB:,.0f} MB/s, write {write_bps / MB:,.0f} MB/s"
               + (" (applied)" if apply else " (recorded; --apply makes it the capacity)"))
