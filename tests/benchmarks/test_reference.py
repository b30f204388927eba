"""GET /api/benchmarks: the figures packaged with the app, never the docs."""

from __future__ import annotations

import io
import json
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tierpilot.benchmarks.reference import Figure

ROOT = Path(__file__).resolve().parents[2]


def _packaged() -> dict[str, Any]:
    return json.loads((files("tierpilot.benchmarks") / "figures.json").read_text(encoding="utf-8"))


def test_benchmarks_answer_the_packaged_figures(client: TestClient) -> None:
    packaged = _packaged()
    r = client.get("/api/benchmarks")
    assert r.status_code == 200
    body = r.json()
    assert body["figures"] == packaged["figures"]
    assert datetime.fromisoformat(body["recorded_at"]) == datetime.fromisoformat(packaged["recorded_at"])


def test_every_packaged_figure_has_exactly_the_figure_fields() -> None:
    figures = _packaged()["figures"]
    assert figures
    for figure in figures:
        assert list(figure) == list(Figure.model_fields)
        Figure.model_validate(figure)


def test_benchmarks_never_read_the_docs(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Path] = []
    real_open = io.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | Path):
            opened.append(Path(file).resolve())
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", spy)
    assert client.get("/api/benchmarks").status_code == 200
    assert any(p.name == "figures.json" for p in opened)
    assert not [p for p in opened if p.is_relative_to(ROOT / "docs")]


def test_benchmarks_need_a_signed_in_user(app_client: TestClient) -> None:
    assert app_client.get("/api/benchmarks").status_code == 401
