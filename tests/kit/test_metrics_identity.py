"""kit/metrics.py's process identity: the files a process writes are named after its service and pid, without a
system call per metric update, and a forked child writes files of its own."""

from __future__ import annotations

import glob
import os
import signal
import uuid

import pytest
from prometheus_client import Counter, Gauge, Histogram, values
from prometheus_client.multiprocess import MultiProcessCollector

from tierpilot.kit import metrics


def test_a_metric_update_asks_the_kernel_for_no_pid(monkeypatch: pytest.MonkeyPatch) -> None:
    before = metrics.GATEWAY_SLOWDOWNS._value.get()

    def no_syscall() -> int:
        raise AssertionError("os.getpid() called on a metric update")

    monkeypatch.setattr(os, "getpid", no_syscall)
    metrics.GATEWAY_SLOWDOWNS.inc()
    monkeypatch.undo()
    assert metrics.GATEWAY_SLOWDOWNS._value.get() == before + 1
    assert metrics._identity() == f"{metrics._service}-{os.getpid()}"


def test_a_forked_child_writes_its_own_files() -> None:
    read, write = os.pipe()
    with metrics._lock:  # held at the fork, as by a thread writing a metric at that moment
        pid = os.fork()
        if pid == 0:  # the child: report what it is named and where its update went, then leave at once
            signal.alarm(10)  # an update waiting for the parent's lock forever ends the child
            try:
                metrics.GATEWAY_SLOWDOWNS.inc()
                os.write(write, f"{metrics._identity()} {metrics.GATEWAY_SLOWDOWNS._value._file._fname}".encode())
            finally:
                os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        report = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0 and report, "the child's update did not finish"
    identity, path = report.split()
    assert identity == f"{metrics._service}-{pid}"
    assert os.path.basename(path) == f"counter_{metrics._service}-{pid}.db"
    assert metrics._identity() == f"{metrics._service}-{os.getpid()}"


def _exposed(files: list[str], prefix: str) -> list[tuple[str, str, list[tuple[str, dict[str, str], float]]]]:
    """The families named ``prefix*`` in ``files`` as the exposition reads them (pid labels dropped)."""
    out = []
    for family in MultiProcessCollector.merge(files, accumulate=True):
        if family.name.startswith(prefix):
            samples = [(s.name, {k: v for k, v in s.labels.items() if k != "pid"}, s.value) for s in family.samples]
            out.append((family.name, family.type, sorted(samples, key=repr)))
    return sorted(out)


def test_values_reach_the_files_as_prometheus_clients_own_values_write_them(monkeypatch: pytest.MonkeyPatch) -> None:
    reference_id = f"reference-{uuid.uuid4().hex[:8]}"
    directory = os.environ["PROMETHEUS_MULTIPROC_DIR"]

    def exercise(prefix: str, batched: bool) -> None:
        counter = Counter(f"{prefix}_requests", "doc", ["status"], registry=None)
        histogram = Histogram(f"{prefix}_seconds", "doc", ["op"], registry=None, buckets=(0.001, 0.01, 1.0))
        live = Gauge(f"{prefix}_in_flight", "doc", registry=None, multiprocess_mode="livesum")
        latest = Gauge(f"{prefix}_size", "doc", registry=None, multiprocess_mode="max")
        counter.labels("200").inc(3)
        live.inc()
        live.dec()
        latest.set(7.5)
        child = histogram.labels("HEAD")
        child.observe(0.0005)
        counter.labels("404").inc()
        if batched:  # what a turn of the gateway's loop writes for the same updates
            metrics._FileValue.write({child._sum: 0.02, child._buckets[2]: 1.0, counter.labels("404")._value: 2.0})
        else:
            child.observe(0.02)
            counter.labels("404").inc(2)

    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(lambda: reference_id))
    exercise("tierpilot_test_same", batched=False)
    monkeypatch.undo()
    exercise("tierpilot_test_same", batched=True)
    ours = glob.glob(os.path.join(directory, f"*_{metrics._identity()}.db"))
    theirs = glob.glob(os.path.join(directory, f"*_{reference_id}.db"))
    assert len(ours) >= len(theirs) == 4  # counter, histogram, gauge_livesum, gauge_max
    assert _exposed(ours, "tierpilot_test_same") == _exposed(theirs, "tierpilot_test_same")
