"""kit/metrics.py's process identity: the files a process writes are named after its service and pid, without a
system call per metric update, and a forked child writes files of its own."""

from __future__ import annotations

import os

import pytest

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
    pid = os.fork()
    if pid == 0:  # the child: report what it is named and where its update went, then leave at once
        try:
            metrics.GATEWAY_SLOWDOWNS.inc()
            os.write(write, f"{metrics._identity()} {metrics.GATEWAY_SLOWDOWNS._value._file._fname}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        identity, path = pipe.read().split()
    os.waitpid(pid, 0)
    assert identity == f"{metrics._service}-{pid}"
    assert os.path.basename(path) == f"counter_{metrics._service}-{pid}.db"
    assert metrics._identity() == f"{metrics._service}-{os.getpid()}"
