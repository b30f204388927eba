"""The bucket settings page in a real browser against `tierpilot up`: reached from the Browser, versioning
switched on, CORS rules saved (a bad rule refused by the server with the rule named) and then answering the
gateway's preflight, object lock explained for a bucket made without it; screenshots at 1280 and 390 px."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def test_settings_of_a_bucket_versioning_and_cors(page: Page, product: Product, artifacts: Path,
                                                  new_context: NewContext) -> None:
    name = f"settings-{uuid.uuid4().hex[:8]}"
    origin = "https://portal.example.org"
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Browser", exact=True).click()
    page.get_by_role("button", name="New bucket").click()
    dialog = page.get_by_role("dialog", name="New bucket")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_role("button", name="Create bucket").click()
    expect(dialog).to_be_hidden()
    page.get_by_role("link", name="Bucket settings").click()
    expect(page.get_by_role("heading", level=1, name="Bucket settings")).to_be_visible()
    expect(page.get_by_label("Bucket", exact=True)).to_have_value(name)

    versioning = page.get_by_role("region", name="Versioning")
    expect(versioning).to_contain_text("Versioning is off")
    versioning.get_by_role("button", name="Enable").click()
    expect(versioning).to_contain_text("Versioning is enabled")
    expect(page.get_by_role("region", name="Object lock")).to_contain_text("cannot be turned on later")

    cors = page.get_by_role("region", name="CORS")
    editor = cors.get_by_label("Rules (JSON)")
    editor.fill('[{"origins": ["https://portal.example.org"], "methods": ["GET", "PATCH"]}]')
    cors.get_by_role("button", name="Save CORS rules").click()
    expect(cors.get_by_role("alert")).to_contain_text("rules[0].methods")
    preflight = {"Origin": origin, "Access-Control-Request-Method": "PUT"}
    assert httpx.options(f"{product.gateway_url}/{name}/upload.bin", headers=preflight, timeout=30).status_code == 403
    editor.fill('[{"origins": ["https://portal.example.org"], "methods": ["GET", "PUT"], "max_age": 600}]')
    cors.get_by_role("button", name="Save CORS rules").click()
    expect(cors).to_contain_text("1 rule")
    expect(cors.get_by_role("alert")).to_have_count(0)
    shoot(page, artifacts, "bucket-settings")

    # the gateway's cache of a bucket's rules lives 2 s: the preflight follows within it
    answer = None
    for _ in range(40):
        answer = httpx.options(f"{product.gateway_url}/{name}/upload.bin", headers=preflight, timeout=30)
        if answer.status_code == 200:
            break
        page.wait_for_timeout(250)
    assert answer is not None and answer.status_code == 200, answer.text if answer else ""
    assert answer.headers["access-control-allow-origin"] == origin
    assert answer.headers["access-control-max-age"] == "600"

    narrow = new_context(NARROW).new_page()
    sign_in(narrow, product.admin_user, product.admin_password)
    narrow.goto(f"/bucket-settings?bucket={name}")
    expect(narrow.get_by_role("region", name="CORS")).to_contain_text("1 rule")
    width = narrow.evaluate("document.documentElement.scrollWidth")
    assert width <= NARROW["width"], f"the page scrolls sideways at 390 px ({width} px wide)"
    shoot(narrow, artifacts, "bucket-settings-narrow")
