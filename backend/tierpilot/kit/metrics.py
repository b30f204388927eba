"""Prometheus metrics every process records (``tierpilot_*``), aggregated over the processes of a service.

Values live in prometheus-client's multiprocess files (one mmap per process and metric type, written by
``_FileValue``, its multiprocess value without a system call per update) under
``PROMETHEUS_MULTIPROC_DIR``, by default ``<data dir>/metrics``. A file is named after its service and pid
(``counter_gateway-1234.db``), so one directory serves every process of a machine and ``exposition(service)``
sums exactly the processes of one service: the gateway's worker processes behind one port, or the API plus
the worker on the API's ``/metrics``. A process names its service with ``configure`` at start; files of
processes that are gone are removed then (their counters restart, which ``rate()`` reads as a reset).

Labels never carry bucket names, keys or user names: operations, statuses, phases and reservation ids only,
so the exposition shows no one's data to anyone who may scrape it.
"""

from __future__ import annotations

import asyncio
import glob
import ipaddress
import logging
import os
import threading
from asyncio import _get_running_loop  # the running loop or None: no exception raised off the loop
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from tierpilot.kit.settings import get_settings

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SERVICES = ("api", "gateway", "worker", "beat", "cli")
_service = "proc"
_ident = f"{_service}-{os.getpid()}"  # names this process's files: built when named and after a fork, not per update


def _identity() -> str:
    """``service-pid``, the name of the files this process writes."""
    return _ident


def _rename() -> None:
    global _ident
    _ident = f"{_service}-{os.getpid()}"


def _forked() -> None:
    global _lock
    _lock = threading.Lock()  # a thread of the parent may have held it at the fork
    _rename()


os.register_at_fork(after_in_child=_forked)  # a child writes files of its own (``_FileValue`` reopens them)


def metrics_dir() -> Path:
    """Where the processes of this installation keep their metric files."""
    env = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    return Path(env) if env else get_settings().data_dir.resolve() / "metrics"


_lock = threading.Lock()  # one for every value and file, as prometheus-client's own
_files: dict[str, MmapedDict | None] = {}  # by file prefix (``counter``, ``gauge_livesum``, ...); None: no file
_values: list[_FileValue] = []
_opened_as = ""  # the identity the open files are named after


class _AllocatedFile(MmapedDict):
    """prometheus-client's file of values, with its blocks allocated before they are mapped: on a full disk the
    allocation fails (an OSError the caller catches) where a write into a sparse map would kill the process
    (SIGBUS)."""

    def __init__(self, filename: str) -> None:
        with open(filename, "a+b") as f:
            size = os.fstat(f.fileno()).st_size
            os.posix_fallocate(f.fileno(), 0, max(size, _INITIAL_SIZE))
        super().__init__(filename)

    def _init_value(self, key: str) -> None:
        encoded = key.encode("utf-8")
        needed = self._used + 4 + len(encoded) + (8 - (len(encoded) + 4) % 8) + 16
        capacity = self._capacity
        while needed > capacity:
            capacity *= 2
        if capacity != self._capacity:
            os.posix_fallocate(self._f.fileno(), 0, capacity)  # the parent then grows the map to what is there
        super()._init_value(key)


_INITIAL_SIZE = 1 << 20  # prometheus-client's first size of a file
_degraded: set[str] = set()


def _lost_file(prefix: str, exc: OSError) -> None:
    """Metrics never take a request down: values whose file cannot be written (a full disk) stay in memory."""
    if prefix not in _degraded:
        _degraded.add(prefix)
        logging.getLogger(__name__).warning("metric file %s cannot be written (%s): its values are kept in memory "
                                            "only and not exported", prefix, exc)


class _FileValue:
    """A metric value in this process's files: prometheus-client's multiprocess value (the same files, keys and
    lock), but named by ``_ident`` rather than asking for the pid on every update (a system call), and with
    ``write`` to write a turn's batch under one lock."""

    _multiprocess = True

    def __init__(self, typ: str, metric_name: str, name: str, labelnames: Sequence[str],
                 labelvalues: Sequence[str], help_text: str, multiprocess_mode: str = "", **_kwargs: Any) -> None:
        self._prefix = f"{typ}_{multiprocess_mode}" if typ == "gauge" else typ
        self._key = mmap_key(metric_name, name, list(labelnames), list(labelvalues), help_text)
        with _lock:
            if _opened_as != _ident:
                _reopen()
            self._open()
            _values.append(self)

    def _open(self) -> None:
        self._file: MmapedDict | None = None
        self._value, self._timestamp = 0.0, 0.0
        if self._prefix not in _files:
            path = os.path.join(os.environ["PROMETHEUS_MULTIPROC_DIR"], f"{self._prefix}_{_opened_as}.db")
            try:
                _files[self._prefix] = _AllocatedFile(path)
            except OSError as exc:
                _files[self._prefix] = None
                _lost_file(self._prefix, exc)
        file = _files[self._prefix]
        if file is None:
            return
        try:
            self._value, self._timestamp = file.read_value(self._key)
            self._file = file
        except OSError as exc:
            _lost_file(self._prefix, exc)

    def _store(self) -> None:
        if self._file is None:
            return
        try:
            self._file.write_value(self._key, self._value, self._timestamp)
        except OSError as exc:
            self._file = None
            _lost_file(self._prefix, exc)

    def inc(self, amount: float) -> None:
        with _lock:
            if _opened_as != _ident:
                _reopen()
            self._value += amount
            self._timestamp = 0.0
            self._store()

    def set(self, value: float, timestamp: float | None = None) -> None:
        with _lock:
            if _opened_as != _ident:
                _reopen()
            self._value = value
            self._timestamp = timestamp or 0.0
            self._store()

    def get(self) -> float:
        with _lock:
            if _opened_as != _ident:
                _reopen()
            return self._value

    def set_exemplar(self, exemplar: Any) -> None:
        return  # the multiprocess files keep no exemplars

    def get_exemplar(self) -> None:
        return None

    @staticmethod
    def write(amounts: dict[Any, float]) -> None:
        """``value.inc(amount)`` for each value that moved, under one lock."""
        with _lock:
            if _opened_as != _ident:
                _reopen()
            for value, amount in amounts.items():
                if amount:
                    value._value += amount
                    value._timestamp = 0.0
                    value._store()


def _reopen() -> None:
    """Open the files of this identity (a new service name, or a forked child) and read every value from them.
    The caller holds ``_lock``."""
    global _opened_as
    for file in _files.values():
        if file is not None:
            file.close()
    _files.clear()
    _opened_as = _ident
    for value in _values:
        value._open()


def _install() -> None:
    directory = metrics_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a full disk: the process runs, its values stay in memory (``_open``)
        _lost_file("*", exc)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    values.ValueClass = _FileValue


_install()  # before the first metric below creates its value


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def configure(service: str) -> None:
    """Name this process's service (its metric files) and drop the files of processes that are gone."""
    global _service
    if service not in SERVICES:
        raise ValueError(f"unknown service {service!r}")
    _service = service
    _rename()
    directory = metrics_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _lost_file("*", exc)
        return
    for path in directory.glob("*.db"):
        pid = path.stem.rpartition("-")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            path.unlink(missing_ok=True)


class _ServiceFiles(MultiProcessCollector):
    """The multiprocess collector restricted to the files of some services."""

    def __init__(self, services: Iterable[str]) -> None:
        self._path = str(metrics_dir())
        self._services = tuple(services)

    def collect(self) -> Iterable[Metric]:
        files: list[str] = []
        for service in self._services:
            files += glob.glob(os.path.join(self._path, f"*_{service}-*.db"))
        return self.merge(files, accumulate=True)


_live: list[Callable[[], Iterable[Metric]]] = []


def register_live(collect: Callable[[], Iterable[Metric]]) -> None:
    """Add figures read at scrape time in this process (database pool, rows by state); once per function."""
    if collect not in _live:
        _live.append(collect)


class _Live(Collector):
    def collect(self) -> Iterable[Metric]:
        for collect in _live:
            yield from collect()


def exposition(services: Iterable[str]) -> bytes:
    """The text exposition of ``services`` summed over their processes, plus this process's live figures."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ServiceFiles(services))
    registry.register(_Live())
    return generate_latest(registry)


def totals(service: str) -> dict[str, float]:
    """Sums over the processes of ``service`` and over labels, per sample name (e.g. every gateway process's
    ``tierpilot_gateway_requests_total``, and ``..._requests_total{status=5xx}`` as ``..._requests_total:5xx``)."""
    out: dict[str, float] = {}
    for metric in _ServiceFiles((service,)).collect():
        for sample in metric.samples:
            out[sample.name] = out.get(sample.name, 0.0) + sample.value
            status = sample.labels.get("status", "")
            if status.startswith("5"):
                key = f"{sample.name}:5xx"
                out[key] = out.get(key, 0.0) + sample.value
    return out


def may_scrape(client_host: str | None, authorization: str | None) -> bool:
    """``/metrics`` is open to loopback clients; others need ``Authorization: Bearer <TIERPILOT_METRICS_TOKEN>``
    (with no token set, only loopback)."""
    token = get_settings().metrics_token
    if token and authorization is not None:
        import hmac

        return hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode())
    if client_host is None:
        return False
    try:
        return ipaddress.ip_address(client_host).is_loopback
    except ValueError:
        return False


def gauge_family(name: str, doc: str, labels: list[str], rows: Iterable[tuple[list[str], float]]
                 ) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=labels)
    for label_values, value in rows:
        family.add_metric(label_values, value)
    return family


# -- the gateway --------------------------------------------------------------------------------------------

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                    60.0, 300.0)

GATEWAY_REQUESTS = Counter("tierpilot_gateway_requests_total", "S3 requests answered, by operation and status",
                           ["operation", "status"])
GATEWAY_DURATION = Histogram("tierpilot_gateway_request_duration_seconds", "S3 request time, by operation",
                             ["operation"], buckets=_LATENCY_BUCKETS)
GATEWAY_PHASE = Histogram("tierpilot_gateway_phase_duration_seconds",
                          "time of each phase of an S3 request, by operation and phase", ["operation", "phase"],
                          buckets=_LATENCY_BUCKETS)
GATEWAY_BYTES_IN = Counter("tierpilot_gateway_received_bytes_total", "request body bytes received, by operation",
                           ["operation"])
GATEWAY_BYTES_OUT = Counter("tierpilot_gateway_sent_bytes_total", "response body bytes sent, by operation",
                            ["operation"])
GATEWAY_IN_FLIGHT = Gauge("tierpilot_gateway_requests_in_flight", "S3 requests being served",
                          multiprocess_mode="livesum")
GATEWAY_WAITING = Gauge("tierpilot_gateway_requests_waiting", "S3 requests waiting for a slot (backpressure: "
                        "TIERPILOT_GATEWAY_MAX_INFLIGHT were in flight)", multiprocess_mode="livesum")
GATEWAY_SLOWDOWNS = Counter("tierpilot_gateway_slowdowns_total", "S3 requests answered 503 SlowDown: no slot "
                            "came free within TIERPILOT_GATEWAY_QUEUE_WAIT_S (backpressure)")
LIMITER_WAIT = Histogram("tierpilot_limiter_wait_seconds",
                         "time a request waited on its flow's limiter (reservation or best effort), by operation",
                         ["operation"], buckets=_LATENCY_BUCKETS)
TRACES_SAMPLED = Counter("tierpilot_gateway_traces_sampled_total", "request traces kept, by why", ["reason"])
READAHEAD_BYTES = Counter("tierpilot_gateway_readahead_bytes_total", "bytes read ahead of remote tiers: "
                          "prefetched (asked of the tier), used (served to a client), wasted (never served)",
                          ["kind"])

# -- integrity ----------------------------------------------------------------------------------------------

FIXITY_CHECKS = Counter("tierpilot_fixity_checks_total", "fixity checks of object blobs, by tier and result "
                        "(ok, mismatch, missing): a mismatch or a missing blob is data loss to look at",
                        ["tier", "result"])

# -- the worker ---------------------------------------------------------------------------------------------

TASKS = Counter("tierpilot_celery_tasks_total", "Celery tasks run, by task and outcome", ["task", "outcome"])
TASK_DURATION = Histogram("tierpilot_celery_task_duration_seconds", "Celery task run time, by task", ["task"],
                          buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 1800.0))


class _Batch:
    """Increments of metric values gathered during one turn of the event loop and written at its end.

    A multiprocess value's ``inc`` takes the module's lock, checks the identity and packs into the mmap (~0.4 µs),
    and a request makes ~17 of them (its counter, its duration and each phase's histogram, bytes, in-flight up
    and down). Here a request adds plain numbers to a dict; ``flush``, scheduled with ``call_soon`` (it runs at
    the loop's next turn, before the loop polls the sockets again), writes each value that moved once, with the
    sum of what every request of the turn added (in-flight up and down of one request cancel out), all under
    one lock (``_FileValue.write``: ~0.24 µs a value). Outside an event loop (threads, scripts) an increment is
    written at once.
    """

    def __init__(self) -> None:
        self._pending: dict[Any, float] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # the one loop whose turns gather (the gateway's)
        self._scheduled = False

    def pending(self) -> dict[Any, float] | None:
        """The dict this turn's increments go to (flushed at the turn's end), or None when the caller is not
        on the gathering loop (a thread or another loop: write at once). One check for all the increments
        of a request."""
        loop = _get_running_loop()
        if self._scheduled and loop is self._loop:  # a later increment of the turn
            return self._pending
        if loop is None:
            return None
        if loop is not self._loop:
            if self._loop is not None and not self._loop.is_closed():
                return None
            self.flush()  # what a closed loop left
            self._loop = loop
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self.flush)
        return self._pending

    def flush(self) -> None:
        """Write what was gathered (also before this process renders its exposition)."""
        self._scheduled = False
        pending, self._pending = self._pending, {}
        if pending:
            _FileValue.write(pending)


_batch = _Batch()
flush = _batch.flush


def count(metric: Counter | Gauge, amount: float = 1.0) -> None:
    """``metric.inc(amount)`` (a child without labels), batched with the loop's turn (``_Batch``)."""
    value = metric._value
    pending = _batch.pending()
    if pending is None:
        value.inc(amount)  # a thread or another loop: written at once
    else:
        pending[value] = pending.get(value, 0.0) + amount


_BOUNDS = list(GATEWAY_DURATION._upper_bounds)  # the request histograms' bounds: bisect_left finds the first >=


class _Operation:
    """The values an operation's requests move besides their counter: the duration histogram (buckets, sum),
    bytes, the limiter-wait histogram and the phase histograms by name. An observation adds to a histogram's
    sum and to the one bucket it falls in (multiprocess histograms store per-bucket counts; the exposition
    accumulates them)."""

    __slots__ = ("duration", "duration_sum", "name", "phases", "received", "sent", "wait", "wait_sum")

    def __init__(self, operation: str) -> None:
        self.name = operation
        duration, wait = GATEWAY_DURATION.labels(operation), LIMITER_WAIT.labels(operation)
        self.duration: list[Any] = list(duration._buckets)
        self.duration_sum: Any = duration._sum
        self.wait: list[Any] = list(wait._buckets)
        self.wait_sum: Any = wait._sum
        self.received: Any = GATEWAY_BYTES_IN.labels(operation)._value
        self.sent: Any = GATEWAY_BYTES_OUT.labels(operation)._value
        self.phases: dict[str, tuple[list[Any], Any]] = {}  # name: (buckets, sum), added as phases appear

    def phase(self, name: str) -> tuple[list[Any], Any]:
        child = GATEWAY_PHASE.labels(self.name, name)
        phase = self.phases[name] = (list(child._buckets), child._sum)
        return phase


class RequestObserver:
    """Feeds a finished gateway request to the histograms; label children are looked up once per label set,
    and their values written once per turn of the event loop (``_Batch``)."""

    def __init__(self) -> None:
        self._operations: dict[str, _Operation] = {}
        self._requests: dict[tuple[str, int], tuple[Any, _Operation]] = {}  # the counter and the operation

    def _add(self, operation: str, status: int) -> tuple[Any, _Operation]:
        op = self._operations.get(operation)
        if op is None:
            op = self._operations[operation] = _Operation(operation)
        found = self._requests[(operation, status)] = (GATEWAY_REQUESTS.labels(operation, str(status))._value, op)
        return found

    def observe(self, operation: str, status: int, total_ns: int, phases: Iterable[tuple[str, int, int]],
                bytes_in: int, bytes_out: int, waited_ns: int | None) -> None:
        pending = _batch.pending()  # the loop checked once for the request's dozen increments
        direct = pending is None
        if pending is None:
            pending = {}
        get = pending.get
        found = self._requests.get((operation, status))
        if found is None:
            found = self._add(operation, status)
        value, op = found
        pending[value] = get(value, 0.0) + 1.0
        seconds = total_ns / 1e9
        value = op.duration_sum
        pending[value] = get(value, 0.0) + seconds
        value = op.duration[bisect_left(_BOUNDS, seconds)]
        pending[value] = get(value, 0.0) + 1.0
        if bytes_in:
            value = op.received
            pending[value] = get(value, 0.0) + bytes_in
        if bytes_out:
            value = op.sent
            pending[value] = get(value, 0.0) + bytes_out
        if waited_ns is not None:
            seconds = waited_ns / 1e9
            value = op.wait_sum
            pending[value] = get(value, 0.0) + seconds
            value = op.wait[bisect_left(_BOUNDS, seconds)]
            pending[value] = get(value, 0.0) + 1.0
        by_name = op.phases
        for name, _start, took in phases:
            buckets, value = by_name.get(name) or op.phase(name)
            seconds = took / 1e9
            pending[value] = get(value, 0.0) + seconds
            value = buckets[bisect_left(_BOUNDS, seconds)]
            pending[value] = get(value, 0.0) + 1.0
        if direct:  # a thread or another loop: written at once
            _FileValue.write(pending)


def _pool() -> Iterable[Metric]:
    from tierpilot.kit import db

    engine = db._engine  # the process's engine if it made one: a scrape must not open a database
    if engine is None:
        return
    pool = engine.pool
    rows: list[tuple[list[str], float]] = []
    for state, reader in (("checked_out", "checkedout"), ("idle", "checkedin"), ("size", "size")):
        read = getattr(pool, reader, None)
        if callable(read):
            rows.append(([state, str(os.getpid())], float(read())))
    yield gauge_family("tierpilot_db_pool_connections", "database connections of the scraped process's pool",
                       ["state", "pid"], rows)


register_live(_pool)
