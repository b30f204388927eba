"""A PUT load client for the A/B scripts: one process of keep-alive connections PUTting new 1 KiB keys back to
back with presigned URLs (no signing cost in the timed loop), counting answers by kind."""

from __future__ import annotations

import http.client
import os
import threading
import time
from typing import Any

from bench.gateway_throughput import Presigner

BODY = 1024


def put_client(args: tuple[str, str, str, str, int, int, float, float]) -> dict[str, int]:
    """One client process: ``threads`` keep-alive connections PUTting new keys back to back into ``bucket``."""
    endpoint, key_id, secret, bucket, proc, threads, start_at, seconds = args
    signer = Presigner(endpoint, key_id, secret)
    host, port = endpoint.removeprefix("http://").split(":")
    body = os.urandom(BODY)
    out = {"ok": 0, "slowdown": 0, "failed": 0}
    lock = threading.Lock()

    def one(thread: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        counts = dict.fromkeys(out, 0)
        i = 0
        while time.time() < start_at:
            time.sleep(0.001)
        while time.time() < start_at + seconds:
            key = f"k/{proc}-{thread}-{i}-{start_at}"
            i += 1
            try:
                conn.request("PUT", signer.path("PUT", key, bucket), body=body)
                r = conn.getresponse()
                r.read()
                counts["ok" if r.status == 200 else "slowdown" if r.status == 503 else "failed"] += 1
            except (OSError, http.client.HTTPException):
                counts["failed"] += 1
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.close()
        with lock:
            for k, v in counts.items():
                out[k] += v

    pool = [threading.Thread(target=one, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return out


CLIENT_PROCS = 4  # client processes; the clients are spread over them


def round_rate(pool: Any, url: str, key_id: str, secret: str, bucket: str, clients: int, seconds: float
               ) -> tuple[float, int, int]:
    """PUTs/s of one round of ``clients`` over ``pool``'s processes, and its 503s and other failures."""
    per = [clients // CLIENT_PROCS + (1 if p < clients % CLIENT_PROCS else 0) for p in range(CLIENT_PROCS)]
    start_at = time.time() + 0.3
    results = pool.map(put_client, [(url, key_id, secret, bucket, p, per[p], start_at, seconds)
                                    for p in range(CLIENT_PROCS)])
    return (sum(r["ok"] for r in results) / seconds, sum(r["slowdown"] for r in results),
            sum(r["failed"] for r in results))
