"""`tierpilot mount` on a real gateway whose bucket lives on an s3 tier (moto behind the 10 ms proxy):
list, read, the archived-object error and its xattr, refresh on SIGUSR1, unmount on Ctrl-C leaving nothing.
The gateway's read-ahead of the remote tier is checked on the same set-up."""

from __future__ import annotations

import errno
import glob
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from tests.conftest import ROOT, _truncate_all
from tests.gateway.conftest import start_gateway, stop
from tests.netem import NetemProxy
from tests.waiting import wait_until

MiB = 1 << 20
pytestmark = pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="needs /dev/fuse")


@dataclass
class Site:
    url: str
    bucket: str
    env: dict[str, str]
    client: Any
    files: dict[str, bytes]
    proxy: NetemProxy


@pytest.fixture(scope="module")
def site(db_url: str, data_dir: Path, moto_far: tuple[str, NetemProxy]) -> Iterator[Site]:
    from tierpilot.auth import service as auth
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import RestoreDelays, TierCreate

    moto_url, proxy = moto_far
    tag = uuid.uuid4().hex[:8]
    boto3.client("s3", endpoint_url=moto_url, aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
                 region_name="us-east-1").create_bucket(Bucket=f"cloud-{tag}")
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=f"cloud-{tag}", driver="s3", storage_classes=["STANDARD"], config={
            "endpoint_url": proxy.url, "bucket": f"cloud-{tag}", "access_key_id": "AKIDTEST",
            "secret_access_key": "secret"}))
        tiers.create(s, TierCreate(name=f"vault-{tag}", driver="posix", config={"path": f"vault-{tag}"},
                                   storage_classes=["GLACIER"], offline=True,
                                   restore_delays=RestoreDelays(expedited=60, standard=60, bulk=60)))
        user, key = auth.create_user(s, f"mounter-{tag}", "mounter-password-1")
        catalog.create_bucket(s, owner_id=user.id, name=f"m-{tag}", tier_name=f"cloud-{tag}")
    log = data_dir / f"gateway-mount-{tag}.log"
    url, proc = start_gateway(db_url, log)
    client = boto3.client("s3", endpoint_url=url, aws_access_key_id=key.access_key_id,
                          aws_secret_access_key=key.secret_access_key, region_name="us-east-1")
    files = {"a.txt": b"hello far tiers\n", "dir/b.bin": os.urandom(3 * MiB + 12345),
             "dir/sub/c.txt": b"deep\n" * 1000, "empty": b""}
    for k, body in files.items():
        client.put_object(Bucket=f"m-{tag}", Key=k, Body=body)
    client.put_object(Bucket=f"m-{tag}", Key="cold/x.dat", Body=b"z" * 5000, StorageClass="GLACIER")
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db_url, AWS_ACCESS_KEY_ID=key.access_key_id,
               AWS_SECRET_ACCESS_KEY=key.secret_access_key)
    yield Site(url, f"m-{tag}", env, client, files, proxy)
    stop(proc)
    _truncate_all()


def _mount(site: Site, mountpoint: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "mount", site.bucket, str(mountpoint),
                             "--endpoint", site.url, "--block-mb", "1", "--cache-mb", "16", *args],
                            env=env or site.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _wait_mounted(proc: subprocess.Popen[bytes], mountpoint: Path) -> None:
    def mounted() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"mount exited {proc.returncode}: {proc.stdout.read() if proc.stdout else ''!r}")
        return os.path.ismount(mountpoint)

    wait_until(mounted, message="not mounted")


@pytest.fixture(scope="module")
def mounted(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """One mount for the module's read-only checks (a mount takes seconds to start)."""
    mountpoint = tmp_path_factory.mktemp("mount") / "mnt"
    mountpoint.mkdir()
    (mountpoint.parent / "tmp").mkdir()  # the mount's own TMPDIR: its cache directory goes there
    proc = _mount(site, mountpoint, env=dict(site.env, TMPDIR=str(mountpoint.parent / "tmp")))
    try:
        _wait_mounted(proc, mountpoint)
        yield mountpoint, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if os.path.ismount(mountpoint):  # never leave a mount behind, even when a test failed
            subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], check=False)


def test_mount_lists_the_bucket_with_sizes(site: Site, mounted: tuple[Path, subprocess.Popen[bytes]]) -> None:
    mnt, _ = mounted
    found = {str(p.relative_to(mnt)): p.stat().st_size for p in mnt.rglob("*") if p.is_file() or
             p.stat().st_mode & 0o777 == 0}
    assert found == {**{k: len(v) for k, v in site.files.items()}, "cold/x.dat": 5000}
    assert sorted(os.listdir(mnt)) == ["a.txt", "cold", "dir", "empty"]
    assert (mnt / "dir" / "sub").is_dir()


def test_mount_reads_whole_files_and_ranges(site: Site, mounted: tuple[Path, subprocess.Popen[bytes]]) -> None:
    mnt, _ = mounted
    for key, body in site.files.items():
        assert (mnt / key).read_bytes() == body
    big = site.files["dir/b.bin"]
    with open(mnt / "dir" / "b.bin", "rb") as f:
        for offset, n in ((MiB - 10, 20), (3 * MiB, 20000), (5, 2 * MiB + 7)):
            f.seek(offset)
            assert f.read(n) == big[offset:offset + n]
    with pytest.raises(OSError) as exc:
        open(mnt / "a.txt", "r+b")  # noqa: SIM115
    assert exc.value.errno in (errno.EROFS, errno.EACCES)
    if os.geteuid() == 0:  # root widens the kernel's read-ahead of the mount to one block (--block-mb 1)
        dev = os.stat(mnt).st_dev
        assert Path(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb").read_text().strip() == "1024"


def test_archived_object_is_listed_but_refuses_reads_and_tells_its_state(
        site: Site, mounted: tuple[Path, subprocess.Popen[bytes]]) -> None:
    mnt, _ = mounted
    cold = mnt / "cold" / "x.dat"
    assert cold.stat().st_size == 5000
    with pytest.raises(OSError) as exc:
        cold.read_bytes()
    assert exc.value.errno in (errno.EACCES, errno.ENODATA)
    assert os.getxattr(cold, "user.tierpilot.restore") == b"archived"
    assert os.getxattr(cold, "user.tierpilot.storage_class") == b"GLACIER"
    assert os.getxattr(mnt / "a.txt", "user.tierpilot.restore") == b"none"


def test_sigusr1_refreshes_the_tree(site: Site, mounted: tuple[Path, subprocess.Popen[bytes]]) -> None:
    mnt, proc = mounted
    site.client.put_object(Bucket=site.bucket, Key="late/new.txt", Body=b"new")
    assert not (mnt / "late").exists()
    proc.send_signal(signal.SIGUSR1)
    wait_until((mnt / "late" / "new.txt").exists, message="refresh did not show the new key")
    assert (mnt / "late" / "new.txt").read_bytes() == b"new"
    site.client.delete_object(Bucket=site.bucket, Key="late/new.txt")


def test_mount_refuses_a_wrong_secret_and_another_users_bucket(site: Site) -> None:
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction
    from tierpilot.mount.snapshot import SnapshotError, snapshot

    key, secret = site.env["AWS_ACCESS_KEY_ID"], site.env["AWS_SECRET_ACCESS_KEY"]
    assert snapshot(site.bucket, "", key, secret).files >= len(site.files)
    with pytest.raises(SnapshotError, match="secret does not match"):
        snapshot(site.bucket, "", key, "not-the-secret")
    with transaction(write=True) as s:
        _, other = auth.create_user(s, f"other-{uuid.uuid4().hex[:8]}", "other-password-1")
    with pytest.raises(SnapshotError, match="no bucket"):
        snapshot(site.bucket, "", other.access_key_id, other.secret_access_key)


def _readahead_bytes(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/_tierpilot/metrics", timeout=10).text
    return {kind: float(value) for kind, value in
            re.findall(r'^tierpilot_gateway_readahead_bytes_total\{kind="(\w+)"\} (\S+)$', text, re.M)}


def test_gateway_reads_a_remote_tier_ahead(site: Site) -> None:
    """A whole-object GET of 20 MiB: all but the first 8 MiB block fetched ahead and served; successive ranged
    GETs of one client: predicted from the third on and served from what was fetched ahead."""
    body = os.urandom(20 * MiB)
    site.client.put_object(Bucket=site.bucket, Key="big.bin", Body=body)
    before = _readahead_bytes(site.url)
    assert site.client.get_object(Bucket=site.bucket, Key="big.bin")["Body"].read() == body
    after = _readahead_bytes(site.url)
    assert after["prefetched"] - before.get("prefetched", 0) == 12 * MiB
    assert after["used"] - before.get("used", 0) == 12 * MiB
    got = b"".join(site.client.get_object(Bucket=site.bucket, Key="big.bin", Range=f"bytes={lo}-{lo + MiB - 1}")
                   ["Body"].read() for lo in range(0, 8 * MiB, MiB))
    assert got == body[:8 * MiB]
    ranged = _readahead_bytes(site.url)
    assert ranged["used"] - after["used"] >= 5 * MiB  # requests 4..8 came from read-ahead
    site.client.delete_object(Bucket=site.bucket, Key="big.bin")


def test_ctrl_c_unmounts_and_leaves_nothing(site: Site, mounted: tuple[Path, subprocess.Popen[bytes]]) -> None:
    """Last of the module: ends the module's mount."""
    mountpoint, proc = mounted
    assert (mountpoint / "dir" / "b.bin").read_bytes() == site.files["dir/b.bin"]  # fills the block cache
    caches = glob.glob(str(mountpoint.parent / "tmp" / "tierpilot-mount-*"))
    assert len(caches) == 1 and os.listdir(caches[0])
    proc.send_signal(signal.SIGINT)
    code = proc.wait(15)
    assert code == 0, proc.stdout.read() if proc.stdout else b""
    assert not os.path.ismount(mountpoint)
    assert os.listdir(mountpoint) == []
    assert glob.glob(str(mountpoint.parent / "tmp" / "*")) == []  # its cache directory is gone
