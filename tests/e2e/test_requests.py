"""The Requests view in a real browser against `tierpilot up`: a slow traced PUT (its body trickled over more than
a second, sent with X-Tierpilot-Trace: 1) is found by the "slower than" filter in its owner's list, and its
phases open as a waterfall that adds up to the request's time (1280 and 390 px). Benchmark runs from the New
run form: put at 1 KiB and 1 MiB x 1/4/16/64 and a mixed put/get run, each charted."""

from __future__ import annotations

import http.client
import re
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config as BotoConfig
from playwright.sync_api import expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


TRICKLE_PARTS, TRICKLE_PAUSE_S = 6, 0.25  # the body's parts and the pause before each: a PUT of 1.5 s and more


def _slow_traced_put(product: Product, key: dict[str, Any], bucket: str) -> str:
    """A traced PUT whose 4 MiB body arrives in parts over 1.5 s (a slow client): its transfer phase is slow."""
    s3 = boto3.client("s3", endpoint_url=product.gateway_url, aws_access_key_id=key["access_key_id"],
                      aws_secret_access_key=key["secret_access_key"], region_name="us-east-1",
                      config=BotoConfig(retries={"max_attempts": 1}, signature_version="s3v4"))
    s3.create_bucket(Bucket=bucket)
    url = urlsplit(s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "waterfall.bin"}))
    part = b"w" * ((4 << 20) // TRICKLE_PARTS)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    conn.putrequest("PUT", f"{url.path}?{url.query}")
    conn.putheader("Content-Length", str(len(part) * TRICKLE_PARTS))
    conn.putheader("X-Tierpilot-Trace", "1")
    conn.endheaders()
    for _ in range(TRICKLE_PARTS):
        time.sleep(TRICKLE_PAUSE_S)
        conn.send(part)
    answer = conn.getresponse()
    answer.read()
    conn.close()
    assert answer.status == 200, answer.status
    return str(answer.getheader("x-amz-request-id"))


def _ms(text: str) -> float:
    """A time as the waterfall prints it ("12.34 ms", "87 ms", "1.52 s") in ms."""
    value, unit = re.fullmatch(r"\s*([\d.]+) (ms|s)\s*", text).groups()  # type: ignore[union-attr]
    return float(value) * (1000 if unit == "s" else 1)


def test_a_slow_traced_put_is_found_by_its_time_and_its_phases_add_up(new_context: NewContext, product: Product,
                                                                      artifacts: Path) -> None:
    admin = new_context(DESKTOP).new_page()
    sign_in(admin, product.admin_user, product.admin_password)
    csrf = next(c["value"] for c in admin.context.cookies() if c["name"] == "tierpilot_csrf")
    name, password = f"tracer{uuid.uuid4().hex[:6]}", "tracer-password-1"
    created = admin.request.post("/api/users", data={"username": name, "password": password},
                                 headers={"X-CSRF-Token": csrf})
    assert created.status == 201, created.text()
    bucket = f"trace-{uuid.uuid4().hex[:8]}"
    request_id = _slow_traced_put(product, created.json()["access_key"], bucket)

    for size, viewport in (("desktop", DESKTOP), ("narrow", NARROW)):
        page = new_context(viewport).new_page()
        sign_in(page, name, password)
        page.goto("/requests")
        expect(page.get_by_role("heading", level=1, name="Requests")).to_be_visible()
        page.get_by_label("Slower than (ms)").fill(str(int(TRICKLE_PARTS * TRICKLE_PAUSE_S * 1000)))
        page.get_by_role("button", name="Apply").click()
        open_button = page.get_by_role("button", name=f"Phases of {request_id}")
        expect(open_button).to_be_visible(timeout=20_000)  # traces are flushed every 2 s, the list polls every 5 s
        open_button.click()
        phases = page.get_by_role("list", name=f"Phases of request {request_id}")
        expect(phases).to_contain_text(re.compile("headers.*auth.*lookup.*admission.*transfer.*commit.*response",
                                                  re.S | re.I))
        summary = page.get_by_text(re.compile(r"PUT object.*answered 200 in"))
        expect(summary).to_contain_text("most of it in transfer")
        total = _ms(re.search(r"answered 200 in ([\d.]+ m?s)", summary.inner_text()).group(1))  # type: ignore[union-attr]
        shown = [_ms(re.sub(r"\s*\d+ %$", "", t))  # "87 ms 6 %": the time without its share
                 for t in phases.locator(".requests-waterfall__time").all_inner_texts()]
        assert total >= TRICKLE_PARTS * TRICKLE_PAUSE_S * 1000
        assert abs(sum(shown) - total) <= 0.05 * total, (shown, total)  # the phases add up to the request
        shoot(page, artifacts, f"{size}-requests-waterfall")
        page.goto("/")
        expect(page.get_by_role("region", name="Money and work")).to_contain_text("Restores")
        live = page.get_by_role("region", name="Live activity")
        expect(live).to_contain_text("Reservations active now")
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
    form.get_by_label("Object sizes (bytes)").fill("1024,1048576")
    form.get_by_label("Concurrency").fill("1,4,16,64")
    form.get_by_label("Seconds per point").fill("0.3")
    form.get_by_role("button", name="Start run").click()
    runs = page.get_by_role("region", name="Your runs")
    expect(runs.get_by_role("row").filter(has_text="put ·")).to_contain_text("done", timeout=120_000)
    expect(page.get_by_text("Throughput (ops/s) with failures and retries, by concurrency").first).to_be_visible()
    expect(page.get_by_role("region", name=re.compile(r"put of 1 MiB"))).to_be_visible()
    charts = page.get_by_role("region", name=re.compile(r"put of 1 KiB"))
    charts.screenshot(path=str(artifacts / "desktop-benchmarks-run-charts.png"), animations="disabled")
    # the viewport, not the full page: a page of 8-point charts took longer than 15 s to capture at load 10
    page.screenshot(path=str(artifacts / "desktop-benchmarks-run.png"), animations="disabled")

    # a workload other than put: mixed puts and gets by ratio, charted with its phases
    form.get_by_label("Workload").select_option("mixed")
    form.get_by_label("Ratios").fill("put=1,get=3")
    form.get_by_label("Object sizes (bytes)").fill("1024")
    form.get_by_label("Concurrency").fill("1,4")
    form.get_by_role("button", name="Start run").click()
    expect(runs.get_by_role("row").filter(has_text="mixed ·")).to_contain_text("done", timeout=60_000)
    mixed = page.get_by_role("region", name=re.compile(r"mixed of 1 KiB"))
    expect(mixed).to_contain_text("Where the time went")
    expect(mixed.locator(".recharts-line")).not_to_have_count(0)
    mixed.screenshot(path=str(artifacts / "desktop-benchmarks-mixed-run-charts.png"), animations="disabled")
    page.set_viewport_size(NARROW)
    mixed.screenshot(path=str(artifacts / "narrow-benchmarks-mixed-run-charts.png"), animations="disabled")
    page.screenshot(path=str(artifacts / "narrow-benchmarks-run.png"), animations="disabled")

