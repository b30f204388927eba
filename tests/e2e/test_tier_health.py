"""Tier health in a real browser: Settings › Tiers shows a real unreachable tier failing with its reason, the Overview
counts the tiers that answer."""

from __future__ import annotations

import secrets
import socket
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def test_admin_sees_which_tiers_answer_and_why_one_does_not(
    page: Page, new_context: NewContext, product: Product, artifacts: Path
) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    name, port = f"unreachable-{secrets.token_hex(3)}", _closed_port()
    created = page.request.post("/api/tiers", headers=csrf, data={
        "name": name, "driver": "s3",
        "config": {"endpoint_url": f"http://127.0.0.1:{port}", "bucket": "cold-data", "access_key_id": "AK",
                   "secret_access_key": "e2e-secret"}})
    assert created.status == 201, created.text()
    try:
        # tiers other tests left may fail too: the count is the API's, and ours is among the failing
        health = page.request.get("/api/tiers/health").json()
        down = [h["name"] for h in health if not h["ok"]]
        assert name in down
        page.goto("/")  # the Overview's Tiers card counts the tiers that answer
        expect(page.get_by_text(f"{len(health) - len(down)} of {len(health)} answer")).to_have_attribute(
            "title", f"no answer: {', '.join(down)}", timeout=20_000)

        page.get_by_role("link", name="Settings").click()
        tiers = page.get_by_role("region", name="Tiers", exact=True)
        failing = tiers.get_by_role("row").filter(has_text=name)
        expect(failing).to_contain_text("no answer", timeout=20_000)
        # the reason, naming where it could not connect
        expect(failing.get_by_title(f'Could not connect to the endpoint URL: "http://127.0.0.1:{port}/cold-data"'))\
            .to_be_visible()
        expect(tiers.get_by_role("row").filter(has_text="hot-disk")).to_contain_text("answers")

        with page.expect_response(lambda r: r.url.endswith("/api/tiers/health") and r.status == 200):
            tiers.get_by_role("button", name="Check now").click()
        expect(failing).to_contain_text("no answer")
        failing.scroll_into_view_if_needed()
        shoot(page, artifacts, "desktop-settings-tier-health")

        narrow = new_context(NARROW).new_page()
        sign_in(narrow, product.admin_user, product.admin_password)
        narrow.goto("/settings#tiers")
        narrow_tiers = narrow.get_by_role("region", name="Tiers", exact=True)
        narrow_failing = narrow_tiers.get_by_role("row").filter(has_text=name)
        expect(narrow_failing).to_contain_text("no answer", timeout=20_000)
        expect(narrow_failing.get_by_text("Could not connect to the endpoint URL")).to_be_visible()
        narrow_failing.scroll_into_view_if_needed()
        shoot(narrow, artifacts, "narrow-settings-tier-health")
    finally:
        tier_id = next(t["id"] for t in page.request.get("/api/tiers").json() if t["name"] == name)
        assert page.request.delete(f"/api/tiers/{tier_id}", headers=csrf).status == 204
