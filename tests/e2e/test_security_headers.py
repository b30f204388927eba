"""The built dashboard runs under its content security policy with no violation, and nobody can frame it."""

from __future__ import annotations

import pytest
from playwright.sync_api import ConsoleMessage, Page

from tests.e2e.conftest import Product
from tests.e2e.helpers import sign_in

pytestmark = pytest.mark.e2e

PAGES = ["Overview", "Reservations", "Restores", "Lifecycle", "Browser", "Cost planner", "Benchmarks", "Settings"]
# every securitypolicyviolation event of the page, kept where the test can read it
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


def _csp_console(messages: list[ConsoleMessage]) -> list[str]:
    return [m.text for m in messages if "Content Security Policy" in m.text]


def test_every_dashboard_page_loads_with_no_csp_violation(page: Page, product: Product) -> None:
    console: list[ConsoleMessage] = []
    page.on("console", lambda m: console.append(m))
    page.add_init_script(RECORD_VIOLATIONS)
    first = page.goto("/login")
    assert first is not None
    csp = first.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self';" in csp
    assert first.headers["x-frame-options"] == "DENY" and first.headers["x-content-type-options"] == "nosniff"

    sign_in(page, product.admin_user, product.admin_password)
    for label in PAGES:
        page.get_by_role("navigation").first.get_by_role("link", name=label, exact=True).click()
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__cspViolations") == [], label
    # a full load of a deep link runs the whole bundle again, charts included
    page.goto("/planner")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__cspViolations") == []
    assert _csp_console(console) == []


def test_another_site_cannot_frame_the_dashboard(page: Page, product: Product) -> None:
    console: list[ConsoleMessage] = []
    page.on("console", lambda m: console.append(m))
    with page.expect_console_message(predicate=lambda m: "frame-ancestors" in m.text, timeout=15_000):
        page.set_content(f'<iframe id="victim" src="{product.url}/login"></iframe>')
    frame = page.frame_locator("#victim")
    assert frame.get_by_label("Username").count() == 0
    assert any("frame-ancestors 'none'" in text for text in _csp_console(console))
