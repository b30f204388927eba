"""Accounts an admin runs from the dashboard: an admin creates a member, the member signs in and makes an
API token; a revoked token stops working; the admin disables the member, whose open session stops at once
and whose next sign-in is refused; the audit log shows it. Screenshots of the views at 1280 and 390 px:
tests/e2e/artifacts/{desktop,narrow}-accounts-*.png."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, shoot, sign_in

pytestmark = pytest.mark.e2e


def _fits_the_screen(page: Page) -> None:
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url} is {overflow} px wider than the screen"


def _create_member(admin: Page, name: str, password: str) -> None:
    admin.goto("/settings")
    users = admin.get_by_role("region", name="Users", exact=True)
    users.get_by_role("button", name="Create user").click()
    form = admin.get_by_role("dialog", name="Create user")
    form.get_by_label("Username").fill(name)
    form.get_by_label("Password").fill(password)
    form.get_by_role("button", name="Create user").click()
    admin.get_by_role("dialog", name=f"Access key for {name}").get_by_role(
        "button", name="I have stored the secret").click()
    expect(users.get_by_role("cell", name=name, exact=True)).to_be_visible()


def _create_token(member: Page, name: str) -> str:
    tokens = member.get_by_role("region", name="API tokens", exact=True)
    tokens.get_by_role("button", name="Create token").click()
    form = member.get_by_role("dialog", name="Create API token")
    form.get_by_label("Name").fill(name)
    form.get_by_label("Expires after").select_option("7")
    form.get_by_role("button", name="Create token").click()
    shown = member.get_by_role("dialog", name=f"API token “{name}”")
    token = shown.locator('[data-field="Token"]').inner_text().strip()
    assert len(token) >= 30
    return token


def test_admin_disables_a_member_whose_session_and_tokens_stop_at_once(
    new_context: NewContext, product: Product, artifacts: Path
) -> None:
    name, password = f"acct-{secrets.token_hex(3)}", "member-password-1"
    admin = new_context(DESKTOP).new_page()
    sign_in(admin, product.admin_user, product.admin_password)
    _create_member(admin, name, password)

    member = new_context(NARROW).new_page()
    sign_in(member, name, password)
    member.goto("/settings")
    kept, revoked = _create_token(member, "kept-script"), ""
    shoot(member, artifacts, "narrow-accounts-token-created")
    member.get_by_role("button", name="I have stored the token").click()
    revoked = _create_token(member, "old-script")
    member.get_by_role("button", name="I have stored the token").click()

    def me(token: str) -> int:
        return httpx.get(f"{product.url}/api/auth/me", headers={"authorization": f"Bearer {token}"}).status_code

    assert me(kept) == 200 and me(revoked) == 200
    tokens = member.get_by_role("region", name="API tokens", exact=True)
    tokens.get_by_role("button", name="Revoke old-script").click()
    member.get_by_role("alertdialog", name="Revoke this token?").get_by_role("button", name="Revoke token").click()
    expect(tokens.get_by_role("button", name="Revoke old-script")).to_have_count(0)
    assert me(revoked) == 401, "a revoked token must stop working at once"
    assert me(kept) == 200
    expect(tokens.get_by_text("kept-script")).to_be_visible()
    _fits_the_screen(member)
    shoot(member, artifacts, "narrow-accounts-settings-member")

    # the admin disables the member: their open session, their token and their next sign-in all stop
    admin.reload()
    users = admin.get_by_role("region", name="Users", exact=True)
    users.get_by_role("button", name=f"Disable {name}").click()
    admin.get_by_role("alertdialog", name=f"Disable {name}?").get_by_role("button", name="Disable user").click()
    expect(users.get_by_role("button", name=f"Enable {name}")).to_be_visible()
    shoot(admin, artifacts, "desktop-accounts-users")

    assert member.request.get("/api/auth/me").status == 401
    assert me(kept) == 401
    member.get_by_role("region", name="API tokens", exact=True).get_by_role("button", name="Create token").click()
    form = member.get_by_role("dialog", name="Create API token")
    form.get_by_label("Name").fill("after-disable")
    form.get_by_role("button", name="Create token").click()
    expect(member).to_have_url(re.compile(r"/login"))  # the refused request ended the session in the UI
    member.get_by_label("Username").fill(name)
    member.get_by_label("Password").fill(password)
    member.get_by_role("button", name="Sign in").click()
    expect(member.get_by_role("alert")).to_contain_text("disabled")
    expect(member).to_have_url(re.compile(r"/login"))

    # the audit log shows who did it; filtered to the member's own events it shows the refused sign-in
    admin.get_by_role("link", name="Audit log").click()
    expect(admin.get_by_role("heading", level=1, name="Audit log")).to_be_visible()
    events = admin.get_by_role("region", name="Events", exact=True)
    expect(events.get_by_text(f"user:{name}", exact=True).first).to_be_visible()
    expect(events.get_by_text("user.disabled").first).to_be_visible()
    shoot(admin, artifacts, "desktop-accounts-audit")
    admin.get_by_label("User", exact=True).fill(name)
    admin.get_by_label("Event", exact=True).select_option("auth.login_failed")
    admin.get_by_role("button", name="Apply filter").click()
    expect(events.get_by_text("auth.login_failed")).to_have_count(1)
    expect(events.get_by_text("user.disabled")).to_have_count(0)
    href = admin.get_by_role("link", name="Export CSV").get_attribute("href") or ""
    csv = admin.request.get(href)
    assert csv.status == 200 and csv.text().count("auth.login_failed") == 1 and name in csv.text()

    # the admin's views at 390 px
    narrow_admin = new_context(NARROW).new_page()
    sign_in(narrow_admin, product.admin_user, product.admin_password)
    narrow_admin.goto("/settings#users")
    expect(narrow_admin.get_by_role("region", name="Users", exact=True).get_by_text(name, exact=True)).to_be_visible()
    _fits_the_screen(narrow_admin)
    shoot(narrow_admin, artifacts, "narrow-accounts-users")
    narrow_admin.goto("/settings/audit")
    expect(narrow_admin.get_by_role("region", name="Events", exact=True).get_by_text("user.disabled").first
           ).to_be_visible()
    _fits_the_screen(narrow_admin)
    shoot(narrow_admin, artifacts, "narrow-accounts-audit")

    # enabled again, the member signs in
    admin.goto("/settings")
    admin.get_by_role("region", name="Users", exact=True).get_by_role("button", name=f"Enable {name}").click()
    expect(admin.get_by_role("region", name="Users", exact=True).get_by_role(
        "button", name=f"Disable {name}")).to_be_visible()
    sign_in(member, name, password)
