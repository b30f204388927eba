"""What the suite's most used fixture chain costs per test: create an admin, sign it in through the API (the
``client`` fixture), with the production argon2 parameters (baseline) and with the suite's cheap ones
(``tests/conftest.py::_cheap_password_hashes``), rounds alternating between the two in one run.

Run: .venv/bin/python bench/test_fixtures.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ["TIERPILOT_DATA_DIR"] = tempfile.mkdtemp(prefix="tierpilot-bench-fixtures-")
os.environ.setdefault("TIERPILOT_SECRET_KEY", "bench-secret-key")
os.environ["TIERPILOT_SEED_DEMO"] = "false"
os.environ["TIERPILOT_DATABASE_URL"] = f"sqlite:///{os.environ['TIERPILOT_DATA_DIR']}/bench.db"
sys.path.insert(0, str(ROOT))

from argon2 import PasswordHasher  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from bench.figures import Run, record  # noqa: E402
from tierpilot.app import wiring  # noqa: E402
from tierpilot.app.api import create_app  # noqa: E402
from tierpilot.auth import service  # noqa: E402
from tierpilot.auth.throttle import login_limiter  # noqa: E402
from tierpilot.kit.db import transaction  # noqa: E402
from tierpilot.kit.migrate import upgrade  # noqa: E402


def one_test(client: TestClient) -> float:
    """Seconds for the ``admin_user`` + ``client`` fixtures of one test."""
    name, password = f"a-{uuid.uuid4().hex[:8]}", "admin-password-1"
    started = time.perf_counter()
    with transaction(write=True) as s:
        service.create_user(s, name, password, is_admin=True)
    r = client.post("/api/auth/login", json={"username": name, "password": password})
    assert r.status_code == 200, r.text
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    run = Run()
    upgrade(os.environ["TIERPILOT_DATABASE_URL"])
    wiring.install()
    hashers = {"production argon2 (baseline)": PasswordHasher(),
               "suite's cheap argon2": PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)}
    times: dict[str, list[float]] = {k: [] for k in hashers}
    with TestClient(create_app(), base_url="http://127.0.0.1") as client:
        for _ in range(args.rounds):
            for label, hasher in hashers.items():
                service._hasher = hasher
                login_limiter.cache_clear()
                client.cookies.clear()
                times[label].append(one_test(client))
    load = os.getloadavg()
    print(f"admin_user + client fixtures per test, median of {args.rounds} alternating rounds "
          f"(load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    base = statistics.median(next(iter(times.values())))
    for label, values in times.items():
        median = statistics.median(values)
        print(f"  {label:30s} {median * 1000:8.1f} ms   x{base / median:.0f} faster than the baseline"
              if median != base else f"  {label:30s} {median * 1000:8.1f} ms")
    record([run.row("fixtures.admin_client", "the test suite's admin_user + client fixtures, per test",
                    statistics.median(times["suite's cheap argon2"]) * 1000, "ms", "production argon2 parameters",
                    base * 1000)])


if __name__ == "__main__":
    main()
