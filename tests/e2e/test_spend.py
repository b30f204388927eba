"""The Spend view in a real browser: traffic through the real gateway on the demo seed's buckets is metered,
priced with each tier's catalog and shown by bucket, with the CSV export of the same month; a bucket's plan saved
in the browser changes the plan beside the actual."""

from __future__ import annotations

import contextlib
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

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
    # the demo prices its posix tiers as on-premises (a recall costs nothing there): this test prices the archive
    # tier as a cloud archive class for its duration, to see restores priced, planned and compared
    archive_tier = next(t for t in page.request.get("/api/tiers").json() if t["name"] == "archive")
    own_price = archive_tier["price_ref"]
    r = page.request.patch(f"/api/tiers/{archive_tier['id']}", headers=csrf,
                           data={"price_ref": {"catalog": "aws-us-east-1-2026", "storage_class": "GLACIER"}})
    assert r.ok, r.text()
    try:
        _spend_view(page, s3, month, artifacts)
    finally:
        page.request.patch(f"/api/tiers/{archive_tier['id']}", headers=csrf, data={"price_ref": own_price})


def _spend_view(page: Page, s3: Any, month: str, artifacts: Path) -> None:

    def line_of(bucket: str) -> dict[str, Any]:
        answer = page.request.get(f"/api/spend?month={month}&group_by=bucket").json()
        empty = {"read_requests": 0, "write_requests": 0, "head_requests": 0, "list_requests": 0,
                 "other_requests": 0, "restore_requests": 0}
        return next((g for g in answer["groups"] if g["key"] == bucket), empty)

    before, archive_before = line_of("belle2-raw"), line_of("telescope-archive")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="belle2-raw")["Contents"]]
    assert len(keys) == 12  # the demo seed's run
    read = sum(len(s3.get_object(Bucket="belle2-raw", Key=k)["Body"].read()) for k in keys)
    for k in keys[:3]:
        s3.head_object(Bucket="belle2-raw", Key=k)
    s3.put_object(Bucket="belle2-raw", Key="e2e/spend-check", Body=b"s" * (1 << 20))
    s3.delete_object(Bucket="belle2-raw", Key="e2e/spend-check")  # its bytes still bill up to now
    archived = s3.list_objects_v2(Bucket="telescope-archive")["Contents"][0]["Key"]
    s3.restore_object(Bucket="telescope-archive", Key=archived,
                      RestoreRequest={"Days": 1, "GlacierJobParameters": {"Tier": "Expedited"}})

    def metered(line: dict[str, Any], archive: dict[str, Any]) -> bool:
        return (line["read_requests"] >= before["read_requests"] + 12
                and line["write_requests"] >= before["write_requests"] + 1
                and line["head_requests"] >= before["head_requests"] + 3
                and line["list_requests"] >= before["list_requests"] + 1
                and line["other_requests"] >= before["other_requests"] + 1
                and archive["restore_requests"] >= archive_before["restore_requests"] + 1)

    # gateways write their counters every 2 s
    deadline = time.monotonic() + 30
    line, archive = line_of("belle2-raw"), line_of("telescope-archive")
    while time.monotonic() < deadline and not metered(line, archive):
        time.sleep(0.5)
        line, archive = line_of("belle2-raw"), line_of("telescope-archive")
    assert line["read_requests"] - before["read_requests"] == 12, line
    assert line["write_requests"] - before["write_requests"] == 1, line
    assert line["head_requests"] - before["head_requests"] == 3, line
    assert line["list_requests"] - before["list_requests"] == 1, line
    assert line["other_requests"] - before["other_requests"] == 1, line  # the DELETE
    assert line["read_bytes"] >= read
    assert line["catalogs"] == ["onprem-example-2026"]  # the demo's posix tiers are priced as on-premises
    # the Expedited restore of one archived object: its request and per-GiB fee, priced from the tier's catalog
    assert archive["restore_requests"] - archive_before["restore_requests"] == 1, archive
    assert archive["restores"] > 0

    page.get_by_role("link", name="Spend", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Spend")).to_be_visible()
    table = page.get_by_role("table", name=f"Spend in {month} by bucket")
    row = table.get_by_role("row").filter(has_text="belle2-raw")
    expect(row).to_contain_text(f"{line['read_requests']} GET")
    expect(row).to_contain_text(f"{line['head_requests']} HEAD")
    expect(row).to_contain_text("onprem-example-2026")
    # a table too narrow for every column folds the rest (restores among them) into each row's details
    more = table.get_by_role("button", name=re.compile(r"^More about .*telescope-archive"))
    if more.count():
        more.click()
    expect(table.get_by_role("row").filter(has_text=f"{archive['restore_requests']} restored")).to_have_count(1)
    expect(page.get_by_text("Forecast to month end")).to_be_visible()
    plan = page.get_by_role("table", name="The plan beside the actual spend")
    expect(plan).to_contain_text("belle2-raw")
    # no usage saved as the archive bucket's plan: it plans storage only, and its restore is not in the plan
    archive_row = plan.get_by_role("row").filter(has_text="telescope-archive")
    expect(archive_row).to_contain_text("no usage planned: storage only")
    expect(archive_row).to_contain_text("restores")
    expect(archive_row).to_contain_text("not in the plan (no usage planned: storage only)")

    # the bucket's plan, saved in the browser: a value the server refuses is shown at its field, then a plan of
    # 1 GiB of Expedited restores a month is priced with the tier's catalog in the plan column
    def planned(bucket: str) -> dict[str, Any]:
        answer = page.request.get(f"/api/spend?month={month}&group_by=bucket").json()
        return next(p for p in answer["planned"] if p["bucket"] == bucket)

    storage_only = planned("telescope-archive")
    assert storage_only["plan"] is None and storage_only["planned"] == storage_only["planned_storage"]
    planned_cell = archive_row.get_by_role("cell").nth(1)
    before_text = planned_cell.inner_text()
    archive_row.get_by_role("button", name="Edit plan of telescope-archive").click()
    dialog = page.get_by_role("dialog", name="Plan for telescope-archive")
    reads = dialog.get_by_label("Reads (GiB / month)")
    reads.fill("10000000000000")  # beyond the 10^12 GiB the API takes: its 422 names the field
    dialog.get_by_role("button", name="Save plan").click()
    expect(reads).to_have_attribute("aria-invalid", "true")
    expect(dialog.get_by_role("alert")).to_contain_text("less than or equal to")
    shoot(page, artifacts, "spend-plan-refused")
    reads.fill("0")
    dialog.get_by_label("Restores (GiB / month)").fill("1")
    dialog.get_by_label("Restore speed").select_option("expedited")
    dialog.get_by_role("button", name="Save plan").click()
    expect(dialog).to_be_hidden()
    expect(archive_row).to_contain_text("1 GiB restored (expedited)")
    expect(planned_cell).not_to_have_text(before_text)
    with_plan = planned("telescope-archive")
    assert with_plan["plan"] == {"reads_gib": 0, "read_requests": 0, "write_requests": 0, "restores_gib": 1,
                                 "restore_speed": "expedited", "priced_as": None, "restore_requests": None,
                                 "scenario": None}  # usage typed in, not a saved scenario
    # us-east-1 2026 Expedited: 0.03 $/GiB and 10 $ per 1,000 requests, then the copy for 7 days
    assert with_plan["planned"] >= storage_only["planned_storage"] + 0.03 + 0.01
    for reason in with_plan["reasons"]:  # compared with what was planned now, not "not in the plan"
        assert not reason.startswith("restores") or "planned at expedited speed" in reason, reason
    shoot(page, artifacts, "spend-plan-saved")
    # removed again in the browser: storage only, as the other tests expect the demo seed
    archive_row.get_by_role("button", name="Edit plan of telescope-archive").click()
    dialog.get_by_role("button", name="Remove plan").click()
    expect(dialog).to_be_hidden()
    expect(archive_row).to_contain_text("no usage planned: storage only")
    assert planned("telescope-archive")["plan"] is None
    shoot(page, artifacts, "spend-by-bucket")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(table).to_be_visible()
    # the charts follow a new width by ResizeObserver, a frame or two after it: wait for the layout to settle
    # (a page still wider after 5 s fails here), then check it
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function("() => document.documentElement.scrollWidth <= 391", timeout=5000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1  # no sideways scrolling of the page
    shoot(page, artifacts, "spend-by-bucket-390")
    page.set_viewport_size({"width": 1280, "height": 800})

    page.get_by_label("Group by").select_option("tier")
    expect(page.get_by_role("table", name=f"Spend in {month} by tier")).to_contain_text("hot-disk")

    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.startswith(f"tierpilot spend {month}") and "hot-disk" in text

    # per user (research groups recharge their projects): the demo seed's buckets are the demo user's
    by_user = page.request.get(f"/api/spend?month={month}&group_by=user").json()
    demo = next(g for g in by_user["groups"] if g["key"] == "demo")
    assert demo["read_requests"] >= line["read_requests"] and demo["restore_requests"] >= 1
    page.get_by_label("Group by").select_option("user")
    users = page.get_by_role("table", name=f"Spend in {month} by user")
    expect(users.get_by_role("cell", name="demo", exact=True)).to_be_visible()
    expect(users.get_by_role("row").filter(has_text="demo")).to_contain_text(f"{demo['read_requests']} GET")
    # the last months as bars stacked by component: this month's requests and restore at least (the seed's few MiB
    # stored for minutes cost less than the millionth of a dollar the answer rounds to)
    chart = page.get_by_role("img", name="Stacked bars of the cost of the last months")
    expect(chart.locator(".recharts-bar-rectangle").first).to_be_visible()
    expect(chart.locator(".recharts-legend-wrapper")).to_contain_text("Requests")
    expect(chart.locator(".recharts-legend-wrapper")).to_contain_text("Restores")

    # the printable monthly statement: the controls go, a statement line and the tables stay
    page.emulate_media(media="print")
    expect(page.get_by_text(f"Statement for {month}, by user")).to_be_visible()
    expect(page.get_by_label("Group by")).to_be_hidden()
    expect(page.get_by_role("button", name="Print statement")).to_be_hidden()
    expect(page.get_by_role("button", name="Edit plan of telescope-archive")).to_be_hidden()
    expect(users).to_be_visible()
    expect(page.get_by_role("table", name="The plan beside the actual spend")).to_be_visible()
    shoot(page, artifacts, "spend-statement-print")
    page.emulate_media(media="screen")
