"""Lifecycle rules in a real browser against `tierpilot up`: create a rule in the form, see what it would do
(the dry run's preview chart), save it, and find it in the rules the API (and so S3 clients) serve."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import shoot, sign_in

pytestmark = pytest.mark.e2e

BUCKET = "belle2-raw"  # the demo's hot bucket: 12 objects of 768 KiB or more, written at start-up


def test_create_a_rule_see_its_preview_and_save_it(page: Page, product: Product, artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Lifecycle", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Lifecycle")).to_be_visible()
    page.get_by_label("Bucket", exact=True).select_option(BUCKET)
    expect(page).to_have_url(re.compile(rf"bucket={BUCKET}"))
    rules = page.get_by_role("region", name=f"Rules of {BUCKET}")
    expect(rules.get_by_text("No rules")).to_be_visible()
    # when the workers act, and an admin's sweep at once
    sweeps = page.get_by_test_id("sweep-times")
    expect(sweeps).to_contain_text("The workers sweep every 5 min")
    # beat's first sweep comes one period after start: before it the page says so, after it gives both times
    expect(sweeps).to_contain_text(re.compile(r"No scheduled sweep has run yet|Last sweep started .+; next sweep at"))
    page.get_by_role("button", name=f"Sweep {BUCKET} now").click()
    expect(page.get_by_text("Sweep queued at")).to_be_visible()

    rules.get_by_role("button", name="Add rule").click()
    form = page.get_by_role("form", name="New rule")
    expect(form).to_contain_text("A 0-day rule therefore waits for the next midnight UTC")
    form.get_by_label("Rule ID").fill("raw-to-ia")
    form.get_by_label("Key prefix").fill("run-2026-11/")
    form.get_by_label("Transition 1: days after creation").fill("30")
    form.get_by_label("Transition 1: storage class").select_option("STANDARD_IA")
    form.get_by_role("button", name="Add transition").click()
    form.get_by_label("Transition 2: days after creation").fill("45")
    form.get_by_label("Transition 2: storage class").select_option("GLACIER")

    # the infrequent tier keeps objects 30 days at least: the server says why the second step is refused
    form.get_by_role("button", name="What would this rule do?").click()
    expect(form.get_by_role("alert")).to_contain_text("minimum storage duration 30 days")
    form.get_by_label("Transition 2: days after creation").fill("60")
    form.get_by_role("button", name="What would this rule do?").click()

    dry_run = form.get_by_role("region", name="Dry run of this rule")
    summary = dry_run.get_by_test_id("lifecycle-preview-summary")
    expect(summary).to_contain_text("Moves in 90 days")
    expect(summary.locator(".ui-stat__value").first).to_have_text("24")  # 12 objects, two steps each
    chart = dry_run.get_by_test_id("lifecycle-preview-chart")
    expect(chart).to_be_visible()
    expect(chart.locator(".recharts-bar-rectangle").first).to_be_visible()
    expect(chart.get_by_text(re.compile("to infrequent"))).to_be_visible()
    shoot(page, artifacts, "lifecycle-dry-run")

    form.get_by_role("button", name="Save rule").click()
    expect(form).to_be_hidden()
    row = rules.get_by_role("row").filter(has_text="raw-to-ia")
    expect(row).to_contain_text("prefix run-2026-11/")
    expect(row).to_contain_text("STANDARD_IA after 30 d → GLACIER after 60 d")
    preview = page.get_by_role("region", name=f"Next 90 days in {BUCKET}")
    expect(preview.get_by_test_id("lifecycle-preview-summary").locator(".ui-stat__value").first).to_have_text("24")
    shoot(page, artifacts, "lifecycle-saved")

    # the rule the form saved is the one the API, and the gateway's ?lifecycle, serve
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    stored = httpx.get(f"{product.url}/api/lifecycle/buckets/{BUCKET}/configuration", cookies=cookies,
                       timeout=30).json()
    [rule] = stored["rules"]
    assert rule["id"] == "raw-to-ia" and rule["filter"] == {"prefix": "run-2026-11/", "tag": None,
                                                           "object_size_greater_than": None,
                                                           "object_size_less_than": None, "and": None}
    assert [(t["days"], t["storage_class"]) for t in rule["transitions"]] == [(30, "STANDARD_IA"), (60, "GLACIER")]

    rules.get_by_role("button", name="Delete rule raw-to-ia").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Delete rule").click()
    expect(rules.get_by_text("No rules")).to_be_visible()
