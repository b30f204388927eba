"""Listing speed of a versioned bucket of ``--rows`` objects, through a real gateway process.

One versioned bucket gets ``--rows`` current objects (keys ``runNN/evt/NNNNNNN.root``, 100,000 per run folder),
``--versions`` noncurrent versions per object and a delete marker on every 50th key, written as rows straight
into the tables. A ``tierpilot gateway`` process serves it; a keep-alive HTTP client signs each request
beforehand and times it from sending to the last byte of the answer. Shapes, each at ``--pages`` random
markers (same seed for every series):

- ListObjectsV2 and ListObjectVersions pages of 1,000 inside one run folder (``prefix=runNN/``: the issue's
  "prefix page"), without a prefix, and with ``prefix=runNN/evt/&delimiter=/``;
- both with ``delimiter=/`` at the top of the bucket: ten common prefixes, each skipping a 100,000-key folder;
- ListObjectVersions' prefix page resumed inside a key, as a client's next page is (``version-id-marker``: the
  marker key's current version, so the page starts with its noncurrent ones).

Baseline, measured in the same run on the same database: the bare SQL of the same page (the range reads the
answer needs, on a raw DBAPI connection, no Python beyond fetching), so gateway/SQL says what the gateway adds.
Printed: p50/p99 ms of both, their ratio, the gateway process's CPU per page, and the load.

``--baseline REV`` also runs a gateway on the backend of that git revision (``git archive``, first on PYTHONPATH)
against the same catalog. Pages are timed interleaved, marker by marker (each gateway, then the bare SQL), so the
series share the machine's load as it moves; every answer of the two gateways is compared byte for byte. A series
stops after ``--budget`` seconds (a slow baseline's), its page count printed.

``--keep NAME`` keeps the filled catalog (SQLite file under the temp dir, or a PostgreSQL database NAME) and
reuses it in the next run: the fill of 1,000,000 rows takes minutes; migrations run on it at every start, so an
index a new revision adds is built on the filled tables (its time is printed).

Run: .venv/bin/python bench/versioned_listing.py [--rows 1000000] [--versions 1] [--pages 200] [--postgres]
     [--keep NAME] [--baseline REV] [--budget 60] [--only TEXT] [--redis]
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "backend"))

from bench.figures import Run, record  # noqa: E402
from tests.gateway.rawclient import EMPTY, sign  # noqa: E402
from tests.servers import create_database, free_port, start_postgres, start_redis, wait_port  # noqa: E402

PER_RUN = 100_000
BUCKET = "versioned-bench"
TICK = os.sysconf("SC_CLK_TCK")


def _key(i: int) -> str:
    return f"run{i // PER_RUN:02d}/evt/{i:07d}.root"


def setup() -> tuple[int, int, tuple[str, str]]:
    """(tier id, bucket id, the lister's (key id, secret))."""
    from tierpilot.auth import service as auth
    from tierpilot.catalog import repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    with transaction(write=True) as s:
        owner, key = auth.create_user(s, "bench-lister", "bench-password-1", is_admin=True)
        hot = tiers.create(s, TierCreate(name="hot", driver="posix", config={"path": "hot"},
                                         storage_classes=["STANDARD"]))
        bucket = catalog.create_bucket(s, owner_id=owner.id, name=BUCKET, tier_name=hot.name)
        s.flush()
        repository.set_bucket_settings(s, bucket.id, versioning="Enabled")
        return hot.id, bucket.id, (key.access_key_id, key.secret_access_key)


def fill(tier_id: int, bucket_id: int, rows: int, versions: int) -> None:
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
            for _ in range(versions):
                older.append(dict(common, key=key, locator=f"b/{key}~{uuid.uuid4().hex}", delete_marker=False,
                                  version_id=uuid.uuid4().hex, noncurrent_since=now))
            if versions and i % 50 == 0:
                older.append(dict(common, key=key, locator="", tier_id=None, size=0, delete_marker=True,
                                  version_id=uuid.uuid4().hex, noncurrent_since=now))
            current.append(dict(common, key=key, locator=f"b/{key}~{uuid.uuid4().hex}",
                                version_id=uuid.uuid4().hex))
        with transaction(write=True) as s:
            s.execute(insert(Object), current)
            if older:
                s.execute(insert(ObjectVersion), older)
        print(f"  {min(rows, start + chunk):,}/{rows:,}", end="\r", file=sys.stderr)
    print(file=sys.stderr)


def p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def export_backend(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev, "backend"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "backend"


def start_gateway(env: dict[str, str], workdir: Path) -> tuple[subprocess.Popen[bytes], http.client.HTTPConnection,
                                                                int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--port", str(port), "--log-level",
                             "warning"], env=env, cwd=ROOT, stdout=open(workdir / "gateway.log", "ab"),  # noqa: SIM115
                            stderr=subprocess.STDOUT)
    wait_port(port, 60)
    return proc, http.client.HTTPConnection("127.0.0.1", port, timeout=120), port


def figure(run: Run, api: str, args: argparse.Namespace, gw_ms: list[float], sql_ms: list[float]) -> dict[str, Any]:
    """A prefix page's p99 through the gateway against the bare SQL of the same pages, as a row of the current
    figures."""
    setup = ("PostgreSQL" if args.postgres else "SQLite") + (" + Redis" if args.redis else "")
    if api == "ListObjectsV2":
        return run.row(f"listing.v2_p99.{'postgresql' if args.postgres else 'sqlite'}", f"ListObjectsV2 prefix page "
                       f"of 1,000 keys among {args.rows:,} (versioned) p99, {setup} (target < 20 ms)", p(gw_ms, 99),
                       "ms", "bare SQL of the same page, p99", p(sql_ms, 99))
    return run.row(f"listing.versions_p99.{'postgresql' if args.postgres else 'sqlite'}", f"ListObjectVersions "
                   f"prefix page of 1,000 entries among {args.rows:,} p99, {setup}", p(gw_ms, 99), "ms",
                   "bare SQL of the same page, p99", p(sql_ms, 99))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--versions", type=int, default=1, help="noncurrent versions per object")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL (TIERPILOT_TEST_POSTGRES_URL or a "
                        "throwaway cluster) instead of SQLite")
    parser.add_argument("--baseline", metavar="REV", help="also time a gateway running the backend of this git "
                        "revision on the same catalog (answers compared byte for byte)")
    parser.add_argument("--budget", type=float, default=60, help="seconds a series may take before it stops")
    parser.add_argument("--keep", metavar="NAME", help="keep the filled catalog under this name and reuse it")
    parser.add_argument("--redis", action="store_true", help="give the gateways a private Redis, as a deployment "
                        "on PostgreSQL has: without one, PostgreSQL keeps no credentials generation and every request "
                        "reads its access key from the database")
    parser.add_argument("--only", metavar="TEXT", help="time only the shapes whose name contains TEXT (e.g. "
                        '"prefix page"): more pages for a steadier p99 in the same minutes')
    args = parser.parse_args()
    run = Run()
    figures: list[dict[str, Any]] = []

    keep_dir = Path(tempfile.gettempdir()) / f"tierpilot-bench-{args.keep}" if args.keep else None
    workdir = keep_dir or Path(tempfile.mkdtemp(prefix="tierpilot-bench-versions-"))
    workdir.mkdir(parents=True, exist_ok=True)
    server = drop_database = None
    procs: list[subprocess.Popen[bytes]] = []
    if args.postgres:
        server = start_postgres()
        if args.keep:
            from sqlalchemy import create_engine, text
            from sqlalchemy.engine import make_url

            url = make_url(server.url).set(database=args.keep).render_as_string(hide_password=False)
            admin = create_engine(server.url, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                if conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": args.keep}) is None:
                    conn.execute(text(f'CREATE DATABASE "{args.keep}"'))
            admin.dispose()
        else:
            url, drop_database = create_database(server.url, "bench_versions")
    else:
        url = f"sqlite:///{workdir / 'tierpilot.db'}"
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(workdir), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
               TIERPILOT_SECRET_KEY="bench-secret-key", TIERPILOT_DEFAULT_TIER="hot")
    env.pop("TIERPILOT_REDIS_URL", None)
    redis = start_redis() if args.redis else None
    if redis is not None:
        env["TIERPILOT_REDIS_URL"] = redis.url
    os.environ.clear()
    os.environ.update(env)
    try:
        from tierpilot.kit.db import get_engine, transaction
        from tierpilot.kit.migrate import upgrade

        t0 = time.perf_counter()
        upgrade(url)
        migrate_s = time.perf_counter() - t0
        from tierpilot.app import wiring

        wiring.install()
        state = workdir / (f"state-{args.keep}.json" if args.postgres else "state.json")
        if state.exists():
            bucket_id, creds_list = json.loads(state.read_text())
            creds = (creds_list[0], creds_list[1])
        else:
            tier_id, bucket_id, creds = setup()
            fill(tier_id, bucket_id, args.rows, args.versions)
            with transaction(write=True) as s:
                s.connection().exec_driver_sql("ANALYZE")
            if args.keep:
                state.write_text(json.dumps([bucket_id, list(creds)]))

        gateways: dict[str, tuple[subprocess.Popen[bytes], http.client.HTTPConnection, int]] = {}
        if args.baseline:
            old = export_backend(args.baseline, workdir / "baseline")
            old_env = dict(env, PYTHONPATH=os.pathsep.join([str(old), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
            gateways[f"baseline {args.baseline}"] = start_gateway(old_env, workdir)
            procs.append(gateways[f"baseline {args.baseline}"][0])
        gateways["working tree"] = start_gateway(env, workdir)
        procs.append(gateways["working tree"][0])

        def request(gw: tuple[Any, http.client.HTTPConnection, int], query: dict[str, str]) -> bytes:
            _proc, conn, port = gw
            qs = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(query.items()))
            path = f"/{BUCKET}?{qs}"
            signed = sign("GET", f"http://127.0.0.1:{port}{path}", {}, EMPTY, *creds)
            conn.request("GET", path, headers=signed.headers)
            resp = conn.getresponse()
            body = resp.read()
            assert resp.status == 200, (resp.status, body[:300])
            return body

        raw = get_engine().raw_connection()
        cur = raw.cursor()
        pg = args.postgres
        mark = "%s" if pg else "?"

        def execute(sql: str, params: tuple[Any, ...]) -> list[Any]:
            cur.execute(sql.replace("?", mark), params)
            return list(cur.fetchall())

        listed = "key, size, etag, storage_class, last_modified"
        from tierpilot.catalog.repository import prefix_end

        def objects_range(lower: str, upper: str | None, limit: int) -> list[Any]:
            if upper is None:
                return execute(f"SELECT {listed} FROM objects WHERE bucket_id = ? AND key > ? ORDER BY key "
                               "LIMIT ?", (bucket_id, lower, limit))
            return execute(f"SELECT {listed} FROM objects WHERE bucket_id = ? AND key > ? AND key < ? "
                           "ORDER BY key LIMIT ?", (bucket_id, lower, upper, limit))

        def versions_range(lower: str, upper: str | None, limit: int) -> list[Any]:
            cols = f"{listed}, version_id, delete_marker"
            if upper is None:
                return execute(f"SELECT {cols} FROM object_versions WHERE bucket_id = ? AND key > ? "
                               "ORDER BY key, id DESC LIMIT ?", (bucket_id, lower, limit))
            return execute(f"SELECT {cols} FROM object_versions WHERE bucket_id = ? AND key > ? AND key < ? "
                           "ORDER BY key, id DESC LIMIT ?", (bucket_id, lower, upper, limit))

        def folders(_marker: str) -> int:
            # one seek per folder: the first key at or after the end of the previous one
            found, lower = 0, ""
            while True:
                row = execute("SELECT key FROM objects WHERE bucket_id = ? AND key >= ? ORDER BY key LIMIT 1",
                              (bucket_id, lower))
                if not row:
                    return found
                found += 1
                nxt = prefix_end(row[0][0].split("/")[0] + "/")
                assert nxt is not None
                lower = nxt

        folder = PER_RUN * (args.rows // PER_RUN // 2)
        run_prefix = _key(folder).split("/")[0] + "/"
        evt_prefix = run_prefix + "evt/"
        v2 = {"list-type": "2"}
        current: dict[str, str] = {}  # a marker's current version id (filled below)
        shapes = [
            ("ListObjectsV2", "prefix page (prefix=runNN/)",
             lambda m: dict(v2, prefix=run_prefix, **{"start-after": m}),
             lambda m: len(objects_range(m, prefix_end(run_prefix), 1000))),
            ("ListObjectsV2", "no prefix", lambda m: dict(v2, **{"start-after": m}),
             lambda m: len(objects_range(m, None, 1000))),
            ("ListObjectsV2", "prefix=runNN/evt/ delimiter=/", lambda m: dict(v2, prefix=evt_prefix, delimiter="/",
                                                                              **{"start-after": m}),
             lambda m: len(objects_range(m, prefix_end(evt_prefix), 1000))),
            ("ListObjectsV2", "delimiter=/ at the top (10 folders of 100,000)", lambda m: dict(v2, delimiter="/"),
             folders),
            ("ListObjectVersions", "prefix page (prefix=runNN/)",
             lambda m: {"versions": "", "prefix": run_prefix, "key-marker": m},
             lambda m: len(objects_range(m, prefix_end(run_prefix), 1000))
             + len(versions_range(m, prefix_end(run_prefix), 1000))),
            ("ListObjectVersions", "no prefix", lambda m: {"versions": "", "key-marker": m},
             lambda m: len(objects_range(m, None, 1000)) + len(versions_range(m, None, 1000))),
            ("ListObjectVersions", "prefix=runNN/evt/ delimiter=/",
             lambda m: {"versions": "", "prefix": evt_prefix, "delimiter": "/", "key-marker": m},
             lambda m: len(objects_range(m, prefix_end(evt_prefix), 1000))
             + len(versions_range(m, prefix_end(evt_prefix), 1000))),
            ("ListObjectVersions", "prefix page resumed inside a key (key-marker, version-id-marker)",
             lambda m: {"versions": "", "prefix": run_prefix, "key-marker": m, "version-id-marker": current[m]},
             lambda m: len(objects_range(m, prefix_end(run_prefix), 1000))
             + len(versions_range(m, prefix_end(run_prefix), 1000))),
            ("ListObjectVersions", "delimiter=/ at the top (10 folders of 100,000)",
             lambda m: {"versions": "", "delimiter": "/"}, folders),
        ]
        if args.only:
            shapes = [shape for shape in shapes if args.only in f"{shape[0]}, {shape[1]}"]
        span = min(PER_RUN, args.rows - folder) - 1000

        def markers() -> list[str]:
            rng = random.Random(7)
            return [_key(folder + rng.randrange(max(1, span))) for _ in range(args.pages)]

        # the version id of each marker's current version: a client's next page resumes inside the key that ended
        # the last one (NextKeyMarker, NextVersionIdMarker)
        for m in markers():
            current[m] = execute("SELECT version_id FROM objects WHERE bucket_id = ? AND key = ?", (bucket_id, m))[0][0]
        raw.rollback()
        for gw in gateways.values():  # warm: imports, caches, the first pages
            gw[1].close()
            for _api, _name, query, _sql in shapes:
                for m in markers()[:5]:
                    request(gw, query(m))
        rows_out = []
        for api, name, query, sql in shapes:
            for gw in gateways.values():
                # a fresh connection, opened untimed: the server closed the one left idle meanwhile
                gw[1].close()
                request(gw, query(markers()[0]))
            # interleaved, marker by marker (each gateway, then the bare SQL): the machine's load moves by the
            # minute, so series timed one after the other would compare two different loads
            times: dict[str, list[float]] = {label: [] for label in gateways}
            cpu: dict[str, float] = {label: 0.0 for label in gateways}
            answers: dict[str, list[bytes]] = {label: [] for label in gateways}
            sql_ms: list[float] = []
            for m in markers():
                for label, gw in gateways.items():
                    if sum(times[label]) > args.budget * 1000:
                        continue  # a slow series (a baseline's) stops early: its page count is printed
                    c0, t = cpu_seconds(gw[0].pid), time.perf_counter()
                    answers[label].append(request(gw, query(m)))
                    times[label].append((time.perf_counter() - t) * 1000)
                    cpu[label] += cpu_seconds(gw[0].pid) - c0
                t = time.perf_counter()
                n = sql(m)
                sql_ms.append((time.perf_counter() - t) * 1000)
                assert n > 0
            common = min(len(b) for b in answers.values())
            assert len({tuple(b[:common]) for b in answers.values()}) == 1, f"the gateways answered {name} differently"
            series = {label: (times[label], cpu[label] * 1000 / len(times[label])) for label in gateways}
            raw.rollback()
            for label, (gw_ms, cpu_ms) in series.items():
                pages = f" ({len(gw_ms)} pages)" if len(gw_ms) < args.pages else ""
                rows_out.append((f"{api}, {name}" + (f" — {label}" if args.baseline else "") + pages, gw_ms, sql_ms,
                                 cpu_ms))
                print(f"  {rows_out[-1][0]}: p50 {statistics.median(gw_ms):.2f} ms", file=sys.stderr, flush=True)
                if label == "working tree" and name == "prefix page (prefix=runNN/)":
                    figures.append(figure(run, api, args, gw_ms, sql_ms))
        db = "PostgreSQL" if pg else "SQLite (WAL)"
        print(f"{db}: one versioned bucket of {args.rows:,} objects, {args.versions} noncurrent version(s) each + "
              f"a delete marker per 50 keys; {args.pages} pages per shape at random markers in one run folder; "
              f"migrations at start {migrate_s:.1f} s" + ("; answers byte-identical" if args.baseline else "")
              + ("; gateways with a private Redis" if redis is not None else ""))
        print("| listing | gateway p50 ms | gateway p99 ms | bare SQL p50 ms | bare SQL p99 ms | ratio p50 | "
              "ratio p99 | gateway CPU ms/page |")
        print("|---|---|---|---|---|---|---|---|")
        for name, gw_ms, sql_ms, page_cpu in rows_out:
            print(f"| {name} | {statistics.median(gw_ms):.2f} | {p(gw_ms, 99):.2f} | {statistics.median(sql_ms):.2f} "
                  f"| {p(sql_ms, 99):.2f} | {statistics.median(gw_ms) / statistics.median(sql_ms):.2f} | "
                  f"{p(gw_ms, 99) / p(sql_ms, 99):.2f} | {page_cpu:.1f} |")
        print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
        cur.close()
        raw.close()
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(20)
        if drop_database is not None:
            drop_database()
        if server is not None:
            server.stop()
        if redis is not None:
            redis.stop()
        if keep_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    record(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
