"""The Cost planner's "Save as bucket plan" in a real browser against `tierpilot up`: a member saves the scenario
being modelled as the plan of one of their own buckets (the only ones offered), a value the API refuses shows at
its field, and the saved plan is what the Spend view shows beside the actual."""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def test_a_member_saves_the_modelled_scenario_as_their_buckets_plan(page: Page, new_context: NewContext,
                                                                     product: Product, artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    tag = secrets.token_hex(4)
    member, password, bucket = f"planner-{tag}", f"planner-password-{tag}", f"e2e-plan-{tag}"
    answer = page.request.post("/api/users", headers=csrf, data={"username": member, "password": password})
    assert answer.status == 201, answer.text()

    mine = new_context().new_page()
    sign_in(mine, member, password)
    member_csrf = {"X-CSRF-Token": next(c["value"] for c in mine.context.cookies()
                                        if c["name"] == "tierpilot_csrf")}
    assert mine.request.post("/api/buckets", headers=member_csrf, data={"name": bucket}).status == 201

    mine.get_by_role("link", name="Cost planner").click()
    expect(mine.get_by_role("heading", level=1, name="Cost planner")).to_be_visible()
    form = mine.get_by_role("form", name="What-if scenario")
    form.get_by_label("Price catalog").select_option("aws-us-east-1-2026")
    form.get_by_label("Stored volume").fill("200")
    form.get_by_label("Unit").select_option("GiB")
    form.get_by_label("Objects").fill("1000")
    form.get_by_label("Full reads per month").fill("2")
    expect(mine.get_by_role("heading", name="Monthly cost against access frequency")).to_be_visible(timeout=30_000)

    mine.get_by_role("button", name="Save as bucket plan…").click()
    dialog = mine.get_by_role("dialog", name="Save as a bucket's plan")
    choice = dialog.get_by_label("Bucket", exact=True)
    # only the member's own bucket: the demo seed's and the admin's are not theirs to plan
    expect(choice.locator("option")).to_have_text(["Choose a bucket…", bucket])
    reads = dialog.get_by_label("Reads (GiB / month)")
    expect(reads).to_have_value("400")  # two full reads of 200 GiB
    expect(dialog.get_by_label("GET-class requests / month")).to_have_value("2000")
    choice.select_option(bucket)
    expect(dialog.get_by_text(f"{bucket} has no plan yet: it plans storage only.")).to_be_visible()

    # on a phone's width the dialog and its fields fit: nothing scrolls sideways. The dialog is taller than the
    # screen there: its body scrolls, its title and its Save stay in view without scrolling
    mine.set_viewport_size(NARROW)
    mine.wait_for_function("() => document.documentElement.scrollWidth <= 391", timeout=5000)
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= NARROW["width"] + 1
    assert box["y"] >= 0 and box["y"] + box["height"] <= NARROW["height"] + 1
    mine.screenshot(path=str(artifacts / "planner-bucket-plan-390.png"))
    expect(dialog.get_by_role("button", name="Save plan")).to_be_in_viewport(ratio=1)
    expect(dialog.get_by_role("heading")).to_be_in_viewport(ratio=1)
    body = dialog.locator(".ui-dialog__body")
    assert body.evaluate("b => b.scrollHeight > b.clientHeight")  # the body, not the page, holds the rest
    reads.scroll_into_view_if_needed()
    expect(reads).to_be_in_viewport()
    expect(dialog.get_by_role("button", name="Save plan")).to_be_in_viewport(ratio=1)
    mine.set_viewport_size(DESKTOP)

    reads.fill("10000000000000")  # beyond the 10^12 GiB the plans API takes: its 422 names the field
    dialog.get_by_role("button", name="Save plan").click()
    expect(reads).to_have_attribute("aria-invalid", "true")
    expect(dialog.get_by_role("alert")).to_contain_text("less than or equal to")
    shoot(mine, artifacts, "planner-bucket-plan-refused")

    reads.fill("400")
    dialog.get_by_role("button", name="Save plan").click()
    saved = mine.get_by_role("dialog", name="Plan saved")
    expect(saved.get_by_role("status")).to_contain_text(f"Saved as the plan of {bucket}: 400 GiB read, 2,000 GET")
    shoot(mine, artifacts, "planner-bucket-plan-saved")
    plan = mine.request.get(f"/api/spend/plans/{bucket}").json()
    assert (plan["reads_gib"], plan["read_requests"], plan["updated_by"]) == (400, 2000, member)

    saved.get_by_role("link", name="Open Spend").click()
    expect(mine.get_by_role("heading", level=1, name="Spend")).to_be_visible()
    beside = mine.get_by_role("table", name="The plan beside the actual spend")
    expect(beside.get_by_role("row").filter(has_text=bucket)).to_contain_text(
        re.compile(r"400 GiB read, 2,000 GET"))
    month = datetime.now(UTC).strftime("%Y-%m")
    assert [p["bucket"] for p in mine.request.get(f"/api/spend?month={month}&group_by=bucket").json()["planned"]] \
        == [bucket]
    shoot(mine, artifacts, "planner-bucket-plan-in-spend")
