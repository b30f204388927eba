"""Restoring archived objects in a real browser against `tierpilot up` (its worker and beat do the polling):
select objects, see the cost preview, submit, watch the progress bar reach 100 %, download an object."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import shoot, sign_in

pytestmark = pytest.mark.e2e

BUCKET = "telescope-archive"  # the demo's GLACIER bucket on the offline tape tier (standard: 30 s)
PICKED = ["field-0003.root", "field-0007.root"]


def test_select_archived_objects_restore_with_cost_preview_and_download(
        page: Page, product: Product, artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.goto("/restores")
    expect(page.get_by_role("heading", level=1, name="Restores")).to_be_visible()
    page.get_by_role("button", name="New restore").click()

    picker = page.get_by_role("dialog", name="Choose objects to restore")
    # only buckets with archived objects are offered
    expect(picker.get_by_label("Bucket").locator("option")).to_have_text([re.compile(rf"^{BUCKET} \(10 objects")])
    picker.get_by_label("Bucket").select_option(BUCKET)
    picker.get_by_role("button", name="Open folder survey-2019/").click()
    picker.get_by_label("Filter by name").fill(PICKED[0])
    expect(picker.get_by_role("list", name="Contents of /survey-2019/").get_by_role("listitem")).to_have_count(1)
    picker.get_by_label("Filter by name").fill("")
    for name in PICKED:
        picker.get_by_label(name).check()
    shoot(page, artifacts, "restores-picker")
    picker.get_by_role("button", name="Preview restore of 2 selected").click()

    dialog = page.get_by_role("dialog", name="Restore archived objects")
    expect(dialog.get_by_test_id("restore-preview-summary")).to_contain_text("2 archived objects")
    # the demo archive is priced as on-premises tape (onprem-example-2026): the library recalls at one speed,
    # standard, for nothing per request or GiB; only the restored copy kept on disk costs a fraction of a cent
    for speed in ("expedited", "bulk"):
        expect(dialog.get_by_role("radio", name=re.compile(f"^{speed}"))).to_be_disabled()
        expect(dialog.get_by_text(f"archive offers no {speed} restores")).to_be_visible()
    expect(dialog.get_by_role("radio", name=re.compile("^standard"))).to_be_checked()
    expect(dialog.get_by_test_id("restore-cost-standard")).to_have_text(re.compile(r"^\$0\.0\d*$"))
    expect(dialog.get_by_text("requests and retrieval $0.00,")).to_have_count(3)
    expect(dialog.get_by_text("ready in ~30 s")).to_be_visible()
    dialog.get_by_label("Keep readable for (days)").fill("2")
    shoot(page, artifacts, "restores-preview")
    dialog.get_by_role("button", name="Restore 2 objects").click()

    progress = page.get_by_role("progressbar").first
    expect(progress).to_have_attribute("aria-valuemax", "2")
    expect(page.get_by_text("ready", exact=True).first).to_be_visible(timeout=90_000)
    expect(progress).to_have_attribute("aria-valuenow", "2", timeout=90_000)
    expect(page.get_by_text("100 %")).to_be_visible()
    shoot(page, artifacts, "restores-batch-ready")

    row = page.get_by_role("row").filter(has_text=PICKED[0])
    with page.expect_download() as download_info:
        row.get_by_role("link", name="Download").click()
    download = download_info.value
    path = download.path()
    assert path is not None
    data = Path(path).read_bytes()
    assert 256 * 1024 <= len(data) < 512 * 1024  # the demo object's size range

    # the same bytes through the API a script would use
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    direct = httpx.get(f"{product.url}/api/buckets/{BUCKET}/object/content",
                       params={"key": f"survey-2019/{PICKED[0]}"}, cookies=cookies, timeout=30)
    assert direct.status_code == 200 and direct.content == data

    page.get_by_role("link", name="← All restores").click()
    queued = page.get_by_role("row").filter(has_text=BUCKET).first
    expect(queued).to_contain_text("ready", timeout=10_000)
    expect(queued.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "2")
    # the in-app notice of the finished batch
    notices = page.get_by_role("region", name="Notifications")
    expect(notices.get_by_role("link", name=re.compile(r"Restore batch .* is ready"))).to_be_visible(timeout=20_000)
    shoot(page, artifacts, "restores-queue")
    notices.get_by_role("button", name="Mark all read").click()
    expect(notices.get_by_text("No unread notifications.")).to_be_visible()
