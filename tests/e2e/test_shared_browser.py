"""A bucket shared read-only in a real browser against `tierpilot up`: the owner grants another user read on
the Sharing API; that user's Browser lists the bucket apart ("Shared with you", the owner's name, read only),
opens its folders and downloads, offers no upload or delete, and the API refuses the writes all the same."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def test_a_reader_browses_a_bucket_shared_read_only(page: Page, new_context: NewContext, product: Product,
                                                    artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    tag = secrets.token_hex(4)
    bucket, reader, password = f"e2e-shared-{tag}", f"reader-{tag}", f"reader-password-{tag}"
    answer = page.request.post("/api/users", headers=csrf, data={"username": reader, "password": password})
    assert answer.status == 201, answer.text()
    assert page.request.post("/api/buckets", headers=csrf, data={"name": bucket}).status == 201
    answer = page.request.post(f"/api/buckets/{bucket}/objects", headers=csrf,
                               params={"key": "notes/readme.txt"}, data=b"shared notes")
    assert answer.status == 201, answer.text()
    answer = page.request.put(f"/api/buckets/{bucket}/sharing/users/{reader}", headers=csrf,
                              data={"access": "read"})
    assert answer.status == 200, answer.text()

    for viewport, name in ((DESKTOP, "desktop"), (NARROW, "narrow")):
        other = new_context(viewport).new_page()
        sign_in(other, reader, password)
        other.goto("/browser")
        shared = other.get_by_role("list", name="Shared with you")
        entry = shared.get_by_role("button", name=re.compile(bucket))
        expect(entry).to_contain_text(f"shared by {product.admin_user} · read only")
        entry.click()
        expect(other.get_by_text(f"Shared with you by {product.admin_user}: read only")).to_be_visible()
        table = other.get_by_role("table", name=f"Contents of {bucket}/")
        table.get_by_role("button", name=re.compile("notes")).click()
        other.get_by_role("checkbox", name="Select notes/readme.txt").check()
        expect(other.get_by_role("link", name="Download")).to_be_visible()
        for button in ("Upload files", "New folder", "Delete", "Delete bucket"):
            expect(other.get_by_role("button", name=button, exact=True)).to_have_count(0)
        expect(other.get_by_role("link", name="Bucket settings")).to_have_count(0)
        shoot(other, artifacts, f"browser-shared-read-only-{name}")

        # what the page offers is what the API allows: the download works, a write is refused
        download = other.request.get(f"/api/buckets/{bucket}/object/content", params={"key": "notes/readme.txt"})
        assert download.status == 200 and download.body() == b"shared notes"
        reader_csrf = {"X-CSRF-Token": next(c["value"] for c in other.context.cookies()
                                            if c["name"] == "tierpilot_csrf")}
        refused = other.request.post(f"/api/buckets/{bucket}/objects", headers=reader_csrf,
                                     params={"key": "notes/mine.txt"}, data=b"no")
        assert refused.status == 403, refused.text()
