"""The dashboard in a real browser against the real product: sign-in, Overview, S3 keys, users, layout."""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e

PAGES = [
    ("/", "Overview"),
    ("/reservations", "Reservations"),
    ("/restores", "Restores"),
    ("/lifecycle", "Lifecycle"),
    ("/browser", "Browser"),
    ("/planner", "Cost planner"),
    ("/benchmarks", "Benchmarks"),
    ("/settings", "Settings"),
]
DEMO_TIERS = {"hot-disk", "infrequent", "archive"}


def _s3(product: Product, key_id: str, secret: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=product.gateway_url,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        region_name="us-east-1",
        config=BotoConfig(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=15),
    )


def _secret_on_screen(page: Page) -> str:
    return page.locator('[data-field="Secret access key"]').inner_text().strip()


def test_sign_in_see_overview_rotate_key_and_sign_out(page: Page, product: Product, artifacts: Path) -> None:
    page.goto("/settings")
    expect(page).to_have_url(re.compile(r"/login\?redirect=%2Fsettings"))

    page.get_by_label("Username").fill(product.admin_user)
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Wrong username or password")
    shoot(page, artifacts, "login-error")

    page.get_by_label("Password").fill(product.admin_password)
    page.get_by_label("Password").press("Enter")
    # back to the page that asked for sign-in
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Overview").click()
    expect(page.get_by_role("heading", level=1, name="Overview")).to_be_visible()
    overview = page.request.get("/api/overview").json()
    tier_names = {t["name"] for t in overview["tiers"]}
    assert tier_names >= DEMO_TIERS
    tiers_card = page.get_by_role("region", name="Tiers", exact=True)
    for name in tier_names:
        expect(tiers_card.get_by_role("heading", name=name, exact=True)).to_be_visible()
    expect(tiers_card.get_by_text("offline archive")).to_be_visible()
    expect(page.get_by_text(overview["gateway_url"], exact=True)).to_be_visible()
    expect(page.get_by_role("region", name="Buckets", exact=True)).to_be_visible()
    for bucket in overview["buckets"]:
        expect(page.get_by_role("cell", name=bucket["name"], exact=True)).to_be_visible()

    page.get_by_role("link", name="Settings").click()
    keys_card = page.get_by_role("region", name="S3 access keys", exact=True)
    old_id = page.request.get("/api/keys").json()[0]["access_key_id"]
    expect(keys_card.get_by_role("cell", name=old_id, exact=True)).to_be_visible()

    # Escape backs out of the confirmation without rotating
    keys_card.get_by_role("button", name=f"Rotate {old_id}").click()
    confirm = page.get_by_role("alertdialog", name="Rotate this key?")
    expect(confirm).to_be_visible()
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(confirm).to_be_hidden()
    assert [k["access_key_id"] for k in page.request.get("/api/keys").json()] == [old_id]

    keys_card.get_by_role("button", name=f"Rotate {old_id}").click()
    page.get_by_role("button", name="Rotate key").click()
    shown = page.get_by_role("dialog", name="Access key rotated")
    expect(shown).to_be_visible()
    secret = _secret_on_screen(page)
    assert len(secret) >= 30
    new_ids = [k["access_key_id"] for k in page.request.get("/api/keys").json()]
    assert old_id not in new_ids and len(new_ids) == 1
    expect(shown.get_by_text(new_ids[0], exact=True)).to_be_visible()
    expect(shown.get_by_text(overview["gateway_url"], exact=True)).to_be_visible()
    shoot(page, artifacts, "desktop-settings-new-secret")

    # the secret on screen is the one the S3 gateway accepts; the rotated-away key is refused
    buckets = _s3(product, new_ids[0], secret).list_buckets()["Buckets"]
    assert {b["Name"] for b in buckets} >= {b["name"] for b in overview["buckets"]}
    with pytest.raises(ClientError) as refused:
        _s3(product, old_id, secret).list_buckets()
    assert refused.value.response["Error"]["Code"] == "InvalidAccessKeyId"

    shown.get_by_role("button", name="I have stored the secret").click()
    expect(shown).to_be_hidden()
    expect(keys_card.get_by_role("cell", name=new_ids[0], exact=True)).to_be_visible()
    expect(keys_card.get_by_role("cell", name=old_id, exact=True)).to_have_count(0)
    # shown once: gone from the page, and a reload cannot bring it back
    assert secret not in page.content()
    page.reload()
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()
    assert secret not in page.content()

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    assert page.request.get("/api/auth/me").status == 401
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login"))


@pytest.mark.parametrize(("size", "viewport"), [("desktop", DESKTOP), ("narrow", NARROW)])
def test_every_page_renders_without_overflow(
    new_context: NewContext, product: Product, artifacts: Path, size: str, viewport: dict[str, int]
) -> None:
    page = new_context(viewport).new_page()
    page.goto("/login")
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    shoot(page, artifacts, f"{size}-login")
    sign_in(page, product.admin_user, product.admin_password)

    menu = page.get_by_role("button", name="Menu")
    nav = page.get_by_role("navigation", name="Main")
    if size == "narrow":
        expect(menu).to_have_attribute("aria-expanded", "false")
        expect(nav).to_be_hidden()
    else:
        expect(menu).to_be_hidden()
        expect(nav).to_be_visible()

    for path, title in PAGES:
        if size == "narrow":
            menu.click()
            expect(menu).to_have_attribute("aria-expanded", "true")
            if path == "/settings":
                shoot(page, artifacts, f"{size}-menu-open")
        nav.get_by_role("link", name=title, exact=True).click()
        expect(page).to_have_url(re.compile(re.escape(path) + "$"))
        # .first: a page may render a document with its own h1 (Benchmarks shows docs/benchmarks.md)
        expect(page.get_by_role("heading", level=1, name=title).first).to_be_visible()
        if size == "narrow":
            # choosing a page closes the menu so the page is visible
            expect(nav).to_be_hidden()
        expect(page.locator("a[aria-current='page']")).to_have_text(title)
        slug = "overview" if path == "/" else path.strip("/")
        shoot(page, artifacts, f"{size}-{slug}")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} is {overflow}px wider than a {viewport['width']}px screen"


def test_lost_session_sends_the_user_to_sign_in_and_back(page: Page, product: Product) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()

    page.context.clear_cookies()  # as if the session expired or the server forgot it
    page.get_by_role("button", name="Create key").click()
    expect(page).to_have_url(re.compile(r"/login\?redirect=%2Fsettings"))

    page.get_by_label("Username").fill(product.admin_user)
    page.get_by_label("Password").fill(product.admin_password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1, name="Settings")).to_be_visible()


def test_admin_creates_a_member_who_sees_only_their_own_things(
    new_context: NewContext, product: Product, artifacts: Path
) -> None:
    admin = new_context(DESKTOP).new_page()
    sign_in(admin, product.admin_user, product.admin_password)
    admin.get_by_role("link", name="Settings").click()
    users = admin.get_by_role("region", name="Users", exact=True)
    users.get_by_role("button", name="Create user").click()
    form = admin.get_by_role("dialog", name="Create user")
    name, password = f"member-{secrets.token_hex(3)}", "member-password-1"
    form.get_by_label("Username").fill(name)
    form.get_by_label("Password").fill("short")
    form.get_by_role("button", name="Create user").click()
    expect(form.get_by_text("At least 8 characters.", exact=True)).to_be_visible()
    form.get_by_label("Password").fill(password)
    form.get_by_role("button", name="Create user").click()
    shown = admin.get_by_role("dialog", name=f"Access key for {name}")
    expect(shown).to_be_visible()
    assert len(_secret_on_screen(admin)) >= 30
    shoot(admin, artifacts, "desktop-settings-user-created")
    shown.get_by_role("button", name="I have stored the secret").click()
    expect(users.get_by_role("cell", name=name, exact=True)).to_be_visible()
    shoot(admin, artifacts, "desktop-settings-admin")

    member = new_context(NARROW).new_page()
    sign_in(member, name, password)
    expect(member.get_by_text("Money, work to look at, all tiers and the buckets you can open (yours and shared with "
                              "you).")).to_be_visible()
    expect(member.get_by_role("heading", name="No buckets yet")).to_be_visible()
    member.goto("/settings")
    expect(member.get_by_role("heading", level=1, name="Settings")).to_be_visible()
    expect(member.get_by_role("region", name="S3 access keys", exact=True)).to_be_visible()
    expect(member.get_by_role("region", name="Tiers", exact=True)).to_have_count(0)
    expect(member.get_by_role("region", name="Users", exact=True)).to_have_count(0)
    assert len(member.request.get("/api/keys").json()) == 1
    shoot(member, artifacts, "narrow-settings-member")


def test_keyboard_user_can_skip_to_content(page: Page, product: Product) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()


def test_admin_adds_edits_and_deletes_a_tier(page: Page, product: Product, artifacts: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("link", name="Settings").click()
    tiers = page.get_by_role("region", name="Tiers", exact=True)
    name = f"scratch-{secrets.token_hex(3)}"

    tiers.get_by_role("button", name="Add tier").click()
    form = page.get_by_role("dialog", name="Add tier")
    form.get_by_label("Name").fill(name)
    form.get_by_role("button", name="Add tier").click()
    expect(form.get_by_text("Enter a directory.")).to_be_visible()  # checked before anything is sent
    form.get_by_label("Directory").fill(name)
    expect(form.get_by_text("Enter a directory.")).to_be_hidden()
    form.get_by_label("Storage classes served").fill("standard_ia")
    form.get_by_label("Offline archive").check()
    form.get_by_label("Bulk").fill("120")
    form.get_by_label("Capacity (GiB)").fill("2")
    shoot(page, artifacts, "desktop-settings-tier-form")
    form.get_by_role("button", name="Add tier").click()
    expect(form).to_be_hidden()
    row = tiers.get_by_role("row").filter(has_text=name)
    expect(row).to_contain_text("offline archive")
    expect(row).to_contain_text("bulk 2 min")
    # a table too narrow for every column folds the rest into the row's details: open them
    more = tiers.get_by_role("button", name=f"More about {name}")
    if more.count():
        more.click()
    expect(tiers.get_by_role("row").filter(has_text="2.00 GiB")).to_have_count(1)
    created = next(t for t in page.request.get("/api/tiers").json() if t["name"] == name)
    assert created["storage_classes"] == ["STANDARD_IA"]
    assert created["capacity_bytes"] == 2 * 1024**3

    tiers.get_by_role("button", name=f"Edit {name}").click()
    form = page.get_by_role("dialog", name=f"Edit tier {name}")
    expect(form.get_by_label("Capacity (GiB)")).to_have_value("2")
    form.get_by_label("Capacity (GiB)").fill("")
    form.get_by_role("button", name="Save tier").click()
    expect(form).to_be_hidden()
    expect(tiers.get_by_role("row").filter(has_text="unlimited")).to_have_count(1)

    tiers.get_by_role("button", name=f"Delete {name}").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Delete tier").click()
    expect(row).to_have_count(0)
    assert name not in {t["name"] for t in page.request.get("/api/tiers").json()}
