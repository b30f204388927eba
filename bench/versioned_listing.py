"""Listing speed of a versioned bucket: a prefix page of 1,000 keys among ``--rows`` objects.

Two buckets get the same ``--rows`` current objects (keys ``runNN/evt/NNNNNNN.root``, 100,000 per run
folder); the versioned one also gets ``--versions`` noncurrent versions per object and a delete marker on
every 50th key, as ``object_versions`` rows. Timed, at random positions inside one run folder: the
catalog's ListObjectsV2 page (``catalog.service.list_objects``, 1,000 keys) on the versioned bucket and,
as the baseline measured in the same run, on the unversioned one; and a ListObjectVersions page of 1,000
entries (``catalog.versions.list_versions``). Printed: p50/p99 in ms and the ratio versioned/unversioned.

Run: .venv/bin/python bench/versioned_listing.py [--rows 1000000] [--versions 1] [--pages 200] [--postgres]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PER_RUN = 100_000


def _key(i: int) -> str:
    return f"run{i // PER_RUN:02d}/evt/{i:07d}.root"


def setup(tag: str) -> tuple[int, int, int]:
    """(tier id, unversioned bucket id, versioned bucket id)."""
    from tierpilot.auth import service as auth
    from tierpilot.catalog import repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    with transaction(write=True) as s:
        owner, _ = auth.create_user(s, f"bench-{tag}", "bench-password-1", is_admin=True)
        hot = tiers.create(s, TierCreate(name=f"hot-{tag}", driver="posix", config={"path": f"{tag}/hot"},
                                         storage_classes=["STANDARD"]))
        plain = catalog.create_bucket(s, owner_id=owner.id, name=f"plain-{tag}", tier_name=hot.name)
        versioned = catalog.create_bucket(s, owner_id=owner.id, name=f"versioned-{tag}", tier_name=hot.name)
        s.flush()
        repository.set_bucket_settings(s, versioned.id, versioning="Enabled")
        return hot.id, plain.id, versioned.id


def fill(tier_id: int, bucket_id: int, rows: int, versions: int, progress: bool) -> None:
    """Synthetic rows straight into the tables (what the gateway would write, without the bytes)."""
    from sqlalchemy import insert

    from tierpilot.catalog.models import Object, ObjectVersion
    from tierpilot.kit.db import transaction, utcnow

    now = utcnow()
    common = dict(bucket_id=bucket_id, size=1024, etag="0" * 32, tier_id=tier_id, storage_class="STANDARD",
                  created_at=now, last_modified=now, content_type="application/octet-stream", user_metadata={},
                  headers={}, tags={})
    chunk = 20_000
    for start in range(0, rows, chunk):
        current, older = [], []
        for i in range(start, min(rows, start + chunk)):
            key = _key(i)
            current.append(dict(common, key=key, locator=f"b/{key}~{uuid.uuid4().hex}",
                                version_id=uuid.uuid4().hex if versions else "null"))
            for _ in range(versions):
                older.append(dict(common, key=key, locator=f"b/{key}~{uuid.uuid4().hex}", delete_marker=False,
                                  version_id=uuid.uuid4().hex, noncurrent_since=now))
            if versions and i % 50 == 0:
                older.append(dict(common, key=key, locator="", tier_id=None, size=0, delete_marker=True,
                                  version_id=uuid.uuid4().hex, noncurrent_since=now))
        with transaction(write=True) as s:
            s.execute(insert(Object), current)
            if older:
                s.execute(insert(ObjectVersion), older)
        if progress:
            print(f"  bucket {bucket_id}: {min(rows, start + chunk):,}/{rows:,}", end="\r", file=sys.stderr)
    if progress:
        print(file=sys.stderr)


def timed(pages: int, rows: int, page: Callable[[Any, str, str], int]) -> list[float]:
    """Milliseconds per page at random markers inside one run folder (same seed for every listing)."""
    from tierpilot.kit.db import transaction

    folder = min(rows - 1, PER_RUN * (rows // PER_RUN // 2))
    prefix = _key(folder).split("/")[0] + "/"
    span = min(PER_RUN, rows - folder) - 1000
    rng = random.Random(7)
    out = []
    for _ in range(pages):
        marker = _key(folder + rng.randrange(max(1, span)))
        t0 = time.perf_counter()
        with transaction() as s:
            n = page(s, prefix, marker)
        out.append((time.perf_counter() - t0) * 1000)
        assert n == 1000, n
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--versions", type=int, default=1, help="noncurrent versions per object")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="tierpilot-bench-versions-"))
    server = None
    drop_database = None
    if args.postgres:
        from tests.servers import create_database, start_postgres

        server = start_postgres()
        url, drop_database = create_database(server.url, "bench_versions")
    else:
        url = f"sqlite:///{workdir / 'tierpilot.db'}"
    os.environ.update(TIERPILOT_DATA_DIR=str(workdir), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
                      TIERPILOT_SECRET_KEY="bench-secret-key")
    os.environ.pop("TIERPILOT_REDIS_URL", None)
    try:
        from sqlalchemy import text

        from tierpilot.catalog import service as catalog
        from tierpilot.catalog import versions
        from tierpilot.kit.db import transaction
        from tierpilot.kit.migrate import upgrade

        upgrade(url)
        from tierpilot import wiring

        wiring.install()
        tier_id, plain, versioned = setup(uuid.uuid4().hex[:6])
        fill(tier_id, plain, args.rows, 0, True)
        fill(tier_id, versioned, args.rows, args.versions, True)
        with transaction(write=True) as s:
            s.execute(text("ANALYZE"))

        def objects(bucket_id: int) -> Callable[[Any, str, str], int]:
            return lambda s, prefix, marker: len(catalog.list_objects(s, bucket_id, prefix, "", marker, 1000).objects)

        def version_page(s: Any, prefix: str, marker: str) -> int:
            return len(versions.list_versions(s, versioned, prefix, "", marker, "", 1000).entries)

        timed(20, args.rows, objects(plain))  # warm caches for both
        base = timed(args.pages, args.rows, objects(plain))
        vers = timed(args.pages, args.rows, objects(versioned))
        lov = timed(args.pages, args.rows, version_page)
        db = "PostgreSQL" if args.postgres else "SQLite (WAL)"
        print(f"{db}: {args.rows:,} objects per bucket, {args.versions} noncurrent version(s) each + a delete marker "
              f"per 50 keys in the versioned one; {args.pages} pages of 1,000 at random markers in one prefix")
        print("| listing | p50 ms | p99 ms |")
        print("|---|---|---|")
        for name, values in (("ListObjectsV2, unversioned bucket (baseline)", base),
                             ("ListObjectsV2, versioned bucket", vers), ("ListObjectVersions, versioned bucket", lov)):
            print(f"| {name} | {statistics.median(values):.2f} | {p(values, 99):.2f} |")
        print(f"ratio versioned/unversioned ListObjectsV2 p50 {statistics.median(vers) / statistics.median(base):.2f}, "
              f"p99 {p(vers, 99) / p(base, 99):.2f}")
        print(f"load: {os.getloadavg()[0]:.2f} (1 min)")
    finally:
        if drop_database is not None:
            drop_database()
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
