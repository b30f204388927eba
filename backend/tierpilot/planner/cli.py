"""`tierpilot plan SCENARIO.yaml`: evaluate a scenario file from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from tierpilot.pricing.schemas import Catalog, Scenario

# The engine and its imports load inside the command: every other `tierpilot` command stays quick to start.


def _added_catalogs() -> dict[str, Catalog]:
    """Catalogs admins added in the dashboard, when this machine's database is reachable."""
    from sqlalchemy.exc import SQLAlchemyError

    from tierpilot.kit.db import transaction
    from tierpilot.planner import repository
    from tierpilot.pricing.catalogs import validate_catalog

    try:
        with transaction() as session:
            return {row.id: validate_catalog(row.body) for row in repository.list_catalogs(session)}
    except SQLAlchemyError:
        return {}


def _report(scenario: Scenario, extra: dict[str, Catalog]) -> dict[str, Any]:
    from tierpilot.kit.errors import NotFound
    from tierpilot.pricing.catalogs import shipped_catalogs
    from tierpilot.pricing.report import build_report

    catalogs = {**shipped_catalogs(), **extra}
    try:
        return build_report(scenario, catalogs)
    except NotFound:
        added = _added_catalogs()
        if not added:
            raise
        return build_report(scenario, {**added, **catalogs})


def _print_table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from tierpilot.pricing.schemas import COMPONENTS

    console = Console()
    table = Table(title=f"USD per month at {report['reads_per_month']} full reads of the data set per month")
    table.add_column("")
    for t in report["tiers"]:
        table.add_column(t["tier"], justify="right")
    for key in (*COMPONENTS, "total"):
        table.add_row(key, *(f"{t['monthly'][key]:,.2f}" for t in report["tiers"]))
    console.print(table)
    for b in report["break_even"]:
        console.print(f"{b['cheaper_below']} is cheaper than {b['cheaper_above']} below "
                      f"{b['reads_per_month']:.4g} full reads a month")
    for d in report["dominance"]:
        verb = "costs the same as" if d["equal"] else "is never dearer than"
        console.print(f"{d['cheaper']} {verb} {d['costlier']}")
    for band in report["cheapest"]:
        upper = f"{band['to']:.4g}" if band["to"] is not None else "∞"
        console.print(f"cheapest from {band['from']:.4g} to {upper} reads/month: {band['tier']}")
    for c in report["catalogs"]:
        note = " (contains estimates)" if c["has_estimates"] else ""
        console.print(f"catalog {c['id']}: {c['provider']} {c['region']}, prices of {c['valid_from']}{note}")
    for note in report["notes"]:
        console.print(f"note: {note}")


def plan(
    scenario_file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True,
                                         help="scenario as YAML or JSON (the API's schema)"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
    as_csv: bool = typer.Option(False, "--csv", help="print the report as CSV"),
    catalog: list[Path] = typer.Option([], "--catalog", exists=True, dir_okay=False,
                                       help="an extra price catalog file (repeatable)"),
) -> None:
    """Evaluate a cost scenario: monthly cost per tier, break-even frequencies, cheapest tiers."""
    import yaml

    from tierpilot.kit.errors import DomainError
    from tierpilot.planner.service import parse_scenario
    from tierpilot.pricing.catalogs import load_catalog_file
    from tierpilot.pricing.report import report_csv

    try:
        data = yaml.safe_load(scenario_file.read_text(encoding="utf-8"))
        extra = {c.id: c for c in (load_catalog_file(p) for p in catalog)}
        report = _report(parse_scenario(data), extra)
    except yaml.YAMLError as exc:
        typer.echo(f"error: {scenario_file} is not valid YAML: {exc}", err=True)
        raise typer.Exit(2) from exc
    except DomainError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    elif as_csv:
        typer.echo(report_csv(report), nl=False)
    else:
        _print_table(report)
