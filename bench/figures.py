"""The current figures: rows the bench scripts record, kept in the app's packaged ``figures.json`` and shown as the
table at the top of docs/benchmarks.md (between the two ``figures`` markers).

A script starts a ``Run`` before it measures (the load average at the start) and hands its rows to ``record``,
which prints each row as a JSON line, merges the rows by ``id`` into ``backend/tierpilot/benchmarks/figures.json``
and re-renders the table. ``python bench/figures.py`` re-renders the table from the json alone. A script run by
another (``bench/ab_gateway.py`` runs ``bench/gateway_throughput.py``) only prints its rows: the caller sets
``TIERPILOT_BENCH_NO_RECORD=1``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIGURES_JSON = ROOT / "backend" / "tierpilot" / "benchmarks" / "figures.json"
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- figures: begin (written by bench/figures.py from backend/tierpilot/benchmarks/figures.json) -->"
END = "<!-- figures: end -->"
NO_RECORD = "TIERPILOT_BENCH_NO_RECORD"
FIELDS = ("id", "what", "value", "unit", "baseline", "baseline_value", "ratio", "command", "machine", "load", "date")


def machine() -> str:
    """This machine as the table names it: core count and CPU model."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}"


class Run:
    """One benchmark run: its command line, and the 1-minute load average when it started."""

    def __init__(self, command: str | None = None) -> None:
        self.command = command or ".venv/bin/python " + shlex.join(
            [os.path.relpath(sys.argv[0], ROOT) if os.path.isabs(sys.argv[0]) else sys.argv[0], *sys.argv[1:]])
        self.load_start = os.getloadavg()[0]

    def row(self, id: str, what: str, value: float, unit: str, baseline: str = "",  # noqa: A002 - the row's field
            baseline_value: float | None = None, ratio: float | None = None) -> dict[str, Any]:
        """A figure of this run, with its machine, load (start–now) and UTC date filled in."""
        if ratio is None and baseline_value:
            ratio = value / baseline_value
        return {"id": id, "what": what, "value": float(value), "unit": unit, "baseline": baseline,
                "baseline_value": None if baseline_value is None else float(baseline_value),
                "ratio": None if ratio is None else round(float(ratio), 3), "command": self.command,
                "machine": machine(), "load": f"{self.load_start:.1f}–{os.getloadavg()[0]:.1f}",
                "date": datetime.now(UTC).date().isoformat()}


def load() -> list[dict[str, Any]]:
    """The recorded figures, in the table's order."""
    if not FIGURES_JSON.is_file():
        return []
    data = json.loads(FIGURES_JSON.read_text(encoding="utf-8"))
    return list(data["figures"])


def record(rows: list[dict[str, Any]]) -> None:
    """Print the rows as JSON lines, merge them by id into figures.json and re-render the page's table (unless
    ``TIERPILOT_BENCH_NO_RECORD`` is set)."""
    for row in rows:
        if tuple(row) != FIELDS:
            raise ValueError(f"a figure has exactly the fields {FIELDS}, got {tuple(row)}")
        print(json.dumps(row, ensure_ascii=False), flush=True)
    if os.environ.get(NO_RECORD):
        return
    figures = load()
    index = {f["id"]: n for n, f in enumerate(figures)}
    for row in rows:
        if row["id"] in index:
            figures[index[row["id"]]] = row
        else:
            index[row["id"]] = len(figures)
            figures.append(row)
    save(figures)
    render_page(figures)


def save(figures: list[dict[str, Any]]) -> None:
    """Write figures.json (the app reads it through importlib.resources)."""
    recorded_at = datetime.now(UTC).replace(microsecond=0).isoformat()
    FIGURES_JSON.write_text(json.dumps({"recorded_at": recorded_at, "figures": figures}, ensure_ascii=False,
                                       indent=1) + "\n", encoding="utf-8")


def _number(x: float) -> str:
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(figures: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    lines = ["| what | value | baseline or peer | ratio | command | machine and load | date |",
             "|---|---:|---|---:|---|---|---|"]
    for f in figures:
        baseline = f["baseline"]
        if f["baseline_value"] is not None:
            baseline = f"{baseline}: {_number(f['baseline_value'])} {f['unit']}"
        ratio = "" if f["ratio"] is None else f"{f['ratio']:.2f}"
        lines.append(" | ".join([
            f"| {_cell(f['what'])}", f"{_number(f['value'])} {_cell(f['unit'])}", _cell(baseline), ratio,
            f"`{_cell(f['command'])}`", _cell(f"{f['machine']}; load {f['load']}"), f"{f['date']} |"]))
    return "\n".join(lines)


def render_page(figures: list[dict[str, Any]]) -> None:
    """Replace the table between the page's markers."""
    page = PAGE.read_text(encoding="utf-8")
    head, sep, rest = page.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{PAGE} has no {BEGIN!r} … {END!r} markers")
    PAGE.write_text(f"{head}{BEGIN}\n{table(figures)}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    render_page(load())
