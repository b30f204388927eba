"""`tierpilot bench sweep`: a sweep through the gateway with your own keys (AWS_* environment), with progress."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path

import typer

from tierpilot.benchmarks.sweep import Point, Sweep
from tierpilot.kit.settings import get_settings

bench_app = typer.Typer(help="Benchmarks through the gateway.")


def _ints(value: str, name: str) -> list[int]:
    try:
        out = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise typer.BadParameter("a comma-separated list of whole numbers", param_hint=name) from None
    if not out or any(v < 1 for v in out):
        raise typer.BadParameter("a comma-separated list of numbers of at least 1", param_hint=name)
    return out


def _sizes(value: str) -> list[int | tuple[int, int]]:
    out: list[int | tuple[int, int]] = []
    for part in (p.strip() for p in value.split(",") if p.strip()):
        low, _, high = part.partition("-")
        bounds = _ints(f"{low},{high}" if high else low, "--sizes")
        out.append(bounds[0] if len(bounds) == 1 else (min(bounds), max(bounds)))
    if not out:
        raise typer.BadParameter("a comma-separated list of sizes", param_hint="--sizes")
    return out


def _ratios(value: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in (p.strip() for p in value.split(",") if p.strip()):
        name, _, share = part.partition("=")
        try:
            out[name.strip()] = float(share)
        except ValueError:
            raise typer.BadParameter("name=share pairs, e.g. put=0.2,get=0.8", param_hint="--ratios") from None
    return out


@bench_app.command("sweep")
def sweep(
    workload: str = typer.Option("put,get", help="comma-separated: put, get, head, list, delete, mixed"),
    sizes: str = typer.Option("1024,1048576", help="object sizes in bytes, comma-separated; LOW-HIGH for sizes "
                              "drawn log-uniformly per object"),
    ratios: str | None = typer.Option(None, help="mixed: operation shares, e.g. put=0.2,get=0.7,head=0.1"),
    concurrency: str = typer.Option("1,4,16,64", help="concurrent requests per point, comma-separated"),
    seconds: float = typer.Option(5.0, min=0.2, max=600, help="seconds per point"),
    endpoint: str | None = typer.Option(None, help="gateway URL (default: the configured gateway)"),
    reservation: str | None = typer.Option(None, help="reservation id sent with the requests of its direction"),
    direction: str | None = typer.Option(None, help="with --reservation: its direction, read or write (the id "
                                         "then goes only with GETs or only with PUTs; without it, with every "
                                         "request, and the gateway refuses those of the other direction)"),
    bucket: str | None = typer.Option(None, help="with --reservation: the reservation's bucket (the sweep works "
                                      "under a scratch prefix of it)"),
    phases: bool = typer.Option(True, help="read the traced requests' phases back from this installation's "
                                "database (medians per point)"),
    output: Path | None = typer.Option(None, "--output", "-o", help="write the points as .json or .csv"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Sweep workloads × object sizes × concurrency in a scratch bucket (removed after); print one row a point."""
    workloads = [w.strip() for w in workload.split(",") if w.strip()]
    size_list = _sizes(sizes)
    conc_list = _ints(concurrency, "--concurrency")
    if reservation and not bucket:
        raise typer.BadParameter("a reservation holds for one bucket: name it", param_hint="--bucket")
    if direction not in (None, "read", "write"):
        raise typer.BadParameter("read or write", param_hint="--direction")
    shares = _ratios(ratios) if ratios else None
    if max(conc_list) > 1024:
        raise typer.BadParameter("at most 1024", param_hint="--concurrency")
    key_id, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key_id or not secret:
        typer.echo("error: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to your tierpilot S3 key", err=True)
        raise typer.Exit(2)
    try:
        runner = Sweep(endpoint or get_settings().gateway_url, key_id, secret, reservation, direction, ratios=shares,
                       read_phases=phases, bucket=bucket if reservation else None)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--ratios") from exc
    total = len(workloads) * len(size_list) * len(conc_list)
    rows: list[Point] = []
    with typer.progressbar(length=total, label="sweep", file=sys.stderr, hidden=quiet) as bar:
        def advance(_done: int, _total: int, point: Point) -> None:
            rows.append(point)
            bar.update(1)

        try:
            runner.run(workloads, size_list, conc_list, seconds, progress=advance)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--workload") from exc
    typer.echo("workload  size        conc  ops/s      MB/s      fail  retry  p50 ms   p99 ms   ttfb p50")
    for p in rows:
        typer.echo(f"{p.workload:<9} {p.object_size:<11d} {p.concurrency:<5d} {p.ops_per_s:<10.1f} "
                   f"{p.mb_per_s:<9.2f} {p.failures:<5d} {p.retries:<6d} {p.p50_ms:<8.2f} {p.p99_ms:<8.2f} "
                   f"{p.ttfb_p50_ms:.2f}")
    if output is not None:
        if output.suffix == ".csv":
            with output.open("w", newline="") as f:
                writer = csv.writer(f)
                fields = [k for k in rows[0].as_dict() if k != "phases_ms"] if rows else []
                writer.writerow([*fields, "phases_ms"])
                for p in rows:
                    d = p.as_dict()
                    writer.writerow([*(d[k] for k in fields), json.dumps(d["phases_ms"])])
        else:
            output.write_text(json.dumps([p.as_dict() for p in rows], indent=2) + "\n")
