"""What bucket event rules cost a small PUT: 1 KiB PUTs by 64 clients into a bucket with one webhook rule and one
AMQP rule vs a bucket without rules, A/B in one run.

One gateway process (`tierpilot gateway`) on a scratch SQLite database, one user and a posix tier; bucket "events"
has a notification configuration naming a webhook target (a receiver in this process answering 200 at once) and an
AMQP target (the machine's RabbitMQ on 127.0.0.1:5672, a scratch queue deleted at the end); bucket "plain" has none.
While the rounds run a drain in this process delivers the outbox as the worker would, so delivery competes for the
same two cores. Rounds alternate A, B, A, B, …; a 503 is counted, not retried. Records with rules ÷ without.

Run: .venv/bin/python bench/events.py [--clients 64] [--seconds 3] [--rounds 5] [--amqp URL]
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.figures import Run, record
from bench.putload import CLIENT_PROCS, round_rate
from tests.servers import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


class _Ok(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class Installation:
    def __init__(self, amqp_url: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tierpilot-bench-events-"))
        self.hook = ThreadingHTTPServer(("127.0.0.1", free_port()), _Ok)
        threading.Thread(target=self.hook.serve_forever, daemon=True).start()
        hook_port = self.hook.server_address[1]
        self.env = dict(os.environ, TIERPILOT_DATA_DIR=str(self.tmp), TIERPILOT_SECRET_KEY="bench-secret",
                        TIERPILOT_DATABASE_URL=f"sqlite:///{self.tmp / 'tierpilot.db'}", TIERPILOT_SEED_DEMO="false",
                        TIERPILOT_DEFAULT_TIER="bench", TIERPILOT_REDIS_URL="",
                        TIERPILOT_WEBHOOK_ALLOW_HOSTS=f"127.0.0.1:{hook_port}")
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("TIERPILOT_")})
        from tierpilot.app import wiring
        from tierpilot.auth import service as auth
        from tierpilot.catalog import service as catalog
        from tierpilot.events import service as events
        from tierpilot.kit.db import transaction
        from tierpilot.kit.migrate import upgrade
        from tierpilot.tiers import service as tiers
        from tierpilot.tiers.schemas import TierCreate

        upgrade()
        wiring.install()
        self.amqp_url, self.queue = amqp_url, f"tierpilot-bench-{uuid.uuid4().hex[:8]}"
        with transaction(write=True) as s:
            tiers.create(s, TierCreate(name="bench", driver="posix", config={"path": "bench"}))
            user, key = auth.create_user(s, "bench", "bench-password")
            self.key_id, self.secret = key.access_key_id, key.secret_access_key
            hook = events.add_target(s, "hook", "webhook", f"http://127.0.0.1:{hook_port}/events")
            rabbit = events.add_target(s, "rabbit", "amqp", amqp_url, self.queue)
            watched = catalog.create_bucket(s, owner_id=user.id, name="events", tier_name="bench")
            catalog.create_bucket(s, owner_id=user.id, name="plain", tier_name="bench")
            events.put_config(s, watched, [
                {"kind": "Queue", "id": "hook", "arn": hook.arn, "events": ["s3:ObjectCreated:*"], "filter": []},
                {"kind": "Queue", "id": "rabbit", "arn": rabbit.arn, "events": ["s3:ObjectCreated:*"], "filter": []}])
        port = free_port()
        self.log = open(self.tmp / "gateway.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning",
                                      "--port", str(port)], env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=ROOT)
        wait_port(port, timeout=120)
        self.url = f"http://127.0.0.1:{port}"
        self.delivered = 0
        self._stop = threading.Event()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        """What beat's events.deliver does, back to back."""
        from tierpilot.events import delivery

        while not self._stop.is_set():
            stats = delivery.drain(budget_s=2.0)
            self.delivered += stats.delivered
            if not stats.rounds:
                self._stop.wait(0.2)

    def close(self) -> None:
        import pika

        self._stop.set()
        self._drainer.join(30)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.hook.shutdown()
        conn = pika.BlockingConnection(pika.URLParameters(self.amqp_url))
        conn.channel().queue_delete(self.queue)
        conn.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--amqp", default="amqp://guest:guest@127.0.0.1:5672/%2F")
    args = parser.parse_args()
    run = Run()
    inst = Installation(args.amqp)
    rates: dict[str, list[float]] = {"events": [], "plain": []}
    errors = {"events": [0, 0], "plain": [0, 0]}
    try:
        with mp.get_context("spawn").Pool(CLIENT_PROCS) as pool:
            put_round = functools.partial(round_rate, pool, inst.url, inst.key_id, inst.secret)
            put_round("plain", args.clients, 1.0)  # warm-up: caches, connections
            put_round("events", args.clients, 1.0)
            for i in range(args.rounds):
                for bucket in (("events", "plain") if i % 2 == 0 else ("plain", "events")):
                    rate, slow, failed = put_round(bucket, args.clients, args.seconds)
                    rates[bucket].append(rate)
                    errors[bucket][0] += slow
                    errors[bucket][1] += failed
    finally:
        inst.close()
    with_rules, without = statistics.median(rates["events"]), statistics.median(rates["plain"])
    print(f"load average: {os.getloadavg()[0]:.2f}; events delivered during the run: {inst.delivered}")
    print(f"{'bucket':34} {'median PUT/s':>12} {'rounds':>40} {'503':>5} {'failed':>6}")
    for name, label in (("plain", "no rules"), ("events", "one webhook + one AMQP rule")):
        print(f"{label:34} {statistics.median(rates[name]):12.0f} "
              f"{' '.join(f'{r:.0f}' for r in rates[name]):>40} {errors[name][0]:5d} {errors[name][1]:6d}")
    print(f"with rules ÷ without: {with_rules / without:.3f}")
    record([run.row("events.rules_put", f"1 KiB PUT rate at {args.clients} clients into a bucket with one webhook and "
                    "one AMQP event rule (outbox drained meanwhile)", with_rules, "PUT/s",
                    "the same gateway and run, a bucket without rules", without)])


if __name__ == "__main__":
    main()
