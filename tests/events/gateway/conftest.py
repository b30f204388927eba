"""One real gateway process for the events tests that write through S3 (users and tiers made once)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.client import BaseClient

from tests.conftest import _truncate_all
from tests.gateway.conftest import Gateway, _setup_data
from tests.servers import start_gateway, stop


@pytest.fixture(scope="package")
def gateway(db_url: str, data_dir: Path) -> Iterator[Gateway]:
    tag = uuid.uuid4().hex[:8]
    users, dirs = _setup_data(tag)
    log = data_dir / f"gateway-events-{tag}.log"
    url, proc = start_gateway(db_url, log)
    yield Gateway(url=url, proc=proc, log=log, users=users, tier_dirs=dirs)
    stop(proc)
    _truncate_all()


@pytest.fixture(scope="package")
def s3(gateway: Gateway) -> BaseClient:
    return gateway.client("alice")


@pytest.fixture
def bucket(s3: BaseClient) -> str:
    name = f"ev-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name
