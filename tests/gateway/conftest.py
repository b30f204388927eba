"""A real gateway process (``tierpilot gateway``) on a free 127.0.0.1 port, against the suite's scratch
database, with three posix tiers (hot, infrequent, offline archive) and three users."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.client import BaseClient
from botocore.config import Config

from tests.conftest import _truncate_all
from tests.servers import start_gateway, stop  # noqa: F401  (imported from here by other test packages)


@dataclass
class User:
    id: int
    name: str
    access_key_id: str
    secret_access_key: str
    is_admin: bool = False


@dataclass
class Gateway:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    users: dict[str, User]
    tier_dirs: dict[str, Path]
    env: dict[str, str] = field(default_factory=dict)

    def client(self, user: str = "alice", **config: Any) -> BaseClient:
        u = self.users[user]
        return boto3.client("s3", endpoint_url=self.url, aws_access_key_id=u.access_key_id,
                            aws_secret_access_key=u.secret_access_key, region_name="us-east-1",
                            config=Config(**config) if config else None)


def _setup_data(tag: str) -> tuple[dict[str, User], dict[str, Path]]:
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import RestoreDelays, TierCreate

    users: dict[str, User] = {}
    dirs: dict[str, Path] = {}
    with transaction(write=True) as s:
        for name, admin in (("alice", False), ("bob", False), ("root", True)):
            user, key = auth.create_user(s, name, f"{name}-password-1", is_admin=admin)
            users[name] = User(user.id, name, key.access_key_id, key.secret_access_key, admin)
        for name, classes, offline in (("hot-disk", ["STANDARD"], False), ("infrequent", ["STANDARD_IA"], False),
                                       ("archive", ["GLACIER", "DEEP_ARCHIVE"], True)):
            tier = tiers.create(s, TierCreate(
                name=name, driver="posix", config={"path": f"gw-{tag}/{name}"}, storage_classes=classes,
                offline=offline,
                restore_delays=RestoreDelays(expedited=1, standard=2, bulk=3) if offline else None))
            dirs[name] = Path(tier.config["path"])
    return users, dirs


@pytest.fixture(scope="package")
def gateway(db_url: str, data_dir: Path) -> Iterator[Gateway]:
    """One gateway process for the gateway tests; their data is removed at the end."""
    tag = uuid.uuid4().hex[:8]
    users, dirs = _setup_data(tag)
    log = data_dir / f"gateway-{tag}.log"
    url, proc = start_gateway(db_url, log)
    gw = Gateway(url=url, proc=proc, log=log, users=users, tier_dirs=dirs)
    yield gw
    stop(proc)
    _truncate_all()


@pytest.fixture(scope="package")
def s3(gateway: Gateway) -> BaseClient:
    """alice's boto3 client with default settings (flexible checksums on)."""
    return gateway.client("alice")


@pytest.fixture
def bucket(s3: BaseClient) -> Iterator[str]:
    """A fresh bucket of alice's (unique name: gateways cache bucket rows for a moment)."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    yield name


@pytest.fixture
def make_bucket(s3: BaseClient) -> Callable[..., str]:
    def make(client: BaseClient | None = None, **kwargs: Any) -> str:
        name = f"t-{uuid.uuid4().hex[:12]}"
        (client or s3).create_bucket(Bucket=name, **kwargs)
        return name

    return make


def catalog_rows(bucket: str) -> list[tuple[str, int, str, str]]:
    """(key, size, etag, locator) of every object of a bucket, straight from the database."""
    from sqlalchemy import select

    from tierpilot.catalog.models import Bucket, Object
    from tierpilot.kit.db import transaction

    with transaction() as s:
        rows = s.execute(select(Object.key, Object.size, Object.etag, Object.locator).join(Bucket)
                         .where(Bucket.name == bucket).order_by(Object.key)).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def blob_files(root: Path) -> list[str]:
    """Every blob file under a posix tier (what the tier holds, whatever the catalog says)."""
    blobs = root / "blobs"
    return sorted(str(p.relative_to(blobs)) for p in blobs.rglob("f_*")) if blobs.exists() else []


