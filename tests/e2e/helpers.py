"""Helpers shared by the browser tests."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

DESKTOP = {"width": 1280, "height": 800}
NARROW = {"width": 390, "height": 844}


def shoot(page: Page, artifacts: Path, name: str) -> Path:
    """A full-page screenshot once network and animations settle."""
    page.wait_for_load_state("networkidle")
    path = artifacts / f"{name}.png"
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    return path


def sign_in(page: Page, username: str, password: str) -> None:
    """Sign in through the login form with the keyboard, as a person would."""
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_label("Password").press("Enter")
    page.get_by_role("heading", level=1, name="Overview").wait_for()
