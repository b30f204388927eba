"""Browser tests: the real product (`tierpilot up` on a scratch data dir) driven by Debian's Chromium.

Playwright cannot download its own browser here, so the session launches /usr/bin/chromium.
Screenshots land in tests/e2e/artifacts/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.e2e.helpers import DESKTOP

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]
ADMIN_USER = "admin"
ADMIN_PASSWORD = "e2e-admin-password"
STARTUP_TIMEOUT_S = 120


@dataclass(frozen=True)
class Product:
    url: str
    gateway_url: str
    admin_user: str
    admin_password: str
    data_dir: Path
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _newest_mtime(paths: list[Path]) -> float:
    newest = 0.0
    for base in paths:
        files = [base] if base.is_file() else [p for p in base.rglob("*") if p.is_file()]
        newest = max([newest, *(p.stat().st_mtime for p in files)])
    return newest


def _ensure_frontend_built() -> None:
    """The API serves frontend/dist; rebuild it when the sources are newer, so the test sees this code."""
    index = FRONTEND / "dist" / "index.html"
    sources = [FRONTEND / "src", FRONTEND / "index.html", FRONTEND / "vite.config.ts", FRONTEND / "package.json"]
    if index.is_file() and index.stat().st_mtime >= _newest_mtime(sources):
        return
    if not (FRONTEND / "node_modules").is_dir():
        pytest.fail("frontend/node_modules is missing: run `make setup` first")
    # vite alone: type errors are `npm run typecheck`'s business, the browser needs the bundle
    subprocess.run(["npx", "vite", "build", "--logLevel", "warn"], cwd=FRONTEND, check=True, timeout=300)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"`tierpilot up` exited with {proc.returncode} before it was healthy:\n{_tail(log)}")
        try:
            r = httpx.get(f"{url}/api/health", timeout=2)
            if r.status_code == 200:
                return
            last = f"{r.status_code} {r.text[:200]}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(0.3)
    pytest.fail(f"tierpilot did not become healthy in {STARTUP_TIMEOUT_S} s (last: {last}):\n{_tail(log)}")


def _tail(log: Path, lines: int = 40) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    return ""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM lets `tierpilot up` stop its children; SIGKILL the whole group only if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@contextlib.contextmanager
def launch_product(extra_env: dict[str, str] | None = None, api_port: int | None = None) -> Iterator[Product]:
    """`tierpilot up` on a scratch data dir and free ports (``api_port`` when the caller needs to know it first,
    as an identity provider's redirect URI does), with the demo seed, a bootstrap admin and ``extra_env``."""
    _ensure_frontend_built()
    # Not pytest's tmp_path: pytest prunes old base temp dirs, and a concurrent pytest run on the
    # same machine could delete this data dir under the running product.
    data_dir = Path(tempfile.mkdtemp(prefix="tierpilot-e2e-"))
    api_port, gateway_port = api_port or _free_port(), _free_port()
    # The suite-wide conftest points TIERPILOT_* at the unit-test setup (no demo seed, strict login
    # limits); the product under test gets only what a person running it would set.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERPILOT_")}
    env.update(
        TIERPILOT_DATA_DIR=str(data_dir),
        TIERPILOT_API_PORT=str(api_port),
        TIERPILOT_GATEWAY_PORT=str(gateway_port),
        TIERPILOT_BOOTSTRAP_ADMIN=f"{ADMIN_USER}:{ADMIN_PASSWORD}",
        TIERPILOT_FRONTEND_DIST=str(FRONTEND / "dist"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra_env or {})
    log = data_dir / "tierpilot-up.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "tierpilot"), "up"],
            cwd=ROOT,  # as `make run` starts it
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{api_port}"
    try:
        _wait_healthy(url, proc, log)
        yield Product(url, f"http://127.0.0.1:{gateway_port}", ADMIN_USER, ADMIN_PASSWORD, data_dir, log)
        if proc.poll() is not None:
            pytest.fail(f"`tierpilot up` stopped during the tests (exit {proc.returncode}):\n{_tail(log)}")
    finally:
        _stop(proc)
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def product() -> Iterator[Product]:
    """`tierpilot up` on a scratch data dir and free ports, with the demo seed and a bootstrap admin.

    E2E_BASE_URL (with E2E_ADMIN=name:password) points the tests at an already running server instead,
    for working on the dashboard against `npm run dev` or a long-lived instance.
    """
    external = os.environ.get("E2E_BASE_URL")
    if external:
        name, _, password = os.environ.get("E2E_ADMIN", f"{ADMIN_USER}:{ADMIN_PASSWORD}").partition(":")
        yield Product(external.rstrip("/"), "", name, password, Path(), Path("/dev/null"))
        return
    with launch_product() as started:
        yield started


@pytest.fixture(scope="session")
def playwright_session() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright_session: Playwright) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make setup` (installs Debian's chromium)")
    browser = playwright_session.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


NewContext = Callable[..., BrowserContext]


@pytest.fixture
def new_context(browser: Browser, product: Product) -> Iterator[NewContext]:
    """Fresh browser profiles (own cookies) at a given viewport; all closed at the end of the test."""
    contexts: list[BrowserContext] = []

    def make(viewport: dict[str, int] | None = None) -> BrowserContext:
        ctx = browser.new_context(base_url=product.url, viewport=viewport or DESKTOP)  # type: ignore[arg-type]
        ctx.set_default_timeout(15_000)
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.close()


@pytest.fixture
def page(new_context: NewContext) -> Page:
    return new_context(DESKTOP).new_page()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
