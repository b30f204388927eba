"""The Benchmarks page's data: the figures recorded in docs/benchmarks.md by the bench/ scripts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fastapi import APIRouter
from pydantic import BaseModel

from tierpilot.auth.deps import CurrentUser

router = APIRouter(tags=["benchmarks"])
BENCHMARKS_MD = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


class BenchmarksOut(BaseModel):
    markdown: str
    updated_at: datetime | None


@router.get("/benchmarks", response_model=BenchmarksOut)
def get_benchmarks(user: CurrentUser) -> BenchmarksOut:
    """The recorded figures as Markdown (empty until a benchmark has been run and recorded)."""
    if not BENCHMARKS_MD.is_file():
        return BenchmarksOut(markdown="", updated_at=None)
    stat = BENCHMARKS_MD.stat()
    return BenchmarksOut(markdown=BENCHMARKS_MD.read_text(encoding="utf-8"),
                         updated_at=datetime.fromtimestamp(stat.st_mtime, UTC))
