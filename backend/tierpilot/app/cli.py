"""The `tierpilot` command line."""

from __future__ import annotations

import json
import os
import sys

import typer

from tierpilot.adoption.cli import tiers_app
from tierpilot.benchmarks.cli import bench_app
from tierpilot.events.cli import events_app
from tierpilot.gateway.cli import gateway_app
from tierpilot.integrity.cli import fixity_app
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle.cli import fsck, lifecycle_app
from tierpilot.mount.cli import mount
from tierpilot.planner.cli import plan
from tierpilot.projects.cli import projects_app
from tierpilot.reservations.calibrate import calibrate

app = typer.Typer(help="tierpilot: dashboard, S3 gateway and cost planner for tiered cold storage.",
                  no_args_is_help=True, add_completion=False)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
users_app = typer.Typer(help="Users and their S3 keys.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(users_app, name="users")
gateway_app.command("calibrate")(calibrate)
app.add_typer(gateway_app, name="gateway")
app.add_typer(lifecycle_app, name="lifecycle")
app.add_typer(tiers_app, name="tiers")
app.add_typer(bench_app, name="bench")
app.add_typer(projects_app, name="projects")
app.add_typer(fixity_app, name="fixity")
app.add_typer(events_app, name="events")
app.command("fsck")(fsck)
app.command("plan")(plan)
app.command("mount")(mount)


@app.callback()
def _start() -> None:
    """Every command runs with the process's hooks filled (tier directory)."""
    from tierpilot.app import wiring

    wiring.install()


@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("head")) -> None:
    """Apply migrations up to REVISION (default: head)."""
    from tierpilot.kit.migrate import upgrade

    upgrade(revision=revision)
    typer.echo(f"database at {revision}")


@users_app.command("create")
def users_create(
    name: str,
    admin: bool = typer.Option(False, "--admin", help="give the user the admin role"),
    password: str | None = typer.Option(None, "--password", help="password; generated when omitted"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Create a user with a first S3 access key (its secret is printed once)."""
    from tierpilot.auth import service
    from tierpilot.kit.db import transaction
    from tierpilot.kit.errors import DomainError
    from tierpilot.kit.settings import new_secret

    pw = password or new_secret(12)
    try:
        with transaction(write=True) as session:
            user, key = service.create_user(session, name, pw, is_admin=admin)
            out = {"username": user.username, "role": user.role, "access_key_id": key.access_key_id,
                   "secret_access_key": key.secret_access_key}
    except DomainError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    if password is None:
        out["password"] = pw
    if as_json:
        typer.echo(json.dumps(out))
    else:
        for k, v in out.items():
            typer.echo(f"{k}: {v}")


@app.command("api")
def api(host: str | None = None, port: int | None = None, workers: int = 1) -> None:
    """Serve the JSON API and the dashboard."""
    import uvicorn

    from tierpilot.app.bootstrap import bootstrap_admin
    from tierpilot.kit.httpserver import ApiHttpToolsProtocol

    s = get_settings()
    bootstrap_admin()
    # uvicorn's own proxy headers would believe X-Forwarded-For from 127.0.0.1: the app reads it only from
    # TIERPILOT_TRUSTED_PROXIES (kit/proxies.py); the protocol closes half-open connections (kit/httpserver.py)
    uvicorn.run("tierpilot.app.api:app", host=host or s.api_host, port=port or s.api_port, workers=workers,
                log_level=s.log_level, proxy_headers=False, http=ApiHttpToolsProtocol)


@app.command("worker", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def worker(ctx: typer.Context, concurrency: int = 2,
           keep: bool = typer.Option(True, "--keep/--no-keep", help="run Celery as a child process, started again "
                                     "when it ends unasked or stops consuming while the broker answers")) -> None:
    """Run a Celery worker (extra arguments go to `celery worker`)."""
    if keep:
        from worker.keeper import keep as keep_running

        raise typer.Exit(keep_running([sys.executable, "-m", "tierpilot.app.cli", "worker", "--no-keep",
                                       f"--concurrency={concurrency}", *ctx.args]))
    from worker.app import celery_app

    level = get_settings().log_level
    celery_app.worker_main([*_celery_quiet(level), "worker", f"--loglevel={level.upper()}",
                            f"--concurrency={concurrency}", *ctx.args])


@app.command("beat")
def beat() -> None:
    """Run Celery beat, the scheduler of periodic sweeps."""
    from worker.app import celery_app

    s = get_settings()
    s.data_dir.mkdir(parents=True, exist_ok=True)
    schedule = (s.data_dir / "celerybeat-schedule").resolve()
    celery_app.start([*_celery_quiet(s.log_level), "beat", f"--loglevel={s.log_level.upper()}",
                      f"--schedule={schedule}"])


def _celery_quiet(level: str) -> list[str]:
    """Celery's start-up banner is not a warning: shown only from the info level down."""
    return [] if level in ("debug", "info") else ["--quiet"]


@app.command("cp")
def cp(
    src: str,
    dst: str,
    recursive: bool = typer.Option(False, "--recursive", "-r", help="copy a directory or a prefix"),
    reservation: str | None = typer.Option(None, "--reservation", help="reservation id sent with every request"),
    endpoint: str | None = typer.Option(None, "--endpoint", help="gateway URL (default: the configured gateway)"),
    concurrency: int = typer.Option(8, "--concurrency", min=1, max=64, help="parallel streams"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar"),
) -> None:
    """Copy files to or from the gateway (s3://bucket/key), credentials from the AWS_* environment."""
    from boto3.exceptions import Boto3Error
    from botocore.exceptions import BotoCoreError, ClientError

    from tierpilot.transfer.cp import copy

    try:
        moved = copy(src, dst, endpoint=endpoint or get_settings().gateway_url, reservation=reservation,
                     recursive=recursive, concurrency=concurrency, progress=not quiet)
    except (ValueError, ClientError, BotoCoreError, Boto3Error) as exc:  # S3UploadFailedError is a Boto3Error
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if not quiet:
        typer.echo(f"{moved} bytes copied")


@app.command("health")
def health(
    component: str = typer.Argument(..., help="api | gateway | worker | beat | tiers"),
    beat_max_age_s: float = typer.Option(600.0, help="beat: its schedule file was written at most this long ago"),
) -> None:
    """Exit 0 when a component of this host answers (container health checks), 1 with the reason when not."""
    import glob
    import socket
    import time

    import httpx

    s = get_settings()
    try:
        if component in ("api", "gateway"):
            from tierpilot.gateway.app import HEALTH_PATH

            port, path = (s.api_port, "/api/health") if component == "api" else (s.gateway_port, HEALTH_PATH)
            r = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5)
            problem = "" if r.status_code == 200 else f"{r.status_code} {r.text[:200]}"
        elif component == "worker":
            from worker.app import celery_app

            # this host's worker only: a healthy replica elsewhere must not hide a stuck one here
            node = f"celery@{socket.gethostname()}"
            problem = "" if celery_app.control.ping(destination=[node], timeout=5) else f"{node} did not answer"
        elif component == "beat":
            files = glob.glob(str(s.data_dir.resolve() / "celerybeat-schedule*"))
            age = time.time() - max(os.path.getmtime(f) for f in files) if files else None
            problem = ("no schedule file" if age is None else
                       "" if age <= beat_max_age_s else f"schedule file not written for {age:.0f} s")
        elif component == "tiers":  # every tier's location answers with its stored credentials
            from tierpilot.kit.db import transaction
            from tierpilot.tiers import service as tiers

            with transaction() as session:
                rows = tiers.list_tiers(session)
            results = tiers.health(rows)
            for t in results:
                typer.echo(f"{t.name} ({t.driver}): {'ok' if t.ok else 'FAILED'} in {t.seconds:.2f} s: {t.message}")
            failed = [t.name for t in results if not t.ok]
            problem = f"{len(failed)} of {len(results)} failed: {', '.join(failed)}" if failed else ""
        else:
            raise typer.BadParameter("one of api, gateway, worker, beat, tiers", param_hint="COMPONENT")
    except Exception as exc:  # a health check answers "unhealthy", whatever went wrong
        problem = f"{type(exc).__name__}: {exc}"
    if problem:
        typer.echo(f"{component}: {problem}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{component}: ok")


@app.command("up")
def up() -> None:
    """Start the whole product on this machine: api, gateway, worker, beat (and Redis when embedded)."""
    from tierpilot.app.supervisor import run_all

    sys.exit(run_all())


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    app()


if __name__ == "__main__":
    main()
