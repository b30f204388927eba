"""Every page of the navigation (and the main dialogs) at 1280 and 390 px: nothing wider than the screen,
no table overflowing its box without the card layout, no overlapping axis labels, a silent console.

The pages come from frontend/src/components/layout/nav-items.ts, so a page added to the navigation is
checked without touching this file. Screenshots: tests/e2e/artifacts/layout-<width>-<page>.png.
At 1280 × 900 the Browser's folder list is a table of at least 20 rows on screen (density-*.png), and a
dialog opened on a cold load of its page has its styles (dialog-cold-*.png).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Error, Page, expect

from tests.e2e.conftest import ROOT, NewContext, Product
from tests.e2e.helpers import DESKTOP, NARROW, sign_in

pytestmark = pytest.mark.e2e

NAV_ITEMS = ROOT / "frontend" / "src" / "components" / "layout" / "nav-items.ts"
# The main dialogs: (page, the button that opens it, the dialog's accessible name).
DIALOGS = [
    ("/restores", "New restore", re.compile("restore", re.I)),
    ("/browser", "New bucket", re.compile("bucket", re.I)),
    ("/settings", "Add tier", re.compile("tier", re.I)),
    ("/browser?bucket=belle2-raw", "New folder", re.compile("folder", re.I)),
]

# Views behind a page's first screen that hold the widest content: a demo folder, an object's details.
DEEP_VIEWS = [
    ("/browser?bucket=belle2-raw&prefix=run-2026-11%2F", "browser-folder"),
    ("/browser?bucket=telescope-archive&prefix=survey-2019%2F&key=survey-2019%2Ffield-0000.root", "browser-object"),
]

# Runs in the page: a list of human-readable layout faults; [] when the page is sound.
LAYOUT_FAULTS_JS = """
() => {
  const faults = [];
  const vw = window.innerWidth;
  const name = (el) => {
    const id = el.id ? '#' + el.id : '';
    const classes = typeof el.className === 'string' ? el.className.trim() : '';
    const cls = classes ? '.' + classes.split(/\\s+/).join('.') : '';
    const text = (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
    return `<${el.tagName.toLowerCase()}${id}${cls}> "${text}"`;
  };
  const clippedByAncestor = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.clipPath !== 'none' || s.clip !== 'auto') return true;
    }
    return false;
  };
  if (document.documentElement.scrollWidth > vw + 1) {
    faults.push(`the page is ${document.documentElement.scrollWidth - vw}px wider than the screen`);
  }
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) continue;  // visually hidden or not rendered
    if ((r.right > vw + 1 || r.left < -1) && !clippedByAncestor(el)) {
      const s = getComputedStyle(el);
      if (s.position === 'fixed' && s.visibility === 'hidden') continue;
      faults.push(`${name(el)} spans ${Math.round(r.left)}..${Math.round(r.right)}px of a ${vw}px screen`);
    }
  }
  for (const table of document.querySelectorAll('table')) {
    if (table.getBoundingClientRect().width <= 1) continue;
    let box = table.parentElement;
    while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
    if (!box) continue;
    const responsive = table.closest('[data-layout="cards"]');
    if (table.scrollWidth > box.clientWidth + 1 && !responsive) {
      const what = table.caption ? table.caption.textContent : name(table);
      faults.push(`table "${what}" is ${table.scrollWidth}px in a ${box.clientWidth}px box, not in cards`);
    }
  }
  // axis labels (recharts ticks and the reservation timeline's) must not run together
  const axes = [...document.querySelectorAll('.recharts-cartesian-axis-ticks, [data-axis]')];
  for (const axis of axes) {
    const boxes = [...axis.querySelectorAll('text')]
      .map((t) => ({ t: (t.textContent || '').trim(), r: t.getBoundingClientRect() }))
      .filter((b) => b.t && b.r.width > 0);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i].r, b = boxes[j].r;
        const overlap = a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
        if (overlap) faults.push(`axis labels "${boxes[i].t}" and "${boxes[j].t}" overlap`);
      }
    }
  }
  return faults;
}
"""


def nav_pages() -> list[tuple[str, str]]:
    """(path, label) of every page in the navigation, in its order."""
    text = NAV_ITEMS.read_text()
    pages = re.findall(r'\{\s*to:\s*"([^"]+)",\s*label:\s*"([^"]+)"', text)
    assert pages, f"no pages found in {NAV_ITEMS}"
    return pages


def _slug(path: str) -> str:
    return "overview" if path == "/" else re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


def _settle(page: Page) -> None:
    """Until no spinner shows (the page's data is in), then two frames for charts and table layouts.

    Not `networkidle`: it waits half a second after the last request on every one of the ~30 views.
    """
    page.wait_for_function("() => !document.querySelector('.ui-loading, .ui-spinner')", timeout=15_000)
    page.evaluate("() => document.fonts.ready")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _check(page: Page, what: str, artifacts: Path, shot: str, faults: list[str]) -> None:
    _settle(page)
    page.screenshot(path=str(artifacts / f"{shot}.png"), full_page=True, animations="disabled")
    faults.extend(f"{what}: {f}" for f in page.evaluate(LAYOUT_FAULTS_JS))


def test_nav_items_are_discovered() -> None:
    pages = nav_pages()
    assert ("/", "Overview") in pages
    assert len(pages) == len(set(pages)) >= 8


@pytest.mark.parametrize(("size", "viewport"), [("1280", DESKTOP), ("390", NARROW)])
def test_every_page_and_dialog_fits_the_screen_with_a_silent_console(
    new_context: NewContext, product: Product, artifacts: Path, size: str, viewport: dict[str, int]
) -> None:
    page = new_context(viewport).new_page()
    console: list[str] = []

    def on_console(msg: ConsoleMessage) -> None:
        if msg.type in ("error", "warning"):
            console.append(f"{page.url}: console {msg.type}: {msg.text}")

    def on_error(err: Error) -> None:
        console.append(f"{page.url}: uncaught {err}")

    page.on("console", on_console)
    page.on("pageerror", on_error)
    faults: list[str] = []

    page.goto("/login")
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    _check(page, "/login", artifacts, f"layout-{size}-login", faults)
    sign_in(page, product.admin_user, product.admin_password)

    for path, label in nav_pages():
        page.goto(path)
        expect(page.get_by_role("heading", level=1, name=label).first).to_be_visible()
        if path == "/":
            # the Overview has room for what is happening now: its live activity is on the page at both widths
            expect(page.get_by_role("region", name="Live activity")).to_be_visible()
        _check(page, path, artifacts, f"layout-{size}-{_slug(path)}", faults)

    for url, shot in DEEP_VIEWS:
        page.goto(url)
        expect(page.get_by_role("table").first).to_be_visible()
        _check(page, url, artifacts, f"layout-{size}-{shot}", faults)

    for path, button, dialog_name in DIALOGS:
        page.goto(path)
        page.get_by_role("button", name=button, exact=True).first.click()
        dialog = page.get_by_role("dialog", name=dialog_name)
        expect(dialog).to_be_visible()
        _check(page, f"{path} dialog {button!r}", artifacts, f"layout-{size}-{_slug(path)}-dialog", faults)
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()

    problems: list[Any] = faults + console
    assert not problems, "\n".join(problems)


# The dense lists a person works through at a desk: (url, table caption, rows that must be on screen).
DENSE_LISTS = [
    ("/browser?bucket=e2e-dense", "Contents of e2e-dense/", 20),
]

# Rows of a table on screen: inside the window and inside the table's own scroll box.
ROWS_ON_SCREEN_JS = """
(caption) => {
  const table = [...document.querySelectorAll('table')].find((t) => t.caption?.textContent === caption);
  if (!table) return -1;
  const box = table.closest('.ui-table-wrap').getBoundingClientRect();
  const bottom = Math.min(window.innerHeight, box.bottom);
  return [...table.querySelectorAll('tbody tr[data-row]')]
    .filter((r) => {
      const b = r.getBoundingClientRect();
      return b.height > 0 && b.top >= box.top && b.bottom <= bottom + 1;
    }).length;
}
"""


def _seed_dense_lists(page: Page, product: Product) -> None:
    """Enough objects to fill a desktop screen, written through the S3 gateway as a client would."""
    import boto3

    csrf = {"X-CSRF-Token": next(c["value"] for c in page.context.cookies() if c["name"] == "tierpilot_csrf")}
    key = page.request.post("/api/keys", headers=csrf).json()
    s3 = boto3.client("s3", endpoint_url=product.gateway_url, aws_access_key_id=key["access_key_id"],
                      aws_secret_access_key=key["secret_access_key"], region_name="us-east-1")
    s3.create_bucket(Bucket="e2e-dense")
    for i in range(40):
        s3.put_object(Bucket="e2e-dense", Key=f"shot-{i:04d}.dat", Body=b"d" * (i + 1))


def test_dense_lists_at_a_desktop_width(new_context: NewContext, product: Product, artifacts: Path) -> None:
    page = new_context({"width": 1280, "height": 900}).new_page()
    sign_in(page, product.admin_user, product.admin_password)
    _seed_dense_lists(page, product)
    faults: list[str] = []
    for url, caption, rows in DENSE_LISTS:
        page.goto(url)
        table = page.get_by_role("table", name=caption)
        expect(table).to_be_visible()
        _settle(page)
        page.screenshot(path=str(artifacts / f"density-1280-{_slug(url)}.png"), animations="disabled")
        shown = page.evaluate(ROWS_ON_SCREEN_JS, caption)
        if shown < rows:
            faults.append(f"{url}: {shown} rows of “{caption}” on a 1280 × 900 screen, fewer than {rows}")
        cards = page.locator('[data-layout="cards"]').count()
        if cards:
            faults.append(f"{url}: {cards} list(s) laid out as cards at 1280 px")
    assert not faults, "\n".join(faults)


# Dialogs opened on a cold load of the page that offers them: (url, steps to open, dialog name, a styled
# element inside and a computed style it has only when its component's CSS has arrived).
STYLED_DIALOGS = [
    ("/browser?bucket=telescope-archive&prefix=survey-2019%2F",
     [("checkbox", "Select survey-2019/field-0000.root"), ("button", "Restore…")],
     "Restore archived objects", ".restore-speed", "display", "grid"),
]


@pytest.mark.parametrize("case", STYLED_DIALOGS, ids=["browser-restore"])
def test_each_dialog_is_styled_on_a_cold_load_of_its_page(
        new_context: NewContext, product: Product, artifacts: Path, case: tuple[Any, ...]) -> None:
    url, steps, name, selector, prop, value = case
    page = new_context({"width": 1280, "height": 900}).new_page()
    sign_in(page, product.admin_user, product.admin_password)
    page.goto(url)  # a full load: no other page's CSS is in the document
    for role, label in steps:
        target = page.get_by_role(role, name=label, exact=True).first
        if role == "checkbox":
            target.check()
        else:
            target.click()
    dialog = page.get_by_role("dialog", name=name)
    expect(dialog.locator(selector).first).to_be_visible()
    page.screenshot(path=str(artifacts / f"dialog-cold-{_slug(url)}.png"), animations="disabled")
    got = dialog.locator(selector).first.evaluate(f"(el) => getComputedStyle(el).{prop}")
    assert got == value, f"{name} from {url}: {selector} has {prop} {got!r}, its CSS has not arrived"
