"""The Projects and Integrity pages in a real browser, as the demo admin: the admin's projects with their members
and quota bars, and each bucket's fixity with its CSV link."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import shoot, sign_in

pytestmark = pytest.mark.e2e


def test_admin_opens_projects_and_integrity_from_the_navigation(page: Page, product: Product,
                                                                 artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("link", name="Projects").click()
    expect(page.get_by_role("heading", level=1, name="Projects")).to_be_visible()
    expect(page.get_by_role("button", name="New project")).to_be_visible()
    projects = page.request.get("/api/projects").json()
    if projects:
        expect(page.get_by_role("region", name=projects[0]["name"])).to_be_visible()
    shoot(page, artifacts, "projects")

    page.get_by_role("link", name="Integrity").click()
    expect(page.get_by_role("heading", level=1, name="Integrity")).to_be_visible()
    expect(page.get_by_role("link", name="All buckets' fixity log (CSV)")).to_have_attribute(
        "href", "/api/integrity/fixity.csv")
    buckets = page.request.get("/api/integrity/buckets").json()
    if buckets:
        card = page.get_by_role("region", name=buckets[0]["bucket"])
        expect(card.get_by_role("link", name="Fixity log (CSV)")).to_be_visible()
    shoot(page, artifacts, "integrity")
