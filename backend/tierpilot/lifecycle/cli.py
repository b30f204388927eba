"""`tierpilot lifecycle run-now [--bucket B]` and `tierpilot fsck [--repair]`."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

import typer

lifecycle_app = typer.Typer(help="Lifecycle rules: run the due moves now.", no_args_is_help=True)


def _bucket_id(name: str) -> int:
    from tierpilot.catalog.errors import NoSuchBucket
    from tierpilot.catalog.service import get_bucket
    from tierpilot.kit.db import transaction

    try:
        with transaction() as session:
            return get_bucket(session, name).id
    except NoSuchBucket:
        typer.echo(f"error: there is no bucket named {name!r}", err=True)
        raise typer.Exit(2) from None


def _parse_now(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        typer.echo(f"error: --now must be an ISO 8601 time, got {text!r}", err=True)
        raise typer.Exit(2) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@lifecycle_app.command("run-now")
def run_now(
    bucket: str | None = typer.Option(None, "--bucket", help="only this bucket (default: every bucket with rules)"),
    workers: int = typer.Option(4, "--workers", min=1, max=64, help="moves run at once"),
    now: str | None = typer.Option(None, "--now", help="judge what is due at this UTC time (ISO 8601) instead"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Run one sweep and execute the moves and expirations it finds due, synchronously; print a summary."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from tierpilot.lifecycle.runner import run_now as run

    bucket_id = _bucket_id(bucket) if bucket else None
    show = not quiet and not as_json and sys.stderr.isatty()
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=True, disable=not show) as bar:
        task = bar.add_task("moving", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        summary = run(bucket_id=bucket_id, now=_parse_now(now), workers=workers, progress=progress)
    if as_json:
        out: dict[str, Any] = {
            "buckets": summary.sweep.buckets, "queued": summary.sweep.queued,
            "resumed": len(summary.sweep.resumed_move_ids), "sweep_seconds": round(summary.sweep.seconds, 3),
            "done": dict(summary.by_action), "outcomes": dict(summary.outcomes), "bytes_moved": summary.bytes_moved,
            "seconds": round(summary.seconds, 3), "errors": summary.errors}
        typer.echo(json.dumps(out))
    else:
        for line in summary.lines():
            typer.echo(line)
    if summary.outcomes.get("failed") or summary.outcomes.get("retry"):
        raise typer.Exit(1)


def fsck(
    repair: bool = typer.Option(False, "--repair", help="delete orphan blobs, re-point objects at intact copies"),
    tier: list[str] | None = typer.Option(None, "--tier", help="check only this tier (repeatable)"),
    min_age: float = typer.Option(3600.0, "--min-age", help="orphans younger than this many seconds are in flight"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
) -> None:
    """Compare the catalog with the tiers: missing, orphan and wrong-size blobs, temp files of crashed writers
    (exit 1 if any remain)."""
    from tierpilot.lifecycle.fsck import fsck as check

    report = check(repair=repair, min_age_s=min_age, tier_names=tier or None)
    if as_json:
        typer.echo(json.dumps({
            "clean": report.clean, "tiers": report.tiers, "objects": report.objects, "blobs": report.blobs,
            "in_flight": report.in_flight, "counts": report.counts(),
            "findings": [f.__dict__ for f in report.findings]}))
    else:
        typer.echo(f"checked {report.tiers} tier(s): {report.objects} catalog objects, {report.blobs} blobs, "
                   f"{report.in_flight} in flight")
        for f in report.findings[:1000]:
            typer.echo(f.line())
        if len(report.findings) > 1000:
            typer.echo(f"... and {len(report.findings) - 1000} more")
        counts = ", ".join(f"{n} {k}" for k, n in sorted(report.counts().items()))
        typer.echo("clean" if not report.findings else f"findings: {counts}")
    if not report.clean:
        raise typer.Exit(1)
