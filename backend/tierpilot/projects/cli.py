"""`tierpilot projects`: projects, members and quotas for operators."""

from __future__ import annotations

import json
from typing import Any

import typer

from tierpilot.kit.db import transaction
from tierpilot.kit.errors import DomainError

projects_app = typer.Typer(help="Projects: members with roles, quotas.", no_args_is_help=True)


def _fail(exc: DomainError) -> typer.Exit:
    typer.echo(f"error: {exc.message}", err=True)
    return typer.Exit(2)


@projects_app.command("create")
def create(
    name: str,
    quota_bytes: int | None = typer.Option(None, "--quota-bytes", help="hard quota in bytes (every version)"),
    quota_objects: int | None = typer.Option(None, "--quota-objects", help="hard quota in objects (versions)"),
) -> None:
    """Create a project, optionally with hard quotas."""
    from tierpilot.projects import service

    try:
        with transaction(write=True) as session:
            project = service.create_project(session, name, quota_bytes, quota_objects)
            typer.echo(f"project {project.name} created")
    except DomainError as exc:
        raise _fail(exc) from exc


@projects_app.command("add-member")
def add_member(
    name: str,
    user: str,
    role: str = typer.Option("member", "--role", help="viewer | member | manager"),
    default: bool = typer.Option(False, "--default", help="buckets USER creates through S3 land in this project"),
) -> None:
    """Add USER to project NAME with a role."""
    from tierpilot.projects import repository, service

    try:
        with transaction(write=True) as session:
            project = repository.get_by_name(session, name)
            if project is None:
                raise DomainError(f"project: there is no project named {name!r}")
            service.add_member(session, project, user, role, default)
            typer.echo(f"{user} is a {role} of {name}" + (" (default project)" if default else ""))
    except DomainError as exc:
        raise _fail(exc) from exc


@projects_app.command("list")
def list_projects(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Every project: use against quota, members."""
    from tierpilot.projects import repository, service

    with transaction() as session:
        views = service.views(session, repository.list_all(session))
        rows: list[dict[str, Any]] = [{"name": v.project.name, "personal": v.personal, "used_bytes": v.used_bytes,
                 "used_objects": v.used_objects, "quota_bytes": v.project.quota_bytes,
                 "quota_objects": v.project.quota_objects, "buckets": v.buckets,
                 "members": [{"username": m.username, "role": m.role, "default": m.is_default} for m in v.members]}
                for v in views]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for r in rows:
        quota_b = "∞" if r["quota_bytes"] is None else r["quota_bytes"]
        quota_o = "∞" if r["quota_objects"] is None else r["quota_objects"]
        members = ", ".join(f"{m['username']}:{m['role']}{'*' if m['default'] else ''}" for m in r["members"])
        typer.echo(f"{r['name']}\t{r['used_bytes']}/{quota_b} B\t{r['used_objects']}/{quota_o} objects\t{members}")
