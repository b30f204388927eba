"""The Benchmarks page's data: the current figures the bench/ scripts recorded into the packaged figures.json."""

from __future__ import annotations

import json
from datetime import datetime
from importlib.resources import files

from fastapi import APIRouter
from pydantic import BaseModel

from tierpilot.auth.deps import CurrentUser

router = APIRouter(tags=["benchmarks"])
FIGURES = files("tierpilot.benchmarks") / "figures.json"


class Figure(BaseModel):
    id: str
    what: str
    value: float
    unit: str
    baseline: str
    baseline_value: float | None
    ratio: float | None
    command: str
    machine: str
    load: str
    date: str


class BenchmarksOut(BaseModel):
    figures: list[Figure]
    recorded_at: datetime | None


def recorded() -> BenchmarksOut:
    """The figures shipped with this build (none if the file is absent)."""
    if not FIGURES.is_file():
        return BenchmarksOut(figures=[], recorded_at=None)
    return BenchmarksOut.model_validate(json.loads(FIGURES.read_text(encoding="utf-8")))


@router.get("/benchmarks", response_model=BenchmarksOut)
def get_benchmarks(user: CurrentUser) -> BenchmarksOut:
    """The current benchmark figures, one row per measurement."""
    return recorded()
