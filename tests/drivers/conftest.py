"""Fixtures of the tier tests: a moto S3 server, Azurite and fake-gcs-server on 127.0.0.1 (free ports)
and drivers on them."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import httpx
import pytest
from moto.server import ThreadedMotoServer

from tests.emulators import Emulator, azurite, azurite_connection_string, fake_gcs  # noqa: F401 (fixtures)
from tests.servers import free_port
from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.drivers.s3 import S3Driver


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_driver(moto_url: str) -> Iterator[S3Driver]:
    """A driver on a fresh bucket of the moto server, with the smallest part size (8 MiB)."""
    driver = S3Driver("cloud", endpoint_url=moto_url, bucket=f"tier-{uuid.uuid4().hex[:12]}", prefix="tp/",
                      access_key_id="AKIDTEST", secret_access_key="secret", part_size=8 << 20)
    driver.client.create_bucket(Bucket=driver.bucket)
    yield driver
    httpx.post(f"{moto_url}/moto-api/state-manager/unset-transition", json={"model_name": "s3::keyrestore"})


@pytest.fixture
def azure_driver(azurite: Emulator) -> AzureBlobDriver:  # noqa: F811
    """A driver on a fresh container of Azurite, with the smallest block size (1 MiB)."""
    driver = AzureBlobDriver("azure", container=f"tier-{uuid.uuid4().hex[:12]}", prefix="tp/",
                             connection_string=azurite_connection_string(azurite.url), block_size=1 << 20)
    driver.container_client.create_container()
    return driver


@pytest.fixture
def gcs_driver(fake_gcs: Emulator) -> GCSDriver:  # noqa: F811
    """A driver on a fresh bucket of fake-gcs-server, with the smallest chunk size (256 KiB)."""
    driver = GCSDriver("gcs", bucket=f"tier-{uuid.uuid4().hex[:12]}", prefix="tp/", endpoint_url=fake_gcs.url,
                       chunk_size=256 << 10)
    driver.client.create_bucket(driver.bucket_name)
    return driver
