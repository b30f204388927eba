"""`tierpilot tiers …`: tier commands that run on the server's own database (adoption of remote buckets)."""

from __future__ import annotations

import sys
import time

import typer

tiers_app = typer.Typer(help="Tiers: adopt buckets that already live on a remote tier.", no_args_is_help=True)


@tiers_app.command("adopt")
def adopt(
    tier: str = typer.Argument(..., help="name of an s3, azure or gcs tier whose endpoint holds the bucket"),
    bucket: str = typer.Option(..., "--bucket", help="the remote bucket (Azure: container) to adopt"),
    into: str | None = typer.Option(None, "--into", help="local bucket (default: the remote bucket's name)"),
    owner: str | None = typer.Option(None, "--owner", help="owner of a new local bucket (default: first admin)"),
    workers: int = typer.Option(64, "--workers", min=1, max=256, help="most list requests in flight (8 at "
                                 "first, one more per page answered, halved when the remote throttles)"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress line"),
) -> None:
    """Import the listing of a remote bucket into the catalog without copying data (run again to re-scan: new keys
    are added, keys gone from the remote deleted from the catalog)."""
    from tierpilot.adoption.service import Progress
    from tierpilot.adoption.service import adopt as run_adoption
    from tierpilot.auth import repository as auth_repository
    from tierpilot.kit.db import transaction
    from tierpilot.kit.errors import DomainError

    with transaction() as session:
        user = auth_repository.get_user_by_name(session, owner) if owner else \
            next((u for u in auth_repository.list_users(session) if u.is_admin), None)
        owner_id = user.id if user is not None else None
    if owner_id is None:
        typer.echo(f"error: no user {owner!r}" if owner else "error: no admin user to own the bucket", err=True)
        raise typer.Exit(2)
    started = time.monotonic()

    def show(p: Progress) -> None:
        if quiet:
            return
        total = max(p.ranges_total, 1)
        width = 30
        filled = int(width * p.ranges_done / total)
        rate = p.objects / max(time.monotonic() - started, 1e-6)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {p.ranges_done}/{p.ranges_total} ranges, "
                         f"{p.objects} listed, {p.added} added, {rate:,.0f} keys/s")
        sys.stderr.flush()

    try:
        done = run_adoption(tier, bucket, into=into, owner_id=owner_id, workers=workers, on_progress=show)
    except DomainError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    if not quiet:
        sys.stderr.write("\n")
    typer.echo(f"{done.objects} objects listed, {done.added} added ({done.bytes_added} bytes), {done.removed} removed "
               f"in {time.monotonic() - started:.1f} s, {done.requests} list requests")
