"""The supervisor's restart rules on an injected clock: backoff, its reset, the bound per minute."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tierpilot.app.supervisor import WINDOW_S, Child, RestartPolicy, Restarts, Supervisor
from tierpilot.kit.supervision import health_view, read_status


def _crash_loop(restarts: Restarts, deaths: int, runs_for: float = 0.0) -> list[float]:
    """Restart times of a child that dies `runs_for` seconds after each start."""
    now, times = 0.0, []
    for _ in range(deaths):
        died = now + runs_for
        now = restarts.due(died, started_at=now)
        restarts.record(now)
        times.append(now)
    return times


def test_backoff_doubles_per_death_in_a_row_up_to_the_maximum() -> None:
    restarts = Restarts(RestartPolicy(backoff_s=1.0, backoff_max_s=30.0, per_minute=1000))
    times = _crash_loop(restarts, 8)
    delays = [b - a for a, b in zip([0.0, *times], times, strict=False)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


def test_a_child_that_ran_a_minute_starts_its_backoff_over() -> None:
    restarts = Restarts(RestartPolicy(backoff_s=1.0, backoff_max_s=30.0, per_minute=1000))
    _crash_loop(restarts, 4)  # the next quick death would wait 16 s
    assert restarts.due(died_at=1000.0, started_at=1000.0 - WINDOW_S) == 1001.0
    assert restarts.due(died_at=1002.0, started_at=1001.5) == 1004.0  # and doubles again from there


def test_no_more_restarts_in_any_minute_than_the_bound() -> None:
    per_minute = 4
    restarts = Restarts(RestartPolicy(backoff_s=0.5, backoff_max_s=0.5, per_minute=per_minute))
    times = _crash_loop(restarts, 40)
    for i, start in enumerate(times):
        in_window = [t for t in times[i:] if t < start + WINDOW_S]
        assert len(in_window) <= per_minute, (start, in_window)
    # the bound delays, it does not give up: 40 restarts take about 10 minutes
    assert times[-1] < 11 * WINDOW_S
    assert times[per_minute] >= times[0] + WINDOW_S


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_supervisor_restarts_a_dead_child_when_its_backoff_ends_and_records_it(tmp_path: Path) -> None:
    clock = FakeClock()
    policy = RestartPolicy(backoff_s=2.0, backoff_max_s=10.0, per_minute=10)
    child = Child("gateway", [sys.executable, "-c", "import sys; sys.exit(3)"], Restarts(policy))
    status = tmp_path / "supervisor.json"
    sup = Supervisor([child], dict(os.environ), status, {"redis_url": None}, clock=clock)
    child.start(sup.env, clock())
    assert child.proc is not None
    child.proc.wait()

    clock.now = 101.0
    assert sup.check() == 103.0  # died: back in 2 s
    assert child.state == "backoff" and child.last_exit == 3 and child.restarts == 0
    assert read_status(status)["children"]["gateway"]["state"] == "backoff"  # type: ignore[index]
    ok, view = health_view(status)
    assert not ok and view["children"]["gateway"] == {
        "state": "backoff", "restarts": 0, "last_exit": 3, "last_exit_at": child.last_exit_at, "since": child.since}

    clock.now = 102.9
    assert sup.check() == 103.0 and child.state == "backoff"
    clock.now = 103.0
    assert sup.check() is None
    assert child.state == "running" and child.restarts == 1
    recorded = read_status(status)
    assert recorded is not None and recorded["pid"] == os.getpid()
    assert recorded["children"]["gateway"]["pid"] == child.proc.pid
    assert "pid" not in health_view(status)[1]["children"]["gateway"]  # health answers anyone: no pids
    child.proc.wait()

    clock.now = 103.5  # died again at once: the wait doubles
    assert sup.check() == 107.5
    sup.stop()


def test_health_reports_a_supervisor_that_is_gone(tmp_path: Path) -> None:
    status = tmp_path / "supervisor.json"
    status.write_text('{"pid": 999999999, "children": {}}')
    assert health_view(status) == (False, {"state": "gone"})
    assert health_view(tmp_path / "missing.json") == (False, {"state": "unreadable"})


def test_a_child_with_a_port_is_starting_until_the_port_answers(tmp_path: Path) -> None:
    """Health says a gateway or API is up only once it accepts connections, not when its process began."""
    import socket

    from tests.servers import free_port
    from tests.waiting import wait_until

    port = free_port()
    ready = tmp_path / "listen"
    code = ("import socket, sys, pathlib, time\n"
            "p = pathlib.Path(sys.argv[2])\n"
            "while not p.exists(): time.sleep(0.01)\n"
            "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(600)\n")
    policy = RestartPolicy(backoff_s=2.0, backoff_max_s=10.0, per_minute=10)
    child = Child("gateway", [sys.executable, "-c", code, str(port), str(ready)], Restarts(policy), port=port)
    status = tmp_path / "supervisor.json"
    sup = Supervisor([child], dict(os.environ), status, {"redis_url": None})
    child.start(sup.env, 0.0)
    try:
        sup.check()
        sup.write_status()
        assert child.state == "starting"
        assert health_view(status) == (False, {"state": "running", "children": {"gateway": {
            "state": "starting", "restarts": 0, "last_exit": None, "last_exit_at": None, "since": child.since}}})
        ready.touch()  # the child listens now
        wait_until(lambda: sup.check() is None and child.state == "running")
        assert health_view(status)[0]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        sup.stop()
