"""The Spend view in a real browser: traffic through the real gateway on the demo seed's buckets is metered,
priced with each tier's catalog and shown by bucket, with the CSV export of the same month."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import shoot, sign_in

pytestmark = pytest.mark.e2e


def test_spend_view_shows_metered_gateway_traffic_of_the_demo_seed(page: Page, product: Product,
                                                                   artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    key = page.request.post("/api/keys", headers=csrf).json()
    s3 = boto3.client("s3", endpoint_url=product.gateway_url, aws_access_key_id=key["access_key_id"],
                      aws_secret_access_key=key["secret_access_key"], region_name="us-east-1",
                      config=BotoConfig(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=15))
    month = datetime.now(UTC).strftime("%Y-%m")

    def belle2() -> dict[str, Any]:
        answer = page.request.get(f"/api/spend?month={month}&group_by=bucket").json()
        empty = {"read_requests": 0, "write_requests": 0}
        return next((g for g in answer["groups"] if g["key"] == "belle2-raw"), empty)

    before = belle2()
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="belle2-raw")["Contents"]]
    assert len(keys) == 12  # the demo seed's run
    read = sum(len(s3.get_object(Bucket="belle2-raw", Key=k)["Body"].read()) for k in keys)
    s3.put_object(Bucket="belle2-raw", Key="e2e/spend-check", Body=b"s" * (1 << 20))

    # gateways write their counters every 2 s
    deadline = time.monotonic() + 30
    line = belle2()
    while time.monotonic() < deadline and (line["read_requests"] < before["read_requests"] + 12
                                           or line["write_requests"] < before["write_requests"] + 1):
        time.sleep(0.5)
        line = belle2()
    assert line["read_requests"] - before["read_requests"] == 12, line
    assert line["write_requests"] - before["write_requests"] == 1, line
    assert line["read_bytes"] >= read
    assert line["catalogs"] == ["aws-us-east-1-2026"]

    page.get_by_role("link", name="Spend").click()
    expect(page.get_by_role("heading", level=1, name="Spend")).to_be_visible()
    table = page.get_by_role("table", name=f"Spend in {month} by bucket")
    row = table.get_by_role("row").filter(has_text="belle2-raw")
    expect(row).to_contain_text(f"{line['read_requests']} GET")
    expect(row).to_contain_text("aws-us-east-1-2026")
    expect(page.get_by_text("Forecast to month end")).to_be_visible()
    expect(page.get_by_role("table", name="The planner's forecast beside the actual spend")).to_contain_text(
        "belle2-raw")
    shoot(page, artifacts, "spend-by-bucket")

    page.get_by_label("Group by").select_option("tier")
    expect(page.get_by_role("table", name=f"Spend in {month} by tier")).to_contain_text("hot-disk")

    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.startswith(f"tierpilot spend {month}") and "hot-disk" in text
