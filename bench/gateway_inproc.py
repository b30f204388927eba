"""The gateway's own CPU per small request, in process: the ASGI app called directly (no uvicorn, no sockets).

What the socket benchmarks (`bench/small_objects.py`) cannot tell apart: the gateway's code from the server stack
and the kernel it shares with the bare app. An installation like small_objects' (scratch SQLite or PostgreSQL,
one posix tier, one admin with a key) is seeded with 256 1 KiB objects through its gateway process; then this
process starts the gateway app itself and sends it presigned GET or HEAD requests of those keys, `--concurrency`
at a time on one event loop, and prints the process CPU time per request of each batch and their median.
`--profile` prints cProfile's top functions of one more batch (by cumulative time; `PROFILE_SORT=tottime`: by
their own time). To compare two checkouts, run each with `PYTHONPATH=<checkout>/backend:<checkout>` alternately:
the figures are CPU time, fairly steady on a loaded machine, but quote medians of a few runs.

Run: .venv/bin/python bench/gateway_inproc.py [--op HEAD|GET] [--requests 3000] [--batches 5] [--concurrency 16]
         [--db postgresql] [--redis redis://127.0.0.1:6379/9] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import time
from typing import Any

from bench.figures import Run, record
from bench.gateway_throughput import Presigner
from bench.small_objects import BODY, SEEDS, Installation, _put

WARM_UP = 500


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", choices=("HEAD", "GET"), default="HEAD")
    parser.add_argument("--requests", type=int, default=3000, help="requests per batch")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres-url", default=os.environ.get(
        "TIERPILOT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis", default="", help="TIERPILOT_REDIS_URL (default none)")
    parser.add_argument("--profile", action="store_true", help="then cProfile one more batch")
    args = parser.parse_args()
    run = Run()
    inst = Installation(args.db, args.postgres_url, None, args.redis)
    try:
        signer = Presigner(inst.urls["gateway"], inst.key_id, inst.secret)
        body = os.urandom(BODY)
        for i in range(SEEDS):
            _put(inst.urls["gateway"], signer, f"seed-{i}", body)
        import uvloop

        cpu_us = uvloop.run(_measure(args, signer, inst.urls["gateway"].removeprefix("http://")))
    finally:
        inst.close()
    setup = ("SQLite" if args.db == "sqlite" else "PostgreSQL") + (" + Redis" if args.redis else "")
    record([run.row(f"inproc.{args.op.lower()}.{args.db}", f"1 KiB {args.op}, the gateway's own CPU in process (ASGI "
                    f"app called directly), {setup}", cpu_us, "µs")])


async def _measure(args: argparse.Namespace, signer: Presigner, host: str) -> float:
    """The median CPU µs per request of the batches."""
    from tierpilot.app import wiring
    from tierpilot.gateway.app import Gateway

    gateway = Gateway(wiring.GATEWAY_EXTENSIONS, wiring.install)
    await gateway.startup()
    # signed beforehand: the client's signing is not the gateway's CPU (valid for X-Amz-Expires, 900 s)
    targets = [signer.path(args.op, f"seed-{i % SEEDS}").partition("?") for i in range(args.requests + WARM_UP)]
    failed: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start" and message["status"] != 200:
            failed.append(message["status"])

    async def one(i: int) -> None:
        path, _, query = targets[i]
        scope = {"type": "http", "method": args.op, "path": path, "raw_path": path.encode(),
                 "query_string": query.encode(), "headers": [(b"host", host.encode()),
                                                             (b"user-agent", b"bench/gateway_inproc")],
                 "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80), "scheme": "http",
                 "http_version": "1.1", "asgi": {"version": "3.0"}}
        await gateway(scope, receive, send)

    async def batch(first: int, n: int) -> None:
        slots = asyncio.Semaphore(args.concurrency)

        async def limited(i: int) -> None:
            async with slots:
                await one(i)

        await asyncio.gather(*(limited(i) for i in range(first, first + n)))

    try:
        await batch(args.requests, WARM_UP)
        per_request = []
        for _ in range(args.batches):
            started = time.process_time()
            await batch(0, args.requests)
            per_request.append((time.process_time() - started) / args.requests * 1e6)
        print(f"{args.op}, {args.db}, Redis {args.redis or 'none'}, {args.concurrency} at a time: CPU µs per request "
              f"median {statistics.median(per_request):.1f} (batches of {args.requests}: "
              f"{', '.join(f'{x:.1f}' for x in per_request)}); non-200 answers {len(failed)}; "
              f"load {os.getloadavg()[0]:.1f}")
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            await batch(0, args.requests)
            profiler.disable()
            stats = pstats.Stats(profiler)
            calls = sum(v[1] for v in stats.stats.values())  # type: ignore[attr-defined]
            print(f"Python function calls per request: {calls / args.requests:.0f}")
            stats.sort_stats(os.environ.get("PROFILE_SORT", "cumulative")).print_stats(30)
        return statistics.median(per_request)
    finally:
        await gateway.shutdown()


if __name__ == "__main__":
    main()
