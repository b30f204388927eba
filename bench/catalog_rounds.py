"""The catalog side of small PUTs alone (issue 18): rounds of PutObject rows written by ``store._record_round``
straight into a scratch database, no HTTP, no tier I/O. Prints the client CPU (this process: SQLAlchemy, the
driver, the catalog's Python) and the wall time per row, and the statements per round, for rounds of 1, 16 and
64 new keys and of 64 overwrites, and for 64 new keys each in a round (a transaction) of its own, as PostgreSQL
wrote every PUT before issue 18's rounds there; each the median of ``--repeat`` repetitions. Run it under
another checkout's ``PYTHONPATH`` to compare two versions of the catalog code on the same machine.

Run: .venv/bin/python bench/catalog_rounds.py [--db postgresql] [--repeat 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.figures import Run, record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres-url", default=os.environ.get(
        "TIERPILOT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    run = Run()
    cpu_per_row: dict[str, float] = {}

    tmp = Path(tempfile.mkdtemp(prefix="tierpilot-bench-rounds-"))
    url, drop = f"sqlite:///{tmp / 'tierpilot.db'}", None
    if args.db == "postgresql":
        from tests.servers import create_database

        url, drop = create_database(args.postgres_url, "bench_rounds")
    os.environ.update(TIERPILOT_DATA_DIR=str(tmp), TIERPILOT_SECRET_KEY="bench-secret", TIERPILOT_DATABASE_URL=url,
                      TIERPILOT_SEED_DEMO="false")
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()  # whatever imported it before read no scratch database
    from sqlalchemy import event

    from tierpilot.app import wiring
    from tierpilot.auth import service as auth
    from tierpilot.catalog import service, store
    from tierpilot.kit.db import get_engine, transaction
    from tierpilot.kit.migrate import upgrade
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.repository import spec_of
    from tierpilot.tiers.schemas import TierCreate

    wiring.install()
    upgrade()
    try:
        with transaction(write=True) as s:
            tier = tiers.create(s, TierCreate(name="bench", driver="posix", config={"path": "bench"}))
            user, _key = auth.create_user(s, "bench", "bench-password", is_admin=True)
            s.flush()
            bucket = service.create_bucket(s, owner_id=user.id, name="bench", tier_name="bench")
            s.flush()
            spec = store.NewObject(tier=spec_of(tier), storage_class="STANDARD")
            s.expunge(bucket)
        statements = [0]

        def count(*_args: Any) -> None:
            statements[0] += 1

        event.listen(get_engine(), "before_cursor_execute", count)

        def rows(n: int, keys: list[str] | None = None) -> list[Any]:
            names = keys or [f"k/{uuid.uuid4().hex}" for _ in range(n)]
            return [store._Row(bucket, key, spec, f"bench/{key}~{uuid.uuid4().hex}", size=1024, etag="e" * 32,
                               checksum_value=None, checksum_algorithm=None) for key in names]

        print(f"{args.db}: CPU and wall time per row (medians of {args.repeat} rounds), statements per round")
        print("| round | CPU µs/row | wall µs/row | statements |")
        print("|---|---:|---:|---:|")
        for label, n, overwrite, alone in (("1 new key", 1, False, False), ("16 new keys", 16, False, False),
                                           ("64 new keys", 64, False, False), ("64 overwrites", 64, True, False),
                                           ("64 new keys, a round each", 64, False, True)):
            cpu: list[float] = []
            wall: list[float] = []
            counted: list[int] = []
            fixed = [f"o/{i}" for i in range(n)]
            for _ in range(args.repeat):
                batch = rows(n, fixed if overwrite else None)
                statements[0] = 0
                c0, w0 = time.process_time(), time.perf_counter()
                outcomes = ([o for row in batch for o in store._record_round([row])] if alone
                            else store._record_round(batch))
                c1, w1 = time.process_time(), time.perf_counter()
                assert not any(isinstance(o, BaseException) for o in outcomes), outcomes
                cpu.append((c1 - c0) / n * 1e6)
                wall.append((w1 - w0) / n * 1e6)
                counted.append(statements[0])
            cpu_per_row[label] = statistics.median(cpu)
            print(f"| {label} | {cpu_per_row[label]:,.0f} | {statistics.median(wall):,.0f} | "
                  f"{statistics.median(counted):.0f} |")
    finally:
        get_engine().dispose()
        if drop is not None:
            drop()
    record([run.row("catalog.round_64", "catalog round of 64 new PutObject rows, client CPU per row, "
                    f"{'SQLite' if args.db == 'sqlite' else 'PostgreSQL'}", cpu_per_row["64 new keys"], "µs",
                    "the same 64 rows, a round each", cpu_per_row["64 new keys, a round each"])])


if __name__ == "__main__":
    main()
