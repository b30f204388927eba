"""`tierpilot fixity …`: run an audit now, and report what the fixity log says."""

from __future__ import annotations

import json

import typer

fixity_app = typer.Typer(help="Fixity: prove stored objects are still the bytes that were written.",
                         no_args_is_help=True)


@fixity_app.command("run")
def run(
    bucket: str | None = typer.Option(None, "--bucket", help="audit this bucket only"),
    tier: str | None = typer.Option(None, "--tier", help="audit objects on this tier only"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
) -> None:
    """Re-read and hash every object's blob (at TIERPILOT_FIXITY_BYTES_PER_S and _OBJECTS_PER_S), log each check;
    exit 1 when an object's bytes do not match or are missing (nothing is repaired)."""
    from tierpilot.integrity import service
    from tierpilot.kit.errors import DomainError

    try:
        done = service.run_audit(bucket=bucket, tier=tier)
    except DomainError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(done.as_dict()))
    else:
        typer.echo(f"{done.checked} checked: {done.ok} ok, {done.mismatch} mismatch, {done.missing} missing, "
                   f"{done.skipped} archived skipped; {done.bytes_read} bytes read"
                   + (f", {done.backfilled} given a checksum" if done.backfilled else ""))
        for f in done.findings:
            typer.echo(f"{f.result.upper():8} {f.bucket}/{f.key} (version {f.version_id}, tier {f.tier}): "
                       f"{f.algorithm} expected {f.expected}, found {f.found or '-'}")
        for note in done.notes:
            typer.echo(f"note: {note}")
    raise typer.Exit(1 if done.failed else 0)


@fixity_app.command("report")
def report(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Per bucket: checks logged, objects checked, the last check, the objects whose latest check failed."""
    from dataclasses import asdict

    from tierpilot.catalog import repository as catalog
    from tierpilot.integrity import service
    from tierpilot.kit.db import transaction

    with transaction() as session:
        rows = service.summaries(session, catalog.list_buckets(session, None))
    if as_json:
        typer.echo(json.dumps([asdict(r) for r in rows], default=str))
        return
    for r in rows:
        last = r.last_check_at.isoformat(timespec="seconds") if r.last_check_at else "never"
        typer.echo(f"{r.bucket}: {r.checked_objects}/{r.objects} objects checked, last {last}, "
                   f"{r.failures} failing")
        for f in r.failing:
            typer.echo(f"  {f['result'].upper():8} {f['key']} (version {f['version_id']})")
