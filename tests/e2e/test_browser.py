"""The Browser page in a real browser: buckets, folders, object details, upload, download, delete."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def test_browse_demo_buckets_and_object_details(page: Page, product: Product, artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("link", name="Browser").click()
    expect(page.get_by_role("heading", level=1, name="Browser")).to_be_visible()
    buckets = page.get_by_role("list", name="Buckets")
    expect(buckets.get_by_role("button", name=re.compile("belle2-raw"))).to_contain_text("objects")
    buckets.get_by_role("button", name=re.compile("belle2-raw")).click()
    table = page.get_by_role("table", name="Contents of belle2-raw/")
    table.get_by_role("button", name="run-2026-11/", exact=True).click()
    folder = page.get_by_role("table", name="Contents of belle2-raw/run-2026-11/")
    expect(folder.get_by_role("row")).to_have_count(13)  # header + 12 demo objects
    folder.get_by_role("button", name="detector-0003.root", exact=True).click()
    detail = page.get_by_role("dialog", name="Object")
    expect(detail).to_contain_text("hot-disk")
    # the demo seed writes checksums; the listing stays where it was behind the dialog
    expect(detail).to_contain_text("SHA256")
    expect(detail).to_contain_text("STANDARD")
    expect(detail.get_by_text("s3://belle2-raw/run-2026-11/detector-0003.root")).to_be_visible()
    with page.expect_download() as download:
        detail.get_by_role("link", name="Download").click()
    saved = Path(download.value.path())
    assert saved.stat().st_size > 0
    shoot(page, artifacts, "browser-object-detail")
    detail.get_by_role("button", name="Close").click()
    expect(detail).to_be_hidden()
    # the filter is answered by the catalog (names starting so, in the whole folder), not by the loaded rows
    page.get_by_label("Filter this folder").fill("detector-0003")
    expect(folder.get_by_role("row")).to_have_count(2)

    # an archived object: not downloadable, and a restore can start from the selection
    buckets.get_by_role("button", name=re.compile("telescope-archive")).click()
    contents = page.get_by_role("table", name="Contents of telescope-archive/")
    contents.get_by_role("button", name="survey-2019/", exact=True).click()
    archive = page.get_by_role("table", name="Contents of telescope-archive/survey-2019/")
    expect(archive).to_contain_text("archived")
    archive.get_by_role("checkbox", name="Select survey-2019/field-0000.root").check()
    page.get_by_role("button", name="Restore…").click()
    dialog = page.get_by_role("dialog", name="Restore archived objects")
    expect(dialog).to_be_visible()
    shoot(page, artifacts, "browser-restore-dialog")
    dialog.get_by_role("button", name="Cancel").click()


def test_create_bucket_upload_download_delete(page: Page, product: Product, artifacts: Path, tmp_path: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.goto("/browser")
    name = f"e2e-{secrets.token_hex(4)}"
    page.get_by_role("button", name="New bucket").click()
    dialog = page.get_by_role("dialog", name="New bucket")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_role("button", name="Create bucket").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_text("This folder is empty")).to_be_visible()

    data = os.urandom(3 * 1024 * 1024 + 5)
    upload = tmp_path / "spectrum données.bin"
    upload.write_bytes(data)
    page.get_by_label("Files to upload").set_input_files(str(upload))
    uploads = page.get_by_role("list", name="Uploads")
    expect(uploads).to_contain_text("uploaded")
    table = page.get_by_role("table", name=f"Contents of {name}/")
    table.get_by_role("button", name="spectrum données.bin", exact=True).click()
    detail = page.get_by_role("dialog", name="Object")
    expect(detail).to_contain_text(f"{len(data):,} bytes")
    shoot(page, artifacts, "browser-uploaded")
    with page.expect_download() as download:
        detail.get_by_role("link", name="Download").click()
    assert Path(download.value.path()).read_bytes() == data
    detail.get_by_role("button", name="Close").click()
    buckets = page.get_by_role("list", name="Buckets")
    expect(buckets.get_by_role("button", name=re.compile(name))).to_contain_text("1 object ·")

    table.get_by_role("checkbox", name="Select spectrum données.bin").check()
    page.get_by_role("button", name="Delete", exact=True).click()
    confirm = page.get_by_role("alertdialog", name="Delete 1 object?")
    confirm.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("This folder is empty")).to_be_visible()
    expect(buckets.get_by_role("button", name=re.compile(name))).to_contain_text("0 objects")

    page.get_by_role("button", name="Delete bucket").click()
    confirm = page.get_by_role("alertdialog", name=f"Delete the bucket {name}?")
    confirm.get_by_role("button", name="Delete bucket").click()
    expect(confirm).to_be_hidden()
    expect(buckets.get_by_role("button", name=re.compile(name))).to_have_count(0)


def test_create_a_folder_and_open_it(page: Page, product: Product, artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    name = f"e2e-folders-{secrets.token_hex(4)}"
    assert page.request.post("/api/buckets", headers=csrf, data={"name": name}).status == 201
    page.goto(f"/browser?bucket={name}")
    expect(page.get_by_text("This folder is empty")).to_be_visible()
    page.get_by_role("button", name="New folder").click()
    dialog = page.get_by_role("dialog", name="New folder")
    dialog.get_by_label("Folder name").fill("raw//2026")
    expect(dialog).to_contain_text("no empty levels")
    expect(dialog.get_by_role("button", name="Create folder")).to_be_disabled()
    dialog.get_by_label("Folder name").fill("raw/2026")
    shoot(page, artifacts, "browser-new-folder")
    dialog.get_by_role("button", name="Create folder").click()
    expect(dialog).to_be_hidden()
    # the new, empty folder is open; one level up it is listed like any other
    expect(page).to_have_url(re.compile(r"prefix=raw%2F2026%2F"))
    expect(page.get_by_role("navigation", name="Folder path").locator('[aria-current="page"]')).to_have_text("2026")
    expect(page.get_by_text("This folder is empty")).to_be_visible()
    page.get_by_role("navigation", name="Folder path").get_by_role("button", name="raw").click()
    expect(page.get_by_role("table", name=f"Contents of {name}/raw/").get_by_role(
        "button", name=re.compile("2026"))).to_be_visible()
    # the marker is the bucket's only object: removed, the bucket is empty again and can go
    r = page.request.delete(f"/api/buckets/{name}/object", headers=csrf, params={"key": "raw/2026/"})
    assert r.status == 204, r.text()
    assert page.request.delete(f"/api/buckets/{name}", headers=csrf).status == 204


def test_browser_fits_a_phone(new_context: NewContext, product: Product, artifacts: Path) -> None:
    page = new_context(NARROW).new_page()
    sign_in(page, product.admin_user, product.admin_password)
    page.goto("/browser?bucket=belle2-raw&prefix=run-2026-11%2F&key=run-2026-11%2Fdetector-0001.root")
    expect(page.get_by_role("dialog", name="Object")).to_contain_text("detector-0001.root")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the Browser scrolls sideways by {overflow}px at 390px"
    shoot(page, artifacts, "browser-narrow")
