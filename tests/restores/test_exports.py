"""The batch's CSV export: keys and bucket names are user input, and a spreadsheet runs a cell that starts like
a formula."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tierpilot.restores import exports


def test_csv_export_escapes_cells_that_start_like_formulas(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = ["=HYPERLINK(\"http://x.invalid\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\tx", "plain=1", "a-b", "\rx"]
    expires = datetime(2026, 12, 1, tzinfo=UTC)

    def items(_session: Any, _batch_id: int) -> Iterator[tuple[str, str, int, str, datetime | None]]:
        for key in keys:
            yield "bkt", key, 1, "ready", expires

    monkeypatch.setattr(exports.repository, "iter_items", items)
    text = "".join(exports._csv_rows(1))
    assert text.endswith("bkt,'\rx,1,ready," + expires.isoformat() + "\n")  # a carriage return too
    rows = list(csv.DictReader(io.StringIO(text.rpartition("bkt,'\r")[0])))
    assert [r["key"] for r in rows] == ["'=HYPERLINK(\"http://x.invalid\",\"y\")", "'+1+1", "'-2+3", "'@SUM(A1)",
                                        "'\tx", "plain=1", "a-b"]
    assert {r["bucket"] for r in rows} == {"bkt"} and {r["size"] for r in rows} == {"1"}
    assert rows[0]["expires_at"] == expires.isoformat()
