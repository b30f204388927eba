"""Audit retention on SQLite: how long beat's ``audit.prune`` takes to delete a backlog, and how long a login
that records an event meanwhile waits for the write lock, against one DELETE of the whole backlog in one
transaction (the baseline, measured in the same run on the same data).

Run: .venv/bin/python bench/audit_prune.py [--old 200000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sqlalchemy import delete, insert

from bench.figures import Run, record
from tierpilot.audit import service, tasks
from tierpilot.audit.models import AuditEvent
from tierpilot.kit import db as kitdb
from tierpilot.kit.db import transaction, utcnow


def fill(old: int, new: int) -> None:
    now = utcnow()
    rows = [{"at": now - timedelta(days=400, seconds=i), "event": "auth.login_ok", "actor": f"u{i % 50}",
             "client": "10.0.0.1", "target": f"user:u{i % 50}", "detail": {}} for i in range(old)]
    rows += [{"at": now, "event": "auth.login_ok", "actor": "fresh", "client": "", "target": "", "detail": {}}
             for _ in range(new)]
    with transaction(write=True) as s:
        s.execute(delete(AuditEvent))
        for i in range(0, len(rows), 20_000):
            s.execute(insert(AuditEvent), rows[i:i + 20_000])


def with_writer(work: Callable[[], int]) -> tuple[float, float, int]:
    """Runs ``work`` while another thread records an event every 5 ms: (seconds, longest record wait, count)."""
    stop = threading.Event()
    waits: list[float] = []

    def writer() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            with transaction(write=True) as s:
                service.record(s, "auth.login_failed", service.Actor(None, "bench", "10.0.0.2"), "user:bench")
            waits.append(time.perf_counter() - t0)
            time.sleep(0.005)

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    deleted = work()
    took = time.perf_counter() - t0
    stop.set()
    thread.join()
    return took, max(waits), deleted


def batched(batch: int) -> tuple[int, float]:
    """The steps of ``tasks.prune_expired``, each transaction timed: (deleted, longest transaction)."""
    now, total, longest = utcnow(), 0, 0.0
    while True:
        t0 = time.perf_counter()
        with transaction(write=True) as s:
            deleted = service.prune(s, now, 365, batch)
        longest = max(longest, time.perf_counter() - t0)
        total += deleted
        if deleted < batch:
            return total, longest


def single_delete() -> int:
    with transaction(write=True) as s:
        result = s.execute(delete(AuditEvent).where(AuditEvent.at < utcnow() - timedelta(days=365)))
        return int(getattr(result, "rowcount", 0) or 0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    run = Run()
    with tempfile.TemporaryDirectory() as tmp:
        engine = kitdb.make_engine(f"sqlite:///{Path(tmp) / 'bench.db'}")
        kitdb.set_engine(engine)
        AuditEvent.metadata.create_all(engine, tables=[AuditEvent.__table__])  # type: ignore[list-item]
        figures: dict[str, list[tuple[float, float]]] = {"batched (audit.prune)": [], "one DELETE": []}
        lock: dict[str, list[float]] = {f"batch {b}": [] for b in (service.PRUNE_BATCH, 5000)}
        lock["one DELETE"] = []
        for _ in range(args.runs):
            for name, work in (("batched (audit.prune)", tasks.prune_expired), ("one DELETE", single_delete)):
                fill(args.old, 1000)
                took, wait, deleted = with_writer(work)
                assert deleted == args.old, (name, deleted)
                figures[name].append((took, wait))
            # the write lock is held for one transaction: the longest one, without a concurrent writer
            for b in (service.PRUNE_BATCH, 5000):
                fill(args.old, 1000)
                lock[f"batch {b}"].append(batched(b)[1])
            fill(args.old, 1000)
            t0 = time.perf_counter()
            single_delete()
            lock["one DELETE"].append(time.perf_counter() - t0)
        print(f"{args.old:,} events past retention, SQLite, {args.runs} runs (medians)")
        print("| way | seconds | events/s | longest wait of a concurrent audit write |")
        print("|---|---|---|---|")
        medians = {}
        for name, rows in figures.items():
            took = statistics.median(r[0] for r in rows)
            wait = statistics.median(r[1] for r in rows)
            medians[name] = (took, wait)
            print(f"| {name} | {took:.2f} | {args.old / took:,.0f} | {wait * 1000:.0f} ms |")
        (bt, bw), (st, sw) = medians["batched (audit.prune)"], medians["one DELETE"]
        print(f"batched / one DELETE: time x{bt / st:.2f}, longest concurrent write wait x{bw / sw:.2f}")
        row = run.row("audit.prune_wait", f"audit prune of {args.old:,} events: longest wait of a concurrent audit "
                      "write", bw * 1000, "ms", "one DELETE of the whole backlog", sw * 1000)
        print("| longest write transaction | ms |")
        print("|---|---|")
        for name, values in lock.items():
            print(f"| {name} | {statistics.median(values) * 1000:.0f} |")
        kitdb.set_engine(None)
        engine.dispose()
    record([row])


if __name__ == "__main__":
    main()
