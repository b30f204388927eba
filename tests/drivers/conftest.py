"""Fixtures of the tier tests: a moto S3 server on 127.0.0.1 (a free port) and drivers on it."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import httpx
import pytest
from moto.server import ThreadedMotoServer

from tests.servers import free_port
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
