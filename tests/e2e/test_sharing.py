"""The Sharing page in a real browser against `tierpilot up`: make a prefix public (after the warning), read it
unsigned from the gateway, see the policy said in words, have a bad policy refused by the server, and make
the prefix private again."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import shoot, sign_in

pytestmark = pytest.mark.e2e

BUCKET = "belle2-raw"  # the demo's hot bucket
PREFIX = "run-2026-11/"


def _keys(listing: str) -> list[str]:
    return re.findall(r"<Key>([^<]+)</Key>", listing)


def test_make_a_prefix_public_read_it_unsigned_and_take_it_back(page: Page, product: Product,
                                                                artifacts: Path) -> None:
    gateway = product.gateway_url
    assert httpx.get(f"{gateway}/{BUCKET}", params={"list-type": "2", "prefix": PREFIX}, timeout=30).status_code == 403
    sign_in(page, product.admin_user, product.admin_password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sharing", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Sharing")).to_be_visible()
    page.get_by_label("Bucket", exact=True).select_option(BUCKET)
    public = page.get_by_role("region", name="Public prefixes")
    expect(public.get_by_text("Nothing is public.")).to_be_visible()

    public.get_by_label("Prefix").fill(PREFIX)
    public.get_by_role("button", name="Make public…").click()
    dialog = page.get_by_role("alertdialog", name="Make this public?")
    expect(dialog).to_contain_text("no account and no key")
    shoot(page, artifacts, "sharing-confirm-public")
    dialog.get_by_role("button", name="Make public").click()
    expect(dialog).to_be_hidden()
    expect(public.get_by_text(PREFIX)).to_be_visible()
    policy = page.get_by_role("region", name="Bucket policy")
    expect(policy.get_by_role("list", name="What the policy allows")).to_contain_text(
        f"allows anyone, including anonymous (unsigned) requests s3:GetObject on {BUCKET}/{PREFIX}*")
    shoot(page, artifacts, "sharing-public-prefix")

    # the gateway now serves the prefix to anyone, and only the prefix
    listing = httpx.get(f"{gateway}/{BUCKET}", params={"list-type": "2", "prefix": PREFIX}, timeout=30)
    assert listing.status_code == 200, listing.text
    keys = _keys(listing.text)
    assert keys and all(k.startswith(PREFIX) for k in keys)
    assert httpx.get(f"{gateway}/{BUCKET}/{keys[0]}", timeout=30).status_code == 200
    assert httpx.get(f"{gateway}/{BUCKET}", params={"list-type": "2"}, timeout=30).status_code == 403

    # a policy the gateway would refuse is refused before it is saved, with the reason
    editor = policy.get_by_label("Policy (JSON)")
    editor.fill('{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", '
                '"Action": "s3:GetObject", "Resource": "arn:aws:s3:::another-bucket/*"}]}')
    policy.get_by_role("button", name="Check").click()
    expect(policy.get_by_text("Action does not apply to any resource(s) in statement")).to_be_visible()
    policy.get_by_role("button", name="Save policy").click()
    expect(policy.get_by_role("alert").last).to_contain_text("does not apply")

    public.get_by_role("button", name="Make private").click()
    expect(public.get_by_text("Nothing is public.")).to_be_visible()
    assert httpx.get(f"{gateway}/{BUCKET}/{keys[0]}", timeout=30).status_code == 403
