"""Cost of metering the data path: a flow per request (open, 4 chunks, close) through the spend domain's
metering wrapper against the bare best-effort policy, measured in the same run.

    .venv/bin/python bench/spend.py [--flows 50000] [--runs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from tierpilot.kit.flow import BestEffortPolicy, FlowPolicy, FlowRequest
from tierpilot.spend.metering import Meter, MeteringPolicy


async def _drive(policy: FlowPolicy, flows: int) -> float:
    requests = [FlowRequest(reservation_id=None, user_id=i % 50, is_admin=False, bucket="b", bucket_id=i % 20,
                            direction="read" if i % 3 else "write", expected_bytes=None) for i in range(flows)]
    started = time.perf_counter()
    for r in requests:
        flow = await policy.open(r)
        for _ in range(4):
            await flow.consume(1 << 20)
        await flow.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    bare, metered = [], []
    for _ in range(args.runs):
        bare.append(asyncio.run(_drive(BestEffortPolicy(), args.flows)))
        counter = Meter()
        metered.append(asyncio.run(_drive(MeteringPolicy(BestEffortPolicy(), counter), args.flows)))
        assert sum(n for *_, n, _b in counter.take()) == args.flows
    b, m = statistics.median(bare), statistics.median(metered)
    print(f"flows per run: {args.flows}, runs: {args.runs}")
    print(f"bare best-effort policy: median {b / args.flows * 1e6:.2f} µs per request")
    print(f"metered:                 median {m / args.flows * 1e6:.2f} µs per request")
    print(f"metering adds {(m - b) / args.flows * 1e6:.2f} µs per request (ratio {m / b:.2f}x of the bare flow path)")


if __name__ == "__main__":
    main()
