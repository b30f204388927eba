"""Fixtures of the far-tier tests: a moto S3 server behind the delaying proxy, drivers through it."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from moto.server import ThreadedMotoServer

from tests.netem import NetemProxy
from tests.servers import free_port
from tierpilot.drivers.s3 import S3Driver


@pytest.fixture(scope="session")
def moto_far() -> Iterator[tuple[str, NetemProxy]]:
    """(moto's own URL, a proxy to it with 5 ms each way)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    with NetemProxy(port, one_way_delay_s=0.005) as proxy:
        yield f"http://{host}:{port}", proxy
    server.stop()


def far_s3_driver(proxy: NetemProxy) -> S3Driver:
    """A driver on a fresh bucket reached through the proxy."""
    driver = S3Driver("far", endpoint_url=proxy.url, bucket=f"far-{uuid.uuid4().hex[:12]}", prefix="tp/",
                      access_key_id="AKIDTEST", secret_access_key="secret")
    driver.client.create_bucket(Bucket=driver.bucket)
    return driver


@pytest.fixture
def far_driver(moto_far: tuple[str, NetemProxy]) -> S3Driver:
    return far_s3_driver(moto_far[1])
