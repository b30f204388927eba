"""The endpoint snippets Settings shows with a new key, run as shown with the installed clients against the
product's gateway: AWS CLI v2 (Debian's /usr/bin/aws, which ignores AWS_ENDPOINT_URL), s3cmd, rclone, boto3."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Product
from tests.e2e.helpers import sign_in

pytestmark = pytest.mark.e2e

DEMO_BUCKETS = ("belle2-processed", "belle2-raw", "telescope-archive")


def _client_env(home: Path) -> dict[str, str]:
    """A user's shell: an empty home (no ~/.aws, ~/.s3cfg, rclone.conf), the clients on PATH first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TIERPILOT_"))}
    # Python with boto3 for the boto3 snippet (the venv has no aws), then Debian's AWS CLI v2 before any
    # pyenv shim of v1
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}:/usr/bin:{env.get('PATH', '')}")
    return env


def test_every_endpoint_snippet_lists_the_buckets_through_the_gateway(page: Page, product: Product,
                                                                      tmp_path: Path) -> None:
    sign_in(page, product.admin_user, product.admin_password)
    page.goto("/settings")
    page.get_by_role("button", name="Create key").click()
    dialog = page.get_by_role("dialog", name="New access key")
    snippets = dialog.locator("pre[data-snippet]")
    expect(snippets).to_have_count(4)
    shown = {s.get_attribute("data-snippet"): s.inner_text() for s in snippets.all()}
    key_id = dialog.locator('[data-field="Access key ID"]').inner_text().strip()
    try:
        _run_snippets(shown, product, tmp_path)
    finally:
        # other tests of the session count the admin's keys
        csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")
        assert page.request.delete(f"/api/keys/{key_id}", headers={"X-CSRF-Token": csrf}).ok
    dialog.get_by_role("button", name="I have stored the secret").click()


def _run_snippets(shown: dict[str | None, str], product: Product, tmp_path: Path) -> None:
    assert set(shown) == {"aws", "s3cmd", "rclone", "boto3"}
    assert "AWS_ENDPOINT_URL" not in "".join(shown.values())
    env = _client_env(tmp_path)
    assert shutil.which("aws", path=env["PATH"]) == "/usr/bin/aws"  # the AWS CLI v2 `make setup` installs
    for name, code in shown.items():
        assert product.gateway_url in code or product.gateway_url.split("//")[1] in code, name
        # this machine sets AWS_CA_BUNDLE, which Debian's rclone refuses for plain HTTP; the env above drops it
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", code], env=env, capture_output=True, text=True,
                             timeout=60, cwd=tmp_path)
        assert run.returncode == 0, f"{name} snippet failed:\n{code}\n{run.stdout}\n{run.stderr}"
        for bucket in DEMO_BUCKETS:
            assert bucket in run.stdout, f"{name} snippet did not list {bucket}:\n{run.stdout}\n{run.stderr}"
