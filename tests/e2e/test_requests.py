"""The Requests view in a real browser against `tierpilot up`: a traced PUT sent with boto3 and
X-Tierpilot-Trace: 1 appears in its owner's list, and its phases open as a waterfall (1280 and 390 px)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig
from playwright.sync_api import expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def _traced_put(product: Product, key: dict[str, Any], bucket: str) -> str:
    s3 = boto3.client("s3", endpoint_url=product.gateway_url, aws_access_key_id=key["access_key_id"],
                      aws_secret_access_key=key["secret_access_key"], region_name="us-east-1",
                      config=BotoConfig(retries={"max_attempts": 1}))

    def trace(request: Any, **_kwargs: Any) -> None:
        request.headers["X-Tierpilot-Trace"] = "1"

    s3.meta.events.register("before-sign.s3", trace)
    s3.create_bucket(Bucket=bucket)
    put = s3.put_object(Bucket=bucket, Key="waterfall.bin", Body=b"w" * (4 << 20))
    return str(put["ResponseMetadata"]["RequestId"])


def test_a_traced_put_shows_its_phases_as_a_waterfall(new_context: NewContext, product: Product,
                                                      artifacts: Path) -> None:
    admin = new_context(DESKTOP).new_page()
    sign_in(admin, product.admin_user, product.admin_password)
    csrf = next(c["value"] for c in admin.context.cookies() if c["name"] == "tierpilot_csrf")
    name, password = f"tracer{uuid.uuid4().hex[:6]}", "tracer-password-1"
    created = admin.request.post("/api/users", data={"username": name, "password": password},
                                 headers={"X-CSRF-Token": csrf})
    assert created.status == 201, created.text()
    request_id = _traced_put(product, created.json()["access_key"], f"trace-{uuid.uuid4().hex[:8]}")

    for size, viewport in (("desktop", DESKTOP), ("narrow", NARROW)):
        page = new_context(viewport).new_page()
        sign_in(page, name, password)
        page.goto("/requests")
        expect(page.get_by_role("heading", level=1, name="Requests")).to_be_visible()
        open_button = page.get_by_role("button", name=f"Phases of {request_id}")
        expect(open_button).to_be_visible(timeout=20_000)  # traces are flushed every 2 s, the list polls every 5 s
        open_button.click()
        phases = page.get_by_role("list", name=f"Phases of request {request_id}")
        expect(phases).to_contain_text(re.compile("headers.*auth.*lookup.*admission.*transfer.*commit.*response",
                                                  re.S | re.I))
        expect(page.get_by_text(re.compile(r"PUT object.*answered 200 in"))).to_be_visible()
        shoot(page, artifacts, f"{size}-requests-waterfall")
        page.goto("/")
        live = page.get_by_role("region", name="Live activity")
        expect(live).to_contain_text("Restores in flight")
        expect(live).not_to_contain_text("Requests/s")  # installation-wide rates are for admins
        shoot(page, artifacts, f"{size}-overview-live-activity")
    admin.goto("/")
    expect(admin.get_by_role("region", name="Live activity")).to_contain_text("Requests/s")
    expect(admin.get_by_role("region", name="Live activity")).to_contain_text("MB/s", timeout=20_000)
    shoot(admin, artifacts, "desktop-overview-live-activity-admin")


def test_a_sweep_started_from_the_benchmarks_page_runs_on_the_worker_and_is_charted(
        new_context: NewContext, product: Product, artifacts: Path) -> None:
    admin = new_context(DESKTOP).new_page()
    sign_in(admin, product.admin_user, product.admin_password)
    csrf = next(c["value"] for c in admin.context.cookies() if c["name"] == "tierpilot_csrf")
    name, password = f"sweeper{uuid.uuid4().hex[:6]}", "sweeper-password-1"
    assert admin.request.post("/api/users", data={"username": name, "password": password},
                              headers={"X-CSRF-Token": csrf}).status == 201
    page = new_context(DESKTOP).new_page()
    sign_in(page, name, password)
    page.goto("/benchmarks")
    form = page.get_by_role("region", name="New run")
    form.get_by_label("Object sizes (bytes)").fill("1024,65536")
    form.get_by_label("Concurrency").fill("1,4")
    form.get_by_label("Seconds per point").fill("0.5")
    form.get_by_role("button", name="Start run").click()
    runs = page.get_by_role("region", name="Your runs")
    expect(runs.get_by_text("done", exact=True)).to_be_visible(timeout=90_000)
    expect(page.get_by_text("Throughput (ops/s) with failures and retries, by concurrency").first).to_be_visible()
    expect(page.get_by_role("region", name=re.compile(r"put of 64 KiB"))).to_be_visible()
    charts = page.get_by_role("region", name=re.compile(r"put of 1 KiB"))
    charts.screenshot(path=str(artifacts / "desktop-benchmarks-run-charts.png"), animations="disabled")
    shoot(page, artifacts, "desktop-benchmarks-run")
    page.set_viewport_size(NARROW)
    charts.screenshot(path=str(artifacts / "narrow-benchmarks-run-charts.png"), animations="disabled")
    shoot(page, artifacts, "narrow-benchmarks-run")

