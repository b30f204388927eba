"""Reservations in a real browser: set the capacity, book a window picked on the timeline, watch the
live availability change, open the detail page with its snippets, cancel."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e

BUCKET = "e2e-reserved"


def test_book_through_the_timeline_see_availability_update_and_cancel(page: Page, product: Product,
                                                                      artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    # the form offers only buckets that exist
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    created = page.request.post("/api/buckets", headers=csrf, data={"name": BUCKET})
    assert created.status == 201, created.text()
    page.goto("/reservations")  # a fresh load, so the bucket list includes it
    expect(page.get_by_role("heading", level=1, name="Reservations")).to_be_visible()

    capacity = page.get_by_role("form", name="Gateway capacity")
    capacity.get_by_label("Read capacity (MB/s)").fill("300")
    capacity.get_by_label("Write capacity (MB/s)").fill("150")
    capacity.get_by_label("Never bookable (%)").fill("10")
    capacity.get_by_role("button", name="Save capacity").click()
    expect(capacity.get_by_role("status")).to_have_text("Saved.")
    expect(page.get_by_role("img", name="Read: capacity 300 MB/s, bookable 270 MB/s")).to_be_visible()

    form = page.get_by_role("form", name="Book a reservation")
    start_field = form.get_by_label("Start (local time)")
    before = start_field.input_value()
    # a click on the right half of the one-day read lane picks a slot later today or tomorrow
    slots = page.get_by_test_id("timeline-read-slots")
    box = slots.bounding_box()
    assert box is not None
    slots.click(position={"x": box["width"] * 0.75, "y": box["height"] / 2})
    expect(start_field).not_to_have_value(before)
    picked = start_field.input_value()

    form.get_by_label("Bucket").select_option(BUCKET)
    form.get_by_label("Rate (MB/s)").fill("200")
    availability = page.get_by_test_id("availability")
    expect(availability).to_contain_text("Fits.")
    expect(availability.get_by_test_id("max-rate")).to_have_text("270 MB/s")
    shoot(page, artifacts, "reservations-before-booking")

    form.get_by_role("button", name="Book reservation").click()
    booked = page.get_by_role("region", name="Booked")
    expect(booked).to_contain_text(f"Booked 200 MB/s of read on {BUCKET}")
    expect(booked.get_by_text("X-Tierpilot-Reservation").first).to_be_visible()
    reservation_id = booked.locator('code[data-field^="Reservation id"]').inner_text()
    assert reservation_id.startswith("rsv_")
    assert start_field.input_value() == picked  # the form keeps the window: availability is re-asked

    # the same window now has 70 MB/s free: 200 no longer fits, and the earliest fitting window is offered
    expect(availability).to_contain_text("Does not fit.")
    expect(availability.get_by_test_id("max-rate")).to_have_text("70 MB/s")
    expect(availability.get_by_role("button", name="Use that window")).to_be_visible()
    # what cannot fit cannot be sent, and there is one way to the earliest window
    expect(form.get_by_role("button", name="Book reservation")).to_be_disabled()
    expect(form.get_by_role("button", name="Move to the earliest window", exact=False)).to_have_count(0)
    bar = page.get_by_role("button", name=f"Reservation {BUCKET} · 200 MB/s, booked")
    expect(bar).to_be_visible()
    row = page.get_by_role("row").filter(has_text=BUCKET)
    expect(row).to_contain_text("booked")
    shoot(page, artifacts, "reservations-booked")

    # the detail page: booked rate, snippets for every client that can send the header with downloads
    row.get_by_role("link", name=BUCKET).click()
    expect(page.get_by_role("heading", level=1, name=f"{BUCKET}: 200 MB/s read")).to_be_visible()
    page.get_by_role("tab", name="s3cmd").click()
    expect(page.get_by_role("tabpanel")).to_contain_text("s3cmd cannot send a header with downloads")
    shoot(page, artifacts, "reservation-detail-s3cmd-read")
    page.set_viewport_size(NARROW)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the reservation page scrolls sideways by {overflow}px at 390px"
    shoot(page, artifacts, "reservation-detail-narrow")
    page.set_viewport_size(DESKTOP)
    for client in ("boto3", "rclone", "tierpilot"):
        page.get_by_role("tab", name=client).click()
        expect(page.get_by_role("tabpanel")).to_contain_text(reservation_id)
    expect(page.get_by_role("tabpanel")).to_contain_text(f"tierpilot cp --endpoint {product.gateway_url}")
    shoot(page, artifacts, "reservation-detail")
    page.get_by_role("link", name="All reservations").click()

    row = page.get_by_role("row").filter(has_text=BUCKET)
    row.get_by_role("button", name="Cancel").click()
    dialog = page.get_by_role("alertdialog")
    dialog.get_by_role("button", name="Cancel reservation").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("row").filter(has_text=BUCKET)).to_have_count(0)
    expect(bar).to_have_count(0)

    # the window is free again
    form.get_by_label("Bucket").select_option(BUCKET)
    form.get_by_label("Rate (MB/s)").fill("200")
    form.get_by_label("Start (local time)").fill(picked)
    expect(availability).to_contain_text("Fits.")
    expect(availability.get_by_test_id("max-rate")).to_have_text("270 MB/s")
    page.get_by_label("Show").select_option("cancelled")
    expect(page.get_by_role("row").filter(has_text=BUCKET)).to_contain_text("cancelled")
    shoot(page, artifacts, "reservations-cancelled")


def test_detail_page_charts_achieved_throughput_metered_by_the_gateway(page: Page, product: Product,
                                                                        artifacts: Path) -> None:
    """Reads through the gateway with the reservation header show up, rolled up by the worker, as the
    achieved line of the detail page's chart."""
    import time
    import uuid
    from datetime import UTC, datetime, timedelta

    import boto3

    sign_in(page, product.admin_user, product.admin_password)
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    key = page.request.post("/api/keys", headers=csrf).json()
    s3 = boto3.client("s3", endpoint_url=product.gateway_url, aws_access_key_id=key["access_key_id"],
                      aws_secret_access_key=key["secret_access_key"], region_name="us-east-1")
    bucket = f"e2e-metered-{uuid.uuid4().hex[:6]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="data", Body=b"m" * (8 << 20))
    start = datetime.now(UTC) - timedelta(seconds=5)
    booked = page.request.post("/api/reservations", headers=csrf, data={
        "bucket": bucket, "direction": "read", "rate_mbps": 20, "start": start.isoformat(),
        "end": (start + timedelta(minutes=10)).isoformat()})
    assert booked.status == 201, booked.text()
    rid = booked.json()["id"]

    def add_header(params: dict[str, object], **_: object) -> None:
        params["headers"][  # type: ignore[index]
            "X-Tierpilot-Reservation"] = rid

    s3.meta.events.register("before-call.s3", add_header)
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:
        got = s3.get_object(Bucket=bucket, Key="data")
        assert got["ResponseMetadata"]["HTTPHeaders"]["x-tierpilot-reservation-status"] == "active"
        got["Body"].read()

    page.goto(f"/reservations/{rid}")
    expect(page.get_by_role("heading", level=1, name=f"{bucket}: 20 MB/s read")).to_be_visible()
    # the worker rolls metering up every 5 s and the page refetches every 5 s while active
    moved = page.get_by_text("s with traffic")
    expect(moved).not_to_have_text("0 s with traffic", timeout=45_000)
    chart = page.get_by_role("figure", name="Achieved against booked throughput in MB/s, 1 s per point")
    expect(chart.locator(".recharts-line-curve")).to_have_count(1, timeout=15_000)
    expect(page.get_by_text("Live: the gateway's metering")).to_be_visible()
    shoot(page, artifacts, "reservation-detail-live")
