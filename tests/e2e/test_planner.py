"""The Cost planner in a real browser: fill the what-if form, watch the break-even marker move with the
frequency range, save and share a scenario, download the CSV report, add a price catalog."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import shoot, sign_in
from tierpilot.pricing.catalogs import CATALOG_DIR

pytestmark = pytest.mark.e2e

IA_VS_S3 = '[data-testid="break-even-marker"][data-pair="STANDARD_IA|STANDARD"]'


def _settled_x(marker: Locator, other_than: float | None = None, timeout_s: float = 15) -> float:
    """The marker's x once the chart has stopped redrawing (and, if given, has left `other_than`)."""
    deadline = time.monotonic() + timeout_s
    last: float | None = None
    while time.monotonic() < deadline:
        # while the chart redraws the marker may be gone for a moment
        box = marker.bounding_box() if marker.count() == 1 else None
        x = box["x"] if box is not None else None
        if x is not None and x == last and (other_than is None or abs(x - other_than) > 5):
            return x
        last = x
        time.sleep(0.25)
    raise AssertionError(f"the break-even marker did not settle (last x={last}, before={other_than})")


def test_fill_form_move_break_even_save_share_and_download_csv(page: Page, product: Product, artifacts: Path,
                                                                 new_context: NewContext) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("link", name="Cost planner").click()
    expect(page.get_by_role("heading", level=1, name="Cost planner")).to_be_visible()

    form = page.get_by_role("form", name="What-if scenario")
    # a new planner opens on this installation's tiers and the catalog that prices them: the demo's tiers are
    # directories on this machine, priced as site costs (disk, tape) rather than as a cloud's classes
    expect(form.get_by_label("Price catalog")).to_have_value("onprem-example-2026")
    mine = page.get_by_role("list", name="Your tiers")
    for tier in ("hot-disk", "infrequent", "archive"):
        expect(mine.get_by_label(f"tier:{tier}", exact=True)).to_be_checked()
    form.get_by_label("Price catalog").select_option("aws-ap-northeast-1-2018")
    form.get_by_label("Stored volume", exact=True).fill("633")
    form.get_by_label("Unit").select_option("GiB")
    form.get_by_label("Objects").fill("1000")
    form.get_by_label("Full reads per month").fill("0.5")
    form.get_by_label("Downloads go to").select_option("same-region")

    marker = page.locator(IA_VS_S3)
    expect(marker).to_have_count(1)
    reads = float(marker.get_attribute("data-reads-per-month") or "nan")
    assert abs(reads - 0.60) <= 0.02  # S3 IA beats S3 below 0.60 full reads a month (catalog prices)
    expect(page.get_by_role("list", name="Break-even points")).to_contain_text(
        "STANDARD_IA is cheaper than STANDARD below 0.6")
    before = _settled_x(marker)
    shoot(page, artifacts, "planner-range-0.01-100")

    # on a log axis 0.6 sits 44 % along 0.01-100 but 39 % along 0.1-10: the marker moves left
    form.get_by_label("Frequency from").fill("0.1")
    form.get_by_label("Frequency to").fill("10")
    after = _settled_x(marker, other_than=before)
    assert after < before
    assert float(marker.get_attribute("data-reads-per-month") or "nan") == pytest.approx(reads)
    shoot(page, artifacts, "planner-range-0.1-10")

    form.get_by_label("Simulate moving data down the tiers with age").check()
    lifecycle = page.get_by_role("region", name="Lifecycle simulation")
    expect(lifecycle.get_by_text("Best transition days")).to_be_visible(timeout=30_000)
    form.get_by_label("Split the data across tiers").check()
    hybrid = page.get_by_role("region", name="Hybrid plan")
    # a part names its catalog as the catalog dropdown does, not by its internal id
    expect(hybrid.get_by_role("table")).to_contain_text("DISK, ONPREM local (2026-11-01)")
    shoot(page, artifacts, "planner-lifecycle-hybrid")

    page.get_by_label("Scenario name").fill("belle2 what-if")
    page.get_by_role("button", name="Save as new").click()
    saved = page.get_by_role("list", name="Saved scenarios").get_by_role("listitem").filter(has_text="belle2 what-if")
    expect(saved).to_have_count(1)

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export CSV").click()
    download = download_info.value
    assert download.suggested_filename == "belle2-what-if.csv"
    text = Path(download.path()).read_text()
    assert text.startswith("tierpilot cost report")
    assert "aws-ap-northeast-1-2018" in text and "STANDARD_IA,STANDARD,0.59994" in text

    saved.get_by_role("button", name="Share belle2 what-if").click()
    link = saved.locator('[data-field="Share link"]')
    expect(link).to_contain_text("/planner?shared=")
    url = link.inner_text().strip()

    # an admin adds a price catalog from a file; it is listed and offered at once
    data = yaml.safe_load((CATALOG_DIR / "aws-ap-northeast-1-2018.yaml").read_text())
    data.update(id="site-tokyo-2019", valid_from="2019-04-01")
    upload = artifacts / "site-tokyo-2019.yaml"
    upload.write_text(yaml.safe_dump(data))
    page.get_by_label("Catalog file").set_input_files(str(upload))
    catalogs = page.get_by_role("region", name="Price catalogs")
    expect(catalogs.get_by_role("cell", name="site-tokyo-2019")).to_be_visible()
    expect(form.get_by_label("Price catalog").locator("option", has_text="(2019-04-01)")).to_have_count(1)

    # another browser profile opens the shared link and sees the same scenario
    other = new_context().new_page()
    sign_in(other, product.admin_user, product.admin_password)
    other.goto(url.replace(product.url, ""))
    expect(other.get_by_text("Scenario “belle2 what-if”")).to_be_visible()
    expect(other.get_by_role("form", name="What-if scenario").get_by_label("Frequency from")).to_have_value("0.1")
    shoot(page, artifacts, "planner-saved")
