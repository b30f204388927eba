"""Institutional sign-in in the browser: a member clicks "Sign in with Test IdP" on the login page, signs in on
the provider's own page (tests/tools' oidc-provider, as tests/identity starts it), lands on the dashboard signed in
and holds the project their group maps to; a sign-in the provider refuses comes back as a message on the login
page; an admin sees the provider, the mapping and that sign-in under Settings › Identity and dry-runs groups.
Screenshots: tests/e2e/artifacts/desktop-identity-*.png."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.conftest import Product, _free_port, launch_product
from tests.e2e.helpers import DESKTOP, shoot, sign_in
from tests.identity.conftest import CLIENT_ID, CLIENT_SECRET, MAPPING, USERS, Oidc, start_oidc_provider
from tests.waiting import wait_until

pytestmark = pytest.mark.e2e

PROVIDER_NAME = "Test IdP"
MAPPED_PROJECT = "lab-a"  # alice's group lab-a maps to it as member; the mapping's other projects do not exist


@dataclass(frozen=True)
class SsoProduct:
    product: Product
    provider: Oidc


@pytest.fixture(scope="module")
def sso() -> Iterator[SsoProduct]:
    """An identity provider and a `tierpilot up` of its own that signs in through it (the session's product
    has no provider, and a redirect URI must be known to the provider before the product starts)."""
    api_port = _free_port()
    callback = f"http://127.0.0.1:{api_port}/api/auth/oidc/callback"
    with tempfile.TemporaryDirectory(prefix="tierpilot-e2e-oidc-") as logs, \
            start_oidc_provider([callback], Path(logs)) as provider:
        env = {"TIERPILOT_OIDC_DISCOVERY_URL": provider.discovery_url, "TIERPILOT_OIDC_CLIENT_ID": CLIENT_ID,
               "TIERPILOT_OIDC_CLIENT_SECRET": CLIENT_SECRET, "TIERPILOT_OIDC_SCOPES": "openid profile groups",
               "TIERPILOT_OIDC_PROVIDER_NAME": PROVIDER_NAME, "TIERPILOT_OIDC_REDIRECT_URL": callback,
               "TIERPILOT_GROUP_MAPPING": json.dumps(MAPPING)}
        with launch_product(env, api_port=api_port) as product:
            _create_project(product, MAPPED_PROJECT)
            yield SsoProduct(product, provider)


def _create_project(product: Product, name: str) -> None:
    """Only projects that exist are given by the mapping: an admin makes this one first."""
    with httpx.Client(base_url=product.url, timeout=30) as admin:
        r = admin.post("/api/auth/login", json={"username": product.admin_user, "password": product.admin_password})
        r.raise_for_status()
        r = admin.post("/api/projects", json={"name": name},
                       headers={"X-CSRF-Token": admin.cookies["tierpilot_csrf"]})
        assert r.status_code == 201, r.text


@pytest.fixture
def context(browser: Browser, sso: SsoProduct) -> Iterator[BrowserContext]:
    ctx = browser.new_context(base_url=sso.product.url, viewport=DESKTOP)  # type: ignore[arg-type]
    # the provider's page and its redirects come on top of the dashboard's: a loaded machine needs the room
    ctx.set_default_timeout(30_000)
    ctx.set_default_navigation_timeout(60_000)
    yield ctx
    ctx.close()


def _sign_in_at_provider(page: Page, username: str) -> None:
    page.goto("/login")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
    # the provider's own login form (tests/tools/oidc_provider.mjs), on its own origin
    page.locator("#login").fill(username)
    page.locator("#password").fill(USERS[username]["password"])
    page.locator("#submit").click()


def test_member_signs_in_through_the_provider_and_holds_the_mapped_project(
        context: BrowserContext, sso: SsoProduct, artifacts: Path) -> None:
    page = context.new_page()
    page.goto("/login")
    expect(page.get_by_label("Username")).to_be_visible()  # the password form stays for local accounts
    shoot(page, artifacts, "desktop-identity-login")

    _sign_in_at_provider(page, "alice")
    expect(page.get_by_role("heading", level=1, name="Overview")).to_be_visible()
    assert page.url.startswith(sso.product.url)
    expect(page.locator(".app-nav__username")).to_have_text("alice")

    me = page.request.get("/api/auth/me")
    assert me.ok and me.json()["username"] == "alice"
    # a 503 (the embedded database busy a moment) is retried, as a client would; anything else fails at once
    listed = wait_until(lambda: (r := page.request.get("/api/projects")).status != 503 and r, timeout=30)
    assert listed.ok, listed.text()
    projects = {p["name"]: p for p in listed.json()}
    assert MAPPED_PROJECT in projects, projects
    roles = {m["username"]: m["role"] for m in projects[MAPPED_PROJECT]["members"]}
    assert roles.get("alice") == "member"


def test_a_refused_sign_in_comes_back_as_a_message(context: BrowserContext) -> None:
    page = context.new_page()
    # what the provider sends the browser back with when the user cancels
    page.goto("/api/auth/oidc/callback?error=access_denied&error_description=the+user+cancelled")
    expect(page).to_have_url(re.compile(r"/login\?sso_error="))
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Sign-in through your institution failed")
    expect(alert).to_contain_text("the identity provider refused the sign-in: the user cancelled")
    expect(page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}")).to_be_visible()


def test_admin_sees_the_provider_mapping_and_sign_ins_and_dry_runs_groups(
        context: BrowserContext, sso: SsoProduct, artifacts: Path) -> None:
    member = context.new_page()
    _sign_in_at_provider(member, "alice")  # at least one sign-in through the provider to list
    expect(member.get_by_role("heading", level=1, name="Overview")).to_be_visible()
    member.close()
    context.clear_cookies()

    admin = context.new_page()
    sign_in(admin, sso.product.admin_user, sso.product.admin_password)
    admin.goto("/settings")
    admin.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Identity").click()
    expect(admin.get_by_role("heading", level=1, name="Identity")).to_be_visible()

    providers = admin.get_by_role("region", name="Sign-in providers")
    expect(providers.get_by_text("ready")).to_be_visible()
    expect(providers.get_by_text(sso.provider.issuer, exact=True)).to_be_visible()
    mapping = admin.get_by_role("region", name="Groups → projects")
    expect(mapping.get_by_role("row").filter(has_text="no-such-project")).to_contain_text("no such project")
    sign_ins = admin.get_by_role("region", name="Latest sign-ins")
    expect(sign_ins.get_by_role("row").filter(has_text="alice").first).to_contain_text("OpenID Connect")

    dry_run = admin.get_by_role("region", name="Dry run")
    dry_run.get_by_label("Groups").fill("lab-a\nlab-b, unknown")
    dry_run.get_by_role("button", name="Try these groups").click()
    expect(dry_run.get_by_role("status")).to_have_text("These groups give lab-a as member.")
    expect(dry_run.get_by_role("row").filter(has_text="unknown")).to_contain_text("no entry")
    shoot(admin, artifacts, "desktop-identity-settings")
